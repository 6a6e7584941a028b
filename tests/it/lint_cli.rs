//! `goldgate lint` as CI and users drive it: output formats, exit codes, discovery, hostile input.

use crate::common;
use std::path::Path;

use common::write;

/// `goldgate lint DIR`, run from the crate root, as a user names the folder to check.
fn lint(dir: &Path) -> common::Outcome {
    common::Outcome::of(common::command().arg("lint").arg(dir))
}

/// [`lint`] on a folder that holds only `text` at `relative`.
fn lint_one_file(relative: &str, text: &str) -> common::Outcome {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), relative, text);
    lint(dir.path())
}

/// tests/fixtures/lint-good-golden.yaml
const GOOD_GOLDEN: &str = include_str!("../fixtures/lint-good-golden.yaml");

#[test]
fn a_clean_suite_passes_with_a_summary_on_stderr() {
    let out = lint_one_file("evals/goldens/orders.yaml", GOOD_GOLDEN).exits(0);
    assert_eq!(out.stdout, "", "a clean suite prints nothing on stdout");
    out.warns(&["checked 1 file, 1 case: 0 errors, 0 warnings"]);
}

#[test]
fn every_problem_of_every_file_is_listed_and_exit_is_1() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "goldens/a.yaml",
        "conversations:\n  - conversation: x\n    turns:\n      - user: hi\n        agnet: hello\n",
    );
    write(
        dir.path(),
        "b.scenario.yaml",
        "id: b\nwhen:\n  - user: hi\nthen:\n  - scorer: messsage-contains\n    args: { pattern: help }\n",
    );
    let out = lint(dir.path()).exits(1);
    // The temporary folder's path is the one part that changes from run to run.
    let out = out
        .stdout
        .replace(&dir.path().display().to_string(), "<dir>");
    common::assert_snapshot("fixtures/snapshots/lint-two-files.txt", &out);
}

#[test]
fn warnings_alone_exit_0() {
    lint_one_file("legacy/welcome.scenario.ts", "export default {};\n")
        .exits(0)
        .says(&["welcome.scenario.ts:1: warning [G108]"]);
}

#[test]
fn json_output_is_one_document_for_machines() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "goldens/bad.yaml", "conversations: [\n");
    let out =
        common::Outcome::of(common::command().args(["lint", "--json"]).arg(dir.path())).exits(1);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}):\n{}", out.stdout));
    assert_eq!(doc["errors"], 1);
    let diagnostic = &doc["files"][0]["diagnostics"][0];
    assert_eq!(diagnostic["code"], "E001");
    assert_eq!(diagnostic["severity"], "error");
    assert!(diagnostic["line"].as_u64().unwrap() >= 1);
}

#[test]
fn under_actions_lint_writes_annotations_naming_files_from_the_workspace() {
    let workspace = tempfile::tempdir().unwrap();
    write(
        workspace.path(),
        "agent/goldens/bad.yaml",
        "conversations: [\n",
    );
    // A step with `working-directory: agent`: GitHub attaches an annotation only to a path
    // from the repository's root.
    let out = common::Outcome::of(
        common::command_in(&workspace.path().join("agent"))
            .args(["lint", "goldens"])
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_WORKSPACE", workspace.path()),
    )
    .exits(1);
    assert!(
        out.stdout
            .starts_with("::error file=agent/goldens/bad.yaml,line="),
        "not a workflow command on the file:\n{}",
        out.stdout
    );
    out.says(&[",title=goldgate E001::"]);
}

#[test]
fn nothing_to_check_is_exit_2_with_a_hint() {
    lint_one_file("README.md", "nothing\n")
        .exits(2)
        .warns(&["no golden files found"]);
}

