//! The hostile set: inputs written to break a logger. Each goes through the full contract
//! (every chunk size, idempotence) and then a check of what it must look like.

use crate::common;

use crate::common::naive::agrees;
use crate::common::{check_contract, lines, strict_parse};
use serde_json::Value;

fn one_line(input: &[u8], budget: usize) -> Vec<u8> {
    let log = check_contract(input, budget);
    let ls = lines(&log);
    assert_eq!(ls.len(), 1, "expected one log line");
    ls[0].to_vec()
}

fn record_text(out: &[u8]) -> String {
    let v = strict_parse(out).expect("JSON");
    assert_eq!(v["type"], "non_json", "{}", String::from_utf8_lossy(out));
    v["text"].as_str().expect("text").to_string()
}

#[test]
fn broken_json_becomes_records() {
    for bad in [
        &b"{\"a\":"[..],
        b"[1,2",
        b"{\"a\" 1}",
        b"}{",
        b"{\"a\":1} x",
        b"NaN",
        b"[NaN]",
        b"Infinity",
        b"-Infinity",
        b"{\"a\":01}",
        b"plain text log line",
        b"{'a':1}",
        b"[1,]",
        b"\"unterminated",
        b"{\"a\":\"tab\there\"}",
    ] {
        for budget in [128, 5120, 0] {
            let out = one_line(bad, budget);
            assert_eq!(record_text(&out), String::from_utf8_lossy(bad));
        }
    }
}

#[test]
fn broken_utf8_is_replaced() {
    let cases: [&[u8]; 5] = [
        b"\xff\xfe",
        b"\"\xe2\x82\"",
        b"\xc0\xaf overlong slash",
        b"{\"a\":\"\xed\xa0\x80\"}",
        b"{\"a\":\"\xc0\xaf\"}",
    ];
    for bad in cases {
        let out = one_line(bad, 5120);
        let text = record_text(&out);
        assert!(text.contains('\u{FFFD}'), "{text:?}");
        // Each run of bytes that are not UTF-8 is one replacement character.
        let mut want = String::from_utf8_lossy(bad).into_owned();
        while want.contains("\u{FFFD}\u{FFFD}") {
            want = want.replace("\u{FFFD}\u{FFFD}", "\u{FFFD}");
        }
        assert_eq!(text, want);
    }
}

/// Random bytes logged 2.5 times their size: three bytes of U+FFFD for each byte that is not
/// UTF-8 and six (`\u0000`) for each control byte. In a line that is not UTF-8, a run of bytes
/// that are not text (invalid UTF-8, control bytes but tab) is one U+FFFD, and the characters
/// between are kept: a binary dump costs about its own size.
#[test]
fn random_bytes_cost_about_their_size() {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let noise: Vec<u8> = (0..1 << 20)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect();
    let log = crate::common::log_of(&noise, &crate::common::config(5120), 0);
    assert!(
        log.len() < noise.len() * 14 / 10,
        "{} bytes of log for {} of input",
        log.len(),
        noise.len()
    );
    for line in log.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let v: serde_json::Value = serde_json::from_slice(line).unwrap();
        let text = v["text"].as_str().unwrap();
        assert!(!text.contains("\u{FFFD}\u{FFFD}"), "runs are replaced once");
        // A line that is not UTF-8 (it shows a replacement) keeps no control character; one
        // that is (a lone `\x05` between two newlines) is written losslessly.
        let noise = |c: char| (c < ' ' && c != '\t') || c == '\x7f';
        if text.contains('\u{FFFD}') {
            assert!(!text.chars().any(noise), "{text:?}");
        }
    }
}

#[test]
fn long_broken_utf8_is_cut_on_boundaries() {
    let mut line = Vec::new();
    for i in 0..20_000 {
        line.extend_from_slice(if i % 3 == 0 {
            b"\xff"
        } else {
            "é\u{1b}😀".as_bytes()
        });
    }
    let out = one_line(&line, 1000);
    let text = record_text(&out);
    assert!(
        text.contains(&format!("[TRUNCATED: {} → ", line.len())),
        "{text}"
    );
    assert!(text.contains("é\u{FFFD}😀"), "{text}");
}

