//! The writing side's promises under stress, each provoked on purpose: a stop signal while
//! stdout is slow (a pipe or a socket nobody reads yet), a slow log, a non-blocking stdout, a
//! short descriptor limit, a torn or unended last line under `-a`, a second writer without
//! `-a`, and compaction of a log that is not the compactor's own.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::fs::OFlags;

use crate::common::{self, bin, lines, strict_parse};

fn tempdir(name: &str) -> common::TestDir {
    common::tempdir(&format!("writing-{name}"))
}

/// `{"i":0}` to `{"i":n-1}`, one a line.
fn numbered(n: usize) -> Vec<u8> {
    let mut v = Vec::new();
    for i in 0..n {
        writeln!(v, "{{\"i\":{i}}}").unwrap();
    }
    v
}

fn kill(child: &Child, sig: &str) {
    let status = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits until `ready` holds, failing the test after [`common::CHILD_TIMEOUT`].
fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < common::CHILD_TIMEOUT,
            "waited too long: {what}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Writes `input` to the child's stdin on a thread and hands the stdin back, still open.
fn feed(stdin: ChildStdin, input: Vec<u8>) -> std::thread::JoinHandle<ChildStdin> {
    std::thread::spawn(move || {
        let mut stdin = stdin;
        let _ = stdin.write_all(&input);
        stdin
    })
}

/// Everything left to read from `fd`, once every writer has closed it.
fn drain(fd: OwnedFd) -> Vec<u8> {
    rustix::fs::fcntl_setfl(&fd, OFlags::empty()).unwrap();
    let mut v = Vec::new();
    std::fs::File::from(fd).read_to_end(&mut v).unwrap();
    v
}

/// The complete lines of `bytes` (what comes after the last newline is left out).
fn complete_lines(bytes: &[u8]) -> Vec<&[u8]> {
    let end = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
    lines(&bytes[..end])
}

/// #27.1: stdout a pipe (fed inside the kernel), a socket (what Node-based parents hand their
/// children) or a pipe behind `--stdout-max-line-bytes`, that nobody reads yet: once stdout
/// has bytes, each stop signal must leave in the log every line stdout got. The reader used to
/// write a chunk to stdout before it queued it for the log, and the stop overtook it.
#[test]
fn a_stop_signal_on_a_slow_stdout_loses_no_line_stdout_got() {
    let dir = tempdir("stop-slow-stdout");
    let input = numbered(400_000);
    for (sig, status) in [("-TERM", 143), ("-INT", 130), ("-HUP", 129), ("-QUIT", 131)] {
        for kind in ["pipe", "socket", "capped pipe"] {
            let log = dir.join(format!("{}-{}", &sig[1..], kind.replace(' ', "-")));
            let (ours, theirs): (OwnedFd, OwnedFd) = if kind == "socket" {
                let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
                (a.into(), b.into())
            } else {
                rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).unwrap()
            };
            let mut cmd = bin();
            if kind == "capped pipe" {
                cmd.args(["--stdout-max-line-bytes", "100000"]);
            }
            let mut child = cmd
                .arg(&log)
                .stdin(Stdio::piped())
                .stdout(Stdio::from(theirs))
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            drop(cmd); // its copy of the write end
            let stdin = feed(child.stdin.take().unwrap(), input.clone());
            wait_until("stdout to get bytes", || {
                rustix::io::ioctl_fionread(&ours).unwrap_or(0) > 0
            });
            kill(&child, sig);
            let code = common::wait_timeout(&mut child).code();
            assert_eq!(code, Some(status), "{sig} on a {kind}");
            drop(stdin.join().unwrap());
            let got = drain(ours);
            let logged = std::fs::read(&log).unwrap();
            let (got, logged) = (complete_lines(&got), lines(&logged));
            assert!(!got.is_empty());
            assert!(
                logged.len() >= got.len() && logged[..got.len()] == got[..],
                "{sig} on a {kind}: stdout got {} lines, the log holds {} of them",
                got.len(),
                logged.iter().zip(&got).take_while(|(a, b)| a == b).count()
            );
        }
    }
}

