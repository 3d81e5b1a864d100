//! Fault tests: kills, concurrent appenders, truncated input, read-only places, FIFOs and
//! symlinks, the budget's floor and ceiling. Each asserts an exact outcome.

use crate::common;

use std::io::Write;
use std::process::{Command, Stdio};

use crate::common::{bin, check_contract, lines, strict_parse};

fn tempdir(name: &str) -> common::TestDir {
    common::tempdir(&format!("faults-{name}"))
}

/// Every line of the log is whole, valid JSON.
fn assert_no_torn_lines(log: &[u8]) {
    assert!(
        log.is_empty() || log.ends_with(b"\n"),
        "the log ends inside a line"
    );
    for l in lines(log) {
        strict_parse(l).unwrap_or_else(|e| {
            panic!("torn or invalid line ({e}): {}", String::from_utf8_lossy(l))
        });
    }
}

/// #11.2 and #11.3, provoked on purpose: a kill -9 or a full disk stops a write mid-line and
/// leaves a torn last line (`benches/stress_kill.sh` does it with real kills). The next `-a`
/// writer, alone on the log, keeps the torn bytes as a `torn` record: nothing glues onto it,
/// and nothing is deleted.
#[test]
fn a_torn_last_line_becomes_a_record_when_appending() {
    let dir = tempdir("torn-sole");
    let log = dir.join("l");
    std::fs::write(&log, b"{\"type\":\"a\"}\n{\"type\":\"b\"}\n{\"ty").unwrap();
    let out = common::run_fed(&["-a"], &log, b"{\"type\":\"after\"}\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(std::fs::read(&log).unwrap()).unwrap(),
        "{\"type\":\"a\"}\n{\"type\":\"b\"}\n{\"type\":\"torn\",\"text\":\"{\\\"ty\"}\n{\"type\":\"after\"}\n"
    );
    // A log that is nothing but a torn line keeps it as a record, then gets the new line.
    std::fs::write(&log, b"{\"type\":\"half").unwrap();
    common::run_fed(&["-a"], &log, b"{\"n\":1}\n");
    assert_eq!(
        String::from_utf8(std::fs::read(&log).unwrap()).unwrap(),
        "{\"type\":\"torn\",\"text\":\"{\\\"type\\\":\\\"half\"}\n{\"n\":1}\n"
    );
}

/// When another writer holds the log (its shared lock, taken here by the test itself), the torn
/// line may be that writer's to finish: it is left, and the new output starts on a fresh line.
#[test]
fn a_torn_last_line_with_another_writer_gets_a_fresh_line() {
    let dir = tempdir("torn-shared");
    let log = dir.join("l");
    std::fs::write(&log, b"{\"type\":\"a\"}\n{\"ty").unwrap();
    let other = std::fs::File::open(&log).unwrap();
    other.lock_shared().unwrap();
    let out = common::run_fed(&["-a"], &log, b"{\"type\":\"after\"}\n");
    assert!(out.status.success());
    assert_eq!(
        std::fs::read(&log).unwrap(),
        b"{\"type\":\"a\"}\n{\"ty\n{\"type\":\"after\"}\n"
    );
    drop(other);
}

/// Two writers that open a torn log before either writes (agents started together, each with
/// `-a`): each saw the torn line, and each used to end it, the second with a blank line (not
/// JSON). The first write looks again: one newline ends the torn line, and no line is blank.
#[test]
fn two_writers_that_opened_a_torn_log_together_leave_no_blank_line() {
    use smart_tee::tee::sink::{DEFAULT_MODE, LogSink};
    let dir = tempdir("torn-two");
    let log = dir.join("l");
    std::fs::write(&log, b"{\"type\":\"a\"}\n{\"ty").unwrap();
    // A third writer holds the log, so neither is alone on it to cut the torn line back.
    let other = std::fs::File::open(&log).unwrap();
    other.lock_shared().unwrap();
    let mut first = LogSink::open(&log, true, DEFAULT_MODE).unwrap();
    let mut second = LogSink::open(&log, true, DEFAULT_MODE).unwrap();
    first.write_lines(b"{\"n\":1}\n").unwrap();
    second.write_lines(b"{\"n\":2}\n").unwrap();
    first.write_lines(b"{\"n\":3}\n").unwrap();
    assert_eq!(
        String::from_utf8(std::fs::read(&log).unwrap()).unwrap(),
        "{\"type\":\"a\"}\n{\"ty\n{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n"
    );
    drop(other);
}

