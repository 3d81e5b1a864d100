//! Cost (#48.2): a log that reports its cost keeps it; one that reports none is estimated from
//! a price table (the shipped one, or `--prices FILE`), marked as an estimate; a model the
//! table lacks is named and not priced.

use crate::common;

use serde_json::Value;
use std::path::{Path, PathBuf};

fn real(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/real")
        .join(name)
}

/// `smart-tee --summary ARGS --format json`, parsed (it must succeed).
fn summary_json(args: &[&std::ffi::OsStr]) -> Value {
    let out = common::run_cmd(
        common::bin()
            .args(["--summary", "--format", "json"])
            .args(args),
        b"",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

const TRANSCRIPT: &str = "marot__spotter__agent-a2898e3.jsonl";

#[test]
fn a_transcript_is_estimated_and_says_so() {
    let s = summary_json(&[real(TRANSCRIPT).as_os_str()]);
    assert_eq!(s["model"], "claude-sonnet-4-5-20250929");
    assert_eq!(s["cost_estimated"], true);
    assert_eq!(s["cost_reported_usd"], Value::Null);
    assert!(s["prices_date"].as_str().is_some_and(|d| d.len() == 10));
    assert!(s["cost_usd"].as_f64().unwrap() > 0.0);
}

/// The summary of the transcript under `--prices` a table of $1 per million tokens of every
/// kind (written in `dir`): the cost is the tokens' count in millions.
fn transcript_at_a_dollar_a_million(dir: &Path) -> Value {
    let table = dir.join("ones.json");
    std::fs::write(
        &table,
        r#"{"date":"2030-01-01","source":"a test","models":{"claude-sonnet-4-5":
            {"input":1,"output":1,"cache_read":1,"cache_write":1}}}"#,
    )
    .unwrap();
    summary_json(&[
        "--prices".as_ref(),
        table.as_os_str(),
        real(TRANSCRIPT).as_os_str(),
    ])
}

#[test]
fn a_price_table_of_ones_own_changes_the_estimate() {
    let dir = common::tempdir("prices");
    let s = transcript_at_a_dollar_a_million(&dir);
    assert_eq!(s["prices_date"], "2030-01-01");
    let tokens = s["total_tokens"].as_u64().unwrap() as f64;
    assert!((s["cost_usd"].as_f64().unwrap() - tokens / 1e6).abs() < 1e-9);
    let text = common::run_cmd(
        common::bin()
            .args(["--summary", "--prices"])
            .arg(dir.join("ones.json"))
            .arg(real(TRANSCRIPT)),
        b"",
    );
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(&format!(
            "cost      ~${:.4} (estimated, prices of 2030-01-01)\n",
            tokens / 1e6
        )),
        "{text}"
    );
}

#[test]
fn a_model_not_in_the_table_is_named_and_not_priced() {
    let dir = common::tempdir("prices-unknown");
    let table = dir.as_path().join("other.json");
    std::fs::write(
        &table,
        r#"{"date":"2030-01-01","models":{"gpt-5":{"input":1,"output":1}}}"#,
    )
    .unwrap();
    let path = real(TRANSCRIPT);
    let s = summary_json(&["--prices".as_ref(), table.as_os_str(), path.as_os_str()]);
    assert_eq!(s["cost_usd"], Value::Null);
    assert_eq!(s["cost_estimated"], false);
    assert_eq!(s["unpriced_models"][0], "claude-sonnet-4-5-20250929");
    let out = common::run_cmd(
        common::bin()
            .args(["--summary", "--prices"])
            .arg(&table)
            .arg(&path),
        b"",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("cost      – (no price for model claude-sonnet-4-5-20250929)\n"),
        "{text}"
    );
}

