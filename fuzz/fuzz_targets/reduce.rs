//! Differential: a line reduced while read (the path of lines past the memory cap) is judged
//! exactly as the scanner judges it, whatever the piece sizes, and when it is JSON and over the
//! budget its log line is the one the whole line gets (`--plain`, so that base64 sampling,
//! which sees only what a reduction kept, is out of the picture).
//!
//! The first two bytes choose the piece size (1 to 64 bytes, or the whole line) and the budget;
//! the rest is the line.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use smart_tee::line::fields::FieldClasses;
use smart_tee::line::scan;
use smart_tee::reduce::{Failure, Reducer};
use smart_tee::{EngineConfig, LineEngine};

/// `--plain`'s configuration, built once.
fn plain() -> &'static EngineConfig {
    static PLAIN: OnceLock<EngineConfig> = OnceLock::new();
    PLAIN.get_or_init(|| EngineConfig {
        value_aware: false,
        fields: FieldClasses::defaults().without_duplicates(),
        ..EngineConfig::default()
    })
}

fuzz_target!(|data: &[u8]| {
    let [piece, budget, line @ ..] = data else {
        return;
    };
    // Small pieces cut everything; a whole line lets the reducer read small containers, short
    // strings and numbers in one go.
    let piece = match *piece {
        192.. => line.len().max(1),
        p => usize::from(p % 64) + 1,
    };
    let budget = 128 + usize::from(*budget) * 4;
    let mut r = Reducer::for_budget(budget);
    for p in line.chunks(piece) {
        r.feed(p);
    }
    let json = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
    let blank = json.iter().all(|b| b" \t\r\n".contains(b));
    let valid = scan::is_valid(json, &mut Vec::new());
    match r.finish() {
        Ok(None) => assert!(blank, "taken for blank"),
        Err(Failure::Invalid) => assert!(!valid && !blank, "valid line rejected"),
        Err(Failure::TooBig) => panic!("a short line is too big to reduce"),
        Ok(Some(reduced)) => {
            assert!(valid, "invalid line accepted");
            let config = EngineConfig {
                max_line_bytes: budget,
                ..plain().clone()
            };
            let mut streamed = Vec::new();
            LineEngine::new(config.clone()).process_reduced(reduced, &mut streamed);
            assert!(streamed.len() <= budget + 1, "over budget");
            // The engine measures a line without the whitespace around its JSON.
            let small = json.trim_ascii().len() <= budget;
            // Only a line of over 4 × ENDS bytes can hold an array or an object past the
            // reduction's limits, which legitimately differs.
            let wide = line.len() > 4 * smart_tee::reduce::ENDS;
            if !small && !wide {
                let mut whole = Vec::new();
                LineEngine::new(config).process(line, &mut whole);
                assert_eq!(
                    String::from_utf8_lossy(&streamed),
                    String::from_utf8_lossy(&whole)
                );
            }
            // A caught panic is a bug, not a record to write (#47.5).
            let panics = smart_tee::cut::engine::caught_panics();
            assert_eq!(panics, 0, "{:?}", smart_tee::cut::engine::first_caught_panic());
        }
    }
});
