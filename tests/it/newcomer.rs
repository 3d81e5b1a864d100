//! What a new user tripped on (#34): `--view` reading standard input, flags that were silently
//! ignored or refused, an empty summary of nothing, messages and units that said too little.

use crate::common::{self, bin, run_cmd};

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/agent-stream.jsonl");

fn sample() -> Vec<u8> {
    std::fs::read(SAMPLE).unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `--view -` and `--view` with no FILE on a pipe read standard input, as cat, jq and less do,
/// with `--tail` (which seeks) and `--summary` too; the same as reading the file.
#[test]
fn view_reads_standard_input_from_a_pipe_as_from_the_file() {
    let from_file = run_cmd(bin().args(["--view", "--tail", "3", SAMPLE]), b"");
    assert!(from_file.status.success());
    assert_eq!(text(&from_file.stdout).lines().count(), 3);
    for args in [
        &["--view", "--tail", "3", "-"][..],
        &["--view", "--tail", "3"],
    ] {
        let out = run_cmd(bin().args(args), &sample());
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), text(&from_file.stdout), "{args:?}");
    }
    // The copy of a piped input goes to TMPDIR and is removed at the end.
    let tmp = common::tempdir("newcomer-tmpdir");
    let summary = run_cmd(
        bin().args(["--view", "--summary", "-"]).env("TMPDIR", &tmp),
        &sample(),
    );
    assert!(text(&summary.stdout).contains("4d5611e5-241a-462a-8d15-5122611a9569"));
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
    // --follow cannot follow standard input: refused, saying why.
    let follow = run_cmd(bin().args(["--view", "--follow", "-"]), b"");
    assert_eq!(follow.status.code(), Some(2));
    assert!(text(&follow.stderr).contains("standard input"));
}

/// `--view --head 3 --tail 1` silently ignored `--tail`: now refused, naming both.
#[test]
fn head_with_tail_is_refused_not_ignored() {
    let out = run_cmd(
        bin().args(["--view", "--head", "3", "--tail", "1", SAMPLE]),
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("--head") && err.contains("--tail"), "{err}");
    assert!(out.stdout.is_empty());
}

/// `--summary` without `--view` was refused; it means `--view --summary`.
#[test]
fn summary_alone_implies_view() {
    let alone = run_cmd(bin().args(["--summary", SAMPLE]), b"");
    let with_view = run_cmd(bin().args(["--view", "--summary", SAMPLE]), b"");
    assert!(alone.status.success(), "{}", text(&alone.stderr));
    assert_eq!(alone.stdout, with_view.stdout);
    assert!(text(&alone.stdout).contains("claude-sonnet-4-5-20250929"));
    // The sample was read, not written: it is unchanged.
    assert_eq!(std::fs::read(SAMPLE).unwrap(), sample());
}

/// `--view --summary missing.jsonl` printed the error and then an empty summary.
#[test]
fn summary_of_files_that_cannot_be_read_prints_no_summary() {
    let dir = common::tempdir("newcomer-missing");
    let missing = dir.join("missing.jsonl");
    let out = run_cmd(bin().args(["--view", "--summary"]).arg(&missing), b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("missing.jsonl"));
    // With one readable file beside it, the summary is of that file, and the status still 1.
    let some = run_cmd(
        bin().args(["--view", "--summary", SAMPLE]).arg(&missing),
        b"",
    );
    assert_eq!(some.status.code(), Some(1));
    assert!(text(&some.stdout).contains("claude-sonnet-4-5-20250929"));
}

/// `--max-tokens 99` answered "not in 100..18446744073709551615".
#[test]
fn max_tokens_below_the_least_says_the_least() {
    let out = run_cmd(bin().args(["--view", "--max-tokens", "99", SAMPLE]), b"");
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("the least is 100 tokens"), "{err}");
    assert!(!err.contains("18446744073709551615"), "{err}");
}

/// `--stats` rounded to 0.1 MiB: "0.0 MiB saved" on the sample.
#[test]
fn stats_give_sizes_in_a_unit_that_shows_them() {
    let dir = common::tempdir("newcomer-stats");
    let out = run_cmd(bin().arg("--stats").arg(dir.join("a.log")), &sample());
    let err = text(&out.stderr);
    assert!(err.contains("KiB saved"), "{err}");
    assert!(!err.contains("0.0 MiB"), "{err}");
    let tiny = run_cmd(bin().arg("--stats").arg(dir.join("b.log")), b"{\"a\":1}\n");
    assert!(
        text(&tiny.stderr).contains("8 B in, 8 B logged, 0 B saved"),
        "{}",
        text(&tiny.stderr)
    );
}

