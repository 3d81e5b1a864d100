//! Agent-aware behaviour end to end: base64 payloads, duplicates, --plain, --omit-images,
//! --add-timestamp, --stdout-max-line-bytes, --stats, --stats-json, --redact.

use crate::common;

use std::path::Path;
use std::process::Output;

use crate::common::{corpus_files, lines, strict_parse};
use serde_json::Value;
use smart_tee::{EngineConfig, LineEngine};

fn tempdir(name: &str) -> common::TestDir {
    common::tempdir(&format!("agent-{name}"))
}

fn run(args: &[&str], log: &Path, input: &[u8]) -> Output {
    let out = common::run_fed(args, log, input);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn corpus(name: &str) -> Vec<u8> {
    let file = corpus_files()
        .into_iter()
        .find(|f| f.to_string_lossy().contains(name))
        .unwrap();
    std::fs::read(file).unwrap()
}

fn log_values(log: &Path) -> Vec<Value> {
    lines(&std::fs::read(log).unwrap())
        .iter()
        .map(|l| strict_parse(l).unwrap())
        .collect()
}

#[test]
fn screenshots_become_descriptors_that_keep_media_type_and_size() {
    let dir = tempdir("images");
    let log = dir.join("l");
    let input = corpus("images-in-tool-results");
    let out = run(&[], &log, &input);
    assert_eq!(out.stdout, input, "stdout keeps the screenshot");
    let logged = std::fs::read(&log).unwrap();
    assert!(logged.len() < 6000, "{}", logged.len());
    let v = &log_values(&log)[1];
    let image = &v["message"]["content"][0]["content"][1];
    assert_eq!(image["type"], "image");
    assert_eq!(image["source"]["media_type"], "image/png");
    assert_eq!(
        image["source"]["data"],
        "[IMAGE OMITTED: image/png, 604,176 bytes base64]"
    );
    assert_eq!(
        v["toolUseResult"][1]["source"]["data"],
        "[IMAGE OMITTED: image/png, 604,176 bytes base64]"
    );
    // The text block beside the image survives whole.
    let text = v["message"]["content"][0]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(text.starts_with("### Result") && !text.contains("TRUNCATED"));

    // --plain cuts the data like any string.
    run(&["--plain"], &log, &input);
    let v = &log_values(&log)[1];
    let data = v["message"]["content"][0]["content"][1]["source"]["data"]
        .as_str()
        .unwrap();
    assert!(data.starts_with("iVBORw0KGgo") && data.contains("[TRUNCATED: 604176 → "));
}

#[test]
fn omit_images_applies_to_lines_that_fit() {
    let dir = tempdir("omit");
    let log = dir.join("l");
    let input = corpus("images-in-user-messages");
    run(&["-b", "0"], &log, &input);
    assert_eq!(
        std::fs::read(&log).unwrap(),
        input,
        "without --omit-images nothing changes"
    );
    run(&["-b", "0", "--omit-images"], &log, &input);
    let text = String::from_utf8(std::fs::read(&log).unwrap()).unwrap();
    assert_eq!(
        text.matches("[IMAGE OMITTED: image/").count(),
        2,
        "the two pasted images"
    );
    assert!(text.len() < input.len() - 60_000);
    for (orig, cut) in lines(&input).iter().zip(lines(text.as_bytes())) {
        let (o, c) = (strict_parse(orig).unwrap(), strict_parse(cut).unwrap());
        common::naive::agrees(&o, &c).unwrap();
        // Lines change only where a payload (an image, a thinking signature) was replaced.
        if orig != &cut {
            assert!(String::from_utf8_lossy(cut).contains(" OMITTED: "));
        }
    }
}

#[test]
fn duplicates_give_way_before_the_model_facing_content() {
    let dir = tempdir("dups");
    let log = dir.join("l");
    let output = (0..600)
        .map(|i| format!("line {i} of the command output\\n"))
        .collect::<String>();
    let line = format!(
        r#"{{"type":"user","message":{{"role":"user","content":[{{"tool_use_id":"t1","type":"tool_result","content":"{output}"}}]}},"tool_use_result":{{"stdout":"{output}","stderr":""}}}}"#
    );
    let model_kept = |args: &[&str]| {
        run(args, &log, format!("{line}\n").as_bytes());
        let v = &log_values(&log)[0];
        let model = v["message"]["content"][0]["content"]
            .as_str()
            .unwrap()
            .len();
        let dup = v["tool_use_result"]["stdout"].as_str().unwrap().len();
        (model, dup)
    };
    let (model, dup) = model_kept(&[]);
    assert!(
        model > 4000 && dup < 100,
        "agent-aware: model {model}, duplicate {dup}"
    );
    let (model, dup) = model_kept(&["--plain"]);
    assert!(
        model.abs_diff(dup) < 100,
        "plain: fair shares, model {model}, duplicate {dup}"
    );
}

#[test]
fn add_timestamp_adds_the_receive_time_as_the_last_key() {
    let dir = tempdir("stamp");
    let log = dir.join("l");
    let input = b"{\"type\":\"a\"}\n{\"type\":\"b\",\"timestamp\":\"2020-01-01T00:00:00.000Z\"}\n{}\n[1]\nplain\n";
    let out = run(&["--add-timestamp"], &log, input);
    assert_eq!(out.stdout, input, "stdout is never changed");
    let ls: Vec<Vec<u8>> = lines(&std::fs::read(&log).unwrap())
        .iter()
        .map(|l| l.to_vec())
        .collect();
    let v0 = strict_parse(&ls[0]).unwrap();
    let keys: Vec<&String> = v0.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["type", "timestamp"]);
    let ts = v0["timestamp"].as_str().unwrap();
    assert_eq!(ts.len(), 24, "{ts}");
    assert!(ts.starts_with("20") && ts.ends_with('Z') && &ts[10..11] == "T" && &ts[19..20] == ".");
    assert_eq!(
        ls[1],
        b"{\"type\":\"b\",\"timestamp\":\"2020-01-01T00:00:00.000Z\"}"
    );
    assert!(ls[2].starts_with(b"{\"timestamp\":\"20"));
    assert_eq!(ls[3], b"[1]");
    assert_eq!(strict_parse(&ls[4]).unwrap()["type"], "non_json");
}

