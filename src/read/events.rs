//! What an event says of itself, in any agent's stream, for every reader (`--view`'s filters,
//! `--summary`, the report): whether it reports a failure.

use serde_json::Value;

/// True for an event that reports a failure, in any agent's stream: `is_error`, an `error`
/// (top level, or in a Codex item or an opencode part), an error type or subtype, a failed
/// status, a non-zero exit code, or a tool result flagged as an error.
pub fn is_error_event(v: &Value) -> bool {
    let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
    let sub = v.get("subtype").and_then(Value::as_str).unwrap_or("");
    if kind == "error" && v.get("severity").and_then(Value::as_str) == Some("warning") {
        return false; // Gemini CLI's warnings come as error events
    }
    if matches!(kind, "error" | "turn.failed") || sub.starts_with("error") {
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
