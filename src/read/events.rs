//! What an event says of itself, in any agent's stream, for every reader (`--view`'s filters,
//! `--summary`, the report): whether it reports a failure.

use std::cell::RefCell;

use serde_json::Value;

use crate::cut::engine::{EngineConfig, LineEngine, Outcome};

/// The most values (by the commas and colons that part them, outside strings) of a line a reader
/// parses whole.
/// A line of more is parsed as the engine cuts it to [`CUT_TO`] bytes, which keeps what readers
/// ask of an event (its structure, ids, types, times, errors, usage and costs): parsed whole,
/// a line of millions of small values took about fifty times its size (3.2 GB for a line of 62
/// MB; `--view --errors`, `--summary`, the report page, MCP's `list_logs`). A line of long
/// strings, however long, is parsed whole: a message of thirty tool calls keeps every call.
pub const VALUES_WHOLE: usize = 100_000;

/// What a line of more than [`VALUES_WHOLE`] values is cut to before it is parsed.
pub const CUT_TO: usize = 256 << 10;

/// An event as a reader (a filter, `--summary`, the report page, MCP) looks at it: `line`
/// parsed whole, or as the engine cuts it when it has more than [`VALUES_WHOLE`] values; `None`
/// when it is not JSON.
pub fn parse(line: &[u8]) -> Option<Value> {
    if line.len() <= CUT_TO || !has_more_values(line, VALUES_WHOLE) {
        return serde_json::from_slice(line).ok();
    }
    thread_local! {
        static CUT: RefCell<(LineEngine, Vec<u8>)> = RefCell::new((
            LineEngine::new(EngineConfig {
                max_line_bytes: CUT_TO,
                ..EngineConfig::default()
            }),
            Vec::new(),
        ));
    }
    CUT.with_borrow_mut(|(engine, out)| {
        out.clear();
        match engine.process(line, out) {
            Outcome::Verbatim | Outcome::Cut => serde_json::from_slice(out).ok(),
            _ => None,
        }
    })
}

/// True when `line` holds more than `most` commas and colons outside its strings: the values a
/// parse makes. Those inside strings cost nothing to parse, and a message whose tool inputs hold
/// many (code, CSV) must be parsed whole, or the calls past the cut go uncounted.
fn has_more_values(line: &[u8], most: usize) -> bool {
    let mut values = 0;
    let mut in_string = false;
    for at in memchr::memchr3_iter(b'"', b',', b':', line) {
        match line[at] {
            b'"' if in_string => {
                let slashes = line[..at].iter().rev().take_while(|&&b| b == b'\\').count();
                in_string = slashes % 2 == 1;
            }
            b'"' => in_string = true,
            _ if in_string => {}
            _ => {
                values += 1;
                if values > most {
                    return true;
                }
            }
        }
    }
    false
}

/// True for an event that reports a failure, in any agent's stream: `is_error`, an `error`
/// (top level, or in a Codex item or an opencode part), an error type or subtype, a failed
/// status, a non-zero exit code, or a tool result flagged as an error (`isError` of pi and
/// droid, `success: false` of Copilot CLI); pi's assistant message that stopped on an error.
/// Antigravity's `ERROR` status.
pub fn is_error_event(v: &Value) -> bool {
    let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
    let sub = v.get("subtype").and_then(Value::as_str).unwrap_or("");
    if kind == "error" && v.get("severity").and_then(Value::as_str) == Some("warning") {
        return false; // Gemini CLI's warnings come as error events
    }
    if matches!(kind, "error" | "turn.failed" | "session.error") || sub.starts_with("error") {
        return true;
    }
    if v.get("isError") == Some(&Value::Bool(true)) {
        return true;
    }
    if kind == "message_end"
        && matches!(
            v.pointer("/message/stopReason").and_then(Value::as_str),
            Some("error" | "aborted")
        )
    {
        return true;
    }
    if crate::read::gist::rollout_failure(v) {
        return true;
    }
    let inner = [
        Some(v),
        v.get("item"),
        v.get("payload"),
        v.pointer("/payload/item"),
        v.pointer("/part/state"),
        v.get("message"),
        v.get("data"),
    ];
    for x in inner.into_iter().flatten() {
        if x.get("is_error") == Some(&Value::Bool(true))
            || (kind.starts_with("tool.") && x.get("success") == Some(&Value::Bool(false)))
        {
            return true;
        }
        if x.get("error").is_some_and(|e| !e.is_null() && e != "") {
            return true;
        }
        if matches!(
            x.get("status").and_then(Value::as_str),
            Some("error" | "failed" | "ERROR" | "FAILED")
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
