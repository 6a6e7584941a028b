//! The `then` list of a gecx scenario: `{ scorer: NAME, args: {...} }` entries into typed
//! [`Scorer`]s, every argument checked when the file is loaded.
//!
//! Only the built-in scorers of the gecx docs exist here; a custom scorer registered in
//! TypeScript cannot run without a JavaScript runtime, so its name is reported as unknown (with a
//! "did you mean" for typos of the built-in names).

use std::time::Duration;

use regex::Regex;

use crate::config::llm::provider_at;
use crate::diagnostic::{Code, Diagnostics, suggestion};
use crate::model::{
    ArgsMatcher, CaseCheck, CheckKind, ExpectedToolCall, MatchType, Matcher, Provider, Scorer,
    ValueMatcher,
};
use crate::yaml::{Fields, Key, Node, Value, expect_text, indexed};

/// JavaScript regex flags and what each means for a Rust regex: an inline flag, or nothing
/// because it only changes how JavaScript iterates matches or parses escapes.
const JS_FLAGS: [(char, Option<char>); 6] = [
    ('i', Some('i')),
    ('m', Some('m')),
    ('s', Some('s')),
    ('u', None),
    ('g', None),
    ('y', None),
];

/// The `then` list: one check per entry that names a known scorer with valid arguments.
pub(super) fn load_checks(then: &Node, diags: &mut Diagnostics) -> Vec<CaseCheck> {
    let Some(items) = then.as_seq() else {
        then.wrong_type("a list of scorers", diags)
            .field("then")
            .hint("write `then:` then `- scorer: no-error` items");
        return Vec::new();
    };
    indexed(items, "then")
        .filter_map(|(path, item)| {
            let scorer = load_entry(item, &path, diags)?;
            Some(CaseCheck {
                location: diags.location(item.line, item.column),
                label: name(&scorer).to_owned(),
                kind: CheckKind::Scorer(scorer),
            })
        })
        .collect()
}

/// One `{ scorer, args }` entry.
fn load_entry(item: &Node, path: &str, diags: &mut Diagnostics) -> Option<Scorer> {
    if let Some(name) = item.as_str() {
        diags
            .at(item)
            .error(Code::G101, "expected a scorer mapping, found a string")
            .field(path)
            .hint(format!("write `- scorer: {name}`"));
        return None;
    }
    let mut fields = Fields::of(item, path, diags)?;
    let name_node = fields.require("scorer", "a scorer name", diags);
    let args_node = fields.take("args");
    let name_path = fields.path_of("scorer");
    fields.finish(diags);
    let node = name_node?;
    let name = expect_text(node, &name_path, diags)?;
    if !NAMES.contains(&name.as_str()) {
        diags
            .at(node)
            .error(Code::G107, format!("unknown scorer `{name}`"))
            .field(name_path)
            .hint(suggestion(&name, &NAMES));
        return None;
    }

    // A missing or null `args` is an empty mapping placed at the entry, so that a missing
    // required argument is reported there.
    let empty;
    let args_node = match args_node {
        Some(node) if !node.is_null() => node,
        other => {
            let at = other.unwrap_or(item);
            empty = Node {
                value: Value::Map(Vec::new()),
                line: at.line,
                column: at.column,
            };
            &empty
        }
    };
    let mut args = Args {
        fields: Fields::of(args_node, &format!("{path}.args"), diags)?,
    };
    let scorer = build(&name, &mut args, diags);
    args.finish(&name, diags);
    scorer
}

/// The scorer called `name` (one of [`NAMES`]) from its arguments. Every argument is
/// read before any is found missing, so that all problems are reported.
fn build(name: &str, args: &mut Args<'_>, diags: &mut Diagnostics) -> Option<Scorer> {
    Some(match name {
        "message-contains" => Scorer::MessageContains {
            pattern: args.text("pattern", diags)?,
        },
        "message-matches-regex" => Scorer::MessageMatchesRegex {
            regex: args.regex(diags)?,
        },
        "final-message-equals" => Scorer::FinalMessageEquals {
            pattern: args.text("pattern", diags)?,
        },
        "tool-called" => Scorer::ToolCalled {
            name: args.text("name", diags)?,
        },
        "tool-called-with-input" => {
            let tool = args.text("name", diags);
            let input = args.required("input", "a mapping of expected input keys", diags);
            let input = input.and_then(|node| args_matcher(node, &args.path_of("input"), diags));
            Scorer::ToolCalledWithInput {
                name: tool?,
                input: input?,
            }
        }
        "no-tool-called" => Scorer::NoToolCalled {
            name: args.optional_text("name", diags),
        },
        "tool-call-accuracy" => {
            let node =
                args.required("expected", "a list of tool names or `{name, input}`", diags)?;
            Scorer::ToolCallAccuracy {
                expected: expected_calls(node, &args.path_of("expected"), diags)?,
            }
        }
        "handoff-triggered" => Scorer::HandoffTriggered,
        "no-handoff" => Scorer::NoHandoff,
        "error-code" => Scorer::ErrorCode {
            code: args.text("code", diags)?,
        },
        "no-error" => Scorer::NoError,
        "latency-p50-under" => Scorer::LatencyP50Under {
            limit: args.millis(diags)?,
        },
        "latency-p95-under" => Scorer::LatencyP95Under {
            limit: args.millis(diags)?,
        },
        "llm-judge-not-hallucinating" => {
            let (grounding_context, provider) = args.judged_text("groundingContext", diags)?;
            Scorer::JudgeNotHallucinating {
                grounding_context,
                provider,
            }
        }
        "llm-judge-helpfulness" => {
            let criteria = args.optional_text("criteria", diags);
            Scorer::JudgeHelpfulness {
                criteria,
                provider: args.provider(diags)?,
            }
        }
        "llm-judge-tone-matches" => {
            let (tone, provider) = args.judged_text("tone", diags)?;
            Scorer::JudgeToneMatches { tone, provider }
        }
        // `load_entry` only calls this with a name from `NAMES`.
        _ => return None,
    })
}