/// A writer killed mid-write tears the log under the feet of another that is running (several
/// agents appending to one log): the running one used to glue its next line onto the torn one,
/// making one invalid line of two. Every write looks at the log's end first.
#[test]
fn a_running_writer_does_not_glue_its_line_onto_one_torn_meanwhile() {
    use smart_tee::tee::sink::{DEFAULT_MODE, LogSink};
    use std::io::Write;
    let dir = tempdir("torn-live");
    let log = dir.join("l");
    let mut sink = LogSink::open(&log, true, DEFAULT_MODE).unwrap();
    sink.write_lines(b"{\"n\":1}\n").unwrap();
    // The killed writer's part of a line.
    let mut killed = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    killed.write_all(b"{\"killed\":\"mid-wr").unwrap();
    sink.write_lines(b"{\"n\":2}\n{\"n\":3}\n").unwrap();
    assert_eq!(
        String::from_utf8(std::fs::read(&log).unwrap()).unwrap(),
        "{\"n\":1}\n{\"killed\":\"mid-wr\n{\"n\":2}\n{\"n\":3}\n"
    );
}

/// #11.3: a write that fails part-way (here a file-size limit, `ulimit -f`, which stops a write
/// at the limit as a full disk does) leaves whole lines only: the writer cuts its torn bytes
/// off, reports the log by name and exits 1, while stdout gets everything. A later `-a` run
/// appends cleanly.
#[test]
fn a_write_that_fails_part_way_leaves_whole_lines() {
    let dir = tempdir("fsize");
    let log = dir.join("l");
    let mut input = Vec::new();
    for i in 0..2000 {
        input.extend_from_slice(
            format!(
                "{{\"type\":\"tick\",\"n\":{i},\"pad\":\"{}\"}}\n",
                "p".repeat(i % 300)
            )
            .as_bytes(),
        );
    }
    let script = format!(
        "ulimit -f 64 && exec '{}' '{}'",
        env!("CARGO_BIN_EXE_smart-tee"),
        log.display()
    );
    let out = common::run_cmd(Command::new("sh").args(["-c", &script]), &input);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout == input, "stdout gets every byte");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("writing log {:?}", log)), "{err}");
    let logged = std::fs::read(&log).unwrap();
    assert!(!logged.is_empty() && logged.len() < input.len());
    assert_no_torn_lines(&logged);
    let kept = lines(&logged).len();
    assert_eq!(
        &lines(&logged)[..],
        &common::input_lines(&input)[..kept],
        "a prefix, in order"
    );
    // Space again: the next writer appends after the last whole line.
    let out = common::run_fed(&["-a"], &log, b"{\"type\":\"after\"}\n");
    assert!(out.status.success());
    let again = std::fs::read(&log).unwrap();
    assert_eq!(&again[..logged.len()], &logged[..]);
    assert_eq!(&again[logged.len()..], b"{\"type\":\"after\"}\n");
}

/// #11.1, the writer's side: a writer that starts while a compaction holds the log (its
/// exclusive lock, taken here by the test) waits for it, and then writes into the file the
/// compaction renamed into place, not into the replaced one.
#[test]
fn a_writer_waiting_for_a_compaction_writes_to_the_new_file() {
    let dir = tempdir("compact-lock");
    let log = dir.join("l");
    std::fs::write(&log, b"{\"old\":1}\n").unwrap();
    let old = std::fs::File::open(&log).unwrap();
    old.lock().unwrap();
    let mut child = bin()
        .arg("-a")
        .arg(&log)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The "compaction": a new file renamed over the path, then the lock released.
    let tmp = dir.join(".l.tmp");
    std::fs::write(&tmp, b"{\"compacted\":1}\n").unwrap();
    std::fs::rename(&tmp, &log).unwrap();
    drop(old);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"{\"new\":2}\n").unwrap();
    drop(stdin);
    assert!(common::wait_timeout(&mut child).success());
    assert_eq!(
        std::fs::read(&log).unwrap(),
        b"{\"compacted\":1}\n{\"new\":2}\n"
    );
}

