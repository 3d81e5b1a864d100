//! The binary end to end: stdout is the input byte for byte, the logs honour the contract, and
//! every flag, error and signal behaves as the README says.

use crate::common;

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{input_lines, lines, strict_parse};

use crate::common::{bin, stderr, tempdir};

fn run(cmd: &mut Command, input: &[u8]) -> Output {
    common::run_cmd(cmd, input)
}

fn sample() -> Vec<u8> {
    let mut s = Vec::new();
    s.extend_from_slice(b"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\"}\n");
    s.extend_from_slice(
        format!(
            "{{\"type\":\"user\",\"content\":\"{}\",\"uuid\":\"u1\"}}\r\n",
            "x".repeat(20_000)
        )
        .as_bytes(),
    );
    s.extend_from_slice(b"\n   \nnot json \xff\x00\n");
    s.extend_from_slice(b"{\"type\":\"result\",\"result\":\"done\"}");
    s
}

#[test]
fn stdout_is_the_input_and_the_log_follows_the_contract() {
    let dir = tempdir("contract");
    let log = dir.join("a.jsonl");
    let input = sample();
    let out = run(bin().arg(&log), &input);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(out.stdout, input);
    assert!(out.stderr.is_empty());
    let logged = std::fs::read(&log).unwrap();
    let ls = lines(&logged);
    assert_eq!(ls.len(), input_lines(&input).len());
    assert_eq!(ls.len(), 4);
    for l in &ls {
        assert!(l.len() <= 5120);
        strict_parse(l).unwrap();
    }
    assert_eq!(
        ls[0],
        b"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\"}"
    );
    let user = strict_parse(ls[1]).unwrap();
    assert_eq!(user["uuid"], "u1");
    assert!(
        user["content"]
            .as_str()
            .unwrap()
            .contains("[TRUNCATED: 20000 → ")
    );
    assert_eq!(strict_parse(ls[2]).unwrap()["type"], "non_json");
    assert_eq!(ls[3], b"{\"type\":\"result\",\"result\":\"done\"}");
}

#[test]
fn arbitrary_bytes_pass_through_unchanged() {
    let dir = tempdir("bytes");
    let mut input: Vec<u8> = (0..=255u8).cycle().take(300_000).collect();
    input.extend_from_slice(b"\n\r\n\0");
    let out = run(bin().arg(dir.join("l")), &input);
    assert!(out.status.success());
    assert_eq!(out.stdout, input);
    let logged = std::fs::read(dir.join("l")).unwrap();
    for l in lines(&logged) {
        assert!(l.len() <= 5120);
        strict_parse(l).unwrap();
    }
}

#[test]
fn no_file_just_copies() {
    let input = sample();
    let out = run(&mut bin(), &input);
    assert!(out.status.success());
    assert_eq!(out.stdout, input);
}

#[test]
fn every_file_gets_the_same_log_and_append_appends() {
    let dir = tempdir("files");
    let (a, b) = (dir.join("a"), dir.join("b"));
    std::fs::write(&a, "{\"old\":1}\n").unwrap();
    std::fs::write(&b, "{\"old\":1}\n").unwrap();
    let out = run(bin().arg(&a).arg("-a").arg(&b), b"{\"new\":2}\n");
    assert!(out.status.success());
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert_eq!(std::fs::read(&a).unwrap(), b"{\"old\":1}\n{\"new\":2}\n");
    let out = run(bin().arg(&a), b"{\"new\":3}\n");
    assert!(out.status.success());
    assert_eq!(std::fs::read(&a).unwrap(), b"{\"new\":3}\n");
}

/// Found by a new user (#49): a file named twice (`LOG LOG`, `LOG ./LOG`, a symlink to it)
/// got every line twice, its second opening taking its own lock for another writer's ("another
/// smart-tee is writing it"), and `--summary` then counted each tool call twice. It is one log,
/// written once, and stderr says so.
#[test]
fn a_log_named_twice_is_written_once() {
    let dir = tempdir("named-twice");
    let log = dir.join("d.log");
    let link = dir.join("link.log");
    std::os::unix::fs::symlink(&log, &link).unwrap();
    let input = sample();
    let dotted = dir.join(".").join("d.log");
    for append in [false, true] {
        let _ = std::fs::remove_file(&log);
        let mut cmd = bin();
        if append {
            cmd.arg("-a");
        }
        let out = run(cmd.arg(&log).arg(&dotted).arg(&link), &input);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(out.stdout, input);
        let logged = std::fs::read(&log).unwrap();
        assert_eq!(
            lines(&logged).len(),
            input_lines(&input).len(),
            "-a {append}"
        );
        let said = stderr(&out);
        assert_eq!(said.matches("written once").count(), 2, "{said}");
        assert!(!said.contains("another smart-tee"), "{said}");
    }
}

