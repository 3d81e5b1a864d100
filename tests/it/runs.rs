//! Summaries of many runs (#48.4, #48.5): the total of several conversations or files, and
//! `--summary --by-run`'s table in text, JSON and CSV. The expected outputs are in
//! `tests/runs/` (regenerate with `SMART_TEE_BLESS=1`, then review `git diff tests/runs`).

use crate::common;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// `smart-tee ARGS` run in `dir`, its stdout (it must succeed).
fn run_in(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = common::run_cmd(common::bin().current_dir(dir).args(args), b"");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Compares `got` with `tests/runs/NAME`, or writes it there under `SMART_TEE_BLESS`.
fn golden(name: &str, got: &[u8]) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/runs")
        .join(name);
    if std::env::var_os("SMART_TEE_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (SMART_TEE_BLESS=1 creates it)", path.display()));
    assert!(
        want == got,
        "{}:\n--- expected\n{}\n--- got\n{}",
        path.display(),
        common::show(&want),
        common::show(got)
    );
}

/// One small Claude Code run: an init, an assistant message with a tool call, its result
/// (failed when `call_fails`), and a final `result` of `ending` (none when `None`).
fn claude_run(k: usize, ending: Option<(&str, bool)>, call_fails: bool) -> String {
    let sid = format!("00000000-0000-4000-8000-{k:012}");
    let t = |s: usize| {
        format!(
            "2026-11-{:02}T{:02}:{:02}:{:02}Z",
            1 + k / 4,
            8 + k % 4,
            s / 60,
            s % 60
        )
    };
    let mut lines = vec![
        json!({"type":"system","subtype":"init","session_id":sid,"model":"claude-sonnet-4-6",
            "claude_code_version":"2.1.80","timestamp":t(0)}),
        json!({"type":"assistant","session_id":sid,"timestamp":t(5),"message":{"id":format!("msg_{k}"),
            "model":"claude-sonnet-4-6","content":[{"type":"tool_use","id":format!("tu_{k}"),"name":"Bash","input":{"command":"ls"}}],
            "usage":{"input_tokens":10+k,"cache_read_input_tokens":1000,"cache_creation_input_tokens":100,"output_tokens":20}}}),
        json!({"type":"user","session_id":sid,"timestamp":t(9),"message":{"content":[{"type":"tool_result",
            "tool_use_id":format!("tu_{k}"),"is_error":call_fails,"content":"out"}]}}),
    ];
    if let Some((subtype, is_error)) = ending {
        lines.push(json!({"type":"result","subtype":subtype,"is_error":is_error,"session_id":sid,
            "timestamp":t(30 + k),"num_turns":2,"duration_ms":(30 + k) * 1000,"total_cost_usd":0.01 * (k as f64 + 1.0),
            "usage":{"input_tokens":10+k,"cache_read_input_tokens":1000,"cache_creation_input_tokens":100,"output_tokens":20},
            "result":"done"}));
    }
    lines.iter().map(|l| l.to_string() + "\n").collect()
}

/// Twelve runs in one log (appended one after another, as `-a` makes them), some failed
/// (`error_max_turns`, `is_error`), the last one without a final event; in start order but
/// for two, written out of order.
fn twelve_runs(dir: &Path) -> PathBuf {
    let mut log = String::new();
    for k in [0, 1, 2, 3, 5, 4, 6, 7, 8, 9, 10, 11] {
        let ending = match k {
            11 => None,
            3 | 7 => Some(("error_max_turns", true)),
            9 => Some(("success", true)),
            _ => Some(("success", false)),
        };
        log.push_str(&claude_run(k, ending, k % 5 == 2));
    }
    let path = dir.join("loop.jsonl");
    std::fs::write(&path, log).unwrap();
    path
}

fn samples(dir: &Path) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    std::fs::create_dir_all(dir.join("samples")).unwrap();
    for f in ["agent-stream.jsonl", "two-conversations.jsonl"] {
        std::fs::copy(root.join(f), dir.join("samples").join(f)).unwrap();
    }
}

