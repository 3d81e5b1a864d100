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
//! The data path and the modules by phase are drawn in docs/design.md; in short:
//! `tee` reads and writes stdout, `log` splits lines (`split`) and batches log writes to the
//! `sink`s; `engine` handles one line: `scan` validates (`strings` finds where strings end, with
//! SIMD: with `early`'s start-up check, the crate's only unsafe code), `index` records the values, `plan` decides the cuts,
//! `emit` writes the cut line, `record` the record of a line that is not JSON; `reduce` shrinks
//! a line past 8 MiB while it is read. `view` and `compact` read logs back (`when` reads
//! `--since`/`--until`); `mcp` serves them to agents, opening each once beneath a root
//! (`confine`); `cli` turns flags into a checked configuration.
#![deny(unsafe_code)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod archive;
pub mod cli;
pub mod compact;
pub mod confine;
pub mod early;
pub mod emit;
pub mod engine;
pub mod error;
pub mod fd;
pub mod fields;
pub mod gist;
pub mod handoff;
pub mod index;
pub mod log;
pub mod marker;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod payload;
pub mod plan;
pub mod record;
pub mod redact;
pub mod reduce;
pub mod scan;
pub mod sink;
pub mod splice;
pub mod split;
pub mod stamp;
pub mod stats;
pub mod stdout_cap;
pub mod strings;
pub mod summary;
pub mod tee;
pub mod view;
pub mod when;

pub use engine::{EngineConfig, LineEngine, Outcome};
pub use error::Error;
pub use log::{LogWriter, Stats};
