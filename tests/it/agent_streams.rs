//! The agents that write JSON on stdout beyond Claude Code, Codex, Gemini CLI, opencode, Cursor
//! and Goose: pi, Amp, droid, Copilot CLI, Qwen Code, Kimi CLI and Antigravity. Each one's
//! stream of 50 events or more (tests/golden/format-*, written from the tool's schema) goes
//! through the tee (`--stats`: the agent named, no kind unknown), `--view` (a gist per event,
//! no raw JSON), `--summary` (the run's ending, failures and tokens; a count the format does not
//! give is null) and the report (calls paired to their results). The MCP server's `read_log`
//! of them is in tests/it/mcp.rs.

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Each fixture, the agent `--stats` names, and its version when its stream gives one.
pub const AGENTS: [(&str, &str, Option<&str>); 8] = [
    ("format-pi", "pi", None),
    ("format-pi-old-updates", "pi", None),
    ("format-amp", "amp", None),
    ("format-droid", "droid", None),
    ("format-copilot", "copilot-cli", Some("0.0.361")),
    ("format-qwen", "qwen-code", Some("0.2.3")),
    ("format-kimi", "kimi-cli", None),
    ("format-antigravity", "antigravity", Some("1.1.8")),
];

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
        .join("input.jsonl")
}

/// The fixture logged at the default budget, with `--stats-json`: the log and the stats.
fn logged(dir: &Path, name: &str) -> (PathBuf, Value) {
    logged_with(dir, name, &[])
}

fn logged_with(dir: &Path, name: &str, args: &[&str]) -> (PathBuf, Value) {
    let input = std::fs::read(fixture(name)).unwrap();
    let (log, stats) = (
        dir.join(format!("{name}.jsonl")),
        dir.join(format!("{name}.stats")),
    );
    let out = common::run_cmd(
        common::bin()
            .args(args)
            .arg("--stats")
            .arg("--stats-json")
            .arg(&stats)
            .arg(&log),
        &input,
    );
    assert!(out.status.success(), "{name}");
    assert!(out.stdout == input, "{name}: stdout is the input");
    let stats = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    (log, stats)
}

fn run(args: &[&str], log: &Path) -> String {
    let out = common::run_cmd(common::bin().args(args).arg(log), b"");
    assert!(out.status.success(), "{args:?} {}", log.display());
    String::from_utf8(out.stdout).unwrap()
}

/// True when a line of text holds a piece of JSON: a member (`"key":`) or an object opened on
/// a quoted key.
fn has_raw_json(line: &str) -> bool {
    line.contains("\":") || line.contains("{\"") || line.contains("[{")
}

#[test]
fn each_agent_is_named_and_no_kind_of_its_stream_is_unknown() {
    let dir = common::tempdir("agent-streams-stats");
    for (name, agent, version) in AGENTS {
        let (_, stats) = logged(&dir, name);
        assert_eq!(stats["agent"], agent, "{name}: {stats}");
        if let Some(v) = version {
            assert_eq!(stats["agent_version"], v, "{name}");
        }
        let unknown = stats["unknown_events"].as_object();
        assert!(unknown.is_none_or(|u| u.is_empty()), "{name}: {stats}");
    }
}

#[test]
fn each_stream_of_fifty_events_reads_as_gists_without_raw_json() {
    let dir = common::tempdir("agent-streams-view");
    for (name, _, _) in AGENTS {
        let (log, _) = logged(&dir, name);
        let view = run(&["--view"], &log);
        let lines: Vec<&str> = view.lines().collect();
        assert!(lines.len() >= 50, "{name}: {} events", lines.len());
        for line in &lines {
            assert!(!has_raw_json(line), "{name}: raw JSON in the view: {line}");
            // Every event says what it is beyond its number.
            assert!(line.split_whitespace().count() >= 2, "{name}: {line}");
        }
        // The tool calls show with their names and arguments.
        assert!(
            view.contains("python -m pytest -q"),
            "{name}: the test command is in a gist"
        );
    }
}

