//! The tools file of an LLM agent: a JSON array of `{name, description, parameters}` with
//! `parameters` a JSON Schema, or of OpenAI's `{type: function, function: {...}}` form (the
//! two may be mixed). Parsed strictly: a typo in a key is an error naming the tool.

use std::collections::HashSet;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};

/// A tool the model may call: `parameters` is a JSON Schema of its arguments object.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Wrapped {
    #[serde(rename = "type")]
    kind: String,
    function: Plain,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Plain {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    parameters: Option<Value>,
    /// OpenAI's strict-mode flag: accepted and ignored (the other providers have none).
    #[serde(default, rename = "strict")]
    _strict: Option<IgnoredAny>,
}

/// Parses the tools file's text. The error says which tool (by position) is wrong and why.
pub fn parse(text: &str) -> Result<Vec<ToolSpec>, String> {
    let items: Vec<Value> =
        serde_json::from_str(text).map_err(|e| format!("not a JSON array of tools: {e}"))?;
    let mut seen = HashSet::new();
    let mut tools = Vec::with_capacity(items.len());
    for (index, item) in items.into_iter().enumerate() {
        let at = |why: String| format!("tool [{index}]: {why}");
        // OpenAI's form is told by its `type`; serde's own message says what is wrong.
        let plain = if item.get("type").is_some() {
            let wrapped = Wrapped::deserialize(&item).map_err(|e| at(e.to_string()))?;
            if wrapped.kind != "function" {
                return Err(at(format!(
                    "type `{}` is not a function tool",
                    wrapped.kind
                )));
            }
            wrapped.function
        } else {
            Plain::deserialize(&item).map_err(|e| {
                at(format!(
                    "{e} (a tool is {{name, description, parameters}} or {{type: \"function\", function: {{...}}}})"
                ))
            })?
        };
        let valid_name = !plain.name.is_empty()
            && plain.name.len() <= 64
            && plain
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'));
        if !valid_name {
            return Err(at(format!(
                "name `{}` must be 1-64 letters, digits, `_` or `-` (what all three providers accept)",
                plain.name
            )));
        }
        if !seen.insert(plain.name.clone()) {
            return Err(at(format!("`{}` is declared twice", plain.name)));
        }
        let parameters = plain
            .parameters
            .unwrap_or_else(|| json!({ "type": "object", "properties": {} }));
        if !parameters.is_object() {
            return Err(at(format!(
                "`{}`: parameters must be a JSON Schema object",
                plain.name
            )));
        }
        tools.push(ToolSpec {
            name: plain.name,
            description: plain.description,
            parameters,
        });
    }
    Ok(tools)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_are_read() {
        let text = r#"[
            {"name": "lookup_order", "description": "Finds an order",
             "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}},
            {"type": "function", "function": {"name": "cancel", "description": "Cancels", "strict": true}}
        ]"#;
        let tools = parse(text).unwrap();
        assert_eq!(tools[0].name, "lookup_order");
        assert_eq!(tools[1].name, "cancel");
        assert_eq!(tools[1].parameters["type"], "object");
    }

    #[test]
    fn mistakes_name_the_tool() {
        assert!(parse("{}").unwrap_err().contains("not a JSON array"));
        let typo = r#"[{"name": "a", "paramters": {}}]"#;
        assert!(parse(typo).unwrap_err().starts_with("tool [0]"));
        let twice = r#"[{"name": "a"}, {"name": "a"}]"#;
        assert!(parse(twice).unwrap_err().contains("declared twice"));
        let spaced = r#"[{"name": "look up"}]"#;
        assert!(parse(spaced).unwrap_err().contains("must be 1-64"));
    }
}