/// #27.5: a log that drains slowly (here a FIFO nobody reads yet) must not hold stdout back
/// while less than the queue's bound (8 MiB) waits for it. Two chunks used to be queued, and
/// stdout waited for the FIFO. With `--archive` the archive's frames were counted against the
/// bound, and stdout stopped after 2.25 MiB (#49's audit).
#[test]
fn a_slow_log_does_not_hold_stdout_back() {
    for archive in [false, true] {
        let dir = tempdir(if archive {
            "slow-log-archive"
        } else {
            "slow-log"
        });
        let fifo = dir.join("fifo");
        common::mkfifo(&fifo);
        // Opened for reading first (without waiting for a writer), and not read yet.
        let reader = rustix::fs::open(
            &fifo,
            OFlags::RDONLY | OFlags::NONBLOCK,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
        let input = numbered(500_000); // about 5.6 MB
        let mut cmd = bin();
        if archive {
            cmd.arg("--archive").arg(dir.join("orig.zst"));
        }
        // Killed if the test fails: blocked on the FIFO, it would never exit.
        let mut child = common::Reaped(
            cmd.arg(&fifo)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let stdin = feed(child.0.stdin.take().unwrap(), input.clone());
        let mut stdout = child.0.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let want = input.len();
        std::thread::spawn(move || {
            let mut got = vec![0; want];
            let _ = tx.send(stdout.read_exact(&mut got).map(|()| got));
        });
        let got = rx
            .recv_timeout(common::CHILD_TIMEOUT)
            .unwrap_or_else(|_| panic!("archive {archive}: stdout waited for the log"))
            .unwrap();
        assert!(got == input);
        drop(stdin.join().unwrap());
        let logged = drain(reader);
        assert!(common::wait_timeout(&mut child.0).success());
        assert!(logged == input, "the log gets every line too");
    }
}

/// #34.4: a stdout that another process made non-blocking, and that is full when smart-tee
/// starts: each write that returns EAGAIN is waited on and done, on the in-kernel path (a pipe)
/// and on the copying one (`--stdout-max-line-bytes`). It used to stop with "Resource
/// temporarily unavailable".
#[test]
fn a_full_non_blocking_stdout_is_waited_on() {
    let dir = tempdir("nonblocking");
    let input = numbered(100_000);
    for args in [&[][..], &["--stdout-max-line-bytes", "100000"]] {
        let log = dir.join("l");
        let (ours, theirs) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).unwrap();
        rustix::fs::fcntl_setfl(&theirs, OFlags::NONBLOCK).unwrap();
        let mut filler = 0;
        while let Ok(n) = rustix::io::write(&theirs, &[b'\n'; 4096]) {
            filler += n;
        }
        let mut cmd = bin();
        let mut child = cmd
            .args(args)
            .arg(&log)
            .stdin(Stdio::piped())
            .stdout(Stdio::from(theirs))
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(cmd);
        // Read while fed: inside the kernel, stdin is consumed only as stdout takes it.
        let reader = std::thread::spawn(move || drain(ours));
        drop(
            feed(child.stdin.take().unwrap(), input.clone())
                .join()
                .unwrap(),
        );
        let out = common::output_timeout(child);
        let got = reader.join().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(got.len(), filler + input.len(), "{args:?}");
        assert!(got[filler..] == input[..], "{args:?}");
        assert!(std::fs::read(&log).unwrap() == input);
    }
}

/// #34.4: with `--output-error=exit`, a log that cannot be opened ends the run at once, as GNU
/// tee does (status 1, nothing copied); the other modes name it and go on.
#[test]
fn output_error_exit_ends_the_run_on_a_log_that_cannot_be_opened() {
    let dir = tempdir("exit-open");
    let bad = dir.join("no/such/dir/l");
    for mode in ["exit", "exit-nopipe"] {
        let out = common::run_cmd(
            bin().arg(format!("--output-error={mode}")).arg(&bad),
            b"{\"a\":1}\n",
        );
        assert_eq!(out.status.code(), Some(1), "{mode}");
        assert!(out.stdout.is_empty(), "{mode}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("no/such/dir/l"), "{err}");
    }
    let out = common::run_cmd(bin().arg("--output-error=warn").arg(&bad), b"{\"a\":1}\n");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, b"{\"a\":1}\n");
}

/// #27.7: under a short descriptor limit, the logs that get no descriptor are named and left
/// out; stdout gets the whole stream. A duplicate of stdin used to fail first and end the run
/// with nothing copied.
#[test]
fn a_short_descriptor_limit_costs_logs_not_the_stream() {
    let dir = tempdir("fd-limit");
    let input = b"{\"i\":1}\n{\"i\":2}\n";
    for (limit, logs) in [(8, 3), (8, 10), (30, 40)] {
        let names: Vec<String> = (0..logs)
            .map(|i| {
                dir.join(format!("{limit}-{logs}-{i}"))
                    .display()
                    .to_string()
            })
            .collect();
        // Descriptors other tests of this process leak into children they spawn at the same
        // moment (a pipe without CLOEXEC) are closed first: the limit is then the tool's alone.
        let script = format!(
            "for fd in /proc/$$/fd/*; do n=${{fd##*/}}; [ \"$n\" -gt 2 ] && eval \"exec $n>&-\" 2>/dev/null; done; \
             ulimit -n {limit} && exec '{}' {}",
            env!("CARGO_BIN_EXE_smart-tee"),
            names
                .iter()
                .map(|n| format!("'{n}'"))
                .collect::<Vec<_>>()
                .join(" ")
        );
        let out = common::run_cmd(Command::new("bash").args(["-c", &script]), input);
        assert_eq!(out.stdout, input, "ulimit -n {limit}, {logs} logs");
        let err = String::from_utf8_lossy(&out.stderr);
        let mut left_out = 0;
        for name in &names {
            if std::fs::read(name).is_ok_and(|l| l == input) {
                continue;
            }
            left_out += 1;
            assert!(
                err.contains(&format!("{name:?}")) && err.contains("Too many open files"),
                "{name} is neither complete nor named: {err}"
            );
        }
        assert_eq!(
            left_out > 0,
            logs > limit,
            "ulimit -n {limit}, {logs} logs: {err}"
        );
        let status = if left_out > 0 { 1 } else { 0 };
        assert_eq!(out.status.code(), Some(status), "{err}");
    }
}

fn appended(log: &Path, before: &[u8], input: &[u8]) -> (Vec<u8>, String) {
    std::fs::write(log, before).unwrap();
    let out = common::run_fed(&["-a"], log, input);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        std::fs::read(log).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// #27.2: `-a` on a log whose last line is complete JSON without its newline (written by
/// `printf`, or by a writer that does not end its lines) keeps that line and ends it, and says
/// so. It used to be cut off as if torn, with no word and status 0.
#[test]
fn appending_keeps_a_complete_last_line_without_newline() {
    let dir = tempdir("append-complete");
    let log = dir.join("t.jsonl");
    let (logged, err) = appended(&log, b"{\"a\":1}\n{\"b\":2}", b"{\"c\":3}\n");
    assert_eq!(logged, b"{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n");
    assert!(err.contains("t.jsonl") && err.contains("newline"), "{err}");
    // A one-line file without a final newline is not emptied.
    let (logged, _) = appended(&log, b"{\"only\":true}", b"{\"c\":3}\n");
    assert_eq!(logged, b"{\"only\":true}\n{\"c\":3}\n");
}

/// #27.2: a torn last line (a writer killed mid-write, written here on purpose) is kept as a
/// `torn` record holding its bytes, and stderr says so: every line stays JSON, nothing is lost.
#[test]
fn appending_keeps_a_torn_last_line_as_a_record() {
    let dir = tempdir("append-torn");
    let log = dir.join("t.jsonl");
    let (logged, err) = appended(&log, b"{\"a\":1}\n{\"b\":\"half", b"{\"c\":3}\n");
    let ls = lines(&logged);
    assert_eq!(ls.len(), 3, "{}", String::from_utf8_lossy(&logged));
    assert_eq!(ls[0], b"{\"a\":1}");
    let record = strict_parse(ls[1]).unwrap();
    assert_eq!(record["type"], "torn");
    assert_eq!(record["text"], "{\"b\":\"half");
    assert_eq!(ls[2], b"{\"c\":3}");
    assert!(err.contains("t.jsonl") && err.contains("torn"), "{err}");
}

/// #27.2: SIGUSR1's reopen repairs the same way as `-a`: a complete last line written to the
/// new file meanwhile is kept and ended.
#[test]
fn a_reopen_keeps_a_complete_last_line_without_newline() {
    let dir = tempdir("reopen-complete");
    let log = dir.join("l");
    let mut child = bin()
        .arg("-a")
        .arg(&log)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"{\"n\":1}\n").unwrap();
    wait_until("the first line", || {
        std::fs::read(&log).is_ok_and(|l| l == b"{\"n\":1}\n")
    });
    std::fs::rename(&log, dir.join("l.1")).unwrap();
    std::fs::write(&log, b"{\"other\":1}").unwrap();
    kill(&child, "-USR1");
    // The reopen ends the other writer's line; only then is the next line sent.
    wait_until("the reopen", || {
        std::fs::read(&log).is_ok_and(|l| l.ends_with(b"\n"))
    });
    stdin.write_all(b"{\"n\":2}\n").unwrap();
    drop(stdin);
    assert!(common::wait_timeout(&mut child).success());
    assert_eq!(std::fs::read(&log).unwrap(), b"{\"other\":1}\n{\"n\":2}\n");
}

/// #27.3: a second smart-tee started without `-a` on a log that a running smart-tee writes
/// used to truncate it, and the first writer's lines were gone. It appends instead, and says
/// why on stderr.
#[test]
fn a_second_writer_without_append_keeps_a_live_writers_lines() {
    let dir = tempdir("second-writer");
    let log = dir.join("l");
    let mut first = bin()
        .arg(&log)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = first.stdin.take().unwrap();
    stdin.write_all(&numbered(1000)).unwrap();
    wait_until("the first writer's lines", || {
        std::fs::read(&log).is_ok_and(|l| lines(&l).len() == 1000)
    });
    let out = common::run_fed(&[], &log, b"{\"second\":1}\n");
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("another smart-tee") && err.contains("appending"),
        "{err}"
    );
    drop(stdin);
    assert!(common::wait_timeout(&mut first).success());
    let mut want = numbered(1000);
    want.extend_from_slice(b"{\"second\":1}\n");
    assert_eq!(std::fs::read(&log).unwrap(), want);
    // Alone on it, a writer without -a truncates, as tee does.
    let out = common::run_fed(&[], &log, b"{\"alone\":1}\n");
    assert!(out.status.success() && out.stderr.is_empty());
    assert_eq!(std::fs::read(&log).unwrap(), b"{\"alone\":1}\n");
}

