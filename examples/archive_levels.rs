//! Compresses files as `--archive` does (independent frames closed at the first line end past
//! the frame target, content size and checksum in each) at a range of zstd settings, on one
//! thread, and prints each setting's ratio and speed: how the archive's level was chosen.
//!
//! ```sh
//! cargo run --release --example archive_levels -- tests/data/real/*.jsonl
//! ```
//! `FRAMES=262144,1048576` tries other frame targets (bytes); `LEVELS=-3,1,2` other levels.
#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    reason = "a developer's tool, not a surface of smart-tee: the door is for the binary"
)]

use std::time::Instant;

use zstd::zstd_safe::{CCtx, CParameter};

fn main() {
    let files: Vec<String> = std::env::args().skip(1).collect();
    let mut input = Vec::new();
    for f in &files {
        input.extend(std::fs::read(f).unwrap_or_else(|e| panic!("reading {f}: {e}")));
    }
    let list = |var: &str, default: &str| -> Vec<i64> {
        std::env::var(var)
            .unwrap_or_else(|_| default.into())
            .split(',')
            .filter_map(|s| s.trim().parse().ok())
            .collect()
    };
    // Small inputs are compressed several times over, so that each timing covers ~200 MB.
    let rounds = std::env::var("ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or((200_000_000 / input.len().max(1)).clamp(1, 50));
    println!(
        "{} bytes in {} files, {rounds} round(s) each",
        input.len(),
        files.len()
    );
    for target in list("FRAMES", "1048576") {
        let frames = frames(&input, target as usize, 2 * target as usize);
        for level in list("LEVELS", "-7,-5,-3,-2,-1,1,2,3") {
            {
                let mut cctx = CCtx::create();
                let mut set = |p| cctx.set_parameter(p).map(|_| ()).map_err(|c| c as i64);
                set(CParameter::CompressionLevel(level as i32)).expect("level");
                set(CParameter::ChecksumFlag(true)).expect("checksum");
                set(CParameter::ContentSizeFlag(true)).expect("content size");
                // PARAMS=hash:16,chain:15,min:5,strategy:2 (zstd's names, strategy as a number).
                for p in std::env::var("PARAMS").unwrap_or_default().split(',') {
                    let Some((k, v)) = p.split_once(':') else {
                        continue;
                    };
                    let v: u32 = v.parse().expect("a number");
                    let p = match k {
                        "window" => CParameter::WindowLog(v),
                        "hash" => CParameter::HashLog(v),
                        "chain" => CParameter::ChainLog(v),
                        "search" => CParameter::SearchLog(v),
                        "min" => CParameter::MinMatch(v),
                        "target" => CParameter::TargetLength(v),
                        "strategy" => CParameter::Strategy(match v {
                            1 => zstd::zstd_safe::Strategy::ZSTD_fast,
                            2 => zstd::zstd_safe::Strategy::ZSTD_dfast,
                            _ => zstd::zstd_safe::Strategy::ZSTD_greedy,
                        }),
                        _ => panic!("unknown parameter {k}"),
                    };
                    set(p).expect("parameter");
                }
                let mut out =
                    Vec::with_capacity(zstd::zstd_safe::compress_bound(2 * target as usize));
                let mut size = 0;
                let start = Instant::now();
                for _ in 0..rounds {
                    size = 0;
                    for f in &frames {
                        out.clear();
                        cctx.compress2(&mut out, f).expect("compress");
                        size += out.len();
                    }
                }
                let secs = start.elapsed().as_secs_f64() / rounds as f64;
                println!(
                    "frame {:>5} KiB level {level:>3}: {:5.1}% of the input, {:5.0} MB/s",
                    target / 1024,
                    100.0 * size as f64 / input.len() as f64,
                    input.len() as f64 / secs / 1e6
                );
            }
        }
    }
}

/// The input cut as the archive cuts it: at the first line end past `target`, or at `max`.
fn frames(input: &[u8], target: usize, max: usize) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = input;
    while !rest.is_empty() {
        let cut = match memchr::memchr(b'\n', &rest[target.min(rest.len())..]) {
            Some(p) => (target + p + 1).min(max),
            None => rest.len().min(max),
        };
        let cut = cut.min(rest.len());
        out.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    out
}