#[test]
fn four_appenders_never_interleave() {
    let dir = tempdir("appenders");
    let log = dir.join("shared.jsonl");
    let per_writer = 20_000;
    let children: Vec<_> = (0..4)
        .map(|w| {
            let mut input = String::new();
            for i in 0..per_writer {
                let pad = "p".repeat((i * 37 + w * 11) % 400);
                input.push_str(&format!("{{\"writer\":{w},\"i\":{i},\"pad\":\"{pad}\"}}\n"));
                if i % 1000 == 0 {
                    input.push_str(&format!(
                        "{{\"writer\":{w},\"big\":\"{}\"}}\n",
                        "b".repeat(30_000)
                    ));
                }
            }
            let mut child = bin()
                .arg("-a")
                .arg(&log)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            let t = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
            (child, t)
        })
        .collect();
    for (mut child, t) in children {
        t.join().unwrap();
        assert!(common::wait_timeout(&mut child).success());
    }
    let logged = std::fs::read(&log).unwrap();
    assert_no_torn_lines(&logged);
    let mut seen = vec![vec![false; per_writer]; 4];
    let mut bigs = 0;
    for l in lines(&logged) {
        let v = strict_parse(l).unwrap();
        let w = v["writer"].as_u64().unwrap() as usize;
        match v["i"].as_u64() {
            Some(i) => {
                assert!(!seen[w][i as usize], "line {w}/{i} twice");
                seen[w][i as usize] = true;
            }
            None => bigs += 1,
        }
    }
    assert!(
        seen.iter().all(|s| s.iter().all(|&x| x)),
        "every line present"
    );
    assert_eq!(bigs, 4 * per_writer / 1000);
}

#[test]
fn input_ending_mid_line_mid_character_or_mid_escape() {
    for tail in [
        &b"{\"a\":\"unfinished"[..],
        b"{\"a\":\"caf\xc3",
        b"{\"a\":\"\\u00",
        b"{\"a\":\"\\",
        b"{\"a\":\"\\ud83d",
        b"[1,2,",
    ] {
        let mut input = b"{\"ok\":1}\n".to_vec();
        input.extend_from_slice(tail);
        let log = check_contract(&input, 5120);
        let ls = lines(&log);
        assert_eq!(ls.len(), 2);
        let last = strict_parse(ls[1]).unwrap();
        assert_eq!(last["type"], "non_json");
        assert_eq!(
            last["text"].as_str().unwrap(),
            String::from_utf8_lossy(tail)
        );
    }
}

#[test]
fn read_only_places_are_reported_and_skipped() {
    let dir = tempdir("readonly");
    let good = dir.join("good");
    let out = common::run_cmd(
        bin()
            .args(["/sys/smart-tee-test.log", "/proc/version"])
            .arg(&good),
        b"{\"a\":1}\n",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, b"{\"a\":1}\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("opening log \"/sys/smart-tee-test.log\": "),
        "{err}"
    );
    assert!(err.contains("writing log \"/proc/version\": "), "{err}");
    assert_eq!(std::fs::read(&good).unwrap(), b"{\"a\":1}\n");
}

