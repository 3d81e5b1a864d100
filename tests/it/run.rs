//! `smart-tee run`: the agent started under the tee, driven by the fake agents of
//! tests/fake_agent.py. Each case checks the exit status, that no process of the agent's group
//! is left, the log's lines (one per line of standard output) and the summary. Durations are
//! short and no case asserts how long anything took; every wait is bounded
//! ([`common::output_timeout`]).

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::Value;

use crate::common::{bin, lines, output_timeout, stderr, tempdir};

fn fake_agent() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake_agent.py")
}

/// Runs `smart-tee run FLAGS... LOG -- fake_agent.py MODE` in `dir`, stdin empty.
fn run_agent(dir: &Path, flags: &[&str], mode: &str) -> Output {
    let child = bin()
        .current_dir(dir)
        .arg("run")
        .args(flags)
        .arg("a.jsonl")
        .arg("--")
        .arg(fake_agent())
        .arg(mode)
        .env("FAKE_AGENT_PIDS", dir.join("pids"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    output_timeout(child)
}

/// The processes whose process group is `pgid`, zombies included (from /proc).
fn group_members(pgid: u32) -> Vec<String> {
    let mut left = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...: the fields after the last ')'.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.get(2) == Some(&pgid.to_string().as_str()) {
            left.push(stat);
        }
    }
    left
}

/// The agent's pids as it wrote them, and a check that none of its group is left.
fn assert_group_gone(dir: &Path) -> Vec<u32> {
    let text = std::fs::read_to_string(dir.join("pids")).unwrap();
    let pids: Vec<u32> = text
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    // The agent leads its group: its pid is the group's id.
    let left = group_members(pids[0]);
    assert!(left.is_empty(), "left of the agent's group: {left:?}");
    for pid in &pids {
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "process {pid} is left"
        );
    }
    pids
}

/// The log has one valid JSON line per line of standard output, each the same event.
fn assert_log_matches_stdout(dir: &Path, out: &Output) -> Vec<Value> {
    let log = std::fs::read(dir.join("a.jsonl")).unwrap();
    let logged = lines(&log);
    let streamed = lines(&out.stdout);
    assert_eq!(
        logged.len(),
        streamed.len(),
        "{}",
        String::from_utf8_lossy(&log)
    );
    logged
        .iter()
        .zip(&streamed)
        .map(|(l, s)| {
            let l: Value = serde_json::from_slice(l).unwrap();
            let s: Value = serde_json::from_slice(s).unwrap();
            assert_eq!(l, s);
            l
        })
        .collect()
}

fn summary(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("s.json")).unwrap()).unwrap()
}

/// `cmd`'s output, its wait bounded.
fn output_of(cmd: &mut std::process::Command) -> Output {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    output_timeout(child)
}