/// Opening a log without `-a` empties it as tee's `O_TRUNC` does, and an empty one is touched
/// as `O_TRUNC` touches it (its modification time is now), though smart-tee does not truncate
/// a file with nothing to cut (that arms ext4's flush at close): with no input, with input.
#[test]
fn opening_a_log_empties_it_and_touches_an_empty_one_as_tee_does() {
    let dir = tempdir("touch");
    let long_ago = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(946_684_800);
    for (before, input) in [("", ""), ("", "{\"a\":1}\n"), ("{\"old\":1}\n", "")] {
        let log = dir.join("l");
        std::fs::write(&log, before).unwrap();
        let file = std::fs::File::options().write(true).open(&log).unwrap();
        file.set_times(std::fs::FileTimes::new().set_modified(long_ago))
            .unwrap();
        drop(file);
        let out = run(bin().arg(&log), input.as_bytes());
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(std::fs::read_to_string(&log).unwrap(), input);
        let modified = std::fs::metadata(&log).unwrap().modified().unwrap();
        assert!(modified > long_ago, "{before:?} {input:?}: {modified:?}");
    }
}

#[test]
fn budget_from_flag_suffix_and_environment() {
    let dir = tempdir("budget");
    let line = format!("{{\"content\":\"{}\"}}\n", "y".repeat(100_000));
    let longest = |args: &[&str], env: Option<&str>| {
        let log = dir.join("l");
        let mut cmd = bin();
        cmd.args(args).arg(&log);
        if let Some(v) = env {
            cmd.env("SMART_TEE_MAX_LINE_BYTES", v);
        }
        let out = run(&mut cmd, line.as_bytes());
        assert!(out.status.success(), "{}", stderr(&out));
        lines(&std::fs::read(&log).unwrap())[0].len()
    };
    let default = longest(&[], None);
    assert!(default <= 5120 && default > 5000, "{default}");
    let k = longest(&["-b", "2K"], None);
    assert!(k <= 2048 && k > 1900, "{k}");
    let env = longest(&[], Some("1k"));
    assert!(env <= 1024 && env > 900, "{env}");
    let flag_wins = longest(&["--max-line-bytes=3000"], Some("1k"));
    assert!(flag_wins <= 3000 && flag_wins > 2800, "{flag_wins}");
    assert_eq!(
        longest(&["-b", "0"], None),
        line.len() - 1,
        "0 means no truncation"
    );
}

#[test]
fn bad_values_exit_2_with_a_message() {
    for args in [
        &["-b", "abc"][..],
        &["-b", "-5"],
        &["-b", "99999999999999999999999"],
        &["-b", "5G"],
        &["-b", "100"],
        &["-b", "1.5K"],
        &["--head-ratio", "2"],
        &["--head-ratio", "nan"],
        &["--output-error=sometimes"],
        &["--file-mode", "999"],
        // #11.14: special permission bits, invisible or bogus markers.
        &["--file-mode", "7777"],
        &["--file-mode", "4600"],
        &["--marker", ""],
        &["--marker", "[CUT]"],
        &["--marker", "{bogus} {kept}"],
        // #11.8: flags that would invent data where nothing is received.
        &["--compact", "--add-timestamp", "x.jsonl"],
        &["--view", "--add-timestamp", "x.jsonl"],
        &["--no-such-flag"],
        &["--marker", &"m".repeat(200), "-b", "128"],
    ] {
        let input = b"{\"a\":1}\nnot json\n";
        let out = run(bin().args(args), input);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("error"), "{args:?}: {err}");
        assert!(
            !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
            "{err}"
        );
        // The tee still copies the stream; the modes that read logs copy nothing.
        let reads_logs = args.contains(&"--view") || args.contains(&"--compact");
        let copied: &[u8] = if reads_logs { b"" } else { input };
        assert_eq!(out.stdout, copied, "{args:?}");
    }
    // #11.6: a bad environment value is reported, naming the variable, and the default used:
    // the stream is not lost to it.
    let dir = common::tempdir("cli-bad-env");
    let log = dir.join("l");
    for bad in ["lots", "5x", "100"] {
        let out = run(
            bin().env("SMART_TEE_MAX_LINE_BYTES", bad).arg(&log),
            b"{\"a\":1}\n",
        );
        assert_eq!(out.status.code(), Some(0), "{bad}");
        assert_eq!(out.stdout, b"{\"a\":1}\n");
        let err = stderr(&out);
        assert!(
            err.contains("SMART_TEE_MAX_LINE_BYTES=") && err.contains(bad),
            "{err}"
        );
        assert!(err.contains("using the default 5120"), "{err}");
        assert_eq!(std::fs::read(&log).unwrap(), b"{\"a\":1}\n");
    }
    let out = run(bin().args(["-b", "100"]), b"");
    assert!(stderr(&out).contains("below 128"), "{}", stderr(&out));
}

