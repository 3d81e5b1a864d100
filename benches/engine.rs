//! The line engine alone, beside the naive serde_json `Value` parse → cut → serialize, so the
//! ratio shows. Inputs come from the project's own generator (`smart_tee::synth`), grouped:
//! lines that fit, typical over-budget stream-json lines, a 1 MB line with base64 images, and
//! tiny 300-byte lines; each also with `--redact`. The `non-json` group times lines that are not
//! JSON (text with ANSI colours and accents, random bytes), written as records; `redact-scout`
//! times `--redact`'s filters on the reading thread.
//!
//! Each group is named with the SIMD path it ran on (`fit/avx2`): the dispatch's own choice
//! (`default`), or the one `SMART_TEE_SIMD` forces, read once per process. Every path, side by
//! side: `for p in portable sse2 avx2 avx512; do SMART_TEE_SIMD=$p cargo bench --bench engine;
//! done` (a path the CPU lacks runs as the widest it has, and is named so).
#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    reason = "a developer's tool, not a surface of smart-tee: the door is for the binary"
)]

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
#[path = "support/synth.rs"]
#[allow(dead_code)]
mod synth;
use smart_tee::{EngineConfig, LineEngine};
use synth::StreamGen;

#[path = "../tests/it/common/naive.rs"]
mod naive;

const BUDGET: usize = 5120;

/// A group's name with the SIMD path it runs on.
fn on_path(name: &str) -> String {
    let path = smart_tee::line::strings::Simd::forced().map_or("default", |p| p.name());
    format!("{name}/{path}")
}

/// Lines of `kind` until `bytes` are reached; `fit` keeps only lines within the budget.
fn lines(kind: &str, bytes: usize, seed: u64) -> Vec<Vec<u8>> {
    let max_len = if kind == "fit" { BUDGET } else { usize::MAX };
    StreamGen::new(seed).lines_of(kind, bytes, max_len)
}

fn tiny_lines(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let mut l = format!(r#"{{"type":"assistant","uuid":"{i:08}","message":{{"content":[{{"type":"text","text":""#).into_bytes();
            while l.len() < 296 {
                l.push(b'a' + (l.len() % 26) as u8);
            }
            l.extend_from_slice(b"\"}]}}");
            l
        })
        .collect()
}

fn one_mb_image_line() -> Vec<Vec<u8>> {
    let mut g = StreamGen::new(7);
    loop {
        let mut line = Vec::new();
        g.line_of("image", &mut line);
        if line.len() > 800_000 {
            line.pop();
            return vec![line];
        }
    }
}

fn bench(c: &mut Criterion) {
    let groups: Vec<(&str, Vec<Vec<u8>>)> = vec![
        ("fit", lines("fit", 4 << 20, 1)),
        ("typical/read", lines("read", 8 << 20, 2)),
        ("typical/bash", lines("bash", 8 << 20, 3)),
        ("typical/write", lines("write", 8 << 20, 4)),
        ("huge/image-1MB", one_mb_image_line()),
        ("tiny/300B", tiny_lines(20_000)),
    ];
    for (name, input) in &groups {
        let bytes: usize = input.iter().map(Vec::len).sum();
        let mut group = c.benchmark_group(on_path(name));
        group.throughput(Throughput::Bytes(bytes as u64));
        group.sample_size(20);
        // `--redact` beside the run without it: its cost, as a ratio (#16 asks for +10% at most).
        for (id, redact) in [("smart-tee", false), ("smart-tee-redact", true)] {
            group.bench_function(BenchmarkId::new(id, bytes), |b| {
                let mut engine = LineEngine::new(EngineConfig {
                    redact,
                    ..EngineConfig::default()
                });
                let mut out = Vec::with_capacity(1 << 20);
                b.iter(|| {
                    for line in input {
                        out.clear();
                        engine.process(line, &mut out);
                    }
                    out.len()
                })
            });
        }
        group.bench_function(BenchmarkId::new("naive-serde_json", bytes), |b| {
            b.iter(|| {
                input
                    .iter()
                    .map(|l| naive::naive_cut(l, BUDGET).len())
                    .sum::<usize>()
            })
        });
        group.finish();
    }
}

/// The lines of `input` (split on `\n`, as the log worker splits them).
fn split_lines(input: &[u8]) -> Vec<Vec<u8>> {
    input.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect()
}

