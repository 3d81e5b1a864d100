//! Writes generated input to stdout: a realistic stream-json corpus, one giant line, many tiny
//! lines, or input that is not JSON (text with ANSI colours, random bytes).
//!
//! ```sh
//! cargo run --release --example gen_corpus -- 200M 42 > corpus.jsonl
//! cargo run --release --example gen_corpus -- giant string 1G > giant.jsonl
//! cargo run --release --example gen_corpus -- tiny 1000000 > tiny.jsonl
//! cargo run --release --example gen_corpus -- text 100M > text.log     # not JSON: ANSI colours
//! cargo run --release --example gen_corpus -- binary 100M > noise.bin  # random bytes
//! ```
//! SIZE takes K, M and G suffixes (1024-based); SEED defaults to 42. Giant line kinds: string,
//! escapes, image, array, spaced, records, floats, integers, deltas, strings, nested.
#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    reason = "a developer's tool, not a surface of smart-tee: the door is for the binary"
)]

use std::io::Write;

#[path = "../benches/support/synth.rs"]
#[allow(dead_code)]
mod synth;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = match args.first().map(String::as_str) {
        Some("giant") => {
            let kind = args.get(1).map(String::as_str).unwrap_or("string");
            let size = parse_size(args.get(2).map(String::as_str).unwrap_or("256M"));
            synth::write_giant_line(&mut out, kind, size)
        }
        Some("tiny") => {
            let n = args
                .get(1)
                .and_then(|s| s.parse().ok())
                .unwrap_or(1_000_000);
            synth::write_tiny_lines(&mut out, n)
        }
        Some(kind @ ("text" | "binary")) => {
            let size = parse_size(args.get(1).map(String::as_str).unwrap_or("100M"));
            let seed = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(42);
            if kind == "text" {
                synth::write_text_lines(&mut out, size, seed)
            } else {
                synth::write_random_bytes(&mut out, size, seed)
            }
        }
        size => {
            let size = parse_size(size.unwrap_or("10M"));
            let seed = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(42);
            synth::write_stream(&mut out, size, seed)
        }
    };
    if let Err(e) = result.and_then(|()| out.flush()) {
        eprintln!("gen_corpus: {e}");
        std::process::exit(1);
    }
}

fn parse_size(size: &str) -> u64 {
    let (digits, unit) = match size.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => size.split_at(i),
        None => (size, ""),
    };
    let unit: u64 = match unit.to_ascii_uppercase().as_str() {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        other => {
            eprintln!("gen_corpus: unknown size suffix {other:?}; use K, M or G");
            std::process::exit(2);
        }
    };
    let Ok(n) = digits.parse::<u64>() else {
        eprintln!("gen_corpus: {size:?} is not a size such as 200M");
        std::process::exit(2);
    };
    n * unit
}