/// A log that compacts: one long line and one short.
fn compactable(path: &Path) -> Vec<u8> {
    let log = format!(
        "{{\"type\":\"tool\",\"output\":\"{}\"}}\n{{\"n\":1}}\n",
        "x".repeat(20_000)
    );
    std::fs::write(path, &log).unwrap();
    log.into_bytes()
}

fn compact(log: &Path) -> std::process::Output {
    common::run_cmd(bin().arg("--compact").arg(log), b"")
}

/// #27.4: a log compacted by root (a cron job) keeps its owner, group and mode: the new file
/// used to be root's, and the agent's next `smart-tee -a` failed with "Permission denied".
/// (The owner is only changed, and so checked, when the test runs as root.)
#[test]
fn compaction_keeps_the_logs_owner_and_mode() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempdir("compact-owner");
    let log = dir.join("l.jsonl");
    let original = compactable(&log);
    let root = std::fs::metadata("/proc/self").unwrap().uid() == 0;
    if root {
        std::os::unix::fs::chown(&log, Some(65534), Some(65534)).unwrap();
    }
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o604)).unwrap();
    let before = std::fs::metadata(&log).unwrap();
    let out = compact(&log);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = std::fs::metadata(&log).unwrap();
    assert!(after.len() < original.len() as u64, "compacted");
    assert_ne!(after.ino(), before.ino(), "a new file");
    assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
    assert_eq!(after.mode() & 0o7777, 0o604);
}

