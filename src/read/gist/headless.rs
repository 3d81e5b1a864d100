//! Gists of pi's, droid's, Copilot CLI's, Kimi CLI's and Antigravity's events.

use serde_json::Value;

use super::{args, fallback, first_line, outcome, str_at, text_of};

/// A pi message: its role, text, thinking and tool calls (`toolCall` blocks), or a tool
/// result's outcome; an assistant's stop when it is not a plain one.
fn pi_message(m: &Value, parts: &mut Vec<String>) {
    let role = str_at(m, "/role");
    parts.push(role.to_string());
    if role == "toolResult" {
        parts.push(str_at(m, "/toolName").to_string());
        let failed = m.get("isError") == Some(&Value::Bool(true));
        parts.push(outcome(
            failed,
            &text_of(m.get("content").unwrap_or(&Value::Null)),
        ));
        return;
    }
    match m.get("content") {
        Some(Value::String(t)) => parts.push(first_line(t, 200)),
        Some(Value::Array(blocks)) => {
            for b in blocks {
                parts.push(match str_at(b, "/type") {
                    "text" => first_line(str_at(b, "/text"), 200),
                    "thinking" => format!("thinking: {}", first_line(str_at(b, "/thinking"), 120)),
                    "toolCall" => format!(
                        "tool_use {} {}",
                        str_at(b, "/name"),
                        args(b.get("arguments"), 3)
                    ),
                    "image" => "[image]".into(),
                    other => format!("[{other}]"),
                });
            }
        }
        _ => {}
    }
    match str_at(m, "/stopReason") {
        "error" | "aborted" => parts.push(format!(
            "ERROR {}: {}",
            str_at(m, "/stopReason"),
            first_line(str_at(m, "/errorMessage"), 160)
        )),
        "" | "stop" | "toolUse" => {}
        other => parts.push(format!("stop={other}")),
    }
}

/// pi `--mode json`.
pub(super) fn pi(v: &Value, kind: &str, parts: &mut Vec<String>) {
    match kind {
        "session" => parts.push(format!(
            "session {} cwd={}",
            str_at(v, "/id"),
            first_line(str_at(v, "/cwd"), 80)
        )),
        "agent_start" | "turn_start" | "agent_settled" => {}
        "message_start" | "message_end" => {
            if let Some(m) = v.get("message") {
                pi_message(m, parts);
            }
        }
        "message_update" => {
            let e = v.get("assistantMessageEvent").unwrap_or(&Value::Null);
            parts.push(str_at(e, "/type").to_string());
            let delta = ["/delta", "/content"]
                .iter()
                .map(|p| str_at(e, p))
                .find(|d| !d.is_empty())
                .unwrap_or("");
            parts.push(first_line(delta, 160));
            if let Some(call) = e.get("toolCall") {
                parts.push(format!(
                    "tool_use {} {}",
                    str_at(call, "/name"),
                    args(call.get("arguments"), 3)
                ));
            }
        }
        "turn_end" => {
            let n = v
                .get("toolResults")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            parts.push(format!("{n} tool results"));
        }
        "agent_end" => {
            let n = v
                .get("messages")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            parts.push(format!("{n} messages"));
            if v.get("willRetry") == Some(&Value::Bool(true)) {
                parts.push("will retry".into());
            }
        }
        "tool_execution_start" => {
            parts.push(str_at(v, "/toolName").to_string());
            parts.push(args(v.get("args"), 3));
        }
        "tool_execution_update" => {
            parts.push(str_at(v, "/toolName").to_string());
            let partial = text_of(v.pointer("/partialResult/content").unwrap_or(&Value::Null));
            parts.push(first_line(&partial, 160));
        }
        "tool_execution_end" => {
            parts.push(str_at(v, "/toolName").to_string());
            let failed = v.get("isError") == Some(&Value::Bool(true));
            let out = text_of(v.pointer("/result/content").unwrap_or(&Value::Null));
            parts.push(outcome(failed, &out));
        }
        "auto_retry_start" => parts.push(format!(
            "attempt {} of {}: {}",
            v.get("attempt").and_then(Value::as_u64).unwrap_or(0),
            v.get("maxAttempts").and_then(Value::as_u64).unwrap_or(0),
            first_line(str_at(v, "/errorMessage"), 160)
        )),
        _ => parts.push(fallback(v)),
    }
}

