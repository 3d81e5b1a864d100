//! `--view` and `--compact`: readable tails of the real corpus, filters and formats, the token
//! budget as a property, following a growing log, and compaction that never loses the original.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::common::{bin, check_contract, corpus_files, lines, strict_parse};
use proptest::prelude::*;
use serde_json::Value;
use smart_tee::read::log::{Format, ViewOptions};
use smart_tee::read::view::render_events;

fn tempdir(name: &str) -> common::TestDir {
    common::tempdir(&format!("view-{name}"))
}

fn view(args: &[&str]) -> Output {
    let out = common::run_cmd(bin().arg("--view").args(args), b"");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn transcript() -> String {
    corpus_files()
        .into_iter()
        .find(|f| f.to_string_lossy().contains("8463c716"))
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn tail_as_text_tells_the_end_of_the_session() {
    let out = view(&["--tail", "20", "--format", "text", &transcript()]);
    let text = String::from_utf8(out.stdout).unwrap();
    let ls: Vec<&str> = text.lines().collect();
    assert_eq!(ls.len(), 20);
    let total = std::fs::read(transcript())
        .unwrap()
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    for (i, l) in ls.iter().enumerate() {
        // Each event is numbered by its line in the file (#N), the last one the file's last.
        let number = format!("#{} ", total - 19 + i);
        let l = l
            .strip_prefix(number.as_str())
            .unwrap_or_else(|| panic!("{number}: {l}"));
        assert!(l.starts_with("2026-02-11 22:5"), "time first: {l}");
        assert!(l.len() < 400, "one short line per event: {l}");
    }
    assert!(text.contains(" assistant tool_use Bash command=git status"));
    assert!(text.contains(" user tool_result ok "));
    assert!(text.contains(" assistant All done."));
}

#[test]
fn filters_formats_and_head() {
    let t = transcript();
    let out = view(&["--type", "user", "--tail", "5", "--format", "jsonl", &t]);
    let ls = lines(&out.stdout);
    assert_eq!(ls.len(), 5);
    for l in &ls {
        assert!(l.len() <= 5120);
        assert_eq!(strict_parse(l).unwrap()["type"], "user");
    }
    let out = view(&[
        "--grep",
        "tool_use_id\":\"toolu_014D6RS6",
        "--format",
        "json",
        &t,
    ]);
    let arr: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!arr.is_empty() && arr.iter().all(|v| v.to_string().contains("toolu_014D6RS6")));
    let out = view(&["--head", "3", "--format", "jsonl", &t]);
    let input = std::fs::read(&t).unwrap();
    assert_eq!(
        lines(&out.stdout),
        lines(&input)[..3].to_vec(),
        "short lines come out as they are"
    );
}

#[test]
fn max_tokens_holds_on_the_corpus() {
    for file in corpus_files() {
        let f = file.to_string_lossy();
        for format in ["text", "jsonl", "json"] {
            let out = view(&["--max-tokens", "25000", "--format", format, &f]);
            assert!(
                out.stdout.len() <= 75_000,
                "{f} {format}: {}",
                out.stdout.len()
            );
            let all = view(&["--format", format, &f]).stdout.len();
            if all > 75_000 {
                assert!(
                    out.stdout.len() >= 25_000,
                    "{f} {format}: uses {} of 75000",
                    out.stdout.len()
                );
                let first = out.stdout.split(|&b| b == b'\n').next().unwrap();
                assert!(String::from_utf8_lossy(first).contains("earlier events omitted"));
            } else {
                assert_eq!(out.stdout.len(), all, "what fits is printed whole");
            }
        }
    }
}

/// A log of one long event under a budget (`max_tokens_is_never_exceeded` found it): the event
/// was cut to an eighth of the budget, so the output used a quarter of it. A few events now
/// share the whole budget among themselves. Through the binary, on a file: both paths.
#[test]
fn a_few_long_events_fill_the_budget() {
    let dir = tempdir("few");
    let event = format!(
        r#"{{"type":"user","message":{{"content":[{{"type":"tool_result","content":" a aa{}"}}]}}}}"#,
        "x".repeat(3200)
    );
    let log = dir.join("l.jsonl");
    std::fs::write(&log, format!("{event}\n")).unwrap();
    let budget = 354 * 3;
    // (Text shows the event's gist, which is shorter whatever the budget.)
    for format in ["jsonl", "json"] {
        let out = view(&[
            "--format",
            format,
            "--max-tokens",
            "354",
            log.to_str().unwrap(),
        ]);
        assert!(out.stdout.len() <= budget, "{format}");
        assert!(
            out.stdout.len() * 2 > budget,
            "{format}: {} of {budget}",
            out.stdout.len()
        );
    }
    let opts = ViewOptions {
        format: Format::Jsonl,
        max_tokens: Some(354),
        bytes_per_token: 3.0,
        ..ViewOptions::new(vec![])
    };
    let mut out = Vec::new();
    render_events(&[event.into_bytes()], &opts, &mut out);
    assert!(
        out.len() <= budget && out.len() * 2 > budget,
        "{}",
        out.len()
    );
}

/// Under a budget smaller than the least per-event cap (256 bytes) plus the first line, the
/// newest event, rendered at that cap, fit nowhere: the output was the first line alone ("… 8
/// earlier events omitted"). An event's cap is now never more than the budget holds.
#[test]
fn a_small_budget_shows_the_newest_event_cut() {
    let mut events = vec![
        br#"{"type":"user","message":{"content":[{"type":"tool_result","content":""}]}}"#.to_vec();
        7
    ];
    events.push(assistant(35).into_bytes());
    let opts = ViewOptions {
        format: Format::Text,
        max_tokens: Some(137),
        bytes_per_token: 1.3,
        ..ViewOptions::new(vec![])
    };
    let mut out = Vec::new();
    render_events(&events, &opts, &mut out);
    let out = String::from_utf8(out).unwrap();
    assert!(out.len() <= 178, "{out}");
    assert!(out.contains("assistant word word"), "{out}");
}

/// Eight events whose last is a short line and whose one before is long, under 342 bytes
/// (`max_tokens_is_never_exceeded` found it): the long one, cut to the least per-event cap (256
/// bytes), did not fit beside the short one and the first line, so 109 of 342 bytes were used.
/// The room left is now filled with the long one cut to it. In memory and through the binary.
#[test]
fn a_long_event_before_a_short_last_one_fills_a_small_budget() {
    let dir = tempdir("fill");
    let mut events = vec![
        br#"{"type":"user","message":{"content":[{"type":"tool_result","content":""}]}}"#.to_vec();
        6
    ];
    events.push(assistant(185).into_bytes());
    events.push(b"/p?FV/DMr\"e1O9]@`ja".to_vec());
    let log = dir.join("l.jsonl");
    std::fs::write(&log, events.join(&b'\n')).unwrap();
    let budget = 342;
    for format in [Format::Json, Format::Jsonl] {
        let opts = ViewOptions {
            format,
            max_tokens: Some(342),
            bytes_per_token: 1.0,
            ..ViewOptions::new(vec![])
        };
        let mut out = Vec::new();
        render_events(&events, &opts, &mut out);
        let name = if format == Format::Json {
            "json"
        } else {
            "jsonl"
        };
        let cli = view(&[
            "--format",
            name,
            "--max-tokens",
            "342",
            "--bytes-per-token",
            "1",
            log.to_str().unwrap(),
        ]);
        for out in [&out, &cli.stdout] {
            let text = String::from_utf8_lossy(out);
            assert!(out.len() <= budget, "{name}: {text}");
            assert!(
                out.len() * 3 >= budget * 2,
                "{name}: {} of {budget}: {text}",
                out.len()
            );
            assert!(text.contains("word word"), "{name}: {text}");
            assert!(text.contains("earlier events omitted"), "{name}: {text}");
        }
    }
}

fn assistant(words: usize) -> String {
    format!(
        r#"{{"type":"assistant","message":{{"content":[{{"type":"text","text":"{}"}}]}}}}"#,
        "word ".repeat(words)
    )
}

/// Found by a soak of `max_tokens_is_never_exceeded` and a fuzz of the binary: budgets the view
/// left mostly empty. Each case uses at least two thirds of its budget now, and stays within it.
/// - A few short events beside a long one: the long one kept the least cap (321 of 966 bytes).
/// - `--tail 1` and `--tail 2`: the cap was shared among all the events read, not the last N
///   (376 and 752 of 3000 bytes).
/// - Text under a small budget: the room left was not filled below JSON's least cut (59 of 200).
#[test]
fn small_and_few_selections_fill_the_budget() {
    let dir = tempdir("fill-more");
    let few = dir.join("few.jsonl");
    std::fs::write(&few, format!("a\na\n0\n{}\n", assistant(955))).unwrap();
    let ten = dir.join("ten.jsonl");
    std::fs::write(&ten, format!("{}\n", assistant(2000)).repeat(10)).unwrap();
    let eight = dir.join("eight.jsonl");
    let tiny = r#"{"type":"user","message":{"content":[{"type":"tool_result","content":"ok"}]}}"#;
    std::fs::write(
        &eight,
        format!("{}\n", assistant(2000)).repeat(7) + tiny + "\n",
    )
    .unwrap();
    let path = |p: &Path| p.to_str().unwrap().to_string();
    for (args, budget) in [
        (
            vec!["--max-tokens", "322", "--format", "jsonl", &path(&few)],
            966,
        ),
        (
            vec![
                "--max-tokens",
                "1000",
                "--tail",
                "1",
                "--format",
                "jsonl",
                &path(&ten),
            ],
            3000,
        ),
        (
            vec![
                "--max-tokens",
                "1000",
                "--tail",
                "2",
                "--format",
                "json",
                &path(&ten),
            ],
            3000,
        ),
        (
            vec![
                "--max-tokens",
                "200",
                "--bytes-per-token",
                "1",
                "--format",
                "text",
                &path(&eight),
            ],
            200,
        ),
    ] {
        let out = view(&args).stdout;
        assert!(out.len() <= budget, "{args:?}: {} > {budget}", out.len());
        assert!(
            out.len() * 3 >= budget * 2,
            "{args:?}: {} of {budget}",
            out.len()
        );
    }
}

/// The second read that fills the budget counted the events `--since` left out for carrying
/// no time again: 3 untimed events were said to be 6.
#[test]
fn the_events_left_out_for_no_time_are_counted_once() {
    let dir = tempdir("untimed-once");
    let log = dir.join("l.jsonl");
    let untimed = r#"{"type": "user", "message": {"content": [{"type": "tool_result", "content": "untimed"}]}}"#;
    let timed = |i: usize| {
        format!(
            r#"{{"type": "assistant", "timestamp": "2026-02-11T21:41:{i:02}.000Z", "message": {{"content": [{{"type": "text", "text": "{}"}}]}}}}"#,
            // Short, but for one long before the last, which the room left is given to.
            "word ".repeat(if i == 8 { 2000 } else { 3 })
        )
    };
    let mut text = format!("{untimed}\n").repeat(3);
    for i in 0..10 {
        text += &timed(i);
        text.push('\n');
    }
    std::fs::write(&log, text).unwrap();
    let out = view(&[
        "--since",
        "2026-02-11T00:00:00Z",
        "--max-tokens",
        "200",
        "--format",
        "jsonl",
        log.to_str().unwrap(),
    ]);
    let err = common::stderr(&out);
    assert!(err.contains("(3 left out by --since/--until)"), "{err}");
}

fn event() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        (0usize..20_000, "[a-z ]{0,20}").prop_map(|(n, s)| {
            format!(r#"{{"type":"user","message":{{"content":[{{"type":"tool_result","content":"{s}{}"}}]}}}}"#, "x".repeat(n)).into_bytes()
        }),
        "[ -~]{0,300}".prop_map(String::into_bytes),
        (0usize..3000).prop_map(|n| format!(r#"{{"type":"assistant","message":{{"content":[{{"type":"text","text":"{}"}}]}}}}"#, "word ".repeat(n)).into_bytes()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn max_tokens_is_never_exceeded(
        events in prop::collection::vec(event(), 0..300),
        tokens in 100usize..40_000,
        bpt in prop_oneof![Just(3.0), Just(4.0), 1.0f64..6.0],
        format in prop_oneof![Just(Format::Text), Just(Format::Jsonl), Just(Format::Json)],
    ) {
        let events: Vec<Vec<u8>> = events.into_iter().filter(|e| !e.iter().all(u8::is_ascii_whitespace)).collect();
        let opts = ViewOptions {
            format,
            max_tokens: Some(tokens),
            bytes_per_token: bpt,
            ..ViewOptions::new(vec![])
        };
        let mut out = Vec::new();
        render_events(&events, &opts, &mut out);
        let budget = (tokens as f64 * bpt).floor() as usize;
        prop_assert!(out.len() <= budget, "{} > {budget}", out.len());
        let mut all = Vec::new();
        render_events(&events, &ViewOptions { max_tokens: None, ..opts.clone() }, &mut all);
        // Under 256 bytes the line that says what was left out and a JSON event cut no shorter
        // than the engine's least budget (128 bytes) may not fit together (docs/view.md).
        if all.len() > budget && budget >= 256 {
            prop_assert!(out.len() * 3 >= budget, "uses {} of {budget}", out.len());
        }
        if format == Format::Json {
            prop_assert!(serde_json::from_slice::<Value>(&out).is_ok());
        }
    }
}

#[test]
fn follow_prints_new_events() {
    let dir = tempdir("follow");
    let log = dir.join("l.jsonl");
    std::fs::write(&log, "{\"type\":\"system\",\"subtype\":\"init\"}\n").unwrap();
    let mut child = common::Reaped(
        bin()
            .args(["--view", "--follow", "--format", "text"])
            .arg(&log)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // Lines come through a thread, so every wait is bounded: the test fails, never hangs (and
    // the follower, which never ends by itself, is killed).
    let out = BufReader::new(child.0.stdout.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in out.lines() {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let next = || {
        rx.recv_timeout(common::CHILD_TIMEOUT)
            .expect("no line from --follow in time")
            .unwrap()
    };
    assert_eq!(next(), "#1 system/init");
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    f.write_all(
        b"{\"type\":\"result\",\"subtype\":\"success\",\"num_turns\":2,\"result\":\"done\"}\n",
    )
    .unwrap();
    assert_eq!(next(), "#2 result/success 2 turns: done");
    child.0.kill().unwrap();
    common::wait_timeout(&mut child.0);
}

fn compact(args: &[&str], files: &[&Path]) -> Output {
    common::run_cmd(bin().arg("--compact").args(args).args(files), b"")
}

#[test]
fn compact_rewrites_in_place_and_dry_run_does_not() {
    let dir = tempdir("compact");
    let src = corpus_files()
        .into_iter()
        .find(|f| f.to_string_lossy().contains("images-in-tool"))
        .unwrap();
    let log = dir.join("a.jsonl");
    std::fs::copy(&src, &log).unwrap();
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o640)).unwrap();
    let original = std::fs::read(&log).unwrap();
    let out = compact(&["--dry-run"], &[&log]);
    assert!(out.status.success());
    let report = String::from_utf8(out.stdout).unwrap();
    assert!(report.contains(": 2 lines, 1210674 -> "), "{report}");
    assert!(report.contains("1 cut, 0 not JSON (dry run)"), "{report}");
    assert_eq!(
        std::fs::read(&log).unwrap(),
        original,
        "--dry-run changes nothing"
    );

    let out = compact(&[], &[&log]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let compacted = std::fs::read(&log).unwrap();
    assert_eq!(
        compacted,
        check_contract(&original, 5120),
        "the log a tee would have written"
    );
    assert_eq!(
        std::fs::metadata(&log).unwrap().permissions().mode() & 0o777,
        0o640
    );
    let ino = std::fs::metadata(&log).unwrap().ino();
    let out = compact(&[], &[&log]);
    let report = String::from_utf8(out.stdout).unwrap();
    assert!(report.contains("0 cut, 0 not JSON, unchanged"), "{report}");
    // #11.1: a file in which nothing changes is left alone, not renamed over.
    assert_eq!(std::fs::metadata(&log).unwrap().ino(), ino, "not rewritten");
    assert_eq!(
        std::fs::read(&log).unwrap(),
        compacted,
        "compacting twice changes nothing"
    );
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        1,
        "no temporary file left"
    );
}

fn big_log(path: &Path) -> Vec<u8> {
    let line = format!(
        "{{\"type\":\"user\",\"content\":\"{}\"}}\n",
        "q ".repeat(40_000)
    );
    let data = line.repeat(600);
    std::fs::write(path, &data).unwrap();
    data.into_bytes()
}

#[test]
fn compact_failing_to_write_keeps_the_original() {
    let dir = tempdir("efbig");
    let log = dir.join("big.jsonl");
    let original = big_log(&log);
    // A file-size limit of 1 MiB: writing the compacted copy fails (EFBIG) part way.
    let script = format!(
        "ulimit -f 1024; exec {} --compact {}",
        env!("CARGO_BIN_EXE_smart-tee"),
        log.display()
    );
    let out = common::run_cmd(Command::new("bash").args(["-c", &script]), b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("File too large"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(&log).unwrap(), original);
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        1,
        "the temporary file is removed"
    );
}

#[test]
fn compact_killed_midway_leaves_one_whole_file() {
    let dir = tempdir("kill");
    let log = dir.join("big.jsonl");
    let original = big_log(&log);
    let want = check_contract(&original[..original.len() / 600], 5120).repeat(600);
    for delay_ms in [5, 20, 60] {
        std::fs::write(&log, &original).unwrap();
        let mut child = bin()
            .arg("--compact")
            .arg(&log)
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        common::wait_timeout(&mut child);
        let now = std::fs::read(&log).unwrap();
        assert!(
            now == original || now == want,
            "after a kill at {delay_ms} ms the log is neither version"
        );
    }
}

/// A compaction killed mid-rewrite leaves its temporary file beside the log (the log itself is
/// untouched: the rename is the last step); made here on purpose, as the kill would leave it,
/// with a process id that cannot exist (above Linux's largest `pid_max`). The next compaction
/// of the log removes it (it used to stay forever, as big as the log), and keeps one that a
/// live process (this test) names.
#[test]
fn compact_removes_what_a_killed_compaction_left() {
    let dir = tempdir("stale");
    let log = dir.join("big.jsonl");
    let original = big_log(&log);
    let stale = dir.join(".big.jsonl.smart-tee-4999999.tmp");
    std::fs::write(&stale, &original[..original.len() / 3]).unwrap();
    let live = dir.join(format!(".big.jsonl.smart-tee-{}.tmp", std::process::id()));
    std::fs::write(&live, b"{}").unwrap();
    let other = dir.join(".other.jsonl.smart-tee-4999999.tmp");
    std::fs::write(&other, b"{}").unwrap();
    let out = compact(&[], &[&log]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !stale.exists(),
        "the killed compaction's file is still there"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("left by a compaction that was stopped"));
    assert!(
        live.exists() && other.exists(),
        "a live process's or another log's file was removed"
    );
    assert!(std::fs::read(&log).unwrap().len() < original.len() / 10);
}

/// #11.1: `--compact` on a log that a running smart-tee appends to lost the writer's later
/// lines (it went on into the deleted file). The writer holds the log's lock, so the compaction
/// is refused, and every line the writer writes, before and after, is in the file.
#[test]
fn compact_refuses_a_log_a_smart_tee_is_writing() {
    let dir = tempdir("live-writer");
    let log = dir.join("live.jsonl");
    big_log(&log);
    let mut writer = bin()
        .arg("-a")
        .arg(&log)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = writer.stdin.take().unwrap();
    writeln!(stdin, "{{\"type\":\"tick\",\"n\":0}}").unwrap();
    stdin.flush().unwrap();
    // The line is in the log: the writer has opened it and holds its lock.
    let start = std::time::Instant::now();
    while lines(&std::fs::read(&log).unwrap()).len() < 601 {
        assert!(start.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = compact(&[], &[&log]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("live.jsonl") && err.contains("another process is writing it"),
        "{err}"
    );
    for n in 1..30 {
        writeln!(stdin, "{{\"type\":\"tick\",\"n\":{n}}}").unwrap();
    }
    drop(stdin);
    assert!(common::wait_timeout(&mut writer).success());
    assert_eq!(lines(&std::fs::read(&log).unwrap()).len(), 600 + 30);
    // Once the writer is gone, the same log compacts.
    let out = compact(&[], &[&log]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(lines(&std::fs::read(&log).unwrap()).len(), 600 + 30);
}

/// #11.7: `--compact` turned a README into non_json records and a binary into U+FFFD: files
/// that are not logs are refused and left byte for byte; so is a result larger than the input.
#[test]
fn compact_refuses_files_that_are_not_logs() {
    let dir = tempdir("not-logs");
    let readme = dir.join("README.md");
    std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"), &readme).unwrap();
    let binary = dir.join("smart-tee.bin");
    std::fs::copy(env!("CARGO_BIN_EXE_smart-tee"), &binary).unwrap();
    // One non-JSON line in eleven, dense with control bytes: its record would be six times its
    // size.
    let grows = dir.join("grows.jsonl");
    let mut data = b"{\"a\":1}\n".repeat(10);
    data.extend_from_slice(&[1u8; 600]);
    data.push(b'\n');
    std::fs::write(&grows, &data).unwrap();
    for (file, why) in [
        (&readme, "are not JSON: not a log"),
        (&binary, "NUL bytes"),
        (&grows, "would make it larger"),
    ] {
        let before = std::fs::read(file).unwrap();
        let out = compact(&[], &[file]);
        assert_eq!(out.status.code(), Some(1), "{file:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(why) && err.contains(file.file_name().unwrap().to_str().unwrap()),
            "{err}"
        );
        assert!(std::fs::read(file).unwrap() == before, "{file:?} untouched");
    }
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        3,
        "no temporary file left"
    );
}

/// #11.9: compaction reads through the tee path's splitter and memory caps: a line past the
/// memory cap (here 20 MB) is reduced while read, not held whole, and keeps its structure.
#[test]
fn compact_reads_giant_lines_with_the_tee_paths_caps() {
    let dir = tempdir("compact-giant");
    let log = dir.join("g.jsonl");
    let big = smart_tee::tee::log::STREAM_CAP + (12 << 20);
    let mut data = b"{\"type\":\"user\",\"uuid\":\"u-1\",\"content\":\"".to_vec();
    data.extend(std::iter::repeat_n(b'x', big));
    data.extend_from_slice(b"\"}\n{\"type\":\"next\"}\n");
    std::fs::write(&log, &data).unwrap();
    let out = compact(&[], &[&log]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let now = std::fs::read(&log).unwrap();
    let ls = lines(&now);
    assert_eq!(ls.len(), 2);
    let v = strict_parse(ls[0]).unwrap();
    assert_eq!((&v["type"], &v["uuid"]), (&"user".into(), &"u-1".into()));
    assert!(
        v["content"]
            .as_str()
            .unwrap()
            .contains(&format!("[TRUNCATED: {big} → "))
    );
    assert_eq!(now, common::log_of(&data, &common::config(5120), 1 << 20));
}

/// #11.2 for readers: an unfinished last line (a writer killed mid-line) is in progress, not a
/// line: `--compact` copies it unprocessed after the compacted whole lines, and `--view` does not
/// show it.
#[test]
fn an_unfinished_last_line_is_left_in_progress() {
    let dir = tempdir("unfinished");
    let log = dir.join("u.jsonl");
    let mut data = format!(
        "{{\"type\":\"user\",\"content\":\"{}\"}}\n{{\"type\":\"ok\"}}\n",
        "c".repeat(20_000)
    )
    .into_bytes();
    data.extend_from_slice(b"{\"type\":\"half");
    std::fs::write(&log, &data).unwrap();
    let out = common::run_cmd(bin().args(["--view", "--format", "jsonl"]).arg(&log), b"");
    assert!(out.status.success());
    let shown = String::from_utf8(out.stdout).unwrap();
    assert!(
        !shown.contains("half") && !shown.contains("non_json"),
        "{shown}"
    );
    assert_eq!(shown.lines().count(), 2, "{shown}");
    let out = compact(&[], &[&log]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let now = std::fs::read(&log).unwrap();
    assert!(now.ends_with(b"\n{\"type\":\"ok\"}\n{\"type\":\"half"));
    assert!(now.len() < 6000);
}

/// Runs `--view ARGS` and returns its output whatever the status.
fn view_any(args: &[&str]) -> Output {
    common::run_cmd(bin().arg("--view").args(args), b"")
}

fn write_log(dir: &Path, name: &str, lines: &[&str]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(
        &p,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    p
}

/// #14.1: `--head 1 f1 f2` printed 2 events and `--head 0` one per file: the count is over all
/// the files.
#[test]
fn head_counts_events_across_files() {
    let dir = tempdir("head-files");
    let a = write_log(
        &dir,
        "a.jsonl",
        &[r#"{"type":"a","n":1}"#, r#"{"type":"a","n":2}"#],
    );
    let b = write_log(&dir, "b.jsonl", &[r#"{"type":"b","n":3}"#]);
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    for (n, want) in [("0", 0), ("1", 1), ("2", 2), ("3", 3), ("9", 3)] {
        let out = view(&["--head", n, "--format", "jsonl", a, b]);
        assert_eq!(lines(&out.stdout).len(), want, "--head {n}");
    }
}

/// #14.2: a text field holding `\e[2J\e]0;pwned\a` cleared the screen and set the window
/// title; control characters are escaped in the text view.
#[test]
fn terminal_escapes_in_a_log_are_made_visible() {
    let dir = tempdir("inject");
    let log = write_log(
        &dir,
        "l.jsonl",
        &[
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"\u001b[2J\u001b]0;pwned\u0007 \u001b[31mred\r\u009b"}]}}"#,
        ],
    );
    let out = view(&["--color", "never", log.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        !text.bytes().any(|b| b == 0x1b || b == 0x07 || b == b'\r'),
        "{text:?}"
    );
    assert!(!text.contains('\u{9b}'));
    assert!(
        text.contains("\\e[2J\\e]0;pwned\\x07 \\e[31mred\\r"),
        "{text}"
    );
}

/// #14.3: `--grep` showed events whose match had been cut away; the match is kept visible,
/// beside the cut event, in every format.
#[test]
fn grep_keeps_the_match_visible() {
    let dir = tempdir("grep-match");
    let body = format!(
        "{}NEEDLE_42 in the middle{}",
        "a ".repeat(10_000),
        " z".repeat(10_000)
    );
    let line = serde_json::json!({"type":"user","message":{"content":[{"type":"tool_result","content":body}]}}).to_string();
    let log = write_log(&dir, "l.jsonl", &[&line, r#"{"type":"other"}"#]);
    let log = log.to_str().unwrap();
    for format in ["text", "jsonl", "json"] {
        let out = view(&["--grep", "NEEDLE_42", "--format", format, log]);
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.contains("NEEDLE_42"),
            "{format}: {}",
            &text[..text.len().min(300)]
        );
        if format != "text" {
            let v: Value = serde_json::from_str(text.trim()).unwrap();
            let ev = if format == "json" { v[0].clone() } else { v };
            assert!(ev["_match"].as_str().unwrap().contains("NEEDLE_42"));
            assert!(text.trim().len() <= 5120 + 2);
        }
    }
}

/// #14.4: `--max-tokens 1000` printed 104 lines of `time assistant` with nothing else; each
/// line now carries its gist, cut to the event's share of the budget.
#[test]
fn small_token_budgets_still_show_each_events_gist() {
    let path = transcript();
    for tokens in ["1000", "2000"] {
        let out = view(&["--max-tokens", tokens, "--exclude-type", "progress", &path]);
        let text = String::from_utf8(out.stdout).unwrap();
        let events: Vec<&str> = text.lines().skip(1).collect();
        assert!(events.len() >= 3, "{text}");
        let empty = events
            .iter()
            .filter(|l| l.split_whitespace().count() <= 3)
            .count();
        assert!(
            empty * 10 <= events.len(),
            "{empty} of {} lines without a gist:\n{text}",
            events.len()
        );
    }
}

/// #14.6: one missing file stopped everything; it is reported and the others are shown (exit
/// 1), with --head and --tail alike.
#[test]
fn a_missing_file_does_not_stop_the_others() {
    let dir = tempdir("missing");
    let a = write_log(&dir, "a.jsonl", &[r#"{"type":"a"}"#]);
    let b = write_log(&dir, "b.jsonl", &[r#"{"type":"b"}"#]);
    let missing = dir.join("missing.jsonl");
    for mode in [["--head", "5"], ["--tail", "5"], ["--max-tokens", "1000"]] {
        let out = view_any(&[
            mode[0],
            mode[1],
            "--format",
            "jsonl",
            a.to_str().unwrap(),
            missing.to_str().unwrap(),
            b.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(1), "{mode:?}");
        assert_eq!(lines(&out.stdout).len(), 2, "{mode:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("missing.jsonl"));
    }
}

/// #14.8: with several files each line says which file it is from; file paths in arguments
/// keep their file name; a `+02:00` offset is kept.
#[test]
fn the_text_view_keeps_what_matters() {
    let dir = tempdir("text-view");
    let a = write_log(
        &dir,
        "agent-1.jsonl",
        &[
            r#"{"type":"assistant","timestamp":"2026-11-20T10:00:00.000+02:00","message":{"content":[{"type":"tool_use","name":"Read","input":{"file_path":"/home/user/projects/spotter-worktrees/spotter-dov/lib/spotter/transcripts/parser.ex"}}]}}"#,
        ],
    );
    let b = write_log(&dir, "agent-2.jsonl", &[r#"{"type":"zeta","b":1,"a":2}"#]);
    let out = view(&["--color", "never", a.to_str().unwrap(), b.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    let ls: Vec<&str> = text.lines().collect();
    assert!(
        ls[0].starts_with("agent-1.jsonl: #1 2026-11-20 10:00:00+02:00 assistant"),
        "{text}"
    );
    assert!(
        ls[0].contains("transcripts/parser.ex"),
        "the file name stays: {text}"
    );
    assert!(ls[1].starts_with("agent-2.jsonl: "), "{text}");
    // #31.1: an event nobody knows gets its fields, in the event's own order, never JSON.
    assert!(ls[1].ends_with(" zeta b=1 a=2"), "{text}");
}

/// Piped standard input among several files was shown by the name of its private copy (a
/// number, `3: #1 …`): it is `standard input`, as in the report page's title.
#[test]
fn piped_stdin_among_several_files_is_named_standard_input() {
    let dir = tempdir("text-view-stdin");
    let a = write_log(&dir, "agent-1.jsonl", &[r#"{"type":"zeta","b":1}"#]);
    let mut cmd = common::bin();
    cmd.args(["--view", "--color", "never", "-", a.to_str().unwrap()]);
    let out = common::run_cmd(&mut cmd, b"{\"type\":\"eta\",\"c\":2}\n");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let ls: Vec<&str> = text.lines().collect();
    assert_eq!(ls.len(), 2, "{text}");
    assert!(ls[0].starts_with("standard input: #1 eta"), "{text}");
    assert!(ls[1].starts_with("agent-1.jsonl: #1 zeta"), "{text}");
    // The summaries give it as it was given, `-` (they said `3` and `/proc/self/fd/3`).
    for format in ["json", "csv", "text"] {
        let mut cmd = common::bin();
        cmd.args(["--view", "--summary", "--by-run", "--format", format, "-"]);
        let out = common::run_cmd(cmd.arg(&a), b"{\"type\":\"eta\",\"c\":2}\n");
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            !text.contains("/proc/self/fd") && !text.contains("/dev/stdin"),
            "{text}"
        );
        let files: Vec<&str> = match format {
            "json" => text.matches("\"file\":\"-\"").collect(),
            _ => text
                .lines()
                .filter(|l| l.starts_with("- ") || l.starts_with("-,"))
                .collect(),
        };
        assert_eq!(files.len(), 1, "{format}: {text}");
    }
}

/// An event without a time, rendered again to fill the room a small budget left
/// (`Window::fill`), lost the time column's blank: `#7 assistant …` under `#6 2026-… user`.
#[test]
fn a_filled_event_without_a_time_keeps_the_time_column() {
    let dir = tempdir("fill-pad");
    let mut lines: Vec<String> = (0..6)
        .map(|i| {
            format!(
                r#"{{"type":"user","timestamp":"2026-11-20T10:00:0{i}Z","message":{{"content":"hello there number {i}"}}}}"#
            )
        })
        .collect();
    lines.push(format!(
        r#"{{"type":"assistant","message":{{"content":[{{"type":"text","text":"{}"}}]}}}}"#,
        "word ".repeat(3000)
    ));
    lines.push(
        r#"{"type":"user","timestamp":"2026-11-20T10:00:09Z","message":{"content":"ok"}}"#.into(),
    );
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let log = write_log(&dir, "t.jsonl", &refs);
    let out = view(&[
        "--color",
        "never",
        "--max-tokens",
        "100",
        log.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    assert!(out.stdout.len() <= 300, "{} bytes", out.stdout.len());
    let text = String::from_utf8(out.stdout).unwrap();
    let filled = text
        .lines()
        .find(|l| l.starts_with("#7 "))
        .expect("#7 shown");
    assert!(
        filled.starts_with(&format!("#7 {}assistant word", " ".repeat(20))),
        "{text}"
    );
}

/// Under a small budget with several files, the room a fill had left showed a line cut to the
/// file's name (`marot__spotter__agent-a2898e3…`): a line that says where an event is and not
/// what it is is not shown. Every event line keeps its type, at every budget.
#[test]
fn a_line_cut_to_its_file_name_is_not_shown() {
    let files = [
        "tests/data/real/charlieyou__claude-agent-sdk-gleam__basic_query.jsonl",
        "tests/data/real/marot__spotter__agent-a2898e3.jsonl",
    ];
    // File, number, a time or its blank, then the type (a word, not the cut's mark).
    let event =
        regex::Regex::new(r"^[^ ]+\.jsonl: #\d+ (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d|\s{20}) [a-z_]+")
            .unwrap();
    for tokens in (100..=600).step_by(20) {
        let t = tokens.to_string();
        let out = view(&["--color", "never", "--max-tokens", &t, files[0], files[1]]);
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        for line in text.lines().filter(|l| !l.starts_with('…')) {
            assert!(
                event.is_match(line),
                "--max-tokens {tokens}: {line:?}\n{text}"
            );
        }
    }
}

/// Found by the read side's attack (#49): `--view` of a FIFO nobody writes to waited in `open`
/// for ever (MCP opens without waiting; the command line did not), and `<(cat log)` failed
/// with "Illegal seek". A log that is not a regular file is refused without waiting, named with
/// what it is, and the other files are shown.
#[test]
fn a_fifo_given_as_a_log_is_refused_without_waiting() {
    let dir = tempdir("view-fifo");
    let fifo = dir.join("f.jsonl");
    common::mkfifo(&fifo);
    let log = write_log(&dir, "l.jsonl", &[r#"{"type":"alpha"}"#]);
    for args in [
        &["--view"][..],
        &["--view", "--tail", "1"],
        &["--view", "--max-tokens", "1000"],
        &["--view", "--summary"],
    ] {
        let mut cmd = common::bin();
        cmd.args(args).arg(&log).arg(&fifo);
        let out = common::run_cmd(&mut cmd, b"");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("f.jsonl") && err.contains("FIFO"),
            "{args:?}: {err}"
        );
        let shown = String::from_utf8_lossy(&out.stdout);
        assert!(
            shown.contains("alpha") || args.contains(&"--summary"),
            "{args:?}: {shown}"
        );
    }
}

/// Filters people ask for: --exclude-type, --errors, --since/--until.
#[test]
fn exclude_errors_and_time_filters() {
    let path = transcript();
    let all = lines(&view(&["--format", "jsonl", &path]).stdout).len();
    let out = view(&["--format", "jsonl", "--exclude-type", "progress", &path]);
    let kept = lines(&out.stdout);
    assert!(kept.len() < all && kept.len() > 100);
    assert!(
        kept.iter()
            .all(|l| !String::from_utf8_lossy(l).starts_with(r#"{"type":"progress""#))
    );
    let errors = view(&["--format", "jsonl", "--errors", &path]);
    assert!(!lines(&errors.stdout).is_empty());
    for l in lines(&errors.stdout) {
        let v = strict_parse(l).unwrap();
        assert!(smart_tee::read::view::is_error_event(&v), "{v}");
    }
    let dir = tempdir("since");
    let log = write_log(
        &dir,
        "t.jsonl",
        &[
            r#"{"type":"a","timestamp":"2026-11-20T09:59:59.000Z"}"#,
            r#"{"type":"b","timestamp":"2026-11-20T10:00:00.000Z"}"#,
            r#"{"type":"c","timestamp":1795176000000}"#,
            r#"{"type":"d"}"#,
        ],
    );
    let out = view(&[
        "--format",
        "jsonl",
        "--since",
        "2026-11-20T10:00",
        "--until",
        "2026-11-21",
        log.to_str().unwrap(),
    ]);
    let types: Vec<String> = lines(&out.stdout)
        .iter()
        .map(|l| {
            strict_parse(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(types, ["b", "c"]);
}

/// Spawns `--view --follow` on `log`; its stdout lines come through a channel.
pub(crate) fn follow(log: &Path) -> (std::process::Child, std::sync::mpsc::Receiver<String>) {
    let mut child = bin()
        .args(["--view", "--follow", "--format", "jsonl"])
        .arg(log)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let rx = lines_of(child.stdout.take().unwrap());
    (child, rx)
}

/// The lines `r` gives, through a channel (read by [`next`], with its timeout).
pub(crate) fn lines_of(
    r: impl std::io::Read + Send + 'static,
) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(r).lines() {
            if tx.send(line.unwrap_or_default()).is_err() {
                break;
            }
        }
    });
    rx
}

pub(crate) fn next(rx: &std::sync::mpsc::Receiver<String>) -> String {
    rx.recv_timeout(common::CHILD_TIMEOUT)
        .expect("a line from --follow in time")
}

/// #14.7: after a `--compact`, `--follow` re-printed the whole file; it goes on after the lines
/// it had read.
#[test]
fn follow_goes_on_after_a_compaction() {
    let dir = tempdir("follow-compact");
    let big = format!(
        r#"{{"type":"user","n":1,"content":"{}"}}"#,
        "x".repeat(20_000)
    );
    let log = write_log(&dir, "l.jsonl", &[&big, r#"{"type":"user","n":2}"#]);
    let (mut child, rx) = follow(&log);
    assert!(next(&rx).contains(r#""n":1"#));
    assert!(next(&rx).contains(r#""n":2"#));
    let out = common::run_cmd(bin().arg("--compact").arg(&log), b"");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    f.write_all(b"{\"type\":\"user\",\"n\":3}\n").unwrap();
    assert_eq!(next(&rx), r#"{"type":"user","n":3}"#);
    child.kill().unwrap();
    common::wait_timeout(&mut child);
}

/// #14.7: a file truncated and rewritten gave a bogus `non_json }` event, and a file that did
/// not exist yet ended the follow with status 1 (`tail -F` waits).
#[test]
fn follow_waits_for_a_file_and_survives_truncation() {
    let dir = tempdir("follow-wait");
    let log = dir.join("later.jsonl");
    let (mut child, rx) = follow(&log);
    std::fs::write(
        &log,
        "{\"type\":\"first\",\"pad\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}\n",
    )
    .unwrap();
    assert_eq!(
        next(&rx),
        r#"{"type":"first","pad":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}"#
    );
    std::fs::write(&log, "{\"type\":\"again\"}\n").unwrap();
    assert_eq!(next(&rx), r#"{"type":"again"}"#);
    assert!(child.try_wait().unwrap().is_none(), "still following");
    child.kill().unwrap();
    common::wait_timeout(&mut child);
}

/// #14.7: `--follow | head -1` never exited; it ends once its reader has gone, and --follow
/// with --format json is refused (a JSON array cannot grow).
#[test]
fn follow_ends_when_its_reader_goes_away() {
    let dir = tempdir("follow-pipe");
    let log = write_log(&dir, "l.jsonl", &[r#"{"type":"a"}"#]);
    let (mut child, rx) = follow(&log);
    assert_eq!(next(&rx), r#"{"type":"a"}"#);
    drop(rx); // the reading thread ends at its next line; close the pipe now
    // The pipe's read end closes when the reader thread's BufReader is dropped: send it a line.
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    f.write_all(b"{\"type\":\"b\"}\n").unwrap();
    let status = common::wait_timeout(&mut child);
    assert!(status.success(), "{status:?}");
    let out = view_any(&["--follow", "--format", "json", log.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
}

/// `--summary`: one screen that says what happened, in text and JSON, within `--max-tokens`.
#[test]
fn summary_says_what_happened() {
    let basic = corpus_files()
        .into_iter()
        .find(|f| f.to_string_lossy().contains("basic_query"))
        .unwrap();
    let out = view(&["--summary", basic.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("cost      $0.1355"), "{text}");
    assert!(text.contains("ended     success: 4"), "{text}");
    let codex = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/format-codex-exec/input.jsonl"
    );
    let out = view(&["--summary", "--format", "json", codex]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["turns"], 1);
    // OpenAI's input counts the cached input (#48): uncached 315, cache read 24,448.
    assert_eq!(v["input_tokens"], 315);
    assert_eq!(v["cache_read_input_tokens"], 24448);
    assert_eq!(v["total_input_tokens"], 24763);
    assert_eq!(v["cache_creation_input_tokens"], Value::Null);
    assert_eq!(v["tools"]["shell"], 1);
    assert_eq!(v["files_written"][0], "src/lib.rs");
    assert_eq!(v["ended"], "turn.completed");
    for path in corpus_files() {
        for format in ["text", "json"] {
            let out = view(&[
                "--summary",
                "--max-tokens",
                "100",
                "--format",
                format,
                path.to_str().unwrap(),
            ]);
            assert!(
                out.stdout.len() <= 300,
                "{path:?} {format}: {} bytes",
                out.stdout.len()
            );
        }
    }
}

/// Colours only when asked or on a terminal: piped output carries no escapes.
#[test]
fn colours_only_on_a_terminal_or_when_asked() {
    let path = transcript();
    let piped = view(&["--tail", "20", &path]);
    assert!(!piped.stdout.contains(&0x1b), "no escapes when piped");
    let coloured = view(&["--tail", "20", "--color", "always", &path]);
    assert!(
        coloured.stdout.windows(2).any(|w| w == b"\x1b["),
        "colours when asked"
    );
    let jsonl = view(&[
        "--tail", "20", "--color", "always", "--format", "jsonl", &path,
    ]);
    assert!(!jsonl.stdout.contains(&0x1b), "never in JSON");
}

/// Compressed logs (`.gz`, `.zst`, told by their first bytes) read like plain ones, `--tail`
/// and `--max-tokens` included.
#[test]
fn compressed_logs_read_like_plain_ones() {
    use std::io::Write as _;
    let path = transcript();
    let plain = std::fs::read(&path).unwrap();
    let dir = tempdir("compressed");
    let gz = dir.join("t.jsonl.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&plain).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let zst = dir.join("t.jsonl.zst");
    let packed = zstd::stream::encode_all(&plain[..], 1).unwrap();
    std::fs::write(&zst, packed).unwrap();
    for args in [
        &["--format", "jsonl"][..],
        &["--tail", "7", "--format", "jsonl"],
        &["--head", "5"],
        &["--max-tokens", "2000"],
        &["--summary", "--format", "json"],
    ] {
        let want = view(&[args, &[path.as_str()]].concat()).stdout;
        for f in [&gz, &zst] {
            let got = view(&[args, &[f.to_str().unwrap()]].concat()).stdout;
            assert!(got == want, "{args:?} {f:?}");
        }
    }
}

/// #31.2: `--summary` of a file that resets into a second conversation, or holds runs
/// appended with `-a`, reported only the first. Each conversation gets its own summary, and
/// the total counts them all, in text and JSON, within the budget.
#[test]
fn summary_gives_each_conversation_and_a_total() {
    let dir = common::tempdir("view-conversations");
    let log = dir.join("runs.jsonl");
    let run = |session: &str, cost: &str, ok: bool| {
        format!(
            "{{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"{session}\",\"model\":\"m\"}}\n\
             {{\"type\":\"assistant\",\"session_id\":\"{session}\",\"message\":{{\"content\":[{{\"type\":\"tool_use\",\"name\":\"Read\",\"input\":{{}}}}]}}}}\n\
             {{\"type\":\"result\",\"subtype\":\"{}\",\"is_error\":{},\"session_id\":\"{session}\",\"total_cost_usd\":{cost}}}\n",
            if ok { "success" } else { "error_max_turns" },
            !ok
        )
    };
    for (session, cost, ok) in [("s1", "0.25", true), ("s2", "0.5", false)] {
        let out = common::run_cmd(bin().arg("-a").arg(&log), run(session, cost, ok).as_bytes());
        assert!(out.status.success(), "{out:?}");
    }
    let reset = r#"{"type":"conversation_reset","session_id":"s2","new_conversation_id":"c3","trigger":"clear"}"#;
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    writeln!(f, "{reset}").unwrap();
    writeln!(f, r#"{{"type":"assistant","session_id":"c3","message":{{"content":[{{"type":"text","text":"hi"}}]}}}}"#).unwrap();
    drop(f);
    let out = view(&["--summary", "--format", "json", log.to_str().unwrap()]);
    let v: Value = strict_parse(out.stdout.trim_ascii_end()).unwrap();
    assert_eq!(v["conversation_count"], 3, "{v}");
    let convs = v["conversations"].as_array().unwrap();
    let ids: Vec<&str> = convs
        .iter()
        .map(|c| c["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["s1", "s2", "c3"]);
    let states: Vec<(&Value, &Value)> = convs.iter().map(|c| (&c["state"], &c["ok"])).collect();
    assert_eq!(states[0], (&Value::from("finished"), &Value::from(true)));
    assert_eq!(states[1], (&Value::from("finished"), &Value::from(false)));
    assert_eq!(states[2].0, "ended without a final event");
    assert_eq!(convs[0]["cost_usd"], 0.25);
    assert_eq!(v["cost_usd"], 0.75);
    assert_eq!(v["tool_calls"], 2);
    assert_eq!(v["state"], "ended without a final event");
    let out = view(&["--summary", log.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    for want in [
        "── conversation 1 of 3\nstate     finished, ok\nsession   s1\n",
        "── conversation 3 of 3\nstate     ended without a final event\nsession   c3\n",
        "── total of 3 conversations\n",
        "cost      $0.7500\n",
    ] {
        assert!(text.contains(want), "{want:?} in:\n{text}");
    }
    for tokens in ["100", "300", "1000"] {
        let out = view(&[
            "--summary",
            "--format",
            "json",
            "--max-tokens",
            tokens,
            log.to_str().unwrap(),
        ]);
        let budget: usize = tokens.parse::<usize>().unwrap() * 3;
        assert!(out.stdout.len() <= budget, "{tokens}: {}", out.stdout.len());
        strict_parse(out.stdout.trim_ascii_end()).unwrap();
        let out = view(&["--summary", "--max-tokens", tokens, log.to_str().unwrap()]);
        assert!(out.stdout.len() <= budget, "{tokens}: {}", out.stdout.len());
    }
}

/// #31.4: formats drift under their readers; `--summary` names the agent and its version and
/// counts the event types and subtypes the rules do not know, with the line of the first.
#[test]
fn summary_names_the_agent_version_and_counts_unknown_event_types() {
    let dir = common::tempdir("view-drift");
    let log = write_log(
        &dir,
        "drift.jsonl",
        &[
            r#"{"type":"system","subtype":"init","session_id":"d","claude_code_version":"2.9.0"}"#,
            r#"{"type":"system","subtype":"warp_drive","session_id":"d"}"#,
            r#"{"type":"assistant","message":{"content":[]}}"#,
            r#"{"type":"system","subtype":"warp_drive","session_id":"d"}"#,
            r#"{"type":"hologram","session_id":"d"}"#,
        ],
    );
    let out = view(&["--summary", "--format", "json", log.to_str().unwrap()]);
    let v: Value = strict_parse(out.stdout.trim_ascii_end()).unwrap();
    assert_eq!(v["agent"], "claude-code");
    assert_eq!(v["agent_version"], "2.9.0");
    assert_eq!(
        v["unknown_events"],
        serde_json::json!({"hologram": {"count": 1, "first_line": 5}, "system/warp_drive": {"count": 2, "first_line": 2}})
    );
}

/// The total of several conversations adds up their turns, tokens and reported time: it gave
/// the last conversation's `num_turns` and `duration_ms`, and only the tokens of conversations
/// whose result carried a total (3 turns, then a reset and 1 turn, read "turns 1"). The
/// sample's numbers, counted by hand: the first conversation's `modelUsage` (4 uncached, 38,400
/// read, 2,700 written, 70 out), the second's one message (5, 0, 900, 12: its result has none).
#[test]
fn the_total_of_two_conversations_adds_their_turns_tokens_and_time() {
    let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/two-conversations.jsonl");
    let out = view(&["--summary", "--format", "json", log.to_str().unwrap()]);
    let v: Value = strict_parse(out.stdout.trim_ascii_end()).unwrap();
    let convs = v["conversations"].as_array().unwrap();
    let each = |key: &str| -> Vec<Value> { convs.iter().map(|c| c[key].clone()).collect() };
    assert_eq!(each("turns"), [Value::from(2), Value::from(1)], "{v}");
    assert_eq!(
        each("input_tokens"),
        [Value::from(4), Value::from(5)],
        "{v}"
    );
    assert_eq!(
        each("total_input_tokens"),
        [Value::from(41104), Value::from(905)],
        "{v}"
    );
    assert_eq!(v["turns"], 3, "{v}");
    let total: Vec<&Value> = [
        "input_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
        "output_tokens",
    ]
    .iter()
    .map(|k| &v[*k])
    .collect();
    assert_eq!(total, [9, 38400, 3600, 82], "{v}");
    assert_eq!(v["duration_ms"], 42000, "{v}");
}

/// A Codex rollout file ends its turn with `event_msg/task_complete` (or `turn_aborted` when
/// interrupted): a finished rollout read "ended without a final event".
#[test]
fn a_codex_rollout_ends_with_task_complete_or_turn_aborted() {
    let dir = tempdir("rollout-end");
    let start = r#"{"timestamp":"2026-11-21T10:00:00.000Z","type":"session_meta","payload":{"id":"019b","cli_version":"0.145.1"}}"#;
    for (last, state, ended) in [
        (
            r#"{"timestamp":"2026-11-21T10:00:09.000Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"1","last_agent_message":"Done."}}"#,
            "finished",
            "task_complete: Done.",
        ),
        (
            r#"{"timestamp":"2026-11-21T10:00:09.000Z","type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}}"#,
            "finished",
            "turn_aborted: interrupted",
        ),
    ] {
        let log = dir.join("rollout.jsonl");
        std::fs::write(&log, format!("{start}\n{last}\n")).unwrap();
        let out = view(&["--summary", "--format", "json", log.to_str().unwrap()]);
        let v: Value = strict_parse(out.stdout.trim_ascii_end()).unwrap();
        assert_eq!(v["state"], state, "{v}");
        assert_eq!(v["ok"], ended.starts_with("task_complete"), "{v}");
        assert_eq!(v["ended"], ended, "{v}");
    }
}

/// One line of text, not JSON, under a budget it does not fit whole
/// (`max_tokens_is_never_exceeded` found it): room was kept for a first line saying what was
/// left out even when nothing was, so the line cut to what remained was cut to less than the
/// least an event is cut to, and left out: the output was that first line alone, 59 of 193
/// bytes.
#[test]
fn one_line_cut_to_a_small_budget_is_shown_not_omitted() {
    let line = br#""mS{$'b%"'n'bCp<%_Rmy=:<=Sb1zs?,QiP?!ZJ${/N*3b'#LqRF$R'ZS/"\*\%yR? ?A?605rtjYn*|6oZ`4<ZL<:,H<U<\/a]=e*MFXl5A>=`?.Y*C5}qt$!V`on{q\{&%3_/:wZQ(`e$?ok$d Ls/=<="#;
    let opts = ViewOptions {
        format: Format::Json,
        max_tokens: Some(110),
        bytes_per_token: 1.7591356509378704,
        ..ViewOptions::new(vec![])
    };
    let mut out = Vec::new();
    render_events(&[line.to_vec()], &opts, &mut out);
    let out = String::from_utf8(out).unwrap();
    assert!(out.len() <= 193, "{out}");
    assert!(out.contains(r#""type":"non_json""#), "{out}");
    assert!(!out.contains("omitted"), "{out}");
}

/// #50: `--type function_call_output` on a Codex rollout printed nothing: only the top-level
/// `response_item` matched, though the view prints `response_item/function_call_output`. Any
/// level of the printed type matches now, in the CLI and in MCP `read_log`.
#[test]
fn type_matches_any_level_of_the_type_the_view_prints() {
    let dir = tempdir("type-levels");
    let log = dir.join("rollout.jsonl");
    std::fs::write(
        &log,
        concat!(
            r#"{"timestamp":"2026-01-02T10:00:00Z","type":"session_meta","payload":{"id":"r1","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.46.0"}}"#,
            "\n",
            r#"{"timestamp":"2026-01-02T10:00:01Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"}}"#,
            "\n",
            r#"{"timestamp":"2026-01-02T10:00:02Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"a.txt"}}"#,
            "\n",
        ),
    )
    .unwrap();
    let shown = |t: &str| {
        let out = common::run_cmd(bin().args(["--view", "--type", t]).arg(&log), b"");
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).lines().count()
    };
    assert_eq!(shown("function_call_output"), 1);
    assert_eq!(shown("response_item/function_call_output"), 1);
    assert_eq!(shown("response_item"), 2);
    assert_eq!(shown("function_call"), 1);
    assert_eq!(shown("function"), 0, "a level is matched whole");
    let out = common::run_cmd(
        bin()
            .args(["--view", "--exclude-type", "function_call_output"])
            .arg(&log),
        b"",
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 2);
}

/// #48: the summary of smart-tee's log of a stream said other things than the stream's own:
/// the loop script's text lines between runs counted as events, and an error's size counted a
/// cut string's escaped bytes but an uncut one's decoded bytes. At the default budget the log
/// and its original give the same summary, in text and JSON, for every real log and every
/// agent fixture (the three files of format-three-files in one call too).
#[test]
fn a_log_and_its_original_give_the_same_summary() {
    let dir = common::tempdir("view-same-summary");
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut sets: Vec<Vec<PathBuf>> = corpus_files().into_iter().map(|f| vec![f]).collect();
    for entry in std::fs::read_dir(&golden).unwrap() {
        let case = entry.unwrap().path();
        if case
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("format-")
        {
            let mut set = vec![case.join("input.jsonl")];
            let mut also: Vec<PathBuf> = std::fs::read_dir(&case)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| {
                    p.file_name()
                        .unwrap()
                        .to_string_lossy()
                        .starts_with("also-")
                })
                .collect();
            also.sort();
            set.extend(also);
            sets.push(set);
        }
    }
    assert!(sets.len() > 20, "{} sets", sets.len());
    for (k, set) in sets.iter().enumerate() {
        let logs: Vec<PathBuf> = set
            .iter()
            .enumerate()
            .map(|(j, input)| {
                let log = dir.join(format!("{k}-{j}.jsonl"));
                let out = common::run_cmd(bin().arg(&log), &std::fs::read(input).unwrap());
                assert!(out.status.success());
                log
            })
            .collect();
        for format in ["text", "json"] {
            let summary = |files: &[PathBuf]| {
                let out = common::run_cmd(
                    bin().args(["--summary", "--format", format]).args(files),
                    b"",
                );
                assert!(out.status.success());
                String::from_utf8(out.stdout).unwrap()
            };
            // Each conversation names its file, which differs; all else is the same.
            let unnamed = |s: String| match serde_json::from_str::<Value>(&s) {
                Ok(mut v) if format == "json" => {
                    for c in v["conversations"].as_array_mut().into_iter().flatten() {
                        c.as_object_mut().map(|o| o.shift_remove("file"));
                    }
                    v.to_string()
                }
                _ => s,
            };
            assert_eq!(
                unnamed(summary(set)),
                unnamed(summary(&logs)),
                "{set:?} ({format})"
            );
        }
    }
}

/// #50: `claude -p`'s stream carries no times. On such a log `--summary` says how to get them,
/// and `--view --since` says once why it showed nothing, instead of an empty answer.
#[test]
fn a_log_without_times_says_how_to_get_them() {
    let dir = tempdir("no-times");
    let log = dir.join("a.jsonl");
    std::fs::write(
        &log,
        "{\"type\":\"system\",\"subtype\":\"init\"}\n{\"type\":\"result\",\"subtype\":\"success\"}\n",
    )
    .unwrap();
    let log = log.to_str().unwrap();
    let out = common::run_cmd(bin().args(["--summary", log]), b"");
    let text = String::from_utf8_lossy(&out.stdout);
    let time = text.lines().find(|l| l.starts_with("time")).unwrap();
    assert!(time.contains("--add-timestamp"), "{text}");
    let out = view(&["--since", "2026-01-01", log]);
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("--add-timestamp").count(), 1, "{err}");
    assert!(err.contains("2 left out"), "{err}");
    // A log with times says nothing of it.
    std::fs::write(
        dir.join("b.jsonl"),
        "{\"type\":\"result\",\"subtype\":\"success\",\"timestamp\":\"2026-02-01T00:00:00Z\"}\n",
    )
    .unwrap();
    let b = dir.join("b.jsonl");
    let out = common::run_cmd(bin().args(["--summary", b.to_str().unwrap()]), b"");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("--add-timestamp"));
}

/// Found by the audit of the FIFO refusal (#49): `--follow` took any file it could not open as
/// "not there yet" and waited without a word, on a FIFO given as the log or renamed over it.
/// It says so at once, once, and follows the name again when a regular file takes it.
#[test]
fn follow_says_at_once_that_a_fifo_is_refused() {
    let dir = tempdir("follow-fifo");
    let log = write_log(&dir, "l.jsonl", &[r#"{"type":"alpha"}"#]);
    let fifo = dir.join("f.jsonl");
    common::mkfifo(&fifo);
    let mut child = bin()
        .args(["--view", "--follow", "--format", "jsonl"])
        .arg(&log)
        .arg(&fifo)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = lines_of(child.stdout.take().unwrap());
    let err = lines_of(child.stderr.take().unwrap());
    assert_eq!(next(&out), r#"{"type":"alpha"}"#);
    let said = next(&err);
    assert!(said.contains("f.jsonl") && said.contains("FIFO"), "{said}");
    // A FIFO renamed over the followed log: said once.
    let other = dir.join("g.jsonl");
    common::mkfifo(&other);
    std::fs::rename(&other, &log).unwrap();
    let said = next(&err);
    assert!(said.contains("l.jsonl") && said.contains("FIFO"), "{said}");
    // A regular file takes the name again: followed from its start.
    let new = write_log(&dir, "n.jsonl", &[r#"{"type":"beta"}"#]);
    std::fs::rename(&new, &log).unwrap();
    assert_eq!(next(&out), r#"{"type":"beta"}"#);
    assert!(
        err.try_recv().is_err(),
        "each refusal is said once while it lasts"
    );
    child.kill().unwrap();
    common::wait_timeout(&mut child);
}

/// Found by the audit of the FIFO refusal (#49): a Unix socket given as a log was named "No
/// such device or address" (what `open` says of it), not what it is.
#[test]
fn a_socket_given_as_a_log_is_named_a_socket() {
    let dir = tempdir("view-socket");
    let socket = dir.join("s.jsonl");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let out = common::run_cmd(bin().arg("--view").arg(&socket), b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("s.jsonl") && err.contains("a socket"), "{err}");
}

/// Found by the read side's attack (#49): under `--bytes-per-token 0.5` (50 bytes for 100
/// tokens) the first line saying how many events were left out took 60 bytes alone. It is
/// said briefly (`… N omitted`) when the whole line does not fit, else not at all.
#[test]
fn a_budget_of_a_few_dozen_bytes_is_never_exceeded_by_the_omitted_line() {
    let log = transcript();
    for format in ["text", "jsonl", "json"] {
        for per in ["0.5", "0.6", "0.7", "0.8", "1"] {
            let out = view(&[
                "--format",
                format,
                "--max-tokens",
                "100",
                "--bytes-per-token",
                per,
                &log,
            ]);
            let budget = (100.0 * per.parse::<f64>().unwrap()) as usize;
            assert!(
                out.stdout.len() <= budget,
                "{format} at {per}: {} bytes: {}",
                out.stdout.len(),
                String::from_utf8_lossy(&out.stdout)
            );
            assert!(
                String::from_utf8_lossy(&out.stdout).contains("omitted"),
                "{format} at {per}: the events left out are said"
            );
        }
    }
}

/// Found by the audit (#49): a followed log deleted and written again with at least as many
/// lines as were read was taken for a compaction, and its first lines were skipped (`#3 new3`
/// alone). A compaction renames over the name; a name that went missing holds a new file,
/// read from its start, as `tail -F` reads it.
#[test]
fn follow_reads_a_log_deleted_and_written_again_from_its_start() {
    let dir = tempdir("follow-recreated");
    let log = write_log(
        &dir,
        "l.jsonl",
        &[r#"{"type":"old1"}"#, r#"{"type":"old2"}"#],
    );
    // Followed after the log: once its line shows, the follower has looked at the log's name
    // in the same poll, after the deletion.
    let mark = dir.join("mark.jsonl");
    let mut child = bin()
        .args(["--view", "--follow", "--format", "jsonl"])
        .arg(&log)
        .arg(&mark)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let rx = lines_of(child.stdout.take().unwrap());
    assert_eq!(next(&rx), r#"{"type":"old1"}"#);
    assert_eq!(next(&rx), r#"{"type":"old2"}"#);
    std::fs::remove_file(&log).unwrap();
    write_log(&dir, "mark.jsonl", &[r#"{"type":"mark"}"#]);
    assert_eq!(next(&rx), r#"{"type":"mark"}"#);
    let new = write_log(
        &dir,
        "n.jsonl",
        &[
            r#"{"type":"new1"}"#,
            r#"{"type":"new2"}"#,
            r#"{"type":"new3"}"#,
        ],
    );
    std::fs::rename(&new, &log).unwrap();
    for want in ["new1", "new2", "new3"] {
        assert_eq!(next(&rx), format!(r#"{{"type":"{want}"}}"#));
    }
    child.kill().unwrap();
    common::wait_timeout(&mut child);
}
