//! `--view --summary`: one screen that answers "what happened" in a run, for any agent's
//! stream: ids, model, duration, turns, cost and tokens, tools used with counts, errors with
//! their first line, files written, and how the run ended. Read in one pass, in bounded memory
//! (lists are capped).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::gist::{first_line, gist, time_of};
use crate::view::is_error_event;

/// Errors and files listed at most.
const LIST_CAP: usize = 20;

/// What a run did, gathered event by event.
#[derive(Debug, Default)]
pub struct Summary {
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
}

fn s(v: &Value, p: &str) -> Option<String> {
    v.pointer(p).and_then(Value::as_str).map(str::to_string)
}

fn n(v: &Value, p: &str) -> Option<u64> {
    v.pointer(p).and_then(Value::as_u64)
}

impl Summary {
    /// Takes one event (a log line).
    pub fn add(&mut self, line: &[u8]) {
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        self.events += 1;
        if let Some(t) = time_of(&v) {
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
            .find_map(|p| s(&v, p));
        }
        if let Some(m) = ["/model", "/message/model", "/payload/model"]
            .iter()
            .find_map(|p| s(&v, p))
        {
            self.model = Some(m);
        }
        let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
        self.tools_and_files(&v, kind);
        if kind == "assistant" {
            self.message_tokens.0 += n(&v, "/message/usage/input_tokens").unwrap_or(0)
                + n(&v, "/message/usage/cache_read_input_tokens").unwrap_or(0)
                + n(&v, "/message/usage/cache_creation_input_tokens").unwrap_or(0);
            self.message_tokens.1 += n(&v, "/message/usage/output_tokens").unwrap_or(0);
        }
        if is_error_event(&v) {
            self.error_count += 1;
            if self.errors.len() < LIST_CAP {
                self.errors.push(first_line(&gist(&v), 160));
            }
        }
        match kind {
            "result" => {
                let session = s(&v, "/session_id").unwrap_or_default();
                if let Some(c) = v.get("total_cost_usd").and_then(Value::as_f64) {
                    self.cost_by_session.insert(session, c);
                }
                self.turns = n(&v, "/num_turns").or(self.turns);
                self.duration_ms = n(&v, "/duration_ms").or(self.duration_ms);
                self.input_tokens += n(&v, "/usage/input_tokens").unwrap_or(0)
                    + n(&v, "/stats/input_tokens").unwrap_or(0);
                self.output_tokens += n(&v, "/usage/output_tokens").unwrap_or(0)
                    + n(&v, "/stats/output_tokens").unwrap_or(0);
                let how = match (s(&v, "/subtype"), s(&v, "/status")) {
                    (Some(sub), _) | (None, Some(sub)) => sub,
                    _ => "result".into(),
                };
                let error = v.get("is_error") == Some(&Value::Bool(true));
                self.ended = Some(format!(
                    "{how}{}{}",
                    if error { " (is_error)" } else { "" },
                    s(&v, "/result")
                        .map_or(String::new(), |r| format!(": {}", first_line(&r, 120)))
                ));
            }
            "turn.completed" => {
                self.turns = Some(self.turns.unwrap_or(0) + 1);
                self.input_tokens += n(&v, "/usage/input_tokens").unwrap_or(0);
                self.output_tokens += n(&v, "/usage/output_tokens").unwrap_or(0);
                self.ended = Some("turn.completed".into());
            }
            "turn.failed" => {
                self.ended = Some(format!(
                    "turn.failed: {}",
                    s(&v, "/error/message").unwrap_or_default()
                ));
            }
            "complete" => self.ended = Some("complete".into()),
            _ => {}
        }
    }

    fn tool(&mut self, name: &str) {
        if !name.is_empty() {
            *self.tools.entry(name.to_string()).or_default() += 1;
        }
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
    fn tokens(&self) -> (u64, u64) {
        if self.input_tokens + self.output_tokens > 0 {
            (self.input_tokens, self.output_tokens)
        } else {
            self.message_tokens
        }
    }

    /// The summary as one JSON object.
    pub fn to_json(&self) -> Value {
        json!({
            "type": "summary",
            "events": self.events,
            "session_id": self.session,
            "model": self.model,
            "first_event": self.first_time,
            "last_event": self.last_time,
            "duration_ms": self.duration_ms,
            "turns": self.turns,
            "cost_usd": (!self.cost_by_session.is_empty()).then(|| self.cost_by_session.values().sum::<f64>()),
            "input_tokens": self.tokens().0,
            "output_tokens": self.tokens().1,
            "tools": self.tools,
            "errors": self.error_count,
            "first_errors": self.errors,
            "files_written": self.files,
            "ended": self.ended.clone().unwrap_or_else(|| "no final event: still running, or stopped".into()),
        })
    }

    /// The summary as a screen of text.
    pub fn to_text(&self) -> String {
        let mut t = String::new();
        let or = |x: &Option<String>| x.clone().unwrap_or_else(|| "-".into());
        t.push_str(&format!("session   {}\n", or(&self.session)));
        t.push_str(&format!("model     {}\n", or(&self.model)));
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
        let tools: Vec<String> = tools.iter().map(|(k, c)| format!("{k} {c}")).collect();
        t.push_str(&format!(
            "tools     {}\n",
            if tools.is_empty() {
                "-".into()
            } else {
                tools.join(", ")
            }
        ));
        if !self.files.is_empty() {
            t.push_str(&format!("files     {}\n", self.files.join(", ")));
        }
        t.push_str(&format!("errors    {}\n", self.error_count));
        for e in &self.errors {
            t.push_str(&format!("  {e}\n"));
        }
        t.push_str(&format!(
            "ended     {}\n",
            self.ended
                .clone()
                .unwrap_or_else(|| "no final event: still running, or stopped".into())
        ));
        t
    }
}