#[test]
fn each_summary_says_how_each_run_ended_and_what_it_used() {
    let dir = common::tempdir("agent-streams-summary");
    for (name, agent, _) in AGENTS {
        let (log, _) = logged(&dir, name);
        let s: Value =
            serde_json::from_str(&run(&["--summary", "--format", "json"], &log)).unwrap();
        let runs = s["conversations"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| vec![s.clone()]);
        assert_eq!(s["agent"], agent, "{name}");
        let last = runs.last().unwrap();
        if agent == "kimi-cli" {
            // No final event in the format: not died, not free.
            assert_eq!(
                last["state"], "exited; the format has no final event",
                "{name}"
            );
            assert_eq!(last["cost_usd"], Value::Null, "{name}");
            assert_eq!(last["input_tokens"], Value::Null, "{name}");
            assert_eq!(last["output_tokens"], Value::Null, "{name}");
            let text = run(&["--summary"], &log);
            assert!(text.contains("the format has no final event"), "{text}");
            assert!(!text.contains("ended without a final event"), "{text}");
            continue;
        }
        assert!(runs.len() >= 2, "{name}: {} runs", runs.len());
        // Each fixture's last run fails, the others finish ok.
        for (k, r) in runs.iter().enumerate() {
            assert_eq!(r["state"], "finished", "{name} #{k}");
            assert_eq!(r["ok"], k + 1 < runs.len(), "{name} #{k}: {r}");
            assert!(r["tool_failures"].as_u64() >= Some(1), "{name} #{k}");
            assert!(r["tool_calls"].as_u64() >= Some(2), "{name} #{k}");
            if r["ok"] == true {
                assert!(r["output_tokens"].as_u64() > Some(0), "{name} #{k}");
            }
        }
        if agent == "droid" {
            // A run that ends with `turn.failed` reports no usage: unknown, not 0.
            assert_eq!(last["output_tokens"], Value::Null, "{name}");
        }
        if agent == "copilot-cli" {
            // Copilot CLI gives output tokens only: the input is unknown, not 0.
            assert_eq!(last["input_tokens"], Value::Null, "{name}");
            assert_eq!(last["total_input_tokens"], Value::Null, "{name}");
        }
        if agent == "pi" {
            // pi reports its cost: not an estimate.
            assert_eq!(last["cost_estimated"], false, "{name}");
            assert!(last["cost_usd"].as_f64() > Some(0.0), "{name}");
        }
    }
}

#[test]
fn each_report_pairs_calls_with_their_results() {
    let dir = common::tempdir("agent-streams-report");
    for (name, _, _) in AGENTS {
        let (log, _) = logged(&dir, name);
        let page = run(&["--view", "--format", "html"], &log);
        assert!(
            page.contains("→ result #"),
            "{name}: no call paired to its result"
        );
        assert!(
            page.contains("↳ call #"),
            "{name}: no result paired to its call"
        );
        if name != "format-kimi" {
            // A failed result marks its call.
            assert!(
                page.contains("class=\"bad\">→ result #"),
                "{name}: no failed call marked"
            );
        }
    }
}

