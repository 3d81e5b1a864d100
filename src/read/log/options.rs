//! What a reading of logs is asked for: the files, the filters that select events, the format
//! they are printed in, and the bounds on what is read. `--view`, `--summary`, the report and
//! MCP's tools all read through one [`ViewOptions`].

use std::fs::File;
use std::io::{self, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::Arc;

use regex::bytes::Regex;
use serde_json::Value;

use super::lines::{DecompressLimit, for_each_line_in};
use crate::cut::engine::EngineConfig;
use crate::read::events::is_error_event;
use crate::read::when::Instant;

/// How long a run whose writer is alive may go without an event before it reads `stalled`,
/// unless told (`--stall-after`, `stall_after_seconds`).
pub const STALL_AFTER: std::time::Duration = std::time::Duration::from_secs(120);

/// How events are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One readable line per event: time, type, gist.
    Text,
    /// One JSON log line per event.
    Jsonl,
    /// One JSON array of the events.
    Json,
    /// One self-contained HTML page: the summary, charts and the timeline.
    Html,
    /// `--summary`'s table of runs as CSV (RFC 4180).
    Csv,
}

/// What to show.
#[derive(Clone, Debug)]
pub struct ViewOptions {
    pub files: Vec<PathBuf>,
    pub head: Option<usize>,
    pub tail: Option<usize>,
    pub grep: Option<Regex>,
    pub types: Vec<String>,
    /// Event types left out (`--exclude-type`).
    pub exclude_types: Vec<String>,
    /// Only errors (`--errors`).
    pub errors: bool,
    /// Only events at or after / before this instant (`--since`, `--until`; see `when.rs`).
    pub since: Option<Instant>,
    pub until: Option<Instant>,
    pub format: Format,
    pub max_tokens: Option<usize>,
    /// The token estimate: bytes per token (default 3, which overestimates tokens for English
    /// text and code, so the budget holds).
    pub bytes_per_token: f64,
    pub follow: bool,
    /// Colour the text view by event kind (`--color`, on a terminal by default).
    pub color: bool,
    /// Cut text lines to this many columns (a terminal's width), if any.
    pub width: Option<usize>,
    /// Print one summary of the selected events instead of the events (`--summary`).
    pub summary: bool,
    /// The summary as a table of runs, one row each (`--by-run`).
    pub by_run: bool,
    /// `--line`: only the events on these lines of their file (inclusive ranges, from 1); all
    /// when empty.
    pub lines: Vec<(u64, u64)>,
    /// The engine for jsonl/json events (its budget is the per-line cap).
    pub engine: EngineConfig,
    /// Files already opened (by `smart-tee mcp`, confined to its roots): when set, the k-th is
    /// read instead of opening `files[k]` again, so that no path is resolved twice.
    pub opened: Vec<Arc<File>>,
    /// The bound on bytes decompressed from a compressed log.
    pub decompress: DecompressLimit,
    /// How long a run whose writer is alive may go without an event before its summary says
    /// `stalled` (`--stall-after`).
    pub stall_after: std::time::Duration,
}

impl ViewOptions {
    /// Options for `files` with every default (text, no filters, no budget).
    pub fn new(files: Vec<PathBuf>) -> ViewOptions {
        ViewOptions {
            files,
            head: None,
            tail: None,
            grep: None,
            types: Vec::new(),
            exclude_types: Vec::new(),
            errors: false,
            since: None,
            until: None,
            format: Format::Text,
            max_tokens: None,
            bytes_per_token: 3.0,
            follow: false,
            color: false,
            width: None,
            summary: false,
            by_run: false,
            lines: Vec::new(),
            engine: EngineConfig::default(),
            opened: Vec::new(),
            decompress: DecompressLimit::default(),
            stall_after: STALL_AFTER,
        }
    }

    /// The `k`-th file, opened: the descriptor given in [`ViewOptions::opened`] (at its
    /// start), else `files[k]` opened by its path.
    pub fn open(&self, k: usize) -> io::Result<File> {
        match self.opened.get(k) {
            Some(f) => {
                let mut f = f.try_clone()?;
                f.seek(SeekFrom::Start(0))?;
                Ok(f)
            }
            None => super::open_regular(&self.files[k]),
        }
    }

    /// Calls `each` with every whole line of the `k`-th file ([`for_each_line_in`]).
    pub(crate) fn for_each_line(
        &self,
        k: usize,
        each: impl FnMut(&[u8]) -> bool,
    ) -> io::Result<()> {
        for_each_line_in(self.open(k)?, &self.decompress, each)
    }

    /// The output budget in bytes, under `--max-tokens`.
    /// Whether `--line` selects line `n` of a file.
    pub(crate) fn on_line(&self, n: u64) -> bool {
        self.lines.is_empty() || self.lines.iter().any(|&(a, b)| a <= n && n <= b)
    }

    /// Whether events need their line numbers: for `#N` in the text view, or for `--line`.
    pub(crate) fn numbered(&self) -> bool {
        self.format == Format::Text || !self.lines.is_empty()
    }

    pub(crate) fn budget(&self) -> Option<usize> {
        self.max_tokens
            .map(|t| (t as f64 * self.bytes_per_token).floor() as usize)
    }

    /// Whether filters need the event parsed.
    fn parses(&self) -> bool {
        !self.types.is_empty()
            || !self.exclude_types.is_empty()
            || self.errors
            || self.since.is_some()
            || self.until.is_some()
    }

    /// Whether `line` is selected.
    pub fn wants(&self, line: &[u8]) -> bool {
        if line.iter().all(u8::is_ascii_whitespace) {
            return false;
        }
        if let Some(re) = &self.grep
            && !re.is_match(line)
        {
            return false;
        }
        if !self.parses() {
            return true;
        }
        let v = crate::read::events::parse(line).unwrap_or(Value::Null);
        if !self.types.is_empty() || !self.exclude_types.is_empty() {
            // Any level of the type the view prints (#50): `response_item`,
            // `function_call_output`, or `response_item/function_call_output`.
            let label = crate::read::gist::type_label(&v);
            let named = |t: &String| crate::read::gist::type_matches(t, &label);
            if !self.types.is_empty() && !self.types.iter().any(named) {
                return false;
            }
            if self.exclude_types.iter().any(named) {
                return false;
            }
        }
        if self.errors && !is_error_event(&v) {
            return false;
        }
        if self.since.is_some() || self.until.is_some() {
            let Some(t) = crate::read::when::event_instant(&v) else {
                // An event without a time cannot be placed: left out, and said once at the end.
                UNTIMED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                return false;
            };
            if self.since.is_some_and(|s| t < s) || self.until.is_some_and(|u| t >= u) {
                return false;
            }
        }
        true
    }
}

/// Events `--since`/`--until` left out for carrying no time.
pub(super) static UNTIMED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// What `--view` and `--summary` say of events without a time (`claude -p`'s stream has none).
pub const NO_TIME_NOTE: &str =
    "events without a time: log them with `smart-tee --add-timestamp` to give each one";

/// Sets the count of events left out for carrying no time back to `n`: what a second read
/// of the same events (`--view --max-tokens`) counted again.
pub fn count_untimed_as(n: u64) {
    UNTIMED.store(n, std::sync::atomic::Ordering::Relaxed);
}

/// How many events `--since`/`--until` left out so far for carrying no time.
pub fn untimed() -> u64 {
    UNTIMED.load(std::sync::atomic::Ordering::Relaxed)
}
