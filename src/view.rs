//! `--view`: reading logs back within a budget a reader can take, in bounded memory.
//!
//! Events (lines) are selected — `--head`/`--tail`, `--grep`, `--type`, `--exclude-type`,
//! `--errors`, `--since`/`--until` — then rendered one per line: `jsonl` as log lines (through
//! the engine, so each is valid JSON within a line budget), `json` as one array of them, `text`
//! as one readable line each (`gist.rs`), with control characters escaped.
//!
//! Memory stays bounded whatever the file size: without limits events are printed as they are
//! read; `--head` stops early; `--tail` reads each file from its end; `--max-tokens` keeps only
//! the newest renders that fit (older ones are counted, not kept), and a first line says how
//! many were left out. An unfinished last line is a line in progress and is not shown.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use regex::bytes::Regex;
use serde_json::Value;

use crate::engine::{EngineConfig, LineEngine};
use crate::error::Error;
pub use crate::gist::gist;
use crate::gist::{time_of, type_and_gist};
use crate::log::LINE_CAP;
use crate::split::{Piece, Splitter};

/// How events are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One readable line per event: time, type, gist.
    Text,
    /// One JSON log line per event.
    Jsonl,
    /// One JSON array of the events.
    Json,
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
    /// Only events at or after / before this time (`YYYY-MM-DD HH:MM:SS`, a prefix of it).
    pub since: Option<String>,
    pub until: Option<String>,
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
    /// The engine for jsonl/json events (its budget is the per-line cap).
    pub engine: EngineConfig,
    /// `--line`: only the events on these lines (inclusive ranges, from 1); all when empty.
    pub lines: Vec<(u64, u64)>,
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
            engine: EngineConfig::default(),
            lines: Vec::new(),
        }
    }

    /// Whether `--line` selects line `n` of a file (hook: archive numbering).
    fn on_line(&self, n: u64) -> bool {
        self.lines.is_empty() || self.lines.iter().any(|&(a, b)| a <= n && n <= b)
    }

    /// The output budget in bytes, under `--max-tokens`.
    fn budget(&self) -> Option<usize> {
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
        let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
        if !self.types.is_empty() && !self.types.iter().any(|t| t == kind) {
            return false;
        }
        if self.exclude_types.iter().any(|t| t == kind) {
            return false;
        }
        if self.errors && !is_error_event(&v) {
            return false;
        }
        if self.since.is_some() || self.until.is_some() {
            let Some(t) = time_of(&v) else {
                return false; // an event without a time cannot be placed
            };
            let t = &t[..t.len().min(19)];
            let cmp = |bound: &str| t.cmp(&bound[..bound.len().min(t.len())]);
            if self.since.as_deref().is_some_and(|s| cmp(s).is_lt()) {
                return false;
            }
            if self.until.as_deref().is_some_and(|u| cmp(u).is_ge()) {
                return false;
            }
        }
        true
    }
}

/// A user's time bound as the view writes times: `2026-11-20T10:00Z` → `2026-11-20 10:00`.
pub fn normalize_time(s: &str) -> String {
    s.trim()
        .trim_end_matches('Z')
        .replace('T', " ")
        .chars()
        .take(19)
        .collect()
}

/// True for an event that reports a failure, in any agent's stream: `is_error`, an `error`
/// (top level, or in a Codex item or an opencode part), an error type or subtype, a failed
/// status, a non-zero exit code, or a tool result flagged as an error.
pub fn is_error_event(v: &Value) -> bool {
    let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
    let sub = v.get("subtype").and_then(Value::as_str).unwrap_or("");
    if matches!(kind, "error" | "turn.failed") || sub.starts_with("error") {
        return true;
    }
    let inner = [
        Some(v),
        v.get("item"),
        v.get("payload"),
        v.pointer("/part/state"),
        v.get("message"),
    ];
    for x in inner.into_iter().flatten() {
        if x.get("is_error") == Some(&Value::Bool(true)) {
            return true;
        }
        if x.get("error").is_some_and(|e| !e.is_null() && e != "") {
            return true;
        }
        if matches!(
            x.get("status").and_then(Value::as_str),
            Some("error" | "failed")
        ) {
            return true;
        }
        if x.get("exit_code")
            .or_else(|| x.get("exitCode"))
            .and_then(Value::as_i64)
            .is_some_and(|c| c != 0)
        {
            return true;
        }
    }
    let blocks = v.pointer("/message/content").and_then(Value::as_array);
    blocks.is_some_and(|b| {
        b.iter()
            .any(|c| c.get("is_error") == Some(&Value::Bool(true)))
    })
}

