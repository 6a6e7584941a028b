//! `lint: { allow: [E006] }` in goldgate.yaml: warnings a team has decided to live with (E006
//! for an agent that runs its own tools), which `run`, `list` and `lint` stop printing. Only
//! warnings are silenced: an error under an allowed code still stops the golden from loading.

use crate::diagnostic::{Code, Diagnostics};
use crate::yaml::{Fields, Node, Value, expect_text, indexed};

/// The codes of `lint.allow`, each checked to be one goldgate has.
pub(crate) fn parse(node: &Node, diags: &mut Diagnostics) -> Vec<Code> {
    let Some(mut fields) = Fields::of(node, "lint", diags) else {
        return Vec::new();
    };
    let mut codes = Vec::new();
    if let Some(list) = fields.take("allow") {
        let items = match &list.value {
            Value::Seq(items) => items.as_slice(),
            _ => std::slice::from_ref(list),
        };
        for (path, item) in indexed(items, "lint.allow") {
            let Some(text) = expect_text(item, &path, diags) else {
                continue;
            };
            match serde_json::from_value::<Code>(serde_json::Value::String(text.clone())) {
                Ok(code) => codes.push(code),
                Err(_) => {
                    diags
                        .at(item)
                        .error(Code::G107, format!("`{text}` is not a rule code"))
                        .field(path)
                        .hint("a code as `goldgate lint` prints it in brackets, such as E006");
                }
            }
        }
    }
    fields.finish(diags);
    codes
}
