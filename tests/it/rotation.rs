//! Rotation of a running smart-tee's logs and archive, in every mode logrotate has: renamed and
//! reopened on SIGUSR1 (`create`), copied and truncated under it (`copytruncate`), renamed
//! without a signal, two signals at once, without an archive, appended to (`-a`), several logs.
//! Each test provokes its state on purpose (the input written so far has reached stdout, so the
//! log worker has it before the signal; the reopen has created the new files) and bounds every
//! wait.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use smart_tee::cut::engine::LineEngine;
use smart_tee::tee::archive::reader::Archive;
use smart_tee::tee::archive::writer::{ArchiveFeed, ArchiveOptions};
use smart_tee::tee::log::LogWriter;
use smart_tee::tee::sink::LogSink;

use crate::common::{self, bin, run_cmd, tempdir};

/// How long a test waits for a sign from the child before it fails.
const WAIT: Duration = Duration::from_secs(60);

/// Waits until `ready` holds, at most [`WAIT`]; fails the test with `what` past that.
fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < WAIT, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A running smart-tee: its stdin, and stdout and stderr in files of `dir`.
struct Tee {
    child: Child,
    stdin: Option<ChildStdin>,
    dir: PathBuf,
    /// Bytes written to stdin so far.
    sent: u64,
}

impl Tee {
    fn start(dir: &Path, args: &[&str]) -> Tee {
        let child = bin()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(File::create(dir.join("stdout")).unwrap())
            .stderr(File::create(dir.join("stderr")).unwrap())
            .spawn()
            .unwrap();
        let mut tee = Tee {
            child,
            stdin: None,
            dir: dir.to_owned(),
            sent: 0,
        };
        tee.stdin = tee.child.stdin.take();
        tee
    }

    /// Writes `bytes` and waits until stdout has them: the log worker then has them too (each
    /// chunk is handed to it before stdout gets it), ahead of any signal sent next.
    fn send(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
        self.sent += bytes.len() as u64;
        let (out, sent) = (self.dir.join("stdout"), self.sent);
        wait_for("stdout to get the input", || {
            std::fs::metadata(&out).is_ok_and(|m| m.len() >= sent)
        });
    }

    fn signal(&self, name: &str) {
        let out = run_cmd(
            Command::new("kill").args([name, &self.child.id().to_string()]),
            b"",
        );
        assert!(out.status.success());
    }

    /// Ends the input and waits for the exit; returns stderr.
    fn finish(mut self) -> String {
        drop(self.stdin.take());
        assert!(common::wait_timeout(&mut self.child).success());
        std::fs::read_to_string(self.dir.join("stderr")).unwrap()
    }
}

/// The original of line `n` of `log`, or the reader's message.
fn original(archive: &Path, log: &Path, n: u64) -> Result<Vec<u8>, String> {
    let mut a = Archive::open(archive).map_err(|e| e.to_string())?;
    let loc = a.locate(log, n)?;
    let mut out = Vec::new();
    a.read(loc, 0, u64::MAX, &mut out).unwrap();
    Ok(out)
}

/// Decodes a whole archive with libzstd's streaming decoder (which skips the index frames).
fn decode(path: &Path) -> Vec<u8> {
    zstd::stream::decode_all(File::open(path).unwrap()).unwrap()
}

/// The log lines the archive's whole records number so far.
fn archived_lines(archive: &Path) -> u64 {
    Archive::open(archive).map_or(0, |a| {
        a.records().iter().map(|r| u64::from(r.entry.logged)).sum()
    })
}

fn log_lines(log: &Path) -> usize {
    common::lines(&std::fs::read(log).unwrap_or_default()).len()
}

/// Renames `path` to `path` + `suffix`, as logrotate's create mode does.
fn rename(path: &Path, suffix: &str) -> PathBuf {
    let to = PathBuf::from(format!("{}{suffix}", path.display()));
    std::fs::rename(path, &to).unwrap();
    to
}

/// The first bytes of a line longer than the memory cap (8 MiB): a JSON string of 10 MiB.
fn long_line_start() -> Vec<u8> {
    let mut line = b"{\"big\":\"".to_vec();
    line.extend((0..10 << 20).map(|i: u32| b"abcdefghij"[(i % 7) as usize]));
    line
}

