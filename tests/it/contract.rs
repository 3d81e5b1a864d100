//! Property tests of the log contract over arbitrary bytes and arbitrary JSON, at random
//! budgets at or above the floor, held against the serde_json oracle and the plain reference.

use crate::common;

use crate::common::naive::{agrees, keeps_types};
use crate::common::{check_contract, lines, strict_parse};
use proptest::prelude::*;
use serde_json::Value;
use smart_tee::line::fields::FieldClasses;
use smart_tee::line::scan;
use smart_tee::reduce::{Failure, Reduced, Reducer};
use smart_tee::{EngineConfig, LineEngine};

fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| f.to_string()),
        Just("-0".to_string()),
        Just("1.0".to_string()),
        Just("1e400".to_string()),
        Just("-1.5E-400".to_string()),
        Just("123456789012345678901234567890".to_string()),
    ]
    .prop_map(|t| serde_json::from_str(&t).expect("number text"))
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,12}",
        "[\\PC\n\t\"\\\\]{0,40}",
        "[ -~\n\u{0}-\u{1f}é€😀]{0,300}",
        (1usize..4000).prop_map(|n| "line of text\n".repeat(n / 13 + 1)),
        (1usize..3000).prop_map(|n| "é😀\\\"\n\u{1}".repeat(n / 5 + 1)),
    ]
}

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 200, 12, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..40).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("type".to_string()),
                        Just("id".to_string()),
                        Just("content".to_string()),
                        Just("text".to_string()),
                        Just("tool_use_result".to_string()),
                        "[a-z_]{1,10}",
                    ],
                    inner
                ),
                0..12
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Budgets at or above the floor, small ones often.
fn budget() -> impl Strategy<Value = usize> {
    prop_oneof![128usize..400, 400usize..3000, 3000usize..30000, Just(0)]
}

/// Checks the contract and, line by line, that the cut keeps the input's structure and values.
fn check_json_line(line: &[u8], budget: usize) {
    let mut input = line.to_vec();
    input.push(b'\n');
    let log = check_contract(&input, budget);
    let out = lines(&log);
    assert_eq!(out.len(), 1);
    let orig = strict_parse(line).expect("input is JSON");
    let cut = strict_parse(out[0]).expect("output is JSON");
    if let Err(e) = agrees(&orig, &cut) {
        panic!(
            "{e}\n in: {}\nout: {}",
            String::from_utf8_lossy(line),
            String::from_utf8_lossy(out[0])
        );
    }
    if budget != 0 && line.len() > budget {
        // The compact form of a line that fits compacted is logged whole, compacted.
        let compact = serde_json::to_vec(&orig).expect("serialize");
        if compact.len() <= budget {
            assert_eq!(
                cut, orig,
                "a line whose compact form fits keeps every value"
            );
        }
    }
}

/// The input of fuzz finding `name`, kept byte for byte in `tests/data/fuzz-findings`.
fn fuzz_finding(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz-findings");
    std::fs::read(path.join(name)).expect("the fuzz finding ships with the tests")
}

/// The fuzz finding `reduce-leading-cr` (tests/data/fuzz-findings): a line of 102 `\r`, 78
/// digits `2` and 15 `\r`, read in pieces of 10 at budget 180, was logged with its leading `\r`s
/// by the whole-line path and without them by the reduction. The rule now: whitespace around a
/// line's JSON is not part of it, on both paths. Run exactly as the `reduce` fuzz target runs it.
/// `printf '{"a":\r1}\n'` was logged "byte for byte" with its raw CR: JSON whitespace (RFC 8259),
/// but Python's text mode and Node's `readline` split the line there. A line that fits is
/// logged without its raw CRs; a CR in a string (escaped), U+2028 and U+2029 stay.
#[test]
fn a_raw_cr_between_tokens_is_not_logged() {
    let input = "{\"a\":\r1,\r\"b\"\r:\r[\r2\r]}\r\n\r{\"c\":\"x\\r\u{2028}\u{2029}y\"}\r\n";
    let log = common::check_contract(input.as_bytes(), 5120);
    assert_eq!(
        String::from_utf8(log).unwrap(),
        "{\"a\":1,\"b\":[2]}\n{\"c\":\"x\\r\u{2028}\u{2029}y\"}\n"
    );
}

