//! `--view`: reading logs back within a budget a reader can take, in bounded memory.
//!
//! Events (lines) are selected — `--head`/`--tail`, `--grep`, `--type`, `--exclude-type`,
//! `--errors`, `--since`/`--until` — then rendered one per line: `jsonl` as log lines (through
//! the engine, so each is valid JSON within a line budget), `json` as one array of them, `text`
//! as one readable line each (`gist/`). Whatever a log holds is inert on a terminal: control,
//! bidi and zero-width characters are escaped in every format (`render.rs`).
//!
//! Memory stays bounded whatever the file size: without limits events are printed as they are
//! read; `--head` stops early; `--tail` reads each file from its end (`read.rs`);
//! `--max-tokens` keeps only the newest renders that fit (older ones are counted, not kept),
//! and a first line says how many were left out; `--follow` reads new bytes in blocks
//! (`follow.rs`). An unfinished last line of a plain log is a line in progress and is not
//! shown; a compressed log is finished, and its last line is a line (`read.rs`).

mod follow;
mod html;
mod html_md;
mod html_page;
mod html_row;
mod read;
mod render;
mod retracted;
mod stdin;

pub use crate::read::events::is_error_event;
pub use stdin::{is_stdin, spool as spool_stdin};

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use regex::bytes::Regex;
use serde_json::Value;