#[test]
fn stdout_max_line_bytes_cuts_only_long_lines() {
    let dir = tempdir("stdoutcap");
    let log = dir.join("l");
    let long = format!(
        "{{\"type\":\"user\",\"content\":\"{}\"}}",
        "w ".repeat(100_000)
    );
    let input = format!("{{\"a\":1}}\r\nnot json\n{long}\n{{\"tail\":true}}");
    let out = run(&["--stdout-max-line-bytes", "1K"], &log, input.as_bytes());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let ls: Vec<&str> = stdout.split('\n').collect();
    assert_eq!(ls[0], "{\"a\":1}\r");
    assert_eq!(ls[1], "not json");
    assert!(ls[2].len() <= 1024);
    let v = strict_parse(ls[2].as_bytes()).unwrap();
    assert_eq!(v["type"], "user");
    assert!(
        v["content"]
            .as_str()
            .unwrap()
            .contains("[TRUNCATED: 200000 → ")
    );
    assert_eq!(
        ls[3], "{\"tail\":true}",
        "the last line passes without a newline added"
    );
    assert_eq!(ls.len(), 4);
}

/// `--stdout-max-line-bytes` held an unfinished line whole until its newline, so a giant line
/// cost its size in memory: a 300 MB line aborted under a 200 MB address-space limit. It is now
/// reduced while read, as the log reduces it: the same line goes through under that limit (it
/// needs under 100 MB), and stdout gets the log's line for it. One malloc arena, so that the
/// address space counts what is allocated, not glibc's per-thread reservations.
#[test]
fn a_giant_line_under_stdout_max_line_bytes_is_not_held_whole() {
    use std::io::Write;
    let dir = tempdir("stdoutcap-giant");
    let log = dir.join("l");
    let script = format!(
        "ulimit -v 200000 && exec '{}' --stdout-max-line-bytes 5120 '{}'",
        env!("CARGO_BIN_EXE_smart-tee"),
        log.display()
    );
    let mut sh = std::process::Command::new("sh");
    sh.args(["-c", &script])
        .env_remove("SMART_TEE_MAX_LINE_BYTES")
        .env("MALLOC_ARENA_MAX", "1");
    // Written a megabyte at a time: the test holds no more than that either.
    let out = common::run_cmd_fed(&mut sh, |mut stdin| {
        let mb = "source text, ".repeat(81_000);
        let _ = stdin.write_all(br#"{"type":"user","content":[{"type":"tool_result","content":""#);
        for _ in 0..300 {
            if stdin.write_all(&mb.as_bytes()[..1 << 20]).is_err() {
                return;
            }
        }
        let _ = stdin.write_all(b"\"}]}\n{\"tail\":1}\n");
    });
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && err.is_empty(),
        "{:?} {err}",
        out.status
    );
    let stdout = lines(&out.stdout);
    let logged = std::fs::read(&log).unwrap();
    assert_eq!(stdout, lines(&logged), "stdout's lines are the log's");
    assert_eq!(stdout.len(), 2);
    assert!(stdout[0].len() <= 5120, "{}", stdout[0].len());
    let v = strict_parse(stdout[0]).unwrap();
    assert_eq!(v["type"], "user");
    assert_eq!(v["content"][0]["type"], "tool_result");
    assert_eq!(stdout[1], b"{\"tail\":1}");
}

