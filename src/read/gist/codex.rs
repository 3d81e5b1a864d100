//! Gists of Codex's events: `exec --json` (thread, turn and item events) and session
//! (rollout) files.

use serde_json::Value;

use super::{args, fallback, first_line, outcome, str_at};

/// Codex `exec --json`: thread, turn and item events.
pub(super) fn codex_exec(v: &Value, kind: &str, parts: &mut Vec<String>) {
    match kind {
        "thread.started" => parts.push(format!("thread {}", str_at(v, "/thread_id"))),
        "turn.completed" => {
            let u = |k: &str| {
                v.pointer(&format!("/usage/{k}"))
                    .and_then(Value::as_u64)
                    .unwrap_or(0)
            };
            parts.push(format!(
                "tokens in {} (cached {}) out {}",
                u("input_tokens"),
                u("cached_input_tokens"),
                u("output_tokens")
            ));
        }
        "turn.failed" => parts.push(format!(
            "ERROR {}",
            first_line(str_at(v, "/error/message"), 200)
        )),
        "error" => parts.push(format!("ERROR {}", first_line(str_at(v, "/message"), 200))),
        _ => {
            let Some(item) = v.get("item") else {
                parts.push(fallback(v));
                return;
            };
            let it = |p: &str| str_at(item, p);
            let status = it("/status");
            match it("/type") {
                "agent_message" => parts.push(first_line(it("/text"), 200)),
                "reasoning" => parts.push(format!("thinking: {}", first_line(it("/text"), 120))),
                "command_execution" => {
                    let code = item.get("exit_code").and_then(Value::as_i64);
                    parts.push(format!("$ {}", first_line(it("/command"), 100)));
                    match code {
                        Some(c) => parts.push(format!(
                            "exit {c} {}",
                            outcome(c != 0, it("/aggregated_output"))
                        )),
                        None => parts.push(status.to_string()),
                    }
                }
                "file_change" => {
                    let changes: Vec<String> = item
                        .get("changes")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .map(|c| format!("{} {}", str_at(c, "/kind"), str_at(c, "/path")))
                                .collect()
                        })
                        .unwrap_or_default();
                    parts.push(format!("{status} {}", changes.join(", ")));
                }
                "mcp_tool_call" => {
                    parts.push(format!("mcp {}/{} {status}", it("/server"), it("/tool")));
                    parts.push(args(item.get("arguments"), 3));
                    if let Some(e) = item.pointer("/error/message").and_then(Value::as_str) {
                        parts.push(format!("ERROR {}", first_line(e, 160)));
                    }
                }
                "web_search" => parts.push(format!("search: {}", first_line(it("/query"), 160))),
                "todo_list" => {
                    let items = item.get("items").and_then(Value::as_array);
                    let done = items.map_or(0, |a| {
                        a.iter()
                            .filter(|t| t.get("completed") == Some(&Value::Bool(true)))
                            .count()
                    });
                    parts.push(format!("todo {done}/{} done", items.map_or(0, Vec::len)));
                }
                "error" => parts.push(format!("ERROR {}", first_line(it("/message"), 200))),
                "collab_tool_call" => {
                    parts.push(format!("{} {status}", it("/tool")));
                    for key in ["/prompt", "/receiver_thread_id"] {
                        if !it(key).is_empty() {
                            parts.push(first_line(it(key), 100));
                        }
                    }
                }
                "plan" => parts.push(format!("plan: {}", first_line(it("/text"), 160))),
                "request_user_input" => parts.push(format!(
                    "ASKS: {}",
                    first_line(
                        item.pointer("/questions/0/question")
                            .and_then(Value::as_str)
                            .unwrap_or(it("/prompt")),
                        160
                    )
                )),
                _ => parts.push(fallback(item)),
            }
        }
    }
}