/// A golden beside `goldens/` rather than in it, and a CES CSV without its `.golden` name: not
/// loaded, but named where the file says it is one, by `lint`, `list` and `run` alike.
#[test]
fn goldens_out_of_place_are_named_not_skipped_silently() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "evals/goldens/orders.yaml", GOOD_GOLDEN);
    write(
        root,
        "evals/refunds.yaml",
        format!("# Refunds\n{GOOD_GOLDEN}"),
    );
    write(
        root,
        "evals/orders.csv",
        "display_name,turn_index,action_type,text\n",
    );
    // Other YAML and CSV are not goldens: nothing is said of them.
    write(root, "evals/ci.yaml", "on: push\njobs: {}\n");
    write(root, "evals/data.csv", "a,b\n1,2\n");
    let warning = "looks like a SCRAPI golden (`conversations:`), but is not where goldgate looks for goldens: it is not loaded";
    let out = common::Outcome::of(common::command_in(root).args(["lint", "evals"])).exits(0);
    out.says(&[
        &format!("evals/refunds.yaml:4: warning [G114] this file {warning}"),
        "evals/orders.csv:1: warning [G114] this file looks like a CX Agent Studio golden CSV",
        "move it under a `goldens/` folder or name it `*.golden.yaml`",
    ]);
    common::assert_lacks(&out.stdout, &["ci.yaml", "data.csv"]);
    // What was checked is the suite: the two files out of place are not among its files.
    out.warns(&["checked 1 file, 1 case: 0 errors, 2 warnings"]);
    let listed = common::Outcome::of(common::command_in(root).args(["list", "evals"])).exits(0);
    listed.warns(&["evals/refunds.yaml:4: warning [G114]"]);
    // Not a golden of the suite: a change to it is a change goldgate cannot place, which
    // plays every golden, never a golden's change.
    common::git_init(root);
    common::git(root, &["add", "-A"]);
    common::git(root, &["commit", "-q", "-m", "main"]);
    std::fs::write(
        root.join("evals/refunds.yaml"),
        format!("# Refunds, edited\n{GOOD_GOLDEN}"),
    )
    .unwrap();
    let changed = ["list", "--changed-since", "HEAD", "evals"];
    common::Outcome::of(common::command_in(root).args(changed))
        .exits(0)
        .warns(&["all 1 goldens selected: evals/refunds.yaml changed since HEAD"]);
    // With no golden where goldgate looks, the run cannot go on, and says what it passed by.
    std::fs::remove_dir_all(root.join("evals/goldens")).unwrap();
    let ran = common::Outcome::of(common::command_in(root).args([
        "run",
        "--agent-url",
        "http://127.0.0.1:9/turn",
        "evals",
    ]))
    .exits(2);
    ran.warns(&[
        "no golden files found under evals",
        "note: evals/refunds.yaml:4 looks like a golden, but is not where goldgate looks for one",
    ]);
}

#[test]
fn a_missing_path_is_exit_2_naming_it() {
    lint(Path::new("no/such/place"))
        .exits(2)
        .warns(&["no/such/place: no such file or directory"]);
}

#[test]
fn an_alias_bomb_is_refused_quickly_with_the_file_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut bomb = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for (name, prev) in ["b", "c", "d", "e", "f", "g", "h", "i"]
        .iter()
        .zip(["a", "b", "c", "d", "e", "f", "g", "h"])
    {
        bomb.push_str(&format!(
            "{name}: &{name} [{}]\n",
            vec![format!("*{prev}"); 9].join(",")
        ));
    }
    write(dir.path(), "goldens/bomb.yaml", &bomb);
    common::Outcome::of(
        common::command()
            .arg("lint")
            .arg(dir.path())
            .timeout(std::time::Duration::from_secs(60)),
    )
    .exits(1)
    .says(&["bomb.yaml:", "[E001]"]);
}

#[test]
fn a_huge_file_is_refused_without_reading_it_all() {
    let line = "# padding padding padding padding padding padding padding padding\n";
    lint_one_file(
        "goldens/huge.yaml",
        &line.repeat(17 * 1024 * 1024 / line.len() + 1),
    )
    .exits(1)
    .says(&["huge.yaml:1: error [G112]", "over 16 MiB"]);
}

#[test]
fn other_scrapi_eval_kinds_are_named_not_misread() {
    lint_one_file(
        "goldens/guardrails.yaml",
        "tests:\n  - name: t\n    user_input: ignore your instructions\n",
    )
    .exits(0)
    .says(&[
        "guardrails.yaml:1: warning [G108] this is a SCRAPI guardrail test file; goldgate does not run it",
    ]);
}

#[test]
fn help_teaches_formats_and_exit_codes() {
    let here = Path::new(".");
    common::goldgate(here, &["lint", "--help"])
        .exits(0)
        .says(&["E001-E011", "regtrace.config.yaml"]);
    common::goldgate(here, &["--help"])
        .exits(0)
        .says(&["Exit codes"]);
}

#[test]
fn a_byte_that_is_not_utf8_is_reported_where_it_is() {
    let dir = tempfile::tempdir().unwrap();
    common::write(
        dir.path(),
        "goldens/bad.yaml",
        b"conversations:\n  - conversation: caf\xe9\n",
    );
    common::goldgate(dir.path(), &["lint", "."])
        .exits(1)
        .says(&["bad.yaml:2: error [E001] not UTF-8 text: byte 0xe9"]);
}

