//! SCRAPI goldens in the platform's own shape (an exported evaluation, YAML or JSON, whose
//! turns are already steps) push in platform mode with their turns exactly as written, as
//! `cxas push-eval` pushes them, against the loopback fake of the v1beta evaluation endpoints.
//! Two of the corpus's exports name tools by bare id where the API wants a resource name:
//! SCRAPI sends them so, goldgate too, and the platform's refusal is that case's error.

use crate::{ces_platform_support, common};
use std::fs;
use std::path::Path;

use serde_json::Value;

use ces_platform_support::cli::{corpus_platform, golden_copy, with_token};

const EXPORTED: [&str; 3] = [
    "scrapi/tests/testdata/exported_eval_example.yaml",
    "scrapi/examples/bella_notte/evaluations/Event_Prefill_-_Party_Size_Skipped/Event_Prefill_-_Party_Size_Skipped.json",
    "scrapi/examples/bella_notte/evaluations/Generic_Request_-_Asks_Party_Size_First/Generic_Request_-_Asks_Party_Size_First.json",
];
/// Exports whose tool calls name a tool by its bare id.
const REFUSED: [&str; 2] = [
    "scrapi/examples/bella_notte/evaluations/Happy_Path_-_Multi-Agent_Reservation/Happy_Path_-_Multi-Agent_Reservation.json",
    "scrapi/examples/bella_notte/evaluations/Payload_-_Welcome_Card_and_Chips_Injection/Payload_-_Welcome_Card_and_Chips_Injection.json",
];

#[test]
fn exported_evaluations_push_with_their_steps_as_written() {
    let Some((dir, fake)) = corpus_platform(&[&EXPORTED[..], &REFUSED[..]].concat(), |_| {}) else {
        return;
    };
    let (code, report, printed) = with_token(dir.path(), &[]);
    assert_eq!(code, Some(2), "{printed}");
    let created = fake.heard("POST", "/evaluations");
    assert_eq!(created.len(), EXPORTED.len() + REFUSED.len(), "{printed}");
    for file in EXPORTED.iter().chain(&REFUSED) {
        let text = fs::read_to_string(golden_copy(dir.path(), file)).unwrap();
        let source: Value = serde_saphyr::from_str(&text).unwrap();
        let display = source["displayName"].as_str().unwrap();
        let sent = created
            .iter()
            .find(|h| h.body["displayName"] == display)
            .unwrap_or_else(|| panic!("{display} was not pushed"));
        assert_eq!(
            sent.body["golden"]["turns"], source["golden"]["turns"],
            "{display}"
        );
        let stem = Path::new(file).file_stem().unwrap().to_str().unwrap();
        let tags = sent.body["tags"].as_array().unwrap();
        assert_eq!(tags.last().and_then(Value::as_str), Some(stem), "{display}");
        let case = common::case(&report, display);
        if REFUSED.contains(file) {
            let error = case["error"].as_str().unwrap_or_default();
            let refused = error.contains("HTTP 400") && error.contains("is not a tool of the app");
            assert!(refused, "{case:#}");
        } else {
            assert_eq!(case["status"], "passed", "{printed}");
        }
    }
}