/// Lines that are not JSON: 8 MiB of text lines with ANSI colour codes and accents, and 8 MiB
/// of random bytes (lines of about 256 bytes, most of them not UTF-8), each written as a
/// `non_json` record. The naive serde_json round trip is left out: it rejects every line.
fn non_json(c: &mut Criterion) {
    let mut text = Vec::new();
    synth::write_text_lines(&mut text, 8 << 20, 5).unwrap();
    let mut noise = Vec::new();
    synth::write_random_bytes(&mut noise, 8 << 20, 6).unwrap();
    let mut group = c.benchmark_group(on_path("non-json"));
    group.sample_size(20);
    for (name, input) in [("text-ansi", text), ("random-bytes", noise)] {
        let lines = split_lines(&input);
        group.throughput(Throughput::Bytes(input.len() as u64));
        group.bench_function(BenchmarkId::new(name, input.len()), |b| {
            let mut engine = LineEngine::new(EngineConfig::default());
            let mut out = Vec::with_capacity(1 << 20);
            b.iter(|| {
                let mut logged = 0;
                for line in &lines {
                    out.clear();
                    engine.process(line, &mut out);
                    logged += out.len();
                }
                logged
            })
        });
    }
    group.finish();
}

/// The excerpt record of a line that is not JSON, escape-dense (control bytes, quotes,
/// backslashes: six or two escaped bytes each), four times the budget long, at budgets from
/// 5 KiB to 8 MiB. Time per input byte stays flat: the excerpt writer is linear (it was
/// quadratic in the budget).
fn excerpt(c: &mut Criterion) {
    let mut group = c.benchmark_group(on_path("excerpt"));
    group.sample_size(10);
    for budget in [5 << 10, 64 << 10, 1 << 20, 8 << 20] {
        let line: Vec<u8> = (0..4 * budget)
            .map(|i| [0x01, b'"', b'x', b'\\', 0x1b][i % 5])
            .collect();
        group.throughput(Throughput::Bytes(line.len() as u64));
        group.bench_function(BenchmarkId::new("budget", budget), |b| {
            let mut engine = LineEngine::new(EngineConfig {
                max_line_bytes: budget,
                ..EngineConfig::default()
            });
            let mut out = Vec::with_capacity(budget + 1);
            b.iter(|| {
                out.clear();
                engine.process(&line, &mut out);
                out.len()
            })
        });
    }
    group.finish();
}

/// `--redact`'s look ahead on the reading thread ([`Redactor::scout`]): the filters over a
/// chunk of 1 MiB of 300-byte lines (those of `gen_corpus tiny`), with the patterns alone and with a hundred secret values
/// (as `benches/compare.sh` puts in the environment). The reader pays this on every chunk
/// while the log worker is behind.
fn scout(c: &mut Criterion) {
    use smart_tee::cut::redact::{Redactor, secrets_of};
    // The lines of `gen_corpus tiny`, as compare.sh times them.
    let mut chunk = Vec::new();
    synth::write_tiny_lines(&mut chunk, 3495).unwrap();
    let names: Vec<String> = (1..=100).map(|i| format!("BENCH_{i}_API_KEY")).collect();
    let values: Vec<String> = (1..=100u64)
        .map(|i| {
            let len = 16 + (i * 7 % 49) as usize;
            (0..len)
                .map(|k| {
                    let x = (i * 131 + k as u64 * 7919) % 62;
                    char::from(
                        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                            [x as usize],
                    )
                })
                .collect()
        })
        .collect();
    let secrets = secrets_of(
        names
            .iter()
            .map(String::as_str)
            .zip(values.iter().map(String::as_str)),
    );
    let mut group = c.benchmark_group(on_path("redact-scout"));
    group.sample_size(20);
    group.throughput(Throughput::Bytes(chunk.len() as u64));
    for (id, redactor) in [
        ("patterns", Redactor::new()),
        ("100-values", Redactor::with_secrets(&secrets)),
    ] {
        group.bench_function(BenchmarkId::new(id, chunk.len()), |b| {
            b.iter(|| redactor.scout(&chunk))
        });
    }
    group.finish();
}

criterion_group!(benches, bench, non_json, excerpt, scout);
criterion_main!(benches);
