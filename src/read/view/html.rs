//! `--view --format html`: one self-contained page of a run, for a person to look at (a CI
//! artifact). The header is the run's summary (`summary.rs`, the one `--summary` and the MCP
//! `log_summary` give) with a chart of cumulative tokens and one of tool calls by tool; the
//! timeline has one row per event (`html_row.rs`): time, kind, gist, colour, tool calls paired
//! with their results, subagents indented, the event's JSON collapsed, and the original of a
//! cut event from the archive beside the log, when there is one. The frame, policy and script
//! are in `html_page.rs`.
//!
//! Read in one pass, in bounded memory: the page has a byte bound (`--max-tokens` × R, else
//! [`DEFAULT_PAGE_BYTES`]; never less than [`MIN_PAGE_BYTES`]). The first rows are kept up to
//! half of it, then the newest ones in a window that evicts the oldest; what falls between
//! is counted and the page says so, with the command that shows it.

use std::collections::{HashMap, VecDeque};
use std::io::{self, BufWriter, Write};
use std::path::Path;

use serde_json::Value;

use super::html_page::{self as page, Counts};
use super::html_row::{At, LINK_BYTES, Link, Row, call_ids, escape_text, parent_call};
use super::{Format, Renderer, ViewOptions, read_error};
use crate::cut::engine::{DEFAULT_BUDGET, EngineConfig, LineEngine};
use crate::error::Error;
use crate::read::summary::{Health, Summary};

/// The page's bound without `--max-tokens`.
pub const DEFAULT_PAGE_BYTES: usize = 8 << 20;
/// The least bound: the frame (style, script, summary, charts) takes up to [`FRAME_RESERVE`].
pub const MIN_PAGE_BYTES: usize = 32 << 10;
/// Room kept for the frame.
const FRAME_RESERVE: usize = 24 << 10;
/// The most bytes of an event's JSON in its row.
const DETAILS_CAP: usize = 16 << 10;
/// Points of the token chart kept at most (halved as events come).
const SERIES_POINTS: usize = 128;
/// Tool calls awaiting their results, at most, and the bytes of their ids; past either, those
/// open are forgotten (their results are not paired).
const OPEN_CALLS: usize = 65_536;
const OPEN_CALL_BYTES: usize = 4 << 20;
/// Originals embedded at most, each at most [`ORIGINAL_CAP`] bytes.
pub const ORIGINALS: usize = 16;
pub const ORIGINAL_CAP: usize = 64 << 10;
/// Originals are embedded only from logs up to this size: finding one reads the log up to it.
pub const ORIGINALS_LOG_MAX: u64 = 256 << 20;

/// Renders the page of `opts.files` into `out`. Returns what went wrong with files that could
/// not be read (the others are shown); no page when none could.
pub(super) fn run<W: Write>(opts: &ViewOptions, out: W) -> Result<Vec<String>, Error> {
    let limit = opts
        .budget()
        .unwrap_or(DEFAULT_PAGE_BYTES)
        .max(MIN_PAGE_BYTES);
    let archives: Vec<bool> = opts
        .files
        .iter()
        .map(|f| !super::is_stdin(f) && crate::tee::archive::default_path(f).is_file())
        .collect();
    let originals_room = if archives.contains(&true) {
        limit / 4
    } else {
        0
    };
    let rows_budget = limit - FRAME_RESERVE - originals_room;
    // The rows' JSON: the events as jsonl renders them, payloads as descriptors.
    let json_opts = ViewOptions {
        format: Format::Jsonl,
        engine: EngineConfig {
            omit_images: true,
            ..opts.engine.clone()
        },
        ..opts.clone()
    };
    let mut pass = Pass::new(opts, &json_opts, rows_budget);
    let mut problems = Vec::new();
    for (k, path) in opts.files.iter().enumerate() {
        let res = opts.open(k).and_then(|f| {
            pass.summary.merge_health(Health::of(&f, opts.stall_after));
            let mut number = 0;
            super::for_each_line_in(f, &opts.decompress, |line| {
                number += 1;
                if opts.on_line(number) && opts.wants(line) {
                    pass.event((k, number), line);
                }
                true
            })
        });
        if let Err(e) = res {
            problems.push(read_error(path, e).to_string());
        }
    }
    if problems.len() == opts.files.len() {
        return Ok(problems);
    }
    let mut t = pass.timeline;
    if originals_room > 0 {
        embed_originals(opts, &archives, originals_room, &mut t);
        t.recount();
    }
    let summary = pass.summary.to_json();
    let series = pass.series.points();
    write_page(opts, limit, &mut t, &summary, &series, out)
        .map_err(|source| Error::WriteStdout { source })?;
    Ok(problems)
}