/// A regression: a line over 8 MiB in progress at SIGUSR1 was split between the old and the
/// new archive (its first frames went to the old one before the signal), and its original
/// could not be read ("the line began before this archive's first frame"). The frames it
/// filled move to the new archive with it: the old pair holds exactly the lines before.
#[test]
fn a_line_over_8_mib_in_progress_at_sigusr1_reads_whole_from_the_new_archive() {
    let dir = tempdir("rotate-long-line");
    let (log, archive) = (dir.join("log"), dir.join("log.orig.zst"));
    let mut tee = Tee::start(
        &dir,
        &[
            "--archive",
            archive.to_str().unwrap(),
            log.to_str().unwrap(),
        ],
    );
    let start = long_line_start();
    tee.send(b"{\"n\":1}\n");
    tee.send(&start);
    let (old_log, old_archive) = (rename(&log, ".1"), rename(&archive, ".1"));
    tee.signal("-USR1");
    wait_for("the reopen", || log.exists() && archive.exists());
    tee.send(b"\"}\n{\"n\":3}\n");
    let stderr = tee.finish();
    assert!(stderr.is_empty(), "{stderr}");
    let mut line = start;
    line.extend_from_slice(b"\"}");
    assert_eq!(original(&old_archive, &old_log, 1).unwrap(), b"{\"n\":1}");
    let old = decode(&old_archive);
    assert!(
        old == b"{\"n\":1}\n",
        "the old archive holds {} bytes",
        old.len()
    );
    let got = original(&archive, &log, 1).unwrap();
    assert!(
        got == line,
        "the long line's original differs ({} bytes)",
        got.len()
    );
    assert_eq!(original(&archive, &log, 2).unwrap(), b"{\"n\":3}");
    assert_eq!(log_lines(&old_log), 1);
    assert_eq!(log_lines(&log), 2);
}

/// Copies `path` to `path` + `suffix` and empties it, as logrotate's copytruncate does.
fn copytruncate(path: &Path, suffix: &str) -> PathBuf {
    let to = PathBuf::from(format!("{}{suffix}", path.display()));
    std::fs::copy(path, &to).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(0)
        .unwrap();
    to
}

/// Lines `{"n":from}` to `{"n":to}`, each with its newline.
fn numbered(from: u64, to: u64) -> Vec<u8> {
    (from..=to)
        .flat_map(|n| format!("{{\"n\":{n}}}\n").into_bytes())
        .collect()
}

/// A regression: after logrotate's copytruncate of a log and its archive, the new log numbered
/// its lines from 1 while the archive went on numbering them from 6, so every original of the
/// new log was refused. The archive follows the log: smart-tee sees the truncation at its next
/// input and numbers the next lines from the log's new start (and says so).
#[test]
fn copytruncate_numbers_the_archive_as_the_log() {
    let dir = tempdir("rotate-copytruncate");
    let (log, archive) = (dir.join("log"), dir.join("log.orig.zst"));
    let mut tee = Tee::start(
        &dir,
        &[
            "--archive",
            archive.to_str().unwrap(),
            log.to_str().unwrap(),
        ],
    );
    tee.send(&numbered(1, 5));
    // The archive writes a frame once the input pauses (a second).
    wait_for("the archive to hold 5 lines", || {
        archived_lines(&archive) == 5
    });
    let old_log = copytruncate(&log, ".1");
    let old_archive = copytruncate(&archive, ".1");
    tee.send(&numbered(6, 8));
    let stderr = tee.finish();
    for n in 1..=5 {
        let want = format!("{{\"n\":{n}}}").into_bytes();
        assert_eq!(original(&old_archive, &old_log, n).unwrap(), want);
    }
    assert_eq!(log_lines(&log), 3);
    for n in 1..=3 {
        let want = format!("{{\"n\":{}}}", n + 5).into_bytes();
        assert_eq!(original(&archive, &log, n), Ok(want), "line {n}");
    }
    assert!(stderr.contains("was truncated"), "{stderr}");
}

