//! Gathering a summary event by event: ids, times, tokens and cost, tools and files, errors,
//! the counts an orchestrator acts on, the agent and its version, and the conversations.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::health::{is_final, is_heartbeat};
use super::{
    CONVERSATION_CAP, Closed, LIST_CAP, MODEL_CAP, ModelUse, OTHER_TOOLS, SESSION_CAP, STRING_CAP,
    Summary, TOOL_CAP, clip, n, plus, s, sum,
};
use crate::line::agents::Head;
use crate::read::gist::{first_line, gist, time_of};
use crate::read::view::is_error_event;
use crate::read::when::event_instant;

/// True for a line that says nothing of the run: a record smart-tee wrote itself (`non_json`,
/// as a loop script's `=== Iteration N ===` line between runs becomes; `torn`) or a heartbeat.
/// After a final event it does not reopen the finished run (#48).
fn said_nothing(v: &Value, kind: &str) -> bool {
    matches!(kind, "non_json" | "torn") || is_heartbeat(v, kind)
}

impl Summary {
    /// Takes one event (a log line).
    pub fn add(&mut self, line: &[u8]) {
        if let Ok(v) = serde_json::from_slice::<Value>(line) {
            self.add_event(&v);
        }
    }

    /// Adds an event already parsed from a whole line.
    pub fn add_event(&mut self, v: &Value) {
        // A file's first event starts a conversation of its own (#48): runs of two files never
        // merge, whatever their events.
        let file_start =
            std::mem::take(&mut self.file_start) && self.parts.last().is_some_and(|p| p.events > 0);
        if file_start || self.starts_conversation(v) {
            if let Some(p) = self.parts.last() {
                self.closed.get_or_insert_with(Closed::default).add(p);
            }
            if self.parts.len() >= CONVERSATION_CAP {
                self.parts.remove(0);
                self.parts_dropped += 1;
            }
            self.parts.push(Summary {
                session: s(v, "/new_conversation_id"),
                ..Summary::default()
            });
        }
        if self.parts.is_empty() {
            self.parts.push(Summary::default());
        }
        if let Some(part) = self.parts.last_mut() {
            part.add_value(v, self.lines);
        }
        let at = self.lines;
        self.add_value(v, at);
        // A total's turns and duration are its conversations' (see [`Closed`]).
        if let (Some(closed), Some(current)) = (self.closed, self.parts.last()) {
            self.turns = plus(closed.turns, current.turns);
            self.duration_ms = plus(closed.duration_ms, current.duration_ms);
        }
    }

    /// True when `v` starts a conversation of its own: a `conversation_reset`, or the start of
    /// a run (an init, `thread.started`, `session_meta`) after a final event or of another
    /// session (runs appended with `-a`).
    fn starts_conversation(&self, v: &Value) -> bool {
        let Some(current) = self.parts.last() else {
            return false;
        };
        if current.events == 0 {
            return false;
        }
        let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
        let sub = v.get("subtype").and_then(Value::as_str).unwrap_or("");
        if kind == "conversation_reset" || (kind == "system" && sub == "conversation_reset") {
            return true;
        }
        let starts_run = (kind == "system" && sub == "init")
            || matches!(kind, "thread.started" | "session_meta")
            || (kind == "init" && v.get("session_id").is_some());
        if !starts_run {
            return false;
        }
        let session = ["/session_id", "/thread_id", "/payload/id"]
            .iter()
            .find_map(|p| s(v, p));
        let other_session = matches!((&session, &current.session), (Some(a), Some(b)) if a != b);
        current.finished.is_some() || other_session
    }