/// droid `exec -o stream-json`.
pub(super) fn droid(v: &Value, kind: &str, parts: &mut Vec<String>) {
    match kind {
        "system" => parts.push(format!(
            "session {} model={}",
            str_at(v, "/session_id"),
            str_at(v, "/model")
        )),
        "message" => {
            parts.push(str_at(v, "/role").to_string());
            parts.push(first_line(str_at(v, "/text"), 200));
        }
        "tool_call" => {
            parts.push(str_at(v, "/toolName").to_string());
            parts.push(args(v.get("parameters"), 3));
        }
        "tool_result" => {
            let failed = v.get("isError") == Some(&Value::Bool(true));
            let out = match v.get("value") {
                Some(Value::String(s)) => s.clone(),
                Some(other) => text_of(other),
                None => String::new(),
            };
            parts.push(outcome(failed, &out));
        }
        "completion" => {
            if let Some(n) = v.get("numTurns").and_then(Value::as_u64) {
                parts.push(format!("{n} turns"));
            }
            parts.push(first_line(str_at(v, "/finalText"), 160));
        }
        "turn.failed" | "error" => {
            let msg = match str_at(v, "/error/message") {
                "" => [str_at(v, "/error"), str_at(v, "/message")].join(""),
                m => m.to_string(),
            };
            parts.push(format!("ERROR {}", first_line(&msg, 200)));
        }
        _ => parts.push(fallback(v)),
    }
}

/// GitHub Copilot CLI `--output-format json`: the event's `data`.
pub(super) fn copilot(v: &Value, kind: &str, parts: &mut Vec<String>) {
    let d = v.get("data").unwrap_or(&Value::Null);
    match kind {
        "session.start" => parts.push(format!(
            "session {} version={}",
            str_at(d, "/sessionId"),
            str_at(d, "/copilotVersion")
        )),
        "user.message" | "assistant.message" | "assistant.reasoning" | "session.info" => {
            parts.push(first_line(str_at(d, "/content"), 200));
            parts.push(first_line(str_at(d, "/message"), 200));
            for r in d
                .get("toolRequests")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                parts.push(format!(
                    "tool_use {} {}",
                    str_at(r, "/name"),
                    args(r.get("arguments"), 3)
                ));
            }
        }
        "assistant.message_delta" | "assistant.reasoning_delta" => {
            parts.push(first_line(str_at(d, "/deltaContent"), 160))
        }
        "assistant.turn_start" | "assistant.turn_end" => {
            parts.push(format!("turn {}", str_at(d, "/turnId")))
        }
        "tool.execution_start" => {
            parts.push(str_at(d, "/toolName").to_string());
            parts.push(args(d.get("arguments"), 3));
        }
        "tool.execution_complete" => {
            let failed = d.get("success") == Some(&Value::Bool(false));
            let out = match str_at(d, "/error/message") {
                "" => str_at(d, "/result/content"),
                e => e,
            };
            parts.push(outcome(failed, out));
        }
        "session.error" => parts.push(format!(
            "ERROR {} {}",
            str_at(d, "/errorType"),
            first_line(str_at(d, "/message"), 200)
        )),
        "result" => {
            if let Some(c) = v.get("exitCode").and_then(Value::as_i64) {
                parts.push(format!("exit {c}"));
            }
            if let Some(n) = v.pointer("/usage/premiumRequests").and_then(Value::as_f64) {
                parts.push(format!("premium requests {n}"));
            }
        }
        _ => parts.push(fallback(d)),
    }
}

/// Kimi CLI `--output-format=stream-json`: an OpenAI-style message.
pub(super) fn kimi(v: &Value, parts: &mut Vec<String>) {
    match v.get("content") {
        Some(Value::String(t)) => parts.push(first_line(t, 200)),
        Some(Value::Array(blocks)) => {
            for b in blocks {
                parts.push(match str_at(b, "/type") {
                    "text" => first_line(str_at(b, "/text"), 200),
                    "think" => format!("thinking: {}", first_line(str_at(b, "/think"), 120)),
                    other => format!("[{other}]"),
                });
            }
        }
        _ => {}
    }
    for c in v
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        // The arguments are a JSON text: shown as the object they spell.
        let text = str_at(c, "/function/arguments");
        let parsed = serde_json::from_str::<Value>(text).ok();
        parts.push(format!(
            "tool_use {} {}",
            str_at(c, "/function/name"),
            args(parsed.as_ref().or(c.pointer("/function/arguments")), 3)
        ));
    }
}

/// Google Antigravity `--output-format stream-json`.
pub(super) fn antigravity(v: &Value, event: &str, parts: &mut Vec<String>) {
    match event {
        "init" => parts.push(format!(
            "session {} model={}",
            str_at(v, "/conversation_id"),
            str_at(v, "/model")
        )),
        "step_update" => {
            parts.push(str_at(v, "/step_type").to_string());
            parts.push(str_at(v, "/status").to_string());
            if let Some(info) = v.get("tool_info").filter(|i| i.is_object()) {
                parts.push(str_at(info, "/name").to_string());
                parts.push(args(info.get("parameters"), 3));
                if let Some(out) = info.get("output") {
                    let failed = str_at(v, "/status") == "ERROR";
                    parts.push(outcome(failed, &text_of(out)));
                }
            } else {
                parts.push(first_line(str_at(v, "/text"), 200));
            }
        }
        "result" => {
            parts.push(str_at(v, "/status").to_string());
            let text = match str_at(v, "/error") {
                "" => str_at(v, "/result"),
                e => e,
            };
            parts.push(first_line(text, 200));
        }
        _ => parts.push(fallback(v)),
    }
}
