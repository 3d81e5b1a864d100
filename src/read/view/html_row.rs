//! One event of the HTML report as a row of its timeline: line number, time, kind and gist
//! (the text view's, `gist.rs`), a class for its colour ([`Kind`]), the tool calls it makes
//! and answers (paired by id), the subagent call it belongs to, and the event's JSON, cut and
//! collapsed in a `<details>`.
//!
//! Every string from the log reaches the page through [`escape_text`]: control, bidi and
//! zero-width characters made visible (`escape_controls`), then `& < > " '` written as
//! entities, so a string is inert as text and inside a quoted attribute alike. Log data is
//! never written into a URL, an event handler, a style or the script.

use serde_json::Value;

use super::render::Kind;
use super::{escape_controls, inert_json, is_error_event};

/// The most bytes of a gist shown in a row (the whole event is in its details).
const GIST_CAP: usize = 400;

/// Writes `s` as HTML text that is also safe inside a double- or single-quoted attribute.
fn escape_html(s: &str, out: &mut String) {
    // The five are ASCII, so a byte scan finds them; runs between are copied whole.
    let mut done = 0;
    for (i, b) in s.bytes().enumerate() {
        let entity = match b {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            b'\'' => "&#39;",
            _ => continue,
        };
        out.push_str(&s[done..i]);
        out.push_str(entity);
        done = i + 1;
    }
    out.push_str(&s[done..]);
}

/// A string from the log as inert HTML text: terminal controls, bidi and zero-width characters
/// escaped visibly first ([`escape_controls`]), then [`escape_html`].
pub(super) fn escape_text(s: &str, out: &mut String) {
    if s.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        escape_html(s, out); // printable ASCII: nothing to make visible
    } else {
        escape_html(&escape_controls(s), out);
    }
}

/// Like [`escape_text`], with terminal colours as styled spans: a style sequence (`ESC[31m`,
/// `ESC[1;32m`) opens a `<span>` whose classes name its bold and its colour (`tb`, `t31`), a
/// reset or another sequence closes it. Only those fixed class names are written: nothing of
/// the log reaches an attribute, and the text between stays [`escape_text`]'s.
pub(super) fn escape_styled(s: &str, out: &mut String) {
    let mut done = 0;
    let mut open = false;
    for (range, params) in crate::read::log::sgr_sequences(s) {
        escape_text(&s[done..range.start], out);
        done = range.end;
        if open {
            out.push_str("</span>");
            open = false;
        }
        let classes: Vec<String> = params
            .split([';', ':'])
            .filter_map(|p| match p.parse::<u8>().ok()? {
                1 => Some("tb".to_string()),
                c @ (30..=37 | 90..=97) => Some(format!("t{c}")),
                _ => None,
            })
            .collect();
        if !classes.is_empty() {
            out.push_str(&format!("<span class=\"{}\">", classes.join(" ")));
            open = true;
        }
    }
    escape_text(&s[done..], out);
    if open {
        out.push_str("</span>");
    }
}

/// Like [`escape_text`], for a block of lines (in a `<pre>`): its newlines stay newlines.
pub(super) fn escape_lines(s: &str, out: &mut String) {
    for (i, line) in s.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        escape_text(line, out);
    }
}

/// A result's call id, and whether it failed when the result says so itself (a block of a
/// message that may answer several calls); `None`: as the event says.
pub(super) type Answer = (String, Option<bool>);

