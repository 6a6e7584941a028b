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
