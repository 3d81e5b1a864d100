//! `--view --summary`: one screen that answers "what happened" in a run, for any agent's
//! stream: ids, model, duration, turns, cost and tokens, tools used with counts, errors with
//! their first line, files written, and how the run ended. Read in one pass, in bounded memory:
//! lists, strings and the tools and sessions told apart are capped as events are added.
//!
//! Every string from the log is made inert (`view::escape_controls` in text, `view::inert_json`
//! in JSON) and stays in its field: a name with newlines cannot forge a line. Under a budget,
//! lists and then strings are shortened until the whole fits, so the answer keeps its format
//! (valid JSON) and its last lines (errors, how the run ended).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Write};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::error::Error;
use crate::read::gist::{
    Format as Agent, agent_version, first_line, format_of, gist, time_of, unknown_kind,
};
use crate::read::view::{
    DecompressLimit, Format, ViewOptions, escape_controls, for_each_line_in, inert_json,
    is_error_event,
};
use crate::read::when::{Instant, event_instant};

/// Errors and files listed at most.
const LIST_CAP: usize = 20;
/// Distinct tool names counted apart at most; uses of the others are counted together.
const TOOL_CAP: usize = 500;
/// Sessions whose cost is told apart at most.
const SESSION_CAP: usize = 1000;
/// The most bytes of a string kept (a name, an id, an error's first line).
const STRING_CAP: usize = 200;
/// The name under which uses of tools past [`TOOL_CAP`] are counted.
const OTHER_TOOLS: &str = "(other tools)";
/// Models whose tokens are told apart at most (per session, for cumulative results).
const MODEL_CAP: usize = 100;
/// How long a run whose writer is alive may go without an event before it reads `stalled`,
/// unless told (`--stall-after`, `stall_after_seconds`).
pub const STALL_AFTER: Duration = Duration::from_secs(120);
/// Unknown event types told apart at most.
const UNKNOWN_CAP: usize = 50;
/// Conversations summarized apart at most (the last ones); all count in the total.
const CONVERSATION_CAP: usize = 20;
/// What `state` says of a log with no final event whose writer is gone.
pub const ENDED_WITHOUT_FINAL: &str = "ended without a final event";

/// `s` cut to at most `max` bytes on a character boundary, `…` saying so.
pub(crate) fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max.saturating_sub(3);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// What a run did, gathered event by event.
#[derive(Debug, Default)]
pub struct Summary {
    /// Whole lines read, JSON or not, kept or not.
    lines: u64,
    events: u64,
    session: Option<String>,
    model: Option<String>,
    first_time: Option<String>,
    last_time: Option<String>,
    duration_ms: Option<u64>,
    turns: Option<u64>,
    /// The last cost reported by each session (Claude Code's result lines are cumulative per
    /// process).
    cost_by_session: BTreeMap<String, f64>,
    input_tokens: u64,
    output_tokens: u64,
    /// Token usage of assistant messages, for logs without a final total (transcripts).
    message_tokens: (u64, u64),
    tools: BTreeMap<String, u64>,
    errors: Vec<String>,
    error_count: u64,
    files: Vec<String>,
    ended: Option<String>,
    /// A final event was seen, and whether the last one reports a failure.
    finished: Option<bool>,
    /// Events came after the last final event (a run appended with `-a`, a reset).
    after_final: bool,
    /// The instant of the last event that is not a heartbeat, and whether any event had one.
    last_progress: Option<Instant>,
    counts: Counts,
    /// Tokens and cost per model: `(session, model)` to the last values reported (results are
    /// cumulative per session); from assistant messages when no result reports them.
    models: BTreeMap<(String, String), ModelUse>,
    message_models: BTreeMap<String, ModelUse>,
    health: Option<Health>,
    /// The agent that wrote the log (from its first event) and its version, when an event
    /// says.
    agent: Option<String>,
    version: Option<String>,
    /// Event types and subtypes the rules do not know: how many, and the line of the first.
    unknown: BTreeMap<String, (u64, u64)>,
    /// The conversations of the log, one summary each (the last [`CONVERSATION_CAP`]); the
    /// summary itself is their total.
    parts: Vec<Summary>,
    /// Conversations before those kept.
    parts_dropped: u64,
}