/// The tool-call ids an event opens (calls) and closes (results), in any agent's stream:
/// Claude's `tool_use` blocks and `tool_result.tool_use_id`, Codex's `item.started` /
/// `item.completed` and `call_id`s, Gemini's `tool_id`, Cursor's `call_id`, Goose's
/// `toolRequest` / `toolResponse`, and what [`crate::read::headless::calls`] says of the other
/// agents'.
pub(super) fn call_ids(v: &Value) -> (Vec<String>, Vec<Answer>) {
    let (mut calls, mut results) = (Vec::new(), Vec::new());
    let str_at = |x: &Value, p: &str| x.pointer(p).and_then(Value::as_str).map(str::to_string);
    for b in v
        .pointer("/message/content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match b.get("type").and_then(Value::as_str) {
            Some("tool_use" | "server_tool_use" | "toolRequest") => calls.extend(str_at(b, "/id")),
            Some("tool_result" | "toolResponse") => {
                // Claude's `is_error`, Goose's `toolResult.status`.
                let failed = is_error_event(b) || b.get("toolResult").is_some_and(is_error_event);
                let id = str_at(b, "/tool_use_id").or_else(|| str_at(b, "/id"));
                results.extend(id.map(|id| (id, Some(failed))));
            }
            _ => {}
        }
    }
    let mut result = |id: Option<String>| results.extend(id.map(|id| (id, None)));
    let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
    let sub = v.get("subtype").and_then(Value::as_str).unwrap_or("");
    match (kind, sub) {
        ("item.started", _) => calls.extend(str_at(v, "/item/id")),
        ("item.completed", _) => result(str_at(v, "/item/id")),
        ("tool_use", _) => calls.extend(str_at(v, "/tool_id")),
        ("tool_result", _) => result(str_at(v, "/tool_id")),
        ("tool_call", "started") => calls.extend(str_at(v, "/call_id")),
        ("tool_call", "completed") => result(str_at(v, "/call_id")),
        ("response_item", _) => match str_at(v, "/payload/type").as_deref() {
            Some("function_call" | "custom_tool_call") => {
                calls.extend(str_at(v, "/payload/call_id"))
            }
            Some("function_call_output" | "custom_tool_call_output") => {
                result(str_at(v, "/payload/call_id"))
            }
            _ => {}
        },
        _ => {}
    }
    let format = crate::read::gist::format_of(v);
    if crate::read::headless::reads(format) {
        let (opened, closed) = crate::read::headless::calls(v, format);
        calls.extend(opened.into_iter().filter_map(|(id, _)| id));
        // Kimi's results do not say whether the call failed.
        let says = format != crate::read::gist::Format::Kimi;
        results.extend(
            closed
                .into_iter()
                .filter_map(|(id, failed)| id.map(|id| (id, says.then_some(failed)))),
        );
    }
    (calls, results)
}

