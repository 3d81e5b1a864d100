//! Rendering a summary: one JSON object or one screen of text, each within a budget (lists,
//! then strings, shortened until the whole fits), conversation by conversation and a total.

use serde_json::{Value, json};

use super::health::State;
use super::{ENDED_WITHOUT_FINAL, EXITED_NO_FINAL, LIST_CAP, STRING_CAP, Summary, clip, grouped};
use crate::read::log::{Format, NO_TIME_NOTE, escape_controls, inert_json, strip_sgr};

impl Summary {
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
                        o.insert(
                            "file".into(),
                            json!(p.file.as_deref().map(|f| clip(f, strings.max(60)))),
                        );
                    }
                    j
                })
                .collect();
            if let Some(o) = v.as_object_mut() {
                self.total_json(o, strings);
            }
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
        let usage = self.usage();
        let cost = self.cost_figure();
        let models: serde_json::Map<String, Value> = usage
            .models
            .iter()
            .take(lists)
            .map(|(m, u)| {
                let mut o = serde_json::Map::new();
                u.tokens.json_members(&mut o);
                // The cost reported for the model (and the estimate of what reported none),
                // else its estimate at the price table's, as the run's (it was null for a
                // transcript's model, whose run was estimated).
                let (usd, estimated) = match u.cost {
                    // The one model: the run's cost is its, reported or estimated (an estimate
                    // beside the run's reported cost disagreed with it).
                    None if usage.models.len() == 1 => (cost.usd(), cost.estimated.is_some()),
                    _ => u.usd(m),
                };
                o.insert("cost_usd".into(), json!(usd));
                o.insert("cost_estimated".into(), json!(estimated));
                (clip(m, strings), Value::Object(o))
            })
            .collect();
        let t = usage.tokens;
        let unknown: serde_json::Map<String, Value> = self
            .drift
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
        let v = json!({
            "type": "summary",
            "state": state.as_ref().map(State::name),
            "ok": ok,
            "idle_seconds": idle,
            "events": self.events,
            "lines_not_json": self.not_json,
            "session_id": c(&self.session),
            "model": c(&self.model()),
            "first_event": self.first_time.as_deref().map(|x| clip(x, 40)),
            "last_event": self.last_time.as_deref().map(|x| clip(x, 40)),
            "duration_ms": self.duration_ms,
            "turns": self.turns,
            "cost_usd": cost.usd(),
            "input_tokens": t.input,
            "cache_read_input_tokens": t.cache_read,
            "cache_creation_input_tokens": t.cache_write,
            "output_tokens": t.output,
            "total_input_tokens": t.all_input(),
            "total_tokens": t.total(),
            "tools_used": self.tools.len(),
            "tools": tools,
            "tool_calls": calls,
            "tool_failures": self.counts.tool_failures,
            "tool_failure_rate": (calls > 0).then(|| (self.counts.tool_failures as f64 / calls as f64 * 1000.0).round() / 1000.0),
            "api_retries": self.counts.api_retries,
            "last_retry_status": self.counts.last_retry_status,
            "refusals": self.counts.refusals,
            "retracted_messages": self.counts.retracted,
            "permission_denials": self.denials(),
            "hook_failures": self.counts.hook_failures,
            "startup_errors": self.counts.startup_errors,
            "models": models,
            "agent": self.drift.agent,
            "agent_version": c(&self.drift.version),
            "unknown_events": unknown,
            "errors": self.error_count,
            "first_errors": list(&self.errors),
            "files_written": list(&self.files),
            "ended": clip(&self.ended(), strings.max(24)),
        });
        // Whether the cost is reported or estimated, beside it (json! cannot nest deeper).
        let unpriced: Vec<String> = cost
            .unpriced
            .iter()
            .take(lists)
            .map(|m| clip(m, strings))
            .collect();
        let mut out = serde_json::Map::new();
        for (k, x) in v.as_object().into_iter().flatten() {
            out.insert(k.clone(), x.clone());
            if k == "cost_usd" {
                out.insert("cost_estimated".into(), json!(cost.estimated.is_some()));
                out.insert("cost_reported_usd".into(), json!(cost.reported));
                let date = cost.estimated.and(cost.date.as_deref());
                out.insert("prices_date".into(), json!(date));
                out.insert("unpriced_models".into(), json!(unpriced));
            }
        }
        Value::Object(out)
    }

    /// The summary as one JSON object.
    pub fn to_json(&self) -> Value {
        self.to_json_within(usize::MAX, STRING_CAP)
    }

    fn ended(&self) -> String {
        match (&self.ended, self.state()) {
            (Some(e), Some(State::Finished(_)) | None) => e.clone(),
            (_, Some(State::Ended)) => ENDED_WITHOUT_FINAL.into(),
            (_, Some(State::Exited)) => EXITED_NO_FINAL.into(),
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
            State::Exited => format!("{EXITED_NO_FINAL}{}", at()),
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
        t.push_str(&self.lines_within(lists, strings, true));
        t
    }

    /// This summary's own lines, its conversations aside.
    fn own_text_within(&self, lists: usize, strings: usize) -> String {
        self.lines_within(lists, strings, false)
    }

    /// A run's lines, or with `total` a total's: runs, agents and models with their shares
    /// in place of a session, a state and an ending.
    fn lines_within(&self, lists: usize, strings: usize, total: bool) -> String {
        // Colours dropped, other controls made visible: a text line stays inert.
        let e = |x: &str| escape_controls(&clip(&strip_sgr(x), strings));
        let mut t = String::new();
        if total {
            t.push_str(&self.total_text_within(lists, strings));
        } else {
            t.push_str(&self.run_head_text(lists, strings));
        }
        let not_json = match (self.not_json, self.events) {
            (0, _) => String::new(),
            (n, 0) => format!("; {n} lines not JSON: not an agent's stream"),
            (n, _) => format!("; {n} lines not JSON"),
        };
        t.push_str(&format!(
            "events    {}, turns {}{not_json}\n",
            self.events,
            self.turns.map_or("-".into(), |n| n.to_string())
        ));
        if let Some(cost) = self.cost_figure().text(e) {
            t.push_str(&format!("cost      {cost}\n"));
        }
        let usage = self.usage();
        t.push_str(&format!("tokens    {}\n", usage.tokens.text()));
        t.push_str(&self.tools_text(lists, strings));
        let models = usage.models;
        // One model's line would repeat the tokens line; a total's models line says them.
        if models.len() > 1 && !total {
            let mut shown: Vec<String> = models
                .iter()
                .take(lists)
                .map(|(m, u)| {
                    format!(
                        "{} in {} out {}{}",
                        e(m),
                        grouped(u.tokens.all_input()),
                        grouped(u.tokens.output),
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
        let shown = self.errors.len().min(lists);
        for x in self.errors.iter().take(lists) {
            t.push_str(&format!("  {}\n", e(x)));
        }
        // The list keeps the first ones: the count says how many more there were.
        if self.error_count > shown as u64 && shown > 0 {
            t.push_str(&format!("  … {} more\n", self.error_count - shown as u64));
        }
        if !total && matches!(self.state(), None | Some(State::Finished(_))) {
            t.push_str(&format!("ended     {}\n", e(&self.ended())));
        }
        t
    }

    /// A run's first lines: state, session, model, agent, unknown events, time.
    fn run_head_text(&self, lists: usize, strings: usize) -> String {
        let e = |x: &str| escape_controls(&clip(&strip_sgr(x), strings));
        let or = |x: &Option<String>| x.as_deref().map_or_else(|| "-".into(), e);
        let mut t = String::new();
        if let Some(state) = self.state_text() {
            t.push_str(&format!("state     {state}\n"));
        }
        t.push_str(&format!("session   {}\n", or(&self.session)));
        t.push_str(&format!("model     {}\n", or(&self.model())));
        if let Some(agent) = self.drift.agent {
            t.push_str(&format!(
                "agent     {agent}{}\n",
                self.drift
                    .version
                    .as_deref()
                    .map_or(String::new(), |v| format!(" {}", e(v)))
            ));
        }
        if !self.drift.unknown.is_empty() {
            let mut shown: Vec<String> = self
                .drift
                .unknown
                .iter()
                .take(lists)
                .map(|(k, (n, at))| format!("{} {n} (line {at})", e(k)))
                .collect();
            if self.drift.unknown.len() > lists {
                shown.push(format!("… {} more", self.drift.unknown.len() - lists));
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
            match (self.duration_ms, &self.first_time, &self.last_time) {
                (Some(d), ..) => format!(" ({:.1} s reported)", d as f64 / 1000.0),
                (None, None, None) if self.events > 0 => format!(" ({NO_TIME_NOTE})"),
                _ => String::new(),
            }
        ));
        t
    }

    /// The tools, files, calls and issues lines.
    fn tools_text(&self, lists: usize, strings: usize) -> String {
        let e = |x: &str| escape_controls(&clip(&strip_sgr(x), strings));
        let mut t = String::new();
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
            ("messages retracted", c.retracted),
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
        const DROP: [&str; 46] = [
            "conversations",
            "conversation_count",
            "runs_by_model",
            "runs_by_agent",
            "runs",
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
            "total_tokens",
            "total_input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
            "input_tokens",
            "output_tokens",
            "model",
            "session_id",
            "turns",
            "startup_errors",
            "hook_failures",
            "permission_denials",
            "retracted_messages",
            "refusals",
            "api_retries",
            "tool_failures",
            "tool_calls",
            "unpriced_models",
            "prices_date",
            "cost_reported_usd",
            "cost_usd",
            "cost_estimated",
            "ended",
            "errors",
            "lines_not_json",
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

/// One JSON value as an inert line.
fn json_text(v: &Value) -> String {
    let s = serde_json::to_string(v).unwrap_or_default();
    String::from_utf8_lossy(&inert_json(s.as_bytes())).into_owned() + "\n"
}
