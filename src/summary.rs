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
use std::io::Write;

use serde_json::{Value, json};

use crate::error::Error;
use crate::gist::{first_line, gist, time_of};
use crate::view::{Format, ViewOptions, escape_controls, inert_json, is_error_event};

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

/// `s` cut to at most `max` bytes on a character boundary, `…` saying so.
fn clip(s: &str, max: usize) -> String {
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
    v.pointer(p)
        .and_then(Value::as_str)
        .map(|x| clip(x, STRING_CAP))
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
                    let full = self.cost_by_session.len() >= SESSION_CAP
                        && !self.cost_by_session.contains_key(&session);
                    // Past the cap, the other sessions share one slot: their largest cost.
                    let key = if full {
                        "(other sessions)".into()
                    } else {
                        session
                    };
                    let slot = self.cost_by_session.entry(key).or_insert(c);
                    *slot = if full { slot.max(c) } else { c };
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
    fn tokens(&self) -> (u64, u64) {
        if self.input_tokens + self.output_tokens > 0 {
            (self.input_tokens, self.output_tokens)
        } else {
            self.message_tokens
        }
    }

    /// The summary as one JSON object, with at most `lists` entries per list and `strings`
    /// bytes per string.
    fn to_json_within(&self, lists: usize, strings: usize) -> Value {
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
        json!({
            "type": "summary",
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
        self.ended
            .clone()
            .unwrap_or_else(|| "no final event: still running, or stopped".into())
    }

    /// The summary as a screen of text, with at most `lists` entries per list and `strings`
    /// bytes per string; every string from the log escaped, so each stays on its line.
    fn to_text_within(&self, lists: usize, strings: usize) -> String {
        let e = |x: &str| escape_controls(&clip(x, strings));
        let or = |x: &Option<String>| x.as_deref().map_or_else(|| "-".into(), e);
        let mut t = String::new();
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
        t.push_str(&format!("errors    {}\n", self.error_count));
        for x in self.errors.iter().take(lists) {
            t.push_str(&format!("  {}\n", e(x)));
        }
        t.push_str(&format!("ended     {}\n", e(&self.ended())));
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
        const DROP: [&str; 16] = [
            "first_errors",
            "files_written",
            "tools",
            "tools_used",
            "first_event",
            "last_event",
            "duration_ms",
            "input_tokens",
            "output_tokens",
            "model",
            "session_id",
            "turns",
            "cost_usd",
            "ended",
            "errors",
            "events",
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

/// One JSON value as an inert line.
fn json_text(v: &Value) -> String {
    let s = serde_json::to_string(v).unwrap_or_default();
    String::from_utf8_lossy(&inert_json(s.as_bytes())).into_owned() + "\n"
}

/// `--summary`: one pass over the selected events of every file, then one screen (text) or
/// one JSON object, within `--max-tokens`.
pub(crate) fn summarize<W: Write>(opts: &ViewOptions, mut out: W) -> Result<Vec<String>, Error> {
    let mut summary = Summary::default();
    let mut problems = Vec::new();
    for (k, path) in opts.files.iter().enumerate() {
        let res = opts.open(k).and_then(|f| {
            crate::view::for_each_line_in(f, &opts.decompress, |line| {
                if opts.wants(line) {
                    summary.add(line);
                }
                true
            })
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
