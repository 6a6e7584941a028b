//! Placeholders, and the text and JSON templates made of them: compiled when goldgate.yaml
//! loads, rendered by the agent each turn.

use serde_json::Value as Json;

use crate::diagnostic::suggestion;

/// What a template can say about the turn, written `{{name}}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placeholder {
    /// The user's text (empty when the turn sends none).
    Text,
    /// The server's session id once `response.session` found one, else goldgate's own.
    Session,
    /// The session parameters and every `variables` input so far, as a JSON object.
    Variables,
    /// The 1-based turn number.
    Turn,
    /// The case id.
    Conversation,
    /// The turn's whole input object, as the turn protocol sends it.
    Input,
    /// The name of the event the turn sends (SCRAPI's `event: welcome`), or null.
    Event,
    /// The turn's own `variables` input as a JSON object, or null when it sends none.
    TurnVariables,
    /// The turn's tool responses, a list of `{name, response}`, or null when it sends none.
    ToolResponses,
    /// The conversation so far as chat messages (`{role, content}`), this turn's user text
    /// (or `<event>NAME</event>`) last: for APIs that keep no state between requests.
    Messages,
    /// `/NAME` for a turn that sends an event, else the user's text: how an NLU server such as
    /// Rasa is told an intent directly, with no text to parse.
    TextOrIntent,
}

impl Placeholder {
    pub const ALL: [Placeholder; 11] = [
        Placeholder::Text,
        Placeholder::Session,
        Placeholder::Variables,
        Placeholder::Turn,
        Placeholder::Conversation,
        Placeholder::Input,
        Placeholder::Event,
        Placeholder::TurnVariables,
        Placeholder::ToolResponses,
        Placeholder::Messages,
        Placeholder::TextOrIntent,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Placeholder::Text => "text",
            Placeholder::Session => "session",
            Placeholder::Variables => "variables",
            Placeholder::Turn => "turn",
            Placeholder::Conversation => "conversation",
            Placeholder::Input => "input",
            Placeholder::Event => "event",
            Placeholder::TurnVariables => "turn_variables",
            Placeholder::ToolResponses => "tool_responses",
            Placeholder::Messages => "messages",
            Placeholder::TextOrIntent => "text_or_intent",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// A piece of a text template.
#[derive(Clone, Debug, PartialEq)]
pub enum Piece {
    Literal(String),
    Placeholder(Placeholder),
}

/// Text with placeholders: a URL, a header value, a string in the body.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TextTemplate {
    pub pieces: Vec<Piece>,
}

/// Why a text template does not compile.
#[derive(Clone, Debug, PartialEq)]
pub enum TemplateError {
    /// `{{name}}` with a name no placeholder has.
    Unknown(String),
    /// `{{` with no `}}` after it.
    Unterminated,
}

impl TemplateError {
    /// The message and the hint of the diagnostic.
    pub fn explain(&self) -> (String, String) {
        let names: Vec<&str> = Placeholder::ALL.iter().map(|p| p.name()).collect();
        match self {
            TemplateError::Unknown(name) => (
                format!("unknown placeholder `{{{{{name}}}}}`"),
                suggestion(name, &names),
            ),
            TemplateError::Unterminated => (
                "`{{` opens a placeholder that is never closed with `}}`".to_owned(),
                format!(
                    "write e.g. `{{{{text}}}}`; placeholders: {}",
                    names.join(", ")
                ),
            ),
        }
    }
}

impl std::fmt::Display for TemplateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (message, hint) = self.explain();
        write!(f, "{message} ({hint})")
    }
}

impl TextTemplate {
    /// Compiles `{{name}}` placeholders (spaces inside the braces allowed).
    pub fn compile(text: &str) -> Result<Self, TemplateError> {
        let mut pieces = Vec::new();
        let mut rest = text;
        while let Some(start) = rest.find("{{") {
            if start > 0 {
                pieces.push(Piece::Literal(rest[..start].to_owned()));
            }
            let after = &rest[start + 2..];
            let end = after.find("}}").ok_or(TemplateError::Unterminated)?;
            let name = after[..end].trim();
            let placeholder =
                Placeholder::parse(name).ok_or_else(|| TemplateError::Unknown(name.to_owned()))?;
            pieces.push(Piece::Placeholder(placeholder));
            rest = &after[end + 2..];
        }
        if !rest.is_empty() {
            pieces.push(Piece::Literal(rest.to_owned()));
        }
        Ok(Self { pieces })
    }

    /// The one placeholder the text is made of, if it is exactly one.
    pub fn only_placeholder(&self) -> Option<Placeholder> {
        match self.pieces.as_slice() {
            [Piece::Placeholder(p)] => Some(*p),
            _ => None,
        }
    }

    pub fn has_placeholders(&self) -> bool {
        self.pieces
            .iter()
            .any(|p| matches!(p, Piece::Placeholder(_)))
    }
}