/// `--summary --format json` of the log in `dir`.
fn read_summary(dir: &Path) -> Value {
    let out = output_of(
        bin()
            .args(["--summary", "--format", "json"])
            .arg(dir.join("a.jsonl")),
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A stall after 1 s, SIGKILL 1 s after SIGTERM, the summary in `s.json`.
const STALL_1S: [&str; 6] = [
    "--stall-after",
    "1s",
    "--kill-after",
    "1s",
    "--summary-json",
    "s.json",
];

/// The issue's "done when": a stalled agent is stopped with its children, the status says
/// stalled, the log is whole and the summary says it stalled.
#[test]
fn a_stalled_agent_is_stopped_with_its_group_and_the_summary_says_so() {
    let dir = tempdir("run_stall");
    let flags = STALL_1S;
    let out = run_agent(&dir, &flags, "stall");
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert_group_gone(&dir);
    let events = assert_log_matches_stdout(&dir, &out);
    assert_eq!(events.len(), 2);
    assert!(stderr(&out).contains("stalled, stopped by smart-tee after 1s"));
    let s = summary(&dir);
    assert_eq!(s["state"], "stalled");
    assert_eq!(s["run"]["outcome"], "stalled");
    assert_eq!(s["run"]["agent_signal"], 15);
    assert_eq!(s["run"]["exit_status"], 5);
    assert_eq!(s["events"], 2);
    // The log itself holds the agent's lines only: the reason is not in it.
    let log = std::fs::read_to_string(dir.join("a.jsonl")).unwrap();
    assert!(!log.contains("smart-tee"), "{log}");
}

/// A child that ignores SIGTERM, and an agent that does too: SIGKILL after --kill-after.
#[test]
fn a_group_that_ignores_sigterm_is_killed_after_the_grace() {
    let dir = tempdir("run_stubborn");
    let flags = STALL_1S;
    let out = run_agent(&dir, &flags, "stubborn");
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let pids = assert_group_gone(&dir);
    assert_eq!(pids.len(), 2);
    assert!(stderr(&out).contains("SIGKILL"), "{}", stderr(&out));
    assert_eq!(assert_log_matches_stdout(&dir, &out).len(), 2);
    let s = summary(&dir);
    assert_eq!(s["run"]["agent_signal"], 9);
    assert_eq!(s["run"]["outcome"], "stalled");
}

/// A child that left the agent's group (setsid) and holds its standard output open does not
/// keep smart-tee waiting for the end of it once the agent and its group are gone.
#[test]
fn an_escaped_child_holding_the_output_open_does_not_hang_the_run() {
    let dir = tempdir("run_escape");
    let out = run_agent(&dir, &["--summary-json", "s.json"], "escape");
    let escaped = std::fs::read_to_string(dir.join("pids-escaped")).unwrap();
    let still_held = Path::new(&format!("/proc/{}", escaped.trim())).exists();
    let _ = std::process::Command::new("kill")
        .arg(escaped.trim())
        .status();
    assert!(still_held, "the escaped child ended before smart-tee did");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("held open"), "{}", stderr(&out));
    assert_group_gone(&dir);
    assert_eq!(assert_log_matches_stdout(&dir, &out).len(), 3);
    let s = summary(&dir);
    assert_eq!(s["run"]["outcome"], "ok");
    assert_eq!(s["run"]["log_failed"], false);
}

/// An agent that does not exit after its final event is stopped by --stall-after, but the run
/// had ended: the final event's verdict is the status, and the summary says it was stopped.
#[test]
fn an_agent_lingering_after_its_final_event_is_stopped_but_not_called_stalled() {
    let dir = tempdir("run_linger");
    let flags = STALL_1S;
    let out = run_agent(&dir, &flags, "linger");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_group_gone(&dir);
    assert_eq!(assert_log_matches_stdout(&dir, &out).len(), 3);
    let s = summary(&dir);
    assert_eq!(s["run"]["outcome"], "ok");
    assert_eq!(s["state"], "finished");
    let stopped = s["run"]["stopped_by_smart_tee"].as_str().unwrap();
    assert!(
        stopped.starts_with("after its final event: stalled"),
        "{stopped}"
    );
}

/// An agent killed by a signal smart-tee did not send died, though its final event said ok.
#[test]
fn an_agent_killed_after_an_ok_result_died() {
    let dir = tempdir("run_crash");
    let out = run_agent(&dir, &["--summary-json", "s.json"], "crash");
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("killed by signal 9 after its final event"),
        "{}",
        stderr(&out)
    );
    assert_group_gone(&dir);
    let s = summary(&dir);
    assert_eq!(s["run"]["outcome"], "died");
    assert_eq!(s["run"]["agent_signal"], 9);
    let agent = run_agent(&dir, &["--agent-status"], "crash");
    assert_eq!(agent.status.code(), Some(128 + 9));
}