/// A typo in `agent | smart-tee --bad LOG | next` used to exit at once with nothing on stdout:
/// the agent's stream was lost to it, and the agent itself met a closed pipe.
#[test]
fn a_malformed_command_line_still_copies_the_stream() {
    let dir = tempdir("cli-malformed");
    let log = dir.join("agent.jsonl");
    let input = sample();
    for args in [
        &["--max-line-byte", "4K"][..],
        &["-b", "4X"],
        &["--marker", ""],
    ] {
        let out = run(bin().args(args).arg(&log), &input);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout == input, "{args:?}: stdout is not the input");
        let err = stderr(&out);
        assert!(
            err.contains(args[0]),
            "{args:?}: the flag is not named: {err}"
        );
        assert!(err.contains("no log is written"), "{err}");
        assert!(
            !log.exists(),
            "{args:?}: a log was written with a refused config"
        );
    }
    // A path after `--` that looks like a mode is a log, not a mode.
    let out = run(bin().arg("--bogus").arg("--").arg("--view"), b"x\n");
    assert_eq!((out.status.code(), &out.stdout[..]), (Some(2), &b"x\n"[..]));
}

#[test]
fn help_lists_every_flag_with_its_default() {
    let out = common::run_cmd(bin().arg("--help"), b"");
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--append",
        "--ignore-interrupts",
        "-p",
        "--output-error",
        "--max-line-bytes",
        "SMART_TEE_MAX_LINE_BYTES",
        "SIGUSR1",
        "[default: 5120]",
        "--preserve",
        "--truncate-first",
        "--cut-last",
        "--no-default-fields",
        "--marker",
        "--head-ratio",
        "[default: 0.5]",
        "--file-mode",
        "[default: 600]",
        "Exit status",
    ] {
        assert!(help.contains(flag), "--help lacks {flag}");
    }
    assert!(
        common::run_cmd(bin().arg("--version"), b"")
            .status
            .success()
    );
}

#[test]
fn field_rules_from_flags() {
    let dir = tempdir("fields");
    let log = dir.join("l");
    let line = format!(
        "{{\"keep\":\"{}\",\"drop\":\"{}\",\"other\":\"{}\"}}\n",
        "k".repeat(3000),
        "d".repeat(3000),
        "o".repeat(3000)
    );
    let out = run(
        bin()
            .args([
                "-b",
                "4000",
                "--preserve",
                "keep",
                "--truncate-first",
                "drop",
            ])
            .arg(&log),
        line.as_bytes(),
    );
    assert!(out.status.success());
    let v = strict_parse(lines(&std::fs::read(&log).unwrap())[0]).unwrap();
    assert_eq!(
        v["keep"].as_str().unwrap().len(),
        3000,
        "preserved field whole"
    );
    assert!(
        v["drop"]
            .as_str()
            .unwrap()
            .starts_with("[TRUNCATED: 3000 → 0 bytes]")
    );
    assert!(v["other"].as_str().unwrap().len() > 500);

    // Without the default rules, `content` is an ordinary field and `type` may be cut.
    let line = format!(
        "{{\"type\":\"{}\",\"content\":\"{}\"}}\n",
        "t".repeat(3000),
        "c".repeat(3000)
    );
    let out = run(
        bin().args(["-b", "2000", "--no-default-fields"]).arg(&log),
        line.as_bytes(),
    );
    assert!(out.status.success());
    let v = strict_parse(lines(&std::fs::read(&log).unwrap())[0]).unwrap();
    let (t, c) = (
        v["type"].as_str().unwrap().len(),
        v["content"].as_str().unwrap().len(),
    );
    assert!(t.abs_diff(c) < 10, "equal shares without rules: {t} vs {c}");
}