/// Writes the page: the frame around the rows, with rows let go from the middle until the
/// whole fits `limit` bytes.
fn write_page<W: Write>(
    opts: &ViewOptions,
    limit: usize,
    t: &mut Timeline,
    summary: &Value,
    series: &[(f64, f64)],
    out: W,
) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(64 * 1024, out);
    let title = title(opts);
    let events = t.events;
    let frame = |shown: u64| {
        let mut top = String::new();
        page::head(&title, &mut top);
        page::header(&title, summary, &Counts { events, shown }, series, &mut top);
        page::filter_bar(&mut top);
        top.push_str(&format!(
            "<main id=\"timeline\" data-events=\"{events}\" data-shown=\"{shown}\">\n"
        ));
        top
    };
    let mut bottom = String::from("</main>\n");
    page::tail(&mut bottom);
    // Room for the line that says what was left out: its words, and the path in its command.
    // The frame is measured with every event shown: as many digits as it will have, or more.
    let note = 400 + NOTE_PATH_CAP;
    t.fit(limit.saturating_sub(frame(events).len() + bottom.len() + note));
    let shown = t.shown();
    out.write_all(frame(shown).as_bytes())?;
    let several = opts.files.len() > 1;
    let mut buf = String::new();
    for row in &t.head {
        buf.clear();
        row.write(several, &mut buf);
        out.write_all(buf.as_bytes())?;
    }
    if events > shown {
        buf.clear();
        t.omitted_note(opts, limit, &mut buf);
        out.write_all(buf.as_bytes())?;
    }
    for row in &t.tail {
        buf.clear();
        row.write(several, &mut buf);
        out.write_all(buf.as_bytes())?;
    }
    out.write_all(bottom.as_bytes())?;
    out.flush()
}

/// The page's title: the logs' file names.
fn title(opts: &ViewOptions) -> String {
    let names: Vec<String> = opts
        .files
        .iter()
        .take(3)
        .map(|p| {
            let name = crate::read::log::stdin::shown_name(p);
            // Redacted before it is shortened (a cut name would keep a part of a secret).
            crate::read::summary::clip(&crate::door::text(name), 80)
        })
        .collect();
    let more = opts.files.len().saturating_sub(3);
    let mut t = names.join(", ");
    if more > 0 {
        t.push_str(&format!(" and {more} more"));
    }
    t
}

/// The one pass over the events: the summary, the chart's series and the timeline.
struct Pass<'a> {
    summary: Summary,
    series: Series,
    timeline: Timeline,
    /// Cuts events for their gist (generously, payloads as descriptors).
    gist_engine: LineEngine,
    /// Cuts events for their rows' JSON.
    json: Renderer<'a>,
}