#[test]
fn a_bad_price_table_is_refused_with_its_path_and_cause() {
    let dir = common::tempdir("prices-bad");
    let table = dir.as_path().join("broken.json");
    std::fs::write(
        &table,
        r#"{"date":"2030-01-01","models":{"m":{"input":1}}}"#,
    )
    .unwrap();
    for (file, cause) in [
        (table.clone(), "has no \"output\" price"),
        (dir.as_path().join("missing.json"), "No such file"),
    ] {
        let out = common::run_cmd(
            common::bin()
                .args(["--summary", "--prices"])
                .arg(&file)
                .arg(real(TRANSCRIPT)),
            b"",
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{err}");
        assert!(err.contains(&format!("--prices {file:?}")), "{err}");
        assert!(err.contains(cause), "{err}");
    }
}

/// Each model says its cost as the run does: the one reported for it (`modelUsage`'s
/// `costUSD`), else its estimate, marked so. A transcript's model said `null` beside the run's
/// estimate (#49). The reference: a table of $1 a million tokens of each kind, so the estimate
/// is the model's tokens counted here, in millions.
#[test]
fn each_model_says_its_cost_reported_or_estimated() {
    let dir = common::tempdir("model-costs");
    let s = transcript_at_a_dollar_a_million(&dir);
    let m = &s["models"]["claude-sonnet-4-5-20250929"];
    let tokens: u64 = [
        "input_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
        "output_tokens",
    ]
    .iter()
    .map(|k| m[k].as_u64().unwrap())
    .sum();
    assert_eq!(m["cost_estimated"], true, "{m}");
    assert_eq!(m["cost_usd"].as_f64(), Some(tokens as f64 / 1e6), "{m}");
    assert_eq!(m["cost_usd"], s["cost_usd"]);

    let reported = dir.as_path().join("reported.jsonl");
    std::fs::write(
        &reported,
        concat!(
            r#"{"type":"result","subtype":"success","session_id":"s","total_cost_usd":0.75,"#,
            r#""usage":{"input_tokens":10,"output_tokens":20},"modelUsage":{"#,
            r#""claude-sonnet-4-5":{"inputTokens":10,"outputTokens":20,"costUSD":0.5},"#,
            r#""claude-haiku-4-5":{"inputTokens":1,"outputTokens":2,"costUSD":0.25}}}"#,
            "\n"
        ),
    )
    .unwrap();
    let s = summary_json(&[reported.as_os_str()]);
    for (model, cost) in [("claude-sonnet-4-5", 0.5), ("claude-haiku-4-5", 0.25)] {
        let m = &s["models"][model];
        assert_eq!(m["cost_estimated"], false, "{s}");
        assert_eq!(m["cost_usd"].as_f64(), Some(cost), "{s}");
    }

    // A run of one model that reports its cost but not by model: the model's is the run's,
    // not an estimate beside it (a new user's `run --summary-json`: 0.01 and 0.00045).
    let s =
        summary_json(&[real("charlieyou__claude-agent-sdk-gleam__basic_query.jsonl").as_os_str()]);
    let m = &s["models"]["claude-opus-4-5-20251101"];
    assert_eq!(m["cost_estimated"], false, "{s}");
    assert_eq!(m["cost_usd"], s["cost_reported_usd"], "{s}");
}

/// Found by a new user (#49), who bills by these: runs appended to one file cost what they
/// cost apart. A transcript appended after a stream's result was taken into the finished run
/// (3 runs read as 2, the total $0.036 for $0.487). The reference: the files summed apart.
#[test]
fn runs_appended_to_one_file_cost_what_they_cost_apart() {
    let dir = common::tempdir("appended-runs");
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let (stream, transcript) = (
        samples.join("two-conversations.jsonl"),
        samples.join("agent-stream.jsonl"),
    );
    let appended = dir.as_path().join("appended.jsonl");
    let mut both = std::fs::read(&stream).unwrap();
    both.extend(std::fs::read(&transcript).unwrap());
    std::fs::write(&appended, both).unwrap();
    let apart = summary_json(&[stream.as_os_str(), transcript.as_os_str()]);
    let one = summary_json(&[appended.as_os_str()]);
    assert_eq!(
        one["conversations"].as_array().map(Vec::len),
        Some(3),
        "{one}"
    );
    for field in [
        "cost_usd",
        "cost_reported_usd",
        "cost_estimated",
        "total_input_tokens",
    ] {
        assert_eq!(one[field], apart[field], "{field}");
    }
}

/// A session started again (an init) is the same process when Claude Code reads stream-json
/// input (an init at each user message, its `total_cost_usd` still cumulative) or a new one
/// (`--resume`), which counts from nothing: a next report below the last tells the second,
/// and both processes are billed. The audit of the first rule (every init a new process)
/// billed 0.1 + 0.25 for a process of two turns that cost 0.25; the rule before it billed a
/// resumed session only for its last process.
#[test]
fn a_session_started_again_is_billed_for_each_process_and_a_turn_once() {
    let dir = common::tempdir("restarted-sessions");
    let init = r#"{"type":"system","subtype":"init","session_id":"S","model":"claude-sonnet-4-5"}"#;
    let result = |cost: f64| {
        format!(
            r#"{{"type":"result","subtype":"success","session_id":"S","total_cost_usd":{cost},"usage":{{"input_tokens":1,"output_tokens":1}}}}"#
        )
    };
    for (name, costs, billed) in [
        ("two turns of one process", [0.1, 0.25], 0.25),
        ("a resumed process", [0.3, 0.1], 0.4),
        (
            "the same run twice (a log appended to itself)",
            [0.135, 0.135],
            0.135,
        ),
    ] {
        let log = dir.as_path().join("log.jsonl");
        let lines = costs.map(|c| format!("{init}\n{}\n", result(c))).concat();
        std::fs::write(&log, lines).unwrap();
        let s = summary_json(&[log.as_os_str()]);
        assert_eq!(s["cost_usd"].as_f64(), Some(billed), "{name}: {s}");
    }

    // Past the 1,000 sessions kept by name (the second audit): 1,001 sessions each resumed
    // at a lower cost (the earlier cost of a session moved out for room was lost: 50.05), and
    // a resume after 1,000 sessions that started and never reported (no longer noticed).
    let run = |s: &str, cost: f64| {
        format!(
            "{}\n{}\n",
            init.replace("\"S\"", &format!("\"{s}\"")),
            result(cost).replace("\"S\"", &format!("\"{s}\""))
        )
    };
    let log = dir.as_path().join("cap.jsonl");
    let first: String = (0..1001).map(|i| run(&format!("s{i}"), 0.1)).collect();
    let again: String = (0..1001).map(|i| run(&format!("s{i}"), 0.05)).collect();
    std::fs::write(&log, first + &again).unwrap();
    let s = summary_json(&[log.as_os_str()]);
    assert_eq!(s["cost_usd"].as_f64(), Some(150.15), "1,001 resumed");
    let silent: String = (0..1000)
        .map(|i| init.replace("\"S\"", &format!("\"q{i}\"")) + "\n")
        .collect();
    std::fs::write(&log, silent + &run("X", 0.1) + &run("X", 0.05)).unwrap();
    let s = summary_json(&[log.as_os_str()]);
    assert_eq!(
        s["cost_usd"].as_f64(),
        Some(0.15),
        "after 1,000 silent starts"
    );
}

#[test]
fn a_reported_cost_is_not_estimated() {
    let s =
        summary_json(&[real("charlieyou__claude-agent-sdk-gleam__basic_query.jsonl").as_os_str()]);
    assert_eq!(s["cost_estimated"], false);
    assert_eq!(s["cost_usd"], s["cost_reported_usd"]);
    let reported = s["cost_usd"].as_f64().unwrap();
    assert!((reported - 0.13545).abs() < 1e-3, "{reported}");
    assert_eq!(s["prices_date"], Value::Null);
}

/// Found by a new user (#49): costs summed in binary printed with its noise (`cost_usd`
/// 11.519964349999999 for the corpus, 0.45065954999999996 in a CSV row whose total said
/// 0.45066), and a total of runs reporting 0.1 and 0.2 dollars said 0.30000000000000004.
/// Costs are added as decimals: every digit a result reports stays, at any size (the audit's
/// first fix, rounding sums to 1e-10, overflowed at 1e299, doubled 5e-11 and left the noise
/// of totals over a million), and `cost_usd` equals `cost_reported_usd` when nothing is
/// estimated. The expected totals are sums of the decimals as written.
#[test]
fn a_summed_cost_prints_without_the_noise_of_binary_sums() {
    let dir = common::tempdir("prices-noise");
    let log = dir.join("runs.jsonl");
    let run = |id: &str, cost: &str| {
        format!(
            "{{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"{id}\",\"model\":\"claude-sonnet-4-5\"}}\n\
             {{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"session_id\":\"{id}\",\"num_turns\":1,\"total_cost_usd\":{cost}}}\n"
        )
    };
    std::fs::write(
        &log,
        run("a", "0.1") + &run("b", "0.2") + &run("c", "0.45065955"),
    )
    .unwrap();
    let s = summary_json(&[log.as_os_str()]);
    // 0.1 + 0.2 + 0.45065955, in decimal.
    assert_eq!(s["cost_reported_usd"].to_string(), "0.75065955", "{s}");
    assert_eq!(s["cost_usd"], s["cost_reported_usd"]);
    let csv = common::run_cmd(
        common::bin()
            .args(["--summary", "--by-run", "--format", "csv"])
            .arg(&log),
        b"",
    );
    let csv = String::from_utf8_lossy(&csv.stdout);
    let costs: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|row| row.split(',').rev().nth(1).unwrap())
        .collect();
    assert_eq!(costs, ["0.1", "0.2", "0.45065955", "0.75065955"], "{csv}");
    // Ten sessions of eight decimals (the audit's), and costs too large or too small to round.
    let ten = [
        "60494.56448162",
        "15306.34751217",
        "77013.65220111",
        "63075.40709944",
        "72468.48056573",
        "86465.29318886",
        "76150.18693000",
        "46941.18756361",
        "22429.82996081",
        "42834.71479480",
    ];
    let runs: Vec<String> = (0..ten.len())
        .map(|k| run(&format!("s{k}"), ten[k]))
        .collect();
    std::fs::write(&log, runs.concat()).unwrap();
    let s = summary_json(&[log.as_os_str()]);
    assert_eq!(s["cost_reported_usd"].to_string(), "563179.66429815", "{s}");
    for (cost, printed) in [
        ("1e299", "1e299"),
        ("5e-11", "5e-11"),
        ("1.5e-10", "1.5e-10"),
        ("123456.789", "123456.789"),
    ] {
        std::fs::write(&log, run("a", cost)).unwrap();
        let s = summary_json(&[log.as_os_str()]);
        assert_eq!(
            s["cost_usd"].as_f64(),
            printed.parse::<f64>().ok(),
            "{cost}: {s}"
        );
    }
    // Estimates too: no figure of the corpus's summaries carries more than ten decimals.
    let corpus: Vec<PathBuf> = common::corpus_files();
    let mut args: Vec<&std::ffi::OsStr> = corpus.iter().map(|p| p.as_os_str()).collect();
    let all = summary_json(&args).to_string();
    args.truncate(1);
    let one = summary_json(&args).to_string();
    for text in [all, one] {
        let noisy = text
            .split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .find(|n| n.split_once('.').is_some_and(|(_, d)| d.len() > 10));
        assert_eq!(noisy, None, "{text}");
    }
}

