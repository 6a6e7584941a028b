//! The tree builder against serde-saphyr, the parser goldgate read YAML with before: the same
//! documents accepted, the same trees, positions included, under every schema.

use super::*;
use crate::yaml::saphyr;

const SCHEMAS: [Schema; 4] = [
    Schema::Goldgate,
    Schema::PyYaml,
    Schema::JsYaml,
    Schema::YamlCore,
];

fn build(text: &str, schema: Schema) -> Result<Node, ParseError> {
    parse(text, schema, None).map(|(root, _)| root)
}

/// serde-saphyr's answer, on a thread whose stack fits its recursion.
fn reference(text: &str, schema: Schema) -> Result<Node, ParseError> {
    saphyr::parse(text, schema)
}

/// Does serde-saphyr read `text` as `schema`'s loader does? Not PyYAML's block scalar cut off by
/// the end of the file, which ends without a line feed there (see
/// `a_block_scalar_at_the_end_of_the_file_ends_as_each_loader_ends_it`).
fn comparable(text: &str, schema: Schema) -> bool {
    schema != Schema::PyYaml || text.ends_with(['\n', '\r'])
}

/// Asserts that `text` builds into serde-saphyr's tree, positions included, under every schema.
#[track_caller]
fn assert_built_as_serde_saphyr_builds(text: &str) {
    for schema in SCHEMAS
        .into_iter()
        .filter(|&schema| comparable(text, schema))
    {
        let built = build(text, schema).unwrap_or_else(|e| panic!("{e}: {text:?} ({schema:?})"));
        let reference = reference(text, schema).unwrap_or_else(|e| panic!("{e}: {text:?}"));
        // Debug output tells -0.0 from 0.0.
        assert_eq!(
            format!("{built:?}"),
            format!("{reference:?}"),
            "{text:?} ({schema:?})"
        );
    }
}

/// Asserts that `text` is refused, as serde-saphyr refuses it, at the same line.
#[track_caller]
fn assert_refused_as_serde_saphyr_refuses(text: &str) -> ParseError {
    let reference =
        reference(text, Schema::Goldgate).expect_err(&format!("serde-saphyr accepts {text:?}"));
    let err = build(text, Schema::Goldgate).expect_err(&format!("built {text:?}"));
    assert_eq!(
        (err.line, err.code),
        (reference.line, reference.code),
        "{text:?}: {err} against {reference}"
    );
    err
}

#[test]
fn builds_what_serde_saphyr_builds() {
    let documents = [
        "a: 1\nb:\n  - x\n  - {c: null, d: ~, e: }\n",
        // The core schema with YAML 1.1 booleans; quoted and block scalars stay strings.
        "[true, yes, N, off, 0x1F, -0o17, 0b101, 1_000, +5, -0, 010, 1.5e3, .5, -0.0, inf, nan]",
        "[9223372036854775807, 9223372036854775808, -9223372036854775809, 0x1_F, 1__0, 0x]",
        "['1', \"true\", '', \"\\u00e9\\n\", ~, null, NULL, nULL, y, Yes please, 1 2, 1.2.3]",
        "text: first\n  second\n\n  third\nlit: |\n  l1\n  l2\nfold: >-\n  f1\n  f2\n",
        // Explicit keys, integer and quoted keys, markers, comments, CRLF, BOM, wide columns.
        "? a\n: 1\n10: x\n'<<': y\n\"\": z\n",
        "--- # top\nété: [日本, {k: v}]  # trailing\n...\n",
        "\u{FEFF}a: 1\r\nb: [x,\r\n  y]\r\n",
        "- - - deep\n  - {a: [1, {b: [2]}]}\n",
        "--- |\n  only a scalar\n",
        "---\n",
        // Anchors and aliases: a copy where the alias is written.
        "a: &x 1\nb: *x\n",
        "a: &x [1, {c: 2}]\nb: *x\n",
        "- &a a\n- &a b\n- *a\n",
        "a: &x\nb: *x\n",
        "a: &x !!str 1\nb: *x\n",
        // An alias as a key names it by the scalar as written.
        "a: &x 1\n*x : 2\n",
        "a: &x 0x1\nb: {*x : 2}\n",
        "a: &t yes\nb: {*t : 1}\n",
        "&k a: 1\nb: {*k : 2}\n",
        // Merge keys: the mapping's own entries first and winning, then the merged ones.
        "b: &b {x: 1, y: 2}\nu:\n  z: 0\n  <<: *b\n  y: 3\n",
        "b: &b {x: 1}\nc: &c {x: 2, w: 1}\nu:\n  <<: [*b, *c]\n",
        "u:\n  <<: {x: 1}\n  x: 2\n",
        "u:\n  x: 1\n  <<: {x: 2}\n  <<: {y: 3}\n",
        "u:\n  <<: {x: 1, y: [2]}\n  z: 3\n",
        // `<<` with no value, or a null in its list, merges nothing.
        "u:\n  <<: [~, {a: 1}]\n",
        "?\t2024-01-01&a<<<<\t?<<-é\n<<: ",
        // Tags: YAML's own types and the non-specific `!`.
        "[!!str 1, !!int '12', !!float 1, !!bool yes, !!null '', ! 12, !!binary aGVsbG8=]",
        "a: !<tag:yaml.org,2002:str> 5\nb: !!map {c: 1}\nd: !!seq [1]\n",
        "'~': 1\nyes: a\ntrue: b\n1.0: c\n1: d\n",
    ];
    for text in documents {
        assert_built_as_serde_saphyr_builds(text);
    }
}