#[test]
fn stats_summarise_the_run() {
    let dir = tempdir("stats");
    let log = dir.join("l");
    let json = dir.join("stats.json");
    let input = corpus("images-in-tool-results");
    let out = run(
        &["--stats", "--stats-json", json.to_str().unwrap()],
        &log,
        &input,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("2 lines in: 1 logged whole, 1 cut, 0 not JSON"),
        "{err}"
    );
    assert!(err.contains("saved by field: data "), "{err}");
    let s: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(s["bytes_in"], input.len() as u64);
    assert_eq!(s["bytes_logged"], std::fs::read(&log).unwrap().len() as u64);
    assert_eq!(s["lines_in"], 2);
    assert_eq!(s["lines_cut"], 1);
    assert!(s["saved_by_field"]["data"].as_u64().unwrap() > 1_200_000);
}

#[test]
fn redact_replaces_secrets_in_the_log_only() {
    let dir = tempdir("redact");
    let log = dir.join("l");
    let input = b"{\"type\":\"user\",\"content\":\"export ANTHROPIC_API_KEY=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv_wx and password=hunter22\"}\nplain AKIAIOSFODNN7EXAMPLE\n";
    let out = run(&["--redact"], &log, input);
    assert_eq!(out.stdout, input, "stdout keeps the secrets");
    let logged = String::from_utf8(std::fs::read(&log).unwrap()).unwrap();
    assert!(
        !logged.contains("sk-ant-") && !logged.contains("hunter22") && !logged.contains("AKIAIOSF")
    );
    assert!(logged.contains("ANTHROPIC_API_KEY=[REDACTED:anthropic_key]"));
    assert!(logged.contains("password=[REDACTED:assignment]"));
    assert!(logged.contains("plain [REDACTED:aws_access_key_id]"));
    for l in lines(logged.as_bytes()) {
        strict_parse(l).unwrap();
    }
}

/// The one log line of `line` at `budget`, through the contract check, parsed.
fn logged(line: &str, budget: usize) -> (Vec<u8>, Value) {
    let log = common::check_contract(format!("{line}\n").as_bytes(), budget);
    let out = lines(&log)[0].to_vec();
    let v = strict_parse(&out).unwrap();
    (out, v)
}

fn b64(n: usize, alphabet: &[u8]) -> String {
    (0..n)
        .map(|i| alphabet[(i * 7 + i / 3) % alphabet.len()] as char)
        .collect()
}

/// #13: a Claude `result` line of 68 KB with 21 `permission_denials` kept 4 of them; the bulk of
/// each record is its `tool_input`, so the inputs give way and all 21 ids stay.
#[test]
fn permission_denials_keep_every_record_id() {
    let denials: Vec<Value> = (0..21)
        .map(|i| {
            serde_json::json!({
                "tool_name": "Bash",
                "tool_use_id": format!("toolu_01ABCDEFGHIJKLMNOP{i:04}"),
                "tool_input": {"command": format!("cat big-{i}.log && {}", "x".repeat(3000))}
            })
        })
        .collect();
    let line = serde_json::json!({
        "type": "result", "subtype": "success", "is_error": false, "session_id": "s-1",
        "result": "done", "permission_denials": denials
    })
    .to_string();
    assert!(line.len() > 60_000);
    let (_, v) = logged(&line, 5120);
    let kept = v["permission_denials"].as_array().unwrap();
    assert_eq!(kept.len(), 21, "every record stays");
    for (i, d) in kept.iter().enumerate() {
        assert_eq!(d["tool_use_id"], format!("toolu_01ABCDEFGHIJKLMNOP{i:04}"));
        assert_eq!(d["tool_name"], "Bash");
    }
}

