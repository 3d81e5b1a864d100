//! For each corpus file at a budget (default 5120): bytes in, bytes logged, and how much of the
//! assistant's text and of the error results survived, agent-aware against --plain.
//!
//! ```sh
//! cargo run --release --example survival -- tests/data/real 5120
//! ```
#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    reason = "a developer's tool, not a surface of smart-tee: the door is for the binary"
)]

use serde_json::Value;
use smart_tee::line::fields::FieldClasses;
use smart_tee::{EngineConfig, LineEngine};

/// Bytes of `s` that are original text: all of it, or what its marker says was kept.
fn kept(s: &str) -> usize {
    match s.find("[TRUNCATED: ") {
        Some(p) => s[p + 12..]
            .split(" → ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0),
        None if s.contains(" OMITTED: ") => 0,
        None => s.len(),
    }
}

/// Sum over the texts a reader wants: the assistant's text blocks and error tool results.
fn texts(v: &Value, assistant: &mut usize, errors: &mut usize, measure: &dyn Fn(&str) -> usize) {
    let Some(content) = v["message"]["content"].as_array() else {
        return;
    };
    for block in content {
        if v["type"] == "assistant" && block["type"] == "text" {
            *assistant += block["text"].as_str().map_or(0, measure);
        }
        if block["type"] == "tool_result" && block["is_error"] == true {
            match &block["content"] {
                Value::String(s) => *errors += measure(s),
                Value::Array(a) => {
                    for b in a {
                        *errors += b["text"].as_str().map_or(0, measure);
                    }
                }
                _ => {}
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = args
        .first()
        .cloned()
        .unwrap_or_else(|| "tests/data/real".into());
    let budget: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(5120);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {dir}: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let aware = EngineConfig {
        max_line_bytes: budget,
        ..EngineConfig::default()
    };
    let plain = EngineConfig {
        value_aware: false,
        fields: FieldClasses::defaults().without_duplicates(),
        ..aware.clone()
    };
    println!(
        "| file | bytes in | logged (agent-aware) | logged (--plain) | assistant text kept aware / plain | error text kept aware / plain |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    for file in files {
        let input = std::fs::read(&file).unwrap();
        let mut row = Vec::new();
        let (mut want_a, mut want_e) = (0, 0);
        for line in input.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            if let Ok(v) = serde_json::from_slice::<Value>(line) {
                texts(&v, &mut want_a, &mut want_e, &|s: &str| s.len());
            }
        }
        for config in [&aware, &plain] {
            let mut engine = LineEngine::new(config.clone());
            let mut out = Vec::new();
            let (mut a, mut e) = (0, 0);
            for line in input.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                let start = out.len();
                engine.process(line, &mut out);
                if let Ok(v) = serde_json::from_slice::<Value>(&out[start..]) {
                    texts(&v, &mut a, &mut e, &kept);
                }
            }
            row.push((out.len(), a, e));
        }
        let pct = |n: usize, of: usize| {
            if of == 0 {
                "–".to_string()
            } else {
                format!("{:.0}%", 100.0 * n as f64 / of as f64)
            }
        };
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        println!(
            "| {} | {} | {} | {} | {} / {} of {} | {} / {} of {} |",
            name,
            input.len(),
            row[0].0,
            row[1].0,
            pct(row[0].1, want_a),
            pct(row[1].1, want_a),
            want_a,
            pct(row[0].2, want_e),
            pct(row[1].2, want_e),
            want_e
        );
    }
}
