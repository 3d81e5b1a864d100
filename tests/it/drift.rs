//! Format drift, said: `--stats` and `--stats-json` name the agent and its version and count
//! the event kinds smart-tee's readers do not know, as `--summary` does (one place, the same
//! answer); the tee says the first unknown kind once on stderr with `--stats`.

use crate::common;

use std::path::Path;

fn golden_input(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/golden")
            .join(name)
            .join("input.jsonl"),
    )
    .unwrap()
}

#[test]
fn stats_name_the_agent_and_count_unknown_kinds_as_the_summary_does() {
    let dir = common::tempdir("drift-stats");
    let (log, json) = (dir.join("run.jsonl"), dir.join("stats.json"));
    let input = golden_input("format-unknown-events");
    let out = common::run_cmd(
        common::bin()
            .arg("--stats")
            .arg("--stats-json")
            .arg(&json)
            .arg(&log),
        &input,
    );
    assert!(out.status.success());
    assert!(out.stdout == input);
    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let summary = common::run_cmd(
        common::bin()
            .args(["--summary", "--format", "json"])
            .arg(&log),
        b"",
    );
    let summary: serde_json::Value = serde_json::from_slice(&summary.stdout).unwrap();
    assert_eq!(stats["agent"], "claude-code");
    assert!(stats["agent_version"].is_string(), "{stats}");
    for key in ["agent", "agent_version", "unknown_events"] {
        assert_eq!(stats[key], summary[key], "{key}");
    }
    let unknown = stats["unknown_events"].as_object().unwrap();
    assert!(unknown.len() >= 2, "{stats}");
    assert!(unknown.values().all(|k| k["first_line"].as_u64() > Some(0)));
    // Said once while the stream runs, then in the summary at exit.
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.matches("is not known to smart-tee's readers").count(),
        1,
        "{err}"
    );
    assert!(err.contains("smart-tee: agent claude-code "), "{err}");
}

#[test]
fn without_stats_the_tee_says_nothing_of_drift() {
    let dir = common::tempdir("drift-quiet");
    let input = golden_input("format-unknown-events");
    let out = common::run_cmd(common::bin().arg(dir.join("run.jsonl")), &input);
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // --stats-json alone writes the counts without a word on stderr.
    let json = dir.join("stats.json");
    let out = common::run_cmd(common::bin().arg("--stats-json").arg(&json), &input);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(!stats["unknown_events"].as_object().unwrap().is_empty());
}

/// The version of a Codex rollout file is its `session_meta`'s `cli_version`.
#[test]
fn stats_name_a_codex_rollout_and_its_version() {
    let dir = common::tempdir("drift-codex");
    let json = dir.join("stats.json");
    let input = golden_input("format-codex-session");
    let out = common::run_cmd(common::bin().arg("--stats-json").arg(&json), &input);
    assert!(out.status.success());
    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(stats["agent"], "codex-rollout", "{stats}");
}
