//! `--view`: reading logs back within a budget a reader can take, in bounded memory.
//!
//! Events (lines) are selected — `--head`/`--tail`, `--grep`, `--type`, `--exclude-type`,
//! `--errors`, `--since`/`--until` — then rendered one per line: `jsonl` as log lines (through
//! the engine, so each is valid JSON within a line budget), `json` as one array of them, `text`
//! as one readable line each (`gist/`). Whatever a log holds is inert on a terminal: control,
//! bidi and zero-width characters are escaped in every format (`read::log::inert`).
//!
//! Memory stays bounded whatever the file size: without limits events are printed as they are
//! read; `--head` stops early; `--tail` reads each file from its end (`read::log::lines`);
//! `--max-tokens` keeps only the newest renders that fit (older ones are counted, not kept),
//! and a first line says how many were left out; `--follow` reads new bytes in blocks
//! (`follow.rs`). An unfinished last line of a plain log is a line in progress and is not
//! shown; a compressed log is finished, and its last line is a line (`read::log::lines`).

mod follow;
mod html;
mod html_md;
mod html_page;
mod html_row;
mod render;
mod retracted;

pub use crate::read::events::is_error_event;
pub use crate::read::log::stdin::{is_stdin, spool as spool_stdin};

use std::collections::VecDeque;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::error::Error;
pub use crate::read::gist::gist;
use crate::read::log::lines::read_error;
use crate::read::log::{
    DecompressLimit, Format, NO_TIME_NOTE, ReverseLines, ViewOptions, escape_controls,
    for_each_line_in, inert_json, is_compressed,
};
use follow::{Followed, follow_files};
pub use html_page::grouped;
pub use render::{Renderer, progress_renderer};

/// The least per-event cap under `--max-tokens`.
const MIN_EVENT_CAP: usize = 256;

/// Under `--max-tokens` each event gets at most this share of the budget, so that several fit.
const SHARES: usize = 8;

/// The most events rendered again to fill the room the others left ([`Window::fill`]); each
/// is a pass over the files.
const FILLS: usize = 2;

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
/// the two selections is shown ([`Window::better`]). `others`: events before them were left
/// out (by `--tail`), so a first line says so.
fn few_events_cap(
    budget: usize,
    format: Format,
    first: &Window,
    seen: usize,
    others: bool,
) -> Option<usize> {
    if seen == 0 || seen >= SHARES {
        return None;
    }
    let least = event_cap(budget, format);
    let all_shown = first.kept.len() == seen;
    // All of them shown: no line says what was left out, and the room the short ones leave
    // goes to those the least cap cut (a render near the cap is taken for cut).
    let (mut room, mut shares) = (budget.saturating_sub(overhead(format, seen, others)), seen);
    if all_shown {
        for e in first.kept.iter().filter(|e| e.len() * 4 < least * 3) {
            room = room.saturating_sub(e.len());
            shares -= 1;
        }
    }
    let cap = room / shares.max(1);
    (cap > least || !all_shown && cap > 0).then_some(cap)
}

/// The line that says what was left out.
fn omitted_line(format: Format, omitted: usize) -> Vec<u8> {
    let text = format!("… {omitted} earlier events omitted");
    match format {
        Format::Text => text.into_bytes(),
        _ => format!("{{\"type\":\"omitted\",\"text\":\"{text}\"}}").into_bytes(),
    }
}