/// The `args` of one scorer: the keys it did not ask for are reported as unknown, with a "did
/// you mean" among the ones it asked for.
struct Args<'a> {
    fields: Fields<'a>,
}

impl<'a> Args<'a> {
    fn path_of(&self, key: &str) -> String {
        self.fields.path_of(key)
    }

    fn optional(&mut self, key: &'static str) -> Option<&'a Node> {
        self.fields.take(key)
    }

    fn required(
        &mut self,
        key: &'static str,
        expected: &str,
        diags: &mut Diagnostics,
    ) -> Option<&'a Node> {
        self.fields.require(key, expected, diags)
    }

    fn text(&mut self, key: &'static str, diags: &mut Diagnostics) -> Option<String> {
        self.fields.required_string(key, diags)
    }

    fn optional_text(&mut self, key: &'static str, diags: &mut Diagnostics) -> Option<String> {
        self.fields.string(key, diags)
    }

    /// `pattern` and its JavaScript `flags`, compiled into one regex.
    fn regex(&mut self, diags: &mut Diagnostics) -> Option<Regex> {
        let node = self.required("pattern", "a string", diags);
        let path = self.path_of("pattern");
        let pattern = node.and_then(|node| expect_text(node, &path, diags));
        let flags = match self.optional("flags") {
            Some(flags) => inline_flags(flags, &self.path_of("flags"), diags)?,
            None => String::new(),
        };
        let (node, pattern) = (node?, pattern?);
        let source = if flags.is_empty() {
            pattern
        } else {
            format!("(?{flags}){pattern}")
        };
        match Regex::new(&source) {
            Ok(regex) => Some(regex),
            Err(err) => {
                let hint = if matches!(err, regex::Error::CompiledTooBig(_)) {
                    "use fewer or smaller repetitions"
                } else {
                    "patterns use Rust regex syntax: no look-around or backreferences"
                };
                diags
                    .at(node)
                    .error(Code::G104, regex_problem(&err))
                    .field(path)
                    .hint(hint);
                None
            }
        }
    }

    /// `ms`: a non-negative number of milliseconds.
    fn millis(&mut self, diags: &mut Diagnostics) -> Option<Duration> {
        let node = self.required("ms", "a number of milliseconds", diags)?;
        let path = self.path_of("ms");
        let Some(ms) = node.as_f64() else {
            node.wrong_type("a number of milliseconds", diags)
                .field(path);
            return None;
        };
        let limit = Duration::try_from_secs_f64(ms / 1000.0).ok();
        if limit.is_none() {
            diags
                .at(node)
                .error(
                    Code::G111,
                    format!("`ms` must be a non-negative finite number, found {ms}"),
                )
                .field(path);
        }
        limit
    }

    /// `provider`: `Some(None)` when absent (gecx then uses anthropic), `None` when invalid.
    fn provider(&mut self, diags: &mut Diagnostics) -> Option<Option<Provider>> {
        let Some(node) = self.optional("provider") else {
            return Some(None);
        };
        let path = self.path_of("provider");
        provider_at(node, &path, "judge", diags).map(Some)
    }

    /// A judge's required text `key` and its `provider`, both read (so both reported) before
    /// either fails.
    fn judged_text(
        &mut self,
        key: &'static str,
        diags: &mut Diagnostics,
    ) -> Option<(String, Option<Provider>)> {
        let text = self.text(key, diags);
        let provider = self.provider(diags);
        Some((text?, provider?))
    }

    /// Reports every key the scorer did not ask for.
    fn finish(self, scorer: &str, diags: &mut Diagnostics) {
        if !self.fields.known().is_empty() {
            self.fields.finish(diags);
            return;
        }
        for (key, _) in self.fields.node().as_map().unwrap_or_default() {
            key.unknown(diags)
                .field(self.fields.path_of(&key.name))
                .hint(format!("`{scorer}` takes no args"));
        }
    }
}