#[test]
fn symlinks_are_followed_and_fifos_written() {
    let dir = tempdir("links");
    let target = dir.join("target.jsonl");
    std::os::unix::fs::symlink(&target, dir.join("link.jsonl")).unwrap();
    let fifo = dir.join("fifo");
    common::mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let mut child = bin()
        .arg(dir.join("link.jsonl"))
        .arg(&fifo)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"a\":1}\nplain\n")
        .unwrap();
    assert!(common::wait_timeout(&mut child).success());
    let want = b"{\"a\":1}\n{\"type\":\"non_json\",\"text\":\"plain\"}\n";
    assert_eq!(std::fs::read(&target).unwrap(), want);
    assert!(
        std::fs::symlink_metadata(dir.join("link.jsonl"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(reader.join().unwrap(), want);
}

#[test]
fn budget_floor_and_huge_budgets() {
    let line = format!(
        "{{\"type\":\"user\",\"content\":\"{}\",\"uuid\":\"u\"}}\n",
        "c".repeat(1 << 20)
    );
    // At the floor every line still fits and keeps its type and id.
    let log = check_contract(line.as_bytes(), 128);
    let v = strict_parse(lines(&log)[0]).unwrap();
    assert_eq!(
        (v["type"].as_str(), v["uuid"].as_str()),
        (Some("user"), Some("u"))
    );
    // A budget larger than any line changes nothing.
    let log = check_contract(line.as_bytes(), 4095 << 20);
    assert_eq!(log, line.as_bytes());
    let out = common::run_cmd(bin().args(["-b", "4096M"]), b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("too large"));
}

/// Runs the binary with `args` on `input`, checks stdout got every byte, returns the log.
fn run_logged(args: &[&str], input: &[u8]) -> Vec<u8> {
    let dir = tempdir("cap");
    let log = dir.join("l");
    let out = common::run_fed(args, &log, input);
    assert!(out.status.success());
    assert!(out.stdout == input, "stdout still gets every byte");
    std::fs::read(&log).unwrap()
}

#[test]
fn a_line_past_the_memory_cap_keeps_its_structure() {
    use smart_tee::tee::log::STREAM_CAP;
    let big = STREAM_CAP + (3 << 20);
    let mut line = b"{\"type\":\"user\",\"content\":\"".to_vec();
    line.extend(std::iter::repeat_n(b'z', big));
    line.extend_from_slice(b"\",\"items\":[");
    let items: Vec<String> = (0..5000).map(|i| i.to_string()).collect();
    line.extend_from_slice(items.join(",").as_bytes());
    line.extend_from_slice(b"],\"uuid\":\"u-9\"}\n{\"next\":1}\n");
    let logged = run_logged(&[], &line);
    let ls = lines(&logged);
    assert_eq!(ls.len(), 2);
    assert!(ls[0].len() <= 5120);
    let v = strict_parse(ls[0]).unwrap();
    assert_eq!((&v["type"], &v["uuid"]), (&"user".into(), &"u-9".into()));
    let content = v["content"].as_str().unwrap();
    assert!(content.starts_with("zzz") && content.ends_with("zzz"));
    assert!(
        content.contains(&format!("[TRUNCATED: {big} → ")),
        "the marker counts the whole string: {content}"
    );
    let items = v["items"].as_array().unwrap();
    assert_eq!(
        (&items[0], items.last().unwrap()),
        (&0.into(), &4999.into())
    );
    assert_eq!(ls[1], b"{\"next\":1}");
    // The same line whatever the read sizes.
    let cfg = common::config(5120);
    assert!(common::log_of(&line, &cfg, 0) == logged);
    assert!(common::log_of(&line, &cfg, 100_000) == logged);
}

#[test]
fn a_line_past_the_memory_cap_that_is_not_json_is_logged_as_an_excerpt() {
    use smart_tee::tee::log::STREAM_CAP;
    let mut line = b"{\"type\":\"user\",\"content\":\"".to_vec();
    line.extend(std::iter::repeat_n(b'z', STREAM_CAP + 100));
    line.extend_from_slice(b"\"]\n");
    let log = common::log_of(&line, &common::config(5120), 65536);
    let ls = lines(&log);
    assert_eq!(ls.len(), 1);
    let v = strict_parse(ls[0]).unwrap();
    assert_eq!(v["type"], "non_json");
    let text = v["text"].as_str().unwrap();
    assert!(text.starts_with("{\"type\":\"user\",\"content\":\"zzz"));
    assert!(text.ends_with("zzz\"]"));
    assert!(text.contains(&format!("[TRUNCATED: {} → ", line.len() - 1)));
}

#[test]
fn a_line_past_the_memory_cap_without_reduction_is_logged_as_an_excerpt() {
    // Budgets past MAX_STREAM_BUDGET hold lines whole up to LINE_CAP, then keep an excerpt.
    use smart_tee::tee::log::LINE_CAP;
    let mut line = b"{\"type\":\"user\",\"content\":\"".to_vec();
    line.extend(std::iter::repeat_n(b'z', LINE_CAP + (3 << 20)));
    line.extend_from_slice(b"\"}\n{\"next\":1}\n");
    let logged = run_logged(&["-b", "2M"], &line);
    let ls = lines(&logged);
    assert_eq!(ls.len(), 2);
    assert!(ls[0].len() <= 2 << 20);
    let v = strict_parse(ls[0]).unwrap();
    assert_eq!(v["type"], "truncated");
    let text = v["text"].as_str().unwrap();
    assert!(text.starts_with("{\"type\":\"user\",\"content\":\"zzz"));
    assert!(text.ends_with("zzz\"}"));
    assert!(
        text.contains(&format!("[TRUNCATED: {} → ", line.len() - 12)),
        "marker counts the whole line"
    );
    assert_eq!(ls[1], b"{\"next\":1}");
}

#[test]
fn a_blank_line_past_the_memory_cap_is_not_logged() {
    let mut input = vec![b' '; smart_tee::tee::log::STREAM_CAP + 5];
    input.extend_from_slice(b"\n{}\n");
    let log = common::log_of(&input, &common::config(5120), 65536);
    assert_eq!(log, b"{}\n");
}

/// #11.13: a 6 MB line of 3 M numbers was logged as a `truncated` excerpt (its `type` gone)
/// while a 20 MB line of 10 M numbers kept its structure through the reduction. A line held
/// whole with more values than the index takes is reduced first, like a line past the cap.
#[test]
fn a_line_with_too_many_values_keeps_its_structure() {
    use smart_tee::{EngineConfig, LineEngine, Outcome};
    let n = smart_tee::line::index::MAX_NODES + 10;
    let line = format!(
        r#"{{"type":"user","uuid":"u-1","data":[{}]}}"#,
        (0..n)
            .map(|i| (i % 10).to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    assert!(line.len() < smart_tee::tee::log::STREAM_CAP);
    let mut engine = LineEngine::new(EngineConfig::default());
    let mut out = Vec::new();
    assert_eq!(engine.process(line.as_bytes(), &mut out), Outcome::Cut);
    assert!(out.len() <= 5121);
    let v = strict_parse(&out[..out.len() - 1]).unwrap();
    assert_eq!((&v["type"], &v["uuid"]), (&"user".into(), &"u-1".into()));
    let data = v["data"].as_array().unwrap();
    assert_eq!(data[0], 0);
    assert_eq!(*data.last().unwrap(), (n - 1) % 10);
    assert!(
        data.iter().any(|e| e
            .as_str()
            .is_some_and(|s| s.contains(&format!("[TRUNCATED: {n} → ")))),
        "the marker counts every element"
    );
}

/// #49's audit: a 3 MB line of 1.5 million small values peaked at 128 MiB (the index took
/// them all, about 86 bytes each), and an 8 MiB line of `[[[[…]]]]` at 90 MiB. Lines with more
/// values than the index takes are reduced first, and what is past that cap is counted, not
/// stacked: each runs here within 78 MiB of address space (the process's peak RSS is under
/// 32 MiB), and is logged as valid JSON within the budget.
#[test]
fn a_line_of_many_small_values_or_deep_nesting_stays_in_bounded_memory() {
    let dir = tempdir("bounded-memory");
    let many = format!(
        r#"{{"type":"user","data":[{}]}}"#,
        vec!["0"; 1_490_000].join(",")
    );
    let deep = "[".repeat(4 << 20) + &"]".repeat(4 << 20);
    for (name, line) in [("many", many), ("deep", deep)] {
        let log = dir.join(name);
        let script = format!(
            "ulimit -v 80000 && exec '{}' '{}'",
            env!("CARGO_BIN_EXE_smart-tee"),
            log.display()
        );
        let mut sh = Command::new("sh");
        sh.args(["-c", &script])
            .env_remove("SMART_TEE_MAX_LINE_BYTES")
            .env("MALLOC_ARENA_MAX", "1");
        let input = format!("{line}\n{{\"tail\":1}}\n");
        let out = common::run_cmd(&mut sh, input.as_bytes());
        common::assert_copied(name, &out, input.as_bytes());
        let logged = std::fs::read(&log).unwrap();
        let logged = lines(&logged);
        assert_eq!(logged.len(), 2, "{name}");
        assert!(logged[0].len() <= 5120, "{name}: {}", logged[0].len());
        strict_parse(logged[0]).unwrap();
        assert_eq!(logged[1], b"{\"tail\":1}");
    }
}

/// Found by the read side's attack (#49): the readers parsed each line whole, and a line of
/// millions of small values took about fifty times its size (3.2 GB for 62 MB; MCP's
/// `list_logs` 1 GB for 10 MB). A line of more values than `read::events::VALUES_WHOLE` is
/// parsed as the engine cuts it: a 3 MB line of 1.5 million values is read by every reader that
/// parses events within 78 MiB of address space, and the run's outcome after it still counts.
#[test]
fn the_readers_parse_a_line_of_many_small_values_in_bounded_memory() {
    let dir = tempdir("read-bounded-memory");
    let log = dir.join("many.jsonl");
    let many = format!(
        "{{\"type\":\"user\",\"data\":[{}]}}\n{}\n",
        vec!["0"; 1_490_000].join(","),
        r#"{"type":"result","subtype":"success","is_error":false,"num_turns":3}"#
    );
    std::fs::write(&log, many).unwrap();
    for args in [
        "--view --errors",
        "--view --type user --format jsonl",
        "--view --format html",
        "--summary --format json",
        "--summary --by-run --format json",
    ] {
        let script = format!(
            "ulimit -v 80000 && exec '{}' {args} '{}'",
            env!("CARGO_BIN_EXE_smart-tee"),
            log.display()
        );
        let mut sh = Command::new("sh");
        sh.args(["-c", &script]).env("MALLOC_ARENA_MAX", "1");
        let out = common::run_cmd(&mut sh, b"");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{args}: {:?} {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        if args.contains("--type") {
            assert!(text.contains("\"type\":\"user\""), "{args}: {text}");
        }
        if args.contains("--summary") {
            assert!(text.contains("\"ok\""), "{args}: {text}");
        }
    }
}

/// Found by the audit of `read::events::parse` (#49): the values of a line were counted by
/// every comma and colon in it, those inside strings too, so a message of 3,000 tool calls
/// whose inputs hold code or CSV was parsed as the engine cuts it, and `--summary` counted
/// 2,256 calls and 2,183 failures of 3,000. Commas in strings cost nothing to parse; a line is
/// parsed whole unless it has more than `VALUES_WHOLE` values outside its strings.
#[test]
fn commas_inside_strings_do_not_cut_a_line_before_it_is_counted() {
    let dir = tempdir("commas-in-strings");
    let log = dir.join("calls.jsonl");
    let calls = 3000;
    let text = vec!["a\\\"b"; 41].join(",");
    let uses: Vec<String> = (0..calls)
        .map(|i| {
            format!(r#"{{"type":"tool_use","id":"toolu_{i}","name":"Bash","input":{{"command":"{text}"}}}}"#)
        })
        .collect();
    let results: Vec<String> = (0..calls)
        .map(|i| {
            format!(r#"{{"type":"tool_result","tool_use_id":"toolu_{i}","is_error":true,"content":"{text}"}}"#)
        })
        .collect();
    let stream = format!(
        "{}\n{}\n",
        format_args!(
            r#"{{"type":"assistant","message":{{"role":"assistant","content":[{}]}}}}"#,
            uses.join(",")
        ),
        format_args!(
            r#"{{"type":"user","message":{{"role":"user","content":[{}]}}}}"#,
            results.join(",")
        ),
    );
    assert!(
        stream.matches(',').count() > 2 * 100_000,
        "the line must pass the bound"
    );
    std::fs::write(&log, stream).unwrap();
    let out = common::run_cmd(
        Command::new(env!("CARGO_BIN_EXE_smart-tee"))
            .args(["--summary", "--format", "json"])
            .arg(&log),
        b"",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["tool_calls"], calls, "{summary}");
    assert_eq!(summary["tool_failures"], calls, "{summary}");
}