/// A line past the memory cap whose head is UTF-8 with NULs and whose tail is Latin-1 is
/// binary, as the same line under the cap is: logged as its strings.
#[test]
fn an_over_cap_line_binary_at_one_end_only_is_logged_as_its_strings() {
    let mut line = b"ab\x00cd\x00\xc3\xa9t\x00".to_vec();
    line.resize(9 << 20, b'x');
    line.extend_from_slice(b"caf\xe9 ok");
    let text = record_text(&one_line(&line, 5120));
    assert!(text.starts_with("\u{FFFD}xxxx"), "{text}");
    assert!(text.ends_with("xxxxcaf\u{FFFD}"), "{text}");
    assert!(
        text.contains(&format!("[TRUNCATED: {} → ", line.len())),
        "{text}"
    );
}

/// A binary line (a NUL, and a byte that is not UTF-8) is logged as its strings; one whose
/// strings are over the budget is cut as they are, the marker counting the line's raw bytes,
/// and what it keeps, from both ends.
#[test]
fn a_long_binary_line_is_cut_as_its_strings() {
    let mut line = Vec::new();
    for i in 0..20_000 {
        line.extend_from_slice(b"\x00\xff");
        line.extend_from_slice(format!("/usr/lib/file-{i:05}.so").as_bytes());
    }
    let short = one_line(&line[..600], 1000);
    let text = record_text(&short);
    assert!(
        text.starts_with("\u{FFFD}/usr/lib/file-00000.so\u{FFFD}/usr"),
        "{text}"
    );
    assert!(!text.contains("TRUNCATED"), "{text}");
    let out = one_line(&line, 1000);
    let text = record_text(&out);
    assert!(
        text.starts_with("\u{FFFD}/usr/lib/file-00000.so\u{FFFD}"),
        "{text}"
    );
    assert!(text.ends_with("/usr/lib/file-19999.so"), "{text}");
    let marker = format!("[TRUNCATED: {} → ", line.len());
    let (head, after) = text.split_once(&marker).expect("the marker");
    let (kept, tail) = after.split_once(" bytes]").unwrap();
    // Each U+FFFD stands for the two bytes of a gap, each other character for itself.
    let raw = |s: &str| -> usize { s.chars().map(|c| if c == '\u{FFFD}' { 2 } else { 1 }).sum() };
    assert_eq!(
        kept.parse::<usize>().unwrap(),
        raw(head) + raw(tail),
        "{text}"
    );
}

#[test]
fn deep_nesting_is_cut_without_recursion() {
    let depth = 100_000;
    let arrays = "[".repeat(depth) + &"]".repeat(depth);
    let objects = "{\"a\":".repeat(depth) + "1" + &"}".repeat(depth);
    for deep in [arrays, objects] {
        for budget in [128, 5120] {
            let out = one_line(deep.as_bytes(), budget);
            let text = String::from_utf8(out).unwrap();
            assert!(
                text.contains("[TRUNCATED: "),
                "a marker shows where the nesting was cut"
            );
            assert_eq!(&text[..20], &deep[..20], "the outer levels are kept");
        }
        // With no budget too, the containers past the depth limit become one marker.
        let out = one_line(deep.as_bytes(), 0);
        assert_eq!(common::depth(&out), smart_tee::cut::plan::MAX_LOG_DEPTH);
        assert!(String::from_utf8_lossy(&out).contains("[TRUNCATED: "));
    }
}