/// `smart-tee mcp --help` and the server's instructions named four tools while the server
/// offered five (`read_original` was missing): every tool `tools/list` gives is named in both.
#[cfg(feature = "mcp")]
#[test]
fn mcp_help_and_instructions_name_every_tool() {
    let root = common::tempdir("newcomer-mcp-tools");
    let requests = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        "\n"
    );
    let out = run_cmd(
        bin().arg("mcp").arg("--root").arg(&root),
        requests.as_bytes(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let answers: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let answer = |id: i64| {
        answers
            .iter()
            .find(|a| a["id"] == id)
            .unwrap_or_else(|| panic!("no answer {id}: {answers:?}"))
    };
    let instructions = answer(1)["result"]["instructions"].as_str().unwrap();
    let tools = answer(2)["result"]["tools"].as_array().unwrap();
    assert!(tools.len() >= 5, "{tools:?}");
    let help = text(&run_cmd(bin().args(["mcp", "--help"]), b"").stdout);
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        assert!(help.contains(name), "mcp --help lacks {name}: {help}");
        assert!(instructions.contains(name), "instructions lack {name}");
    }
}

/// `--help` sent readers to "the README" for a list it does not hold, named a source file
/// (`html.rs`) as a format's meaning, and gave `--limit` a default of 0 (it reads the rest of
/// the line).
#[test]
fn help_points_at_what_a_user_has() {
    let help = text(&run_cmd(bin().arg("--help"), b"").stdout);
    assert!(!help.contains("README lists"), "{help}");
    assert!(!help.contains(".rs`"), "{help}");
    let limit = help.split("--limit <BYTES>").nth(1).unwrap();
    let limit = &limit[..limit.find("--view").unwrap()];
    assert!(!limit.contains("(default 0)"), "{limit}");
    // And with a limit, the page is that long; without, it is the rest of the line.
    let dir = common::tempdir("newcomer-limit");
    let log = dir.join("a.log");
    let archive = dir.join("a.log.orig.zst");
    let tee = run_cmd(bin().arg("--archive").arg(&archive).arg(&log), &sample());
    assert!(tee.status.success(), "{}", text(&tee.stderr));
    let original = |args: &[&str]| {
        let out = run_cmd(
            bin()
                .args(["--view", "--original", "--line", "6"])
                .args(args)
                .arg(&log),
            b"",
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        out.stdout.len()
    };
    let line6 = sample().split(|&b| b == b'\n').nth(5).unwrap().len();
    assert_eq!(original(&["--offset", "100"]), line6 - 100);
    assert_eq!(original(&["--limit", "50"]), 50);
}

/// JSON-RPC calls to `smart-tee mcp --root DIR` over its stdin: the answers, parsed.
#[cfg(feature = "mcp")]
fn mcp_calls(
    root: &std::path::Path,
    calls: &[(&str, serde_json::Value)],
) -> Vec<serde_json::Value> {
    let mut input = String::new();
    for (i, (tool, args)) in calls.iter().enumerate() {
        let req = serde_json::json!({"jsonrpc":"2.0","id":i + 1,"method":"tools/call","params":{"name":tool,"arguments":args}});
        input.push_str(&format!("{req}\n"));
    }
    let out = run_cmd(bin().arg("mcp").arg("--root").arg(root), input.as_bytes());
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// #50: MCP answers that said nothing. A misspelt argument (`errors` for `errors_only`,
/// `timeout_s`) was accepted and the whole log returned; a grep with no match returned 0
/// bytes; `list_logs` under a small budget returned no path at all.
#[cfg(feature = "mcp")]
#[test]
fn mcp_answers_say_what_they_did() {
    use serde_json::json;
    let dir = common::tempdir("newcomer-mcp-answers");
    std::fs::write(dir.join("a.jsonl"), sample()).unwrap();
    std::fs::write(dir.join("b.jsonl"), "{\"type\":\"system\"}\n").unwrap();
    let a = mcp_calls(
        &dir,
        &[
            ("read_log", json!({"path": "a.jsonl", "errors": true})),
            ("wait_for_log", json!({"path": "a.jsonl", "timeout_s": 1})),
            ("read_log", json!({"path": "a.jsonl", "bogus": 1})),
            (
                "read_log",
                json!({"path": "a.jsonl", "grep": "zzz-no-such-text"}),
            ),
            ("list_logs", json!({"max_tokens": 100})),
        ],
    );
    for (k, name) in [(0, "errors"), (1, "timeout_s"), (2, "bogus")] {
        let message = a[k]["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(&format!("{name:?}")), "{}", a[k]);
        assert!(message.contains("its arguments are"), "{}", a[k]);
    }
    assert!(
        a[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("errors_only")
    );
    let nothing = a[3]["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        nothing,
        "0 of 144 events matched grep \"zzz-no-such-text\"\n"
    );
    let listed: serde_json::Value =
        serde_json::from_str(a[4]["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(listed["logs"].as_array().unwrap().len(), 1, "{listed}");
    assert!(
        listed["logs"][0]["path"]
            .as_str()
            .unwrap()
            .ends_with(".jsonl")
    );
    assert_eq!(listed["left_out"], 1, "{listed}");
    // The schemas say so too.
    let out = run_cmd(
        bin().arg("mcp").arg("--root").arg(&*dir),
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n",
    );
    let tools: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for t in tools["result"]["tools"].as_array().unwrap() {
        assert_eq!(t["inputSchema"]["additionalProperties"], false, "{t}");
    }
}
