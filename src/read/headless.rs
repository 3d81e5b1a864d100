//! What the events of the agents not shaped like Claude Code say of their run, in one place
//! for every reader (`--summary`, the report's pairing of calls to results, the gists): pi,
//! Factory droid, GitHub Copilot CLI, Kimi CLI and Google Antigravity. Per event: the tool
//! calls it opens and closes, whether it starts a run, whether it ends one (and how), and the
//! tokens and cost it reports. Amp and Qwen Code write Claude Code's shape and are read as it.
//!
//! The shapes, as each tool documents them (docs/cut-policy.md says which were checked against
//! the tool's source or documentation and which are unverified):
//! - pi `--mode json`: `tool_execution_start` / `_end` (`toolCallId`, `toolName`, `isError`);
//!   usage on the assistant `message_end` (`message.usage {input, output, cacheRead,
//!   cacheWrite, cost.total}`, input uncached); the run ends with `agent_end` (unless
//!   `willRetry`) or `agent_settled`, failed when the last assistant message stopped with
//!   `error` or `aborted`.
//! - droid `exec -o stream-json`: `tool_call {id, toolName, parameters}`, `tool_result {id,
//!   isError, value}`, ending in `completion {finalText, numTurns, durationMs, usage}`, or in
//!   `turn.failed {error}`, which has Codex's shape and is read as Codex's (a failed run).
//! - Copilot CLI `--output-format json`: `tool.execution_start` / `_complete` (`data.toolCallId`,
//!   `data.success`); output tokens on `assistant.message` (`data.outputTokens`); the final
//!   `result` has `exitCode` and premium requests, no tokens.
//! - Kimi CLI `--output-format=stream-json`: OpenAI-style messages: `tool_calls[]` on an
//!   assistant message, `{"role":"tool","tool_call_id"}` results; no usage, no final event.
//! - Antigravity `--output-format stream-json`: `event` `init`, `step_update` (a tool call's
//!   `tool_info`, its `status`), `result` (`status` SUCCESS / ERROR, `usage {input_tokens,
//!   output_tokens, cache_read_tokens}`, input counting the cache read).

use serde_json::Value;

use crate::line::agents::Format;
use crate::read::summary::Tokens;

/// A tool call an event opens: its id (when given) and the tool's name.
pub type Opened = (Option<String>, String);
/// A tool call an event closes: its id (when given) and whether it failed.
pub type Closed = (Option<String>, bool);

fn str_at(v: &Value, p: &str) -> Option<String> {
    v.pointer(p).and_then(Value::as_str).map(str::to_string)
}

fn kind(v: &Value) -> &str {
    v.get("type").and_then(Value::as_str).unwrap_or("")
}

/// Antigravity's discriminator.
pub fn event(v: &Value) -> &str {
    v.get("event").and_then(Value::as_str).unwrap_or("")
}

/// True for the formats read here.
pub fn reads(f: Format) -> bool {
    matches!(
        f,
        Format::Pi | Format::Droid | Format::Copilot | Format::Kimi | Format::Antigravity
    )
}

