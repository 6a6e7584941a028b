//! The JSON Schema of the report, generated from its types (the crate's `schema` feature):
//! the test that holds schemas/report.schema.json to them calls it, and the binary embeds that
//! file as written.

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

use super::{Report, SCHEMA_VERSION};

/// The JSON report written by `--output` and `--update-baseline`, of this build's
/// [`SCHEMA_VERSION`].
pub fn report_schema() -> Value {
    // Pinned to a draft rather than schemars' default, which may move to a later one.
    let mut generated = SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<Report>();
    // A reader refuses any other version, so the schema accepts only this one.
    if let Some(version) = generated
        .pointer_mut("/properties/schema_version")
        .and_then(Value::as_object_mut)
    {
        version.insert("const".into(), SCHEMA_VERSION.into());
    }
    // What the JSON writer adds after the report's fields (see `results::json::write`).
    if let Some(properties) = generated
        .pointer_mut("/properties")
        .and_then(Value::as_object_mut)
    {
        properties.insert(
            "verdict".into(),
            serde_json::json!({
                "description": "What the run came to under its policy: `pass`, `failed`, `regressed`, `inconclusive` or `error`; the exit code follows it.",
                "enum": ["pass", "failed", "regressed", "inconclusive", "error"]
            }),
        );
        properties.insert(
            "exit".into(),
            serde_json::json!({
                "description": "The exit code this report stands for: 0, 1 or 2.",
                "enum": [0, 1, 2]
            }),
        );
    }
    // The header first, where a person opening the file looks for it; schemars' title is
    // the bare type name.
    generated.remove("title");
    generated.remove("description");
    let mut schema = Map::new();
    if let Some(draft) = generated.remove("$schema") {
        schema.insert("$schema".into(), draft);
    }
    schema.insert("title".into(), "goldgate JSON report".into());
    schema.insert(
        "description".into(),
        "A run of goldgate: every case with its turns and checks, the aggregates, and the \
         comparison with a baseline. Written by `goldgate run --output` and \
         `--update-baseline`; read back as a baseline and by `compare`, `merge` and `report`."
            .into(),
    );
    if let Value::Object(rest) = generated.to_value() {
        schema.extend(rest);
    }
    Value::Object(schema)
}