/// The least per-event cap under `--max-tokens`.
const MIN_EVENT_CAP: usize = 256;

/// Under `--max-tokens` each event gets at most this share of the budget, so that several fit.
const SHARES: usize = 8;

/// The most bytes an event gets under a budget: an eighth of it, so that several fit, or
/// [`MIN_EVENT_CAP`], but never more than one event with the first line can have.
fn event_cap(budget: usize, format: Format) -> usize {
    (budget / SHARES)
        .max(MIN_EVENT_CAP)
        .min(budget.saturating_sub(overhead(format, 1)))
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
    let cap = budget.saturating_sub(overhead(format, seen)) / seen;
    let all_shown = first.kept.len() == seen;
    (cap > event_cap(budget, format) || !all_shown && cap > 0).then_some(cap)
}

/// Lines of a file from its end, read in blocks: only what is returned is read.
pub struct ReverseLines {
    file: File,
    /// File offset of the start of `buf`.
    pos: u64,
    buf: Vec<u8>,
    pub bytes_read: u64,
}

impl ReverseLines {
    /// Opens `path` at the end of its last whole line: an unfinished last line is a line in
    /// progress (or torn by a kill), not an event.
    pub fn open(path: &Path) -> io::Result<ReverseLines> {
        let file = File::open(path)?;
        let pos = crate::sink::whole_lines_len(&file)?;
        Ok(ReverseLines {
            file,
            pos,
            buf: Vec::new(),
            bytes_read: 0,
        })
    }

    /// The previous line (without its newline), or None at the start of the file.
    pub fn prev(&mut self) -> io::Result<Option<Vec<u8>>> {
        loop {
            // A trailing newline ends the last line; it does not start an empty one.
            let end = if self.buf.last() == Some(&b'\n') {
                self.buf.len() - 1
            } else {
                self.buf.len()
            };
            if let Some(nl) = memchr::memrchr(b'\n', &self.buf[..end]) {
                let line = self.buf[nl + 1..end].to_vec();
                self.buf.truncate(nl + 1);
                return Ok(Some(line));
            }
            if self.pos == 0 {
                if end == 0 && self.buf.is_empty() {
                    return Ok(None);
                }
                let line = self.buf[..end].to_vec();
                self.buf.clear();
                return Ok(Some(line));
            }
            let n = self.pos.min(64 * 1024);
            self.pos -= n;
            self.file.seek(SeekFrom::Start(self.pos))?;
            let mut block = vec![0u8; n as usize];
            self.file.read_exact(&mut block)?;
            self.bytes_read += n;
            block.extend_from_slice(&self.buf);
            self.buf = block;
        }
    }
}

fn read_error(path: &Path, source: io::Error) -> Error {
    Error::ReadLog {
        path: path.to_owned(),
        source,
    }
}

/// A log's bytes: decompressed when it is gzip or zstd (told by its first bytes, whatever its
/// name), else its whole lines (an unfinished last line is in progress). True when compressed.
fn open_log(path: &Path) -> io::Result<(Box<dyn Read>, bool)> {
    let mut file = File::open(path)?;
    let mut magic = [0u8; 4];
    let mut n = 0;
    while n < 4 {
        match file.read(&mut magic[n..])? {
            0 => break,
            k => n += k,
        }
    }
    file.seek(SeekFrom::Start(0))?;
    if n >= 2 && magic[..2] == [0x1f, 0x8b] {
        let gz = flate2::read::MultiGzDecoder::new(io::BufReader::new(file));
        return Ok((Box::new(gz), true));
    }
    if n == 4 && magic == [0x28, 0xb5, 0x2f, 0xfd] {
        let zst = ruzstd::decoding::StreamingDecoder::new(io::BufReader::new(file))
            .map_err(io::Error::other)?;
        return Ok((Box::new(zst), true));
    }
    let whole = crate::sink::whole_lines_len(&file)?;
    Ok((Box::new(file.take(whole)), false))
}

/// True when `path` is a gzip or zstd file.
fn is_compressed(path: &Path) -> bool {
    open_log(path).is_ok_and(|(_, compressed)| compressed)
}