/// #13: `[[], {…282 KB object…}, []]` was logged as `[[],"[TRUNCATED: 3 → 2 items]",[]]`, 36
/// bytes of a 5120 budget: the only content dropped whole. It is cut inside instead, and the
/// line uses at least half its budget.
#[test]
fn an_array_never_drops_what_could_be_cut_to_fill_the_budget() {
    let big: serde_json::Map<String, Value> = (0..2000)
        .map(|i| (format!("k{i}"), Value::String("v".repeat(140))))
        .collect();
    let line = serde_json::json!([[], big, []]).to_string();
    assert!(line.len() > 280_000);
    let (out, v) = logged(&line, 5120);
    assert!(out.len() >= 2560, "{} bytes of 5120", out.len());
    let arr = v.as_array().unwrap();
    assert_eq!(arr.len(), 3);
    assert!(arr[1].is_object(), "the object is cut inside, not dropped");
}

/// #13: a preserved field is preserved all the way down: `content` inside `type` gave way (`382
/// → 0 bytes`) while `message1` kept 1.2 KB.
#[test]
fn a_preserved_member_is_preserved_all_the_way_down() {
    let line = serde_json::json!({
        "data": "d".repeat(20_000),
        "message1": "m".repeat(3000),
        "x2": "x".repeat(5000),
        "type": {"content": "c".repeat(390)}
    })
    .to_string();
    let (out, v) = logged(&line, 5120);
    assert_eq!(v["type"]["content"], "c".repeat(390), "kept whole");
    assert!(out.len() >= 2560);
}

/// #13: payloads wherever they are: Codex reasoning ciphertext (`encrypted_content`, base64url),
/// opencode's `data:` URLs and MCP image blocks (`mimeType`) become descriptors with their media
/// type and size.
#[test]
fn ciphertext_data_urls_and_mcp_images_become_descriptors() {
    let url_safe = b64(3000, b"gAABbcDE-_9xyzQR0123");
    let codex = serde_json::json!({
        "timestamp": "2026-11-22T10:00:00.000Z", "type": "response_item",
        "payload": {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Plan"}],
                    "content": null, "encrypted_content": url_safe},
        "pad": "p".repeat(6000)
    })
    .to_string();
    let (out, v) = logged(&codex, 5120);
    assert_eq!(
        v["payload"]["encrypted_content"],
        "[BASE64 OMITTED: 3,000 bytes]",
        "{}",
        String::from_utf8_lossy(&out)
    );
    let png = b64(4000, b"iVBORw0KGgoAAAANSUhEUg+/");
    let opencode = serde_json::json!({
        "type": "tool_use", "sessionID": "ses_1",
        "part": {"type": "file", "url": format!("data:image/png;base64,{png}"), "mime": "image/png"}
    })
    .to_string();
    let (_, v) = logged(&opencode, 1024);
    assert_eq!(
        v["part"]["url"],
        "[IMAGE OMITTED: image/png, 4,022 bytes base64]"
    );
    let mcp = serde_json::json!({
        "type": "item.completed",
        "item": {"id": "item_3", "type": "mcp_tool_call", "server": "browser", "tool": "screenshot",
                 "result": {"content": [{"type": "image", "data": png, "mimeType": "image/jpeg"}]}}
    })
    .to_string();
    let (_, v) = logged(&mcp, 1024);
    assert_eq!(
        v["item"]["result"]["content"][0]["data"],
        "[IMAGE OMITTED: image/jpeg, 4,000 bytes base64]"
    );
    assert_eq!(v["item"]["tool"], "screenshot");
}