/// The first line that says `omitted` events were left out, within `budget` bytes with the
/// output's punctuation: whole, else as briefly as `… N omitted`, else none (a budget of a few
/// dozen bytes, as `--bytes-per-token 0.5` gives, holds nothing else either).
fn omitted_within(format: Format, omitted: usize, budget: usize) -> Option<Vec<u8>> {
    let brief = |text: String| match format {
        Format::Text => text.into_bytes(),
        _ => format!("{{\"type\":\"omitted\",\"text\":\"{text}\"}}").into_bytes(),
    };
    [
        omitted_line(format, omitted),
        brief(format!("… {omitted} omitted")),
    ]
    .into_iter()
    .find(|line| line.len() + 3 <= budget)
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

    /// Fills the room that events cut to the per-event cap left: the newest of the `left_out`
    /// events before the kept ones (selection number `seen - kept - 1`) is rendered again by
    /// `render`, cut to the room, and kept if it fits; then the next, up to [`FILLS`] of them.
    /// A long event before a short last one had left most of a small budget empty.
    fn fill(
        &mut self,
        seen: usize,
        mut left_out: usize,
        mut render: impl FnMut(usize, usize) -> Option<Vec<u8>>,
    ) {
        for _ in 0..FILLS {
            if left_out == 0 {
                return;
            }
            let room = self.budget.saturating_sub(
                self.used + overhead(self.format, self.kept.len() + 1, left_out > 1),
            );
            // Text is cut to any length; JSON no shorter than the engine's least budget.
            let least = match self.format {
                Format::Text => 16,
                _ => crate::cut::engine::MIN_BUDGET,
            };
            if room < least {
                return;
            }
            match render(room, seen - self.kept.len() - 1) {
                Some(e) if e.len() <= room => {
                    self.used += e.len();
                    self.kept.push_front(e);
                    self.dropped = self.dropped.saturating_sub(1);
                    left_out -= 1;
                }
                _ => return,
            }
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
            if let Some(cap) = few_events_cap(budget, opts.format, &w, events.len(), false) {
                w = w.better(select(&mut r.again(cap, false)));
            }
            w.fill(events.len(), w.dropped, |cap, i| {
                let mut again = r.again(cap, true);
                Some(again.render(0, &events[i])).filter(|_| !again.kind_cut)
            });
            if w.dropped > 0
                && let Some(line) = omitted_within(opts.format, w.dropped, budget)
            {
                let _ = printer.event(&line);
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
    let problems = run_to(opts, crate::door::stdout())?;
    if !opts.follow {
        for p in &problems {
            crate::say!("smart-tee: {p}");
        }
    }
    let untimed = crate::read::log::options::untimed();
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
            let each = |k: usize, number: u64, line: &[u8]| {
                r.number = Some(number);
                w.push(r.render(k, line));
                seen += 1;
                seen < limit
            };
            walk_selected(opts, each, |path, e| failed(path, e, ok));
            (w, seen)
        };
        let limit = opts.head.unwrap_or(usize::MAX);
        let (mut w, seen) = select(&mut r, &mut ok, limit);
        // What the reads below count again of the events left out for carrying no time.
        let untimed = crate::read::log::options::untimed();
        // With --tail N, only the last N events are candidates.
        let candidates = opts.tail.map_or(seen, |n| n.min(seen));
        let trim = |w: &mut Window| {
            while w.kept.len() > candidates {
                let old = w.kept.pop_front().expect("more than the candidates");
                w.used -= old.len();
            }
        };
        trim(&mut w);
        // Fewer candidates than shares of the budget: read again, with the budget shared among
        // them only (the same events, should the files have grown meanwhile).
        if let Some(cap) = few_events_cap(budget, opts.format, &w, candidates, candidates < seen) {
            let (mut again, _) = select(&mut r.again(cap, false), &mut Vec::new(), seen);
            trim(&mut again);
            w = w.better(again);
        }
        w.fill(seen, candidates - w.kept.len(), |cap, wanted| {
            let mut again = r.again(cap, true);
            let (mut found, mut i) = (None, 0);
            let each = |k: usize, number: u64, line: &[u8]| {
                if i == wanted {
                    again.number = Some(number);
                    found = Some(again.render(k, line));
                }
                i += 1;
                i <= wanted
            };
            walk_selected(opts, each, |_, _| {});
            // A line cut to where its event is, without what it is, is not worth its room.
            found.filter(|_| !again.kind_cut)
        });
        crate::read::log::options::count_untimed_as(untimed);
        let omitted = candidates - w.kept.len();
        if omitted > 0
            && let Some(line) = omitted_within(opts.format, omitted, budget)
        {
            printer.event(&line).map_err(write_err)?;
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
        let each = |k: usize, number: u64, line: &[u8]| {
            r.number = Some(number);
            if let Err(e) = printer.event(&r.render(k, line)) {
                out_err = Some(e);
                return false;
            }
            shown += 1;
            opts.head.is_none_or(|h| shown < h)
        };
        walk_selected(opts, each, |path, e| failed(path, e, &mut ok));
        if let Some(e) = out_err {
            return Err(write_err(e));
        }
    }
    printer.end().map_err(write_err)?;
    if !opts.follow {
        if printer.printed == 0 {
            ok.extend(past_the_end(opts));
        }
        return Ok(ok);
    }
    // Said now, not when the follow ends (`run` says them otherwise).
    for p in &ok {
        crate::say!("smart-tee: {p}");
    }
    follow_files(opts, &mut follow, &mut r, &mut printer)?;
    Ok(ok)
}

/// When `--line` asks only for lines past the end of every file, what says so (as
/// `--original --line` does; nothing shown and exit 0 read as a line that had no event).
fn past_the_end(opts: &ViewOptions) -> Option<String> {
    let first = opts.lines.iter().map(|&(a, _)| a).min()?;
    let mut counts = Vec::new();
    for k in 0..opts.files.len() {
        let mut n = 0u64;
        opts.for_each_line(k, |_| {
            n += 1;
            n < first
        })
        .ok()?;
        if n >= first {
            return None;
        }
        counts.push(format!("{:?} has {n} lines", opts.files[k]));
    }
    Some(format!(
        "--line {first}: past the end ({})",
        counts.join(", ")
    ))
}

/// Walks the events the options select (`--line`, the filters), oldest first across the files,
/// as `each(file number, line number, line)` until it returns false; a file that cannot be
/// read is told to `failed`, and the walk goes on with the next. The one walk of the
/// selection, of its re-reads under a budget and of the view in order.
fn walk_selected(
    opts: &ViewOptions,
    mut each: impl FnMut(usize, u64, &[u8]) -> bool,
    mut failed: impl FnMut(&Path, io::Error),
) {
    for (k, path) in opts.files.iter().enumerate() {
        let mut number = 0;
        let mut going = true;
        let res = opts.for_each_line(k, |line| {
            number += 1;
            if !opts.on_line(number) || !opts.wants(line) {
                return true;
            }
            going = each(k, number, line);
            going
        });
        if let Err(e) = res {
            failed(path, e);
        }
        if !going {
            return;
        }
    }
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