#[test]
fn the_total_of_several_runs_says_how_they_ended_and_no_single_run() {
    let dir = common::tempdir("runs-total");
    samples(&dir);
    let text = run_in(
        &dir,
        &[
            "--summary",
            "samples/two-conversations.jsonl",
            "samples/agent-stream.jsonl",
        ],
    );
    golden("samples-summary.txt", &text);
    let text = String::from_utf8(text).unwrap();
    let total = &text[text.find("── total of 3 conversations").unwrap()..];
    assert!(
        total.contains("\nruns      3: 1 ok, 1 failed, 1 ended without a final event\n"),
        "{total}"
    );
    for single in ["\nstate ", "\nsession ", "\nended "] {
        assert!(
            !total.contains(single),
            "a total has no {single:?} line: {total}"
        );
    }
    // The earliest to the latest event, whichever file came first.
    assert!(
        total.contains("time      2026-02-12 16:02:48 → 2026-02-12 16:05:10"),
        "{total}"
    );
    assert!(
        total.contains("agents    claude-code 3 runs (100%)"),
        "{total}"
    );
    assert!(total.contains("claude-sonnet-4-6 2 runs (67%)"), "{total}");
    let json: Value = serde_json::from_slice(&run_in(
        &dir,
        &[
            "--summary",
            "--format",
            "json",
            "samples/two-conversations.jsonl",
            "samples/agent-stream.jsonl",
        ],
    ))
    .unwrap();
    assert_eq!(
        json["runs"],
        json!({"count":3,"ok":1,"failed":1,"ended_without_final_event":1,"exited_no_final_event":0,"running":0,"stalled":0})
    );
    assert_eq!(json["runs_by_agent"], json!({"claude-code": 3}));
    assert_eq!(json["first_event"], "2026-02-12 16:02:48");
    assert_eq!(
        json["conversations"][2]["file"],
        "samples/agent-stream.jsonl"
    );
}

#[test]
fn the_json_summary_lists_every_conversation_with_its_file() {
    let dir = common::tempdir("runs-every");
    let mut a = String::new();
    for k in 0..15 {
        a.push_str(&claude_run(k, Some(("success", false)), false));
    }
    std::fs::write(dir.join("a.jsonl"), a).unwrap();
    let mut b = String::new();
    for k in 15..25 {
        b.push_str(&claude_run(k, Some(("error_max_turns", true)), false));
    }
    std::fs::write(dir.join("b.jsonl"), b).unwrap();
    let v: Value = serde_json::from_slice(&run_in(
        &dir,
        &["--summary", "--format", "json", "a.jsonl", "b.jsonl"],
    ))
    .unwrap();
    assert_eq!(v["conversation_count"], 25);
    let all = v["conversations"].as_array().unwrap();
    assert_eq!(all.len(), 25);
    for (k, c) in all.iter().enumerate() {
        assert_eq!(c["file"], if k < 15 { "a.jsonl" } else { "b.jsonl" }, "{k}");
        assert_eq!(
            c["session_id"],
            format!("00000000-0000-4000-8000-{k:012}"),
            "{k}"
        );
    }
    assert_eq!(v["runs"]["ok"], 15);
    assert_eq!(v["runs"]["failed"], 10);
}

