//! The line engine alone over generated lines of one kind, for profilers: `perf record`, or
//! callgrind, whose instruction counts stay steady on a noisy machine where wall time does not.
//!
//! ```sh
//! cargo build --profile profiling --examples   # release with symbols
//! valgrind --tool=callgrind --toggle-collect='smart_tee::cut::engine::LineEngine::process' \
//!     target/profiling/examples/engine_loop write 1
//! target/profiling/examples/engine_loop read 15   # best and median MiB/s of 15 rounds
//! ```
//!
//! Kinds: `fit` (lines within the default budget), `read`, `bash`, `write`, `image`, `blocks`;
//! 8 MB of lines each; for `read`, `bash` and `write` the same lines as `cargo bench --bench
//! engine` (for `fit`, the bench takes the first 4 MB of these); `tiny`, 300-byte lines as
//! `benches/compare.sh` makes them; `text` and `binary`, lines that are not JSON (text with ANSI
//! colour codes and accents, random bytes), as the bench's `non-json` group makes them. `REDACT=1` in the environment runs the engine with
//! `--redact` (and the secrets of the environment, as smart-tee takes them).
#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    reason = "a developer's tool, not a surface of smart-tee: the door is for the binary"
)]

#[path = "../benches/support/synth.rs"]
#[allow(dead_code)]
mod synth;
use smart_tee::{EngineConfig, LineEngine};
use std::time::Instant;
use synth::StreamGen;

fn main() {
    let mut args = std::env::args().skip(1);
    let kind = args.next().unwrap_or_else(|| "read".to_string());
    let rounds: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(15);
    let mut config = EngineConfig::default();
    if std::env::var_os("REDACT").is_some() {
        config.redact = true;
        config.secrets = smart_tee::cut::redact::from_env();
    }
    let max_len = if kind == "fit" {
        config.max_line_bytes
    } else {
        usize::MAX
    };
    let seed = match kind.as_str() {
        "fit" => 1,
        "read" => 2,
        "bash" => 3,
        "write" => 4,
        _ => 5,
    };
    let input = match kind.as_str() {
        "tiny" => tiny_lines(8 << 20),
        "text" | "binary" => {
            let mut bytes = Vec::new();
            if kind == "text" {
                synth::write_text_lines(&mut bytes, 8 << 20, 5)
            } else {
                synth::write_random_bytes(&mut bytes, 8 << 20, 6)
            }
            .expect("writing to a Vec");
            bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect()
        }
        _ => StreamGen::new(seed).lines_of(&kind, 8 << 20, max_len),
    };
    let bytes: usize = input.iter().map(Vec::len).sum();
    let mut engine = LineEngine::new(config);
    let mut out = Vec::with_capacity(1 << 20);
    let mut rates = Vec::new();
    for _ in 0..rounds {
        let start = Instant::now();
        for line in &input {
            out.clear();
            engine.process(line, &mut out);
        }
        rates.push(bytes as f64 / start.elapsed().as_secs_f64() / f64::from(1 << 20));
    }
    rates.sort_by(f64::total_cmp);
    if let (Some(best), Some(median)) = (rates.last(), rates.get(rates.len() / 2)) {
        println!("{kind}: {bytes} bytes, best {best:.0} MiB/s, median {median:.0} MiB/s");
    }
}

/// 300-byte assistant lines of `a`s until `bytes` are reached (`gen_corpus tiny`).
fn tiny_lines(bytes: usize) -> Vec<Vec<u8>> {
    let mut lines = Vec::new();
    let mut total = 0;
    while total < bytes {
        let mut line = format!(
            r#"{{"type":"assistant","uuid":"{:08}","message":{{"content":[{{"type":"text","text":""#,
            lines.len()
        )
        .into_bytes();
        line.resize(296, b'a');
        line.extend_from_slice(b"\"}]}}");
        total += line.len();
        lines.push(line);
    }
    lines
}
