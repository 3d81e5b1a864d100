//! Gathering the events of the agents [`crate::read::headless`] reads (pi, droid, Copilot CLI,
//! Kimi CLI, Antigravity) into a summary: their tool calls and failures, tokens and cost, turns,
//! duration and ending, through the same fields as every other agent's.

use serde_json::Value;

use super::collect::original_len;
use super::{Summary, s};
use crate::line::agents::Format;
use crate::read::headless::{self, Reported};

impl Summary {
    /// Takes one event of format `f` (and its tokens, with `tokens`); `ending` is what
    /// [`headless::ending`] says of it.
    pub(super) fn add_headless(
        &mut self,
        v: &Value,
        f: Format,
        tokens: bool,
        ending: Option<(bool, String)>,
    ) {
        let (opened, closed) = headless::calls(v, f);
        // Kimi's calls of a line whose `tool_calls` smart-tee cut: those its marker says went.
        if f == Format::Kimi
            && let Some(a) = v.get("tool_calls").and_then(Value::as_array)
        {
            let went = original_len(a).saturating_sub(opened.len() as u64);
            self.tool_times("?", went);
        }
        let done = !closed.is_empty();
        for (id, name) in headless::counted_calls(v, f, opened, &closed) {
            if f == Format::Antigravity && !self.counts.first_step(id.as_deref(), done) {
                continue;
            }
            self.tool(if name.is_empty() { "?" } else { &name });
        }
        for (id, failed) in closed {
            if failed {
                self.failed_call(id.as_deref());
            }
        }
        if let Some(m) = headless::declared_model(v, f) {
            self.declared_model.get_or_insert(m);
        }
        match headless::tokens(v, f) {
            Some(Reported::Piece(t, cost)) => {
                if tokens {
                    self.steps.get_or_insert_with(Default::default).add(&t);
                }
                // A total's reported cost is its own sum of the pieces (as opencode's steps'),
                // not its conversations': without it a total of pi's runs said no cost.
                if let Some(c) = cost {
                    self.step_cost = Some(super::prices::add_usd(self.step_cost.unwrap_or(0.0), c));
                }
            }
            Some(Reported::Run(t)) if tokens => {
                let session = s(v, "/session_id")
                    .or_else(|| self.session.clone())
                    .unwrap_or_default();
                self.result_tokens(session, t);
            }
            _ => {}
        }
        // pi's turns: its `turn_start` events.
        if f == Format::Pi && v.get("type").and_then(Value::as_str) == Some("turn_start") {
            self.turns = Some(self.turns.unwrap_or(0) + 1);
        }
        let (turns, duration) = headless::turns_and_duration(v, f);
        self.turns = turns.or(self.turns);
        self.duration_ms = duration.or(self.duration_ms);
        if let Some((ok, how)) = ending {
            self.finished = Some(ok);
            self.ended = Some(how);
        }
    }
}