impl<'a> Pass<'a> {
    fn new(opts: &ViewOptions, json_opts: &'a ViewOptions, rows_budget: usize) -> Pass<'a> {
        let gist_engine = LineEngine::new(EngineConfig {
            max_line_bytes: DEFAULT_BUDGET,
            ..json_opts.engine.clone()
        });
        let cap = (rows_budget / 16).clamp(1024, DETAILS_CAP);
        Pass {
            summary: Summary::default(),
            series: Series::default(),
            timeline: Timeline::new(rows_budget, opts),
            gist_engine,
            json: Renderer::with_cap(json_opts, cap),
        }
    }

    fn event(&mut self, at: At, line: &[u8]) {
        // Parsed once for the summary and the tool-call ids, as every reader parses
        // (`events::parse`: a line of a page's cut can lose the blocks past its budget).
        let whole = crate::read::events::parse(line);
        if let Some(w) = &whole {
            self.summary.add_event(w);
        }
        let mut cut = Vec::new();
        self.gist_engine.process(line, &mut cut);
        let v: Value = serde_json::from_slice(&cut).unwrap_or(Value::Null);
        let tokens = self.summary.tokens().total().unwrap_or(0);
        let time = crate::read::when::event_instant(&v).map(|t| t.0 as f64 / 1e9);
        self.series.push(time, tokens as f64);
        let t = &mut self.timeline;
        t.events += 1;
        if !t.wanted() {
            t.not_asked += 1;
            return;
        }
        // A subagent's event sits one level under the call it runs in.
        let depth = parent_call(&v).map_or(0, |p| t.calls.get(&p).map_or(1, |c| (c.2 + 1).min(8)));
        let json = self.json.render(at.0, line);
        let mut row = Row::new(at, &v, &json, line, depth);
        if t.first_of_message(&v) {
            row.add_usage(&v);
        }
        let (calls, results) = call_ids(whole.as_ref().unwrap_or(&v));
        drop(whole);
        for (id, failed) in results {
            let Some((seq, call_at, _)) = t.calls.remove(&id) else {
                continue;
            };
            t.call_bytes -= id.len();
            let failed = failed.unwrap_or(row.error);
            if let Some(call) = t.row_mut(seq) {
                // One link to a row that answers several of its calls.
                match call.answered_by.last_mut() {
                    Some(l) if l.at == at => l.failed |= failed,
                    _ => {
                        call.answered_by.push(Link { at, failed });
                        t.grew(seq, LINK_BYTES);
                    }
                }
                row.answers = Some(Link {
                    at: call_at,
                    failed: false,
                });
            }
        }
        let seq = t.push(row);
        let bytes: usize = calls.iter().map(String::len).sum();
        if t.calls.len() + calls.len() > OPEN_CALLS || t.call_bytes + bytes > OPEN_CALL_BYTES {
            t.calls.clear();
            t.call_bytes = 0;
        }
        for id in calls {
            t.call_bytes += id.len();
            t.calls.insert(id, (seq, at, depth));
        }
    }
}

/// Cumulative tokens by event time (or order), kept to at most 2 × [`SERIES_POINTS`] points
/// by keeping every other one when full.
#[derive(Default)]
struct Series {
    points: Vec<(f64, Option<f64>, f64)>,
    /// Events seen, and one point kept every `stride` events.
    seen: u64,
    stride: u64,
    last: Option<(f64, Option<f64>, f64)>,
}

impl Series {
    /// Adds a point; the line never goes down (a final result's count may be below the
    /// running count of the messages before it).
    fn push(&mut self, time: Option<f64>, y: f64) {
        let y = self.last.map_or(y, |l| l.2.max(y));
        let p = (self.seen as f64, time, y);
        self.stride = self.stride.max(1);
        if self.seen.is_multiple_of(self.stride) {
            self.points.push(p);
            if self.points.len() >= 2 * SERIES_POINTS {
                self.points = self.points.iter().step_by(2).copied().collect();
                self.stride *= 2;
            }
        }
        self.last = Some(p);
        self.seen += 1;
    }