/// #11.10: a 1,000,000-deep array was logged 2,544 levels deep, which jq 1.6 and Python's
/// `json` cannot read. Every log line now nests at most `MAX_LOG_DEPTH` deep and parses with
/// serde_json's default recursion limit (128), whether the line fits the budget or not.
#[test]
fn log_lines_nest_no_deeper_than_readers_parse() {
    let limit = smart_tee::cut::plan::MAX_LOG_DEPTH;
    let deep = |n: usize| "[".repeat(n) + &"]".repeat(n);
    let deep_objects = |n: usize| "{\"a\":".repeat(n) + "1" + &"}".repeat(n);
    let wrapped = |n: usize| {
        format!(
            r#"{{"type":"user","uuid":"u-7","content":{},"tail":"end"}}"#,
            deep_objects(n)
        )
    };
    for line in [
        deep(1_000_000),
        deep(limit),
        deep(limit + 1),
        deep_objects(100),
        wrapped(100),
        wrapped(limit - 1),
    ] {
        for budget in [0, 128, 1024, 5120] {
            let out = one_line(line.as_bytes(), budget);
            let out_depth = common::depth(&out);
            assert!(out_depth <= limit, "{out_depth} deep at budget {budget}");
            // serde_json with its default recursion limit, as a reader would use it.
            let parsed: Result<Value, _> = serde_json::from_slice(&out);
            assert!(parsed.is_ok(), "serde_json cannot read: {parsed:?}");
            if common::depth(line.as_bytes()) <= limit && (budget == 0 || line.len() <= budget) {
                assert_eq!(
                    out,
                    line.as_bytes(),
                    "a line within the limits stays verbatim"
                );
            }
        }
    }
    // A small line too deep is planned, not copied: its type and ids stay, the depth goes.
    let out = one_line(wrapped(100).as_bytes(), 5120);
    let v = strict_parse(&out).unwrap();
    assert_eq!(
        (&v["type"], &v["uuid"], &v["tail"]),
        (&"user".into(), &"u-7".into(), &"end".into())
    );
}

/// #11.12 (the rule): whitespace around a line's JSON is not part of it. A line is measured
/// without it and logged without it, by the whole-line path and the reduction alike.
#[test]
fn whitespace_around_a_line_is_not_logged() {
    for (input, want) in [
        (&b" \t{\"a\":1} \t\n"[..], &b"{\"a\":1}"[..]),
        (b"\r\r\r[1,2]\r\r\n", b"[1,2]"),
        ("\u{feff}  \"x\"\n".as_bytes(), b"\"x\""),
    ] {
        assert_eq!(one_line(input, 5120), want);
    }
    // Not JSON: the record keeps the line's own leading spaces (trailing `\r`s are dropped).
    let text = record_text(&one_line(b"  indented text\r\n", 5120));
    assert_eq!(text, "  indented text");
}

