//! `--view`: reading logs back within a budget a reader can take.
//!
//! Events (lines) are selected — `--head`/`--tail`, `--grep`, `--type` — then rendered one per
//! line: `jsonl` as log lines (through the engine, so each is valid JSON within a line budget),
//! `json` as one array of them, `text` as one readable line each. `--max-tokens` caps the whole
//! output: events are rendered with a per-event cap, the newest kept first, and a first line
//! says how many earlier events were left out. `--tail` reads a file from its end, so a
//! gigabyte log costs only the lines shown.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use regex::bytes::Regex;
use serde_json::Value;

use crate::engine::{EngineConfig, LineEngine};
use crate::error::Error;
pub use crate::gist::gist;
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
    pub format: Format,
    pub max_tokens: Option<usize>,
    /// The token estimate: bytes per token (default 3, which overestimates tokens for English
    /// text and code, so the budget holds).
    pub bytes_per_token: f64,
    pub follow: bool,
    /// The engine for jsonl/json events (its budget is the per-line cap).
    pub engine: EngineConfig,
}

/// The least per-event cap under `--max-tokens`.
const MIN_EVENT_CAP: usize = 256;

impl ViewOptions {
    fn wants(&self, line: &[u8]) -> bool {
        if line.iter().all(u8::is_ascii_whitespace) {
            return false;
        }
        if let Some(re) = &self.grep
            && !re.is_match(line)
        {
            return false;
        }
        self.types.is_empty()
            || self
                .types
                .iter()
                .any(|t| type_of(line).as_deref() == Some(t))
    }
}

/// The `type` of a JSON object line, looked for without parsing the whole line.
fn type_of(line: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(line).ok()?;
    v.get("type")?.as_str().map(str::to_owned)
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

/// The selected events, oldest first, and how many matching events came before them.
fn select(opts: &ViewOptions) -> Result<(Vec<Vec<u8>>, usize), Error> {
    let mut events = Vec::new();
    if let Some(n) = opts.tail.filter(|_| opts.head.is_none()) {
        // From the end: newest first, then reversed.
        'files: for path in opts.files.iter().rev() {
            let mut lines = ReverseLines::open(path).map_err(|e| read_error(path, e))?;
            while let Some(line) = lines.prev().map_err(|e| read_error(path, e))? {
                if events.len() == n {
                    break 'files;
                }
                if opts.wants(&line) {
                    events.push(line);
                }
            }
        }
        events.reverse();
        return Ok((events, 0));
    }
    'files: for path in &opts.files {
        let file = File::open(path).map_err(|e| read_error(path, e))?;
        // Whole lines only: an unfinished last line is in progress.
        let whole = crate::sink::whole_lines_len(&file).map_err(|e| read_error(path, e))?;
        let mut reader = file.take(whole);
        let mut lines = Splitter::new(LINE_CAP);
        let mut long = Vec::new();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = reader.read(&mut buf).map_err(|e| read_error(path, e))?;
            if n == 0 {
                break;
            }
            let mut at = 0;
            while let Some(piece) = lines.next(&buf[..n], &mut at) {
                // A line past the cap is shown by its first LINE_CAP bytes.
                let line = match piece {
                    Piece::Line(line) => line,
                    Piece::Start(first) => {
                        long = first.to_vec();
                        continue;
                    }
                    Piece::Part(_) => continue,
                    Piece::End(_) => &long[..],
                };
                if opts.wants(line) {
                    events.push(line.to_vec());
                }
                if opts.head.is_some_and(|h| events.len() >= h) {
                    break 'files;
                }
            }
        }
    }
    if let Some(n) = opts.tail {
        let skip = events.len().saturating_sub(n);
        events.drain(..skip);
    }
    Ok((events, 0))
}

/// Renders one event, in at most `cap` bytes when given (newline excluded).
fn render(engine: &mut LineEngine, format: Format, line: &[u8], cap: usize, out: &mut Vec<u8>) {
    match format {
        Format::Jsonl | Format::Json => {
            let start = out.len();
            engine.process(line, out);
            if out.len() > start && out.last() == Some(&b'\n') {
                out.pop();
            }
        }
        Format::Text => {
            let mut cut = Vec::new();
            engine.process(line, &mut cut);
            let v: Value = serde_json::from_slice(&cut).unwrap_or(Value::Null);
            let text = gist(&v);
            let end = floor_char(&text, cap);
            out.extend_from_slice(&text.as_bytes()[..end]);
        }
    }
}

