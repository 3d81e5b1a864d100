//! `--view --summary`: one screen that answers "what happened" in a run, for any agent's
//! stream: ids, model, duration, turns, cost and tokens, tools used with counts, errors with
//! their first line, files written, and how the run ended. Read in one pass, in bounded memory:
//! lists, strings and the tools and sessions told apart are capped as events are added.
//!
//! Every string from the log is made inert (`view::escape_controls` in text, `view::inert_json`
//! in JSON) and stays in its field: a name with newlines cannot forge a line. Under a budget,
//! lists and then strings are shortened until the whole fits, so the answer keeps its format
//! (valid JSON) and its last lines (errors, how the run ended).

mod collect;
mod headless;
mod health;
pub mod live;
pub mod prices;
mod render;
mod table;
mod tokens;
mod total;

pub use health::{Health, State, is_final, writer_holds};
pub use tokens::{Tokens, grouped};

use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::io::{self, Write};
use std::time::Duration;

use serde_json::Value;

use crate::error::Error;
use crate::line::agents::Drift;
use crate::read::log::{DecompressLimit, Format, ViewOptions, for_each_line_in};
use crate::read::when::Instant;
use tokens::{Messages, ModelUse, Usage};

/// Errors and files listed at most.
const LIST_CAP: usize = 20;
/// Distinct tool names counted apart at most; uses of the others are counted together.
const TOOL_CAP: usize = 500;
/// Sessions whose cost is told apart at most.
const SESSION_CAP: usize = 1000;
/// Calls' and failed calls' ids kept to count each once.
const FAILED_IDS_CAP: usize = 10_000;
/// The most bytes of a string kept (a name, an id, an error's first line).
const STRING_CAP: usize = 200;
/// The name under which uses of tools past [`TOOL_CAP`] are counted.
const OTHER_TOOLS: &str = "(other tools)";
/// Models whose tokens are told apart at most (per session, for cumulative results).
const MODEL_CAP: usize = 100;
/// Conversations summarized apart at most (the last ones); all count in the total. High
/// enough that a program reading `--format json` gets every run of a day's logs; a closed
/// conversation keeps no per-message state, so each costs little.
const CONVERSATION_CAP: usize = 100_000;
/// Conversations past which the text `--summary` is the table of runs (`--by-run`).
pub const TABLE_AFTER: usize = 10;
/// The token counts of a JSON summary, as `list_logs` and `wait_for_log` give them too.
pub const TOKEN_FIELDS: [&str; 6] = [
    "input_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "output_tokens",
    "total_input_tokens",
    "total_tokens",
];
/// What `state` says of a log with no final event whose writer is gone.
pub const ENDED_WITHOUT_FINAL: &str = "ended without a final event";
/// What `state` says of a log whose format has no final event (Kimi CLI) once its writer is
/// gone: the run ended with its process, which says nothing of how it went.
pub const EXITED_NO_FINAL: &str = "exited; the format has no final event";

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
    /// Lines that are no JSON event: not JSON, or smart-tee's records of such lines (`non_json`,
    /// `torn`). A file of nothing else is no agent's stream.
    not_json: u64,
    session: Option<String>,
    /// The model a run's start names (Claude Code's and Cursor's init, Gemini CLI's init, a
    /// Codex rollout's first `turn_context`).
    declared_model: Option<String>,
    /// Assistant messages per model, and the last model any event named.
    model_uses: BTreeMap<String, u64>,
    last_model: Option<String>,
    first_time: Option<String>,
    last_time: Option<String>,
    duration_ms: Option<u64>,
    turns: Option<u64>,
    /// Codex rollouts' user turns: `user_message` events, else `UserMessage` items.
    user_turns: (u64, u64),
    /// The last cost reported by each session (Claude Code's result lines are cumulative per
    /// process), with the count of reports when it came; opencode's steps' and pi's messages'
    /// costs, added. Past [`SESSION_CAP`] sessions, the one that reported longest ago moves to
    /// `costs_moved` (by the hash of its id, so that a later report replaces it), and past
    /// that cap to `cost_closed`, added.
    cost_by_session: BTreeMap<String, (u64, f64)>,
    cost_reports: u64,
    costs_moved: std::collections::HashMap<u64, f64>,
    cost_closed: Option<f64>,
    /// Sessions started again (an init) since their last cost: their next report is of a new
    /// process if it is below the last one (see `collect.rs`).
    restarted: std::collections::HashSet<String>,
    step_cost: Option<f64>,
    /// Tokens per model from final results, `(session, model)` to the last values reported
    /// (results are cumulative per session): Claude Code's `modelUsage`, Gemini CLI's
    /// `stats.models`.
    result_models: BTreeMap<(String, String), ModelUse>,
    /// Tokens from final results that do not split them by model, the last per session
    /// (Claude Code's `usage`, Gemini CLI's `stats`, Goose's `complete`).
    result_usage: BTreeMap<String, tokens::Tokens>,
    /// Assistant messages' usage, each message once.
    messages: Messages,
    /// Codex's running total: the last `turn.completed.usage` or `token_count`.
    running_total: Option<tokens::Tokens>,
    /// Tokens reported piecewise, added: opencode's steps', pi's and Copilot CLI's messages'.
    steps: Option<tokens::Tokens>,
    /// pi's last assistant message's `stopReason` and `errorMessage`.
    pi_stop: Option<(String, String)>,
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
    /// The latest instant any event carries, heartbeats included.
    last_any: Option<Instant>,
    /// The earliest instant any event carries.
    first_any: Option<Instant>,
    /// The file a conversation was read from; for a total, the file being read.
    file: Option<String>,
    /// A new file begins: its first event starts a conversation.
    file_start: bool,
    counts: Counts,
    health: Option<Health>,
    /// The agent that wrote the log, its version, and the event kinds no rule knows.
    drift: Drift,
    /// The conversations of the log, one summary each (the last [`CONVERSATION_CAP`]); the
    /// summary itself is their total.
    parts: Vec<Summary>,
    /// Conversations before those kept.
    parts_dropped: u64,
    /// What the conversations before the current one add up to (a total of several).
    closed: Option<Closed>,
}