/// What an orchestrator acts on.
#[derive(Debug, Default)]
struct Counts {
    tool_failures: u64,
    api_retries: u64,
    last_retry_status: Option<i64>,
    refusals: u64,
    permission_denials: u64,
    /// Denials listed by final results (Claude Code's `permission_denials`), per session.
    denials_in_results: BTreeMap<String, u64>,
    hook_failures: u64,
    startup_errors: u64,
}

/// One model's use.
#[derive(Clone, Copy, Debug, Default)]
struct ModelUse {
    input: u64,
    output: u64,
    cost: Option<f64>,
}

/// What is known of a log beyond its lines: whether a writer holds it, the time now, and when
/// it was last written.
#[derive(Clone, Copy, Debug)]
pub struct Health {
    /// A smart-tee writer holds the log's shared lock ([`writer_holds`]).
    pub writer: bool,
    pub now: Instant,
    /// The log's modification time: the stall clock for logs whose events carry no time.
    pub modified: Option<Instant>,
    pub stall_after: Duration,
}

impl Health {
    /// The health of `file` now.
    pub fn of(file: &File, stall_after: Duration) -> Health {
        let instant = |t: SystemTime| {
            Instant(
                t.duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as i128),
            )
        };
        Health {
            writer: writer_holds(file),
            now: instant(SystemTime::now()),
            modified: file.metadata().and_then(|m| m.modified()).ok().map(instant),
            stall_after,
        }
    }
}

/// How a run stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum State {
    /// A writer holds the log and events arrive.
    Running,
    /// A writer holds the log and no event (heartbeats aside) came for this many seconds.
    Stalled(u64),
    /// The last event is a final one; `true` when it reports success.
    Finished(bool),
    /// No final event at the end and no writer: the agent or its pipeline died.
    Ended,
}

impl State {
    /// The state's name, as `state` gives it in JSON.
    pub fn name(&self) -> &'static str {
        match self {
            State::Running => "running",
            State::Stalled(_) => "stalled",
            State::Finished(_) => "finished",
            State::Ended => ENDED_WITHOUT_FINAL,
        }
    }
}

/// True when a smart-tee writer holds `file`'s shared lock (writers hold it for their
/// lifetime): an exclusive lock cannot be taken at once. The lock, when taken, is let go at
/// once. A file system without locks reads as no writer.
pub fn writer_holds(file: &File) -> bool {
    match file.try_lock() {
        Ok(()) => {
            let _ = file.unlock();
            false
        }
        Err(std::fs::TryLockError::WouldBlock) => true,
        Err(_) => false,
    }
}

/// The agent whose format an event has.
fn agent_name(v: &Value) -> &'static str {
    match format_of(v) {
        Agent::Claude => "claude-code",
        Agent::CodexExec => "codex-exec",
        Agent::CodexSession => "codex-rollout",
        Agent::Gemini => "gemini-cli",
        Agent::OpenCode => "opencode",
        Agent::Cursor => "cursor",
        Agent::Goose => "goose",
    }
}

/// True for an event that says the agent is alive without saying it progressed.
fn is_heartbeat(v: &Value, kind: &str) -> bool {
    let sub = v.get("subtype").and_then(Value::as_str).unwrap_or("");
    matches!(
        kind,
        "tool_progress" | "keep_alive" | "keepalive" | "heartbeat" | "ping"
    ) || (kind == "system" && matches!(sub, "heartbeat" | "keep_alive"))
        || (kind == "stream_event" && v.pointer("/event/type") == Some(&json!("ping")))
}