/// The tool calls `v` opens and those it closes.
pub fn calls(v: &Value, f: Format) -> (Vec<Opened>, Vec<Closed>) {
    let (mut opened, mut closed) = (Vec::new(), Vec::new());
    match f {
        Format::Pi => match kind(v) {
            "tool_execution_start" => opened.push((
                str_at(v, "/toolCallId"),
                str_at(v, "/toolName").unwrap_or_default(),
            )),
            "tool_execution_end" => closed.push((
                str_at(v, "/toolCallId"),
                v.get("isError") == Some(&Value::Bool(true)),
            )),
            _ => {}
        },
        Format::Droid => match kind(v) {
            "tool_call" => opened.push((
                str_at(v, "/id").or_else(|| str_at(v, "/toolId")),
                str_at(v, "/toolName").unwrap_or_default(),
            )),
            "tool_result" => closed.push((
                str_at(v, "/id").or_else(|| str_at(v, "/toolId")),
                v.get("isError") == Some(&Value::Bool(true)),
            )),
            _ => {}
        },
        Format::Copilot => match kind(v) {
            "tool.execution_start" => opened.push((
                str_at(v, "/data/toolCallId"),
                str_at(v, "/data/toolName").unwrap_or_default(),
            )),
            "tool.execution_complete" => closed.push((
                str_at(v, "/data/toolCallId"),
                v.pointer("/data/success") == Some(&Value::Bool(false)),
            )),
            _ => {}
        },
        Format::Kimi => {
            // A call has its `function`; the marker of an array smart-tee cut has none.
            for c in v
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|c| c.get("function").is_some())
            {
                opened.push((
                    str_at(c, "/id"),
                    str_at(c, "/function/name").unwrap_or_default(),
                ));
            }
            if v.get("role").and_then(Value::as_str) == Some("tool") {
                closed.push((str_at(v, "/tool_call_id"), kimi_tool_failed(v)));
            }
        }
        // A tool step is updated while it runs and once more when it is done.
        Format::Antigravity if event(v) == "step_update" => {
            if let Some(info) = v.get("tool_info").filter(|i| i.is_object()) {
                let id = str_at(v, "/step_id");
                match v.get("status").and_then(Value::as_str).unwrap_or("") {
                    "DONE" | "ERROR" => {
                        closed.push((id, str_at(v, "/status").as_deref() == Some("ERROR")))
                    }
                    _ => opened.push((id, str_at(info, "/name").unwrap_or_default())),
                }
            }
        }
        _ => {}
    }
    (opened, closed)
}

/// True when a Kimi tool message reports a failed call: kimi-cli writes a `ToolError`'s result
/// as a first text part `<system>ERROR: …</system>` (`tool_result_to_message` in
/// `kimi_cli/soul/message.py`), the content a string or a list of parts.
fn kimi_tool_failed(v: &Value) -> bool {
    const MARK: &str = "<system>ERROR";
    match v.get("content") {
        Some(Value::String(t)) => t.starts_with(MARK),
        Some(Value::Array(parts)) => parts
            .first()
            .and_then(|p| p.get("text"))
            .and_then(Value::as_str)
            .is_some_and(|t| t.starts_with(MARK)),
        _ => false,
    }
}

/// The tool calls `v` counts, of the calls it opens and closes ([`calls`]): those it opens.
/// Antigravity updates a tool step while it runs and once more when it is done: each update of
/// a step with an id is given, for the reader to count the step once by it (a run that dies
/// with a step running still counted it); a step without one is counted when done.
pub fn counted_calls(v: &Value, f: Format, opened: Vec<Opened>, closed: &[Closed]) -> Vec<Opened> {
    if f != Format::Antigravity {
        return opened;
    }
    let name = str_at(v, "/tool_info/name").unwrap_or_default();
    let closed = closed.iter().map(|(id, _)| (id.clone(), name.clone()));
    opened
        .into_iter()
        .filter(|(id, _)| id.is_some())
        .chain(closed)
        .collect()
}

/// True when `v` starts a run: pi's `session` header, droid's `system/init`, Copilot's
/// `session.start`, Antigravity's `init`.
pub fn starts_run(v: &Value, f: Format) -> bool {
    match f {
        Format::Pi => kind(v) == "session",
        Format::Droid => kind(v) == "system" && str_at(v, "/subtype").as_deref() == Some("init"),
        Format::Copilot => kind(v) == "session.start",
        Format::Antigravity => event(v) == "init",
        _ => false,
    }
}