    /// The points: by time when every point has one, else by order.
    fn points(&self) -> Vec<(f64, f64)> {
        let mut all = self.points.clone();
        if let Some(l) = self.last
            && all.last().is_none_or(|p| p.0 != l.0)
        {
            all.push(l);
        }
        let timed = all.iter().all(|p| p.1.is_some());
        all.iter()
            .map(|p| (if timed { p.1.unwrap_or(p.0) } else { p.0 }, p.2))
            .collect()
    }
}

/// The rows kept: the first ones up to half the budget, then the newest that fit.
struct Timeline {
    budget: usize,
    head: Vec<Row>,
    head_used: usize,
    head_full: bool,
    tail: VecDeque<Row>,
    tail_used: usize,
    /// The sequence number of `tail[0]` (rows are numbered from 0 as they come).
    tail_first: u64,
    next: u64,
    /// Events selected; those not kept because of `--head`/`--tail`; those let go to fit.
    events: u64,
    not_asked: u64,
    dropped: u64,
    /// The first and last line let go, when all were in one file.
    dropped_lines: Option<(At, At)>,
    /// `--head N` / `--tail N`.
    head_limit: Option<usize>,
    tail_limit: Option<usize>,
    /// Open tool calls: id to the row's sequence number, place and subagent depth.
    calls: HashMap<String, (u64, At, u8)>,
    /// The bytes of their ids (an id inserted twice counted twice).
    call_bytes: usize,
    /// The messages whose tokens a row shows already (Claude repeats a message's usage on
    /// each of its content blocks' events): at most [`MESSAGES_MAX`] ids, then forgotten.
    messages: std::collections::HashSet<String>,
}

/// The most message ids [`Timeline::messages`] holds.
const MESSAGES_MAX: usize = 10_000;

impl Timeline {
    fn new(budget: usize, opts: &ViewOptions) -> Timeline {
        Timeline {
            budget,
            head: Vec::new(),
            head_used: 0,
            head_full: opts.tail.is_some(),
            tail: VecDeque::new(),
            tail_used: 0,
            tail_first: 0,
            next: 0,
            events: 0,
            not_asked: 0,
            dropped: 0,
            dropped_lines: None,
            head_limit: opts.head,
            tail_limit: opts.tail,
            calls: HashMap::new(),
            call_bytes: 0,
            messages: std::collections::HashSet::new(),
        }
    }

    /// True for the first event of the message `v` belongs to, whose row shows its tokens.
    fn first_of_message(&mut self, v: &Value) -> bool {
        let Some(id) = v.pointer("/message/id").and_then(Value::as_str) else {
            return true;
        };
        if self.messages.len() >= MESSAGES_MAX {
            self.messages.clear();
        }
        self.messages
            .insert(id[..super::render::floor_char(id, 200)].to_string())
    }

    /// Whether the next event gets a row (`--head N` keeps the first N only).
    fn wanted(&self) -> bool {
        self.head_limit.is_none_or(|n| self.next < n as u64)
    }

    fn shown(&self) -> u64 {
        (self.head.len() + self.tail.len()) as u64
    }

    fn row_mut(&mut self, seq: u64) -> Option<&mut Row> {
        if seq < self.head.len() as u64 {
            return self.head.get_mut(seq as usize);
        }
        let i = seq.checked_sub(self.tail_first)?;
        self.tail.get_mut(usize::try_from(i).ok()?)
    }

    /// Row `seq` grew by `n` bytes.
    fn grew(&mut self, seq: u64, n: usize) {
        if seq < self.head.len() as u64 {
            self.head_used += n;
        } else {
            self.tail_used += n;
        }
    }

    /// Keeps `row`; returns its sequence number.
    fn push(&mut self, row: Row) -> u64 {
        let seq = self.next;
        self.next += 1;
        let size = row.size();
        if !self.head_full && self.head_used + size <= self.budget / 2 {
            self.head_used += size;
            self.head.push(row);
            self.tail_first = self.next;
            return seq;
        }
        self.head_full = true;
        self.tail_used += size;
        self.tail.push_back(row);
        let over_count = |t: &Timeline| t.tail_limit.is_some_and(|n| t.tail.len() > n);
        while !self.tail.is_empty()
            && (self.head_used + self.tail_used > self.budget || over_count(self))
        {
            let by_count = over_count(self);
            self.let_go_tail_front(!by_count);
        }
        seq
    }

    /// Lets the oldest row of the tail go; counted as left out to fit, or as not asked for.
    fn let_go_tail_front(&mut self, to_fit: bool) {
        let Some(old) = self.tail.pop_front() else {
            return;
        };
        self.tail_first += 1;
        self.tail_used -= old.size();
        self.count_gone(old.at, to_fit);
    }

    fn count_gone(&mut self, at: At, to_fit: bool) {
        if !to_fit {
            self.not_asked += 1;
            return;
        }
        self.dropped += 1;
        self.dropped_lines = match self.dropped_lines {
            None => Some((at, at)),
            Some((a, b)) => Some((a.min(at), b.max(at))),
        };
    }