/// The tool call a subagent's event runs under (Claude's `parent_tool_use_id`).
pub(super) fn parent_call(v: &Value) -> Option<String> {
    v.get("parent_tool_use_id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// The CSS class of an event's family.
pub(super) fn kind_class(k: Kind) -> &'static str {
    match k {
        Kind::Error => "k-err",
        Kind::Message => "k-msg",
        Kind::Result => "k-res",
        Kind::Tool => "k-tool",
        Kind::Final => "k-fin",
        Kind::Other => "k-oth",
    }
}

/// Where a row is: file number and line, which its anchor (`e{file}-{line}`) names.
pub(super) type At = (usize, u64);

/// A paired row: where it is, and whether it failed.
#[derive(Clone, Copy, Debug)]
pub(super) struct Link {
    pub at: At,
    pub failed: bool,
}

/// One row of the timeline, its log-derived parts already escaped.
#[derive(Debug)]
pub(super) struct Row {
    pub at: At,
    /// The event's type, escaped (its `data-kind`).
    pub kind: String,
    pub class: &'static str,
    pub error: bool,
    /// Subagent nesting: 0 for the main agent.
    pub depth: u8,
    /// Escaped HTML of the time, type and gist cells.
    pub cells: String,
    /// Escaped HTML of the `<details>` holding the event's JSON.
    pub details: String,
    /// The call this event answers, and the results that answer its calls.
    pub answers: Option<Link>,
    pub answered_by: Vec<Link>,
    /// The event was cut in the log (holds a marker): its original may be in the archive.
    pub cut: bool,
    /// Escaped HTML of its original, when one is shown.
    pub original: String,
}

/// Room counted for each pairing link of a row.
pub(super) const LINK_BYTES: usize = 64;
/// Room counted for a row's frame (its `<div>`, anchor and classes).
const FRAME_BYTES: usize = 160;

impl Row {
    /// A row for an event: `v` is its cut value (payloads are descriptors), `json` its cut
    /// JSON text (inert), `line` its text as logged.
    pub fn new(at: At, v: &Value, json: &[u8], line: &[u8], depth: u8) -> Row {
        let (time, kind, gist) = crate::read::gist::type_and_gist(v);
        let family = Kind::of(v);
        let mut cells = String::new();
        cells.push_str("<time>");
        if let Some(t) = &time {
            escape_text(t, &mut cells);
        }
        // The type's full name on hover: a long one wraps in its column.
        let mut escaped_kind = String::new();
        escape_text(&kind, &mut escaped_kind);
        cells.push_str(&format!("</time><b class=\"k\" title=\"{escaped_kind}\">"));
        cells.push_str(&escaped_kind);
        if let Some(text) = super::html_md::message_text(v) {
            // A message reads as its text, rendered: a bubble of Markdown.
            cells.push_str("</b><div class=\"g md\">");
            super::html_md::markdown(&text, &mut cells);
            cells.push_str("</div>");
        } else {
            cells.push_str("</b><span class=\"g\">");
            let gist = if gist.len() > GIST_CAP {
                let end = super::render::floor_char(&gist, GIST_CAP);
                format!("{}…", &gist[..end])
            } else {
                gist
            };
            escape_styled(&gist, &mut cells);
            cells.push_str("</span>");
        }
        Row {
            at,
            kind: escaped_kind,
            class: kind_class(family),
            error: family == Kind::Error,
            depth,
            cells,
            details: details(json),
            answers: None,
            answered_by: Vec::new(),
            cut: is_cut(line),
            original: String::new(),
        }
    }

    /// Shows the tokens of the message `v` is an event of (`message.usage`), if it has any:
    /// input (uncached, cache read and cache write together) and output. Call it on a
    /// message's first event only.
    pub fn add_usage(&mut self, v: &Value) {
        let Some(usage) = v.pointer("/message/usage") else {
            return;
        };
        let n = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
        let input =
            n("input_tokens") + n("cache_read_input_tokens") + n("cache_creation_input_tokens");
        let output = n("output_tokens");
        if input + output == 0 {
            return;
        }
        let close = self.cells.rfind("</").unwrap_or(self.cells.len());
        self.cells.insert_str(
            close,
            &format!(
                "<small class=\"tok\">in {} · out {} tokens</small>",
                super::grouped(input),
                super::grouped(output)
            ),
        );
    }

    /// The bytes this row takes in the page, its links and original counted.
    pub fn size(&self) -> usize {
        FRAME_BYTES
            + self.kind.len()
            + self.cells.len()
            + self.details.len()
            + self.original.len()
            + LINK_BYTES * (usize::from(self.answers.is_some()) + self.answered_by.len())
    }

    /// Writes the row.
    pub fn write(&self, several_files: bool, out: &mut String) {
        let failed = self.error || self.answered_by.iter().any(|l| l.failed);
        out.push_str(&format!(
            "<div class=\"ev {}{}{}\" id=\"{}\" data-kind=\"{}\">",
            self.class,
            if failed { " err" } else { "" },
            match self.depth {
                0 => String::new(),
                d => format!(" d{}", d.min(4)),
            },
            anchor(self.at),
            self.kind
        ));
        out.push_str(&format!(
            "<a class=\"n\" href=\"#{}\">{}</a>",
            anchor(self.at),
            number(self.at, several_files)
        ));
        // The pairing links go at the end of the gist's cell, before its closing tag.
        let close = self.cells.rfind("</").unwrap_or(self.cells.len());
        out.push_str(&self.cells[..close]);
        if self.answers.is_some() || !self.answered_by.is_empty() {
            out.push_str("<span class=\"pair\">");
            if let Some(l) = self.answers {
                out.push_str(&link("↳ call", l, several_files));
            }
            for l in &self.answered_by {
                out.push_str(&link("→ result", *l, several_files));
            }
            out.push_str("</span>");
        }
        out.push_str(&self.cells[close..]);
        out.push_str(&self.details);
        out.push_str(&self.original);
        out.push_str("</div>\n");
    }
}

/// The anchor of the row at `at`.
pub(super) fn anchor(at: At) -> String {
    format!("e{}-{}", at.0, at.1)
}

/// The row's number as shown: `#N`, with the file's number when there are several.
fn number(at: At, several_files: bool) -> String {
    if several_files {
        format!("{}#{}", at.0 + 1, at.1)
    } else {
        format!("#{}", at.1)
    }
}

fn link(what: &str, l: Link, several_files: bool) -> String {
    format!(
        "<a href=\"#{}\"{}>{what} {}</a>",
        anchor(l.at),
        if l.failed { " class=\"bad\"" } else { "" },
        number(l.at, several_files)
    )
}

/// True when a logged line holds one of smart-tee's markers: the line was cut, or a payload
/// became a descriptor.
fn is_cut(line: &[u8]) -> bool {
    memchr::memmem::find(line, b"[TRUNCATED: ").is_some()
        || memchr::memmem::find(line, b" OMITTED: ").is_some()
}

/// The event's JSON, pretty-printed when that stays within twice its cut size, collapsed.
fn details(json: &[u8]) -> String {
    let pretty = serde_json::from_slice::<Value>(json)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .filter(|p| p.len() <= 2 * json.len() + 64);
    let text = match &pretty {
        Some(p) => String::from_utf8_lossy(&inert_json(p.as_bytes())).into_owned(),
        None => String::from_utf8_lossy(json).into_owned(),
    };
    let mut out = format!(
        "<details><summary>JSON {}</summary><pre>",
        size_text(json.len())
    );
    escape_lines(&text, &mut out);
    out.push_str("</pre></details>");
    out
}

/// A byte count for people: `812 B`, `4.2 KB`, `1.3 MB`.
pub(super) fn size_text(n: usize) -> String {
    match n {
        n if n < 1000 => format!("{n} B"),
        n if n < 1_000_000 => format!("{:.1} KB", n as f64 / 1e3),
        n => format!("{:.1} MB", n as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_leaves_no_markup_and_no_controls() {
        let mut out = String::new();
        escape_text(
            "</script><img src=x onerror='a'>\u{1b}[2J\u{9b}\u{202e}&",
            &mut out,
        );
        assert_eq!(
            out,
            "&lt;/script&gt;&lt;img src=x onerror=&#39;a&#39;&gt;\\e[2J\\u{9b}\\u{202e}&amp;"
        );
    }

    #[test]
    fn calls_pair_with_their_results_in_every_stream() {
        let claude = serde_json::json!({"type":"assistant","message":{"content":[
            {"type":"tool_use","id":"t1","name":"Bash","input":{}}]}});
        assert_eq!(call_ids(&claude), (vec!["t1".to_string()], vec![]));
        let result = serde_json::json!({"type":"user","message":{"content":[
            {"type":"tool_result","tool_use_id":"t1","content":"ok"}]}});
        assert_eq!(
            call_ids(&result),
            (vec![], vec![("t1".to_string(), Some(false))])
        );
        let codex = serde_json::json!({"type":"item.completed","item":{"id":"i1"}});
        assert_eq!(call_ids(&codex).1, vec![("i1".to_string(), None)]);
        let goose = serde_json::json!({"type":"message","message":{"content":[
            {"type":"toolResponse","id":"g1","toolResult":{"status":"error"}}]}});
        assert_eq!(call_ids(&goose).1, vec![("g1".to_string(), Some(true))]);
        let session = serde_json::json!({"type":"response_item",
            "payload":{"type":"function_call","call_id":"c1"}});
        assert_eq!(call_ids(&session).0, vec!["c1".to_string()]);
    }

    /// #50: terminal colours showed as text (`\e[31m⎯⎯\e[39m`) in the report. They become
    /// spans with fixed class names; nothing else of the sequence, and no markup, gets through.
    #[test]
    fn terminal_colours_become_styled_spans() {
        let mut out = String::new();
        escape_styled(
            "a \x1b[1;31mred <b>\x1b[39m and \x1b[32mgreen\x1b[0m \x1b[5q",
            &mut out,
        );
        assert_eq!(
            out,
            "a <span class=\"tb t31\">red &lt;b&gt;</span> and <span class=\"t32\">green</span> \\e[5q"
        );
        let mut open = String::new();
        escape_styled("\x1b[33munclosed", &mut open);
        assert_eq!(open, "<span class=\"t33\">unclosed</span>");
    }
}
