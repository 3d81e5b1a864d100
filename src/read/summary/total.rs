//! The total of several conversations: how many runs ended which way, the agents and models
//! with their shares of the runs, the time from the earliest to the latest event, and the sums
//! of turns, tokens, cost and calls. A total is no run: it has no session, state or ending of
//! its own, so its text says none.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::health::State;
use super::{Summary, clip, grouped};
use crate::read::log::escape_controls;

/// How many runs stand which way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct RunCounts {
    pub all: u64,
    pub ok: u64,
    pub failed: u64,
    pub ended: u64,
    pub exited: u64,
    pub running: u64,
    pub stalled: u64,
}

impl RunCounts {
    /// `157: 21 ok, 133 failed, 3 ended without a final event`; a kind no run is in is left
    /// out, but ok and failed are always said.
    pub fn text(&self) -> String {
        let mut kinds = vec![format!("{} ok", self.ok), format!("{} failed", self.failed)];
        for (n, name) in [
            (self.ended, super::ENDED_WITHOUT_FINAL),
            (self.exited, "exited with no final event in their format"),
            (self.running, "running"),
            (self.stalled, "stalled"),
        ] {
            if n > 0 {
                kinds.push(format!("{n} {name}"));
            }
        }
        format!("{}: {}", self.all, kinds.join(", "))
    }

    pub fn json(&self) -> Value {
        json!({
            "count": self.all,
            "ok": self.ok,
            "failed": self.failed,
            "ended_without_final_event": self.ended,
            "exited_no_final_event": self.exited,
            "running": self.running,
            "stalled": self.stalled,
        })
    }
}

/// `n` of `all` as a whole percentage.
fn share(n: u64, all: u64) -> u64 {
    if all == 0 {
        0
    } else {
        (n as f64 * 100.0 / all as f64).round() as u64
    }
}

/// Names counted, most first (then by name).
fn by_count(counts: BTreeMap<String, u64>) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

impl Summary {
    /// How the conversations stand, each by its own state.
    pub(super) fn run_counts(&self) -> RunCounts {
        let mut c = RunCounts {
            all: self.parts.len() as u64 + self.parts_dropped,
            ..RunCounts::default()
        };
        for p in &self.parts {
            match p.state() {
                Some(State::Finished(true)) => c.ok += 1,
                Some(State::Finished(false)) => c.failed += 1,
                Some(State::Ended) => c.ended += 1,
                Some(State::Exited) => c.exited += 1,
                Some(State::Running) => c.running += 1,
                Some(State::Stalled(_)) => c.stalled += 1,
                None => {}
            }
        }
        c
    }

    /// Runs per agent, most first.
    pub(super) fn runs_by_agent(&self) -> Vec<(String, u64)> {
        let mut counts = BTreeMap::new();
        for p in &self.parts {
            let agent = p.drift.agent.unwrap_or("unknown");
            *counts.entry(agent.to_string()).or_default() += 1;
        }
        by_count(counts)
    }

    /// Runs per model (the one that did each run's work), most first.
    pub(super) fn runs_by_model(&self) -> Vec<(String, u64)> {
        let mut counts = BTreeMap::new();
        for p in &self.parts {
            *counts
                .entry(p.model().unwrap_or_else(|| "unknown".into()))
                .or_default() += 1;
        }
        by_count(counts)
    }

    /// The earliest and the latest event of the conversations, by the instants they carry
    /// (files given in any order); the times as the events say them.
    pub(super) fn span(&self) -> (Option<String>, Option<String>) {
        let first = self
            .parts
            .iter()
            .filter(|p| p.first_time.is_some())
            .min_by_key(|p| p.first_any.map(|i| i.0).unwrap_or(i128::MAX))
            .and_then(|p| p.first_time.clone());
        let last = self
            .parts
            .iter()
            .filter(|p| p.last_time.is_some())
            .max_by_key(|p| p.last_any.map(|i| i.0).unwrap_or(i128::MIN))
            .and_then(|p| p.last_time.clone());
        (
            first.or(self.first_time.clone()),
            last.or(self.last_time.clone()),
        )
    }

    /// The members a total adds to its JSON: the runs by state, agent and model.
    pub(super) fn total_json(&self, into: &mut serde_json::Map<String, Value>, strings: usize) {
        into.insert("runs".into(), self.run_counts().json());
        let map = |v: Vec<(String, u64)>| -> serde_json::Map<String, Value> {
            v.into_iter()
                .map(|(k, n)| (clip(&k, strings), json!(n)))
                .collect()
        };
        into.insert("runs_by_agent".into(), map(self.runs_by_agent()).into());
        into.insert("runs_by_model".into(), map(self.runs_by_model()).into());
        let (first, last) = self.span();
        into.insert("first_event".into(), json!(first.map(|x| clip(&x, 40))));
        into.insert("last_event".into(), json!(last.map(|x| clip(&x, 40))));
    }

    /// The total's lines: runs, agents, models, time, then what the conversations add up to.
    pub(super) fn total_text_within(&self, lists: usize, strings: usize) -> String {
        let e = |x: &str| escape_controls(&clip(x, strings));
        let runs = self.run_counts();
        let mut t = format!("runs      {}\n", runs.text());
        let shares = |v: Vec<(String, u64)>, extra: &dyn Fn(&str) -> String| {
            let mut shown: Vec<String> = v
                .iter()
                .take(lists)
                .map(|(k, n)| {
                    format!(
                        "{} {n} run{} ({}%){}",
                        e(k),
                        if *n == 1 { "" } else { "s" },
                        share(*n, runs.all),
                        extra(k)
                    )
                })
                .collect();
            if v.len() > lists {
                shown.push(format!("… {} more", v.len() - lists));
            }
            shown.join("; ")
        };
        t.push_str(&format!(
            "agents    {}\n",
            shares(self.runs_by_agent(), &|_| String::new())
        ));
        let usage = self.usage();
        let tokens_of = |m: &str| {
            usage.models.get(m).map_or(String::new(), |u| {
                format!(
                    " in {} out {}{}",
                    grouped(u.tokens.all_input()),
                    grouped(u.tokens.output),
                    match u.usd(m) {
                        (Some(c), true) => format!(" ~${c:.4}"),
                        (Some(c), false) => format!(" ${c:.4}"),
                        (None, _) => String::new(),
                    }
                )
            })
        };
        t.push_str(&format!(
            "models    {}\n",
            shares(self.runs_by_model(), &tokens_of)
        ));
        let (first, last) = self.span();
        let or = |x: &Option<String>| x.as_deref().map_or_else(|| "-".into(), e);
        t.push_str(&format!(
            "time      {} → {}{}\n",
            or(&first),
            or(&last),
            self.duration_ms.map_or(String::new(), |d| format!(
                " ({:.1} s reported, summed)",
                d as f64 / 1000.0
            ))
        ));
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_counts_say_ok_and_failed_always_and_other_kinds_when_any() {
        let c = RunCounts {
            all: 157,
            ok: 21,
            failed: 133,
            ended: 3,
            ..RunCounts::default()
        };
        assert_eq!(
            c.text(),
            "157: 21 ok, 133 failed, 3 ended without a final event"
        );
        let c = RunCounts {
            all: 2,
            ok: 1,
            stalled: 1,
            ..RunCounts::default()
        };
        assert_eq!(c.text(), "2: 1 ok, 0 failed, 1 stalled");
    }
}