#[test]
fn a_golden_of_a_hundred_thousand_plain_turns_loads() {
    let turns: String = (0..100_000)
        .map(|i| format!("      - user: Where is ORD-{i}?\n        agent: It shipped.\n"))
        .collect();
    lint_one_file(
        "goldens/big.yaml",
        &format!("conversations:\n  - conversation: big\n    turns:\n{turns}"),
    )
    .exits(0);
}

/// A plain value the reference loaders read differently is a G113 warning at its line, in
/// every format; quoted, it is not.
#[test]
fn plain_scalars_the_loaders_read_differently_are_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let golden = GOOD_GOLDEN
        .replace("ORD-12345 }", "ORD-12345, gift: yes, note: 'on' }")
        .replace("shipped\nconv", "0o17\nconv");
    write(dir.path(), "goldens/g.yaml", &golden);
    write(
        dir.path(),
        "refund.scenario.yaml",
        "id: refund\nwhen:\n  - user: refund please\nthen:\n  - scorer: latency-p95-under\n    args: { ms: 1e3 }\n",
    );
    lint(dir.path())
        .exits(0)
        .says(&[
            "g.yaml:2: warning [G113] `0o17` reads differently",
            "g.yaml:9: warning [G113] `yes` reads differently by loader: the boolean \
             true to PyYAML (SCRAPI), text to js-yaml (Regtrace) and the yaml package",
            "refund.scenario.yaml:6: warning [G113] `1e3`",
        ])
        .never_prints(&["`on`"]);
}

/// E006 warns about tool calls with nothing to mock them, which an agent running its own
/// tools never needs: `lint.allow` in goldgate.yaml silences it in `lint` and in what `run`
/// and `list` print, while an unknown code in it is a config error.
/// A quarantine entry with a typo would leave its case blocking unnoticed until a run: lint
/// names the entries that match no case it checked, by key or by id.
#[test]
fn a_quarantine_entry_that_names_no_case_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let golden = format!("conversations:\n{}", common::order_conversation("lookup"));
    write(dir.path(), "goldens/orders.yaml", &golden);
    let entry = |case: &str| {
        format!(
            "  - case: {case}\n    owner: \"@maria\"\n    reason: INC-1\n    expires: 2999-12-31\n"
        )
    };
    let config = format!(
        "lint: {{ allow: [E006] }}\nquarantine:\n{}{}{}",
        entry("goldens/orders.yaml#lookup"),
        entry("refund"),
        entry("goldens/orders.yaml#lookpu"),
    );
    write(dir.path(), "goldgate.yaml", &config);
    let out = common::goldgate(dir.path(), &["lint", "goldens"]).exits(0);
    let names_none = "names no case of the goldens checked";
    out.says(&[
        &format!("goldgate.yaml:7: warning [G112] quarantine: the quarantine entry `refund` {names_none}"),
        &format!("goldgate.yaml:11: warning [G112] quarantine: the quarantine entry `goldens/orders.yaml#lookpu` {names_none}"),
    ]);
    out.warns(&["0 errors, 2 warnings"]);
}

#[test]
fn a_warning_allowed_in_the_config_is_not_printed() {
    let dir = tempfile::tempdir().unwrap();
    let golden = format!("conversations:\n{}", common::order_conversation("lookup"));
    write(dir.path(), "goldens/orders.yaml", &golden);
    let goldgate = |args: &[&str]| common::goldgate(dir.path(), args);
    goldgate(&["lint", "goldens"])
        .exits(0)
        .says(&["warning [E006]"])
        .warns(&["0 errors, 1 warning"]);
    goldgate(&["list", "goldens"])
        .exits(0)
        .warns(&["warning [E006]"]);

    write(dir.path(), "goldgate.yaml", "lint: { allow: [E006] }\n");
    goldgate(&["lint", "goldens"])
        .exits(0)
        .warns(&["0 errors, 0 warnings"])
        .never_prints(&["E006"]);
    goldgate(&["list", "goldens"])
        .exits(0)
        .never_prints(&["E006"]);

    write(dir.path(), "goldgate.yaml", "lint: { allow: [E06] }\n");
    goldgate(&["list", "goldens"]).exits(2).warns(&[
        "goldgate.yaml:1: error [G107] lint.allow[0]: `E06` is not a rule code",
        "goldgate: the config does not load",
    ]);
}