/// Heartbeats say the agent is alive, not that it progressed: the stall clock runs on.
#[test]
fn heartbeats_do_not_hold_off_a_stall() {
    let dir = tempdir("run_heartbeat");
    let out = run_agent(
        &dir,
        &["--stall-after", "1s", "--kill-after", "1s"],
        "heartbeat",
    );
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert_group_gone(&dir);
    let events = assert_log_matches_stdout(&dir, &out);
    assert!(events.iter().any(|e| e["type"] == "keep_alive"));
}

/// A heartbeat written in pieces is a line arriving while it arrives, and a heartbeat once it
/// has: the stall clock goes back to where it was.
#[test]
fn heartbeats_written_in_pieces_do_not_hold_off_a_stall() {
    let dir = tempdir("run_heartbeat_pieces");
    let out = run_agent(
        &dir,
        &["--stall-after", "1s", "--kill-after", "1s"],
        "heartbeat_pieces",
    );
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert_group_gone(&dir);
    // The stop may come between the pieces of a line: its record is then the log's last line.
    let log = std::fs::read(dir.join("a.jsonl")).unwrap();
    let events: Vec<Value> = lines(&log)
        .iter()
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert!(events.len() >= lines(&out.stdout).len(), "{events:?}");
    assert!(events.iter().any(|e| e["type"] == "keep_alive"));
}

