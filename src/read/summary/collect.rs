//! Gathering a summary event by event: ids, times, tokens and cost, tools and files, errors,
//! the counts an orchestrator acts on, the agent and its version, and the conversations.

use serde_json::{Value, json};

use super::health::{is_final, is_heartbeat};
use super::{
    CONVERSATION_CAP, Closed, LIST_CAP, OTHER_TOOLS, SESSION_CAP, STRING_CAP, Summary, TOOL_CAP,
    clip, n, plus, s,
};
use crate::line::agents::{Format, Head};
use crate::read::events::is_error_event;
use crate::read::gist::{call_output_failed, first_line, gist, time_of};
use crate::read::headless;
use crate::read::when::event_instant;

/// True for a line that says nothing of the run: a record smart-tee wrote itself (`non_json`,
/// as a loop script's `=== Iteration N ===` line between runs becomes; `torn`) or a heartbeat.
/// After a final event it does not reopen the finished run (#48).
fn said_nothing(v: &Value, kind: &str) -> bool {
    matches!(kind, "non_json" | "torn") || is_heartbeat(v, kind)
}

/// The most sessions whose last cost is kept by the hash of their id once [`SESSION_CAP`]
/// sessions hold theirs by name (16 bytes each, about 3 MiB with the table's own).
const MOVED_CAP: usize = 100_000;

/// A session id's hash, which keeps its last cost once it has moved out for room.
fn session_hash(session: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    session.hash(&mut h);
    h.finish()
}

/// Where an event names its session (Claude Code's stream and transcripts, Codex, opencode).
const SESSION_PATHS: [&str; 5] = [
    "/session_id",
    "/sessionId",
    "/thread_id",
    "/sessionID",
    "/payload/id",
];

impl Summary {
    /// Takes one event (a log line).
    pub fn add(&mut self, line: &[u8]) {
        match crate::read::events::parse(line) {
            Some(v) => self.add_event(&v),
            None => self.not_json += 1,
        }
    }

    /// Adds an event already parsed from a whole line. smart-tee's own records (`non_json`,
    /// `torn`) are no events of the run: the log of a stream says what the stream does.
    pub fn add_event(&mut self, v: &Value) {
        if matches!(
            v.get("type").and_then(Value::as_str),
            Some("non_json" | "torn")
        ) {
            self.not_json += 1;
            return;
        }
        // A file's first event starts a conversation of its own (#48): runs of two files never
        // merge, whatever their events.
        let file_start =
            std::mem::take(&mut self.file_start) && self.parts.last().is_some_and(|p| p.events > 0);
        if file_start || self.starts_conversation(v) {
            if let Some(p) = self.parts.last_mut() {
                self.closed.get_or_insert_with(Closed::default).add(p);
                p.close();
            }
            // A total counts each conversation's calls once, as its rows do.
            self.counts.call_ids = Default::default();
            self.counts.failed_ids = Default::default();
            self.counts.error_ids = Default::default();
            if self.parts.len() >= CONVERSATION_CAP {
                self.parts.remove(0);
                self.parts_dropped += 1;
            }
            self.parts.push(Summary {
                session: s(v, "/new_conversation_id"),
                file: self.file.clone(),
                ..Summary::default()
            });
        }
        if self.parts.is_empty() {
            self.parts.push(Summary {
                file: self.file.clone(),
                ..Summary::default()
            });
        }
        if let Some(part) = self.parts.last_mut() {
            part.add_value(v, self.lines, true);
        }
        let at = self.lines;
        // A total's tokens are its conversations'.
        self.add_value(v, at, false);
        // A total's turns and duration are its conversations' (see [`Closed`]).
        if let (Some(closed), Some(current)) = (&self.closed, self.parts.last()) {
            self.turns = plus(closed.turns, current.turns);
            self.duration_ms = plus(closed.duration_ms, current.duration_ms);
        }
    }