/// The sums of finished conversations that a total adds its current one to: a result's
/// `num_turns`, tokens and `duration_ms` count its own conversation only.
#[derive(Clone, Debug, Default)]
struct Closed {
    turns: Option<u64>,
    usage: Usage,
    /// Conversations whose tokens are a session's running total (Codex: a resumed thread's
    /// total counts its earlier runs): the last per session.
    running: BTreeMap<String, Usage>,
    duration_ms: Option<u64>,
}

/// Two counts that may be unknown, added: unknown only when both are.
fn plus(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        _ => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
    }
}

impl Closed {
    fn add(&mut self, part: &Summary) {
        self.turns = plus(self.turns, part.turns);
        match part.running_session() {
            Some(s) if self.running.len() < SESSION_CAP || self.running.contains_key(&s) => {
                self.running.insert(s, part.usage_in_total());
            }
            _ => self.usage.add(&part.usage_in_total()),
        }
        self.duration_ms = plus(self.duration_ms, part.duration_ms);
    }

    /// The closed conversations' usage, with `current` (whose running total replaces its
    /// session's).
    fn usage_with(&self, current: &Summary) -> Usage {
        let mut u = self.usage.clone();
        let mine = current.running_session();
        for (s, r) in &self.running {
            if mine.as_deref() != Some(s.as_str()) {
                u.add(r);
            }
        }
        u.add(&current.usage_in_total());
        u
    }
}

