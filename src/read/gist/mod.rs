//! The gist of an event: one readable line for `--view`'s text format, for every agent's
//! stream: Claude Code (stream-json and transcripts), Codex (`exec --json` and session files),
//! Gemini CLI, opencode, Cursor, Goose, pi, Amp, droid, Copilot CLI, Qwen Code, Kimi CLI and
//! Antigravity. Never ciphertext or base64: payloads are
//! descriptors by the time an event gets here, and reasoning shows its summary.

mod claude;
mod codex;
mod headless;
mod others;

use self::claude::claude;
use self::codex::{codex_exec, codex_session};
use self::headless::{antigravity, copilot, droid, kimi, pi};
use self::others::{cursor, gemini, goose, opencode};
use serde_json::Value;

pub use crate::line::agents::Format;
use crate::line::agents::Head;
pub use codex::{call_output_failed, rollout_failure};

/// Which agent's stream an event is from, by its `type` and the fields beside it.
pub fn format_of(v: &Value) -> Format {
    Head::of_value(v).format()
}

/// One readable line: time (when known), type, and the gist of the event.
pub fn gist(v: &Value) -> String {
    let (time, kind, rest) = type_and_gist(v);
    let mut parts: Vec<String> = time.into_iter().collect();
    parts.push(kind);
    if !rest.is_empty() {
        parts.push(rest);
    }
    parts.join(" ")
}

/// The three columns of an event's line: its time (when known), its type (`type/subtype`), and
/// the gist.
pub fn type_and_gist(v: &Value) -> (Option<String>, String, String) {
    let mut parts: Vec<String> = Vec::new();
    let kind = kind_of(v);
    let format = format_of(v);
    let label = type_label(v);
    match format {
        Format::Cursor if cursor(v, kind, &mut parts) => {}
        Format::Claude | Format::Cursor | Format::Amp | Format::Qwen => claude(v, kind, &mut parts),
        Format::Pi => pi(v, kind, &mut parts),
        Format::Droid => droid(v, kind, &mut parts),
        Format::Copilot => copilot(v, kind, &mut parts),
        Format::Kimi => kimi(v, &mut parts),
        Format::Antigravity => antigravity(v, kind, &mut parts),
        Format::CodexExec => codex_exec(v, kind, &mut parts),
        Format::CodexSession => codex_session(v, &mut parts),
        Format::Gemini => gemini(v, kind, &mut parts),
        Format::OpenCode => opencode(v, kind, &mut parts),
        Format::Goose => goose(v, kind, &mut parts),
    }
    parts.retain(|p| !p.is_empty());
    (time_of(v), label, parts.join(" "))
}