/// A secret of each kind around `r` (upper-case letters, which no filler text has): what the
/// log must never show any part of.
fn plant(kind: usize, r: &str) -> String {
    match kind % 8 {
        0 => format!("ghp_{}", &r[..36]),
        1 => format!("sk-ant-api03-{}", &r[..40]),
        2 => format!("AKIA{}", &r[..16]),
        3 => format!("password={}", &r[..12]),
        4 => format!("Authorization: Bearer {}", &r[..30]),
        5 => format!("postgres://admin:{}@db:5432/app", &r[..14]),
        6 => format!("eyJ{}.eyJ{}.{}", &r[..20], &r[20..44], &r[44..]),
        _ => {
            let body = key_body(r);
            format!(
                "-----BEGIN RSA PRIVATE KEY-----\\n{}\\n-----END RSA PRIVATE KEY-----",
                body.join("\\n")
            )
        }
    }
}

/// The secret parts of what `plant` made: `r`, or for a JWT its three parts, for a private key its
/// body lines.
fn secret_parts(kind: usize, r: &str) -> Vec<String> {
    match kind % 8 {
        0 => vec![r[..36].into()],
        1 => vec![r[..40].into()],
        2 => vec![r[..16].into()],
        3 => vec![r[..12].into()],
        4 => vec![r[..30].into()],
        5 => vec![r[..14].into()],
        6 => vec![r[..20].into(), r[20..44].into(), r[44..].into()],
        _ => key_body(r).into_iter().map(String::from).collect(),
    }
}

/// A private key's body from `r`: 30 lines of 16 letters, far longer than the text searched
/// around a cut point.
fn key_body(r: &str) -> Vec<&str> {
    (0..30).map(|k| &r[k * 5 % 48..][..16]).collect()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, ..Default::default() })]

    /// `--redact` searches only what the log keeps of a line over the budget (and the text
    /// around each cut point): no part of a secret shows, wherever the cuts fall.
    #[test]
    fn redact_never_logs_a_part_of_a_secret(
        pieces in proptest::collection::vec(
            (0usize..3, "[a-z]{1,12}", 0usize..8, "[A-Z]{64}", 1usize..3000),
            1..40,
        ),
        budget in 200usize..6000,
    ) {
        // Two long strings of filler with secrets planted at random places in them.
        let (mut texts, mut parts) = ([String::new(), String::new()], Vec::new());
        for (n, (what, word, kind, r, run)) in pieces.iter().enumerate() {
            let text = &mut texts[n % 2];
            match what {
                0 => {
                    text.push_str(&plant(*kind, r));
                    parts.extend(secret_parts(*kind, r));
                }
                // A long run without a space: longer than the search around a cut point takes.
                1 => text.push_str(&word.repeat(run / word.len() + 1)),
                _ => {
                    for _ in 0..run / 16 + 1 {
                        text.push_str(word);
                        text.push_str(if run % 5 == 0 { "\\n" } else { " " });
                    }
                }
            }
            text.push(' ');
        }
        let line = format!(
            "{{\"type\":\"user\",\"uuid\":\"u1\",\"content\":[{{\"type\":\"text\",\"text\":\"{}\"}},{{\"type\":\"tool_result\",\"content\":\"{}\"}}]}}",
            texts[0], texts[1]
        );
        let config = EngineConfig { max_line_bytes: budget, redact: true, ..common::config(budget) };
        let mut out = Vec::new();
        LineEngine::new(config).process(line.as_bytes(), &mut out);
        let log = String::from_utf8(out).unwrap();
        strict_parse(log.trim_end().as_bytes()).unwrap();
        for part in &parts {
            for w in part.as_bytes().windows(8) {
                let w = std::str::from_utf8(w).unwrap();
                proptest::prop_assert!(!log.contains(w), "{w} of a secret is in the log: {log}");
            }
        }
    }
}