/// `smart-tee --view --original --line N LOG`: the original, or the message on stderr.
fn view_original(log: &Path, n: u64) -> Result<Vec<u8>, String> {
    let out = run_cmd(
        bin()
            .args(["--view", "--original", "--line", &n.to_string()])
            .arg(log),
        b"",
    );
    match out.status.success() {
        true => Ok(out
            .stdout
            .strip_suffix(b"\n")
            .unwrap_or(&out.stdout)
            .to_vec()),
        false => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
    }
}

/// logrotate's copytruncate copies the archive while smart-tee still gathers the frame of the
/// last lines logged (it lags the log by up to a frame): those lines are archived after the
/// truncation, into the live archive, numbered as the copied log. A regression: their
/// originals were in neither archive of the copied log. The reader looks in the archive rotated
/// next to the one it found (each frame checked against the log), and the new log's lines are
/// numbered from its new start.
#[test]
fn copytruncate_before_the_archive_caught_up_keeps_every_original() {
    let dir = tempdir("rotate-copytruncate-lag");
    let (log, archive) = (dir.join("run.jsonl"), dir.join("run.jsonl.orig.zst"));
    let sink = LogSink::open(&log, false, 0o600).unwrap();
    let feed = ArchiveFeed::start(ArchiveOptions {
        log: Some(log.clone()),
        ..ArchiveOptions::new(&archive)
    })
    .unwrap();
    let mut w =
        LogWriter::new(LineEngine::new(common::config(1024)), vec![sink]).with_archive(feed);
    assert!(w.feed(&numbered(1, 5)).is_empty());
    // The five lines are in the log, and still in the frame being gathered.
    assert_eq!(log_lines(&log), 5);
    assert_eq!(archived_lines(&archive), 0);
    let old_log = copytruncate(&log, ".1");
    copytruncate(&archive, ".1");
    assert!(w.feed(&numbered(6, 8)).is_empty());
    assert!(w.take_notice().is_some_and(|n| n.contains("was truncated")));
    assert!(w.finish().is_empty());
    for n in 1..=5 {
        let want = format!("{{\"n\":{n}}}").into_bytes();
        assert_eq!(view_original(&old_log, n), Ok(want), "old line {n}");
    }
    assert_eq!(log_lines(&log), 3);
    for n in 1..=3 {
        let want = format!("{{\"n\":{}}}", n + 5).into_bytes();
        assert_eq!(view_original(&log, n), Ok(want), "new line {n}");
    }
}

/// Starts smart-tee with `args` then `log` and `--archive` beside it.
fn start_with_archive(dir: &Path, args: &[&str], log: &Path) -> Tee {
    let archive = format!("{}.orig.zst", log.display());
    let mut all = args.to_vec();
    all.extend(["--archive", &archive, log.to_str().unwrap()]);
    Tee::start(dir, &all)
}

/// The long line stays open across two rotations (its records move twice) and a third SIGUSR1
/// that finds the same files: it reads whole from the newest archive, each older pair holds
/// exactly its lines, and the pairs decode to the input.
#[test]
fn a_long_line_open_across_two_rotations_reads_whole_from_the_newest_archive() {
    let dir = tempdir("rotate-long-line-twice");
    let (log, archive) = (dir.join("log"), dir.join("log.orig.zst"));
    let mut tee = start_with_archive(&dir, &[], &log);
    let start = long_line_start();
    let (head, tail) = start.split_at(9 << 20);
    tee.send(b"{\"n\":1}\n");
    tee.send(head);
    rename(&log, ".2");
    rename(&archive, ".2");
    tee.signal("-USR1");
    wait_for("the first reopen", || log.exists() && archive.exists());
    tee.send(&tail[..tail.len() / 2]);
    rename(&log, ".1");
    rename(&archive, ".1");
    tee.signal("-USR1");
    wait_for("the second reopen", || log.exists() && archive.exists());
    tee.send(&tail[tail.len() / 2..]);
    tee.signal("-USR1");
    tee.send(b"\"}\n{\"n\":3}\n");
    let stderr = tee.finish();
    assert!(stderr.is_empty(), "{stderr}");
    let suffixed = |p: &Path, s: &str| PathBuf::from(format!("{}{s}", p.display()));
    let (log2, archive2) = (suffixed(&log, ".2"), suffixed(&archive, ".2"));
    let (log1, archive1) = (suffixed(&log, ".1"), suffixed(&archive, ".1"));
    assert_eq!(original(&archive2, &log2, 1).unwrap(), b"{\"n\":1}");
    assert_eq!(decode(&archive2), b"{\"n\":1}\n");
    assert_eq!(log_lines(&log1), 0);
    assert_eq!(decode(&archive1), b"");
    let mut line = start;
    line.extend_from_slice(b"\"}");
    let got = original(&archive, &log, 1).unwrap();
    assert!(
        got == line,
        "the long line's original differs ({} bytes)",
        got.len()
    );
    assert_eq!(original(&archive, &log, 2).unwrap(), b"{\"n\":3}");
}