#[test]
fn refuses_what_serde_saphyr_refuses() {
    let documents = [
        "a: *x\n",
        "u:\n  <<: 1\n",
        "u:\n  <<: [1]\n",
        "a: !!str [1]\n",
        "a: !!seq {b: 1}\n",
        "a: !!int x\n",
        "a: !!timestamp 2001-12-14\n",
        "~: 1\n",
        "null: 1\n",
        "[k]: v\n",
        "{k: 1}: v\n",
        "? [a]\n: 1\n",
        "a: .inf\n",
        "a: 1e999\n",
        "a: 1\n---\nb: 2\n",
        "a: [1, 2\n",
        "a: 'x\n",
    ];
    for text in documents {
        assert_refused_as_serde_saphyr_refuses(text);
    }
}

/// A tag goldgate gives no meaning is refused, naming it, where serde-saphyr read the value as
/// if untagged: `!include other.yaml` would have been the text `other.yaml`.
#[test]
fn a_tag_without_a_meaning_is_refused_naming_it() {
    for (text, tag) in [
        ("a: !include other.yaml\n", "!include"),
        ("a: !Ref {b: 1}\n", "!Ref"),
        ("!foo a: 1\n", "!foo"),
        ("a: !!omap [{b: 1}]\n", "!!omap"),
        (
            "%TAG !e! tag:example.com,2000:\n---\na: !e!thing 1\n",
            "!e!thing",
        ),
    ] {
        let err = build(text, Schema::Goldgate).unwrap_err();
        assert!(
            err.message
                .starts_with(&format!("goldgate reads no tag `{tag}`")),
            "{text:?}: {err}"
        );
    }
    let err = build("a: !!timestamp 2001-12-14\n", Schema::PyYaml).unwrap_err();
    assert!(
        err.message.starts_with("goldgate keeps dates as text"),
        "{err}"
    );
}

#[test]
fn a_repeated_key_is_e005_at_its_second_place_naming_the_first() {
    for text in [
        "a: 1\nb: 2\na: 3\n",
        "1: a\n0x1: b\n",
        "'a': 1\nb: 2\na: 3\n",
    ] {
        let err = assert_refused_as_serde_saphyr_refuses(text);
        assert_eq!(err.code, Code::E005, "{text:?}");
    }
    let err = build("a: 1\nb: 2\na: 3\n", Schema::Goldgate).unwrap_err();
    assert_eq!(
        (err.line, err.column, err.message.as_str()),
        (
            3,
            1,
            "duplicate mapping key `a` at line 3, column 1 (first at line 1)"
        )
    );
    // A merged key does not repeat one of the mapping's own.
    assert_built_as_serde_saphyr_builds("u:\n  a: 1\n  <<: {a: 2}\n");
}