use crate::cut::engine::EngineConfig;
use crate::error::Error;
pub use crate::read::gist::gist;
use crate::read::when::Instant;
use follow::{Followed, follow_files};
pub use html_page::grouped;
use read::read_error;
pub use read::{
    Compression, DecompressLimit, ReverseLines, for_each_line, for_each_line_in, is_compressed,
    open_log,
};
pub use render::{
    Renderer, escape_controls, inert_json, is_unsafe_char, progress_renderer, strip_sgr,
};

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
            stall_after: crate::read::summary::STALL_AFTER,
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
            None => File::open(&self.files[k]),
        }
    }

    /// Calls `each` with every whole line of the `k`-th file ([`for_each_line_in`]).
    fn for_each_line(&self, k: usize, each: impl FnMut(&[u8]) -> bool) -> io::Result<()> {
        for_each_line_in(self.open(k)?, &self.decompress, each)
    }

    /// The output budget in bytes, under `--max-tokens`.
    /// Whether `--line` selects line `n` of a file.
    pub(crate) fn on_line(&self, n: u64) -> bool {
        self.lines.is_empty() || self.lines.iter().any(|&(a, b)| a <= n && n <= b)
    }

    /// Whether events need their line numbers: for `#N` in the text view, or for `--line`.
    fn numbered(&self) -> bool {
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
        let v: Value = serde_json::from_slice(line).unwrap_or(Value::Null);
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

/// The least per-event cap under `--max-tokens`.
const MIN_EVENT_CAP: usize = 256;

/// Under `--max-tokens` each event gets at most this share of the budget, so that several fit.
const SHARES: usize = 8;

/// The most bytes an event gets under a budget: an eighth of it, so that several fit, or
/// [`MIN_EVENT_CAP`], but never more than one event with the first line can have.
pub(crate) fn event_cap(budget: usize, format: Format) -> usize {
    (budget / SHARES)
        .max(MIN_EVENT_CAP)
        .min(budget.saturating_sub(overhead(format, 1, true)))
}

/// When fewer events than [`SHARES`] were selected, the cap with which they share the budget
/// among themselves only, if it differs from the first: larger when all of them were shown (a
/// log of a few long events fills the budget too), smaller when the least cap left some out
/// (a small budget shows them all, cut). They are rendered again with it, and the better of
/// the two selections is shown ([`Window::better`]).
fn few_events_cap(budget: usize, format: Format, first: &Window, seen: usize) -> Option<usize> {
    if seen == 0 || seen >= SHARES {
        return None;
    }
    // All of them shown: no line says what was left out.
    let cap = budget.saturating_sub(overhead(format, seen, false)) / seen;
    let all_shown = first.kept.len() == seen;
    (cap > event_cap(budget, format) || !all_shown && cap > 0).then_some(cap)
}

/// The line that says what was left out.
fn omitted_line(format: Format, omitted: usize) -> Vec<u8> {
    let text = format!("… {omitted} earlier events omitted");
    match format {
        Format::Text => text.into_bytes(),
        _ => format!("{{\"type\":\"omitted\",\"text\":\"{text}\"}}").into_bytes(),
    }
}

/// Room kept under a budget for the punctuation of `kept` events and, when some are
/// `omitted`, the first line that says so.
fn overhead(format: Format, kept: usize, omitted: bool) -> usize {
    let first = if omitted {
        omitted_line(format, usize::MAX).len() + 1
    } else {
        0
    };
    first + 2 + kept
}

/// The newest renders that fit a budget, as events arrive oldest first: older ones are evicted
/// (and counted) as newer ones come, so memory is bounded by the budget.
struct Window {
    budget: usize,
    format: Format,
    kept: VecDeque<Vec<u8>>,
    used: usize,
    /// Events seen that are not kept.
    dropped: usize,
}

impl Window {
    fn new(budget: usize, format: Format) -> Window {
        Window {
            budget,
            format,
            kept: VecDeque::new(),
            used: 0,
            dropped: 0,
        }
    }

    /// Of two selections of the same events, the one that shows more of them, or more bytes.
    fn better(self, other: Window) -> Window {
        if (other.kept.len(), other.used) > (self.kept.len(), self.used) {
            other
        } else {
            self
        }
    }

    fn push(&mut self, render: Vec<u8>) {
        self.used += render.len();
        self.kept.push_back(render);
        while self.used + overhead(self.format, self.kept.len(), self.dropped > 0) > self.budget {
            let Some(old) = self.kept.pop_front() else {
                break;
            };
            self.used -= old.len();
            self.dropped += 1;
        }
    }
}

/// Where printed events go: one per line, or as one JSON array.
struct Printer<W: Write> {
    out: W,
    format: Format,
    printed: usize,
}

impl<W: Write> Printer<W> {
    fn start(&mut self) -> io::Result<()> {
        if self.format == Format::Json {
            self.out.write_all(b"[")?;
        }
        Ok(())
    }
    fn event(&mut self, render: &[u8]) -> io::Result<()> {
        if self.format == Format::Json && self.printed > 0 {
            self.out.write_all(b",")?;
        }
        self.out.write_all(render)?;
        if self.format != Format::Json {
            self.out.write_all(b"\n")?;
        }
        self.printed += 1;
        Ok(())
    }
    fn end(&mut self) -> io::Result<()> {
        if self.format == Format::Json {
            self.out.write_all(b"]\n")?;
        }
        self.out.flush()
    }
}

/// Renders `events` (file number and line, oldest first) as the options say, within
/// `--max-tokens`, into `out`.
pub fn render_events(events: &[Vec<u8>], opts: &ViewOptions, out: &mut Vec<u8>) {
    let mut r = Renderer::new(opts);
    for e in events {
        r.retracted.note(e);
    }
    let mut printer = Printer {
        out,
        format: opts.format,
        printed: 0,
    };
    let _ = printer.start();
    match opts.budget() {
        Some(budget) => {
            let select = |r: &mut Renderer| {
                let mut w = Window::new(budget, opts.format);
                for e in events {
                    w.push(r.render(0, e));
                }
                w
            };
            let mut w = select(&mut r);
            if let Some(cap) = few_events_cap(budget, opts.format, &w, events.len()) {
                let mut again = Renderer::with_cap(opts, cap);
                again.retracted = r.retracted.clone();
                w = w.better(select(&mut again));
            }
            if w.dropped > 0 {
                let _ = printer.event(&omitted_line(opts.format, w.dropped));
            }
            for e in &w.kept {
                let _ = printer.event(e);
            }
        }
        None => {
            for e in events {
                let _ = printer.event(&r.render(0, e));
            }
        }
    }
    let _ = printer.end();
}

/// Events `--since`/`--until` left out for carrying no time.
static UNTIMED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// What `--view` and `--summary` say of events without a time (`claude -p`'s stream has none).
pub const NO_TIME_NOTE: &str =
    "events without a time: log them with `smart-tee --add-timestamp` to give each one";

/// Runs `--view`. Returns false when a file could not be read (reported, and the others
/// shown).
pub fn run(opts: &ViewOptions) -> Result<bool, Error> {
    let problems = run_to(opts, crate::door::stdout())?;
    for p in &problems {
        crate::say!("smart-tee: {p}");
    }
    let untimed = UNTIMED.load(std::sync::atomic::Ordering::Relaxed);
    if untimed > 0 {
        crate::say!("smart-tee: {NO_TIME_NOTE} ({untimed} left out by --since/--until)");
    }
    Ok(problems.is_empty())
}

/// Runs `--view` into `out`. Returns what went wrong with files that could not be read (the
/// others are shown).
pub fn run_to<W: Write>(opts: &ViewOptions, out: W) -> Result<Vec<String>, Error> {
    if opts.summary {
        return crate::read::summary::summarize(opts, out);
    }
    if opts.format == Format::Html {
        return html::run(opts, out);
    }
    // Where following starts: taken before the first read, so that nothing written while the
    // selection is printed is missed (an event written in that moment may show twice).
    let mut follow: Vec<Followed> = Vec::new();
    if opts.follow {
        for p in &opts.files {
            follow.push(Followed::at_end(p));
        }
    }
    let mut printer = Printer {
        out: BufWriter::with_capacity(64 * 1024, out),
        format: opts.format,
        printed: 0,
    };
    let write_err = |source: io::Error| Error::WriteStdout { source };
    printer.start().map_err(write_err)?;
    let mut r = Renderer::new(opts);
    let tail_only = opts.tail.is_some() && opts.head.is_none() && opts.budget().is_none();
    if opts.format == Format::Text && !tail_only && opts.head != Some(0) && opts.tail != Some(0) {
        // The refusal comes after the messages it retracts: one search of the files first.
        r.retracted = retracted::Retracted::of_files(opts);
    }
    let mut ok = Vec::new();
    let failed = |path: &Path, e: io::Error, ok: &mut Vec<String>| {
        if opts.follow && e.kind() == io::ErrorKind::NotFound {
            return; // followed: waited for
        }
        ok.push(read_error(path, e).to_string());
    };
    if opts.head == Some(0) || opts.tail == Some(0) {
        // Zero events asked for: none shown.
    } else if let Some(budget) = opts.budget() {
        // The newest events that fit, in bounded memory; with --head, the first N of them.
        let select = |r: &mut Renderer, ok: &mut Vec<String>, limit: usize| {
            let mut w = Window::new(budget, opts.format);
            let mut seen = 0;
            for (k, path) in opts.files.iter().enumerate() {
                let mut number = 0;
                let res = opts.for_each_line(k, |line| {
                    number += 1;
                    if !opts.on_line(number) || !opts.wants(line) {
                        return true;
                    }
                    r.number = Some(number);
                    w.push(r.render(k, line));
                    seen += 1;
                    seen < limit
                });
                if let Err(e) = res {
                    failed(path, e, ok);
                }
                if seen >= limit {
                    break;
                }
            }
            (w, seen)
        };
        let limit = opts.head.unwrap_or(usize::MAX);
        let (mut w, seen) = select(&mut r, &mut ok, limit);
        // Fewer events than shares of the budget: read again, with the budget shared among
        // them only (the same events, should the files have grown meanwhile).
        if let Some(cap) = few_events_cap(budget, opts.format, &w, seen) {
            let mut again = Renderer::with_cap(opts, cap);
            again.retracted = r.retracted.clone();
            let (again, _) = select(&mut again, &mut Vec::new(), seen);
            w = w.better(again);
        }
        // With --tail N, only the last N events are candidates.
        let candidates = opts.tail.map_or(seen, |n| n.min(seen));
        while w.kept.len() > candidates {
            w.kept.pop_front();
        }
        let omitted = candidates - w.kept.len();
        if omitted > 0 {
            printer
                .event(&omitted_line(opts.format, omitted))
                .map_err(write_err)?;
        }
        for e in &w.kept {
            printer.event(e).map_err(write_err)?;
        }
    } else if let Some(n) = opts.tail.filter(|_| opts.head.is_none()) {
        let events = last_events(opts, n, &mut |path, e| failed(path, e, &mut ok));
        for (_, _, line) in &events {
            r.retracted.note(line);
        }
        for (k, number, line) in events.iter().rev() {
            r.number = *number;
            printer.event(&r.render(*k, line)).map_err(write_err)?;
        }
    } else {
        // In order, printed as read: --head stops after N events across all files.
        let mut shown = 0;
        let mut out_err = None;
        'all: for (k, path) in opts.files.iter().enumerate() {
            let mut number = 0;
            let res = opts.for_each_line(k, |line| {
                if opts.head.is_some_and(|h| shown >= h) {
                    return false;
                }
                number += 1;
                if opts.on_line(number) && opts.wants(line) {
                    r.number = Some(number);
                    if let Err(e) = printer.event(&r.render(k, line)) {
                        out_err = Some(e);
                        return false;
                    }
                    shown += 1;
                }
                true
            });
            if let Some(e) = out_err.take() {
                return Err(write_err(e));
            }
            if let Err(e) = res {
                failed(path, e, &mut ok);
            }
            if opts.head.is_some_and(|h| shown >= h) {
                break 'all;
            }
        }
    }
    printer.end().map_err(write_err)?;
    if !opts.follow {
        return Ok(ok);
    }
    follow_files(opts, &mut follow, &mut r, &mut printer)?;
    Ok(ok)
}