    /// Lets go of what only an open conversation needs (the messages and failed calls told
    /// apart to count each once), so that many closed ones cost little.
    fn close(&mut self) {
        self.messages.close();
        self.counts.failed_ids = Default::default();
        self.counts.call_ids = Default::default();
        self.counts.step_ids = Default::default();
        self.counts.error_ids = Default::default();
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
        let format = Head::of_value(v).format();
        // Kimi CLI's stream has neither a start nor a final event: a run of it begins with its
        // first message after another agent's run, and ends where another agent's run starts.
        let in_kimi = current.drift.agent == Some(Format::Kimi.agent());
        if (format == Format::Kimi) != in_kimi && current.drift.agent.is_some() {
            return format == Format::Kimi || starts_run(v, kind, sub, format);
        }
        let other = |paths: &[&str]| {
            let session = paths.iter().find_map(|p| s(v, p));
            matches!((&session, &current.session), (Some(a), Some(b)) if a != b)
        };
        if !starts_run(v, kind, sub, format) {
            // After a final event, a transcript's event of another session is another run, one
            // with no start event of its own (appended after a stream's result, it was taken
            // into the finished run, and its cost with it). A stream's line (`session_id`) of
            // another session there is another process writing the same log.
            return current.finished.is_some()
                && v.get("session_id").is_none()
                && other(&["/sessionId", "/sessionID"]);
        }
        current.finished.is_some() || other(&["/session_id", "/thread_id", "/payload/id"])
    }