#[test]
fn nesting_stops_at_serde_saphyrs_depth_limit() {
    let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    assert_built_as_serde_saphyr_builds(&nested(MAX_DEPTH));
    let err = assert_refused_as_serde_saphyr_refuses(&nested(MAX_DEPTH + 1));
    assert!(
        err.message.starts_with("nested deeper than 64 levels"),
        "{err}"
    );
    // An alias cannot nest a copy past it either.
    let deep = format!("a: &d {}\nb: [*d]\n", nested(MAX_DEPTH - 1));
    let err = build(&deep, Schema::Goldgate).unwrap_err();
    assert_eq!(
        (err.line, err.message.as_str()),
        (2, "nested deeper than 64 levels at line 2, column 5")
    );
}

/// Found by tests/it/lint_mutants.rs: a flow mapping nested past the limit overflowed the stack
/// of a 2 MiB thread in a debug build before it was reported. Windows gives its main thread
/// 1 MiB; the builder does not recurse.
#[test]
fn nesting_past_the_limit_is_an_error_on_a_small_stack() {
    let text = format!(
        "id: x\nwhen: {}1{}\n",
        "{a: ".repeat(10_000),
        "}".repeat(10_000)
    );
    let err = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || build(&text, Schema::Goldgate).unwrap_err())
        .unwrap()
        .join()
        .unwrap();
    assert_eq!((err.code, err.line), (Code::E001, 2));
    assert!(
        err.message.starts_with("nested deeper than 64 levels"),
        "{err}"
    );
}