#[test]
fn by_run_gives_one_row_per_run_in_text_json_and_csv() {
    let dir = common::tempdir("runs-table");
    samples(&dir);
    twelve_runs(&dir);
    let by_run = ["--summary", "--by-run"];
    let on_samples = [
        "samples/agent-stream.jsonl",
        "samples/two-conversations.jsonl",
    ];
    for (name, format) in [("txt", "text"), ("json", "json"), ("csv", "csv")] {
        let mut args = by_run.to_vec();
        args.extend(["--format", format]);
        let mut s = args.clone();
        s.extend(on_samples);
        golden(&format!("samples-by-run.{name}"), &run_in(&dir, &s));
        args.push("loop.jsonl");
        golden(&format!("twelve-runs.{name}"), &run_in(&dir, &args));
    }
    // More than 10 conversations: the text summary is the table by itself.
    let default = run_in(&dir, &["--summary", "loop.jsonl"]);
    golden("twelve-runs.txt", &default);
    let text = String::from_utf8(default).unwrap();
    assert!(
        text.contains("\nruns 12: 8 ok, 3 failed, 1 ended without a final event\n"),
        "{text}"
    );
    // Sorted by start: run 4 (written after run 5) comes before it.
    let v: Value = serde_json::from_slice(&run_in(
        &dir,
        &["--summary", "--by-run", "--format", "json", "loop.jsonl"],
    ))
    .unwrap();
    let rows = v["runs"].as_array().unwrap();
    assert_eq!(rows.len(), 12);
    let ids: Vec<&str> = rows
        .iter()
        .map(|r| r["session_id"].as_str().unwrap())
        .collect();
    assert!(
        ids[4].ends_with("000000000004") && ids[5].ends_with("000000000005"),
        "{ids:?}"
    );
    assert_eq!(rows[3]["state"], "finished");
    assert_eq!(rows[3]["ok"], false);
    assert_eq!(rows[11]["state"], "ended without a final event");
    assert_eq!(v["total"]["tool_calls"], 12);
    assert_eq!(v["total"]["tool_failures"], 2);
}

/// `--format jsonl` printed the table as one JSON line, as `json` does. It gives a `run` line
/// for each row and a `total` line, each the JSON table's row with its `type` first; with
/// runs left out under `--max-tokens`, a `runs_left_out` line before the total. The
/// reference: the JSON table of the same runs.
#[test]
fn by_run_jsonl_gives_a_line_per_run_then_the_total() {
    let dir = common::tempdir("runs-jsonl");
    twelve_runs(&dir);
    let table = |format: &str, extra: &[&str]| {
        let mut args = vec!["--summary", "--by-run", "--format", format];
        args.extend(extra);
        args.push("loop.jsonl");
        run_in(&dir, &args)
    };
    let json: Value = serde_json::from_slice(&table("json", &[])).unwrap();
    let lines: Vec<Value> = common::lines(&table("jsonl", &[]))
        .iter()
        .map(|l| common::strict_parse(l).unwrap())
        .collect();
    let untyped = |v: &Value| {
        let mut v = v.clone();
        v.as_object_mut().unwrap().shift_remove("type");
        v
    };
    let rows = json["runs"].as_array().unwrap();
    assert_eq!(lines.len(), rows.len() + 1);
    for (line, row) in lines.iter().zip(rows) {
        assert_eq!(line["type"], "run");
        assert_eq!(&untyped(line), row);
    }
    assert_eq!(lines[rows.len()]["type"], "total");
    assert_eq!(untyped(&lines[rows.len()]), json["total"]);

    // Under a budget: the latest runs, how many were left out, the total.
    let cut = table("jsonl", &["--max-tokens", "1500"]);
    let lines: Vec<Value> = common::lines(&cut)
        .iter()
        .map(|l| common::strict_parse(l).unwrap())
        .collect();
    let shown = lines.iter().filter(|l| l["type"] == "run").count();
    assert!(shown > 0 && shown < 12, "{}", String::from_utf8_lossy(&cut));
    let left = &lines[lines.len() - 2];
    assert_eq!(left["type"], "runs_left_out");
    assert_eq!(left["runs_left_out"].as_u64(), Some(12 - shown as u64));
    assert_eq!(lines[lines.len() - 1]["type"], "total");

    // Where not even the total row fits (an audit: the count was inside the total line, and
    // no runs_left_out line said it): every run left out, then the run counts.
    for tokens in ["100", "150", "200"] {
        let brief = table("jsonl", &["--max-tokens", tokens]);
        let lines: Vec<Value> = common::lines(&brief)
            .iter()
            .map(|l| common::strict_parse(l).unwrap())
            .collect();
        assert!(!lines.is_empty(), "{tokens}");
        assert_eq!(lines[0]["type"], "runs_left_out", "{tokens}");
        assert_eq!(lines[0]["runs_left_out"].as_u64(), Some(12), "{tokens}");
        if let Some(total) = lines.get(1) {
            assert_eq!(total["type"], "total");
            assert_eq!(total["runs"]["count"].as_u64(), Some(12));
        }
    }
}

