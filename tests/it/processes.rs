//! How a command agent's processes end: every one gets SIGTERM and its grace period, even
//! when the command runs under a shell that leaves first.

use crate::common;
use std::fs;
use std::path::Path;

use common::process::SH_REPLY;

/// Runs the one-case order suite in `dir` against `agent.sh` (the `SH_REPLY` helper, then
/// `body`) started by `argv`.
fn run_sh_agent(dir: &Path, body: &str, argv: &str) -> common::Outcome {
    common::order_golden(dir, &common::order_conversation("c1"));
    common::write(dir, "agent.sh", format!("{SH_REPLY}\n{body}"));
    common::write(
        dir,
        "goldgate.yaml",
        format!("agent:\n  command: {{ argv: {argv} }}\n"),
    );
    common::goldgate(dir, &["run", "goldens"])
}

#[cfg(unix)]
#[test]
fn an_agent_under_a_shell_gets_its_sigterm_grace() {
    let dir = tempfile::tempdir().unwrap();
    // The agent winds down for half a second on SIGTERM; the shell running it (not its last
    // command, so it does not exec) dies at once.
    let out = run_sh_agent(
        dir.path(),
        "trap 'sleep 0.5; echo done > graceful; exit 0' TERM\n\
         while IFS= read -r line; do\n  reply_with_rest '\"messages\":[{\"text\":\"Your order ORD-12345 has shipped and should arrive by April 18th.\"}],\"tool_calls\":[{\"name\":\"lookup_order\",\"args\":{\"order_id\":\"ORD-12345\"}}]'\ndone\n",
        r#"["sh", "-c", "sh agent.sh; true"]"#,
    );
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert!(
        dir.path().join("graceful").is_file(),
        "the agent was killed before its SIGTERM handler finished"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_process_that_left_the_agents_session_does_not_outlive_goldgate() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_sh_agent(
        dir.path(),
        "setsid sh -c 'echo $$ > escaped; exec sleep 300' &\n\
         while IFS= read -r line; do\n  reply_with_rest '\"messages\":[]'\ndone\n",
        r#"["sh", "agent.sh"]"#,
    );
    assert!(matches!(out.code, Some(0 | 1)), "{}", out.stderr);
    let pid: u32 = fs::read_to_string(dir.path().join("escaped"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        !common::process::alive(pid),
        "process {pid}, started with setsid, outlived goldgate"
    );
}