/// How a run ends, when `v` is its final event: whether it went well, and a line saying how.
/// `last_stop` is pi's last assistant message's `stopReason` and `errorMessage`.
pub fn ending(
    v: &Value,
    f: Format,
    last_stop: Option<&(String, String)>,
) -> Option<(bool, String)> {
    match f {
        Format::Pi => {
            let k = kind(v);
            let last = k == "agent_settled"
                || (k == "agent_end" && v.get("willRetry") != Some(&Value::Bool(true)));
            if !last {
                return None;
            }
            Some(match last_stop {
                Some((stop, msg)) if matches!(stop.as_str(), "error" | "aborted") => {
                    (false, format!("{k}: {stop}: {}", first_line(msg)))
                }
                _ => (true, k.to_string()),
            })
        }
        Format::Droid => match kind(v) {
            "completion" => Some((
                true,
                format!(
                    "completion{}",
                    str_at(v, "/finalText")
                        .map_or(String::new(), |t| format!(": {}", first_line(&t)))
                ),
            )),
            _ => None,
        },
        Format::Copilot if kind(v) == "result" => {
            let code = v.get("exitCode").and_then(Value::as_i64);
            Some((
                code.is_none_or(|c| c == 0),
                format!(
                    "result: exit code {}",
                    code.map_or("–".into(), |c| c.to_string())
                ),
            ))
        }
        Format::Antigravity if event(v) == "result" => {
            let status = str_at(v, "/status").unwrap_or_default();
            let text = str_at(v, "/error")
                .or_else(|| str_at(v, "/result"))
                .map_or(String::new(), |t| format!(": {}", first_line(&t)));
            Some((status == "SUCCESS", format!("result {status}{text}")))
        }
        _ => None,
    }
}

/// pi's assistant `message_end`: its `stopReason` and `errorMessage`.
pub fn pi_stop(v: &Value) -> Option<(String, String)> {
    if kind(v) != "message_end" || str_at(v, "/message/role").as_deref() != Some("assistant") {
        return None;
    }
    Some((
        str_at(v, "/message/stopReason").unwrap_or_default(),
        str_at(v, "/message/errorMessage").unwrap_or_default(),
    ))
}

/// Tokens an event reports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reported {
    /// One message's (pi, Copilot), with its cost when given: a run's are added.
    Piece(Tokens, Option<f64>),
    /// The run's, in all (droid's `completion`, Antigravity's `result`).
    Run(Tokens),
}

/// The tokens `v` reports, if any.
pub fn tokens(v: &Value, f: Format) -> Option<Reported> {
    let n = |x: &Value, p: &str| x.pointer(p).and_then(Value::as_u64);
    match f {
        Format::Pi if pi_stop(v).is_some() => {
            let u = v.pointer("/message/usage")?;
            let t = Tokens {
                input: n(u, "/input"),
                cache_read: n(u, "/cacheRead"),
                cache_write: n(u, "/cacheWrite"),
                output: n(u, "/output"),
                ..Tokens::default()
            };
            Some(Reported::Piece(
                t,
                u.pointer("/cost/total").and_then(Value::as_f64),
            ))
        }
        Format::Copilot if kind(v) == "assistant.message" => {
            let output = n(v, "/data/outputTokens")?;
            Some(Reported::Piece(
                Tokens {
                    output: Some(output),
                    ..Tokens::default()
                },
                None,
            ))
        }
        Format::Droid if kind(v) == "completion" => {
            let u = v.get("usage").filter(|u| u.is_object())?;
            Some(Reported::Run(Tokens {
                input: n(u, "/input_tokens").or(n(u, "/inputTokens")),
                cache_read: n(u, "/cache_read_input_tokens").or(n(u, "/cacheReadTokens")),
                cache_write: n(u, "/cache_creation_input_tokens").or(n(u, "/cacheCreationTokens")),
                output: n(u, "/output_tokens").or(n(u, "/outputTokens")),
                ..Tokens::default()
            }))
        }
        Format::Antigravity if event(v) == "result" => {
            let u = v.get("usage").filter(|u| u.is_object())?;
            let (prompt, cached) = (n(u, "/input_tokens"), n(u, "/cache_read_tokens"));
            let t = match cached {
                Some(c) => Tokens {
                    input: prompt.map(|p| p.saturating_sub(c)),
                    cache_read: Some(c),
                    ..Tokens::default()
                },
                None => Tokens {
                    input_whole: prompt,
                    ..Tokens::default()
                },
            };
            Some(Reported::Run(Tokens {
                output: n(u, "/output_tokens"),
                ..t
            }))
        }
        _ => None,
    }
}