#[test]
fn marker_and_head_ratio() {
    let dir = tempdir("marker");
    let log = dir.join("l");
    let line = format!("{{\"s\":\"{}{}\"}}\n", "h".repeat(5000), "t".repeat(5000));
    let out = run(
        bin()
            .args([
                "-b",
                "1000",
                "--marker",
                "<cut {kept} of {original}>",
                "--head-ratio",
                "1",
            ])
            .arg(&log),
        line.as_bytes(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v = strict_parse(lines(&std::fs::read(&log).unwrap())[0]).unwrap();
    let s = v["s"].as_str().unwrap();
    assert!(s.starts_with("hhhh"));
    assert!(s.ends_with(" of 10000>"), "{s}");
}

#[test]
fn logs_are_private_by_default() {
    let dir = tempdir("mode");
    let out = run(bin().arg(dir.join("p")), b"{}\n");
    assert!(out.status.success());
    let mode = std::fs::metadata(dir.join("p"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
    let out = run(
        bin().args(["--file-mode", "640"]).arg(dir.join("q")),
        b"{}\n",
    );
    assert!(out.status.success());
    let mode = std::fs::metadata(dir.join("q"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o640 & !umask());
}

fn umask() -> u32 {
    let out = common::run_cmd(Command::new("sh").args(["-c", "umask"]), b"");
    u32::from_str_radix(String::from_utf8_lossy(&out.stdout).trim(), 8).unwrap()
}

#[test]
fn unwritable_logs_do_not_stop_the_others() {
    let dir = tempdir("unwritable");
    let good = dir.join("good");
    let missing = dir.join("no/such/dir/log");
    let input = sample();
    let out = run(bin().arg(&missing).arg("/dev/full").arg(&good), &input);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, input, "stdout still gets every byte");
    let err = stderr(&out);
    assert!(
        err.contains("no/such/dir/log") && err.contains("No such file"),
        "{err}"
    );
    assert!(
        err.contains("/dev/full") && err.contains("No space left"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 2, "one message per failed log: {err}");
    assert_eq!(lines(&std::fs::read(&good).unwrap()).len(), 4);
}

#[test]
fn closed_stdout_keeps_the_log_by_default() {
    let dir = tempdir("epipe");
    let log = dir.join("l");
    let line = b"{\"type\":\"assistant\",\"n\":1}\n";
    let input: Vec<u8> = line.repeat(200_000);
    let script = format!(
        "{} {} < /dev/stdin | head -c 10 > /dev/null; exit ${{PIPESTATUS[0]}}",
        env!("CARGO_BIN_EXE_smart-tee"),
        log.display()
    );
    let out = run(Command::new("bash").args(["-c", &script]), &input);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    assert_eq!(std::fs::read(&log).unwrap(), input, "the log is complete");

    let script = format!(
        "{} --output-error=exit {} < /dev/stdin | head -c 10 > /dev/null; exit ${{PIPESTATUS[0]}}",
        env!("CARGO_BIN_EXE_smart-tee"),
        log.display()
    );
    let out = run(Command::new("bash").args(["-c", &script]), &input);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("Broken pipe"), "{}", stderr(&out));
    let logged = std::fs::read(&log).unwrap();
    assert!(logged.len() < input.len(), "it stopped early");
    let ls = lines(&logged);
    let (last, whole) = ls.split_last().unwrap();
    assert!(whole.iter().all(|l| *l == &line[..line.len() - 1]));
    // The line cut short by the stop is logged as a record, never torn.
    let last = strict_parse(last).unwrap();
    assert!(last["n"] == 1 || last["type"] == "non_json", "{last}");
}

/// Starts smart-tee with a stdin that stays open, returns the child.
fn spawn_open(args: &[&str]) -> std::process::Child {
    bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until `path` holds `want` bytes' worth of lines, or 20 seconds pass.
fn wait_for_lines(path: &Path, want: usize) -> Vec<u8> {
    let start = Instant::now();
    loop {
        let got = std::fs::read(path).unwrap_or_default();
        if lines(&got).len() >= want || start.elapsed() > Duration::from_secs(20) {
            return got;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_finished_line_reaches_the_log_before_input_ends() {
    let dir = tempdir("prompt");
    let log = dir.join("l");
    let mut child = spawn_open(&[log.to_str().unwrap()]);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"{\"a\":1}\n{\"b\":").unwrap();
    stdin.flush().unwrap();
    let got = wait_for_lines(&log, 1);
    assert_eq!(
        got, b"{\"a\":1}\n",
        "the finished line is logged while input is still open"
    );
    // Read on a thread, so the wait is bounded.
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = [0u8; 13];
        let _ = tx.send(stdout.read_exact(&mut out).map(|()| out));
    });
    let out = rx
        .recv_timeout(common::CHILD_TIMEOUT)
        .expect("stdout in time")
        .unwrap();
    assert_eq!(
        &out, b"{\"a\":1}\n{\"b\":",
        "stdout gets the partial line at once"
    );
    drop(stdin);
    assert!(common::wait_timeout(&mut child).success());
}

fn signal(child: &std::process::Child, sig: &str) {
    let out = common::run_cmd(
        Command::new("kill").args([sig, &child.id().to_string()]),
        b"",
    );
    assert!(out.status.success());
}

#[test]
fn sigterm_logs_the_partial_line_and_exits_143() {
    let dir = tempdir("sigterm");
    let log = dir.join("l");
    let mut child = spawn_open(&[log.to_str().unwrap()]);
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"a\":1}\n{\"b\":2}\n{\"partial\":")
        .unwrap();
    stdin.flush().unwrap();
    wait_for_lines(&log, 2);
    signal(&child, "-TERM");
    let status = common::wait_timeout(&mut child);
    assert_eq!(status.code(), Some(143));
    let logged = std::fs::read(&log).unwrap();
    let ls = lines(&logged);
    assert_eq!(ls.len(), 3);
    assert_eq!(ls[0], b"{\"a\":1}");
    assert_eq!(ls[1], b"{\"b\":2}");
    assert_eq!(strict_parse(ls[2]).unwrap()["text"], "{\"partial\":");
}

#[test]
fn sigint_exits_130_unless_ignored() {
    let dir = tempdir("sigint");
    let log = dir.join("l");
    let mut child = spawn_open(&[log.to_str().unwrap()]);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"{\"a\":1}\n").unwrap();
    wait_for_lines(&log, 1);
    signal(&child, "-INT");
    assert_eq!(common::wait_timeout(&mut child).code(), Some(130));

    let log = dir.join("l2");
    let mut child = spawn_open(&["-i", log.to_str().unwrap()]);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"{\"a\":1}\n").unwrap();
    wait_for_lines(&log, 1);
    signal(&child, "-INT");
    stdin.write_all(b"{\"b\":2}\n").unwrap();
    drop(stdin);
    assert_eq!(
        common::wait_timeout(&mut child).code(),
        Some(0),
        "-i ignores SIGINT"
    );
    assert_eq!(std::fs::read(&log).unwrap(), b"{\"a\":1}\n{\"b\":2}\n");
}

/// #11.4: SIGHUP (a closing terminal) and SIGQUIT finish the log as SIGTERM does: every line
/// read is logged, the unfinished one as a record, and the status is 128 + the signal.
#[test]
fn sighup_and_sigquit_log_the_partial_line() {
    let dir = tempdir("sighup");
    for (sig, code) in [("-HUP", 129), ("-QUIT", 131)] {
        let log = dir.join(&sig[1..]);
        let mut child = spawn_open(&[log.to_str().unwrap()]);
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"{\"a\":1}\n{\"partial\":").unwrap();
        stdin.flush().unwrap();
        wait_for_lines(&log, 1);
        signal(&child, sig);
        assert_eq!(common::wait_timeout(&mut child).code(), Some(code), "{sig}");
        let logged = std::fs::read(&log).unwrap();
        let ls = lines(&logged);
        assert_eq!(ls.len(), 2, "{sig}");
        assert_eq!(strict_parse(ls[1]).unwrap()["text"], "{\"partial\":");
    }
}

/// #11.4: SIGUSR1 reopens the logs by path, as logrotate's `create` mode needs: lines read
/// before the signal stay in the renamed file, lines after go to a new file at the path.
#[test]
fn sigusr1_reopens_a_rotated_log() {
    let dir = tempdir("sigusr1");
    let log = dir.join("agent.jsonl");
    let rotated = dir.join("agent.jsonl.1");
    let mut child = spawn_open(&["-a", log.to_str().unwrap()]);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"{\"n\":1}\n").unwrap();
    stdin.flush().unwrap();
    wait_for_lines(&log, 1);
    std::fs::rename(&log, &rotated).unwrap();
    signal(&child, "-USR1");
    // The reopen creates the file at the path; only then is the next line sent.
    let start = Instant::now();
    while !log.exists() {
        assert!(start.elapsed() < Duration::from_secs(60), "no reopen");
        std::thread::sleep(Duration::from_millis(5));
    }
    stdin.write_all(b"{\"n\":2}\n").unwrap();
    drop(stdin);
    assert!(common::wait_timeout(&mut child).success());
    assert_eq!(std::fs::read(&rotated).unwrap(), b"{\"n\":1}\n");
    assert_eq!(std::fs::read(&log).unwrap(), b"{\"n\":2}\n");
}