#[test]
fn fuzz_finding_reduce_leading_cr_logs_the_same_both_ways() {
    let data = fuzz_finding("reduce-leading-cr");
    let [piece, budget, line @ ..] = &data[..] else {
        panic!("finding too short");
    };
    let piece = usize::from(*piece % 64) + 1;
    let budget = 128 + usize::from(*budget) * 4;
    assert_eq!((piece, budget), (10, 180));
    let reduced = reduce(line, budget, piece)
        .expect("valid JSON reduces")
        .expect("not blank");
    let mut streamed = Vec::new();
    LineEngine::new(plain(budget)).process_reduced(reduced, &mut streamed);
    let mut whole = Vec::new();
    LineEngine::new(plain(budget)).process(line, &mut whole);
    assert_eq!(
        String::from_utf8_lossy(&streamed),
        String::from_utf8_lossy(&whole)
    );
    assert_eq!(whole, [&[b'2'; 78][..], b"\n"].concat());
}

/// The fuzz finding `reduce-string-head-meets-tail`: a 364-byte string, read whole in one piece
/// at budget 236 (`keep` 252), was marked as compacted by its first piece although its head in
/// the copy and its tail met; the reduced copy then held the string's middle twice (a debug
/// assertion caught it). Now such a string is kept whole, as when read a byte at a time.
#[test]
fn fuzz_finding_reduce_string_head_meets_tail_keeps_the_string_once() {
    let data = fuzz_finding("reduce-string-head-meets-tail");
    let [piece, budget, line @ ..] = &data[..] else {
        panic!("finding too short");
    };
    let budget = 128 + usize::from(*budget) * 4;
    assert_eq!(
        (*piece, budget),
        (255, 236),
        "the target reads a first byte of 192+ as whole"
    );
    let input: Value = serde_json::from_slice(line).unwrap();
    for chunk in [line.len(), 1, 64] {
        let reduced = reduce(line, budget, chunk).unwrap().unwrap();
        assert!(reduced.elided.is_empty(), "nothing is left out");
        let doc: Value = serde_json::from_slice(&reduced.doc).unwrap();
        assert_eq!(doc, input, "read in pieces of {chunk}");
        check_reduction_is_exact(line, budget, chunk);
    }
}

/// The fuzz finding `engine-line-spaces-around-a-number`: a valid line of spaces around `0`
/// is logged as `0` (the whitespace around a line's JSON is not part of it), within the budget
/// the finding's first two bytes choose.
#[test]
fn fuzz_finding_engine_line_spaces_around_a_number() {
    let data = fuzz_finding("engine-line-spaces-around-a-number");
    let budget = 128 + (u16::from_le_bytes([data[0], data[1]]) as usize % 4000);
    let line = &data[2..];
    let mut out = Vec::new();
    LineEngine::new(crate::common::config(budget)).process(line, &mut out);
    assert_eq!(out, b"0\n");
}