/// Found by the audit (#49): past 1,000 sessions the costs of the others shared one slot that
/// kept only the largest, so 1,002 runs of a dollar each cost 1,001 dollars, and a table's
/// total was not the sum of its rows. The session that reported longest ago is now summed to
/// make room.
#[test]
fn a_log_of_more_than_a_thousand_sessions_totals_every_cost() {
    let dir = common::tempdir("prices-sessions");
    let log = dir.join("many.jsonl");
    let runs: String = (0..1500)
        .map(|i| {
            format!(
                "{{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s{i:04}\",\"model\":\"claude-sonnet-4-5\"}}\n\
                 {{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"session_id\":\"s{i:04}\",\"num_turns\":1,\"total_cost_usd\":{}.25}}\n",
                i % 7
            )
        })
        .collect();
    std::fs::write(&log, runs).unwrap();
    // The sum as written: (0 + 1 + … + 6) over each 7 runs, plus a quarter a run.
    let want: f64 = (0..1500).map(|i| (i % 7) as f64).sum::<f64>() + 1500.0 * 0.25;
    let s = summary_json(&[log.as_os_str()]);
    assert_eq!(
        s["cost_reported_usd"].as_f64(),
        Some(want),
        "{}",
        s["cost_reported_usd"]
    );
    assert_eq!(s["cost_usd"].as_f64(), Some(want));
    let csv = common::run_cmd(
        common::bin()
            .args(["--summary", "--by-run", "--format", "csv"])
            .arg(&log),
        b"",
    );
    let csv = String::from_utf8_lossy(&csv.stdout);
    let cost = |row: &str| row.split(',').rev().nth(1).unwrap().parse::<f64>().unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    let (total, runs) = rows.split_last().unwrap();
    assert_eq!(runs.len(), 1500);
    assert_eq!(runs.iter().map(|r| cost(r)).sum::<f64>(), want);
    assert_eq!(cost(total), want, "{total}");
    // 1,500 sessions reporting three times each, in turn (cumulative costs: the last counts),
    // each report 1,500 sessions after its last: the second audit's case, which counted the
    // sessions moved out for room again when they reported (1.97 times the cost).
    let reports: String = (1..=3)
        .flat_map(|r| (0..1500).map(move |i| (r, i)))
        .map(|(r, i)| {
            format!(
                "{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"session_id\":\"s{i:04}\",\"num_turns\":{r},\"total_cost_usd\":{}}}\n",
                r as f64 * 0.25 * (i % 7 + 1) as f64
            )
        })
        .collect();
    std::fs::write(&log, reports).unwrap();
    let want: f64 = (0..1500).map(|i| 0.75 * (i % 7 + 1) as f64).sum();
    let s = summary_json(&[log.as_os_str()]);
    assert_eq!(
        s["cost_reported_usd"].as_f64(),
        Some(want),
        "{}",
        s["cost_reported_usd"]
    );
}