/// #11.6: a log path that cannot be opened (even an empty one) is reported and skipped, and
/// stdout still gets the stream, as GNU tee does (exit 1).
#[test]
fn an_unopenable_log_path_does_not_cost_the_stream() {
    let out = run(bin().arg(""), b"hi\n");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, b"hi\n");
    assert!(
        stderr(&out).contains("opening log \"\""),
        "{}",
        stderr(&out)
    );
    let dir = tempdir("unopenable");
    let good = dir.join("good");
    let out = run(
        bin().arg(dir.join("no/such/dir/l")).arg(&good),
        b"{\"a\":1}\n",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, b"{\"a\":1}\n");
    assert_eq!(std::fs::read(&good).unwrap(), b"{\"a\":1}\n");
}

/// #11.14: with stdout closed (`>&-`), `--output-error=exit` exits 1 as GNU tee does; the
/// default mode says so and exits 1 too, after logging everything.
#[test]
fn a_closed_stdout_is_an_error() {
    let dir = tempdir("closed-stdout");
    let log = dir.join("l");
    for (mode, logged) in [
        ("--output-error=exit", false),
        ("--output-error=warn-nopipe", true),
    ] {
        let script = format!(
            "exec '{}' {mode} '{}' >&-",
            env!("CARGO_BIN_EXE_smart-tee"),
            log.display()
        );
        let out = run(Command::new("sh").args(["-c", &script]), b"{\"a\":1}\n");
        assert_eq!(out.status.code(), Some(1), "{mode}");
        assert!(stderr(&out).contains("standard output"), "{}", stderr(&out));
        if logged {
            assert_eq!(std::fs::read(&log).unwrap(), b"{\"a\":1}\n");
        }
    }
}