/// The fuzz finding `readers-summary-of-a-damaged-gzip`: a log that is a gzip stream cut short
/// (its first two bytes are the `readers` target's options). `--summary --format json` of it
/// writes no summary (none of the file could be read whole, and a summary of what was would
/// read as the whole run), exits 1 and names the file and the cause; the target expected a
/// summary and now expects the problem instead.
#[test]
fn fuzz_finding_readers_summary_of_a_damaged_gzip() {
    let data = fuzz_finding("readers-summary-of-a-damaged-gzip");
    let dir = common::tempdir("finding-damaged-gzip");
    let log = dir.join("a.log");
    std::fs::write(&log, &data[2..]).unwrap();
    let out = common::run_cmd(
        common::bin()
            .args(["--view", "--summary", "--format", "json"])
            .arg(&log),
        b"",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(out.stdout.is_empty());
    assert!(
        err.contains(&*log.to_string_lossy()) && err.contains("gzip stream is truncated"),
        "{err}"
    );
}

/// The fuzz finding `engine-line-crs-inside-an-array`: `[`, 42 raw `\r`, `]` at budget 128 was
/// logged `[]`, and the `engine_line` target expected it byte for byte. The rule is right (a
/// line that fits is logged without its raw CRs, `a_raw_cr_between_tokens_is_not_logged`); the
/// target expected too much, and now expects the line without its CRs.
#[test]
fn fuzz_finding_engine_line_crs_inside_an_array() {
    let data = fuzz_finding("engine-line-crs-inside-an-array");
    let budget = 128 + (u16::from_le_bytes([data[0], data[1]]) as usize % 4000);
    let line = &data[2..];
    assert_eq!(
        (budget, line.iter().filter(|&&b| b == b'\r').count()),
        (128, 42)
    );
    let mut out = Vec::new();
    LineEngine::new(crate::common::config(budget)).process(line, &mut out);
    assert_eq!(out, b"[]\n");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: common::cases(384), ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_honour_the_contract(input in prop::collection::vec(any::<u8>(), 0..3000), budget in budget()) {
        check_contract(&input, budget);
    }

    #[test]
    fn json_ish_bytes_honour_the_contract(
        input in "[\\[\\]{}\",:0-9a-z\\\\\n\r \u{feff}é]{0,400}",
        budget in budget(),
    ) {
        check_contract(input.as_bytes(), budget);
    }

    #[test]
    fn compact_json_is_cut_faithfully(v in json(), budget in budget()) {
        check_json_line(&serde_json::to_vec(&v).unwrap(), budget);
    }

    #[test]
    fn one_line_pretty_json_is_cut_faithfully(v in json(), budget in budget()) {
        let pretty = serde_json::to_string_pretty(&v).unwrap().replace('\n', " ");
        check_json_line(pretty.as_bytes(), budget);
    }

    #[test]
    fn streams_of_json_lines_honour_the_contract(
        vs in prop::collection::vec(json(), 1..6),
        budget in budget(),
        crlf in any::<bool>(),
        final_newline in any::<bool>(),
    ) {
        let mut input = Vec::new();
        for v in &vs {
            input.extend(serde_json::to_vec(v).unwrap());
            input.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
            input.extend_from_slice(b"  \n");
        }
        if !final_newline {
            input.truncate(input.len() - if crlf { 5 } else { 4 });
        }
        let log = check_contract(&input, budget);
        assert_eq!(lines(&log).len(), vs.len());
    }
}

/// Reduces `line` the way a line past the memory cap is reduced, fed in `chunk`-byte pieces.
/// Arrays of records (objects of the same keys, some nested) as agents write them: todos,
/// edits, permission denials, content blocks.
fn records() -> impl Strategy<Value = Value> {
    let record = (text(), text(), any::<u32>(), any::<bool>(), json()).prop_map(|(a, b, n, f, v)| {
        serde_json::json!({"content": a, "status": b, "n": n, "done": f, "input": {"v": v, "tokens": n}})
    });
    let block = (text(), "[a-z]{1,8}").prop_map(|(t, id)| {
        serde_json::json!({"type": "tool_use", "id": id, "name": "Edit", "input": {"old_string": t, "new_string": "x"}})
    });
    (
        prop::collection::vec(record, 1..30),
        prop::collection::vec(block, 1..10),
        json(),
    )
        .prop_map(|(todos, content, extra)| {
            serde_json::json!({
                "type": "assistant",
                "message": {"id": "msg_1", "content": content,
                    "usage": {"input_tokens": 3, "output_tokens": 7,
                        "server_tool_use": {"web_search_requests": 0},
                        "cache_creation": {"ephemeral_5m_input_tokens": 12}}},
                "input": {"todos": todos},
                "extra": extra,
            })
        })
}

/// Checks that the cut of `line` at `budget` keeps every value's type and every usage number.
fn check_types(line: &[u8], budget: usize) {
    let mut input = line.to_vec();
    input.push(b'\n');
    let log = check_contract(&input, budget);
    let out = lines(&log);
    let orig = strict_parse(line).expect("input is JSON");
    let cut = strict_parse(out[0]).expect("output is JSON");
    if let Err(e) = keeps_types(&orig, &cut) {
        panic!(
            "{e}\n in: {}\nout: {}",
            String::from_utf8_lossy(line),
            String::from_utf8_lossy(out[0])
        );
    }
    if let Some(usage) = orig.pointer("/message/usage") {
        assert_eq!(
            cut.pointer("/message/usage"),
            Some(usage),
            "usage kept whole"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: common::cases(64), ..ProptestConfig::default() })]

    /// #30: from a budget of 1024 up, an object stays an object and an array an array.
    #[test]
    fn values_keep_their_type_from_1024_up(v in json(), budget in 1024usize..8192) {
        check_types(&serde_json::to_vec(&v).unwrap(), budget);
    }

    /// #30: arrays of records keep records (the marker element too), usage stays whole.
    #[test]
    fn records_keep_their_type_and_usage_from_1024_up(v in records(), budget in 1024usize..8192) {
        check_types(&serde_json::to_vec(&v).unwrap(), budget);
    }
}

