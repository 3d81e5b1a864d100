//! Property tests of the log contract over arbitrary bytes and arbitrary JSON, at random
//! budgets at or above the floor, held against the serde_json oracle and the plain reference.

mod common;

use common::naive::agrees;
use common::{check_contract, lines, strict_parse};
use proptest::prelude::*;
use serde_json::Value;

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

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

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