#[test]
fn redact_finds_a_secret_cut_in_two() {
    // Cut without --redact, some of these lines end their head inside the token or start their
    // tail inside the key: the log line alone then shows no whole secret, only a part of one.
    let token = "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJ";
    let key = "sk-ant-api03-QWERTYUIOPASDFGHJKLZXCVBNMQWERTYUIOP";
    let parts = [
        "ABCDEFGH", "STUVWXYZ", "ZABCDEFG", "QWERTYUI", "ZXCVBNMQ", "ASDFGHJK",
    ];
    let cut = |line: &str, redact: bool| {
        let config = EngineConfig {
            redact,
            ..common::config(1000)
        };
        let mut out = Vec::new();
        LineEngine::new(config).process(line.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    };
    let mut straddled = 0;
    for shift in 200..260 {
        let text = format!(
            "{} {token} {} {key} {}",
            "a ".repeat(shift),
            "b ".repeat(20_000),
            "c ".repeat(shift)
        );
        let line = format!(r#"{{"type":"user","content":"{text}"}}"#);
        let plain = cut(&line, false);
        if parts.iter().any(|p| plain.contains(p)) {
            straddled += 1;
        }
        let log = cut(&line, true);
        for part in parts {
            assert!(!log.contains(part), "{part} in {log}");
        }
    }
    assert!(
        straddled >= 10,
        "only {straddled} lines put a cut in a secret"
    );
}

#[test]
fn redact_keeps_a_secret_in_a_cut_middle_out_without_rewriting_the_line() {
    // The secret is in the part of the string the log leaves out: the log is the line cut as
    // written, and its marker counts the input's bytes.
    let text = format!(
        "{} password=hunter2222 {}",
        "a ".repeat(10_000),
        "b ".repeat(10_000)
    );
    let line = format!(r#"{{"type":"user","content":"{text}"}}"#);
    let cut = |redact: bool| {
        let config = EngineConfig {
            redact,
            ..common::config(1000)
        };
        let mut out = Vec::new();
        LineEngine::new(config).process(line.as_bytes(), &mut out);
        out
    };
    assert_eq!(cut(true), cut(false));
    let log = String::from_utf8(cut(true)).unwrap();
    assert!(!log.contains("hunter"));
    assert!(
        log.contains(&format!("[TRUNCATED: {} → ", text.len())),
        "{log}"
    );
}

#[test]
fn redact_with_stats_counts_a_line_cut_twice_once() {
    // The secret shows in the log, so the line is cut, then redacted and cut again: `--stats`
    // counts what the log gave up once, as for the redacted line cut once.
    let line = format!(
        r#"{{"type":"user","content":"password=hunter2222 {}"}}"#,
        "a ".repeat(5000)
    );
    let config = |redact| EngineConfig {
        redact,
        field_stats: true,
        ..common::config(1000)
    };
    let mut redacted = Vec::new();
    assert!(smart_tee::cut::redact::Redactor::new().redact(line.as_bytes(), &mut redacted));
    let (mut twice, mut once) = (
        LineEngine::new(config(true)),
        LineEngine::new(config(false)),
    );
    let (mut a, mut b) = (Vec::new(), Vec::new());
    twice.process(line.as_bytes(), &mut a);
    once.process(&redacted, &mut b);
    assert_eq!(a, b);
    assert!(twice.saved_by_field()[&b"content".to_vec()] > 5000);
    assert_eq!(twice.saved_by_field(), once.saved_by_field());
}

/// A 64-byte `signature` of plain prose became `"[BASE64 OMITTED: 64 bytes]"`, against "strings
/// of 64 bytes or less are never cut"; prose with spaces under `signature` or
/// `encrypted_content` is no ciphertext at any length, and a token of 65 bytes still is.
#[test]
fn a_signature_of_prose_or_of_64_bytes_is_not_a_payload() {
    let short = "a".repeat(64);
    let prose = "I read the file, ran the tests and fixed the two that failed here.".repeat(2);
    let token = b64(65, b"EqMBCkYIBxgCKkBx0+/");
    let line = serde_json::json!({
        "type": "assistant",
        "message": {"content": [
            {"type": "thinking", "thinking": "t", "signature": short},
            {"type": "thinking", "thinking": "t", "signature": prose},
            {"type": "reasoning", "encrypted_content": prose},
            {"type": "thinking", "thinking": "t", "signature": token},
        ]},
        "pad": "p".repeat(6000)
    })
    .to_string();
    assert_eq!(
        smart_tee::line::payload::CIPHERTEXT_MIN_LEN,
        smart_tee::cut::costs::MIN_CUT_LEN + 1,
        "one rule"
    );
    let (out, v) = logged(&line, 2048);
    let content = &v["message"]["content"];
    let show = String::from_utf8_lossy(&out);
    assert_eq!(content[0]["signature"], short, "{show}");
    // Prose is cut as prose (these fields give way early), never described as base64.
    for text in [&content[1]["signature"], &content[2]["encrypted_content"]] {
        assert!(!text.as_str().unwrap().contains("BASE64"), "{show}");
    }
    assert_eq!(
        content[3]["signature"], "[BASE64 OMITTED: 65 bytes]",
        "{show}"
    );
}
