//! Gists of Claude Code's events (stream-json and transcripts, and Cursor's, which share
//! their shapes), with the 2026 `system` subtypes and top-level events.

use serde_json::Value;

use super::{
    count_at, fallback, first_line, looks_like_path, original_len, path_tail, size, str_at, text_of,
};

/// Claude Code's stream-json and transcripts (and Cursor's, which share their shapes).
pub(super) fn claude(v: &Value, kind: &str, parts: &mut Vec<String>) {
    let sub = v.get("subtype").and_then(Value::as_str).unwrap_or("");
    if claude_2026(v, kind, sub, parts) {
        return;
    }
    let blocks = v.pointer("/message/content");
    match kind {
        "assistant" | "user" => {
            let items: Vec<Value> = match blocks {
                Some(Value::Array(a)) => a.clone(),
                Some(Value::String(s)) => vec![serde_json::json!({"type": "text", "text": s})],
                _ => Vec::new(),
            };
            for b in &items {
                parts.push(block_gist(b));
            }
        }
        "result" => {
            let cost = v.get("total_cost_usd").and_then(Value::as_f64);
            let turns = v.get("num_turns").and_then(Value::as_u64);
            let mut s = String::new();
            if let Some(c) = cost {
                s.push_str(&format!("cost ${c:.4}"));
            }
            if let Some(t) = turns {
                s.push_str(&format!(
                    "{}{t} turns",
                    if s.is_empty() { "" } else { ", " }
                ));
            }
            if v.get("is_error") == Some(&Value::Bool(true)) {
                s.push_str(if s.is_empty() { "ERROR" } else { " ERROR" });
            }
            for (key, name) in [
                ("terminal_reason", "ended"),
                ("api_error_status", "API status"),
                ("origin", "origin"),
            ] {
                let x = match v.get(key) {
                    Some(Value::String(x)) if x != "completed" => first_line(x, 40),
                    Some(Value::Number(n)) => n.to_string(),
                    _ => continue,
                };
                let sep = if s.is_empty() { "" } else { ", " };
                s.push_str(&format!("{sep}{name} {x}"));
            }
            if let Some(r) = v.get("result").and_then(Value::as_str) {
                let sep = if s.is_empty() { "" } else { ": " };
                s.push_str(&format!("{sep}{}", first_line(r, 160)));
            }
            parts.push(s);
        }
        "system" => match v.get("subtype").and_then(Value::as_str).unwrap_or("") {
            "api_error" => {
                let code = v
                    .pointer("/cause/code")
                    .or_else(|| v.pointer("/error/cause/code"))
                    .or_else(|| v.pointer("/error/error/type"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                parts.push(format!(
                    "attempt {}/{}: {code}",
                    count_at(v, "retryAttempt"),
                    count_at(v, "maxRetries")
                ));
            }
            "api_retry" => {
                parts.push(format!(
                    "attempt {}/{} status {}: {}",
                    count_at(v, "attempt"),
                    count_at(v, "max_retries"),
                    count_at(v, "error_status"),
                    first_line(str_at(v, "/error"), 120)
                ));
            }
            sub if sub.starts_with("hook_") => {
                parts.push(str_at(v, "/hook_name").to_string());
                if let Some(code) = v.get("exit_code").and_then(Value::as_i64) {
                    parts.push(format!("exit {code}"));
                }
                let out = ["stderr", "stdout", "output"]
                    .iter()
                    .map(|k| str_at(v, &format!("/{k}")))
                    .find(|o| !o.trim().is_empty())
                    .unwrap_or("");
                parts.push(first_line(out, 120));
            }
            _ => parts.push(fallback(v)),
        },
        "stream_event" => {
            let e = v.get("event").unwrap_or(&Value::Null);
            parts.push(str_at(e, "/type").to_string());
            let delta = e.get("delta").unwrap_or(&Value::Null);
            for k in ["text", "thinking", "partial_json"] {
                if let Some(t) = delta.get(k).and_then(Value::as_str) {
                    parts.push(first_line(t, 120));
                }
            }
        }
        "progress" => {
            let data = v.get("data").unwrap_or(&Value::Null);
            for key in ["type", "hookEvent", "hookName", "command"] {
                if let Some(x) = data.get(key).and_then(Value::as_str) {
                    parts.push(first_line(x, 100));
                }
            }
        }
        "non_json" | "truncated" => {
            parts.push(first_line(
                v.get("text").and_then(Value::as_str).unwrap_or(""),
                200,
            ));
        }
        _ => parts.push(fallback(v)),
    }
}

/// Claude Code's 2026 `system` subtypes and top-level events; false for others.
fn claude_2026(v: &Value, kind: &str, sub: &str, parts: &mut Vec<String>) -> bool {
    let count = |p: &str| v.pointer(p).and_then(Value::as_array).map_or(0, Vec::len);
    match (kind, sub) {
        ("conversation_reset", _) | ("system", "conversation_reset") => parts.push(format!(
            "new conversation {} ({})",
            str_at(v, "/new_conversation_id"),
            str_at(v, "/trigger")
        )),
        ("system", "model_refusal_fallback" | "model_refusal_no_fallback") => {
            parts.push(format!(
                "REFUSAL: {} message(s) retracted",
                count("/retracted_message_uuids")
            ));
            if sub == "model_refusal_fallback" {
                parts.push(format!("falling back to {}", str_at(v, "/fallback_model")));
            }
        }
        ("system", "session_state_changed") => parts.push(str_at(v, "/state").to_string()),
        ("system", t) if t.starts_with("task_") => {
            parts.push(str_at(v, "/task_id").to_string());
            for key in ["status", "description", "summary", "last_tool_name"] {
                if let Some(x) = v.get(key).and_then(Value::as_str) {
                    parts.push(first_line(x, 100));
                }
            }
        }
        ("system", "permission_denied") | ("permission_denied", _) => {
            parts.push(format!("DENIED {}", str_at(v, "/tool_name")));
            parts.push(first_line(str_at(v, "/reason"), 120));
        }
        ("system", "files_persisted") => parts.push(format!(
            "{} file(s) persisted, {} failed",
            count("/files"),
            count("/failed")
        )),
        ("system", "notification") | ("notification", _) => {
            parts.push(first_line(str_at(v, "/message"), 160))
        }
        ("tool_progress", _) => parts.push(format!(
            "{} running {} s",
            str_at(v, "/tool_name"),
            count_at(v, "elapsed_time_seconds")
        )),
        ("system", "init") => {
            for key in ["model", "cwd"] {
                if let Some(x) = v.get(key).and_then(Value::as_str) {
                    parts.push(format!("{key}={}", first_line(x, 80)));
                }
            }
            let failed = v
                .get("mcp_servers")
                .and_then(Value::as_array)
                .map_or(0, |a| {
                    a.iter()
                        .filter(|m| m.get("status") == Some(&Value::from("failed")))
                        .count()
                })
                .max(count("/mcp_server_errors"));
            if failed > 0 {
                parts.push(format!("MCP servers failed {failed}"));
            }
            if count("/plugin_errors") > 0 {
                parts.push(format!("plugin errors {}", count("/plugin_errors")));
            }
        }
        _ => return false,
    }
    true
}

fn block_gist(b: &Value) -> String {
    match b.get("type").and_then(Value::as_str) {
        Some("text") => first_line(b.get("text").and_then(Value::as_str).unwrap_or(""), 200),
        Some("thinking") => {
            format!(
                "thinking: {}",
                first_line(b.get("thinking").and_then(Value::as_str).unwrap_or(""), 120)
            )
        }
        Some("tool_use") => {
            let name = b.get("name").and_then(Value::as_str).unwrap_or("?");
            let mut s = format!("tool_use {name}");
            if let Some(Value::Object(input)) = b.get("input") {
                for (k, x) in input.iter().take(4) {
                    let val = match x {
                        Value::String(t) if looks_like_path(t) => path_tail(t, 60),
                        Value::String(t) => first_line(t, 60),
                        other => first_line(&other.to_string(), 60),
                    };
                    s.push_str(&format!(" {k}={val}"));
                }
            }
            s
        }
        Some("tool_result") => {
            let content = b.get("content").map(text_of).unwrap_or_default();
            let error = b.get("is_error").and_then(Value::as_bool).unwrap_or(false);
            format!(
                "tool_result {} {}: {}",
                if error { "ERROR" } else { "ok" },
                size(original_len(&content)),
                first_line(&content, 160)
            )
        }
        Some("image") => "[image]".to_string(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}
