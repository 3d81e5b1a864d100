//! Rendering one event for `--view`: as a cut JSON line (jsonl, json) or as one readable line
//! (text), and making whatever a log holds inert on a terminal. Control characters (C0, DEL,
//! C1, ESC), bidi controls (U+061C, U+200E/F, U+202A–202E, U+2066–2069), zero-width and
//! invisible characters (U+200B–200D, U+2060–2064, U+FEFF) and line/paragraph separators
//! (U+2028/2029) are escaped in every format: as `\uXXXX` inside JSON strings, as `\e`,
//! `\n`, `\u{202e}`… in text, so no string can reorder, hide or forge what is around it.

use std::borrow::Cow;

use regex::bytes::Regex;
use serde_json::Value;

use super::retracted::Retracted;
use super::{Format, ViewOptions, event_cap, is_error_event};
use crate::cut::engine::{EngineConfig, LineEngine};
use crate::read::gist::type_and_gist;

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
}

impl<'a> Renderer<'a> {
    pub fn new(opts: &'a ViewOptions) -> Renderer<'a> {
        let cap = opts
            .budget()
            .map_or(usize::MAX, |b| event_cap(b, opts.format));
        Renderer::with_cap(opts, cap)
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
            let name = self.opts.files[file]
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            text.push_str(&name);
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

/// Text made safe for a terminal: control characters become visible escapes (`\e`, `\r`,
/// `\t`, `\n`, `\x07`, `\u{9b}`), and so do bidi, zero-width and separator characters
/// (`\u{202e}`), so nothing in a log can clear a screen, set a title, colour the output,
/// reorder what is shown or start a line of its own.
pub fn escape_controls(s: &str) -> String {
    if !s.chars().any(is_unsafe_char) {
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
            c if is_unsafe_char(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// The terminal style sequences (SGR: `ESC[` parameters `m`, as coloured output has them) in
/// `s`: each one's byte range and parameters, in order.
pub fn sgr_sequences(s: &str) -> impl Iterator<Item = (std::ops::Range<usize>, &str)> {
    let b = s.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        while let Some(k) = memchr::memchr(0x1b, &b[at..]) {
            let start = at + k;
            at = start + 1;
            if b.get(start + 1) != Some(&b'[') {
                continue;
            }
            let params = b[start + 2..]
                .iter()
                .take_while(|c| c.is_ascii_digit() || matches!(c, b';' | b':'))
                .count();
            let end = start + 2 + params;
            if b.get(end) == Some(&b'm') {
                at = end + 1;
                return Some((start..end + 1, &s[start + 2..end]));
            }
        }
        None
    })
}

/// `s` without its terminal style sequences ([`sgr_sequences`]): what `--summary`'s text lines
/// show of coloured output. Other controls are left for [`escape_controls`].
pub fn strip_sgr(s: &str) -> std::borrow::Cow<'_, str> {
    let mut out = String::new();
    let mut done = 0;
    for (range, _) in sgr_sequences(s) {
        out.push_str(&s[done..range.start]);
        done = range.end;
    }
    if done == 0 {
        return std::borrow::Cow::Borrowed(s);
    }
    out.push_str(&s[done..]);
    std::borrow::Cow::Owned(out)
}

/// True for a character that acts on a terminal or on how text around it reads: C0, DEL, C1,
/// bidi controls, zero-width and invisible characters, line and paragraph separators.
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
        )
}

/// JSON text with every unsafe character ([`is_unsafe_char`]) outside ASCII, and DEL, written
/// as a `\uXXXX` escape. In valid JSON these can only be inside strings, where the escape
/// means the same character; C0 characters are already escaped in valid JSON. Text that is
/// not JSON stays not JSON, with the same characters escaped.
pub fn inert_json(text: &[u8]) -> Cow<'_, [u8]> {
    let risky = |b: &u8| *b >= 0x7f;
    if !text.iter().any(risky) {
        return Cow::Borrowed(text);
    }
    let mut out: Option<Vec<u8>> = None;
    let mut done = 0;
    for chunk in text.utf8_chunks() {
        let valid = chunk.valid();
        let base = chunk.valid().as_ptr() as usize - text.as_ptr() as usize;
        for (i, c) in valid.char_indices() {
            if c == '\x7f' || (c as u32 >= 0x80 && is_unsafe_char(c)) {
                let o = out.get_or_insert_with(|| Vec::with_capacity(text.len() + 16));
                o.extend_from_slice(&text[done..base + i]);
                o.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes());
                done = base + i + c.len_utf8();
            }
        }
    }
    match out {
        Some(mut o) => {
            o.extend_from_slice(&text[done..]);
            Cow::Owned(o)
        }
        None => Cow::Borrowed(text),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// #50: `--summary` printed colour codes as text; its lines drop them, and keep every
    /// other control for escape_controls to show.
    #[test]
    fn strip_sgr_drops_colours_and_keeps_other_controls() {
        assert_eq!(strip_sgr("\x1b[31m⎯⎯\x1b[39m ok\x1b[2K"), "⎯⎯ ok\x1b[2K");
        assert_eq!(strip_sgr("plain"), "plain");
        assert_eq!(strip_sgr("\x1b[1;38;5;196mX\x1b[m"), "X");
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(
            escape_controls("a\u{1b}[2J\u{1b}]0;pwned\u{7}\r\tb\u{9b}c"),
            "a\\e[2J\\e]0;pwned\\x07\\r\\tb\\u{9b}c"
        );
        assert_eq!(escape_controls("plain é"), "plain é");
    }

    /// #28.6: bidi overrides, isolates, separators and zero-width characters passed raw.
    #[test]
    fn bidi_and_zero_width_characters_are_escaped() {
        assert_eq!(
            escape_controls("safe \u{202e}gnp.exe\u{2066}\u{2028}\u{200b}"),
            "safe \\u{202e}gnp.exe\\u{2066}\\u{2028}\\u{200b}"
        );
        let json = "{\"a\":\"x\u{202e}y\u{9b}z\u{7f}é\"}";
        let inert = inert_json(json.as_bytes());
        assert_eq!(&*inert, r#"{"a":"x\u202ey\u009bz\u007fé"}"#.as_bytes());
        let back: Value = serde_json::from_slice(&inert).unwrap();
        assert_eq!(back["a"], "x\u{202e}y\u{9b}z\u{7f}é");
        assert_eq!(&*inert_json(b"\xff\xc2\x9b"), b"\xff\\u009b");
    }
}
