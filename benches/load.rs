//! Loader throughput: generates 10,000 golden files (2,500 of each format) in a temporary
//! directory, then discovers and loads them on one thread, and prints files per second.
//! Goal: the whole load in under one second. Run with `cargo bench --bench load`.

use std::fs;
use std::path::Path;
use std::time::Instant;

use goldgate::discover::{self, Rules};
use goldgate::formats;
use goldgate::load;
use goldgate::model::Format;

const PER_FORMAT: usize = 2_500;

/// `head`, then three cases, each `case(c)`: a file of three cases.
fn three_cases(head: String, case: impl Fn(usize) -> String) -> String {
    (0..3).fold(head, |text, c| text + &case(c))
}

fn scrapi(i: usize) -> String {
    three_cases(
        String::from("common_session_parameters:\n  order_status: shipped\nconversations:\n"),
        |c| {
            format!(
                "  - conversation: case_{i}_{c}\n    tags: [P0, orders]\n    turns:\n      - user: \"Hi, where is ORD-{i}?\"\n        tool_calls:\n          - action: lookup_order\n            args:\n              order_id: {{ value: \"ORD-{i}\", $matchType: contains }}\n        agent: \"Your order ORD-{i} has shipped.\"\n      - user: Thanks\n        agent: You're welcome!\n"
            )
        },
    )
}

fn ces(i: usize) -> String {
    three_cases(
        String::from(
            "display_name,turn_index,action_type,text_content,response_agent,tool_name,tool_call_args_json,tags\n",
        ),
        |c| {
            format!(
                "eval {i} {c},,,,,,,P0;orders\n,1,INPUT_TEXT,Where is ORD-{i}?,,,,\n,1,EXPECTATION_TOOL_CALL,,,lookup_order,\"{{\"\"order_id\"\": \"\"ORD-{i}\"\"}}\",\n,1,EXPECTATION_TEXT,It has shipped.,root,,,\n"
            )
        },
    )
}

fn scenario(i: usize) -> String {
    format!(
        "id: scenario-{i}\nname: Invoice lookup {i}\ntags: [support]\nwhen:\n  - user: Please pull invoice INV-{i}\nthen:\n  - scorer: tool-called\n    args: {{ name: lookup_invoice }}\n  - scorer: message-matches-regex\n    args: {{ pattern: \"INV-[0-9]+\", flags: i }}\n  - scorer: no-handoff\n"
    )
}

fn regtrace(i: usize) -> String {
    three_cases(
        format!(
            "name: set-{i}\nversion: \"1.0.0\"\ndescription: generated\ninteraction_type: single_turn\ntags: [qa]\nauthor: bench\ncreated_at: \"2026-01-01\"\nupdated_at: \"2026-01-02\"\ntest_cases:\n"
        ),
        |c| {
            format!(
                "  - id: qa-{i}-{c}\n    description: capital\n    input: What is the capital of France?\n    system_prompt: null\n    expected_output: Paris\n    actual_output: Paris is the capital.\n    metrics: [factuality, format]\n    tags: []\n    weight: 1\n    thresholds: {{ factuality: 0.8 }}\n"
            )
        },
    )
}

fn main() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let root = dir.path();
    write_suite(root);
    let bytes: u64 = walk_bytes(root);
    parse_in_memory(root);
    load_each_format(root);
    load_everything(root, bytes);
}

/// `PER_FORMAT` files of each format under `root`, 50 to a folder.
fn write_suite(root: &Path) {
    let write = |relative: String, text: String| {
        let path = root.join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    };
    for i in 0..PER_FORMAT {
        write(format!("goldens/scrapi/{}/g{i}.yaml", i % 50), scrapi(i));
        write(format!("goldens/ces/{}/g{i}.golden.csv", i % 50), ces(i));
        write(
            format!("scenarios/{}/s{i}.scenario.yaml", i % 50),
            scenario(i),
        );
        write(format!("sets/{}/r{i}.golden.yaml", i % 50), regtrace(i));
    }
}

/// Parsing alone, from memory: separates the loaders' cost from the file system's.
fn parse_in_memory(root: &Path) {
    let texts: Vec<(std::sync::Arc<Path>, String, Format)> =
        discover::discover(&[root.to_path_buf()], &Rules::default())
            .expect("discover")
            .found
            .into_iter()
            .map(|f| {
                let format = match f.path.extension().and_then(|e| e.to_str()) {
                    Some("csv") => Format::CesCsv,
                    _ if f.path.to_string_lossy().contains(".scenario.") => Format::GecxScenario,
                    _ if f.path.starts_with(root.join("sets")) => Format::RegtraceSet,
                    _ => Format::ScrapiGolden,
                };
                let text = fs::read_to_string(&f.path).unwrap();
                (std::sync::Arc::from(f.path.as_path()), text, format)
            })
            .collect();
    let start = Instant::now();
    let cases: usize = texts
        .iter()
        .map(|(path, text, format)| formats::load_golden(path, text, *format).cases.len())
        .sum();
    let parsed = start.elapsed().as_secs_f64();
    println!(
        "in memory  {:>6} files  {:>8.3} s  {:>9.0} files/s  ({cases} cases)",
        texts.len(),
        parsed,
        texts.len() as f64 / parsed
    );
}

/// Each format alone.
fn load_each_format(root: &Path) {
    for (label, dir) in [
        ("scrapi", "goldens/scrapi"),
        ("ces-csv", "goldens/ces"),
        ("scenario", "scenarios"),
        ("regtrace", "sets"),
    ] {
        let start = Instant::now();
        let found = discover::discover(&[root.join(dir)], &Rules::default())
            .expect("discover")
            .found;
        let suite = load::load(&found).expect("the generated files are within the bound");
        let elapsed = start.elapsed().as_secs_f64();
        assert_eq!(suite.error_count(), 0, "generated {label} files are valid");
        println!(
            "{label:<10} {:>6} files  {:>8.3} s  {:>9.0} files/s",
            found.len(),
            elapsed,
            found.len() as f64 / elapsed
        );
    }
}

/// Everything together, as `goldgate lint .` would.
fn load_everything(root: &Path, bytes: u64) {
    let start = Instant::now();
    let found = discover::discover(&[root.to_path_buf()], &Rules::default())
        .expect("discover")
        .found;
    let discovered = start.elapsed();
    let suite = load::load(&found).expect("the generated files are within the bound");
    let total = start.elapsed();

    assert_eq!(found.len(), 4 * PER_FORMAT, "every generated file is found");
    assert_eq!(suite.error_count(), 0, "generated files are valid");
    let files = found.len() as f64;
    println!("all files:      {}", found.len());
    println!("cases:          {}", suite.case_count());
    println!(
        "bytes:          {:.1} MiB",
        bytes as f64 / (1024.0 * 1024.0)
    );
    println!("discover:       {:.3} s", discovered.as_secs_f64());
    println!("discover+load:  {:.3} s", total.as_secs_f64());
    println!("files/second:   {:.0}", files / total.as_secs_f64());
    println!(
        "goal:           < 1.000 s  (ratio {:.2} of the goal)",
        total.as_secs_f64()
    );
}

fn walk_bytes(dir: &Path) -> u64 {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                walk_bytes(&e.path())
            } else {
                e.metadata().unwrap().len()
            }
        })
        .sum()
}
