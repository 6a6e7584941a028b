//! `affects:` in goldgate.yaml: globs of the files every golden depends on. `run
//! --changed-since REF` runs the whole suite when one of them changed, even where
//! `affects_nothing:` matches it too (an agent's prompt kept as Markdown under a `**/*.md`);
//! any changed file that is neither a golden nor matched by `affects_nothing:` does the same
//! without being listed.
//!
//! Globs are relative to the config file's directory, `/`-separated; `*` stops at a `/` and
//! `**` crosses any number of them (`src/**`, `prompts/*.md`).

use globset::{Glob, GlobBuilder, GlobMatcher};

use crate::diagnostic::{Code, Diagnostics};
use crate::yaml::{self, Node, Value};

/// The glob `text`, as `affects:` reads it (`*` does not cross a `/`).
pub fn glob(text: &str) -> Result<GlobMatcher, globset::Error> {
    GlobBuilder::new(text)
        .literal_separator(true)
        .build()
        .as_ref()
        .map(Glob::compile_matcher)
        .map_err(Clone::clone)
}

/// `field` (`affects`, `affects_nothing`): a glob or a list of them, each checked.
pub(crate) fn parse(node: &Node, field: &str, diags: &mut Diagnostics) -> Vec<String> {
    let items: Vec<&Node> = match &node.value {
        Value::Seq(items) => items.iter().collect(),
        Value::Null => Vec::new(),
        _ => vec![node],
    };
    items
        .into_iter()
        .filter_map(|item| {
            let text = yaml::expect_text(item, field, diags)?;
            match glob(&text) {
                Ok(_) => Some(text),
                Err(why) => {
                    diags
                        .at(item)
                        .error(Code::G101, why.kind().to_string())
                        .field(field)
                        .hint("a glob relative to goldgate.yaml, e.g. `src/**` or `prompts/*.md`");
                    None
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn a_star_stays_in_its_folder() {
        let star = glob("src/*.rs").unwrap();
        assert!(star.is_match("src/main.rs"));
        assert!(!star.is_match("src/agent/mod.rs"));
        assert!(glob("src/**").unwrap().is_match("src/agent/mod.rs"));
        assert!(glob("src/[").is_err());
    }
}
