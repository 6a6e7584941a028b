//! The body for a run that stopped before it played anything: a golden or the config that
//! does not load, a flag or a file that does not hold. The sticky comment then says so, instead
//! of keeping the last run's verdict beside a red check that contradicts it.

use std::fmt::Write as _;

use super::{BUDGET, Options, escape, marker, title};
use crate::diagnostic::Diagnostic;

/// How many problems the body lists; `goldgate lint` lists every one.
const SHOWN: usize = 50;

/// The whole body, starting with [`marker`]: why nothing ran, then `details` (the config's
/// error) or else the `problems` as `goldgate lint` prints them, their files as
/// `options.path` shows them.
pub fn render_not_run(
    reason: &str,
    details: &str,
    problems: &[Diagnostic],
    options: &Options,
) -> String {
    let mut out = marker(options.suite);
    out.push('\n');
    let _ = writeln!(out, "### {}: ⚠️ not run\n", title(options.suite));
    let _ = writeln!(out, "{}\n", escape::prose(escape::cut(reason, 2_000).0));
    let listed: Vec<String> = problems
        .iter()
        .take(SHOWN)
        .map(|d| d.line_naming(&(options.path)(&d.location.file.to_string_lossy())))
        .collect();
    let text = if details.is_empty() {
        listed.join("\n")
    } else {
        details.to_owned()
    };
    if !text.is_empty() {
        out.push_str(&escape::fenced(escape::cut(&text, BUDGET / 2).0));
    }
    if details.is_empty() && problems.len() > SHOWN {
        let _ = writeln!(out, "\n{} more not shown.", problems.len() - SHOWN);
    }
    out.push_str(
        "\nNothing was played, so this is not a verdict on the agent (exit 2). \
         `goldgate lint` checks the goldens and the config before a push.\n",
    );
    if let Some(url) = options.run_url {
        let _ = writeln!(out, "\n[Workflow run](<{url}>)");
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::*;
    use crate::diagnostic::Position;
    use crate::diagnostic::{Code, Diagnostics};

    fn options(path: &dyn Fn(&str) -> String) -> Options<'_> {
        Options {
            suite: "default",
            run_url: None,
            path,
        }
    }

    #[test]
    fn the_problems_are_listed_as_lint_prints_them_up_to_a_cap() {
        let file: Arc<Path> = Arc::from(Path::new("/work/repo/evals/orders.yaml"));
        let mut diags = Diagnostics::new(&file);
        for line in 1..=(SHOWN as u32 + 10) {
            diags
                .at(Position::new(line, 3))
                .error(Code::G100, "unknown key `turnz`");
        }
        let from_workspace = |file: &str| file.trim_start_matches("/work/repo/").to_owned();
        let body = render_not_run(
            "the goldens do not load",
            "",
            &diags.items,
            &options(&from_workspace),
        );
        assert!(body.starts_with(&marker("default")), "{body}");
        assert!(
            body.contains("evals/orders.yaml:1: error [G100] unknown key `turnz`"),
            "{body}"
        );
        assert!(
            body.contains(&format!("evals/orders.yaml:{SHOWN}: error")),
            "{body}"
        );
        assert!(
            !body.contains(&format!("evals/orders.yaml:{}: error", SHOWN + 1)),
            "{body}"
        );
        assert!(body.contains("10 more not shown."), "{body}");
    }

    #[test]
    fn details_are_shown_instead_of_the_problems() {
        let same = |file: &str| file.to_owned();
        let details = "goldgate.yaml:2: error [G107] agent: unknown agent kind `htp`";
        let body = render_not_run("the config does not load", details, &[], &options(&same));
        assert!(body.contains("the config does not load"), "{body}");
        assert!(body.contains(&format!("```text\n{details}\n```")), "{body}");
    }
}
