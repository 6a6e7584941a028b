//! GitHub Actions workflow commands (`::error file=...,line=...::message`).
//!
//! Escaping follows the runner's rules: `%`, `\r` and `\n` in the message; those plus `:` and
//! `,` in property values. Without it a message with a newline would end the command early.

use std::fmt::Write as _;
use std::path::Path;

use crate::diagnostic::Severity;

/// One annotation on one line of one file.
pub struct Annotation<'a> {
    pub severity: Severity,
    /// `None`: about the run as a whole (a metric), shown on the run's page only.
    pub file: Option<&'a Path>,
    pub line: u32,
    pub column: Option<u32>,
    pub title: &'a str,
    pub message: &'a str,
}

impl Annotation<'_> {
    /// The workflow command, without the trailing newline.
    pub fn to_command(&self) -> String {
        let mut out = format!("::{} ", self.severity.name());
        if let Some(file) = self.file {
            let _ = write!(
                out,
                "file={},line={},",
                escape_property(&file.display().to_string()),
                self.line
            );
            if let Some(column) = self.column {
                let _ = write!(out, "col={column},");
            }
        }
        let _ = write!(
            out,
            "title={}::{}",
            escape_property(self.title),
            escape_data(self.message)
        );
        out
    }
}

fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_newlines_percent_and_property_separators() {
        let annotation = Annotation {
            severity: Severity::Error,
            file: Some(Path::new("evals/a,b.yaml")),
            line: 7,
            column: Some(3),
            title: "goldgate: E011",
            message: "100% wrong\nsecond line",
        };
        assert_eq!(
            annotation.to_command(),
            "::error file=evals/a%2Cb.yaml,line=7,col=3,title=goldgate%3A E011::100%25 wrong%0Asecond line"
        );
    }
}