    /// Takes one parsed event.
    fn add_value(&mut self, v: &Value, line_no: u64) {
        self.drift.add(&Head::of_value(v), line_no);
        self.events += 1;
        if let Some(t) = time_of(v) {
            self.first_time.get_or_insert_with(|| t.clone());
            self.last_time = Some(t);
        }
        if self.session.is_none() {
            self.session = [
                "/session_id",
                "/sessionId",
                "/thread_id",
                "/sessionID",
                "/payload/id",
            ]
            .iter()
            .find_map(|p| s(v, p));
        }
        // `<synthetic>` is Claude Code's placeholder on its own error messages, not a model
        // that did the work (#48).
        if let Some(m) = ["/model", "/message/model", "/payload/model"]
            .iter()
            .find_map(|p| s(v, p))
            .filter(|m| m != "<synthetic>")
        {
            self.model = Some(m);
        }
        let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
        if let Some(t) = event_instant(v) {
            self.last_any = Some(self.last_any.map_or(t, |l| l.max(t)));
            if !is_heartbeat(v, kind) {
                self.last_progress = Some(self.last_progress.map_or(t, |l| l.max(t)));
            }
        }
        let rollout_end = (kind == "event_msg")
            .then(|| s(v, "/payload/type"))
            .flatten()
            .filter(|t| t == "task_complete" || t == "turn_aborted");
        if is_final(kind) || rollout_end.is_some() {
            self.after_final = false;
        } else if self.finished.is_some() && !said_nothing(v, kind) {
            self.after_final = true;
        }
        self.tools_and_files(v, kind);
        self.count(v, kind);
        if kind == "assistant" {
            // Sums saturate: a log's numbers can be anything.
            let input = sum(
                v,
                &[
                    "/message/usage/input_tokens",
                    "/message/usage/cache_read_input_tokens",
                    "/message/usage/cache_creation_input_tokens",
                ],
            );
            let output = sum(v, &["/message/usage/output_tokens"]);
            let t = &mut self.message_tokens;
            *t = (t.0.saturating_add(input), t.1.saturating_add(output));
            if let Some(model) = s(v, "/message/model") {
                let full = self.message_models.len() >= MODEL_CAP;
                if !full || self.message_models.contains_key(&model) {
                    let u = self.message_models.entry(model).or_default();
                    u.input = u.input.saturating_add(input);
                    u.output = u.output.saturating_add(output);
                }
            }
        }
        if is_error_event(v) {
            self.error_count += 1;
            if self.errors.len() < LIST_CAP {
                self.errors.push(first_line(&gist(v), 160));
            }
        }
        match kind {
            "result" => {
                let session = s(v, "/session_id").unwrap_or_default();
                if let Some(c) = v.get("total_cost_usd").and_then(Value::as_f64) {
                    let full = self.cost_by_session.len() >= SESSION_CAP
                        && !self.cost_by_session.contains_key(&session);
                    // Past the cap, the other sessions share one slot: their largest cost.
                    let key = if full {
                        "(other sessions)".into()
                    } else {
                        session.clone()
                    };
                    let slot = self.cost_by_session.entry(key).or_insert(c);
                    *slot = if full { slot.max(c) } else { c };
                }
                self.turns = n(v, "/num_turns").or(self.turns);
                self.duration_ms = n(v, "/duration_ms").or(self.duration_ms);
                let input = sum(v, &["/usage/input_tokens", "/stats/input_tokens"]);
                let output = sum(v, &["/usage/output_tokens", "/stats/output_tokens"]);
                self.input_tokens = self.input_tokens.saturating_add(input);
                self.output_tokens = self.output_tokens.saturating_add(output);
                let how = match (s(v, "/subtype"), s(v, "/status")) {
                    (Some(sub), _) | (None, Some(sub)) => sub,
                    _ => "result".into(),
                };
                let error = v.get("is_error") == Some(&Value::Bool(true));
                let failed = error
                    || is_error_event(v)
                    || v.get("terminal_reason")
                        .and_then(Value::as_str)
                        .is_some_and(|r| r != "completed" && r != "end_turn");
                self.finished = Some(!failed);
                self.model_use(v, &session);
                self.ended = Some(format!(
                    "{how}{}{}",
                    if error { " (is_error)" } else { "" },
                    s(v, "/result").map_or(String::new(), |r| format!(": {}", first_line(&r, 120)))
                ));
            }
            "turn.completed" => {
                self.turns = Some(self.turns.unwrap_or(0).saturating_add(1));
                let (input, output) = (n(v, "/usage/input_tokens"), n(v, "/usage/output_tokens"));
                self.input_tokens = self.input_tokens.saturating_add(input.unwrap_or(0));
                self.output_tokens = self.output_tokens.saturating_add(output.unwrap_or(0));
                self.ended = Some("turn.completed".into());
                self.finished = Some(true);
            }
            "turn.failed" => {
                self.finished = Some(false);
                self.ended = Some(format!(
                    "turn.failed: {}",
                    s(v, "/error/message").unwrap_or_default()
                ));
            }
            "complete" => {
                self.ended = Some("complete".into());
                self.finished = Some(!is_error_event(v));
            }
            // A Codex rollout file's turn ends with `task_complete`, or `turn_aborted` when it
            // was interrupted.
            "event_msg" if rollout_end.is_some() => {
                let complete = rollout_end.as_deref() == Some("task_complete");
                self.finished = Some(complete);
                self.ended = Some(if complete {
                    format!(
                        "task_complete{}",
                        s(v, "/payload/last_agent_message")
                            .map_or(String::new(), |m| format!(": {}", first_line(&m, 120)))
                    )
                } else {
                    format!(
                        "turn_aborted: {}",
                        s(v, "/payload/reason").unwrap_or_default()
                    )
                });
            }
            _ => {}
        }
    }