/// #27.4: what compaction cannot keep whole is refused: a log with a second name (the other
/// name would keep the old content), and a log another process holds open for writing without
/// smart-tee's lock (an idle `tee -a`, here the test itself): its next line would go to the
/// replaced file.
#[test]
fn compaction_refuses_a_hard_linked_log_and_one_held_by_a_writer() {
    let dir = tempdir("compact-refuse");
    let log = dir.join("l.jsonl");
    let original = compactable(&log);
    std::fs::hard_link(&log, dir.join("other-name")).unwrap();
    let out = compact(&log);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("hard links"), "{err}");
    assert_eq!(std::fs::read(&log).unwrap(), original);
    std::fs::remove_file(dir.join("other-name")).unwrap();

    let writer = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    let out = compact(&log);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("process {}", std::process::id())) && err.contains("for writing"),
        "{err}"
    );
    assert_eq!(std::fs::read(&log).unwrap(), original);
    drop(writer);
    assert!(compact(&log).status.success());
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// A rotated log compressed by logrotate (`agent.jsonl.1.gz`, or zstd) is compacted like a
/// plain one and stays compressed the same way: `--compact` used to refuse it as "a binary
/// file, not a log". Its lines are the plain log's compacted lines, byte for byte.
#[test]
fn compaction_of_a_compressed_rotated_log_keeps_it_compressed() {
    let dir = tempdir("compact-compressed");
    let plain = dir.join("l.jsonl");
    let original = compactable(&plain);
    let gz = dir.join("l.jsonl.1.gz");
    std::fs::write(&gz, gzip(&original)).unwrap();
    let zst = dir.join("l.jsonl.2.zst");
    std::fs::write(&zst, zstd::stream::encode_all(&original[..], 3).unwrap()).unwrap();
    for log in [&plain, &gz, &zst] {
        let out = compact(log);
        assert!(
            out.status.success(),
            "{}: {}",
            log.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let compacted = std::fs::read(&plain).unwrap();
    assert!(
        compacted.len() < original.len() / 2,
        "the plain log was cut"
    );
    let mut from_gz = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(&gz).unwrap())
        .read_to_end(&mut from_gz)
        .unwrap();
    assert_eq!(from_gz, compacted, "the gzip log holds the compacted lines");
    let from_zst = zstd::stream::decode_all(std::fs::File::open(&zst).unwrap()).unwrap();
    assert_eq!(
        from_zst, compacted,
        "the zstd log holds the compacted lines"
    );

    // Compacted once, it is left as it is.
    let out = compact(&gz);
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("unchanged"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A compressed log whose stream is cut short (a copy interrupted) is refused, named, and left
/// as it was; `--compact --archive` refuses a compressed log before writing anything.
#[test]
fn compaction_refuses_a_damaged_compressed_log() {
    let dir = tempdir("compact-damaged");
    let original = compactable(&dir.join("plain.jsonl"));
    let gz = dir.join("l.jsonl.1.gz");
    let whole = gzip(&original);
    let damaged = &whole[..whole.len() / 2];
    std::fs::write(&gz, damaged).unwrap();
    let out = compact(&gz);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("l.jsonl.1.gz") && err.contains("gzip stream is truncated"),
        "{err}"
    );
    assert_eq!(std::fs::read(&gz).unwrap(), damaged);

    std::fs::write(&gz, &whole).unwrap();
    let archive = dir.join("a.zst");
    let out = common::run_cmd(
        bin()
            .arg("--compact")
            .arg("--archive")
            .arg(&archive)
            .arg(&gz),
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is compressed"), "{err}");
    assert!(!archive.exists());
    assert_eq!(std::fs::read(&gz).unwrap(), whole);
}

/// Found by a new user (#49): a background job reading its terminal (`smart-tee LOG &` in a
/// shell, `timeout 2 smart-tee LOG` in a terminal) was stopped by SIGTTIN, and stopped it took
/// no SIGTERM: on SIGCONT its read restarted and stopped it again, so only SIGKILL ended it. Its
/// read now fails (EIO) and it ends at once, naming standard input. A pseudo-terminal is made
/// the controlling terminal of a job-control shell (python3's pty), which runs smart-tee in the
/// background and waits for it: a stopped job gives 149 (128 + SIGTTIN).
#[test]
fn a_background_job_reading_its_terminal_is_not_stopped_for_good() {
    let dir = common::tempdir("background-tty");
    let script = r#"
import fcntl, os, pty, subprocess, sys, termios
st, log = sys.argv[1:3]
master, slave = pty.openpty()
def own_terminal():
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
shell = f'set -m; "{st}" "{log}" > /dev/null & p=$!; wait $p; echo "status $?"; kill -9 $p 2>/dev/null'
p = subprocess.Popen(["bash", "-c", shell], stdin=slave, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, preexec_fn=own_terminal, pass_fds=(slave,))
os.close(slave)
out, err = p.communicate(timeout=100)
sys.stdout.write(out.decode())
sys.stderr.write(err.decode())
"#;
    let child = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_smart-tee"))
        .arg(dir.join("a.jsonl"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs (the tests need it)");
    let out = common::output_timeout(child);
    let (text, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(text.contains("status 1\n"), "{text}{err}");
    assert!(err.contains("reading standard input"), "{err}");
}