fn floor_char(s: &str, at: usize) -> usize {
    let mut i = at.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The line that says what was left out.
fn omitted_line(format: Format, omitted: usize) -> Vec<u8> {
    let text = format!("… {omitted} earlier events omitted");
    match format {
        Format::Text => text.into_bytes(),
        _ => format!("{{\"type\":\"omitted\",\"text\":\"{text}\"}}").into_bytes(),
    }
}

/// Renders the selected events into `out` as the options say, within `--max-tokens`.
pub fn render_events(events: &[Vec<u8>], opts: &ViewOptions, out: &mut Vec<u8>) {
    let budget = opts
        .max_tokens
        .map(|t| (t as f64 * opts.bytes_per_token).floor() as usize);
    // Under a budget each event gets at most an eighth of it, so that several fit.
    let cap = budget.map_or(usize::MAX, |b| (b / 8).max(MIN_EVENT_CAP));
    let mut engine_config = opts.engine.clone();
    if cap != usize::MAX {
        let floor = engine_config.min_budget();
        engine_config.max_line_bytes = if engine_config.max_line_bytes == 0 {
            cap.max(floor)
        } else {
            engine_config.max_line_bytes.min(cap).max(floor)
        };
    }
    let mut engine = LineEngine::new(engine_config);
    let mut rendered: Vec<Vec<u8>> = Vec::with_capacity(events.len());
    for e in events {
        let mut r = Vec::new();
        render(&mut engine, opts.format, e, cap, &mut r);
        rendered.push(r);
    }
    // Keep the newest events that fit, with room for the first line and the punctuation.
    let mut keep = rendered.len();
    if let Some(b) = budget {
        let overhead = |kept: usize| {
            let header = if kept < rendered.len() {
                omitted_line(opts.format, rendered.len() - kept).len() + 2
            } else {
                0
            };
            header + 2 + kept // brackets and one separator per event
        };
        let mut used = 0;
        keep = 0;
        for r in rendered.iter().rev() {
            if used + r.len() + overhead(keep + 1) > b {
                break;
            }
            used += r.len();
            keep += 1;
        }
    }
    let first = rendered.len() - keep;
    let mut lines: Vec<&[u8]> = Vec::new();
    let header = omitted_line(opts.format, first);
    if first > 0 {
        lines.push(&header);
    }
    lines.extend(rendered[first..].iter().map(Vec::as_slice));
    match opts.format {
        Format::Json => {
            out.push(b'[');
            out.extend_from_slice(&lines.join(&b","[..]));
            out.extend_from_slice(b"]\n");
        }
        _ => {
            for l in lines {
                out.extend_from_slice(l);
                out.push(b'\n');
            }
        }
    }
}

/// Runs `--view`: prints the selection, then with `--follow` new events as they come.
pub fn run(opts: &ViewOptions) -> Result<(), Error> {
    // Where following starts: taken before the first read, so that nothing written while the
    // selection is printed is missed (an event written in that moment may show twice).
    let mut tails: Vec<(PathBuf, u64, Splitter)> = Vec::new();
    if opts.follow {
        for p in &opts.files {
            let file = File::open(p).map_err(|e| read_error(p, e))?;
            let len = crate::sink::whole_lines_len(&file).map_err(|e| read_error(p, e))?;
            tails.push((p.clone(), len, Splitter::new(LINE_CAP)));
        }
    }
    let (events, _) = select(opts)?;
    let mut out = Vec::new();
    render_events(&events, opts, &mut out);
    let stdout = io::stdout();
    let mut stdout = stdout.lock();
    let write = |w: &mut io::StdoutLock, b: &[u8]| {
        w.write_all(b)
            .and_then(|()| w.flush())
            .map_err(|source| Error::WriteStdout { source })
    };
    write(&mut stdout, &out)?;
    if !opts.follow {
        return Ok(());
    }
    // Follow: from where each file ended, print each new finished event.
    let follow_opts = ViewOptions {
        max_tokens: None,
        ..opts.clone()
    };
    loop {
        for (path, pos, pending) in &mut tails {
            let len = std::fs::metadata(&*path)
                .map_err(|e| read_error(path, e))?
                .len();
            if len < *pos {
                *pos = 0; // truncated or replaced: start over
                *pending = Splitter::new(LINE_CAP);
            }
            if len == *pos {
                continue;
            }
            let mut f = File::open(&*path).map_err(|e| read_error(path, e))?;
            f.seek(SeekFrom::Start(*pos))
                .map_err(|e| read_error(path, e))?;
            let mut chunk = Vec::new();
            f.take(len - *pos)
                .read_to_end(&mut chunk)
                .map_err(|e| read_error(path, e))?;
            *pos += chunk.len() as u64;
            let mut done: Vec<Vec<u8>> = Vec::new();
            let mut at = 0;
            while let Some(piece) = pending.next(&chunk, &mut at) {
                // A line past the cap while following is left out, like a torn one.
                if let Piece::Line(line) = piece
                    && follow_opts.wants(line)
                {
                    done.push(line.to_vec());
                }
            }
            if !done.is_empty() {
                let mut out = Vec::new();
                let fmt = if opts.format == Format::Json {
                    Format::Jsonl
                } else {
                    opts.format
                };
                render_events(
                    &done,
                    &ViewOptions {
                        format: fmt,
                        ..follow_opts.clone()
                    },
                    &mut out,
                );
                write(&mut stdout, &out)?;
            }
        }
        std::thread::sleep(Duration::from_millis(200));
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
}