/// The session an event names where it is not `session_id`: pi's header's `id`, Copilot's
/// `data.sessionId` (or the final result's `sessionId`), Antigravity's `conversation_id`.
pub fn session(v: &Value, f: Format) -> Option<String> {
    match f {
        Format::Pi if kind(v) == "session" => str_at(v, "/id"),
        Format::Copilot => str_at(v, "/data/sessionId"),
        Format::Antigravity => str_at(v, "/conversation_id"),
        _ => None,
    }
}

/// The model a run's start names (Antigravity's `init`).
pub fn declared_model(v: &Value, f: Format) -> Option<String> {
    match f {
        Format::Antigravity if event(v) == "init" => str_at(v, "/model"),
        _ => None,
    }
}

/// The turns and duration a final event gives.
pub fn turns_and_duration(v: &Value, f: Format) -> (Option<u64>, Option<u64>) {
    let n = |p: &str| v.pointer(p).and_then(Value::as_u64);
    match f {
        Format::Droid if kind(v) == "completion" => (n("/numTurns"), n("/durationMs")),
        Format::Copilot if kind(v) == "result" => (None, n("/usage/sessionDurationMs")),
        Format::Antigravity if event(v) == "result" => (n("/num_turns"), n("/duration_ms")),
        _ => (None, None),
    }
}

fn first_line(s: &str) -> String {
    crate::read::gist::first_line(s, 120)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pi_ends_with_agent_end_unless_it_retries_and_fails_on_an_error_stop() {
        let stop = ("error".to_string(), "429 rate limited".to_string());
        let end = json!({"type":"agent_end","messages":[]});
        assert_eq!(
            ending(&end, Format::Pi, Some(&stop)),
            Some((false, "agent_end: error: 429 rate limited".into()))
        );
        let retry = json!({"type":"agent_end","willRetry":true});
        assert_eq!(ending(&retry, Format::Pi, Some(&stop)), None);
        let ok = ("stop".to_string(), String::new());
        assert_eq!(
            ending(&end, Format::Pi, Some(&ok)),
            Some((true, "agent_end".into()))
        );
    }

    #[test]
    fn antigravity_input_counts_its_cache_read() {
        let v = json!({"event":"result","status":"SUCCESS",
            "usage":{"input_tokens":1000,"output_tokens":50,"cache_read_tokens":600}});
        let Some(Reported::Run(t)) = tokens(&v, Format::Antigravity) else {
            panic!("no tokens")
        };
        assert_eq!(
            (t.input, t.cache_read, t.cache_write, t.output),
            (Some(400), Some(600), None, Some(50))
        );
    }

    #[test]
    fn a_kimi_tool_message_closes_its_call_and_copilot_says_failure_by_success() {
        let v = json!({"role":"tool","tool_call_id":"tc_1","content":"x"});
        assert_eq!(
            calls(&v, Format::Kimi).1,
            vec![(Some("tc_1".into()), false)]
        );
        let v = json!({"type":"tool.execution_complete","data":{"toolCallId":"c","success":false}});
        assert_eq!(calls(&v, Format::Copilot).1, vec![(Some("c".into()), true)]);
    }

    /// Kimi's failed calls counted 0: its tool messages were taken to say nothing of failure.
    #[test]
    fn a_kimi_tool_error_is_a_failed_call() {
        // A failed call's result opens with kimi-cli's error mark, as text or as a first part.
        let v = json!({"role":"tool","tool_call_id":"tc_2",
            "content":"<system>ERROR: Command failed with exit code: 1.</system>"});
        assert_eq!(calls(&v, Format::Kimi).1, vec![(Some("tc_2".into()), true)]);
        let v = json!({"role":"tool","tool_call_id":"tc_3",
            "content":[{"type":"text","text":"<system>ERROR: boom</system>"},{"type":"text","text":"out"}]});
        assert_eq!(calls(&v, Format::Kimi).1, vec![(Some("tc_3".into()), true)]);
        let v = json!({"role":"tool","tool_call_id":"tc_4","content":"ok <system>ERROR</system>"});
        assert_eq!(
            calls(&v, Format::Kimi).1,
            vec![(Some("tc_4".into()), false)]
        );
    }
}
