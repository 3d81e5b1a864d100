//! smart-tee: a `tee` for AI-agent JSON streams.
//!
//! Standard input goes to standard output unchanged, byte for byte, as it arrives. Each log
//! gets one line per non-blank input line, and every log line is strict JSON within a byte
//! budget: lines that fit are copied, longer lines keep their structure while long strings are
//! cut to head + marker + tail, and lines that are not JSON become a `non_json` record.
//!
//! ```
//! use smart_tee::{EngineConfig, LineEngine, Outcome};
//!
//! let mut engine = LineEngine::new(EngineConfig { max_line_bytes: 200, ..EngineConfig::default() });
//! let mut out = Vec::new();
//! let line = format!(r#"{{"type":"user","content":"{}"}}"#, "x".repeat(1000));
//! assert_eq!(engine.process(line.as_bytes(), &mut out), Outcome::Cut);
//! assert!(out.len() <= 201 && out.ends_with(b"\n"));
//! assert!(String::from_utf8_lossy(&out).contains("[TRUNCATED: 1000 → "));
//! ```
//!
//! The data path and the modules by phase are drawn in docs/design.md. One folder per phase, in
//! data-path order; a phase uses only itself and earlier ones (`tests/it/layout.rs`):
//! - [`line`]: reading one line: where strings end (SIMD), strict validation, the flat index;
//! - [`reduce`]: shrinking a line past 8 MiB while it is read;
//! - [`cut`]: the line engine, the cut policy (`cut::plan`), records, redaction;
//! - [`door`]: the one way out to stderr and to a reading mode's stdout, redacted with `--redact`;
//! - [`tee`]: the threads, the hand-off queue, the sinks, the archive;
//! - [`read`]: `--view`, gists, the summary, `--compact`, opening files beneath a root;
//! - `mcp`: the MCP server (feature `mcp`); [`cli`]: flags into a checked configuration.
//!
//! `early` (a start-up check of stdout) and `error` are shared.
//!
//! Where the `unsafe` lives: `early` (one `.init_array` entry) and [`line::strings`], the SIMD
//! code. There, the SSE2 mask functions (`strings/simd.rs`) are compiled only for targets that
//! enable SSE2, and the one function that runs AVX2 instructions, the trigram filter of
//! `strings/trigrams.rs`, is an `unsafe fn` with `#[target_feature]`, called only from
//! `Trigrams::rules_out` after the cached CPU check that [`line::strings::Trigrams::new`] makes.
//! `SMART_TEE_SIMD=portable|sse2|avx2|avx512` forces the path (capped at what the CPU has).
#![deny(unsafe_code)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod cli;
pub mod cut;
pub mod door;
pub mod early;
pub mod error;
pub mod line;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod read;
pub mod reduce;
pub mod tee;

pub use cut::engine::{EngineConfig, LineEngine, Outcome};
pub use error::Error;
pub use tee::log::{LogWriter, Stats};