/// A result with is_error: true is a failure, though the agent exits 0.
#[test]
fn a_failed_result_is_a_failure_whatever_the_agent_exits_with() {
    let dir = tempdir("run_failed");
    let out = run_agent(&dir, &["--summary-json", "s.json"], "failed");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_group_gone(&dir);
    assert_eq!(assert_log_matches_stdout(&dir, &out).len(), 3);
    let s = summary(&dir);
    assert_eq!(s["state"], "finished");
    assert_eq!(s["ok"], false);
    assert_eq!(s["run"]["outcome"], "failed");
    assert_eq!(s["run"]["agent_exit_code"], 0);
    // --agent-status: the agent's own.
    let out = run_agent(&dir, &["--agent-status"], "failed");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// An agent that exits without a final event died, whatever its status; its status is in the
/// summary and --agent-status gives it.
#[test]
fn an_agent_without_a_final_event_died() {
    let dir = tempdir("run_nofinal");
    let out = run_agent(&dir, &["--summary-json", "s.json"], "nofinal");
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert_group_gone(&dir);
    assert_eq!(assert_log_matches_stdout(&dir, &out).len(), 2);
    let s = summary(&dir);
    assert_eq!(s["state"], "ended without a final event");
    assert_eq!(s["run"]["outcome"], "died");
    assert_eq!(s["run"]["agent_exit_code"], 3);
    let out = run_agent(&dir, &["--agent-status"], "nofinal");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
}

/// A run that ends well exits 0; standard output has every byte, the log every line.
#[test]
fn an_ok_run_exits_0() {
    let dir = tempdir("run_ok");
    let out = run_agent(&dir, &["--summary-json", "s.json", "--stats"], "ok");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_group_gone(&dir);
    assert_eq!(assert_log_matches_stdout(&dir, &out).len(), 3);
    let s = summary(&dir);
    assert_eq!(s["run"]["outcome"], "ok");
    assert_eq!(s["ok"], true);
    assert_eq!(s["run"]["stopped_by_smart_tee"], Value::Null);
}

/// Kimi CLI's stream has no final event (#51): under `smart-tee run` its ending is the agent's
/// exit, 0 its success and another status its failure, never "died".
#[test]
fn a_format_without_a_final_event_ends_as_its_process_exits() {
    for (mode, status, outcome) in [("kimi_ok", 0, "ok"), ("kimi_exit2", 3, "failed")] {
        let dir = tempdir(&format!("run_{mode}"));
        let out = run_agent(&dir, &["--summary-json", "s.json"], mode);
        assert_eq!(out.status.code(), Some(status), "{mode}: {}", stderr(&out));
        assert_group_gone(&dir);
        assert_eq!(assert_log_matches_stdout(&dir, &out).len(), 3);
        let s = summary(&dir);
        assert_eq!(s["run"]["outcome"], outcome, "{mode}");
        assert_eq!(s["agent"], "kimi-cli", "{mode}");
        assert_eq!(
            s["state"], "exited; the format has no final event",
            "{mode}"
        );
        assert!(!stderr(&out).contains("died"), "{mode}: {}", stderr(&out));
    }
}

/// The cost ceiling uses the summary's cost, estimated here (the agent reports none until
/// its result): the run is stopped once it passes.
#[test]
fn a_run_past_its_cost_ceiling_is_stopped() {
    let dir = tempdir("run_cost");
    let flags = [
        "--max-cost",
        "0.05",
        "--kill-after",
        "1s",
        "--summary-json",
        "s.json",
    ];
    let out = run_agent(&dir, &flags, "spend");
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    assert_group_gone(&dir);
    assert!(assert_log_matches_stdout(&dir, &out).len() >= 3);
    let s = summary(&dir);
    assert_eq!(s["run"]["outcome"], "over_ceiling");
    assert_eq!(s["cost_estimated"], true);
    assert!(s["cost_usd"].as_f64().unwrap() > 0.05, "{s}");
    // The same figures as --summary reads of the log.
    let read = read_summary(&dir);
    assert_eq!(read["cost_usd"], s["cost_usd"]);
    assert_eq!(read["output_tokens"], s["output_tokens"]);
    let out = run_agent(
        &dir,
        &["--max-output-tokens", "2500", "--kill-after", "1s"],
        "spend",
    );
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    assert!(stderr(&out).contains("output-token ceiling"));
}

/// --timeout stops a run that keeps going.
#[test]
fn a_run_past_its_timeout_is_stopped() {
    let dir = tempdir("run_timeout");
    let out = run_agent(
        &dir,
        &["--timeout", "1s", "--kill-after", "1s"],
        "heartbeat",
    );
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    assert_group_gone(&dir);
    assert_log_matches_stdout(&dir, &out);
}

/// SIGTERM to smart-tee reaches the agent's group; every line is logged; 128 + 15.
#[test]
fn sigterm_to_smart_tee_reaches_the_agent() {
    use std::io::BufRead;
    let dir = tempdir("run_signal");
    let mut child = bin()
        .current_dir(&*dir)
        .args(["run", "--summary-json", "s.json", "a.jsonl", "--"])
        .arg(fake_agent())
        .arg("stall")
        .env("FAKE_AGENT_PIDS", dir.join("pids"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The agent's two lines, read on a thread: the wait for them is bounded.
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = std::io::BufReader::new(stdout);
        let mut first = String::new();
        for _ in 0..2 {
            out.read_line(&mut first).unwrap();
        }
        let _ = tx.send(out);
    });
    let Ok(out) = rx.recv_timeout(crate::common::CHILD_TIMEOUT) else {
        let _ = child.kill();
        panic!("the agent's lines did not come");
    };
    child.stdout = Some(out.into_inner());
    // The log reads `running` while the agent runs.
    let read = read_summary(&dir);
    assert_eq!(read["state"], "running", "{read}");
    output_of(std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]));
    let out = output_timeout(child);
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    assert_group_gone(&dir);
    let log = std::fs::read(dir.join("a.jsonl")).unwrap();
    assert_eq!(lines(&log).len(), 2);
    let s = summary(&dir);
    assert_eq!(s["run"]["signal_received"], 15);
    assert_eq!(s["run"]["agent_signal"], 15);
}