    /// Takes one parsed event (and its tokens, with `tokens`).
    fn add_value(&mut self, v: &Value, line_no: u64, tokens: bool) {
        let head = Head::of_value(v);
        self.drift.add(&head, line_no);
        let format = head.format();
        let own = headless::reads(format);
        self.events += 1;
        if let Some(t) = time_of(v) {
            self.first_time.get_or_insert_with(|| t.clone());
            self.last_time = Some(t);
        }
        if self.session.is_none() {
            self.session = SESSION_PATHS
                .iter()
                .find_map(|p| s(v, p))
                .or_else(|| headless::session(v, format));
        }
        let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
        self.models_named(v, kind);
        if let Some(t) = event_instant(v) {
            self.last_any = Some(self.last_any.map_or(t, |l| l.max(t)));
            self.first_any = Some(self.first_any.map_or(t, |l| l.min(t)));
            if !is_heartbeat(v, kind) {
                self.last_progress = Some(self.last_progress.map_or(t, |l| l.max(t)));
            }
        }
        let rollout_end = (kind == "event_msg")
            .then(|| s(v, "/payload/type"))
            .flatten()
            .filter(|t| t == "task_complete" || t == "turn_aborted");
        if let Some(stop) = headless::pi_stop(v) {
            self.pi_stop = Some(stop);
        }
        let ending = own
            .then(|| headless::ending(v, format, self.pi_stop.as_ref()))
            .flatten();
        let final_event = if own {
            ending.is_some()
        } else {
            is_final(kind) || rollout_end.is_some()
        };
        if final_event {
            self.after_final = false;
        } else if self.finished.is_some() && !said_nothing(v, kind) {
            self.after_final = true;
        }
        if own {
            self.add_headless(v, format, tokens, ending);
        } else {
            self.tools_and_files(v, kind);
            self.count(v, kind);
            if tokens {
                self.add_tokens(v, kind);
            }
        }
        self.user_turn(v, kind);
        if is_error_event(v) && self.counts.new_error(v.get("uuid").and_then(Value::as_str)) {
            self.error_count += 1;
            if self.errors.len() < LIST_CAP {
                self.errors.push(first_line(&gist(v), 160));
            }
        }
        if own {
            return;
        }
        // A session started again (an init) after it reported a cost: the same process when
        // Claude Code reads its input as stream-json (an init at each user message, the cost
        // still cumulative), or a new one (`--resume`), whose cost counts from nothing. Told
        // apart by the next report: below the last one, the counter started again, and the
        // cost reported before is kept beside the new run's.
        let sub = v.get("subtype").and_then(Value::as_str).unwrap_or("");
        // Only a session with a cost to keep is noted: as many as the costs kept.
        if starts_run(v, kind, sub, format)
            && let Some(session) = s(v, "/session_id")
            && (self.cost_by_session.contains_key(&session)
                || self.costs_moved.contains_key(&session_hash(&session)))
        {
            self.restarted.insert(session);
        }
        match kind {
            "result" => {
                let session = s(v, "/session_id").unwrap_or_default();
                if let Some(c) = v.get("total_cost_usd").and_then(Value::as_f64) {
                    // First, a new process of a session started again (see above), its earlier
                    // cost kept or moved out for room.
                    if self.restarted.remove(&session) {
                        let earlier = match self.cost_by_session.get(&session) {
                            Some(&(_, e)) => Some(e),
                            None => self.costs_moved.get(&session_hash(&session)).copied(),
                        };
                        if let Some(e) = earlier.filter(|&e| c < e) {
                            self.costs_moved.remove(&session_hash(&session));
                            self.cost_by_session.remove(&session);
                            self.cost_closed =
                                Some(super::prices::add_usd(self.cost_closed.unwrap_or(0.0), e));
                        }
                    }
                    // A session moved out for room that reports again: its new cost replaces
                    // the one moved out (results are cumulative).
                    if !self.cost_by_session.contains_key(&session) {
                        self.costs_moved.remove(&session_hash(&session));
                    }
                    if self.cost_by_session.len() >= SESSION_CAP
                        && !self.cost_by_session.contains_key(&session)
                    {
                        // Room for one more: the session that reported longest ago moves to
                        // `costs_moved`, by the hash of its id, or past that to `cost_closed`.
                        let oldest = self
                            .cost_by_session
                            .iter()
                            .min_by_key(|(_, (at, _))| *at)
                            .map(|(k, _)| k.clone());
                        if let Some(k) = oldest
                            && let Some((_, cost)) = self.cost_by_session.remove(&k)
                        {
                            if self.costs_moved.len() < MOVED_CAP {
                                self.costs_moved.insert(session_hash(&k), cost);
                            } else {
                                self.cost_closed = Some(super::prices::add_usd(
                                    self.cost_closed.unwrap_or(0.0),
                                    cost,
                                ));
                            }
                        }
                    }
                    self.cost_reports += 1;
                    self.cost_by_session
                        .insert(session.clone(), (self.cost_reports, c));
                }
                self.turns = n(v, "/num_turns").or(self.turns);
                self.duration_ms = n(v, "/duration_ms").or(self.duration_ms);
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
                self.ended = Some(format!(
                    "{how}{}{}",
                    if error { " (is_error)" } else { "" },
                    s(v, "/result").map_or(String::new(), |r| format!(": {}", first_line(&r, 120)))
                ));
            }
            "turn.completed" => {
                self.turns = Some(self.turns.unwrap_or(0).saturating_add(1));
                self.ended = Some("turn.completed".into());
                self.finished = Some(true);
            }
            // opencode reports each step's cost.
            "step_finish" => {
                if let Some(c) = v.pointer("/part/cost").and_then(Value::as_f64) {
                    self.step_cost = Some(super::prices::add_usd(self.step_cost.unwrap_or(0.0), c));
                }
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
        let mut failed = |id: Option<&str>| c.failed_call(id);
        let id = |p: &str| v.pointer(p).and_then(Value::as_str);
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
            // A transcript's retry: an API error that says which attempt comes next.
            ("system", "api_error") if v.get("retryAttempt").is_some() => {
                c.api_retries += 1;
                c.last_retry_status = v.pointer("/error/status").and_then(Value::as_i64);
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
                        failed(b.get("tool_use_id").and_then(Value::as_str));
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
                    failed(id("/item/id"));
                }
            }
            ("tool_result", _) | ("tool_use", _) if is_error_event(v) => {
                failed(id("/tool_id").or_else(|| id("/part/callID")))
            }
            // Codex rollout files: a call's output says it failed (an exit code, a sandbox's or
            // the user's refusal, a rejected patch).
            ("response_item", _) if call_output_failed(v) => failed(id("/payload/call_id")),
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
                    failed(id("/payload/item/id"));
                }
            }
            ("tool_call", "completed") => {
                let failed_call = v
                    .get("tool_call")
                    .and_then(Value::as_object)
                    .and_then(|o| o.values().next())
                    .and_then(|b| b.pointer("/result"))
                    .is_some_and(|r| r.get("error").is_some() || r.get("failure").is_some());
                if failed_call {
                    failed(id("/call_id"));
                }
            }
            _ => {}
        }
    }

    /// A Codex rollout's user turn: `user_message` events, else `UserMessage` items.
    fn user_turn(&mut self, v: &Value, kind: &str) {
        if kind != "event_msg" {
            return;
        }
        let t = &mut self.user_turns;
        match s(v, "/payload/type").as_deref() {
            Some("user_message") => t.0 += 1,
            Some("item_completed")
                if s(v, "/payload/item/type").as_deref() == Some("UserMessage") =>
            {
                t.1 += 1
            }
            _ => return,
        }
        self.turns = Some(if t.0 > 0 { t.0 } else { t.1 });
    }

    /// Permission denials: events, or the lists in final results, whichever says more.
    pub(super) fn denials(&self) -> u64 {
        let listed: u64 = self.counts.denials_in_results.values().sum();
        self.counts.permission_denials.max(listed)
    }

    /// The cost the log reports: each session's last `total_cost_usd`, added over the processes
    /// it restarted in, and opencode's steps'.
    pub(super) fn cost(&self) -> Option<f64> {
        let results = (!self.cost_by_session.is_empty() || self.cost_closed.is_some()).then(|| {
            let open = self.cost_by_session.values().map(|(_, c)| *c);
            let moved = self.costs_moved.values().copied();
            super::prices::sum_usd(open.chain(moved).chain(self.cost_closed))
        });
        match (results, self.step_cost) {
            (None, None) => None,
            (a, b) => Some(super::prices::add_usd(a.unwrap_or(0.0), b.unwrap_or(0.0))),
        }
    }

    /// A failed call, once per id.
    pub(super) fn failed_call(&mut self, id: Option<&str>) {
        self.counts.failed_call(id);
    }

    /// Tool calls seen, of every name.
    pub(super) fn tool_calls(&self) -> u64 {
        self.tools.values().sum()
    }
    pub(super) fn tool(&mut self, name: &str) {
        self.tool_times(name, 1);
    }

    /// `n` calls of the tool `name`.
    pub(super) fn tool_times(&mut self, name: &str, n: u64) {
        if name.is_empty() || n == 0 {
            return;
        }
        let name = clip(name, STRING_CAP / 2);
        let known = self.tools.contains_key(&name);
        let key = if known || self.tools.len() < TOOL_CAP {
            name
        } else {
            OTHER_TOOLS.to_string()
        };
        let count = self.tools.entry(key).or_default();
        *count = count.saturating_add(n);
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
            let kind = b.get("type").and_then(Value::as_str);
            if matches!(kind, Some("tool_use" | "toolRequest"))
                && !self.counts.new_call(b.get("id").and_then(Value::as_str))
            {
                continue;
            }
            match kind {
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
                // A spawned agent, a message to one: calls too (their failures count).
                Some("collab_tool_call") => {
                    self.tool(&s(v, "/item/tool").unwrap_or_else(|| "collab_tool_call".into()))
                }
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
            "response_item" => match s(v, "/payload/type").as_deref() {
                Some("function_call" | "custom_tool_call") => {
                    self.tool(&s(v, "/payload/name").unwrap_or_default())
                }
                Some("local_shell_call") => self.tool("local_shell"),
                _ => {}
            },
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

/// True when `v` (of `kind`, `sub` and `format`) is the start of a run: an init,
/// `thread.started`, `session_meta`, or the start of one of the agents
/// [`headless::starts_run`] reads.
fn starts_run(v: &Value, kind: &str, sub: &str, format: Format) -> bool {
    (kind == "system" && matches!(sub, "init" | "session_start"))
        || matches!(kind, "thread.started" | "session_meta")
        || (kind == "init" && v.get("session_id").is_some())
        || headless::starts_run(v, format)
}