/// #11.14: an unwritable `--stats-json` path is said at start, naming the flag; the stream and
/// the log go on; the status is 1.
#[test]
fn an_unwritable_stats_path_is_said_at_start() {
    let dir = tempdir("stats-path");
    let log = dir.join("l");
    let out = run(
        bin()
            .args(["--stats-json", "/nonexistent-dir/s.json"])
            .arg(&log),
        b"{\"a\":1}\n",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, b"{\"a\":1}\n");
    assert!(
        stderr(&out).starts_with("smart-tee: --stats-json: "),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(&log).unwrap(), b"{\"a\":1}\n");
}

/// Pretty-printed JSON is not JSON lines: said once on stderr, every line still logged.
#[test]
fn pretty_printed_input_is_noticed_once() {
    let dir = tempdir("pretty");
    let log = dir.join("l");
    let input = b"{\n  \"a\": 1\n}\n{\n  \"b\": 2\n}\n";
    let out = run(bin().arg(&log), input);
    assert!(out.status.success());
    assert_eq!(
        stderr(&out).matches("pretty-printed").count(),
        1,
        "{}",
        stderr(&out)
    );
    assert_eq!(lines(&std::fs::read(&log).unwrap()).len(), 6);
}

/// #34: `smart-tee m<TAB>` offered nothing, `smart-tee mcp --help` said "Usage: mcp" and the
/// man page's synopsis said `[FILE]` for any number of FILEs.
#[test]
fn completions_offer_the_subcommands_and_the_man_page_any_number_of_files() {
    for shell in ["bash", "zsh", "fish"] {
        let out = run(bin().args(["completions", shell]), b"");
        let script = String::from_utf8_lossy(&out.stdout);
        for sub in ["mcp", "completions", "man"] {
            assert!(script.contains(sub), "{shell} completion lacks {sub}");
        }
    }
    let help = run(bin().args(["mcp", "--help"]), b"");
    assert!(help.status.success());
    assert!(
        String::from_utf8_lossy(&help.stdout).contains("Usage: smart-tee mcp [OPTIONS]"),
        "{}",
        String::from_utf8_lossy(&help.stdout)
    );
    let man = String::from_utf8(run(bin().arg("man"), b"").stdout).unwrap();
    assert!(man.contains("[\\fIFILE...\\fR]"), "{man}");
    // `help` is not a subcommand: it is a log's name, as with tee.
    let dir = common::tempdir("help-log");
    let out = run(bin().arg(dir.join("help")), b"{\"a\":1}\n");
    assert!(out.status.success());
    assert_eq!(std::fs::read(dir.join("help")).unwrap(), b"{\"a\":1}\n");
}