/// Without an archive, the long line in progress at SIGUSR1 is logged whole to the new log,
/// and nothing of it to the old one.
#[test]
fn without_an_archive_a_long_line_in_progress_at_sigusr1_goes_to_the_new_log() {
    let dir = tempdir("rotate-long-line-no-archive");
    let log = dir.join("log");
    let mut tee = Tee::start(&dir, &[log.to_str().unwrap()]);
    tee.send(b"{\"n\":1}\n");
    tee.send(&long_line_start());
    let old = rename(&log, ".1");
    tee.signal("-USR1");
    wait_for("the reopen", || log.exists());
    tee.send(b"\"}\n{\"n\":3}\n");
    let stderr = tee.finish();
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(std::fs::read(&old).unwrap(), b"{\"n\":1}\n");
    let new = std::fs::read(&log).unwrap();
    let lines = common::lines(&new);
    assert_eq!(lines.len(), 2);
    assert!(lines[0].starts_with(b"{\"big\":\"abcdefg"));
    assert_eq!(lines[1], b"{\"n\":3}");
}

/// `-a` onto a pair, then a rotation: the old pair numbers on from the first run's lines, the
/// new pair from 1; a second log beside the first is numbered alike and reads through the same
/// archive; logs renamed without a signal stay written, with their archive.
#[test]
fn appended_rotated_and_renamed_pairs_keep_every_original() {
    let dir = tempdir("rotate-append");
    let (log, archive) = (dir.join("log"), dir.join("log.orig.zst"));
    let second = dir.join("second");
    let mut cmd = bin();
    let run = cmd
        .args(["--archive", archive.to_str().unwrap()])
        .arg(&log)
        .arg(&second)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let out = run_cmd(run, &numbered(1, 2));
    assert!(out.status.success());
    let mut tee = Tee::start(
        &dir,
        &[
            "-a",
            "--archive",
            archive.to_str().unwrap(),
            log.to_str().unwrap(),
            second.to_str().unwrap(),
        ],
    );
    tee.send(&numbered(3, 4));
    let (old_log, old_archive) = (rename(&log, ".1"), rename(&archive, ".1"));
    let old_second = rename(&second, ".1");
    tee.signal("-USR1");
    wait_for("the reopen", || {
        log.exists() && archive.exists() && second.exists()
    });
    tee.send(&numbered(5, 6));
    // Renamed without a signal: smart-tee writes on into the renamed pair.
    let (moved_log, moved_archive) = (rename(&log, ".moved"), rename(&archive, ".moved"));
    tee.send(&numbered(7, 7));
    let stderr = tee.finish();
    assert!(stderr.is_empty(), "{stderr}");
    let line = |n: u64| format!("{{\"n\":{n}}}").into_bytes();
    for n in 1..=4 {
        assert_eq!(original(&old_archive, &old_log, n), Ok(line(n)), "old {n}");
        assert_eq!(
            original(&old_archive, &old_second, n),
            Ok(line(n)),
            "second {n}"
        );
    }
    for n in 1..=3 {
        assert_eq!(
            original(&moved_archive, &moved_log, n),
            Ok(line(n + 4)),
            "new {n}"
        );
    }
    assert_eq!(
        [decode(&old_archive), decode(&moved_archive)].concat(),
        numbered(1, 7)
    );
}