/// A minimal RFC 4180 reader: records of fields, quoted fields holding commas, doubled quotes
/// and line breaks.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let (mut records, mut record, mut field) = (Vec::new(), Vec::new(), String::new());
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\r') if chars.peek() == Some(&'\n') => {}
            (false, '\n') => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, c) => field.push(c),
        }
    }
    assert!(
        !quoted && field.is_empty() && record.is_empty(),
        "CSV ends mid-record"
    );
    records
}

#[test]
fn the_csv_table_parses_back_whatever_the_names_hold() {
    let dir = common::tempdir("runs-csv");
    let odd = "run, \"quoted\".jsonl";
    let mut log = claude_run(0, Some(("success", false)), false);
    // A model name with a comma, a quote and a line break.
    log = log.replace("claude-sonnet-4-6", "model, \\\"x\\\"\\nnext");
    log.push_str(&claude_run(1, Some(("error_max_turns", true)), true));
    std::fs::write(dir.join(odd), log).unwrap();
    let out = run_in(&dir, &["--summary", "--format", "csv", odd]);
    let text = String::from_utf8(out).unwrap();
    let records = parse_csv(&text);
    assert_eq!(records.len(), 4, "{text}");
    let head = &records[0];
    assert_eq!(head[0], "file");
    assert!(records.iter().all(|r| r.len() == head.len()), "{records:?}");
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    assert_eq!(records[1][col("file")], odd);
    assert_eq!(records[2][col("file")], odd);
    assert!(
        records[1][col("model")].starts_with("model, \"x\""),
        "{records:?}"
    );
    assert_eq!(records[2][col("ok")], "false");
    assert_eq!(records[3][col("file")], "total");
    assert_eq!(records[3][col("tool_failures")], "1");
}

#[test]
fn the_text_table_fits_80_columns_when_not_on_a_terminal() {
    let dir = common::tempdir("runs-width");
    let long = format!("{}.jsonl", "a-very-long-log-name-".repeat(5));
    let mut log = String::new();
    for k in 0..12 {
        log.push_str(&claude_run(k, Some(("success", false)), false));
    }
    std::fs::write(
        dir.join(&long),
        log.replace("claude-sonnet-4-6", &"m".repeat(90)),
    )
    .unwrap();
    samples(&dir);
    for args in [
        vec!["--summary", long.as_str()],
        vec![
            "--summary",
            "--by-run",
            long.as_str(),
            "samples/agent-stream.jsonl",
        ],
        vec!["--summary", "--by-run", "samples/two-conversations.jsonl"],
    ] {
        let text = String::from_utf8(run_in(&dir, &args)).unwrap();
        assert!(text.lines().count() >= 3, "{text}");
        for line in text.lines() {
            assert!(
                line.chars().count() <= 80,
                "{} columns: {line}",
                line.chars().count()
            );
        }
    }
}

/// Found by the read side's attack (#49): the table of runs held its total row whatever
/// `--max-tokens` said, so JSON and CSV (wide rows), and text under a small `--bytes-per-token`,
/// went over the budget (698 bytes for 300). The briefest form that fits is given instead.
#[test]
fn the_table_of_runs_fits_its_budget_in_every_format() {
    let log = "tests/data/real/marot__spotter__8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl";
    for format in ["json", "jsonl", "csv", "text"] {
        for (tokens, per) in [("100", "3"), ("230", "3"), ("100", "1"), ("110", "1")] {
            let mut cmd = common::bin();
            cmd.args(["--view", "--summary", "--by-run", "--format", format])
                .args(["--max-tokens", tokens, "--bytes-per-token", per, log]);
            let out = common::run_cmd(&mut cmd, b"");
            assert!(out.status.success(), "{format} {tokens}x{per}");
            let budget: usize = tokens.parse::<usize>().unwrap() * per.parse::<usize>().unwrap();
            assert!(
                out.stdout.len() <= budget,
                "{format} {tokens}x{per}: {} bytes\n{}",
                out.stdout.len(),
                String::from_utf8_lossy(&out.stdout)
            );
            if format == "json" && !out.stdout.is_empty() {
                let v: Value = serde_json::from_slice(&out.stdout).unwrap();
                assert_eq!(v["type"], "runs", "{format} {tokens}x{per}");
            }
        }
    }
}

