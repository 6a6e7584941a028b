//! How a command agent's processes end: every one gets SIGTERM and its grace period, even
//! when the command runs under a shell that leaves first.

mod common;

use std::fs;
use std::path::Path;

/// Replies to each request line with its id and `$1` (the ping and every turn).
const SH_REPLY: &str = r#"
reply_with_rest() {
  id=$(printf '%s\n' "$line" | sed -n 's/^{"id":\([0-9]*\).*/\1/p')
  printf '{"id":%s,%s}\n' "$id" "$1"
}
"#;

#[cfg(unix)]
#[test]
fn an_agent_under_a_shell_gets_its_sigterm_grace() {
    let dir = tempfile::tempdir().unwrap();
    common::order_golden(dir.path(), &common::order_conversation("c1"));
    // The agent winds down for half a second on SIGTERM; the shell running it (not its last
    // command, so it does not exec) dies at once.
    let agent = format!(
        "{SH_REPLY}\ntrap 'sleep 0.5; echo done > graceful; exit 0' TERM\n\
         while IFS= read -r line; do\n  reply_with_rest '\"messages\":[{{\"text\":\"Your order ORD-12345 has shipped and should arrive by April 18th.\"}}],\"tool_calls\":[{{\"name\":\"lookup_order\",\"args\":{{\"order_id\":\"ORD-12345\"}}}}]'\ndone\n"
    );
    fs::write(dir.path().join("agent.sh"), agent).unwrap();
    fs::write(
        dir.path().join("goldgate.yaml"),
        "agent:\n  command: { argv: [\"sh\", \"-c\", \"sh agent.sh; true\"] }\n",
    )
    .unwrap();
    let out = common::goldgate(dir.path(), &["run", "goldens"]);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert!(
        Path::new(&dir.path().join("graceful")).is_file(),
        "the agent was killed before its SIGTERM handler finished"
    );
}

/// Whether `pid` still runs (a zombie counts as gone), given a second to go.
#[cfg(target_os = "linux")]
fn alive(pid: u32) -> bool {
    (0..20).all(|_| {
        let running = fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            !stat
                .rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z'))
        });
        if running {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        running
    })
}

#[cfg(target_os = "linux")]
#[test]
fn a_process_that_left_the_agents_session_does_not_outlive_goldgate() {
    let dir = tempfile::tempdir().unwrap();
    common::order_golden(dir.path(), &common::order_conversation("c1"));
    let agent = format!(
        "{SH_REPLY}\nsetsid sh -c 'echo $$ > escaped; exec sleep 300' &\n\
         while IFS= read -r line; do\n  reply_with_rest '\"messages\":[]'\ndone\n"
    );
    fs::write(dir.path().join("agent.sh"), agent).unwrap();
    fs::write(
        dir.path().join("goldgate.yaml"),
        "agent:\n  command: { argv: [\"sh\", \"agent.sh\"] }\n",
    )
    .unwrap();
    let out = common::goldgate(dir.path(), &["run", "goldens"]);
    assert!(matches!(out.code, Some(0 | 1)), "{}", out.stderr);
    let pid: u32 = fs::read_to_string(dir.path().join("escaped"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        !alive(pid),
        "process {pid}, started with setsid, outlived goldgate"
    );
}