fn reduce(line: &[u8], budget: usize, chunk: usize) -> Result<Option<Reduced>, Failure> {
    let mut r = Reducer::for_budget(budget);
    for piece in line.chunks(chunk.max(1)) {
        r.feed(piece);
    }
    r.finish()
}

/// `--plain`: no base64 detection, whose sampling sees only what a reduction kept.
fn plain(budget: usize) -> EngineConfig {
    EngineConfig {
        max_line_bytes: budget,
        value_aware: false,
        fields: FieldClasses::defaults().without_duplicates(),
        ..EngineConfig::default()
    }
}

/// A line reduced while read is logged exactly as the whole line would be, as long as its
/// arrays and objects are small enough to be kept whole by the reduction.
fn check_reduction_is_exact(line: &[u8], budget: usize, chunk: usize) {
    let mut whole = Vec::new();
    LineEngine::new(plain(budget)).process(line, &mut whole);
    let reduced = reduce(line, budget, chunk)
        .expect("valid JSON reduces")
        .expect("not blank");
    let mut streamed = Vec::new();
    LineEngine::new(plain(budget)).process_reduced(reduced, &mut streamed);
    crate::common::assert_no_panic_in_process();
    assert!(
        whole == streamed,
        "\n whole: {}\nreduced: {}",
        String::from_utf8_lossy(&whole),
        String::from_utf8_lossy(&streamed)
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: common::cases(384), ..ProptestConfig::default() })]

    #[test]
    fn reduction_validates_like_the_scanner(
        input in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..600),
            "[\\[\\]{}\",:0-9a-z\\\\\r \u{feff}é\u{1}]{0,400}".prop_map(String::into_bytes),
            json().prop_map(|v| serde_json::to_vec(&v).unwrap()),
        ],
        chunk in prop_oneof![1usize..8, Just(4096)],
        cut in any::<prop::sample::Index>(),
    ) {
        // Also a valid line cut anywhere: unterminated strings, escapes and numbers.
        let mut input = input;
        if input.len() > 1 && cut.index(4) == 0 {
            input.truncate(cut.index(input.len()));
        }
        let json = input.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&input);
        let want = if json.iter().all(|b| b" \t\r\n".contains(b)) {
            "blank"
        } else if scan::is_valid(json, &mut Vec::new()) {
            "json"
        } else {
            "invalid"
        };
        let got = match reduce(&input, 200, chunk) {
            Ok(None) => "blank",
            Ok(Some(_)) => "json",
            Err(Failure::Invalid) => "invalid",
            Err(Failure::TooBig) => "too big",
        };
        prop_assert_eq!(got, want, "{}", common::show(&input));
    }

    #[test]
    fn reduced_lines_are_cut_as_if_read_whole(
        v in json(),
        budget in 128usize..3000,
        chunk in prop_oneof![1usize..16, Just(4096)],
        pretty in any::<bool>(),
        surrogates in any::<bool>(),
    ) {
        let mut text = if pretty {
            serde_json::to_string_pretty(&v).unwrap().replace('\n', " ")
        } else {
            serde_json::to_string(&v).unwrap()
        };
        if surrogates {
            text = text.replace('😀', "\\ud83d\\ude00");
        }
        if text.len() > budget {
            check_reduction_is_exact(text.as_bytes(), budget, chunk);
        }
    }
}