#[test]
fn aliases_replaying_past_the_limits_are_refused_where_the_alias_is() {
    // Nine levels of nine aliases: 9^9 replays of the first list.
    let mut bomb = String::from("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
    for pair in names.windows(2) {
        let replays = vec![format!("*{}", pair[0]); 9].join(", ");
        bomb.push_str(&format!("{}: &{} [{replays}]\n", pair[1], pair[1]));
    }
    let err = build(&bomb, Schema::Goldgate).unwrap_err();
    assert!(
        err.message
            .contains("anchors and aliases expand to more than"),
        "{err}"
    );
    // A large text replayed: stopped at the text limit, on the alias that passes it.
    let text = "x".repeat(1 << 20);
    let replays = vec!["*t"; 70].join(", ");
    let err = build(
        &format!("a: &t \"{text}\"\nb: [{replays}]\n"),
        Schema::Goldgate,
    )
    .unwrap_err();
    assert_eq!(err.line, 2);
    assert_eq!(
        err.message,
        "its text, aliases expanded, is more than 64 MiB at line 2, column 253"
    );
}

#[test]
fn an_alias_inside_its_own_anchor_is_refused() {
    let err = build("a: &a [1, *a]\n", Schema::Goldgate).unwrap_err();
    assert_eq!(err.code, Code::E001);
}

/// Random snippets of YAML syntax: the builder and serde-saphyr accept the same documents and
/// build the same trees, and refuse the same ones.
#[test]
fn random_documents_agree_with_serde_saphyr() {
    const PIECES: &[&str] = &[
        "a",
        "b",
        "1",
        "0",
        "x",
        ".",
        "e",
        "-",
        "+",
        ":",
        " ",
        "  ",
        "\n",
        "\n",
        "\n  ",
        "[",
        "]",
        "{",
        "}",
        ",",
        "#",
        "\"",
        "'",
        "?",
        "&a",
        "*a",
        "&b ",
        "*b",
        "!",
        "!!str ",
        "!!int ",
        "!foo ",
        "|",
        ">",
        "%YAML 1.2",
        "---",
        "...",
        "~",
        "null",
        "yes",
        "_",
        "\t",
        "é",
        "\r\n",
        "<<",
        "<<: ",
        "\\",
        "N",
        "0o",
        "1:3",
        ".inf",
        "2024-01-01",
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        // xorshift64: deterministic, so a failure can be replayed.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let mut disagreements = Vec::new();
    for _ in 0..20_000 {
        let text: String = (0..1 + next(24))
            .map(|_| PIECES[next(PIECES.len())])
            .collect();
        if super::super::is_blank(&text) {
            continue;
        }
        let schema = SCHEMAS[next(SCHEMAS.len())];
        if !comparable(&text, schema) {
            continue;
        }
        // serde-saphyr reads a value under a tag without a meaning (`!foo N`) as if untagged,
        // by its own rules; the builder refuses the tag. Only YAML's own tags and `!` compare.
        let others = text.replace("!!str", "").replace("!!int", "");
        let other_tag = others
            .match_indices('!')
            .any(|(at, _)| others[at + 1..].starts_with(|c: char| !c.is_whitespace()));
        if other_tag {
            continue;
        }
        match (build(&text, schema), reference(&text, schema)) {
            (Ok(built), Ok(reference)) if format!("{built:?}") == format!("{reference:?}") => {}
            (Err(_), Err(_)) => {}
            (built, reference) => {
                disagreements.push(format!(
                    "{text:?} ({schema:?}): {built:?} against {reference:?}"
                ));
            }
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} disagreements, the first:\n{}",
        disagreements.len(),
        disagreements[..disagreements.len().min(10)].join("\n")
    );
}

/// A commented golden: however many comment lines stand between a key and its value, or
/// between the items of a list, the tree is the one of the text without them (the parser
/// buffered at most 32 comments while looking ahead, and refused the file past that).
#[test]
fn comments_between_a_key_and_its_value_are_skipped_however_many() {
    let comments = "    # a note\n".repeat(200);
    let text = format!("a:\n{comments}    hello\nb:\n{comments}  - first\n{comments}  - second\n");
    let root = build(&text, Schema::Goldgate).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(root.get("a").and_then(Node::as_str), Some("hello"));
    let Some(Value::Seq(items)) = root.get("b").map(|b| &b.value) else {
        panic!("b is not a list: {root:?}");
    };
    let items: Vec<_> = items.iter().filter_map(Node::as_str).collect();
    assert_eq!(items, ["first", "second"]);
}

/// A block scalar cut off by the end of the file, as each format's loader reads it: PyYAML
/// (SCRAPI) without a final line feed, js-yaml (Regtrace) and the `yaml` package (gecx) with one.
#[test]
fn a_block_scalar_at_the_end_of_the_file_ends_as_each_loader_ends_it() {
    for (text, pyyaml, others) in [
        ("a: |\n  text", "text", "text\n"),
        ("a: >\n  some\n  text", "some text", "some text\n"),
        ("a: |+\n  text", "text", "text\n"),
        ("a: |-\n  text", "text", "text"),
        ("a: |\n  text\n", "text\n", "text\n"),
    ] {
        for (schema, expected) in [
            (Schema::PyYaml, pyyaml),
            (Schema::JsYaml, others),
            (Schema::YamlCore, others),
        ] {
            let root = build(text, schema).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                root.get("a").and_then(Node::as_str),
                Some(expected),
                "{text:?} ({schema:?})"
            );
        }
    }
}

/// A text of more than 64 KiB is parsed on a thread of its own, ahead of the builder: the
/// same tree, the same error at the same place, and a builder that stops early stops it.
#[test]
fn a_long_text_parsed_ahead_builds_as_a_short_one() {
    let entry = |i: usize| {
        format!(
            "- name: case_{i}\n  turns: [{{user: hi {i}, agent: &a{i} hello}}]\n  again: *a{i}\n"
        )
    };
    let text: String = (0..1000).map(entry).collect();
    assert!(text.len() > 64 * 1024, "{}", text.len());
    assert_built_as_serde_saphyr_builds(&text);

    let err = build(&format!("{text}- name: [unclosed\n"), Schema::Goldgate).unwrap_err();
    assert_eq!((err.code, err.line), (Code::E001, 3001), "{err}");
    let err = build(&format!("{text}---\n- again\n"), Schema::Goldgate).unwrap_err();
    assert!(err.message.contains("a second YAML document"), "{err}");
    // Stopped at a limit long before the end: the parser's thread ends with the builder.
    let err = build(
        &format!("{}{text}", "[".repeat(MAX_DEPTH + 1)),
        Schema::Goldgate,
    )
    .unwrap_err();
    assert_eq!(err.line, 1, "{err}");
}
