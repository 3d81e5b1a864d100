//! The real corpus (`tests/data/real`, plus `SMART_TEE_CORPUS`): every file at budgets 1024,
//! 5120 and 20000 honours the contract, keeps every line's structure, and keeps the fields a
//! reader needs to follow the session.

use crate::common::naive::keeps_types;
use crate::common::{check_contract, corpus_files, input_lines, lines, strict_parse};
use serde_json::Value;

const KEPT_FIELDS: [&str; 7] = [
    "type",
    "subtype",
    "uuid",
    "session_id",
    "sessionId",
    "timestamp",
    "parentUuid",
];

#[test]
fn corpus_honours_the_contract_at_every_budget() {
    for file in corpus_files() {
        let input = std::fs::read(&file).expect("read corpus file");
        for budget in [1024, 5120, 20000] {
            let log = check_contract(&input, budget);
            let name = file.file_name().unwrap().to_string_lossy();
            for (inp, out) in input_lines(&input).iter().zip(lines(&log)) {
                let orig = strict_parse(inp).expect("corpus lines are JSON");
                let cut = strict_parse(out).expect("log lines are JSON");
                if let Err(e) = keeps_types(&orig, &cut) {
                    panic!("{name} at {budget}: {e}");
                }
                let (Value::Object(o), Value::Object(c)) = (&orig, &cut) else {
                    continue;
                };
                // At 1024 a line of many members may give a whole member up (a copy such as
                // `toolUseResult`) rather than make every member a marker.
                assert!(
                    budget < 5120 || o.keys().eq(c.keys()),
                    "{name} at {budget}: top-level keys changed: {:?} vs {:?}",
                    o.keys().collect::<Vec<_>>(),
                    c.keys().collect::<Vec<_>>()
                );
                for field in KEPT_FIELDS {
                    assert_eq!(
                        o.get(field),
                        c.get(field),
                        "{name} at {budget}: {field} changed"
                    );
                }
            }
        }
    }
}

#[test]
fn corpus_logs_shrink_to_the_budget() {
    let file = corpus_files()
        .into_iter()
        .find(|f| f.to_string_lossy().contains("images-in-tool-results"))
        .expect("the screenshot file is in the corpus");
    let input = std::fs::read(&file).unwrap();
    let log = check_contract(&input, 5120);
    assert!(input.len() > 1_000_000);
    assert!(
        log.len() < 10_500,
        "two lines of at most 5120 bytes: {}",
        log.len()
    );
    let user = strict_parse(lines(&log)[1]).unwrap();
    let block = &user["message"]["content"][0];
    assert_eq!(block["tool_use_id"], "toolu_01Q6S4AwiiLp5gTueKaT4FdC");
    assert_eq!(block["content"][1]["source"]["media_type"], "image/png");
}