/// JavaScript `flags` as a Rust inline-flag group body (`"gi"` -> `"i"`).
fn inline_flags(node: &Node, path: &str, diags: &mut Diagnostics) -> Option<String> {
    let flags = expect_text(node, path, diags)?;
    let mut inline = String::new();
    let mut valid = true;
    for flag in flags.chars() {
        match JS_FLAGS.iter().find(|(js, _)| *js == flag) {
            Some((_, Some(rust))) if !inline.contains(*rust) => inline.push(*rust),
            Some(_) => {}
            None => {
                valid = false;
                diags
                    .at(node)
                    .error(Code::G107, format!("unknown regex flag `{flag}`"))
                    .field(path)
                    .hint("JavaScript flags: i, m, s (u, g and y are accepted and ignored)");
            }
        }
    }
    valid.then_some(inline)
}

/// A regex error on one line: the crate's message ends with `error: <what>` after a drawing of
/// the pattern, which would not fit a diagnostic line.
fn regex_problem(err: &regex::Error) -> String {
    let text = err.to_string();
    let what = text
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("error: "))
        .unwrap_or(&text);
    format!("invalid regex: {what}")
}

/// `input`: every key must match; a nested mapping matches key by key, any other value exactly.
fn args_matcher(node: &Node, path: &str, diags: &mut Diagnostics) -> Option<ArgsMatcher> {
    let Some(entries) = node.as_map() else {
        node.wrong_type("a mapping of input keys", diags)
            .field(path);
        return None;
    };
    Some(ArgsMatcher {
        fields: value_fields(entries),
    })
}

fn value_fields(entries: &[(Key, Node)]) -> Vec<(String, ValueMatcher)> {
    entries
        .iter()
        .map(|(key, value)| {
            let matcher = match value.as_map() {
                Some(nested) => ValueMatcher::Object(value_fields(nested)),
                None => ValueMatcher::Leaf(Matcher::new(MatchType::Exact, value.to_json())),
            };
            (key.name.clone(), matcher)
        })
        .collect()
}

/// `expected` of `tool-call-accuracy`: tool names, or `{name, input?}` mappings.
fn expected_calls(
    node: &Node,
    path: &str,
    diags: &mut Diagnostics,
) -> Option<Vec<ExpectedToolCall>> {
    let Some(items) = node.as_seq() else {
        node.wrong_type("a list of tool calls", diags).field(path);
        return None;
    };
    if items.is_empty() {
        diags
            .at(node)
            .error(
                Code::G111,
                "`expected` is empty, so there is no fraction to score",
            )
            .field(path)
            .hint("list at least one tool name");
        return None;
    }
    let calls: Vec<_> = indexed(items, path)
        .map(|(path, item)| expected_call(item, &path, diags))
        .collect();
    calls.into_iter().collect()
}

fn expected_call(item: &Node, path: &str, diags: &mut Diagnostics) -> Option<ExpectedToolCall> {
    if let Some(name) = item.as_str() {
        return Some(ExpectedToolCall {
            name: name.to_owned(),
            args: ArgsMatcher::default(),
            agent: None,
        });
    }
    if item.as_map().is_none() {
        diags
            .at(item)
            .error(
                Code::G101,
                format!(
                    "expected a tool name or `{{name, input}}`, found {}",
                    item.kind()
                ),
            )
            .field(path);
        return None;
    }
    let mut fields = Fields::of(item, path, diags)?;
    let name = fields.required_string("name", diags);
    let input = fields
        .take("input")
        .map(|node| (node, fields.path_of("input")));
    fields.finish(diags);
    let args = match input {
        Some((node, path)) => args_matcher(node, &path, diags)?,
        None => ArgsMatcher::default(),
    };
    Some(ExpectedToolCall {
        name: name?,
        args,
        agent: None,
    })
}

/// Every scorer name gecx knows, in the seed's order.
pub const NAMES: [&str; 16] = [
    "message-contains",
    "message-matches-regex",
    "final-message-equals",
    "tool-called",
    "tool-called-with-input",
    "no-tool-called",
    "tool-call-accuracy",
    "handoff-triggered",
    "no-handoff",
    "error-code",
    "no-error",
    "latency-p50-under",
    "latency-p95-under",
    "llm-judge-not-hallucinating",
    "llm-judge-helpfulness",
    "llm-judge-tone-matches",
];

/// The gecx name of `scorer`.
pub fn name(scorer: &Scorer) -> &'static str {
    let index = match scorer {
        Scorer::MessageContains { .. } => 0,
        Scorer::MessageMatchesRegex { .. } => 1,
        Scorer::FinalMessageEquals { .. } => 2,
        Scorer::ToolCalled { .. } => 3,
        Scorer::ToolCalledWithInput { .. } => 4,
        Scorer::NoToolCalled { .. } => 5,
        Scorer::ToolCallAccuracy { .. } => 6,
        Scorer::HandoffTriggered => 7,
        Scorer::NoHandoff => 8,
        Scorer::ErrorCode { .. } => 9,
        Scorer::NoError => 10,
        Scorer::LatencyP50Under { .. } => 11,
        Scorer::LatencyP95Under { .. } => 12,
        Scorer::JudgeNotHallucinating { .. } => 13,
        Scorer::JudgeHelpfulness { .. } => 14,
        Scorer::JudgeToneMatches { .. } => 15,
    };
    NAMES[index]
}