/// Codex session (rollout) files: `type` + `payload`.
pub(super) fn codex_session(v: &Value, parts: &mut Vec<String>) {
    let Some(p) = v.get("payload") else { return };
    let at = |q: &str| str_at(p, q);
    match at("/type") {
        "message" => {
            parts.push(at("/role").to_string());
            let text = p
                .get("content")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|c| c.get("text").and_then(Value::as_str))
                        .collect::<Vec<_>>()
                        .join(
                            "
",
                        )
                })
                .unwrap_or_default();
            parts.push(first_line(&text, 200));
        }
        "function_call" | "custom_tool_call" => {
            parts.push(format!("call {}", at("/name")));
            let arguments = at("/arguments");
            let parsed: Option<Value> = serde_json::from_str(arguments).ok();
            parts.push(match parsed {
                Some(a @ Value::Object(_)) => args(Some(&a), 3),
                _ => first_line(arguments, 100),
            });
        }
        "function_call_output" | "custom_tool_call_output" => {
            // The output is text, or JSON text of `{"output":…,"metadata":{"exit_code":…}}`.
            let raw = match p.get("output") {
                Some(Value::String(s)) => s.clone(),
                Some(o) => o.to_string(),
                None => String::new(),
            };
            let parsed: Option<Value> = serde_json::from_str(&raw).ok();
            let code = parsed
                .as_ref()
                .and_then(|o| o.pointer("/metadata/exit_code"))
                .and_then(Value::as_i64);
            let text = parsed
                .as_ref()
                .and_then(|o| o.get("output").or_else(|| o.get("content")))
                .and_then(Value::as_str)
                .map_or(raw.clone(), str::to_string);
            parts.push(format!("output {}", at("/call_id")));
            if let Some(c) = code {
                parts.push(format!("exit {c}"));
            }
            parts.push(outcome(code.is_some_and(|c| c != 0), &text));
        }
        "reasoning" => {
            let summary: Vec<&str> = p
                .get("summary")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.get("text").and_then(Value::as_str))
                        .collect()
                })
                .unwrap_or_default();
            parts.push(format!("thinking: {}", first_line(&summary.join(" "), 160)));
        }
        "token_count" => {
            let total = p
                .pointer("/info/total_token_usage/total_tokens")
                .and_then(Value::as_u64);
            parts.push(total.map_or_else(String::new, |t| format!("tokens {t}")));
        }
        "agent_message" | "user_message" => parts.push(first_line(at("/message"), 200)),
        "item_started" | "item_updated" | "item_completed" => match p.get("item") {
            Some(item) => rollout_item(item, parts),
            None => parts.push(fallback(p)),
        },
        "session_meta" | "" => {
            for k in ["id", "cwd", "model", "cli_version"] {
                if let Some(x) = p.get(k).and_then(Value::as_str) {
                    parts.push(format!("{k}={}", first_line(x, 80)));
                }
            }
        }
        _ => parts.push(fallback(p)),
    }
}

/// The texts of `content`'s blocks (`{"type":"text"|"Text","text":…}`), joined.
fn texts(item: &Value, key: &str) -> String {
    item.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|c| c.get("text").and_then(Value::as_str).or_else(|| c.as_str()))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// A turn item of a Codex rollout file (0.145+: `item_completed` events whose `item.type` is
/// PascalCase, with the protocol's field names: camelCase for commands and tool calls).
fn rollout_item(item: &Value, parts: &mut Vec<String>) {
    let it = |p: &str| str_at(item, p);
    let status = it("/status");
    match it("/type") {
        "UserMessage" | "AgentMessage" => parts.push(first_line(&texts(item, "content"), 200)),
        "Plan" => parts.push(format!("plan: {}", first_line(it("/text"), 160))),
        "Reasoning" => parts.push(format!(
            "thinking: {}",
            first_line(&texts(item, "summary_text"), 160)
        )),
        "CommandExecution" => {
            let command = match item.get("command") {
                Some(Value::Array(words)) => words
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" "),
                Some(Value::String(c)) => c.clone(),
                _ => String::new(),
            };
            parts.push(format!("$ {}", first_line(&command, 100)));
            let output = [
                "/aggregatedOutput",
                "/formattedOutput",
                "/stderr",
                "/stdout",
            ]
            .iter()
            .map(|k| it(k))
            .find(|o| !o.trim().is_empty())
            .unwrap_or("");
            match item.get("exitCode").and_then(Value::as_i64) {
                Some(c) => parts.push(format!("exit {c} {}", outcome(c != 0, output))),
                None => parts.push(status.to_string()),
            }
        }
        "McpToolCall" | "DynamicToolCall" => {
            let name = match it("/server") {
                "" => it("/tool").to_string(),
                server => format!("{server}/{}", it("/tool")),
            };
            parts.push(format!("call {name} {status}"));
            parts.push(args(item.get("arguments"), 3));
            let error = item
                .pointer("/error/message")
                .or_else(|| item.get("error"))
                .and_then(Value::as_str);
            if let Some(e) = error {
                parts.push(format!("ERROR {}", first_line(e, 160)));
            }
        }
        "CollabAgentToolCall" => {
            parts.push(format!("{} {status}", it("/tool")));
            parts.push(first_line(it("/prompt"), 100));
        }
        "WebSearch" => parts.push(format!("search: {}", first_line(it("/query"), 160))),
        "FileChange" => {
            let changes: Vec<String> = item
                .get("changes")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .map(|(path, c)| format!("{} {path}", str_at(c, "/type")))
                        .collect()
                })
                .unwrap_or_default();
            parts.push(format!("{status} {}", changes.join(", ")));
        }
        "ImageView" => parts.push(format!("image {}", it("/path"))),
        "Sleep" => parts.push(format!(
            "sleep {} ms",
            item.get("duration_ms").and_then(Value::as_u64).unwrap_or(0)
        )),
        "ContextCompaction" => parts.push("context compacted".into()),
        "HookPrompt" => parts.push(first_line(&texts(item, "fragments"), 160)),
        "ImageGeneration" => {
            parts.push(status.to_string());
            parts.push(first_line(it("/revised_prompt"), 120));
        }
        "SubAgentActivity" => parts.push(format!("{} {}", it("/kind"), it("/agentPath"))),
        _ => parts.push(fallback(item)),
    }
}