/// The last `n` selected events of the files (file number and line), newest first: each file
/// read from its end, the last file first; a compressed one, which cannot be read backward,
/// forward keeping the last ones.
fn last_events(
    opts: &ViewOptions,
    n: usize,
    failed: &mut dyn FnMut(&Path, io::Error),
) -> Vec<(usize, Option<u64>, Vec<u8>)> {
    let mut events: Vec<(usize, Option<u64>, Vec<u8>)> = Vec::new();
    for (k, path) in opts.files.iter().enumerate().rev() {
        if events.len() == n {
            break;
        }
        let file = match opts.open(k) {
            Ok(f) => f,
            Err(e) => {
                failed(path, e);
                continue;
            }
        };
        if is_compressed(&file).unwrap_or(false) {
            let mut last: VecDeque<(u64, Vec<u8>)> = VecDeque::new();
            let want = n - events.len();
            let mut number = 0;
            let res = for_each_line_in(file, &opts.decompress, |line| {
                number += 1;
                if opts.on_line(number) && opts.wants(line) {
                    if last.len() == want {
                        last.pop_front();
                    }
                    last.push_back((number, line.to_vec()));
                }
                true
            });
            if let Err(e) = res {
                failed(path, e);
            }
            events.extend(last.into_iter().rev().map(|(m, l)| (k, Some(m), l)));
            continue;
        }
        // The last whole line's number, counted down from: one count of the file's newlines
        // (memchr), paid only when events are numbered (text, or --line).
        let mut number = if opts.numbered() {
            crate::tee::sink::whole_lines_len(&file)
                .and_then(|whole| crate::tee::sink::count_newlines(&file, whole))
                .ok()
        } else {
            None
        };
        let mut lines = match ReverseLines::new(file) {
            Ok(l) => l,
            Err(e) => {
                failed(path, e);
                continue;
            }
        };
        while events.len() < n {
            match lines.prev() {
                Ok(Some(line)) => {
                    if number.is_none_or(|m| opts.on_line(m)) && opts.wants(&line) {
                        events.push((k, number, line));
                    }
                    number = number.map(|m| m.saturating_sub(1));
                }
                Ok(None) => break,
                Err(e) => {
                    failed(path, e);
                    break;
                }
            }
        }
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gists_are_readable() {
        let tool = serde_json::json!({"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"cargo test\nmore"}}]}});
        assert_eq!(gist(&tool), "assistant tool_use Bash command=cargo test…");
        let result = serde_json::json!({"type":"user","timestamp":"2026-02-11T21:41:51.877Z","message":{"content":[{"type":"tool_result","is_error":true,"content":"error: boom\nmore"}]}});
        // Sizes count the string's JSON text, as a cut marker does: `error: boom\nmore`.
        assert_eq!(
            gist(&result),
            "2026-02-11 21:41:51 user tool_result ERROR 17B: error: boom…"
        );
        let done = serde_json::json!({"type":"result","subtype":"success","total_cost_usd":0.1354875,"num_turns":1,"result":"4"});
        assert_eq!(gist(&done), "result/success cost $0.1355, 1 turns: 4");
    }

    /// #14.5: `--max-tokens` held every event in memory (100 MB of log took 308 MB). The window
    /// holds only what fits the budget, however many events pass through it.
    #[test]
    fn the_budget_window_holds_only_what_fits() {
        let mut w = Window::new(10_000, Format::Jsonl);
        for i in 0..100_000 {
            w.push(format!("{{\"n\":{i},\"pad\":\"{}\"}}", "x".repeat(i % 300)).into_bytes());
            assert!(w.used + overhead(Format::Jsonl, w.kept.len(), true) <= 10_000);
        }
        assert_eq!(w.dropped + w.kept.len(), 100_000);
        assert!(
            w.kept.back().unwrap().starts_with(b"{\"n\":99999,"),
            "the newest stay"
        );
    }
}