/// `run` is a mode: a log named `run` is written `./run`.
#[test]
fn a_log_named_run_is_written_there() {
    let dir = tempdir("run_named");
    let out = output_of(
        bin()
            .current_dir(&*dir)
            .args(["run", "run", "--"])
            .arg(fake_agent())
            .arg("ok"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(lines(&std::fs::read(dir.join("run")).unwrap()).len(), 3);
}

/// A command line without COMMAND, a bad duration, a COMMAND that cannot be started: usage.
#[test]
fn usage_errors_exit_2() {
    let dir = tempdir("run_usage");
    for args in [
        &["run", "a.jsonl"][..],
        &["run", "a.jsonl", "--"],
        &["run", "--stall-after", "soon", "a.jsonl", "--", "true"],
        &["run", "--max-cost", "-1", "a.jsonl", "--", "true"],
        &["run", "--bogus", "a.jsonl", "--", "true"],
        &["run", "a.jsonl", "--", "/nonexistent/agent"],
    ] {
        let out = output_of(bin().current_dir(&*dir).args(args));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).is_empty(), "{args:?}");
    }
}

/// Under --output-error exit, a standard output that fails ends the tee, and smart-tee stops
/// the agent: status 1 (an output failed), not "died" for the SIGTERM smart-tee sent.
#[test]
fn an_output_that_fails_under_exit_mode_is_not_called_died() {
    let dir = tempdir("run_output_exit");
    let mut child = bin()
        .current_dir(&*dir)
        .args(["run", "--output-error=exit", "--summary-json", "s.json"])
        .args(["--kill-after", "1s", "a.jsonl", "--"])
        .arg(fake_agent())
        .arg("spend")
        .env("FAKE_AGENT_PIDS", dir.join("pids"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Standard output's reader gone before the first write.
    drop(child.stdout.take());
    let out = output_timeout(child);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(!stderr(&out).contains("died"), "{}", stderr(&out));
    assert_group_gone(&dir);
    let s = summary(&dir);
    assert_eq!(s["run"]["outcome"], "log_failed");
    assert_eq!(s["run"]["agent_signal"], 15);
}

/// Ctrl-Z stops the agent's group, which holds the terminal: smart-tee stops too and takes the
/// terminal back, so that an interactive shell sees its job stopped and gives its prompt back;
/// `fg` goes on with the run (here to the stall it was waiting for).
#[test]
fn ctrl_z_stops_the_run_as_a_job_and_fg_resumes_it() {
    let dir = tempdir("run_ctrl_z");
    let script = r#"
import os, pty, select, sys, time
st, agent, log = sys.argv[1:4]
pid, fd = pty.fork()
if pid == 0:
    os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
out = b""
def wait_for(needle, t=60):
    global out
    end = time.time() + t
    while needle not in out and time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                out += os.read(fd, 4096)
            except OSError:
                break
    return needle in out
os.write(fd, b"PS1='P> '\n")
wait_for(b"P> ")
os.write(fd, f'"{st}" run --stall-after 5s --kill-after 1s "{log}" -- "{agent}" stall >/dev/null\n'.encode())
end = time.time() + 60
while time.time() < end and not (os.path.exists(log) and open(log).read().count("\n") >= 2):
    time.sleep(0.05)
os.write(fd, b"\x1a")
wait_for(b"Stopped")
os.write(fd, b"fg; echo FG=$?\n")
wait_for(b"FG=5")
wait_for(b"P> ", 5)
os.write(fd, b"exit\n")
sys.stdout.write(out.decode(errors="replace"))
"#;
    let (out, text) = python_with_a_terminal(script, &dir.join("a.jsonl"));
    assert!(text.contains("Stopped"), "{text}{}", stderr(&out));
    assert!(text.contains("FG=5"), "{text}{}", stderr(&out));
}

/// `python3 -c script SMART_TEE FAKE_AGENT LOG` (the scripts that give smart-tee a terminal):
/// its output, and its stdout as text.
fn python_with_a_terminal(script: &str, log: &std::path::Path) -> (std::process::Output, String) {
    let out = output_of(
        std::process::Command::new("python3")
            .arg("-c")
            .arg(script)
            .arg(env!("CARGO_BIN_EXE_smart-tee"))
            .arg(fake_agent())
            .arg(log),
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (out, text)
}

/// --summary-json naming a LOG would rename the summary over the log at the end: refused, the
/// log as it was.
#[test]
fn a_summary_json_that_is_a_log_is_refused() {
    let dir = tempdir("run_summary_is_log");
    std::fs::write(dir.join("a.jsonl"), "{\"type\":\"keep\"}\n").unwrap();
    for named in ["a.jsonl", "./a.jsonl", "b.jsonl"] {
        let args = [
            "run",
            "--summary-json",
            named,
            "a.jsonl",
            "b.jsonl",
            "--",
            "true",
        ];
        let out = output_of(bin().current_dir(&*dir).args(args));
        assert_eq!(out.status.code(), Some(2), "{named}: {}", stderr(&out));
        assert!(stderr(&out).contains("also a LOG"), "{}", stderr(&out));
    }
    let log = std::fs::read_to_string(dir.join("a.jsonl")).unwrap();
    assert_eq!(log, "{\"type\":\"keep\"}\n");
    assert!(!dir.join("b.jsonl").exists());
}

/// With a terminal on standard input, the agent's group is the terminal's foreground group
/// during the run, and smart-tee's group has it back afterwards. A pseudo-terminal is made the
/// controlling terminal of a shell (python3's pty), which runs smart-tee and then asks whose
/// the terminal is.
#[test]
fn the_terminal_is_lent_to_the_agent_and_given_back() {
    let dir = tempdir("run_tty");
    let script = r#"
import fcntl, os, pty, subprocess, sys, termios
st, agent, log = sys.argv[1:4]
master, slave = pty.openpty()
def own_terminal():
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
after = 'python3 -c "import os; print(\'back\', os.tcgetpgrp(0) == os.getpgrp())"'
shell = f'"{st}" run "{log}" -- "{agent}" tty > /dev/null; echo "status $?"; {after}'
p = subprocess.Popen(["sh", "-c", shell], stdin=slave, stdout=subprocess.PIPE,
                     preexec_fn=own_terminal, pass_fds=(slave,))
os.close(slave)
out, _ = p.communicate(timeout=100)
sys.stdout.write(out.decode())
"#;
    let (out, text) = python_with_a_terminal(script, &dir.join("a.jsonl"));
    assert!(text.contains("status 0\n"), "{text}{}", stderr(&out));
    assert!(text.contains("back True"), "{text}{}", stderr(&out));
    let log = std::fs::read(dir.join("a.jsonl")).unwrap();
    let events: Vec<Value> = lines(&log)
        .iter()
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert_eq!(events[1]["foreground"], true, "{events:?}");
}

/// A log that cannot be written: said on stderr and in the summary; the run's own outcome
/// still gives the status (1 only for a run that was otherwise ok).
#[test]
fn a_log_that_cannot_be_written_does_not_hide_the_outcome() {
    let dir = tempdir("run_log_failed");
    for (mode, status, streamed) in [("ok", 1, 3), ("failed", 3, 3), ("nofinal", 4, 2)] {
        let out = output_of(
            bin()
                .current_dir(&*dir)
                .args([
                    "run",
                    "--summary-json",
                    "s.json",
                    "no/such/dir/a.jsonl",
                    "--",
                ])
                .arg(fake_agent())
                .arg(mode)
                .env("FAKE_AGENT_PIDS", dir.join("pids")),
        );
        assert_eq!(out.status.code(), Some(status), "{mode}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("no/such/dir/a.jsonl"),
            "{}",
            stderr(&out)
        );
        assert_eq!(lines(&out.stdout).len(), streamed, "{mode}");
        assert_group_gone(&dir);
        let s = summary(&dir);
        assert_eq!(s["run"]["log_failed"], true);
        assert_eq!(s["run"]["exit_status"], status);
    }
}