/// Kimi CLI's runs have no start and no final event: one appended after a pi run was read as
/// more of it (pi's failed ending became "ended without a final event", its calls 26), and a
/// pi or Claude Code run after a Kimi run was counted as the Kimi run's (Kimi "finished", with
/// pi's tokens and cost).
#[test]
fn a_kimi_run_beside_another_agents_run_is_a_conversation_of_its_own() {
    let dir = common::tempdir("agent-streams-kimi-beside");
    let read = |names: &[&str]| -> Value {
        let mut all = Vec::new();
        for n in names {
            all.extend(std::fs::read(fixture(n)).unwrap());
        }
        let file = dir.join(format!("{}.jsonl", names.join("+")));
        std::fs::write(&file, all).unwrap();
        serde_json::from_str(&run(&["--summary", "--format", "json"], &file)).unwrap()
    };
    let agents = |s: &Value| -> Vec<String> {
        s["conversations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["agent"].as_str().unwrap().to_string())
            .collect()
    };
    let exited = "exited; the format has no final event";
    let s = read(&["format-pi", "format-kimi"]);
    assert_eq!(agents(&s), ["pi", "pi", "kimi-cli"], "{s}");
    let runs = s["conversations"].as_array().unwrap();
    assert_eq!(runs[1]["state"], "finished", "{s}");
    assert_eq!(runs[1]["ok"], false, "{s}");
    assert_eq!(runs[1]["tool_calls"], 2, "{s}");
    assert_eq!(runs[2]["state"], exited, "{s}");
    assert_eq!(runs[2]["tool_calls"], 24, "{s}");
    // The log's run is its last: Kimi's, which exited, not one that died.
    assert_eq!(s["state"], exited, "{s}");
    for first in ["format-pi", "format-claude-runs-between-text"] {
        let s = read(&["format-kimi", first]);
        let runs = s["conversations"].as_array().unwrap();
        assert_eq!(runs[0]["agent"], "kimi-cli", "{s}");
        assert_eq!(runs[0]["state"], exited, "{s}");
        assert_eq!(runs[0]["cost_usd"], Value::Null, "{s}");
        assert_eq!(runs[0]["output_tokens"], Value::Null, "{s}");
        assert!(runs[1..].iter().all(|r| r["agent"] != "kimi-cli"), "{s}");
    }
}

/// An Antigravity run that died with a tool step running had made that call: it counted no
/// call (steps counted when done only), where every other agent's call counts when it opens.
#[test]
fn an_antigravity_step_still_running_when_the_run_died_is_a_call() {
    let dir = common::tempdir("agent-streams-antigravity-running");
    let file = dir.join("died.jsonl");
    let step = |status: &str| {
        format!(
            r#"{{"event":"step_update","step_id":"t0","step_type":"TOOL_CALL","status":"{status}","tool_info":{{"name":"run_command","parameters":{{"command":"make"}}}}}}"#
        )
    };
    let init = r#"{"event":"init","conversation_id":"c","model":"gemini-3.1-pro-preview"}"#;
    std::fs::write(&file, format!("{init}\n{}\n", step("RUNNING"))).unwrap();
    let s: Value = serde_json::from_str(&run(&["--summary", "--format", "json"], &file)).unwrap();
    assert_eq!(s["tool_calls"], 1, "{s}");
    assert_eq!(s["state"], "ended without a final event", "{s}");
    // Its update when done is the same call.
    let (done, failed) = (step("DONE"), step("ERROR"));
    std::fs::write(
        &file,
        format!("{init}\n{}\n{done}\n{failed}\n", step("RUNNING")),
    )
    .unwrap();
    let s: Value = serde_json::from_str(&run(&["--summary", "--format", "json"], &file)).unwrap();
    assert_eq!(s["tool_calls"], 1, "{s}");
}

/// A Kimi message whose `tool_calls` the tee cut counted the calls left in the log, and its
/// cut marker as one more: the summary of the log must count the calls the stream made.
#[test]
fn a_kimi_message_with_its_tool_calls_cut_counts_every_call() {
    let dir = common::tempdir("agent-streams-kimi-cut-calls");
    let calls: Vec<Value> = (0..5000)
        .map(|i| {
            serde_json::json!({"type": "function", "id": format!("tc_{i}"),
                "function": {"name": "Shell", "arguments": "{\"command\": \"ls\"}"}})
        })
        .collect();
    let line = serde_json::json!({"role": "assistant", "content": "many", "tool_calls": calls});
    let input = format!("{line}\n");
    let log = dir.join("kimi.jsonl");
    let out = common::run_cmd(
        common::bin().args(["-b", "1024"]).arg(&log),
        input.as_bytes(),
    );
    assert!(out.status.success());
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.len() <= 1025, "{} bytes", logged.len());
    for file in [&log, &dir.join("input.jsonl")] {
        if file != &log {
            std::fs::write(file, &input).unwrap();
        }
        let s: Value =
            serde_json::from_str(&run(&["--summary", "--format", "json"], file)).unwrap();
        assert_eq!(s["tool_calls"], 5000, "{}: {s}", file.display());
    }
}