    /// Counts what an orchestrator acts on: failed tool calls, API retries, refusals,
    /// permission denials, hook failures and startup errors.
    fn count(&mut self, v: &Value, kind: &str) {
        let sub = v.get("subtype").and_then(Value::as_str).unwrap_or("");
        let c = &mut self.counts;
        let len = |p: &str| {
            v.pointer(p)
                .and_then(Value::as_array)
                .map_or(0, |a| original_len(a))
        };
        match (kind, sub) {
            ("system", "api_retry") => {
                c.api_retries += 1;
                c.last_retry_status = v.get("error_status").and_then(Value::as_i64);
            }
            ("system", "model_refusal_fallback" | "model_refusal_no_fallback") => {
                c.refusals += 1;
                c.retracted += len("/retracted_message_uuids");
            }
            ("system", "permission_denied") | ("permission_denied", _) => c.permission_denials += 1,
            ("system", "hook_response") => {
                let code = v.get("exit_code").and_then(Value::as_i64).unwrap_or(0);
                let outcome = v.get("outcome").and_then(Value::as_str).unwrap_or("");
                if code != 0 || matches!(outcome, "error" | "failed" | "failure") {
                    c.hook_failures += 1;
                }
            }
            ("system", "init") => {
                let failed_servers = v
                    .pointer("/mcp_servers")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|m| {
                        matches!(
                            m.get("status").and_then(Value::as_str),
                            Some("failed" | "error")
                        )
                    })
                    .count() as u64;
                let listed = len("/mcp_server_errors");
                c.startup_errors += failed_servers.max(listed) + len("/plugin_errors");
            }
            ("result", _) => {
                let session = s(v, "/session_id").unwrap_or_default();
                let n = len("/permission_denials");
                if n > 0 && c.denials_in_results.len() < SESSION_CAP {
                    c.denials_in_results.insert(session, n);
                }
            }
            ("assistant", _) if v.pointer("/message/stop_reason") == Some(&json!("refusal")) => {
                c.refusals += 1
            }
            ("user", _) => {
                for b in v
                    .pointer("/message/content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if b.get("type") == Some(&json!("tool_result"))
                        && b.get("is_error") == Some(&Value::Bool(true))
                    {
                        c.tool_failures += 1;
                    }
                }
            }
            ("item.completed", _) => {
                let item = v.get("item").unwrap_or(&Value::Null);
                let tool = matches!(
                    item.get("type").and_then(Value::as_str),
                    Some("command_execution" | "mcp_tool_call" | "collab_tool_call" | "web_search")
                );
                if tool && is_error_event(v) {
                    c.tool_failures += 1;
                }
            }
            ("tool_result", _) | ("tool_use", _) if is_error_event(v) => c.tool_failures += 1,
            // Codex rollout files (0.145+): a turn item's failure. The calls themselves are
            // counted from the response items, which the rollout keeps beside.
            ("event_msg", _) if s(v, "/payload/type").as_deref() == Some("item_completed") => {
                let tool = matches!(
                    v.pointer("/payload/item/type").and_then(Value::as_str),
                    Some(
                        "CommandExecution"
                            | "McpToolCall"
                            | "DynamicToolCall"
                            | "CollabAgentToolCall"
                            | "WebSearch"
                    )
                );
                if tool && is_error_event(v) {
                    c.tool_failures += 1;
                }
            }
            ("tool_call", "completed") => {
                let failed = v
                    .get("tool_call")
                    .and_then(Value::as_object)
                    .and_then(|o| o.values().next())
                    .and_then(|b| b.pointer("/result"))
                    .is_some_and(|r| r.get("error").is_some() || r.get("failure").is_some());
                if failed {
                    c.tool_failures += 1;
                }
            }
            _ => {}
        }
    }

    /// Tokens and cost per model from a final result: Claude Code's `modelUsage`, Gemini
    /// CLI's `stats.models`.
    fn model_use(&mut self, v: &Value, session: &str) {
        let per_model = v
            .get("modelUsage")
            .or_else(|| v.pointer("/stats/models"))
            .and_then(Value::as_object);
        let num = |m: &Value, keys: &[&str]| {
            keys.iter()
                .find_map(|k| m.pointer(k).and_then(Value::as_u64))
                .unwrap_or(0)
        };
        for (model, m) in per_model.into_iter().flatten() {
            let key = (session.to_string(), clip(model, STRING_CAP / 2));
            if !self.models.contains_key(&key) && self.models.len() >= MODEL_CAP {
                continue;
            }
            let input = num(
                m,
                &[
                    "/inputTokens",
                    "/input_tokens",
                    "/tokens/input",
                    "/tokens/prompt",
                ],
            ) + num(m, &["/cacheReadInputTokens", "/cached", "/tokens/cached"])
                + num(m, &["/cacheCreationInputTokens"]);
            let output = num(
                m,
                &[
                    "/outputTokens",
                    "/output_tokens",
                    "/tokens/candidates",
                    "/tokens/output",
                ],
            );
            let cost = ["costUSD", "cost_usd"]
                .iter()
                .find_map(|k| m.get(*k).and_then(Value::as_f64));
            self.models.insert(
                key,
                ModelUse {
                    input,
                    output,
                    cost,
                },
            );
        }
    }

    /// Tokens and cost per model, summed over sessions; from assistant messages when no final
    /// result gave them.
    pub(super) fn per_model(&self) -> BTreeMap<String, ModelUse> {
        if self.models.is_empty() {
            return self.message_models.clone();
        }
        let mut out: BTreeMap<String, ModelUse> = BTreeMap::new();
        for ((_, model), u) in &self.models {
            let o = out.entry(model.clone()).or_default();
            o.input = o.input.saturating_add(u.input);
            o.output = o.output.saturating_add(u.output);
            if let Some(c) = u.cost {
                o.cost = Some(o.cost.unwrap_or(0.0) + c);
            }
        }
        out
    }

    /// Permission denials: events, or the lists in final results, whichever says more.
    pub(super) fn denials(&self) -> u64 {
        let listed: u64 = self.counts.denials_in_results.values().sum();
        self.counts.permission_denials.max(listed)
    }

    /// Tool calls seen, of every name.
    pub(super) fn tool_calls(&self) -> u64 {
        self.tools.values().sum()
    }
    fn tool(&mut self, name: &str) {
        if name.is_empty() {
            return;
        }
        let name = clip(name, STRING_CAP / 2);
        let known = self.tools.contains_key(&name);
        let key = if known || self.tools.len() < TOOL_CAP {
            name
        } else {
            OTHER_TOOLS.to_string()
        };
        *self.tools.entry(key).or_default() += 1;
    }

    fn file(&mut self, path: Option<String>) {
        if let Some(p) = path
            && !self.files.contains(&p)
            && self.files.len() < LIST_CAP
        {
            self.files.push(p);
        }
    }

    fn tools_and_files(&mut self, v: &Value, kind: &str) {
        // Claude Code, Cursor's assistant lines: tool_use blocks.
        for b in v
            .pointer("/message/content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            match b.get("type").and_then(Value::as_str) {
                Some("tool_use") => {
                    let name = s(b, "/name").unwrap_or_default();
                    if matches!(
                        name.as_str(),
                        "Write" | "Edit" | "MultiEdit" | "NotebookEdit"
                    ) {
                        self.file(
                            s(b, "/input/file_path").or_else(|| s(b, "/input/notebook_path")),
                        );
                    }
                    self.tool(&name);
                }
                Some("toolRequest") => self.tool(&s(b, "/toolCall/value/name").unwrap_or_default()),
                _ => {}
            }
        }
        match kind {
            "item.completed" => match s(v, "/item/type").as_deref() {
                Some("command_execution") => self.tool("shell"),
                Some("mcp_tool_call") => {
                    let name = format!(
                        "{}/{}",
                        s(v, "/item/server").unwrap_or_default(),
                        s(v, "/item/tool").unwrap_or_default()
                    );
                    self.tool(&name);
                }
                Some("file_change") => {
                    self.tool("file_change");
                    for c in v
                        .pointer("/item/changes")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        self.file(s(c, "/path"));
                    }
                }
                Some("web_search") => self.tool("web_search"),
                _ => {}
            },
            "event_msg"
                if s(v, "/payload/type").as_deref() == Some("item_completed")
                    && s(v, "/payload/item/type").as_deref() == Some("FileChange") =>
            {
                let paths: Vec<String> = v
                    .pointer("/payload/item/changes")
                    .and_then(Value::as_object)
                    .map(|m| m.keys().map(|k| clip(k, STRING_CAP)).collect())
                    .unwrap_or_default();
                for path in paths {
                    self.file(Some(path));
                }
            }
            "response_item" if s(v, "/payload/type").as_deref() == Some("function_call") => {
                self.tool(&s(v, "/payload/name").unwrap_or_default());
            }
            "tool_use" => {
                // Gemini CLI names its tool at the top; opencode in its part.
                let name = s(v, "/tool_name")
                    .or_else(|| s(v, "/part/tool"))
                    .unwrap_or_default();
                if matches!(name.as_str(), "write_file" | "replace" | "edit" | "write") {
                    self.file(
                        s(v, "/parameters/file_path")
                            .or_else(|| s(v, "/part/state/input/filePath")),
                    );
                }
                self.tool(&name);
            }
            "tool_call" if s(v, "/subtype").as_deref() == Some("completed") => {
                if let Some(Value::Object(call)) = v.get("tool_call")
                    && let Some((name, body)) = call.iter().next()
                {
                    let name = name.trim_end_matches("ToolCall").to_string();
                    if name == "edit" || name == "write" {
                        self.file(s(body, "/args/path"));
                    }
                    self.tool(&name);
                }
            }
            _ => {}
        }
    }

    /// Tokens in and out: the final totals when the log has them, else the messages' sum; for a
    /// total of several conversations, the sum of theirs.
    pub(crate) fn tokens(&self) -> (u64, u64) {
        if let (Some(closed), Some(current)) = (self.closed, self.parts.last()) {
            let (i, o) = current.tokens();
            return (
                closed.tokens.0.saturating_add(i),
                closed.tokens.1.saturating_add(o),
            );
        }
        if self.input_tokens > 0 || self.output_tokens > 0 {
            (self.input_tokens, self.output_tokens)
        } else {
            self.message_tokens
        }
    }
}

/// The length an array had before smart-tee cut it: its marker element says so
/// (`[TRUNCATED: 12 → 3 items]`, as a string, a `_truncated…` member or a text block); an
/// array without one is whole.
pub(super) fn original_len(a: &[Value]) -> u64 {
    let marker = |e: &Value| -> Option<u64> {
        let text = match e {
            Value::String(s) => s.as_str(),
            Value::Object(m) if m.len() <= 2 => m
                .iter()
                .find(|(k, _)| k.starts_with("_truncated") || k.as_str() == "text")
                .and_then(|(_, v)| v.as_str())?,
            _ => return None,
        };
        let rest = text.strip_prefix("[TRUNCATED: ")?.strip_suffix(" items]")?;
        rest.split(" → ").next()?.parse().ok()
    };
    a.iter().find_map(marker).unwrap_or(a.len() as u64)
}