/// Calls `each` with every whole line of `path` in order (decompressed), until it returns false.
/// A line past [`LINE_CAP`] is given as its first `LINE_CAP` bytes; an unfinished last line is
/// left out.
pub fn for_each_line(path: &Path, mut each: impl FnMut(&[u8]) -> bool) -> io::Result<()> {
    let (mut reader, _) = open_log(path)?;
    let mut lines = Splitter::new(LINE_CAP);
    let mut long = Vec::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        let mut at = 0;
        while let Some(piece) = lines.next(&buf[..n], &mut at) {
            let line = match piece {
                Piece::Line(line) => line,
                Piece::Start(first) => {
                    long = first.to_vec();
                    continue;
                }
                Piece::Part(_) => continue,
                Piece::End(_) => &long[..],
            };
            if !each(line) {
                return Ok(());
            }
        }
    }
}

/// Renders events: one line each, within a per-event cap.
pub struct Renderer<'a> {
    opts: &'a ViewOptions,
    /// Cuts jsonl/json events to the per-event cap.
    engine: LineEngine,
    /// Cuts events for the text gist: generously, so that a gist has content whatever the cap.
    gist_engine: LineEngine,
    cap: usize,
    /// A time column is being printed: events without a time leave it blank.
    timed: bool,
    /// The line number of the event rendered next, shown as `#N` in the text view.
    pub number: Option<u64>,
}