/// `smart-tee completions SHELL` and `smart-tee man`: a bash script that parses, zsh and fish
/// scripts that name the flags, and a man page with every flag that groff renders.
#[test]
fn completions_and_man_page() {
    let bash = run(bin().args(["completions", "bash"]), b"");
    assert!(bash.status.success());
    let dir = common::tempdir("completions");
    let script = dir.join("smart-tee.bash");
    std::fs::write(&script, &bash.stdout).unwrap();
    let parsed = run(Command::new("bash").arg("-n").arg(&script), b"");
    assert!(parsed.status.success(), "bash -n: {}", stderr(&parsed));
    for shell in ["zsh", "fish"] {
        let out = run(bin().args(["completions", shell]), b"");
        assert!(out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("max-line-bytes"),
            "{shell}"
        );
    }
    let bad = run(bin().args(["completions", "tcsh"]), b"");
    assert_eq!(bad.status.code(), Some(2));
    let man = run(bin().arg("man"), b"");
    assert!(man.status.success());
    let page = String::from_utf8(man.stdout).unwrap();
    assert!(page.contains(".TH smart-tee 1"), "{page}");
    for flag in ["max\\-line\\-bytes", "view", "compact", "redact", "summary"] {
        assert!(page.contains(flag), "man page lacks {flag}");
    }
    // The synopsis writes `-p` as `[-p]`: clap_mangen gave `[-p ]` (found by a new user).
    let synopsis = page.lines().find(|l| l.contains("\\-\\-append")).unwrap();
    assert!(synopsis.contains("[\\fB\\-p\\fR]"), "{synopsis}");
    assert!(!synopsis.contains(" \\fR]"), "{synopsis}");
    let man_dir = common::tempdir("man");
    let page_file = man_dir.join("smart-tee.1");
    std::fs::write(&page_file, &page).unwrap();
    let on_path = |name: &str| {
        std::env::var_os("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
    };
    if on_path("groff") {
        let rendered = run(
            Command::new("groff")
                .args(["-man", "-Tascii", "-P-bou"])
                .arg(&page_file),
            b"",
        );
        assert!(rendered.status.success(), "{}", stderr(&rendered));
        assert!(String::from_utf8_lossy(&rendered.stdout).contains("NAME"));
    } else {
        eprintln!("NOTE: groff is not installed: the man page's rendering was not checked");
    }
}

/// A stdout on `/dev/null` opened read-write (Python's `subprocess.DEVNULL`) is a working
/// stdout, not a closed one: it was taken for `>&-` (exit 1, "Bad file descriptor") when the
/// check looked at descriptor 1 after Rust's runtime had put `/dev/null` on a closed one.
#[test]
fn a_read_write_dev_null_stdout_is_not_a_closed_one() {
    let dir = tempdir("devnull-rw");
    let log = dir.join("l");
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
        .unwrap();
    let mut child = bin()
        .arg(&log)
        .stdin(Stdio::piped())
        .stdout(Stdio::from(null))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"a\":1}\n")
        .unwrap();
    let out = common::output_timeout(child);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    assert_eq!(std::fs::read(&log).unwrap(), b"{\"a\":1}\n");
}

/// Input for the stdout-path tests: JSON lines over and under the budget, binary bytes, no final
/// newline, a few MiB so that it takes many reads and fills a pipe many times.
fn mixed_input() -> Vec<u8> {
    let mut input = Vec::new();
    for i in 0..300 {
        input.extend_from_slice(
            format!(
                "{{\"type\":\"user\",\"n\":{i},\"content\":\"{}\"}}\n",
                "y".repeat(i * 37)
            )
            .as_bytes(),
        );
        input.extend((0..=255u8).cycle().skip(i).take(9_000));
        input.push(b'\n');
    }
    input.extend_from_slice(b"{\"type\":\"result\"");
    input
}

/// Runs `script` in bash with `file` on its stdin and stdout piped; returns the output.
fn run_with_file_stdin(script: &str, file: &Path) -> Output {
    let child = Command::new("bash")
        .args(["-c", script])
        .stdin(std::fs::File::open(file).unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    common::output_timeout(child)
}

#[test]
fn a_file_on_stdin_and_a_pipe_on_stdout_pass_every_byte() {
    // This pair is fed by splice(2) and pread(2); a file on stdout takes the copying path.
    let dir = tempdir("splice-file");
    let input = mixed_input();
    let file = dir.join("in");
    std::fs::write(&file, &input).unwrap();
    let st = env!("CARGO_BIN_EXE_smart-tee");
    let (spliced, copied) = (dir.join("spliced.jsonl"), dir.join("copied.jsonl"));
    let out = run_with_file_stdin(&format!("{st} {}", spliced.display()), &file);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(out.stdout == input, "stdout differs from the input");
    let to_file = dir.join("stdout");
    let script = format!("{st} {} > {}", copied.display(), to_file.display());
    let out = run_with_file_stdin(&script, &file);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::read(&to_file).unwrap() == input);
    let log = std::fs::read(&spliced).unwrap();
    assert_eq!(lines(&log).len(), input_lines(&input).len());
    assert!(
        log == std::fs::read(&copied).unwrap(),
        "the two paths log the same"
    );
}