/// A total of several pi runs reports the cost its runs report, summed: it said none (null in
/// JSON, an estimate of nothing in text) while each run said its own.
#[test]
fn a_total_of_pi_runs_reports_their_summed_cost() {
    let dir = common::tempdir("agent-streams-pi-cost");
    for name in ["format-pi", "format-pi-old-updates"] {
        let (log, _) = logged(&dir, name);
        let s: Value =
            serde_json::from_str(&run(&["--summary", "--format", "json"], &log)).unwrap();
        let runs = s["conversations"].as_array().unwrap();
        let summed: f64 = runs
            .iter()
            .map(|r| r["cost_reported_usd"].as_f64().unwrap())
            .sum();
        let total = s["cost_reported_usd"].as_f64();
        assert!(
            total.is_some_and(|t| (t - summed).abs() < 1e-9),
            "{name}: total {total:?}, runs {summed}"
        );
        assert_eq!(s["cost_usd"], s["cost_reported_usd"], "{name}");
        assert_eq!(s["cost_estimated"], false, "{name}");
    }
}

/// The copies pi repeats give way before anything else: `turn_end.message`,
/// `agent_end.messages`, and an old `message_update`'s snapshot, whose delta and usage stay.
#[test]
fn pi_copies_give_way_and_an_old_update_keeps_its_delta_and_usage() {
    let dir = common::tempdir("agent-streams-pi");
    let (log, _) = logged_with(&dir, "format-pi-old-updates", &["-b", "1024"]);
    let text = std::fs::read_to_string(&log).unwrap();
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let input = std::fs::read_to_string(fixture("format-pi-old-updates")).unwrap();
    let originals: Vec<Value> = input
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut cut_updates = 0;
    for (e, o) in events.iter().zip(&originals) {
        if e == o {
            continue;
        }
        match e["type"].as_str().unwrap() {
            "message_update" => {
                cut_updates += 1;
                // The delta is the news: kept whole, as is the usage.
                assert_eq!(
                    e["assistantMessageEvent"]["delta"], o["assistantMessageEvent"]["delta"],
                    "{e}"
                );
                if o["message"]["usage"].is_object() && e["message"].is_object() {
                    assert_eq!(e["message"]["usage"], o["message"]["usage"]);
                }
            }
            "turn_end" | "agent_end" | "message_end" | "tool_execution_end" | "message_start" => {}
            other => panic!("{other} was cut before the copies: {e}"),
        }
    }
    assert!(cut_updates > 0, "no old update was cut");
    // Every copy gave way before the message_end that logged the message first.
    let (log, _) = logged_with(&dir, "format-pi", &["-b", "1024"]);
    let text = std::fs::read_to_string(&log).unwrap();
    let agent_end = text.lines().find(|l| l.contains("\"agent_end\"")).unwrap();
    assert!(agent_end.contains("TRUNCATED"), "{agent_end}");
}

/// An old pi `message_update` repeats the whole message so far: cut, its snapshot keeps the
/// newest text (its tail) and its usage, and the update's delta stays whole; the same message
/// in its `message_end` keeps its head and tail as any text does.
#[test]
fn an_old_pi_update_keeps_the_tail_of_its_snapshot() {
    let text: String = (0..20_000).map(|i| format!("w{i} ")).collect();
    let message = serde_json::json!({"role":"assistant","content":[{"type":"text","text":text}],
        "model":"claude-sonnet-4-5","stopReason":"stop",
        "usage":{"input":10,"output":5000,"cacheRead":0,"cacheWrite":0,"totalTokens":5010,"cost":{"total":0.07}}});
    let update = serde_json::json!({"type":"message_update","message":message,
        "assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"w19999 ","partial":message}});
    let end = serde_json::json!({"type":"message_end","message":message});
    let input = format!("{update}\n{end}\n");
    let dir = common::tempdir("agent-streams-snapshot");
    let log = dir.join("pi.jsonl");
    let out = common::run_cmd(common::bin().arg(&log), input.as_bytes());
    assert!(out.status.success());
    let logged = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<Value> = logged
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kept = |v: &Value| {
        v["message"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let snapshot = kept(&lines[0]);
    assert!(snapshot.starts_with("[TRUNCATED: "), "{snapshot:.80}");
    assert!(snapshot.ends_with("w19998 w19999 "), "{snapshot:.80}");
    assert_eq!(lines[0]["message"]["usage"], message["usage"]);
    assert_eq!(lines[0]["assistantMessageEvent"]["delta"], "w19999 ");
    let whole = kept(&lines[1]);
    assert!(whole.starts_with("w0 w1 "), "{whole:.80}");
    assert!(whole.ends_with("w19999 "), "{whole:.80}");
}
