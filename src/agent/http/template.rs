//! Renders a template agent's request for one turn: the URL, the header values and the body,
//! each with the turn's values in place of its placeholders.
//!
//! A JSON body is built as a JSON value and serialized, so that text from the golden is escaped
//! as JSON needs, whatever it holds (quotes, newlines, `{{`); a placeholder that is a whole
//! string becomes the value itself (`"{{turn}}"` is the number 2). In a URL the values are
//! percent-encoded, so that the user's text cannot add a path segment or a query parameter.

use serde_json::{Map, Value as Json};

use crate::config::http::{BodyTemplate, JsonTemplate, Piece, Placeholder, TextTemplate};

/// What the placeholders of one turn stand for.
pub struct TurnValues<'a> {
    pub text: &'a str,
    /// The server's session id, goldgate's own, or null before the server assigned one.
    pub session: &'a Json,
    pub variables: &'a Map<String, Json>,
    pub turn: usize,
    pub conversation: &'a str,
    pub input: &'a Map<String, Json>,
    /// The conversation so far as chat messages, this turn's last.
    pub messages: &'a [Json],
}

/// A rendered body and the content type it is sent as.
pub struct Body {
    pub bytes: Vec<u8>,
    pub content_type: &'static str,
}

impl TurnValues<'_> {
    /// A placeholder's value as JSON.
    pub fn value(&self, placeholder: Placeholder) -> Json {
        match placeholder {
            Placeholder::Text => Json::String(self.text.to_owned()),
            Placeholder::Session => self.session.clone(),
            Placeholder::Variables => Json::Object(self.variables.clone()),
            Placeholder::Turn => Json::from(self.turn),
            Placeholder::Conversation => Json::String(self.conversation.to_owned()),
            Placeholder::Input => Json::Object(self.input.clone()),
            Placeholder::Event => self.input_part("event"),
            Placeholder::TurnVariables => self.input_part("variables"),
            Placeholder::ToolResponses => self.input_part("tool_responses"),
            Placeholder::Messages => Json::Array(self.messages.to_vec()),
            Placeholder::TextOrIntent => match self.input.get("event") {
                Some(Json::String(event)) => Json::String(format!("/{event}")),
                _ => Json::String(self.text.to_owned()),
            },
        }
    }

    /// One key of the turn's input, null when the turn does not send it.
    fn input_part(&self, key: &str) -> Json {
        self.input.get(key).cloned().unwrap_or(Json::Null)
    }

    /// A placeholder's value among other text: a string as it is, null as nothing, anything
    /// else as compact JSON.
    fn words(&self, placeholder: Placeholder) -> String {
        match self.value(placeholder) {
            Json::String(text) => text,
            Json::Null => String::new(),
            other => other.to_string(),
        }
    }

    /// The text with every placeholder's words in place.
    pub fn text(&self, template: &TextTemplate) -> String {
        self.join(template, |words| words)
    }

    /// The URL with every placeholder's words percent-encoded in place.
    pub fn url(&self, template: &TextTemplate) -> String {
        self.join(template, |words| percent_encode(&words))
    }

    fn join(&self, template: &TextTemplate, encode: impl Fn(String) -> String) -> String {
        let mut out = String::new();
        for piece in &template.pieces {
            match piece {
                Piece::Literal(text) => out.push_str(text),
                Piece::Placeholder(p) => out.push_str(&encode(self.words(*p))),
            }
        }
        out
    }

    /// The JSON a body template stands for this turn.
    pub fn json(&self, template: &JsonTemplate) -> Json {
        match template {
            JsonTemplate::Literal(value) => value.clone(),
            JsonTemplate::Placeholder(p) => self.value(*p),
            JsonTemplate::Text(text) => Json::String(self.text(text)),
            JsonTemplate::Array(items) => Json::Array(items.iter().map(|i| self.json(i)).collect()),
            JsonTemplate::Object(entries) => Json::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), self.json(v)))
                    .collect(),
            ),
        }
    }

    pub fn body(&self, template: &BodyTemplate) -> Body {
        match template {
            BodyTemplate::Json(json) => Body {
                // Serializing a `serde_json::Value` cannot fail.
                bytes: serde_json::to_vec(&self.json(json)).unwrap_or_default(),
                content_type: "application/json",
            },
            BodyTemplate::Text(text) => Body {
                bytes: self.text(text).into_bytes(),
                content_type: "text/plain; charset=utf-8",
            },
        }
    }
}

/// Every byte but RFC 3986's unreserved characters as `%XX`.
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn values<'a>(session: &'a Json, variables: &'a Map<String, Json>) -> TurnValues<'a> {
        TurnValues {
            text: "say \"hi\"\n{{turn}} & more",
            session,
            variables,
            turn: 2,
            conversation: "order",
            input: variables,
            messages: &[],
        }
    }

    #[test]
    fn whole_placeholders_keep_their_json_and_text_is_escaped() {
        let Json::Object(variables) = json!({ "tier": "gold" }) else {
            unreachable!()
        };
        let session = Json::Null;
        let values = values(&session, &variables);
        let template = JsonTemplate::of_json(&json!({
            "message": "{{text}}",
            "turn": "{{turn}}",
            "vars": "{{variables}}",
            "label": "turn {{turn}} of {{conversation}}{{session}}",
            "fixed": [1, true],
        }))
        .unwrap();
        let body = values.body(&BodyTemplate::Json(template));
        let sent: Json = serde_json::from_slice(&body.bytes).unwrap();
        assert_eq!(
            sent,
            json!({
                "message": "say \"hi\"\n{{turn}} & more",
                "turn": 2,
                "vars": { "tier": "gold" },
                "label": "turn 2 of order",
                "fixed": [1, true],
            })
        );
        assert_eq!(body.content_type, "application/json");
    }

    #[test]
    fn the_turns_event_variables_and_tool_responses_are_placeholders_of_their_own() {
        let Json::Object(input) = json!({
            "event": "welcome",
            "variables": { "tier": "gold" },
            "tool_responses": [{ "name": "lookup", "response": { "ok": true } }],
        }) else {
            unreachable!()
        };
        let (session, none) = (Json::Null, Map::new());
        let turn = TurnValues {
            input: &input,
            ..values(&session, &none)
        };
        assert_eq!(turn.value(Placeholder::Event), json!("welcome"));
        assert_eq!(
            turn.value(Placeholder::TurnVariables),
            json!({ "tier": "gold" })
        );
        assert_eq!(
            turn.value(Placeholder::ToolResponses),
            json!([{ "name": "lookup", "response": { "ok": true } }])
        );
        assert_eq!(turn.value(Placeholder::TextOrIntent), json!("/welcome"));
        // A turn that sends no event: null as a value, nothing among text.
        let silent = values(&session, &none);
        assert_eq!(silent.value(Placeholder::Event), Json::Null);
        assert_eq!(
            silent.value(Placeholder::TextOrIntent),
            json!("say \"hi\"\n{{turn}} & more")
        );
        let label = TextTemplate::compile("event={{event}}").unwrap();
        assert_eq!(silent.text(&label), "event=");
    }

    #[test]
    fn url_values_are_percent_encoded() {
        let session = json!("s/1");
        let variables = Map::new();
        let values = values(&session, &variables);
        let url = TextTemplate::compile("http://h/s/{{session}}?q={{text}}").unwrap();
        assert_eq!(
            values.url(&url),
            "http://h/s/s%2F1?q=say%20%22hi%22%0A%7B%7Bturn%7D%7D%20%26%20more"
        );
    }
}