#[test]
fn a_file_on_stdin_is_read_from_its_offset_and_left_at_its_end() {
    // As with tee: what an earlier command read is not copied, and a later one reads nothing.
    let dir = tempdir("splice-offset");
    let input = mixed_input();
    let file = dir.join("in");
    std::fs::write(&file, &input).unwrap();
    let log = dir.join("l.jsonl");
    let script = format!(
        "dd bs=1000 count=1 of=/dev/null status=none; {} {}; echo -n END; cat",
        env!("CARGO_BIN_EXE_smart-tee"),
        log.display()
    );
    let out = run_with_file_stdin(&script, &file);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut want = input[1000..].to_vec();
    want.extend_from_slice(b"END");
    assert!(
        out.stdout == want,
        "stdout is the input past 1000 bytes, then nothing"
    );
    let logged = std::fs::read(&log).unwrap();
    assert_eq!(lines(&logged).len(), input_lines(&input[1000..]).len());
}

#[test]
fn a_pipe_on_stdin_and_on_stdout_pass_every_byte() {
    // This pair is fed by tee(2) and read(2); compared with the log of the copying path.
    let dir = tempdir("splice-pipe");
    let input = mixed_input();
    let (teed, copied) = (dir.join("teed.jsonl"), dir.join("copied.jsonl"));
    let out = run(bin().arg(&teed), &input);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(out.stdout == input, "stdout differs from the input");
    let to_file = dir.join("stdout");
    let script = format!(
        "{} {} < /dev/stdin > {}",
        env!("CARGO_BIN_EXE_smart-tee"),
        copied.display(),
        to_file.display()
    );
    let out = run(Command::new("bash").args(["-c", &script]), &input);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::read(&to_file).unwrap() == input);
    assert!(std::fs::read(&teed).unwrap() == std::fs::read(&copied).unwrap());
}

/// `smart-tee -a -a LOG` was refused (status 2, no log) where GNU tee accepts a flag given
/// twice: every flag of the tee may be repeated, and an option given twice takes its last value.
#[test]
fn a_flag_given_twice_is_accepted_as_tee_accepts_it() {
    let dir = tempdir("repeated-flags");
    let log = dir.join("log");
    for flag in [
        "-a",
        "--append",
        "-i",
        "-p",
        "--plain",
        "--omit-images",
        "--redact",
        "--no-default-fields",
        "--add-timestamp",
    ] {
        std::fs::write(&log, "").unwrap();
        let out = run(bin().args([flag, flag]).arg(&log), b"{\"a\":1}\n");
        assert!(out.status.success(), "{flag}: {}", stderr(&out));
        assert!(
            std::fs::read(&log).unwrap().starts_with(b"{\"a\":1"),
            "{flag}"
        );
    }
    let out = run(bin().args(["--stats", "--stats"]).arg(&log), b"{\"a\":1}\n");
    assert!(out.status.success(), "--stats: {}", stderr(&out));
    // The last value counts.
    let long = format!("{{\"s\":\"{}\"}}\n", "x".repeat(1000));
    let out = run(
        bin().args(["-b", "5000", "-b", "200"]).arg(&log),
        long.as_bytes(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::read(&log).unwrap().len() <= 201);
}

/// #50: `-h` fits one screen (the usage, the most used flags, three examples, the modes);
/// `--help` keeps every flag and ends with its examples; the man page has them too, and its SEE
/// ALSO names only pages that exist (no `smart-tee-mcp(1)`).
#[test]
fn short_help_fits_a_screen_and_every_help_has_examples() {
    let short = run(bin().arg("-h"), b"");
    assert!(short.status.success());
    let short = String::from_utf8_lossy(&short.stdout);
    assert!(
        short.lines().count() <= 40,
        "-h is {} lines",
        short.lines().count()
    );
    for word in [
        "Examples:",
        "--view",
        "--summary",
        "--compact",
        "mcp",
        "completions",
        "man",
        "--max-line-bytes",
        "--redact",
        "--archive",
    ] {
        assert!(short.contains(word), "-h lacks {word}");
    }
    assert!(
        !short.contains("--stdout-max-line-bytes"),
        "-h shows every flag"
    );
    let long = run(bin().arg("--help"), b"");
    let long = String::from_utf8_lossy(&long.stdout);
    assert!(long.lines().count() > 150, "--help keeps every flag");
    assert!(long.contains("--stdout-max-line-bytes"));
    let examples = long.rfind("Examples:").expect("--help has examples");
    assert!(
        long[examples..].contains("smart-tee mcp --root"),
        "the examples end --help"
    );
    let man = run(bin().arg("man"), b"");
    let man = String::from_utf8_lossy(&man.stdout);
    assert!(man.contains(".SH EXAMPLES") && man.contains(".SH \"SEE ALSO\""));
    assert!(!man.contains("smart\\-tee\\-mcp(1)") && !man.contains("smart-tee-mcp(1)"));
}
