//! Writes a realistic generated stream-json corpus to stdout.
//!
//! ```sh
//! cargo run --release --example gen_corpus -- 200M 42 > corpus.jsonl
//! ```
//! SIZE takes K, M and G suffixes (1024-based); SEED defaults to 42.

use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let size = args.first().map(String::as_str).unwrap_or("10M");
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
    let seed = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(42);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if let Err(e) =
        smart_tee::synth::write_stream(&mut out, n * unit, seed).and_then(|()| out.flush())
    {
        eprintln!("gen_corpus: writing: {e}");
        std::process::exit(1);
    }
}