#[test]
fn a_60_megabyte_string_keeps_head_and_tail() {
    let body = "0123456789 abcde".repeat(60 << 16);
    let line = format!(r#"{{"type":"user","uuid":"u-1","content":"HEAD{body}TAIL"}}"#);
    let out = one_line(line.as_bytes(), 5120);
    let v = strict_parse(&out).unwrap();
    assert_eq!(v["type"], "user");
    assert_eq!(v["uuid"], "u-1");
    let content = v["content"].as_str().unwrap();
    assert!(content.starts_with("HEAD0123"), "{}", &content[..40]);
    assert!(content.ends_with("bcdeTAIL"));
    assert!(content.contains(&format!("[TRUNCATED: {} → ", body.len() + 8)));
    assert!(
        out.len() > 4000,
        "the budget is used, not wasted: {}",
        out.len()
    );
}

#[test]
fn huge_arrays_keep_first_and_last_elements() {
    let numbers: Vec<String> = (0..1_000_000).map(|i| i.to_string()).collect();
    let line = format!("[{}]", numbers.join(","));
    let out = one_line(line.as_bytes(), 5120);
    let v: Vec<Value> = serde_json::from_slice(&out).unwrap();
    assert_eq!(v[0], 0);
    assert_eq!(v[v.len() - 1], 999_999);
    let marker = v.iter().find(|e| e.is_string()).expect("marker element");
    assert!(
        marker
            .as_str()
            .unwrap()
            .starts_with("[TRUNCATED: 1000000 → ")
    );

    let blocks: Vec<String> = (0..57)
        .map(|i| {
            format!(
                r#"{{"type":"text","text":"block {i} {}"}}"#,
                "x".repeat(2000)
            )
        })
        .collect();
    let line = format!(r#"{{"type":"user","content":[{}]}}"#, blocks.join(","));
    let out = one_line(line.as_bytes(), 5120);
    let v = strict_parse(&out).unwrap();
    let content = v["content"].as_array().unwrap();
    assert!(content.len() < 57);
    assert!(content[0]["text"].as_str().unwrap().starts_with("block 0 "));
    assert!(
        content.last().unwrap()["text"]
            .as_str()
            .unwrap()
            .starts_with("block 56 ")
    );
    let marker = content
        .iter()
        .find(|b| b["text"].as_str().unwrap().starts_with("[TRUNCATED: 57 → "));
    assert_eq!(marker.expect("typed marker block")["type"], "text");
}

#[test]
fn two_hundred_thousand_keys() {
    let members: Vec<String> = (0..200_000).map(|i| format!("\"k{i}\":{i}")).collect();
    let line = format!("{{\"type\":\"big\",{}}}", members.join(","));
    let out = one_line(line.as_bytes(), 5120);
    let v = strict_parse(&out).unwrap();
    let obj = v.as_object().unwrap();
    assert_eq!(obj.keys().next().unwrap(), "type");
    assert_eq!(obj["k0"], 0);
    assert!(
        obj["_truncated"]
            .as_str()
            .unwrap()
            .starts_with("[TRUNCATED: 200001 → ")
    );
    agrees(&strict_parse(line.as_bytes()).unwrap(), &v).unwrap();
}

#[test]
fn odd_numbers_keep_their_text() {
    let nums = [
        "-0",
        "1.0",
        "1e400",
        "1E+400",
        "-1.5e-400",
        "123456789012345678901234567890",
        "0.1e1",
    ];
    let line = format!(
        r#"{{"n":[{}],"content":"{}"}}"#,
        nums.join(","),
        "y".repeat(10_000)
    );
    let out = String::from_utf8(one_line(line.as_bytes(), 1024)).unwrap();
    assert!(
        out.starts_with(&format!(r#"{{"n":[{}],"content":"yyy"#, nums.join(","))),
        "{out}"
    );
}

#[test]
fn surrogate_escapes() {
    assert!(record_text(&one_line(br#""\ud800""#, 5120)).contains("\\ud800"));
    assert!(record_text(&one_line(br#"{"a":"\udc00\ud800"}"#, 5120)).contains("\\udc00"));
    let pairs = "\\ud83d\\ude00".repeat(3000);
    let line = format!(r#"{{"type":"x","text":"{pairs}"}}"#);
    for budget in [128, 1000, 1001, 1002, 1003, 1004, 1005, 5120] {
        let out = one_line(line.as_bytes(), budget);
        let v = strict_parse(&out).unwrap();
        let text = v["text"].as_str().unwrap();
        assert!(text.contains("[TRUNCATED: 36000 → "), "{text}");
        assert!(
            text.chars().all(|c| c.is_ascii() || c == '😀' || c == '→'),
            "no half pairs"
        );
    }
}

#[test]
fn escapes_are_never_split() {
    let body = "a\\n\\\\\\\"\\u00e9\\t".repeat(2000);
    let line = format!(r#"{{"s":"{body}"}}"#);
    for budget in 128..400 {
        let out = one_line(line.as_bytes(), budget);
        assert!(strict_parse(&out).is_ok());
    }
}

#[test]
fn bom_nul_crlf_blank_and_no_final_newline() {
    let input = b"\xef\xbb\xbf{\"a\":1}\r\n\r\n   \n\t\nnul\0byte\r\n{\"b\":2}";
    let log = check_contract(input, 5120);
    let ls = lines(&log);
    assert_eq!(ls.len(), 3);
    assert_eq!(ls[0], b"{\"a\":1}");
    assert_eq!(record_text(ls[1]), "nul\0byte");
    assert_eq!(ls[2], b"{\"b\":2}");
}

#[test]
fn top_level_scalars_and_arrays() {
    for s in [
        "1",
        "true",
        "null",
        "\"short\"",
        "[1,2,3]",
        "  {\"spaced\" : true}  ",
    ] {
        // Verbatim, but for the whitespace around the value.
        assert_eq!(one_line(s.as_bytes(), 5120), s.trim().as_bytes());
    }
    let long = format!("\"{}\"", "z".repeat(100_000));
    let out = one_line(long.as_bytes(), 500);
    assert!(
        strict_parse(&out)
            .unwrap()
            .as_str()
            .unwrap()
            .contains("[TRUNCATED: 100000 → ")
    );
    let long_number = "9".repeat(10_000);
    let out = one_line(long_number.as_bytes(), 500);
    assert!(
        strict_parse(&out)
            .unwrap()
            .as_str()
            .unwrap()
            .starts_with("[TRUNCATED: 10000 → 0")
    );
}

#[test]
fn duplicate_keys_are_kept() {
    assert_eq!(one_line(br#"{"a":1,"a":2}"#, 5120), br#"{"a":1,"a":2}"#);
    let line = format!(r#"{{"a":1,"a":"{}","a":3}}"#, "q".repeat(9000));
    let out = String::from_utf8(one_line(line.as_bytes(), 1000)).unwrap();
    assert!(
        out.starts_with(r#"{"a":1,"a":"qqq"#) && out.ends_with(r#"qq","a":3}"#),
        "{out}"
    );
}

#[test]
fn a_huge_preserved_field_is_cut_visibly_and_last() {
    let line = format!(
        r#"{{"type":"{}","content":"{}","id":"keep-me"}}"#,
        "t".repeat(100_000),
        "c".repeat(100_000)
    );
    let out = one_line(line.as_bytes(), 5120);
    let v = strict_parse(&out).unwrap();
    assert_eq!(v["id"], "keep-me");
    let t = v["type"].as_str().unwrap();
    let c = v["content"].as_str().unwrap();
    assert!(t.contains("[TRUNCATED: 100000 → "));
    assert!(t.len() > 4000, "the preserved field gets the budget first");
    assert!(c.starts_with("[TRUNCATED: 100000 → 0 bytes]"), "{c}");
}

#[test]
fn cut_prefers_a_nearby_newline() {
    let text: String = (0..2000)
        .map(|i| format!("line {i:04} of the file\\n"))
        .collect();
    let line = format!(r#"{{"content":"{text}"}}"#);
    let out = one_line(line.as_bytes(), 2000);
    let v = strict_parse(&out).unwrap();
    let c = v["content"].as_str().unwrap();
    let (head, rest) = c.split_once("[TRUNCATED: ").unwrap();
    let tail = rest.split_once(']').unwrap().1;
    assert!(head.ends_with('\n'), "head ends at a newline: {head:?}");
    assert!(tail.starts_with("line "), "tail starts at a line: {tail:?}");
}

#[test]
fn preserved_ids_and_types_survive_small_budgets() {
    let line = format!(
        r#"{{"type":"user","message":{{"role":"user","content":[{{"tool_use_id":"toolu_1","type":"tool_result","content":"{}","is_error":true}}]}},"uuid":"u-9","timestamp":"2026-01-01T00:00:00.000Z","tool_use_result":{{"stdout":"{}"}}}}"#,
        "o".repeat(50_000),
        "o".repeat(50_000)
    );
    for budget in [512, 1024, 5120] {
        let out = one_line(line.as_bytes(), budget);
        let v = strict_parse(&out).unwrap();
        assert_eq!(v["type"], "user");
        assert_eq!(v["uuid"], "u-9");
        assert_eq!(v["timestamp"], "2026-01-01T00:00:00.000Z");
        let block = &v["message"]["content"][0];
        assert_eq!(block["tool_use_id"], "toolu_1");
        assert_eq!(block["is_error"], true);
        agrees(&strict_parse(line.as_bytes()).unwrap(), &v).unwrap();
    }
}