/// Whether `wanted` (a `--type` or MCP `type`) names the event whose type the view prints as
/// `label`: the whole label, any of its levels (`function_call_output` of
/// `response_item/function_call_output`), or its first levels (`event_msg/item_completed`).
pub fn type_matches(wanted: &str, label: &str) -> bool {
    label == wanted
        || label.split('/').any(|level| level == wanted)
        || label
            .strip_prefix(wanted)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The type the view prints for an event: `type`, `type/subtype`, or a rollout's
/// `event_msg/item_completed/AgentMessage`.
pub fn type_label(v: &Value) -> String {
    let kind = kind_of(v);
    let format = format_of(v);
    let sub = match format {
        Format::CodexExec => v.pointer("/item/type").and_then(Value::as_str),
        Format::CodexSession => v.pointer("/payload/type").and_then(Value::as_str),
        _ => v.get("subtype").and_then(Value::as_str),
    };
    // A rollout's turn item shows its type too: `event_msg/item_completed/AgentMessage`.
    let item = match sub {
        Some("item_started" | "item_updated" | "item_completed") => {
            v.pointer("/payload/item/type").and_then(Value::as_str)
        }
        _ => None,
    };
    match (sub, item) {
        (Some(sub), Some(item)) => format!("{kind}/{sub}/{item}"),
        (Some(sub), None) => format!("{kind}/{sub}"),
        (None, _) => kind.to_string(),
    }
}

/// What an event is: its `type`, else Antigravity's `event`, else a Kimi message's `role`.
fn kind_of(v: &Value) -> &str {
    ["type", "event", "role"]
        .iter()
        .find_map(|k| v.get(*k).and_then(Value::as_str))
        .unwrap_or("?")
}

/// Whether `ts` starts as an RFC 3339 time does: `YYYY-MM-DDTHH:MM:SS` (`t` or a space for
/// the `T`).
fn dated(ts: &str) -> bool {
    let b = ts.as_bytes();
    b.len() >= 19
        && b[..19].iter().enumerate().all(|(i, &c)| match i {
            4 | 7 => c == b'-',
            10 => matches!(c, b'T' | b't' | b' '),
            13 | 16 => c == b':',
            _ => c.is_ascii_digit(),
        })
}

/// The event's time, as `YYYY-MM-DD HH:MM:SS`: an RFC 3339 `timestamp` (its offset kept when
/// not UTC), or epoch milliseconds (`timestamp` of opencode, `timestamp_ms` of Cursor) or
/// seconds (`created` of Goose).
pub fn time_of(v: &Value) -> Option<String> {
    let from_millis = |ms: u64| {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
        let s = crate::cut::stamp::rfc3339_millis(t);
        s.replace('T', " ").chars().take(19).collect::<String>()
    };
    match v.get("timestamp") {
        Some(Value::String(ts)) if !dated(ts) => {
            // Not a date as RFC 3339 writes one (a label that replaced a secret, a year past
            // 9999, prose): shown as written.
            return Some(ts.chars().take(40).collect());
        }
        Some(Value::String(ts)) => {
            let mut t: String = ts.chars().take(19).collect();
            t.replace_range(10..11, " ");
            // A zone other than Z is part of the time.
            if let Some(zone) = ts
                .get(19..)
                .map(|z| z.trim_start_matches(|c: char| c == '.' || c.is_ascii_digit()))
                && !zone.is_empty()
                && zone != "Z"
            {
                t.push_str(zone);
            }
            return Some(t);
        }
        Some(Value::Number(n)) => return n.as_u64().map(from_millis),
        _ => {}
    }
    if let Some(ms) = v.get("timestamp_ms").and_then(Value::as_u64) {
        return Some(from_millis(ms));
    }
    let secs = v
        .get("created")
        .or_else(|| v.pointer("/message/created"))
        .and_then(Value::as_u64)?;
    Some(from_millis(secs.saturating_mul(1000)))
}

/// `k=v` pairs of an object's first members, each value's first line.
fn args(obj: Option<&Value>, max: usize) -> String {
    let Some(Value::Object(m)) = obj else {
        return match obj {
            Some(Value::String(s)) => first_line(s, 80),
            _ => String::new(),
        };
    };
    m.iter()
        .take(max)
        .map(|(k, x)| {
            let val = match x {
                Value::String(t) if looks_like_path(t) => path_tail(t, 60),
                Value::String(t) => first_line(t, 60),
                other => first_line(&other.to_string(), 60),
            };
            format!("{k}={val}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn looks_like_path(s: &str) -> bool {
    s.contains('/') && !s.contains(char::is_whitespace)
}

/// A long path cut from its left, so the file name stays: `…/lib/spotter/transcript.ex`.
fn path_tail(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    format!("…{}", &s[start..])
}

/// A count at the top of `v`, or `?`.
fn count_at(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_u64)
        .map_or("?".into(), |n| n.to_string())
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// The output of a command or tool: `ok|ERROR SIZE: first line`. SIZE is the output's size
/// in the stream: a cut output's marker records it.
fn outcome(failed: bool, output: &str) -> String {
    format!(
        "{} {}: {}",
        if failed { "ERROR" } else { "ok" },
        size(original_len(output)),
        first_line(output, 160)
    )
}

/// The length a string had before it was cut, from its first marker
/// (`[TRUNCATED: 45231 → 5000 bytes]`), or its own: both count the bytes of the string's JSON
/// text (a newline is `\n`, two bytes), so that a line and its cut log line say the same.
pub fn original_len(s: &str) -> usize {
    s.find("[TRUNCATED: ")
        .and_then(|i| {
            let rest = &s[i + 12..];
            let digits = rest.find(|c: char| !c.is_ascii_digit())?;
            rest[digits..]
                .starts_with(" → ")
                .then(|| rest[..digits].parse().ok())?
        })
        .unwrap_or_else(|| json_len(s))
}

/// The bytes of `s` written as a JSON string, its quotes aside.
fn json_len(s: &str) -> usize {
    s.chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            c if (c as u32) < 0x20 => 6,
            c => c.len_utf8(),
        })
        .sum()
}

/// The gist of an event nobody's rules know: its short scalar fields as `key=value` (ids,
/// types and times left out, as the line shows them), then its containers by size; never its
/// JSON.
fn fallback(v: &Value) -> String {
    let Value::Object(m) = v else {
        return match v {
            Value::String(s) => first_line(s, 160),
            Value::Array(a) => format!("[{} items]", a.len()),
            other => other.to_string(),
        };
    };
    const QUIET: [&str; 10] = [
        "type",
        "subtype",
        "timestamp",
        "session_id",
        "sessionId",
        "uuid",
        "parent_uuid",
        "parentUuid",
        "parent_tool_use_id",
        "id",
    ];
    let mut out = Vec::new();
    for (k, x) in m.iter().filter(|(k, _)| !QUIET.contains(&k.as_str())) {
        match x {
            Value::String(t) if !t.trim().is_empty() => {
                out.push(format!("{k}={}", first_line(t, 60)))
            }
            Value::Number(n) => out.push(format!("{k}={n}")),
            Value::Bool(b) => out.push(format!("{k}={b}")),
            _ => {}
        }
    }
    for (k, x) in m.iter().filter(|(k, _)| !QUIET.contains(&k.as_str())) {
        match x {
            Value::Array(a) if !a.is_empty() => out.push(format!("{k}=[{} items]", a.len())),
            Value::Object(o) if !o.is_empty() => out.push(format!("{k}={{{} fields}}", o.len())),
            _ => {}
        }
    }
    let more = out.len().saturating_sub(6);
    out.truncate(6);
    if more > 0 {
        out.push(format!("(+{more} fields)"));
    }
    out.join(" ")
}

fn floor_char(s: &str, at: usize) -> usize {
    let mut i = at.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The first line of `s`, at most `max` bytes, with `…` when shortened.
pub fn first_line(s: &str, max: usize) -> String {
    let line = s
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if line.len() <= max && s.trim().lines().nth(1).is_none() {
        line.to_string()
    } else {
        format!("{}…", &line[..floor_char(line, max)])
    }
}

fn size(n: usize) -> String {
    if n >= 1 << 20 {
        format!("{:.1}MB", n as f64 / (1 << 20) as f64)
    } else if n >= 1 << 10 {
        format!("{:.1}KB", n as f64 / 1024.0)
    } else {
        format!("{n}B")
    }
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Found by the read side's attack (#49): a timestamp that `--redact` replaced showed its
    /// label with each `T` made a space (`[REDAC ED:jwt]`), and any string was cut to 19
    /// characters. Only a date's `T` is a space now; anything else is shown as written.
    #[test]
    fn a_timestamp_that_is_no_date_is_shown_as_written() {
        let time = |ts: &str| time_of(&json!({ "timestamp": ts })).unwrap();
        assert_eq!(time("2026-02-11T22:54:29.123Z"), "2026-02-11 22:54:29");
        assert_eq!(
            time("2026-02-11T22:54:29+05:30"),
            "2026-02-11 22:54:29+05:30"
        );
        assert_eq!(time("[REDACTED:jwt]"), "[REDACTED:jwt]");
        assert_eq!(
            time("[REDACTED:aws_secret_key] [REDACTED:jwt]"),
            "[REDACTED:aws_secret_key] [REDACTED:jwt]"
        );
        assert_eq!(time("-0001-01-01T00:00:00Z"), "-0001-01-01T00:00:00Z");
        assert_eq!(time("TTTT"), "TTTT");
    }

    #[test]
    fn sizes_come_from_the_cut_marker() {
        assert_eq!(
            original_len("head[TRUNCATED: 51234 → 4800 bytes]tail"),
            51234
        );
        assert_eq!(original_len("no marker"), 9);
        let v = json!({"type":"user","message":{"content":[{"type":"tool_result","content":"a[TRUNCATED: 51234 → 10 bytes]b"}]}});
        assert!(gist(&v).contains("tool_result ok 50.0KB"), "{}", gist(&v));
    }

    #[test]
    fn paths_keep_their_file_name() {
        let v = json!({"type":"assistant","message":{"content":[{"type":"tool_use","name":"Read","input":{"file_path":"/home/user/projects/spotter-worktrees/spotter-dov/lib/spotter/transcripts/parser.ex"}}]}});
        let g = gist(&v);
        assert!(g.ends_with("transcripts/parser.ex"), "{g}");
        assert!(g.contains("file_path=…"), "{g}");
    }

    #[test]
    fn blank_texts_print_no_blank_gist() {
        let v = json!({"type":"assistant","message":{"content":[{"type":"text","text":"\n\n"}]}});
        assert_eq!(gist(&v), "assistant");
        let v = json!({"type":"assistant","message":{"content":[{"type":"text","text":"\n\nhello\nmore"}]}});
        assert_eq!(gist(&v), "assistant hello…");
    }

    #[test]
    fn formats_are_told_by_their_shape() {
        assert_eq!(
            format_of(&json!({"type":"item.completed","item":{}})),
            Format::CodexExec
        );
        assert_eq!(
            format_of(&json!({"type":"response_item","payload":{}})),
            Format::CodexSession
        );
        assert_eq!(
            format_of(&json!({"type":"tool_use","tool_name":"x","tool_id":"1"})),
            Format::Gemini
        );
        assert_eq!(
            format_of(&json!({"type":"text","part":{}})),
            Format::OpenCode
        );
        assert_eq!(
            format_of(&json!({"type":"tool_call","subtype":"started"})),
            Format::Cursor
        );
        assert_eq!(
            format_of(&json!({"type":"message","message":{"role":"user"}})),
            Format::Goose
        );
        assert_eq!(
            format_of(&json!({"type":"assistant","message":{}})),
            Format::Claude
        );
    }
}
