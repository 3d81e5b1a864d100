//! The gist of an event: one readable line for `--view`'s text format, for every agent's
//! stream: Claude Code (stream-json and transcripts), Codex (`exec --json` and session files),
//! Gemini CLI, opencode, Cursor and Goose. Never ciphertext or base64: payloads are
//! descriptors by the time an event gets here, and reasoning shows its summary.

use serde_json::Value;

/// The stream an event comes from, told by its shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Claude,
    CodexExec,
    CodexSession,
    Gemini,
    OpenCode,
    Cursor,
    Goose,
}

/// Which agent's stream an event is from, by its `type` and the fields beside it.
pub fn format_of(v: &Value) -> Format {
    let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
    let has = |k: &str| v.get(k).is_some();
    if kind.starts_with("thread.") || kind.starts_with("turn.") || kind.starts_with("item.") {
        return Format::CodexExec;
    }
    if has("payload")
        && matches!(
            kind,
            "session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted"
        )
    {
        return Format::CodexSession;
    }
    if has("part") || (has("sessionID") && matches!(kind, "step_start" | "step_finish")) {
        return Format::OpenCode;
    }
    if kind == "tool_call" || kind == "thinking" || has("timestamp_ms") {
        return Format::Cursor;
    }
    if matches!(kind, "message" | "notification" | "complete")
        && v.get("message").is_some_and(Value::is_object)
        || kind == "complete"
        || kind == "notification"
    {
        return Format::Goose;
    }
    if matches!(kind, "init" | "tool_use" | "tool_result")
        || (kind == "message" && v.get("role").is_some())
        || (kind == "result" && has("stats"))
    {
        return Format::Gemini;
    }
    Format::Claude
}

/// Event types some agent's rules here know, for any agent (plus smart-tee's own records).
const KNOWN_TYPES: [&str; 45] = [
    // Claude Code (stream-json and transcripts), Cursor
    "system",
    "assistant",
    "user",
    "result",
    "stream_event",
    "progress",
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "conversation_reset",
    "tool_progress",
    "permission_denied",
    "notification",
    "keep_alive",
    "control_request",
    "control_response",
    "control_cancel_request",
    "auth_status",
    "rate_limit_event",
    "thinking",
    "tool_call",
    // Codex exec --json and rollout files
    "thread.started",
    "turn.started",
    "turn.completed",
    "turn.failed",
    "item.started",
    "item.updated",
    "item.completed",
    "item.plan.delta",
    "error",
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "compacted",
    // Gemini CLI, opencode, Goose
    "init",
    "message",
    "tool_use",
    "tool_result",
    "step_start",
    "step_finish",
    "text",
    "reasoning",
    "complete",
    // smart-tee's records of lines that were not JSON
    "non_json",
];

/// Claude Code `system` subtypes and Codex item types the rules here know.
const KNOWN_SUBTYPES: [&str; 35] = [
    "init",
    "api_retry",
    "api_error",
    "compact_boundary",
    "hook_started",
    "hook_progress",
    "hook_response",
    "model_refusal_fallback",
    "model_refusal_no_fallback",
    "session_state_changed",
    "task_started",
    "task_progress",
    "task_updated",
    "task_notification",
    "permission_denied",
    "files_persisted",
    "notification",
    "status",
    "local_command",
    "informational",
    "turn_duration",
    "stop_hook_summary",
    "conversation_reset",
    // Codex items
    "agent_message",
    "reasoning",
    "command_execution",
    "file_change",
    "mcp_tool_call",
    "web_search",
    "todo_list",
    "error",
    "collab_tool_call",
    "plan",
    "request_user_input",
    "user_message",
];

/// The `type` (or `type/subtype`) of an event that smart-tee's rules do not know, if it is
/// one: a sign that the agent's format moved on and the readers may be stale.
pub fn unknown_kind(v: &Value) -> Option<String> {
    let kind = v.get("type").and_then(Value::as_str)?;
    if !KNOWN_TYPES.contains(&kind) && kind != "truncated" {
        return Some(kind.to_string());
    }
    let sub = match kind {
        "system" => v.get("subtype").and_then(Value::as_str),
        k if k.starts_with("item.") => v.pointer("/item/type").and_then(Value::as_str),
        _ => None,
    }?;
    (!KNOWN_SUBTYPES.contains(&sub)).then(|| format!("{kind}/{sub}"))
}

/// The agent that wrote a run-start event and its version, when the event says:
/// Claude Code's `claude_code_version`, Codex's `cli_version`, a `version`.
pub fn agent_version(v: &Value) -> Option<String> {
    [
        "/claude_code_version",
        "/payload/cli_version",
        "/cli_version",
        "/version",
    ]
    .iter()
    .find_map(|p| v.pointer(p).and_then(Value::as_str))
    .map(|s| first_line(s, 40))
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
    let kind = v.get("type").and_then(Value::as_str).unwrap_or("?");
    let format = format_of(v);
    let sub = match format {
        Format::CodexExec => v.pointer("/item/type").and_then(Value::as_str),
        Format::CodexSession => v.pointer("/payload/type").and_then(Value::as_str),
        _ => v.get("subtype").and_then(Value::as_str),
    };
    let label = match sub {
        Some(sub) => format!("{kind}/{sub}"),
        None => kind.to_string(),
    };
    match format {
        Format::Cursor if cursor(v, kind, &mut parts) => {}
        Format::Claude | Format::Cursor => claude(v, kind, &mut parts),
        Format::CodexExec => codex_exec(v, kind, &mut parts),
        Format::CodexSession => codex_session(v, &mut parts),
        Format::Gemini => gemini(v, kind, &mut parts),
        Format::OpenCode => opencode(v, kind, &mut parts),
        Format::Goose => goose(v, kind, &mut parts),
    }
    parts.retain(|p| !p.is_empty());
    (time_of(v), label, parts.join(" "))
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
        Some(Value::String(ts)) => {
            let mut t: String = ts.replace('T', " ").chars().take(19).collect();
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
/// (`[TRUNCATED: 45231 → 5000 bytes]`), or its own length.
pub fn original_len(s: &str) -> usize {
    s.find("[TRUNCATED: ")
        .and_then(|i| {
            let rest = &s[i + 12..];
            let digits = rest.find(|c: char| !c.is_ascii_digit())?;
            rest[digits..]
                .starts_with(" → ")
                .then(|| rest[..digits].parse().ok())?
        })
        .unwrap_or(s.len())
}

/// Codex `exec --json`: thread, turn and item events.
fn codex_exec(v: &Value, kind: &str, parts: &mut Vec<String>) {
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
fn codex_session(v: &Value, parts: &mut Vec<String>) {
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

/// Gemini CLI `--output-format stream-json`.
fn gemini(v: &Value, kind: &str, parts: &mut Vec<String>) {
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
fn opencode(v: &Value, kind: &str, parts: &mut Vec<String>) {
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
fn cursor(v: &Value, kind: &str, parts: &mut Vec<String>) -> bool {
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
fn goose(v: &Value, kind: &str, parts: &mut Vec<String>) {
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

/// Anything else: its compact JSON in the event's own key order, cut to one line.
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

/// Claude Code's stream-json and transcripts (and Cursor's, which share their shapes).
fn claude(v: &Value, kind: &str, parts: &mut Vec<String>) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