/// Found by an audit (#49, D5): in a total of runs of one model, some reporting their cost
/// and some not, the model's cost was the reported part alone ($0.50 beside a total of
/// ~$5.00): the tokens of the runs that reported none were not priced. The model's cost is now
/// the reported part and the estimate of the rest, marked estimated. The reference, by hand
/// from the shipped table (claude-sonnet-4-5: $3 input, $15 output per million tokens):
/// 0.5 + 1,000,000 × 3 / 1e6 + 100,000 × 15 / 1e6 = 5.0.
#[test]
fn a_totals_model_cost_adds_the_estimate_of_the_runs_that_reported_none() {
    let dir = common::tempdir("model-cost-partly-reported");
    let m = "claude-sonnet-4-5-20250929";
    let log = dir.as_path().join("log.jsonl");
    let lines = [
        format!(r#"{{"type":"system","subtype":"init","session_id":"A","model":"{m}"}}"#),
        format!(
            r#"{{"type":"assistant","session_id":"A","message":{{"id":"m1","model":"{m}","role":"assistant","content":[],"usage":{{"input_tokens":1000,"output_tokens":100}}}}}}"#
        ),
        format!(
            r#"{{"type":"result","subtype":"success","is_error":false,"session_id":"A","total_cost_usd":0.5,"usage":{{"input_tokens":1000,"output_tokens":100}},"modelUsage":{{"{m}":{{"inputTokens":1000,"outputTokens":100,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"costUSD":0.5}}}}}}"#
        ),
        format!(r#"{{"type":"system","subtype":"init","session_id":"B","model":"{m}"}}"#),
        format!(
            r#"{{"type":"assistant","session_id":"B","message":{{"id":"m2","model":"{m}","role":"assistant","content":[],"usage":{{"input_tokens":1000000,"output_tokens":100000}}}}}}"#
        ),
    ];
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let s = summary_json(&[log.as_os_str()]);
    let by_hand = 0.5 + 1_000_000.0 * 3.0 / 1e6 + 100_000.0 * 15.0 / 1e6;
    let model = &s["models"][m];
    assert_eq!(model["cost_usd"].as_f64(), Some(by_hand), "{s}");
    assert_eq!(model["cost_estimated"], true, "{s}");
    assert_eq!(s["cost_usd"].as_f64(), Some(by_hand), "{s}");

    // An audit: a run that reports its whole cost, and its model's tokens without a cost:
    // the run's cost is the model's, its tokens not priced again (0.7213 for 0.718).
    let lines = [
        format!(r#"{{"type":"system","subtype":"init","session_id":"C","model":"{m}"}}"#),
        format!(
            r#"{{"type":"result","subtype":"success","is_error":false,"session_id":"C","total_cost_usd":0.7,"usage":{{"input_tokens":100,"output_tokens":200}},"modelUsage":{{"{m}":{{"inputTokens":100,"outputTokens":200,"cacheReadInputTokens":0,"cacheCreationInputTokens":0}}}}}}"#
        ),
        lines[3].replace("\"B\"", "\"D\""),
        format!(
            r#"{{"type":"assistant","session_id":"D","message":{{"id":"m3","model":"{m}","role":"assistant","content":[],"usage":{{"input_tokens":1000,"output_tokens":1000}}}}}}"#
        ),
    ];
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let s = summary_json(&[log.as_os_str()]);
    let by_hand = 0.7 + 1_000.0 * 3.0 / 1e6 + 1_000.0 * 15.0 / 1e6;
    let cost = s["models"][m]["cost_usd"].as_f64().unwrap();
    assert!((cost - by_hand).abs() < 1e-12, "{cost} for {by_hand}: {s}");
    assert_eq!(s["cost_usd"].as_f64(), Some(cost), "{s}");
}