    /// Counts the rows' bytes again (after originals were added to them).
    fn recount(&mut self) {
        self.head_used = self.head.iter().map(Row::size).sum();
        self.tail_used = self.tail.iter().map(Row::size).sum();
    }

    /// Lets rows go from the middle until they take at most `room` bytes.
    fn fit(&mut self, room: usize) {
        while self.head_used + self.tail_used > room {
            if let Some(old) = self.tail.pop_front() {
                self.tail_used -= old.size();
                self.count_gone(old.at, true);
            } else if let Some(old) = self.head.pop() {
                self.head_used -= old.size();
                self.count_gone(old.at, true);
            } else {
                break;
            }
        }
    }

    /// Says what was left out between the first and the last rows, and how to read it.
    fn omitted_note(&self, opts: &ViewOptions, limit: usize, out: &mut String) {
        let n = self.events - self.shown();
        let mut why = Vec::new();
        if self.dropped > 0 {
            why.push(format!(
                "to keep the page within {} ({})",
                super::html_row::size_text(limit),
                if opts.max_tokens.is_some() {
                    "--max-tokens"
                } else {
                    "the default bound"
                }
            ));
        }
        if self.not_asked > 0 {
            why.push(match (opts.head, opts.tail) {
                (Some(h), _) => format!("(--head {h})"),
                (_, Some(t)) => format!("(--tail {t})"),
                _ => String::new(),
            });
        }
        let how = match self.dropped_lines {
            Some(((fa, a), (fb, b))) if fa == fb && self.not_asked == 0 => format!(
                "smart-tee --view --line {a}-{b} {}",
                note_path(&opts.files[fa])
            ),
            _ => String::new(),
        };
        page::omitted(n, &why.join(" "), &how, out);
    }
}

/// The most bytes the log's path takes in the page (escaped) in the command of what was left
/// out; a longer one is written `LOG`.
const NOTE_PATH_CAP: usize = 2048;

/// The log's path for the command of what was left out: one shell word, `-` for standard
/// input, or `LOG` when it would take more than [`NOTE_PATH_CAP`] bytes in the page. Redacted
/// before it is quoted and escaped, which would hide a secret holding `'`, `&`, `<` or `"` from
/// the search.
fn note_path(p: &Path) -> String {
    if super::is_stdin(p) {
        return "-".into();
    }
    // A name that is not UTF-8 cannot be written as it is: `LOG` stands for it.
    let Some(name) = p.to_str() else {
        return "LOG".into();
    };
    let word = shell_word(&crate::door::text(name.to_owned()));
    let mut escaped = String::new();
    escape_text(&word, &mut escaped);
    if escaped.len() > NOTE_PATH_CAP {
        "LOG".into()
    } else {
        word
    }
}

/// A path as one shell word, quoted when it needs to be: in `'…'`, or, when it holds a control
/// or a character that reorders text, in bash's `$'…'` with those written as escapes
/// (`$'a\nb'`), so that the command pasted names the file and the page shows no control.
fn shell_word(s: &str) -> String {
    use crate::read::log::is_unsafe_char;
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
    {
        return s.to_string();
    }
    if !s.chars().any(is_unsafe_char) {
        return format!("'{}'", s.replace('\'', "'\\''"));
    }
    let mut word = String::from("$'");
    for c in s.chars() {
        match c {
            '\\' | '\'' => {
                word.push('\\');
                word.push(c);
            }
            c if (c as u32) < 0x80 && is_unsafe_char(c) => {
                word.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if is_unsafe_char(c) => word.push_str(&format!("\\U{:08x}", c as u32)),
            c => word.push(c),
        }
    }
    word.push('\'');
    word
}

/// Embeds the originals of cut rows from the archives beside their logs: the first
/// [`ORIGINALS`] cut rows are looked up, found or not (finding a line's original reads the log
/// up to it: a look-up per row of an archive that does not match would read the log thousands
/// of times), each within [`ORIGINAL_CAP`] and all within `room` bytes; only from plain logs
/// up to [`ORIGINALS_LOG_MAX`].
fn embed_originals(opts: &ViewOptions, archives: &[bool], room: usize, t: &mut Timeline) {
    let cap = (room / ORIGINALS).min(ORIGINAL_CAP);
    let mut left = ORIGINALS;
    for (k, path) in opts.files.iter().enumerate() {
        let small_plain = crate::read::log::open_regular(path).is_ok_and(|f| {
            !super::is_compressed(&f).unwrap_or(true)
                && f.metadata().is_ok_and(|m| m.len() <= ORIGINALS_LOG_MAX)
        });
        if !archives[k] || !small_plain || left == 0 {
            continue;
        }
        let Ok(mut archive) = crate::tee::archive::original::open_for(path, None) else {
            continue;
        };
        for row in t.head.iter_mut().chain(t.tail.iter_mut()) {
            if left == 0 {
                break;
            }
            if row.at.0 != k || !row.cut {
                continue;
            }
            left -= 1;
            let Ok(loc) = archive.locate(path, row.at.1) else {
                continue;
            };
            // Redacted whole, then cut to its excerpt (with --redact).
            let Ok((bytes, len)) = crate::tee::archive::original::page_of(
                &mut archive,
                (path, row.at.1),
                loc,
                0,
                cap as u64,
            ) else {
                continue;
            };
            let text = String::from_utf8_lossy(&bytes);
            page::original_html(&text, len, bytes.len(), &mut row.original);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows kept fit their budget however many events come; the first and the newest stay,
    /// and every other one is counted.
    #[test]
    fn the_timeline_holds_only_what_fits() {
        let opts = ViewOptions::new(vec!["x".into()]);
        let mut t = Timeline::new(20_000, &opts);
        for i in 1..=10_000u64 {
            let v = serde_json::json!({"type": "assistant", "n": i, "pad": "x".repeat((i % 300) as usize)});
            let json = v.to_string();
            t.push(Row::new((0, i), &v, json.as_bytes(), json.as_bytes(), 0));
            assert!(t.head_used + t.tail_used <= 20_000);
        }
        assert_eq!(t.shown() + t.dropped, 10_000);
        assert_eq!(t.head[0].at, (0, 1));
        assert_eq!(t.tail.back().map(|r| r.at), Some((0, 10_000)));
        assert_eq!(
            t.dropped_lines.map(|(a, _)| a),
            Some((0, t.head.len() as u64 + 1))
        );
    }

    /// Calls with long ids that no result answers kept every id: memory grew with the log
    /// (30,000 calls of 4.8 KB ids: 168 MB peak RSS). Open ids stay within their byte bound,
    /// and a call still pairs with its result after older ones were forgotten.
    #[test]
    fn long_unanswered_call_ids_stay_within_the_open_calls_bound() {
        let opts = ViewOptions::new(vec!["x".into()]);
        let json_opts = opts.clone();
        let mut pass = Pass::new(&opts, &json_opts, 1 << 20);
        let call = |id: &str| {
            serde_json::json!({"type":"assistant","message":{"content":[
                {"type":"tool_use","id": id,"name":"Bash","input":{}}]}})
            .to_string()
        };
        let n = 2 * OPEN_CALL_BYTES / 4000;
        for i in 1..=n {
            let id = format!("{i:06}{}", "x".repeat(4000));
            pass.event((0, i as u64), call(&id).as_bytes());
            let held: usize = pass.timeline.calls.keys().map(String::len).sum();
            assert!(
                held <= OPEN_CALL_BYTES,
                "{held} bytes of ids after {i} calls"
            );
        }
        pass.event((0, n as u64 + 1), call("last").as_bytes());
        let result = serde_json::json!({"type":"user","message":{"content":[
            {"type":"tool_result","tool_use_id":"last","content":"ok"}]}});
        pass.event((0, n as u64 + 2), result.to_string().as_bytes());
        let answered = pass.timeline.tail.iter().chain(&pass.timeline.head);
        assert!(
            answered
                .into_iter()
                .any(|r| r.answers.is_some_and(|l| l.at == (0, n as u64 + 1)))
        );
    }
}