/// What an orchestrator acts on.
#[derive(Debug, Default)]
struct Counts {
    tool_failures: u64,
    api_retries: u64,
    last_retry_status: Option<i64>,
    refusals: u64,
    /// Messages retracted after a refusal (`retracted_message_uuids`).
    retracted: u64,
    permission_denials: u64,
    /// Denials listed by final results (Claude Code's `permission_denials`), per session.
    denials_in_results: BTreeMap<String, u64>,
    hook_failures: u64,
    startup_errors: u64,
    /// Failed calls' ids, so that a call reported failed twice (a Codex rollout's output and
    /// its item) counts once; past [`SESSION_CAP`] ids, failures count without one.
    failed_ids: HashSet<String>,
    /// Calls' ids (`tool_use`, Goose's `toolRequest`), so that a call a log repeats (a log
    /// appended to itself) counts once, as its failure does.
    call_ids: HashSet<String>,
    /// Error events' `uuid`s, so that an error event a log repeats counts once.
    error_ids: HashSet<String>,
    /// Antigravity's tool steps counted, so that a step updated while it runs and once done
    /// counts once; past [`SESSION_CAP`] ids, steps count when done.
    step_ids: HashSet<String>,
}

fn s(v: &Value, p: &str) -> Option<String> {
    v.pointer(p)
        .and_then(Value::as_str)
        .map(|x| clip(x, STRING_CAP))
}

fn n(v: &Value, p: &str) -> Option<u64> {
    v.pointer(p).and_then(Value::as_u64)
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
        self.file_start = true;
        for_each_line_in(f, limit, |line| {
            self.lines += 1;
            if wants(line) {
                self.add(line);
            }
            true
        })
    }
}

/// `--summary`: one pass over the selected events of every file, then one screen (text) or
/// one JSON object, within `--max-tokens`.
pub(crate) fn summarize<W: Write>(opts: &ViewOptions, mut out: W) -> Result<Vec<String>, Error> {
    let mut summary = Summary::default();
    let mut problems = Vec::new();
    for (k, path) in opts.files.iter().enumerate() {
        // Redacted before it is shortened: a name cut first would keep a part of a secret.
        // Standard input is `-`, as it was given, not the path of its private copy.
        let name = if crate::read::log::stdin::is_stdin(path) {
            "-".to_string()
        } else {
            crate::door::text(path.to_string_lossy().into_owned())
        };
        summary.file = Some(clip(&name, STRING_CAP));
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
    let conversations = summary.parts.len() as u64 + summary.parts_dropped;
    let table = opts.by_run
        || opts.format == Format::Csv
        || (opts.format == Format::Text && conversations > TABLE_AFTER as u64);
    let text = if table {
        summary.table_within(opts.format, opts.width.unwrap_or(80), budget)
    } else {
        summary.render_within(opts.format, budget)
    };
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|source| Error::WriteStdout { source })?;
    Ok(problems)
}

/// True the first time `id` comes: without an id always, and past [`FAILED_IDS_CAP`] ids in
/// `seen`, every time (the ids a log repeats are counted again rather than held without end).
fn first_time(seen: &mut HashSet<String>, id: Option<&str>) -> bool {
    let Some(id) = id else {
        return true;
    };
    if seen.contains(id) {
        return false;
    }
    if seen.len() < FAILED_IDS_CAP {
        seen.insert(id.to_string());
    }
    true
}

impl Counts {
    /// True the first time a call `id` comes (a call without one always; past
    /// [`FAILED_IDS_CAP`] ids, every call): a log appended to itself repeats its calls.
    fn new_call(&mut self, id: Option<&str>) -> bool {
        first_time(&mut self.call_ids, id)
    }

    /// Whether an error event with this `uuid` is new (true without one; past
    /// [`FAILED_IDS_CAP`] ids, every event): a log appended to itself repeats its errors.
    fn new_error(&mut self, id: Option<&str>) -> bool {
        first_time(&mut self.error_ids, id)
    }

    /// A failed call, once per id.
    fn failed_call(&mut self, id: Option<&str>) {
        if first_time(&mut self.failed_ids, id) {
            self.tool_failures += 1;
        }
    }

    /// True the first time a tool step `id` comes (a step without one comes once, when done;
    /// past [`SESSION_CAP`] ids, a step counts when `done`).
    pub(super) fn first_step(&mut self, id: Option<&str>, done: bool) -> bool {
        let Some(id) = id else {
            return true;
        };
        if self.step_ids.contains(id) {
            return false;
        }
        if self.step_ids.len() >= SESSION_CAP {
            return done;
        }
        self.step_ids.insert(id.to_string());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::collect::original_len;
    use super::*;
    use serde_json::json;

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
