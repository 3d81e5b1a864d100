//! Rendering one event for `--view`: as a cut JSON line (jsonl, json) or as one readable line
//! (text), made inert on a terminal by `read::log::inert`.

use regex::bytes::Regex;
use serde_json::Value;

use super::retracted::Retracted;
use super::{Format, ViewOptions, event_cap, is_error_event};
use crate::cut::engine::{EngineConfig, LineEngine};
use crate::read::gist::type_and_gist;
use crate::read::log::{escape_controls, inert_json};

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
    /// Messages retracted after a refusal: marked `[RETRACTED]` in the text view.
    pub retracted: Retracted,
    /// The last text render was cut before the end of its event's type: it shows no more than
    /// where the event is (a file name, a number, a time).
    pub kind_cut: bool,
}

impl<'a> Renderer<'a> {
    pub fn new(opts: &'a ViewOptions) -> Renderer<'a> {
        let cap = opts
            .budget()
            .map_or(usize::MAX, |b| event_cap(b, opts.format));
        Renderer::with_cap(opts, cap)
    }

    /// A renderer whose events get at most `cap` bytes, that knows what this one knows of the
    /// events: the messages retracted and, with `timed` (an event rendered out of its place),
    /// whether a time column is printed, so that an event without a time keeps its column's
    /// room.
    pub(super) fn again(&self, cap: usize, timed: bool) -> Renderer<'a> {
        let mut r = Renderer::with_cap(self.opts, cap);
        r.retracted = self.retracted.clone();
        r.timed = timed && self.timed;
        r
    }

    /// A renderer whose events get at most `cap` bytes.
    pub(super) fn with_cap(opts: &'a ViewOptions, cap: usize) -> Renderer<'a> {
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
            max_line_bytes: crate::cut::engine::DEFAULT_BUDGET,
            ..opts.engine.clone()
        };
        Renderer {
            opts,
            engine: LineEngine::new(engine_config),
            gist_engine: LineEngine::new(gist_config),
            cap,
            timed: false,
            number: None,
            retracted: Retracted::default(),
            kind_cut: false,
        }
    }

    /// One event of file number `file`, without a newline.
    pub fn render(&mut self, file: usize, line: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        match self.opts.format {
            Format::Jsonl | Format::Json => self.render_json(line, &mut out),
            Format::Text | Format::Html | Format::Csv => self.render_text(file, line, &mut out),
        }
        out
    }

    fn render_json(&mut self, line: &[u8], out: &mut Vec<u8>) {
        // Escaped before the cut, so that the cut counts the escapes.
        let line = &*inert_json(line);
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
        crate::line::marker::escape_str(&context, &mut member);
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
        let (time, kind, mut rest) = type_and_gist(&v);
        if self.retracted.contains(&v) {
            rest.insert_str(0, "[RETRACTED] ");
        }
        let mut text = String::new();
        if self.opts.files.len() > 1 {
            text.push_str(&crate::read::log::stdin::shown_name(&self.opts.files[file]));
            text.push_str(": ");
        }
        if let Some(n) = self.number.take() {
            text.push('#');
            text.push_str(&n.to_string());
            text.push(' ');
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
        self.kind_cut = false;
        if text.len() > limit {
            let end = floor_char(&text, limit.saturating_sub(3));
            self.kind_cut = end < head_len + kind.len();
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

/// The line `--progress` shows of the log line numbered `n`: the text view's (`#N`, time,
/// type, gist), coloured when `color`, cut to `width` columns. Its options live as long as the
/// process (one renderer per run).
pub fn progress_renderer(
    color: bool,
    width: Option<usize>,
) -> impl FnMut(&[u8], u64) -> Vec<u8> + Send + 'static {
    let opts: &'static ViewOptions = Box::leak(Box::new(ViewOptions {
        color,
        width,
        ..ViewOptions::new(Vec::new())
    }));
    let mut renderer = Renderer::new(opts);
    move |line, n| {
        renderer.number = Some(n);
        renderer.render(0, line)
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

pub(crate) fn floor_char(s: &str, at: usize) -> usize {
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

/// The family of an event, which its colour tells in the text and HTML views.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Reports a failure ([`is_error_event`]).
    Error,
    /// The assistant's words.
    Message,
    /// What came back: a user turn, a tool's result.
    Result,
    /// A tool call.
    Tool,
    /// The end of a run or turn.
    Final,
    Other,
}

impl Kind {
    pub(crate) fn of(v: &Value) -> Kind {
        if is_error_event(v) {
            return Kind::Error;
        }
        match v.get("type").and_then(Value::as_str).unwrap_or("") {
            "assistant" | "message" | "text" => Kind::Message,
            "user" | "tool_result" => Kind::Result,
            "tool_use" | "tool_call" | "item.started" | "item.completed" => Kind::Tool,
            "result" | "turn.completed" | "complete" => Kind::Final,
            _ => Kind::Other,
        }
    }
}

/// Writes a text line with ANSI colours: the time dim, the type by its kind, errors red.
fn colorize(text: &str, head_len: usize, kind_len: usize, v: &Value, out: &mut Vec<u8>) {
    const DIM: &str = "\x1b[2m";
    const RESET: &str = "\x1b[0m";
    let color = match Kind::of(v) {
        Kind::Error => "\x1b[31m",  // red
        Kind::Message => "\x1b[1m", // bold
        Kind::Result => "\x1b[32m", // green
        Kind::Tool => "\x1b[36m",   // cyan
        Kind::Final => "\x1b[35m",  // magenta
        Kind::Other => DIM,
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