/// True for the type of an event that ends a run, in any agent's stream.
pub fn is_final(kind: &str) -> bool {
    matches!(
        kind,
        "result" | "turn.completed" | "turn.failed" | "complete"
    )
}

fn s(v: &Value, p: &str) -> Option<String> {
    v.pointer(p)
        .and_then(Value::as_str)
        .map(|x| clip(x, STRING_CAP))
}

fn n(v: &Value, p: &str) -> Option<u64> {
    v.pointer(p).and_then(Value::as_u64)
}

/// The numbers at `paths`, added, saturating.
fn sum(v: &Value, paths: &[&str]) -> u64 {
    paths
        .iter()
        .filter_map(|p| n(v, p))
        .fold(0, u64::saturating_add)
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
        if self.starts_conversation(v) {
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
        // Cursor's first event has Claude Code's shape; its later ones tell.
        if self.agent.is_none()
            || (self.agent.as_deref() == Some("claude-code")
                && matches!(format_of(v), Agent::Cursor))
        {
            self.agent = Some(agent_name(v).to_string());
        }
        if self.version.is_none() {
            self.version = agent_version(v);
        }
        if let Some(k) = unknown_kind(v) {
            let k = clip(&k, STRING_CAP / 2);
            if self.unknown.contains_key(&k) || self.unknown.len() < UNKNOWN_CAP {
                self.unknown.entry(k).or_insert((0, line_no)).0 += 1;
            }
        }
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
        if let Some(m) = ["/model", "/message/model", "/payload/model"]
            .iter()
            .find_map(|p| s(v, p))
        {
            self.model = Some(m);
        }
        let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
        if !is_heartbeat(v, kind)
            && let Some(t) = event_instant(v)
        {
            self.last_progress = Some(self.last_progress.map_or(t, |l| l.max(t)));
        }
        if is_final(kind) {
            self.after_final = false;
        } else if self.finished.is_some() {
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
            ("system", "model_refusal_fallback" | "model_refusal_no_fallback") => c.refusals += 1,
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
    fn per_model(&self) -> BTreeMap<String, ModelUse> {
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
    fn denials(&self) -> u64 {
        let listed: u64 = self.counts.denials_in_results.values().sum();
        self.counts.permission_denials.max(listed)
    }

    /// Tool calls seen, of every name.
    fn tool_calls(&self) -> u64 {
        self.tools.values().sum()
    }

    /// Sets what is known of the log beyond its lines, for [`Summary::state`].
    pub fn set_health(&mut self, health: Health) {
        self.health = Some(health);
        // Only the last conversation may still be written to.
        let last = self.parts.len().saturating_sub(1);
        for (k, part) in self.parts.iter_mut().enumerate() {
            part.health = Some(Health {
                writer: health.writer && k == last,
                ..health
            });
        }
    }

    /// How the run stands, when its health is known: finished when its last event is a final
    /// one; else running or stalled while a writer holds the log, else ended without a final
    /// event. The stall clock is the last event's time (heartbeats aside), or the log's
    /// modification time when no event carries a time.
    pub fn state(&self) -> Option<State> {
        let h = self.health?;
        if let Some(ok) = self.finished
            && !self.after_final
        {
            return Some(State::Finished(ok));
        }
        if !h.writer {
            return Some(State::Ended);
        }
        let last = self.last_progress.or(h.modified);
        let idle = last.map_or(0, |l| ((h.now.0 - l.0).max(0) / 1_000_000_000) as u64);
        Some(if idle >= h.stall_after.as_secs() {
            State::Stalled(idle)
        } else {
            State::Running
        })
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

    /// Tokens in and out: the final totals when the log has them, else the messages' sum.
    pub(crate) fn tokens(&self) -> (u64, u64) {
        if self.input_tokens > 0 || self.output_tokens > 0 {
            (self.input_tokens, self.output_tokens)
        } else {
            self.message_tokens
        }
    }

    /// The summary as one JSON object, with at most `lists` entries per list and `strings`
    /// bytes per string.
    fn to_json_within(&self, lists: usize, strings: usize) -> Value {
        let mut v = self.own_json_within(lists, strings);
        if self.parts.len() > 1 {
            let shown = self.parts.len().min(lists);
            let parts: Vec<Value> = self.parts[self.parts.len() - shown..]
                .iter()
                .map(|p| {
                    let mut j = p.own_json_within(lists, strings);
                    if let Some(o) = j.as_object_mut() {
                        o.shift_remove("type");
                    }
                    j
                })
                .collect();
            v["conversation_count"] = json!(self.parts.len() as u64 + self.parts_dropped);
            v["conversations"] = json!(parts);
        }
        v
    }

    /// This summary's own members, its conversations aside.
    fn own_json_within(&self, lists: usize, strings: usize) -> Value {
        let c = |x: &Option<String>| x.as_deref().map(|x| clip(x, strings));
        let mut tools: Vec<(&String, &u64)> = self.tools.iter().collect();
        tools.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let tools: serde_json::Map<String, Value> = tools
            .iter()
            .take(lists)
            .map(|(k, n)| (clip(k, strings), json!(n)))
            .collect();
        let list = |l: &[String]| {
            l.iter()
                .take(lists)
                .map(|x| clip(x, strings))
                .collect::<Vec<_>>()
        };
        let state = self.state();
        let models: serde_json::Map<String, Value> = self
            .per_model()
            .iter()
            .take(lists)
            .map(|(m, u)| {
                (
                    clip(m, strings),
                    json!({"input_tokens": u.input, "output_tokens": u.output, "cost_usd": u.cost}),
                )
            })
            .collect();
        let unknown: serde_json::Map<String, Value> = self
            .unknown
            .iter()
            .take(lists)
            .map(|(k, (n, at))| (clip(k, strings), json!({"count": n, "first_line": at})))
            .collect();
        let calls = self.tool_calls();
        let ok = match state {
            Some(State::Finished(ok)) => Some(ok),
            _ => None,
        };
        let idle = match state {
            Some(State::Stalled(s)) => Some(s),
            _ => None,
        };
        json!({
            "type": "summary",
            "state": state.as_ref().map(State::name),
            "ok": ok,
            "idle_seconds": idle,
            "events": self.events,
            "session_id": c(&self.session),
            "model": c(&self.model),
            "first_event": self.first_time.as_deref().map(|x| clip(x, 40)),
            "last_event": self.last_time.as_deref().map(|x| clip(x, 40)),
            "duration_ms": self.duration_ms,
            "turns": self.turns,
            "cost_usd": (!self.cost_by_session.is_empty()).then(|| self.cost_by_session.values().sum::<f64>()),
            "input_tokens": self.tokens().0,
            "output_tokens": self.tokens().1,
            "tools_used": self.tools.len(),
            "tools": tools,
            "tool_calls": calls,
            "tool_failures": self.counts.tool_failures,
            "tool_failure_rate": (calls > 0).then(|| (self.counts.tool_failures as f64 / calls as f64 * 1000.0).round() / 1000.0),
            "api_retries": self.counts.api_retries,
            "last_retry_status": self.counts.last_retry_status,
            "refusals": self.counts.refusals,
            "permission_denials": self.denials(),
            "hook_failures": self.counts.hook_failures,
            "startup_errors": self.counts.startup_errors,
            "models": models,
            "agent": self.agent,
            "agent_version": c(&self.version),
            "unknown_events": unknown,
            "errors": self.error_count,
            "first_errors": list(&self.errors),
            "files_written": list(&self.files),
            "ended": clip(&self.ended(), strings.max(24)),
        })
    }

    /// The summary as one JSON object.
    pub fn to_json(&self) -> Value {
        self.to_json_within(usize::MAX, STRING_CAP)
    }

    fn ended(&self) -> String {
        match (&self.ended, self.state()) {
            (Some(e), Some(State::Finished(_)) | None) => e.clone(),
            (_, Some(State::Ended)) => ENDED_WITHOUT_FINAL.into(),
            (_, Some(_)) => "no final event yet".into(),
            (None, None) => "no final event: still running, or stopped".into(),
        }
    }

    /// The `state` line of the text summary.
    fn state_text(&self) -> Option<String> {
        let at = || {
            self.last_time.as_deref().map_or(String::new(), |t| {
                format!(" (last event {})", escape_controls(&clip(t, 40)))
            })
        };
        Some(match self.state()? {
            State::Running => "running".into(),
            State::Stalled(idle) => format!("stalled: no event for {idle} s{}", at()),
            State::Finished(true) => "finished, ok".into(),
            State::Finished(false) => "finished, failed".into(),
            State::Ended => format!("{ENDED_WITHOUT_FINAL}{}", at()),
        })
    }

    /// The summary as a screen of text, with at most `lists` entries per list and `strings`
    /// bytes per string; every string from the log escaped, so each stays on its line.
    fn to_text_within(&self, lists: usize, strings: usize) -> String {
        if self.parts.len() < 2 {
            return self.own_text_within(lists, strings);
        }
        let count = self.parts.len() as u64 + self.parts_dropped;
        let shown = self.parts.len().min(lists);
        let first = count - shown as u64;
        let mut t = String::new();
        if first > 0 {
            t.push_str(&format!(
                "({first} earlier conversations counted in the total only)\n"
            ));
        }
        for (k, p) in self.parts[self.parts.len() - shown..].iter().enumerate() {
            t.push_str(&format!(
                "── conversation {} of {count}\n",
                first + k as u64 + 1
            ));
            t.push_str(&p.own_text_within(lists, strings));
        }
        t.push_str(&format!("── total of {count} conversations\n"));
        t.push_str(&self.own_text_within(lists, strings));
        t
    }

    /// This summary's own lines, its conversations aside.
    fn own_text_within(&self, lists: usize, strings: usize) -> String {
        let e = |x: &str| escape_controls(&clip(x, strings));
        let or = |x: &Option<String>| x.as_deref().map_or_else(|| "-".into(), e);
        let mut t = String::new();
        if let Some(state) = self.state_text() {
            t.push_str(&format!("state     {state}\n"));
        }
        t.push_str(&format!("session   {}\n", or(&self.session)));
        t.push_str(&format!("model     {}\n", or(&self.model)));
        if let Some(agent) = &self.agent {
            t.push_str(&format!(
                "agent     {agent}{}\n",
                self.version
                    .as_deref()
                    .map_or(String::new(), |v| format!(" {}", e(v)))
            ));
        }
        if !self.unknown.is_empty() {
            let mut shown: Vec<String> = self
                .unknown
                .iter()
                .take(lists)
                .map(|(k, (n, at))| format!("{} {n} (line {at})", e(k)))
                .collect();
            if self.unknown.len() > lists {
                shown.push(format!("… {} more", self.unknown.len() - lists));
            }
            t.push_str(&format!(
                "unknown   {} (event types smart-tee's rules do not know: its readers may be stale)\n",
                shown.join(", ")
            ));
        }
        t.push_str(&format!(
            "time      {} → {}{}\n",
            or(&self.first_time),
            or(&self.last_time),
            self.duration_ms.map_or(String::new(), |d| format!(
                " ({:.1} s reported)",
                d as f64 / 1000.0
            ))
        ));
        t.push_str(&format!(
            "events    {}, turns {}\n",
            self.events,
            self.turns.map_or("-".into(), |n| n.to_string())
        ));
        if !self.cost_by_session.is_empty() {
            t.push_str(&format!(
                "cost      ${:.4}\n",
                self.cost_by_session.values().sum::<f64>()
            ));
        }
        let (tin, tout) = self.tokens();
        t.push_str(&format!("tokens    in {tin} out {tout}\n"));
        let mut tools: Vec<(&String, &u64)> = self.tools.iter().collect();
        tools.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let mut shown: Vec<String> = tools
            .iter()
            .take(lists)
            .map(|(k, c)| format!("{} {c}", e(k)))
            .collect();
        if tools.len() > lists {
            shown.push(format!("… {} more", tools.len() - lists));
        }
        t.push_str(&format!(
            "tools     {}\n",
            if shown.is_empty() {
                "-".into()
            } else {
                shown.join(", ")
            }
        ));
        if !self.files.is_empty() {
            let mut files: Vec<String> = self.files.iter().take(lists).map(|f| e(f)).collect();
            if self.files.len() > lists {
                files.push(format!("… {} more", self.files.len() - lists));
            }
            t.push_str(&format!("files     {}\n", files.join(", ")));
        }
        let calls = self.tool_calls();
        if calls > 0 {
            t.push_str(&format!(
                "calls     {calls}, failed {}{}\n",
                self.counts.tool_failures,
                if self.counts.tool_failures > 0 {
                    format!(
                        " ({:.0}%)",
                        self.counts.tool_failures as f64 * 100.0 / calls as f64
                    )
                } else {
                    String::new()
                }
            ));
        }
        let c = &self.counts;
        let mut acted = Vec::new();
        if c.api_retries > 0 {
            acted.push(format!(
                "API retries {}{}",
                c.api_retries,
                c.last_retry_status
                    .map_or(String::new(), |s| format!(" (last status {s})"))
            ));
        }
        for (name, k) in [
            ("refusals", c.refusals),
            ("permission denials", self.denials()),
            ("hook failures", c.hook_failures),
            ("startup errors", c.startup_errors),
        ] {
            if k > 0 {
                acted.push(format!("{name} {k}"));
            }
        }
        if !acted.is_empty() {
            t.push_str(&format!("issues    {}\n", acted.join(", ")));
        }
        let models = self.per_model();
        if models.len() > 1 || models.values().any(|u| u.cost.is_some()) {
            let mut shown: Vec<String> = models
                .iter()
                .take(lists)
                .map(|(m, u)| {
                    format!(
                        "{} in {} out {}{}",
                        e(m),
                        u.input,
                        u.output,
                        u.cost.map_or(String::new(), |c| format!(" ${c:.4}"))
                    )
                })
                .collect();
            if models.len() > lists {
                shown.push(format!("… {} more", models.len() - lists));
            }
            t.push_str(&format!("models    {}\n", shown.join("; ")));
        }
        t.push_str(&format!("errors    {}\n", self.error_count));
        for x in self.errors.iter().take(lists) {
            t.push_str(&format!("  {}\n", e(x)));
        }
        if matches!(self.state(), None | Some(State::Finished(_))) {
            t.push_str(&format!("ended     {}\n", e(&self.ended())));
        }
        t
    }

    /// The summary as a screen of text.
    pub fn to_text(&self) -> String {
        self.to_text_within(usize::MAX, STRING_CAP)
    }

    /// The summary in `format` within `budget` bytes: lists, then strings, shortened until it
    /// fits. JSON stays one valid object (its least form drops members from the end); text
    /// keeps its last lines.
    pub fn render_within(&self, format: Format, budget: usize) -> String {
        const STEPS: [(usize, usize); 7] = [
            (usize::MAX, STRING_CAP),
            (LIST_CAP, STRING_CAP),
            (10, 120),
            (5, 60),
            (3, 40),
            (1, 24),
            (0, 16),
        ];
        let render = |lists, strings| match format {
            Format::Text => self.to_text_within(lists, strings),
            _ => json_text(&self.to_json_within(lists, strings)),
        };
        for (lists, strings) in STEPS {
            let out = render(lists, strings);
            if out.len() <= budget {
                return out;
            }
        }
        if format == Format::Text {
            // Whole lines that fit, the last one saying so.
            let out = render(0, 16);
            let mut end = budget.saturating_sub(20).min(out.len());
            while !out.is_char_boundary(end) {
                end -= 1;
            }
            let end = out[..end].rfind('\n').map_or(0, |p| p + 1);
            return format!("{}… (cut to fit)\n", &out[..end]);
        }
        // The least form: members dropped, the least telling first; type, events, errors and
        // how the run ended go last.
        const DROP: [&str; 33] = [
            "conversations",
            "conversation_count",
            "unknown_events",
            "agent_version",
            "agent",
            "first_errors",
            "files_written",
            "models",
            "tools",
            "tools_used",
            "tool_failure_rate",
            "last_retry_status",
            "idle_seconds",
            "first_event",
            "last_event",
            "duration_ms",
            "input_tokens",
            "output_tokens",
            "model",
            "session_id",
            "turns",
            "startup_errors",
            "hook_failures",
            "permission_denials",
            "refusals",
            "api_retries",
            "tool_failures",
            "tool_calls",
            "cost_usd",
            "ended",
            "errors",
            "events",
            "ok",
        ];
        let mut v = self.to_json_within(0, 16);
        for key in DROP {
            if json_text(&v).len() <= budget {
                break;
            }
            if let Some(obj) = v.as_object_mut() {
                obj.shift_remove(key);
            }
        }
        json_text(&v)
    }
}

/// The length an array had before smart-tee cut it: its marker element says so
/// (`[TRUNCATED: 12 → 3 items]`, as a string, a `_truncated…` member or a text block); an
/// array without one is whole.
fn original_len(a: &[Value]) -> u64 {
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

/// One JSON value as an inert line.
fn json_text(v: &Value) -> String {
    let s = serde_json::to_string(v).unwrap_or_default();
    String::from_utf8_lossy(&inert_json(s.as_bytes())).into_owned() + "\n"
}

/// The summary of one log read from `file` (its start, decompressed within `limit`), the
/// events `wants` keeps, with its health now; and the log's whole lines. What every surface
/// says of a log (`--summary`, `log_summary`, `list_logs`, `wait_for_log`) comes from here.
pub fn of_log(
    file: &File,
    limit: &DecompressLimit,
    stall_after: Duration,
    wants: impl Fn(&[u8]) -> bool,
) -> io::Result<(Summary, u64)> {
    let mut summary = Summary::default();
    summary.add_log(file, limit, wants)?;
    summary.set_health(Health::of(file, stall_after));
    Ok(summary_and_lines(summary))
}

fn summary_and_lines(summary: Summary) -> (Summary, u64) {
    let lines = summary.lines;
    (summary, lines)
}

impl Summary {
    /// Adds the whole lines of `file` that `wants` keeps.
    fn add_log(
        &mut self,
        file: &File,
        limit: &DecompressLimit,
        wants: impl Fn(&[u8]) -> bool,
    ) -> io::Result<()> {
        let mut f = file.try_clone()?;
        io::Seek::seek(&mut f, io::SeekFrom::Start(0))?;
        for_each_line_in(f, limit, |line| {
            self.lines += 1;
            if wants(line) {
                self.add(line);
            }
            true
        })
    }

    /// Merges the health of another log of the same summary: a writer on any, the latest
    /// modification.
    pub(crate) fn merge_health(&mut self, h: Health) {
        self.set_health(match self.health {
            None => h,
            Some(o) => Health {
                writer: o.writer || h.writer,
                now: o.now.max(h.now),
                modified: o.modified.max(h.modified),
                stall_after: o.stall_after,
            },
        });
    }
}

/// `--summary`: one pass over the selected events of every file, then one screen (text) or
/// one JSON object, within `--max-tokens`.
pub(crate) fn summarize<W: Write>(opts: &ViewOptions, mut out: W) -> Result<Vec<String>, Error> {
    let mut summary = Summary::default();
    let mut problems = Vec::new();
    for (k, path) in opts.files.iter().enumerate() {
        let res = opts.open(k).and_then(|f| {
            summary.add_log(&f, &opts.decompress, |l| opts.wants(l))?;
            summary.merge_health(Health::of(&f, opts.stall_after));
            Ok(())
        });
        if let Err(source) = res {
            let e = Error::ReadLog {
                path: path.clone(),
                source,
            };
            problems.push(e.to_string());
        }
    }
    // No file could be read: the errors say so; an empty summary would read as a run of
    // nothing.
    if problems.len() == opts.files.len() {
        return Ok(problems);
    }
    let budget = opts.budget().unwrap_or(usize::MAX);
    out.write_all(summary.render_within(opts.format, budget).as_bytes())
        .and_then(|()| out.flush())
        .map_err(|source| Error::WriteStdout { source })?;
    Ok(problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cut log's array of denials counted as the stream's: its marker element gives the
    /// length before the cut (the golden format-claude-2026 summary said 4 for 12).
    #[test]
    fn an_array_cut_to_its_ends_counts_as_long_as_it_was() {
        let cut = json!([{"id": 1}, {"_truncated": "[TRUNCATED: 12 → 2 items]"}, {"id": 12}]);
        assert_eq!(original_len(cut.as_array().unwrap()), 12);
        let blocks = json!([{"type": "text", "text": "[TRUNCATED: 57 → 6 items]"}]);
        assert_eq!(original_len(blocks.as_array().unwrap()), 57);
        let plain = json!(["[TRUNCATED: 9 → 1 items]", 1]);
        assert_eq!(original_len(plain.as_array().unwrap()), 9);
        let whole = json!([{"id": 1}, {"text": "not a marker"}]);
        assert_eq!(original_len(whole.as_array().unwrap()), 2);
    }

    /// #28.6: a tool name holding newlines forged an `errors 0` line in the text summary.
    #[test]
    fn a_tool_name_with_newlines_stays_on_its_line() {
        let mut s = Summary::default();
        let line = json!({"type":"assistant","message":{"content":[
            {"type":"tool_use","name":"Bash\nerrors    0\nFAKE\u{202e}","input":{}}]}});
        s.add(line.to_string().as_bytes());
        s.add(br#"{"type":"error","error":"boom"}"#);
        let text = s.to_text();
        assert!(
            text.contains("Bash\\nerrors    0\\nFAKE\\u{202e} 1"),
            "{text}"
        );
        assert_eq!(text.lines().filter(|l| l.starts_with("errors")).count(), 1);
        assert!(text.contains("errors    1"));
    }

    /// #28.5 and #28.7: long or hostile strings and many tools keep the JSON valid and within
    /// the budget, and the state kept per key is capped.
    #[test]
    fn the_json_summary_fits_its_budget_and_stays_json() {
        let mut s = Summary::default();
        let model = "\u{9b}".repeat(1200);
        let sid = "s".repeat(5000);
        s.add(
            json!({"type":"system","session_id": sid, "model": model})
                .to_string()
                .as_bytes(),
        );
        for i in 0..2000 {
            let line = json!({"type":"assistant","message":{"content":[
                {"type":"tool_use","name": format!("tool{i}"),"input":{}}]}});
            s.add(line.to_string().as_bytes());
        }
        assert_eq!(s.tools.len(), TOOL_CAP + 1);
        for budget in [300, 1000, 3000, 75_000] {
            let out = s.render_within(Format::Json, budget);
            assert!(out.len() <= budget, "{budget}: {}", out.len());
            let v: Value = serde_json::from_str(&out).unwrap();
            assert_eq!(v["type"], "summary");
            assert!(
                v.get("errors").is_some() && v.get("ended").is_some(),
                "{out}"
            );
            assert!(!out.contains('\u{9b}'));
            let text = s.render_within(Format::Text, budget);
            assert!(text.len() <= budget, "{budget}: {}", text.len());
            if budget >= 1000 {
                assert!(text.contains("\nended "), "{text}");
                assert!(text.contains("\nerrors "), "{text}");
            }
        }
    }
}
