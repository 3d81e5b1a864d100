//! Gists of the other agents' events: Gemini CLI, opencode, Cursor's own events and Goose.

use serde_json::Value;

use super::{args, fallback, first_line, outcome, str_at};

/// Gemini CLI `--output-format stream-json`.
pub(super) fn gemini(v: &Value, kind: &str, parts: &mut Vec<String>) {
    match kind {
        "init" => parts.push(format!(
            "session {} model={}",
            str_at(v, "/session_id"),
            str_at(v, "/model")
        )),
        "message" => {
            parts.push(str_at(v, "/role").to_string());
            parts.push(first_line(str_at(v, "/content"), 200));
        }
        "tool_use" => {
            parts.push(str_at(v, "/tool_name").to_string());
            parts.push(args(v.get("parameters"), 4));
        }
        "tool_result" => {
            let failed = str_at(v, "/status") == "error";
            let error = str_at(v, "/error/message");
            let output = match str_at(v, "/output") {
                "" if failed => error,
                out => out,
            };
            parts.push(outcome(failed, output));
        }
        "error" => {
            let level = if str_at(v, "/severity") == "warning" {
                "WARNING"
            } else {
                "ERROR"
            };
            parts.push(format!(
                "{level} {}",
                first_line(str_at(v, "/message"), 200)
            ));
        }
        "result" => {
            parts.push(str_at(v, "/status").to_string());
            if let Some(e) = v.pointer("/error/message").and_then(Value::as_str) {
                parts.push(format!("ERROR {}", first_line(e, 160)));
            }
            let stats = v.get("stats").and_then(Value::as_object);
            let scalars: serde_json::Map<String, Value> = stats
                .into_iter()
                .flatten()
                .filter(|(_, x)| !x.is_object())
                .map(|(k, x)| (k.clone(), x.clone()))
                .collect();
            parts.push(args(Some(&Value::Object(scalars)), 4));
            if let Some(models) = v.pointer("/stats/models").and_then(Value::as_object) {
                let names: Vec<&str> = models.keys().map(String::as_str).take(4).collect();
                parts.push(format!("models {}", names.join(", ")));
            }
            if let Some(w) = v.get("warnings").and_then(Value::as_array)
                && !w.is_empty()
            {
                let first = w[0]
                    .as_str()
                    .or_else(|| w[0].get("message").and_then(Value::as_str))
                    .unwrap_or("");
                parts.push(format!("WARNINGS {}: {}", w.len(), first_line(first, 100)));
            }
        }
        _ => parts.push(fallback(v)),
    }
}

/// opencode `run --format json`.
pub(super) fn opencode(v: &Value, kind: &str, parts: &mut Vec<String>) {
    let part = v.get("part").unwrap_or(&Value::Null);
    match kind {
        "tool_use" => {
            let status = str_at(part, "/state/status");
            parts.push(format!("{} {status}", str_at(part, "/tool")));
            parts.push(args(part.pointer("/state/input"), 3));
            if let Some(out) = part.pointer("/state/output").and_then(Value::as_str) {
                parts.push(outcome(status == "error", out));
            } else if let Some(e) = part.pointer("/state/error").and_then(Value::as_str) {
                parts.push(format!("ERROR {}", first_line(e, 160)));
            }
        }
        "text" => parts.push(first_line(str_at(part, "/text"), 200)),
        "reasoning" => parts.push(format!(
            "thinking: {}",
            first_line(str_at(part, "/text"), 120)
        )),
        "step_start" => {}
        "step_finish" => {
            parts.push(str_at(part, "/reason").to_string());
            if let Some(c) = part.get("cost").and_then(Value::as_f64) {
                parts.push(format!("cost ${c:.4}"));
            }
        }
        "error" => {
            let e = v.get("error").unwrap_or(&Value::Null);
            let msg = e
                .pointer("/data/message")
                .or_else(|| e.get("message"))
                .and_then(Value::as_str)
                .unwrap_or("");
            parts.push(format!(
                "ERROR {} {}",
                str_at(e, "/name"),
                first_line(msg, 160)
            ));
        }
        _ => parts.push(fallback(v)),
    }
}

/// Cursor `agent -p --output-format stream-json`: its own tool calls and thinking; the rest is
/// shaped like Claude's (false: let the Claude gist speak).
pub(super) fn cursor(v: &Value, kind: &str, parts: &mut Vec<String>) -> bool {
    match kind {
        "thinking" => {
            parts.push(first_line(str_at(v, "/text"), 160));
            true
        }
        "tool_call" => {
            let Some(Value::Object(call)) = v.get("tool_call") else {
                return false;
            };
            let Some((name, body)) = call.iter().next() else {
                return false;
            };
            parts.push(name.trim_end_matches("ToolCall").to_string());
            parts.push(args(body.get("args"), 3));
            if let Some(result) = body.get("result") {
                if let Some(ok) = result.get("success") {
                    let out = ["stdout", "content", "output", "diffString"]
                        .iter()
                        .find_map(|k| ok.get(*k).and_then(Value::as_str))
                        .unwrap_or("");
                    let code = ok.get("exitCode").and_then(Value::as_i64);
                    if let Some(c) = code {
                        parts.push(format!("exit {c}"));
                    }
                    let lines = |k: &str| ok.get(k).and_then(Value::as_u64);
                    if let (Some(a), Some(r)) = (lines("linesAdded"), lines("linesRemoved")) {
                        parts.push(format!("+{a} -{r}"));
                    }
                    parts.push(outcome(code.is_some_and(|c| c != 0), out));
                } else {
                    let e = result
                        .get("error")
                        .or_else(|| result.get("failure"))
                        .unwrap_or(result);
                    let msg = e
                        .get("message")
                        .and_then(Value::as_str)
                        .map_or_else(|| e.to_string(), str::to_string);
                    parts.push(format!("ERROR {}", first_line(&msg, 160)));
                }
            }
            true
        }
        _ => false,
    }
}

/// Goose `run --output-format stream-json`.
pub(super) fn goose(v: &Value, kind: &str, parts: &mut Vec<String>) {
    match kind {
        "message" => {
            let m = v.get("message").unwrap_or(&Value::Null);
            parts.push(str_at(m, "/role").to_string());
            for c in m
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                parts.push(match str_at(c, "/type") {
                    "text" => first_line(str_at(c, "/text"), 200),
                    "thinking" => format!("thinking: {}", first_line(str_at(c, "/thinking"), 120)),
                    "toolRequest" => format!(
                        "tool_use {} {}",
                        str_at(c, "/toolCall/value/name"),
                        args(c.pointer("/toolCall/value/arguments"), 3)
                    ),
                    "toolResponse" => {
                        let r = c.get("toolResult").unwrap_or(&Value::Null);
                        let text = r
                            .get("value")
                            .and_then(Value::as_array)
                            .map(|a| {
                                a.iter()
                                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                                    .collect::<Vec<_>>()
                                    .join("\n")
                            })
                            .unwrap_or_default();
                        format!(
                            "tool_result {}",
                            outcome(str_at(r, "/status") == "error", &text)
                        )
                    }
                    other => format!("[{other}]"),
                });
            }
        }
        "notification" => {
            parts.push(str_at(v, "/extension_id").to_string());
            parts.push(first_line(str_at(v, "/message"), 160));
        }
        "error" => parts.push(format!("ERROR {}", first_line(str_at(v, "/error"), 200))),
        "complete" => {
            if let Some(t) = v.get("total_tokens").and_then(Value::as_u64) {
                parts.push(format!("tokens {t}"));
            }
        }
        _ => parts.push(fallback(v)),
    }
}