/// Found by the audit (#49): under `--max-tokens` the CSV table left the earliest runs out
/// without saying so (JSON says `runs_left_out`, text a line). A `left out` row before the
/// total gives their number, so the rows shown, the left out and the total's count agree.
#[test]
fn a_csv_table_says_how_many_runs_it_left_out() {
    let dir = common::tempdir("runs-csv-left-out");
    let log = dir.join("runs.jsonl");
    let runs: String = (0..12)
        .map(|k| claude_run(k, Some(("success", false)), false))
        .collect();
    std::fs::write(&log, runs).unwrap();
    let table = |tokens: &str| {
        let mut cmd = common::bin();
        cmd.args([
            "--summary",
            "--by-run",
            "--format",
            "csv",
            "--max-tokens",
            tokens,
        ])
        .arg(&log);
        let out = common::run_cmd(&mut cmd, b"");
        assert!(out.status.success(), "{}", common::stderr(&out));
        String::from_utf8(out.stdout).unwrap()
    };
    let whole = table("100000");
    assert_eq!(whole.lines().count(), 1 + 12 + 1, "{whole}");
    assert!(!whole.contains("left out"), "{whole}");
    for tokens in ["300", "500", "800"] {
        let csv = table(tokens);
        let rows: Vec<&str> = csv.lines().skip(1).collect();
        let cell = |row: &str, k: usize| row.split(',').nth(k).unwrap().to_owned();
        let (total, rest) = rows.split_last().unwrap();
        assert_eq!(cell(total, 0), "total", "{csv}");
        assert_eq!(cell(total, 1), "12", "{csv}");
        let (left, shown) = rest.split_last().unwrap();
        assert_eq!(cell(left, 0), "left out", "{tokens}: {csv}");
        let n: usize = cell(left, 1).parse().unwrap();
        assert_eq!(n + shown.len(), 12, "{tokens}: {csv}");
        assert!(left.split(',').count() == total.split(',').count(), "{csv}");
    }
}

/// Found by a new user (#49): `--summary` of a file that is no agent's stream gave a plausible
/// summary (`events 0`, or two `{"a":1}` lines read as Claude Code's). It says how many lines
/// are not JSON, that a file of nothing else is no agent's stream, and names no agent for
/// events without a type.
#[test]
fn a_summary_of_a_file_that_is_no_agents_stream_says_so() {
    let dir = common::tempdir("runs-not-an-agent");
    let text = dir.join("notes.txt");
    std::fs::write(&text, "hello\nworld\n=== not json ===\n").unwrap();
    let untyped = dir.join("untyped.jsonl");
    std::fs::write(&untyped, "{\"a\":1}\n{\"b\":2}\n").unwrap();
    let said = String::from_utf8(run_in(&dir, &["--summary", "notes.txt"])).unwrap();
    assert!(
        said.contains("3 lines not JSON: not an agent's stream"),
        "{said}"
    );
    let v: Value = serde_json::from_slice(&run_in(
        &dir,
        &["--summary", "--format", "json", "notes.txt"],
    ))
    .unwrap();
    assert_eq!(v["lines_not_json"], 3, "{v}");
    assert_eq!(v["events"], 0, "{v}");
    let v: Value = serde_json::from_slice(&run_in(
        &dir,
        &["--summary", "--format", "json", "untyped.jsonl"],
    ))
    .unwrap();
    assert_eq!(v["agent"], Value::Null, "{v}");
    assert_eq!(v["lines_not_json"], 0, "{v}");
    // A real stream names its agent and has no such line.
    let said = String::from_utf8(run_in(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &["--summary", "samples/agent-stream.jsonl"],
    ))
    .unwrap();
    assert!(said.contains("agent     claude-code"), "{said}");
    assert!(!said.contains("not JSON"), "{said}");
}