#[test]
fn long_strings_with_dense_escapes_reduce_exactly() {
    for unit in [
        "\\\\",
        "\\\"",
        "\\ud83d\\ude00",
        "é",
        "\\n",
        "a\\u00e9",
        "😀",
    ] {
        for budget in [128, 300, 5120] {
            let body = unit.repeat(40_000 / unit.len());
            let line = format!(r#"{{"type":"user","text":"{body}","id":"x"}}"#);
            for chunk in [1, 3, 7, 4096, 1 << 20] {
                check_reduction_is_exact(line.as_bytes(), budget, chunk);
            }
        }
    }
}

#[test]
fn reduced_arrays_and_objects_keep_their_ends_and_count_what_they_dropped() {
    use smart_tee::reduce::{ENDS, MEMBERS};
    let n = 10 * ENDS;
    let items: Vec<String> = (0..n).map(|i| format!(r#"{{"i":{i}}}"#)).collect();
    let keys: Vec<String> = (0..2 * MEMBERS).map(|i| format!(r#""k{i}":{i}"#)).collect();
    let line = format!(
        r#"{{"type":"user","items":[{}],"map":{{{}}},"uuid":"u-1"}}"#,
        items.join(","),
        keys.join(",")
    );
    for budget in [300, 5120, 100_000] {
        let reduced = reduce(line.as_bytes(), budget, 4096).unwrap().unwrap();
        assert!(reduced.doc.len() < line.len() / 2, "reduced");
        let mut out = Vec::new();
        LineEngine::new(EngineConfig {
            max_line_bytes: budget,
            ..EngineConfig::default()
        })
        .process_reduced(reduced, &mut out);
        assert!(out.len() <= budget + 1, "within the budget");
        let v = strict_parse(&out[..out.len() - 1]).unwrap();
        assert_eq!(
            (&v["type"], &v["uuid"]),
            (&Value::from("user"), &Value::from("u-1"))
        );
        let items = v["items"].as_array().unwrap();
        assert_eq!(items.first().unwrap()["i"], 0);
        assert_eq!(items.last().unwrap()["i"], n - 1);
        let marker = items
            .iter()
            .find_map(|x| x.get("_truncated").and_then(Value::as_str))
            .expect("a marker element, an object as the elements are");
        assert!(marker.contains(&n.to_string()), "{marker}");
        let map = v["map"].as_object().unwrap();
        let marker = map["_truncated"].as_str().unwrap();
        assert!(marker.contains(&(2 * MEMBERS).to_string()), "{marker}");
        assert_eq!(map["k0"], 0);
    }
}

#[test]
fn reduction_validates_tricky_lines_like_the_scanner() {
    let cases: &[&str] = &[
        r#""\ud83d\ude00""#,
        r#""\ud83d""#,
        r#""\ude00""#,
        r#""\ud83d\u0041""#,
        r#""\ud83dx""#,
        r#""\ud83d\n""#,
        r#""\u00e9\u12""#,
        r#""\x""#,
        "\"a\u{1}b\"",
        "\"a\tb\"",
        "-",
        "-0",
        "-01",
        "01",
        "1.",
        "1.e5",
        "1e",
        "1e+",
        "1E-7",
        "0.5e+10",
        "-0.0",
        "tru",
        "true",
        "truex",
        "nul",
        "null ",
        "[1,]",
        "[,1]",
        "{\"a\":1,}",
        "{\"a\"}",
        "{\"a\" : [ 1 , { } , [ ] ] }",
        "[]]",
        "{}}",
        "[1 2]",
        "\"\\\"\"",
        "1 2",
        "[\"a\":1]",
        "{1:2}",
        "\u{feff}{}",
        "{}\u{feff}",
        " \t\r ",
        "",
    ];
    for case in cases {
        let want = scan::is_valid(
            case.strip_prefix('\u{feff}').unwrap_or(case).as_bytes(),
            &mut Vec::new(),
        );
        for chunk in 1..=case.len().max(1) {
            let got = reduce(case.as_bytes(), 200, chunk);
            let blank = case.trim_matches(|c| " \t\r".contains(c)).is_empty();
            match got {
                Ok(Some(_)) => assert!(want, "{case:?} accepted in {chunk}-byte pieces"),
                Ok(None) => assert!(blank, "{case:?} taken for blank"),
                Err(_) => assert!(!want, "{case:?} rejected in {chunk}-byte pieces"),
            }
        }
    }
}

/// Values for `containers_reduce_like_the_scanner`: containers the reducer reads in one go,
/// ones with whitespace or escapes, and ones too big to read in one go (see also [`element`]).
const ELEMENTS: &[&str] = &[
    r#"{"type":"text","text":"an item","n":12345}"#,
    r#"{"a":[1,2,{"b":null}],"c":true}"#,
    r#"[]"#,
    r#"{}"#,
    r#"[[[[1]]]]"#,
    r#"{"a": 1}"#,
    r#"[1 ,2]"#,
    r#"{ "a" : [ 1 , { } , [ ] ] ,"b":{"c" :"d"} }"#,
    r#"{"s":"tab\tinside"}"#,
    r#"{"s":"quote \" and \\ and \u00e9 and \ud83d\ude00"}"#,
    r#"{"s":"é😀"}"#,
    r#"{"long":"0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"}"#,
    r#"{"longer":"0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"}"#,
];

/// Invalid containers, which the reducer must reject wherever they are.
const INVALID: &[&str] = &[
    r#"{"a":01}"#,
    r#"{"a":1,}"#,
    r#"{"a" 1}"#,
    r#"[1,2"#,
    r#"{]"#,
    r#"{"s":"\ud800"}"#,
    r#"{"s":"\x"}"#,
    r#"{"a":tru}"#,
    r#"[1,2]]"#,
];

/// `ELEMENTS[k]`, or for `k` past its end an array of many numbers (more values than a
/// container read in one go may have, and than the reduction keeps of an array).
fn element(k: usize) -> String {
    match ELEMENTS.get(k) {
        Some(e) => e.to_string(),
        None => format!(
            "[{}]",
            vec!["7"; [100, 260, 400][k - ELEMENTS.len()]].join(",")
        ),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: common::cases(256), ..ProptestConfig::default() })]

    /// The reducer reads containers whole in a piece in one go (array elements and members'
    /// values, compact or not): it must accept and reject exactly what the scanner does, and
    /// keep what the whole line would, whatever the pieces.
    #[test]
    fn containers_reduce_like_the_scanner(
        picks in prop::collection::vec(0..ELEMENTS.len() + 3, 1..250),
        bad in prop::option::weighted(0.3, (0..INVALID.len(), any::<prop::sample::Index>())),
        members in any::<bool>(),
        spaced in any::<bool>(),
        budget in 128usize..900,
        chunk in prop_oneof![Just(4096), 50usize..200],
    ) {
        let sep = if spaced { ", " } else { "," };
        let mut values: Vec<String> = picks.iter().map(|&k| element(k)).collect();
        if let Some((k, at)) = bad {
            values.insert(at.index(values.len() + 1), INVALID[k].to_string());
        }
        let parts: Vec<String> = values
            .into_iter()
            .enumerate()
            .map(|(i, v)| if members { format!(r#""k{i}":{v}"#) } else { v })
            .collect();
        let (open, close) = if members { ("{", "}") } else { ("[", "]") };
        let line = format!(r#"{{"type":"user","items":{open}{}{close}}}"#, parts.join(sep));
        let valid = scan::is_valid(line.as_bytes(), &mut Vec::new());
        match reduce(line.as_bytes(), budget, chunk) {
            Ok(Some(_)) => prop_assert!(valid, "reduced an invalid line: {line}"),
            Err(Failure::Invalid) => prop_assert!(!valid, "rejected a valid line: {line}"),
            other => prop_assert!(false, "{other:?} for {line}"),
        }
        if valid && line.len() > budget {
            // An array of more elements than the reduction keeps may show whole in a log line
            // of these budgets (a giant line's budget shows far fewer): not exact then.
            if picks.iter().all(|&k| k <= ELEMENTS.len()) {
                check_reduction_is_exact(line.as_bytes(), budget, chunk);
                check_reduction_is_exact(line.as_bytes(), budget, 1);
            }
            // A byte at a time, no container is whole in a piece: the reduction is the same.
            // (Not quite for a string long enough to cut: which of its bytes past the kept
            // ones the copy holds depends on the pieces; the log line does not, as above.)
            if line.contains("longer") {
                return Ok(());
            }
            let (one, many) = (reduce(line.as_bytes(), budget, 1), reduce(line.as_bytes(), budget, 4096));
            let (one, many) = (one.unwrap().unwrap(), many.unwrap().unwrap());
            prop_assert!(one.doc == many.doc, "{}\n{}", common::show(&one.doc), common::show(&many.doc));
            prop_assert_eq!(one.elided, many.elided);
        }
    }
}

/// A proptest finding: on CPUs with AVX-512 VBMI2 the block writer of a non-JSON record left a
/// lead byte (0xde) raw before a block end, so the record was not UTF-8 (budget 662).
#[test]
fn random_bytes_with_a_lead_byte_before_a_block_end_log_utf8() {
    let input = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/regressions/lead-byte-before-a-block-end.bin"),
    )
    .unwrap();
    check_contract(&input, 662);
}

/// A line of a text stream: UTF-8 text with colour codes and accents, the same with a byte
/// that is not UTF-8 (at its start, inside, at its end, a character cut short), or JSON; some
/// start with a byte that may start JSON, whitespace or a BOM.
fn text_line() -> impl Strategy<Value = Vec<u8>> {
    let text = "[a-z \"\\\\\t\u{c}\u{1b}\u{7f}\u{feff}éあ😀\\[{0-]{0,90}";
    let bad = prop::sample::select(vec![
        &b"\xff"[..],
        b"\xc3",
        b"\xe3\x81",
        b"\xed\xa0\x80",
        b"\x80",
    ]);
    prop_oneof![
        3 => text.prop_map(String::into_bytes),
        2 => (text, bad, any::<prop::sample::Index>()).prop_map(|(t, bad, at)| {
            let mut line = t.into_bytes();
            let at = at.index(line.len() + 1);
            line.splice(at..at, bad.iter().copied());
            line
        }),
        1 => json().prop_map(|v| serde_json::to_vec(&v).unwrap()),
        // Numbers and literals, alone (JSON) or with more (text, or JSON the engine must see).
        1 => "(true|false|null|-?[0-9]{1,3}(\\.[0-9])?([eE][+-]?[0-9])?|-Infinity|NaN)( ?(true|x|[0-9]|\"a b\"|,|\\]|-))?[ \t\u{c}]{0,2}".prop_map(String::into_bytes),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: common::cases(256), ..ProptestConfig::default() })]

    /// The writer checks a chunk's UTF-8 once for all the lines after a line of text
    /// (`ChunkText`), or takes the check the reading thread made (`TextAhead`, also when bytes
    /// were added to the chunk after it), and writes runs of plain lines without the engine
    /// (`write_text_run`): each line's record is the one it has when the engine is given it
    /// alone.
    #[test]
    fn lines_of_text_in_one_chunk_are_logged_as_each_alone(
        lines in prop::collection::vec(text_line(), 1..40),
        crlf in any::<bool>(),
        budget in prop::sample::select(vec![0usize, 160, 512, 5120]),
    ) {
        let mut input = Vec::new();
        for line in &lines {
            input.extend_from_slice(line);
            input.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
        }
        let config = common::config(budget);
        let mut engine = LineEngine::new(config.clone());
        let mut want = Vec::new();
        for line in &lines {
            let line = if crlf { [&line[..], b"\r"].concat() } else { line.clone() };
            engine.process(&line, &mut want);
        }
        prop_assert_eq!(engine.panics(), 0, "a caught panic is a bug");
        for chunk in [0, 300] {
            let log = common::log_of(&input, &config, chunk);
            prop_assert!(log == want, "chunk {}:\n{}\n{}", chunk, common::show(&log), common::show(&want));
        }
        for (chunk, added) in [(input.len(), 0), (300, 0), (300, 101), (97, 40)] {
            for text in [true, false] {
                let log = common::log_looked_ahead(&input, &config, chunk.max(1), added, text);
                prop_assert!(log == want, "chunk {} added {} text {}:\n{}\n{}", chunk, added, text, common::show(&log), common::show(&want));
            }
        }
    }
}

/// A helper's attack found it: the record of a line that is not JSON, exactly as long as the
/// budget, was cut (one byte of the budget was kept spare), where a JSON line of that length is
/// logged whole. Through the engine (the first lines) and through runs of text (the later
/// ones), UTF-8 and not.
#[test]
fn a_text_record_of_exactly_the_budget_is_kept_whole() {
    let around = r#"{"type":"non_json","text":""}"#.len();
    for budget in [128, 300, 5120] {
        for (line, written) in [
            (vec![b'y'; budget - around], "y".repeat(budget - around)),
            (
                [vec![b'y'; budget - around - 3], vec![0xFF]].concat(),
                format!("{}\u{FFFD}", "y".repeat(budget - around - 3)),
            ),
        ] {
            let input = [&b"a\nb\nc\nd\n"[..], &line, b"\n", &line, b"\n"].concat();
            let log = common::log_of(&input, &common::config(budget), 0);
            let want = format!(r#"{{"type":"non_json","text":"{written}"}}"#);
            assert_eq!(want.len(), budget);
            let lines: Vec<&[u8]> = log.split(|&b| b == b'\n').collect();
            for at in [4, 5] {
                assert_eq!(String::from_utf8_lossy(lines[at]), want, "budget {budget}");
            }
            let longer = [&line[..], b"y"].concat();
            let log = common::log_of(&[&longer[..], b"\n"].concat(), &common::config(budget), 0);
            assert!(log.len() <= budget + 1 && log.windows(10).any(|w| w == b"[TRUNCATED"));
        }
    }
}

/// A line of a JSON stream as the reading thread may find it: valid JSON, in a form the engine
/// trims (a BOM, whitespace, CRs), nested past the depth common readers take, cut short, with a
/// byte that is not UTF-8 in a string, or not JSON at all.
fn json_stream_line() -> impl Strategy<Value = Vec<u8>> {
    let json = || json().prop_map(|v| serde_json::to_vec(&v).unwrap());
    let bad = prop::sample::select(vec![&b"\xff"[..], b"\xc3", b"\xed\xa0\x80", b"\x01"]);
    prop_oneof![
        4 => json(),
        1 => (json(), "[ \t\r]{0,3}", "[ \t\r]{0,3}", any::<bool>()).prop_map(
            |(j, before, after, bom)| {
                let bom = if bom { "\u{feff}" } else { "" };
                [bom.as_bytes(), before.as_bytes(), &j, after.as_bytes()].concat()
            }
        ),
        1 => (60usize..70, "[a-z0-9\"]{0,8}").prop_map(|(depth, inner)| {
            let inner = if inner.starts_with('"') { "1".to_string() } else { format!("\"{inner}\"") };
            format!("{}{inner}{}", "[".repeat(depth), "]".repeat(depth)).into_bytes()
        }),
        1 => (json(), any::<prop::sample::Index>())
            .prop_map(|(j, at)| j[..at.index(j.len() + 1)].to_vec()),
        1 => (r#"\{"text":"[a-z é]{0,40}"#, bad, "[a-z]{0,5}\"\\}").prop_map(|(a, bad, b)| {
            [a.as_bytes(), bad, b.as_bytes()].concat()
        }),
        1 => text_line(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: common::cases(256), ..ProptestConfig::default() })]

    /// While the log worker is behind, the reading thread checks each line of a chunk that the
    /// engine would copy whole when it fits (`JsonAhead`), and the worker copies those without
    /// checking them again: each line's log line is the one the engine writes for it alone,
    /// wherever the chunks are cut and when bytes were added to a chunk after its look.
    #[test]
    fn json_lines_checked_by_the_reader_are_logged_as_each_alone(
        lines in prop::collection::vec(json_stream_line(), 1..30),
        budget in prop::sample::select(vec![0usize, 128, 512, 5120]),
    ) {
        let mut input = Vec::new();
        for line in &lines {
            input.extend_from_slice(line);
            input.push(b'\n');
        }
        let config = common::config(budget);
        let mut engine = LineEngine::new(config.clone());
        let mut want = Vec::new();
        for line in input.split(|&b| b == b'\n').take(lines.len()) {
            engine.process(line, &mut want);
        }
        prop_assert_eq!(engine.panics(), 0, "a caught panic is a bug");
        for (chunk, added) in [(input.len(), 0), (300, 0), (300, 101), (97, 40), (1, 0)] {
            for text in [true, false] {
                let log = common::log_looked_ahead(&input, &config, chunk.max(1), added, text);
                prop_assert!(log == want, "chunk {} added {} text {}:\n{}\n{}", chunk, added, text, common::show(&log), common::show(&want));
            }
        }
    }
}