impl<'a> Renderer<'a> {
    pub fn new(opts: &'a ViewOptions) -> Renderer<'a> {
        let cap = opts
            .budget()
            .map_or(usize::MAX, |b| event_cap(b, opts.format));
        Renderer::with_cap(opts, cap)
    }

    /// A renderer whose events get at most `cap` bytes.
    fn with_cap(opts: &'a ViewOptions, cap: usize) -> Renderer<'a> {
        let mut engine_config = opts.engine.clone();
        if cap != usize::MAX {
            let floor = engine_config.min_budget();
            engine_config.max_line_bytes = if engine_config.max_line_bytes == 0 {
                cap.max(floor)
            } else {
                engine_config.max_line_bytes.min(cap).max(floor)
            };
        }
        let gist_config = EngineConfig {
            max_line_bytes: crate::engine::DEFAULT_BUDGET,
            ..opts.engine.clone()
        };
        Renderer {
            opts,
            engine: LineEngine::new(engine_config),
            gist_engine: LineEngine::new(gist_config),
            cap,
            timed: false,
            number: None,
        }
    }

    /// One event of file number `file`, without a newline.
    pub fn render(&mut self, file: usize, line: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        match self.opts.format {
            Format::Jsonl | Format::Json => self.render_json(line, &mut out),
            Format::Text => self.render_text(file, line, &mut out),
        }
        out
    }

    fn render_json(&mut self, line: &[u8], out: &mut Vec<u8>) {
        self.engine.process(line, out);
        if out.last() == Some(&b'\n') {
            out.pop();
        }
        // With --grep, a match the cut took away is shown beside the event.
        let Some(re) = &self.opts.grep else { return };
        if re.is_match(out) || !out.ends_with(b"}") {
            return;
        }
        let Some(context) = match_context(re, line) else {
            return;
        };
        let mut member = b",\"_match\":\"".to_vec();
        crate::marker::escape_str(&context, &mut member);
        member.extend_from_slice(b"\"}");
        // Cut the event again with room for the member, then add it.
        let room = self.engine.config().max_line_bytes;
        if room != 0 && room < member.len() + 128 {
            return;
        }
        out.clear();
        let mut config = self.engine.config().clone();
        if config.max_line_bytes != 0 {
            config.max_line_bytes -= member.len();
        }
        LineEngine::new(config).process(line, out);
        if out.last() == Some(&b'\n') {
            out.pop();
        }
        if out.ends_with(b"}") && out.len() > 2 {
            out.pop();
            if out.last() == Some(&b'{') {
                member.remove(0); // no comma in an empty object
            }
            out.extend_from_slice(&member);
        }
    }

    fn render_text(&mut self, file: usize, line: &[u8], out: &mut Vec<u8>) {
        let mut cut = Vec::new();
        self.gist_engine.process(line, &mut cut);
        let v: Value = serde_json::from_slice(&cut).unwrap_or(Value::Null);
        let (time, kind, rest) = type_and_gist(&v);
        let mut text = String::new();
        if self.opts.files.len() > 1 {
            let name = self.opts.files[file]
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            text.push_str(&name);
            text.push_str(": ");
        }
        if let Some(n) = self.number.take() {
            text.push_str(&format!("#{n} "));
        }
        match time {
            Some(t) => {
                self.timed = true;
                text.push_str(&t);
                text.push(' ');
            }
            None if self.timed => text.push_str(&" ".repeat(20)),
            None => {}
        }
        let head_len = text.len();
        text.push_str(&kind);
        if !rest.is_empty() {
            text.push(' ');
            text.push_str(&rest);
        }
        if let Some(re) = &self.opts.grep
            && !re.is_match(text.as_bytes())
            && let Some(context) = match_context(re, line)
        {
            text.push_str(&format!(" [match: {context}]"));
        }
        let mut text = escape_controls(&text);
        let limit = self.cap.min(self.opts.width.unwrap_or(usize::MAX));
        if text.len() > limit {
            let end = floor_char(&text, limit.saturating_sub(3));
            text.truncate(end);
            text.push('…');
        }
        if self.opts.color {
            colorize(&text, head_len.min(text.len()), kind.len(), &v, out);
        } else {
            out.extend_from_slice(text.as_bytes());
        }
    }
}

/// About 80 bytes around the first match of `re` in `line`, on character boundaries.
fn match_context(re: &Regex, line: &[u8]) -> Option<String> {
    let m = re.find(line)?;
    let text = String::from_utf8_lossy(line);
    let (start, end) = (m.start().saturating_sub(40), (m.end() + 40).min(line.len()));
    let start = ceil_char(&text, start.min(text.len()));
    let end = floor_char(&text, end.min(text.len()));
    let mut s = String::new();
    if start > 0 {
        s.push('…');
    }
    s.push_str(&text[start..end.max(start)]);
    if end < text.len() {
        s.push('…');
    }
    Some(s)
}

fn floor_char(s: &str, at: usize) -> usize {
    let mut i = at.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char(s: &str, at: usize) -> usize {
    let mut i = at.min(s.len());
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Text made safe for a terminal: control characters (C0, DEL, C1) become visible escapes
/// (`\e`, `\r`, `\t`, `\n`, `\x07`, `\u{9b}`), so nothing in a log can clear a screen, set a
/// title or colour the output.
pub fn escape_controls(s: &str) -> String {
    if !s.chars().any(is_control) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '\x1b' => out.push_str("\\e"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 || c == '\x7f' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if is_control(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

fn is_control(c: char) -> bool {
    c.is_control()
}

/// Writes a text line with ANSI colours: the time dim, the type by its kind, errors red.
fn colorize(text: &str, head_len: usize, kind_len: usize, v: &Value, out: &mut Vec<u8>) {
    const DIM: &str = "\x1b[2m";
    const RESET: &str = "\x1b[0m";
    let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
    let color = if is_error_event(v) {
        "\x1b[31m" // red
    } else {
        match kind {
            "assistant" | "message" | "text" => "\x1b[1m", // bold
            "user" | "tool_result" => "\x1b[32m",          // green
            "tool_use" | "tool_call" | "item.started" | "item.completed" => "\x1b[36m", // cyan
            "result" | "turn.completed" | "complete" => "\x1b[35m", // magenta
            _ => DIM,
        }
    };
    let kind_end = (head_len + kind_len).min(text.len());
    let (head, rest) = text.split_at(floor_char(text, head_len));
    let (k, rest) = rest.split_at(floor_char(rest, kind_end - head.len()));
    if !head.is_empty() {
        out.extend_from_slice(format!("{DIM}{head}{RESET}").as_bytes());
    }
    out.extend_from_slice(format!("{color}{k}{RESET}").as_bytes());
    if is_error_event(v) {
        out.extend_from_slice(format!("{color}{rest}{RESET}").as_bytes());
    } else {
        out.extend_from_slice(rest.as_bytes());
    }
}

/// The line that says what was left out.
fn omitted_line(format: Format, omitted: usize) -> Vec<u8> {
    let text = format!("… {omitted} earlier events omitted");
    match format {
        Format::Text => text.into_bytes(),
        _ => format!("{{\"type\":\"omitted\",\"text\":\"{text}\"}}").into_bytes(),
    }
}

/// Room kept for the first line and the punctuation under a budget.
fn overhead(format: Format, kept: usize) -> usize {
    omitted_line(format, usize::MAX).len() + 1 + 2 + kept
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
        while self.used + overhead(self.format, self.kept.len()) > self.budget {
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
                w = w.better(select(&mut Renderer::with_cap(opts, cap)));
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

/// Runs `--view`. Returns false when a file could not be read (reported, and the others
/// shown).
pub fn run(opts: &ViewOptions) -> Result<bool, Error> {
    let problems = run_to(opts, io::stdout().lock())?;
    for p in &problems {
        eprintln!("smart-tee: {p}");
    }
    Ok(problems.is_empty())
}

/// Runs `--view` into `out`. Returns what went wrong with files that could not be read (the
/// others are shown).
pub fn run_to<W: Write>(opts: &ViewOptions, out: W) -> Result<Vec<String>, Error> {
    if opts.summary {
        return summarize(opts, out);
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
    let mut ok = Vec::new();
    let failed = |path: &Path, e: io::Error, ok: &mut Vec<String>| {
        if opts.follow && e.kind() == io::ErrorKind::NotFound {
            return; // followed: waited for
        }
        ok.push(read_error(path, e).to_string());
    };
    if let Some(budget) = opts.budget() {
        // The newest events that fit, in bounded memory; with --head, the first N of them.
        let select = |r: &mut Renderer, ok: &mut Vec<String>, limit: usize| {
            let mut w = Window::new(budget, opts.format);
            let mut seen = 0;
            for (k, path) in opts.files.iter().enumerate() {
                let mut number = 0;
                let res = for_each_line(path, |line| {
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
            let (again, _) = select(&mut Renderer::with_cap(opts, cap), &mut Vec::new(), seen);
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
        // From the end of each file, the last file first.
        let mut events: Vec<(usize, u64, Vec<u8>)> = Vec::new();
        'files: for (k, path) in opts.files.iter().enumerate().rev() {
            if events.len() == n {
                break 'files;
            }
            if is_compressed(path) {
                // No seeking in a compressed log: read forward, keeping the last N.
                let mut last: VecDeque<(u64, Vec<u8>)> = VecDeque::new();
                let mut number = 0;
                let res = for_each_line(path, |line| {
                    number += 1;
                    if opts.on_line(number) && opts.wants(line) {
                        if last.len() == n - events.len() {
                            last.pop_front();
                        }
                        last.push_back((number, line.to_vec()));
                    }
                    true
                });
                if let Err(e) = res {
                    failed(path, e, &mut ok);
                }
                events.extend(last.into_iter().rev().map(|(m, l)| (k, m, l)));
                if events.len() == n {
                    break 'files;
                }
                continue;
            }
            let mut lines = match ReverseLines::open(path) {
                Ok(l) => l,
                Err(e) => {
                    failed(path, e, &mut ok);
                    continue;
                }
            };
            // The last whole line's number, counted down from (`#N` in the text view).
            let mut number = File::open(path)
                .and_then(|f| {
                    let whole = crate::sink::whole_lines_len(&f)?;
                    count_lines(&f, whole)
                })
                .unwrap_or(0);
            loop {
                if events.len() == n {
                    break 'files;
                }
                match lines.prev() {
                    Ok(Some(line)) => {
                        if opts.on_line(number) && opts.wants(&line) {
                            events.push((k, number, line));
                        }
                        number = number.saturating_sub(1);
                    }
                    Ok(None) => break,
                    Err(e) => {
                        failed(path, e, &mut ok);
                        break;
                    }
                }
            }
        }
        for (k, number, line) in events.iter().rev() {
            r.number = Some(*number);
            printer.event(&r.render(*k, line)).map_err(write_err)?;
        }
    } else {
        // In order, printed as read: --head stops after N events across all files.
        let mut shown = 0;
        let mut out_err = None;
        'all: for (k, path) in opts.files.iter().enumerate() {
            let mut number = 0;
            let res = for_each_line(path, |line| {
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

/// `--summary`: one pass over the selected events of every file, then one screen (text) or
/// one JSON object, cut to `--max-tokens`.
fn summarize<W: Write>(opts: &ViewOptions, mut stdout: W) -> Result<Vec<String>, Error> {
    let mut summary = crate::summary::Summary::default();
    let mut ok = Vec::new();
    for path in &opts.files {
        let res = for_each_line(path, |line| {
            if opts.wants(line) {
                summary.add(line);
            }
            true
        });
        if let Err(e) = res {
            ok.push(read_error(path, e).to_string());
        }
    }
    let budget = opts.budget().unwrap_or(usize::MAX);
    let mut out = match opts.format {
        Format::Text => summary.to_text(),
        _ => {
            let mut v = summary.to_json();
            for list in ["first_errors", "files_written", "tools"] {
                if serde_json::to_string(&v).map_or(0, |s| s.len()) < budget {
                    break;
                }
                v[list] = Value::Null;
            }
            serde_json::to_string(&v).unwrap_or_default() + "\n"
        }
    };
    if out.len() > budget {
        // Whole lines that fit, the last one saying so.
        let end = out[..floor_char(&out, budget.saturating_sub(20))]
            .rfind('\n')
            .map_or(0, |p| p + 1);
        out.truncate(end);
        out.push_str("… (cut to fit)\n");
    }
    stdout
        .write_all(escape_controls_keep_newlines(&out).as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|source| Error::WriteStdout { source })?;
    Ok(ok)
}

fn escape_controls_keep_newlines(s: &str) -> String {
    s.split('\n')
        .map(escape_controls)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A file being followed.
struct Followed {
    path: PathBuf,
    /// Bytes read, and the file's identity when they were.
    pos: u64,
    ino: Option<u64>,
    /// Whole lines read so far (a compaction keeps them all, rewritten).
    lines: u64,
    pending: Splitter,
}

impl Followed {
    /// Following from the end of the file's whole lines (or from its start once it appears).
    fn at_end(path: &Path) -> Followed {
        let (pos, ino, lines) = match File::open(path) {
            Ok(f) => {
                let pos = crate::sink::whole_lines_len(&f).unwrap_or(0);
                let ino = f.metadata().ok().map(|m| m.ino());
                (pos, ino, count_lines(&f, pos).unwrap_or(0))
            }
            Err(_) => (0, None, 0),
        };
        Followed {
            path: path.to_owned(),
            pos,
            ino,
            lines,
            pending: Splitter::new(LINE_CAP),
        }
    }
}

fn count_lines(f: &File, upto: u64) -> io::Result<u64> {
    let mut r = f.try_clone()?;
    r.seek(SeekFrom::Start(0))?;
    let mut r = r.take(upto);
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0;
    loop {
        let k = r.read(&mut buf)?;
        if k == 0 {
            return Ok(n);
        }
        n += memchr::memchr_iter(b'\n', &buf[..k]).count() as u64;
    }
}

/// `--follow`: polls every 200 ms and prints each new finished event. A file that does not
/// exist yet, or is deleted, is waited for (like `tail -F`). A file replaced by a compaction
/// (a new file holding at least the lines already read) goes on after those lines; a file
/// replaced otherwise (rotation) or truncated is read from its start. Ends when stdout's
/// reader goes away.
fn follow_files<W: Write>(
    opts: &ViewOptions,
    files: &mut [Followed],
    r: &mut Renderer,
    printer: &mut Printer<W>,
) -> Result<(), Error> {
    let write_err = |source: io::Error| Error::WriteStdout { source };
    loop {
        for (k, f) in files.iter_mut().enumerate() {
            let Ok(file) = File::open(&f.path) else {
                continue; // not there (yet, or any more): wait
            };
            let Ok(meta) = file.metadata() else { continue };
            let (len, ino) = (meta.len(), meta.ino());
            if f.ino.is_some_and(|i| i != ino) {
                // Replaced: a compaction keeps every line already read; anything else is new.
                let whole = crate::sink::whole_lines_len(&file).unwrap_or(0);
                let lines = count_lines(&file, whole).unwrap_or(0);
                if lines >= f.lines && f.lines > 0 {
                    f.pos = skip_lines(&file, f.lines).unwrap_or(whole);
                } else {
                    f.pos = 0;
                    f.lines = 0;
                }
                f.pending = Splitter::new(LINE_CAP);
            } else if len < f.pos {
                // Truncated: read again from the start, with nothing pending.
                f.pos = 0;
                f.lines = 0;
                f.pending = Splitter::new(LINE_CAP);
            }
            f.ino = Some(ino);
            if len == f.pos {
                continue;
            }
            let mut reader = file;
            reader
                .seek(SeekFrom::Start(f.pos))
                .map_err(|e| read_error(&f.path, e))?;
            let mut chunk = Vec::new();
            reader
                .take(len - f.pos)
                .read_to_end(&mut chunk)
                .map_err(|e| read_error(&f.path, e))?;
            f.pos += chunk.len() as u64;
            let mut at = 0;
            let mut done = Vec::new();
            while let Some(piece) = f.pending.next(&chunk, &mut at) {
                // A line past the cap while following is left out, like a torn one.
                if let Piece::Line(line) = piece {
                    f.lines += 1;
                    if opts.on_line(f.lines) && opts.wants(line) {
                        r.number = Some(f.lines);
                        done.push(r.render(k, line));
                    }
                }
            }
            for e in &done {
                printer.event(e).map_err(write_err)?;
            }
            if !done.is_empty() {
                printer.out.flush().map_err(write_err)?;
            }
        }
        if stdout_gone() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The offset just past the first `n` lines of the file.
fn skip_lines(f: &File, n: u64) -> io::Result<u64> {
    let mut r = f.try_clone()?;
    r.seek(SeekFrom::Start(0))?;
    let mut buf = vec![0u8; 1 << 20];
    let (mut seen, mut pos) = (0u64, 0u64);
    loop {
        let k = r.read(&mut buf)?;
        if k == 0 {
            return Ok(pos);
        }
        for nl in memchr::memchr_iter(b'\n', &buf[..k]) {
            seen += 1;
            if seen == n {
                return Ok(pos + nl as u64 + 1);
            }
        }
        pos += k as u64;
    }
}

/// True when stdout is a pipe or socket whose reader has gone (`--follow | head -1`), seen
/// without writing: poll reports an error or hang-up on it.
fn stdout_gone() -> bool {
    use rustix::event::{PollFd, PollFlags, poll};
    let stdout = rustix::stdio::stdout();
    let mut fds = [PollFd::new(&stdout, PollFlags::OUT)];
    match poll(&mut fds, Some(&rustix::event::Timespec::default())) {
        Ok(_) => fds[0].revents().intersects(PollFlags::ERR | PollFlags::HUP),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reverse_lines_reads_only_the_end() {
        let dir = std::env::temp_dir().join(format!("smart-tee-rev-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("big.jsonl");
        let mut f = File::create(&path).unwrap();
        let line = format!("{{\"n\":\"{}\"}}\n", "x".repeat(1000));
        for _ in 0..20_000 {
            f.write_all(line.as_bytes()).unwrap();
        }
        f.write_all(b"{\"last\":1}\n{\"last\":2}\n{\"in progress")
            .unwrap();
        drop(f);
        let mut r = ReverseLines::open(&path).unwrap();
        // The unfinished last line is not an event yet.
        assert_eq!(r.prev().unwrap().unwrap(), b"{\"last\":2}");
        assert_eq!(r.prev().unwrap().unwrap(), b"{\"last\":1}");
        assert_eq!(r.prev().unwrap().unwrap(), line.trim_end().as_bytes());
        assert!(r.bytes_read <= 64 * 1024, "read {} of 20 MB", r.bytes_read);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn gists_are_readable() {
        let tool = serde_json::json!({"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"cargo test\nmore"}}]}});
        assert_eq!(gist(&tool), "assistant tool_use Bash command=cargo test…");
        let result = serde_json::json!({"type":"user","timestamp":"2026-02-11T21:41:51.877Z","message":{"content":[{"type":"tool_result","is_error":true,"content":"error: boom\nmore"}]}});
        assert_eq!(
            gist(&result),
            "2026-02-11 21:41:51 user tool_result ERROR 16B: error: boom…"
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
            assert!(w.used + overhead(Format::Jsonl, w.kept.len()) <= 10_000);
        }
        assert_eq!(w.dropped + w.kept.len(), 100_000);
        assert!(
            w.kept.back().unwrap().starts_with(b"{\"n\":99999,"),
            "the newest stay"
        );
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(
            escape_controls("a\u{1b}[2J\u{1b}]0;pwned\u{7}\r\tb\u{9b}c"),
            "a\\e[2J\\e]0;pwned\\x07\\r\\tb\\u{9b}c"
        );
        assert_eq!(escape_controls("plain é"), "plain é");
    }
}