/// A JSON body with placeholders.
#[derive(Clone, Debug, PartialEq)]
pub enum JsonTemplate {
    /// Sent as written.
    Literal(Json),
    /// A string that is exactly one placeholder: its JSON value (a number, an object, ...).
    Placeholder(Placeholder),
    /// A string with placeholders among other text: a string.
    Text(TextTemplate),
    Array(Vec<JsonTemplate>),
    Object(Vec<(String, JsonTemplate)>),
}

impl JsonTemplate {
    /// A string of the template: a literal, one placeholder's value, or text.
    fn of_string(text: &str) -> Result<Self, TemplateError> {
        let template = TextTemplate::compile(text)?;
        Ok(if let Some(placeholder) = template.only_placeholder() {
            JsonTemplate::Placeholder(placeholder)
        } else if template.has_placeholders() {
            JsonTemplate::Text(template)
        } else {
            JsonTemplate::Literal(Json::String(text.to_owned()))
        })
    }

    /// A JSON value whose strings may hold placeholders.
    pub fn of_json(value: &Json) -> Result<Self, TemplateError> {
        Ok(match value {
            Json::String(text) => Self::of_string(text)?,
            Json::Array(items) => {
                JsonTemplate::Array(items.iter().map(Self::of_json).collect::<Result<_, _>>()?)
            }
            Json::Object(entries) => JsonTemplate::Object(
                entries
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), Self::of_json(v)?)))
                    .collect::<Result<_, _>>()?,
            ),
            other => JsonTemplate::Literal(other.clone()),
        })
    }
}

/// Stand-ins for placeholders while a JSON string template is parsed: characters of Unicode's
/// private use area, which no JSON body of a real API holds.
const OPEN: char = '\u{E000}';
const CLOSE: char = '\u{E001}';

/// Parses a JSON text whose placeholders may stand inside strings or as whole values
/// (`{"turn": {{turn}}}`): a placeholder outside a string becomes a string of it alone, which
/// [`JsonTemplate::of_json`] then reads as the placeholder's JSON value.
pub(super) fn json_text(text: &str) -> Result<Json, String> {
    if text.contains([OPEN, CLOSE]) {
        return Err("it holds characters of Unicode's private use area".to_owned());
    }
    let mut marked = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '{' && rest.starts_with("{{") {
            let end = rest.find("}}").ok_or("`{{` is never closed with `}}`")?;
            let inner = &rest[2..end];
            let quote = if in_string { "" } else { "\"" };
            marked.push_str(&format!("{quote}{OPEN}{inner}{CLOSE}{quote}"));
            rest = &rest[end + 2..];
            continue;
        }
        if in_string {
            match (escaped, c) {
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => escaped = false,
            }
        } else if c == '"' {
            in_string = true;
        }
        marked.push(c);
        rest = &rest[c.len_utf8()..];
    }
    let json: Json = serde_json::from_str(&marked).map_err(|e| e.to_string())?;
    Ok(unmark(json))
}

/// Puts the placeholders back as `{{name}}` in every string.
fn unmark(json: Json) -> Json {
    match json {
        Json::String(text) => Json::String(text.replace(OPEN, "{{").replace(CLOSE, "}}")),
        Json::Array(items) => Json::Array(items.into_iter().map(unmark).collect()),
        Json::Object(entries) => {
            Json::Object(entries.into_iter().map(|(k, v)| (k, unmark(v))).collect())
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_templates_compile_placeholders_with_spaces() {
        let t = TextTemplate::compile("a {{ text }}b{{turn}}").unwrap();
        assert_eq!(
            t.pieces,
            vec![
                Piece::Literal("a ".into()),
                Piece::Placeholder(Placeholder::Text),
                Piece::Literal("b".into()),
                Piece::Placeholder(Placeholder::Turn),
            ]
        );
        assert_eq!(
            TextTemplate::compile("{{txt}}"),
            Err(TemplateError::Unknown("txt".into()))
        );
        assert_eq!(
            TextTemplate::compile("{{text"),
            Err(TemplateError::Unterminated)
        );
        assert_eq!(
            TemplateError::Unknown("txt".into()).explain().1,
            "did you mean `text`?"
        );
    }

    #[test]
    fn a_json_string_body_takes_placeholders_in_strings_and_as_values() {
        let json =
            json_text(r#"{"q": "say \"{{text}}\"", "turn": {{turn}}, "v": [{{ variables }}]}"#)
                .unwrap();
        let template = JsonTemplate::of_json(&json).unwrap();
        let JsonTemplate::Object(entries) = template else {
            panic!("{template:?}")
        };
        assert!(matches!(entries[0].1, JsonTemplate::Text(_)));
        assert_eq!(entries[1].1, JsonTemplate::Placeholder(Placeholder::Turn));
        assert_eq!(
            entries[2].1,
            JsonTemplate::Array(vec![JsonTemplate::Placeholder(Placeholder::Variables)])
        );
        assert!(json_text(r#"{"q": {{text}"#).is_err());
    }
}
