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
            let (code, text) = call_output(p);
            parts.push(format!("output {}", at("/call_id")));
            if let Some(c) = code {
                parts.push(format!("exit {c}"));
            }
            parts.push(outcome(output_failed(p, code, &text), &text));
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

/// A Codex rollout call output's exit code and text. The output is text (`Exit code: 1` on its
/// first line, for Codex's freeform shell), or JSON text of `{"output":…,"metadata":
/// {"exit_code":…}}`, or an object `{"content":…,"success":…}`.
fn call_output(p: &Value) -> (Option<i64>, String) {
    let raw = match p.get("output") {
        Some(Value::String(s)) => s.clone(),
        Some(o) => o.to_string(),
        None => String::new(),
    };
    let parsed: Option<Value> = serde_json::from_str(&raw).ok();
    let code = parsed
        .as_ref()
        .and_then(|o| o.pointer("/metadata/exit_code"))
        .and_then(Value::as_i64)
        .or_else(|| {
            raw.lines()
                .next()?
                .strip_prefix("Exit code: ")?
                .trim()
                .parse()
                .ok()
        });
    let text = parsed
        .as_ref()
        .and_then(|o| o.get("output").or_else(|| o.get("content")))
        .and_then(Value::as_str)
        .map_or(raw.clone(), str::to_string);
    (code, text)
}

/// True when a call's output says it failed: a non-zero exit code (a sandbox's denial exits
/// non-zero too), `success: false`, or the whole output is Codex's refusal of the call (the
/// user's: `exec command rejected by user`, `patch rejected by user`; its reviewer's).
fn output_failed(p: &Value, code: Option<i64>, text: &str) -> bool {
    let success = p
        .pointer("/output/success")
        .or_else(|| p.get("success"))
        .and_then(Value::as_bool);
    let text = text.trim();
    code.is_some_and(|c| c != 0)
        || success == Some(false)
        || matches!(
            text,
            "exec command rejected by user" | "patch rejected by user"
        )
        || text.starts_with("This action was rejected due to unacceptable risk")
}

/// True for a Codex rollout line whose call output says the call failed (see
/// [`output_failed`]): what `--summary` counts as a failed call and `--errors` finds.
pub fn call_output_failed(v: &Value) -> bool {
    let Some(p) = v.get("payload") else {
        return false;
    };
    if v.get("type").and_then(Value::as_str) != Some("response_item")
        || !matches!(
            p.get("type").and_then(Value::as_str),
            Some("function_call_output" | "custom_tool_call_output")
        )
    {
        return false;
    }
    let (code, text) = call_output(p);
    output_failed(p, code, &text)
}

/// True for a Codex rollout line that says something failed: a call's output (see
/// [`call_output_failed`]), or a turn cut short (`turn_aborted`).
pub fn rollout_failure(v: &Value) -> bool {
    call_output_failed(v)
        || (v.get("type").and_then(Value::as_str) == Some("event_msg")
            && v.pointer("/payload/type").and_then(Value::as_str) == Some("turn_aborted"))
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
