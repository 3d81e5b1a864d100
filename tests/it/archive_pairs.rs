//! Which log an archive answers for, and when: the second log of a run, a log compressed after
//! it was written, a pair rotated by logrotate, a stream that pauses while smart-tee runs.
//! Where the archive can answer, the original comes back; where it cannot, the message says why
//! (never another line's bytes).

use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{self, bin, run_cmd, stderr, tempdir};

fn view_original(args: &[&str], log: &Path) -> Output {
    run_cmd(
        bin().args(["--view", "--original"]).args(args).arg(log),
        b"",
    )
}

const INPUT: &[u8] = b"{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n";

/// Runs `smart-tee --archive ARCHIVE LOGS...` (with `-a` when `append`) on [`INPUT`].
fn tee(archive: &Path, logs: &[&Path], append: bool) {
    let mut cmd = bin();
    if append {
        cmd.arg("-a");
    }
    let out = run_cmd(cmd.arg("--archive").arg(archive).args(logs), INPUT);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// `smart-tee a b --archive X`: b's lines are a's, so X answers for b too.
#[test]
fn the_second_log_of_a_run_reads_its_originals_from_the_named_archive() {
    let dir = tempdir("archive-second-log");
    let (a, b, x) = (dir.join("a.jsonl"), dir.join("b.jsonl"), dir.join("X"));
    tee(&x, &[&a, &b], false);
    let out = view_original(&["--archive", x.to_str().unwrap(), "--line", "2"], &b);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(out.stdout, b"{\"n\":2}\n");
}

/// A second log appended to from another length is numbered differently from the first, whose
/// lines the archive numbers: the message says so, not that the log "does not match".
#[test]
fn a_second_log_numbered_otherwise_says_the_archive_numbers_the_first_log() {
    let dir = tempdir("archive-second-log-offset");
    let (a, b, x) = (dir.join("a.jsonl"), dir.join("b.jsonl"), dir.join("X"));
    std::fs::write(&a, b"{\"old\":1}\n{\"old\":2}\n").unwrap();
    tee(&x, &[&a, &b], true);
    // a's line 3 is the first of this run; b's is past its end.
    let out = view_original(&["--archive", x.to_str().unwrap(), "--line", "3"], &a);
    assert_eq!(out.stdout, b"{\"n\":1}\n", "{}", stderr(&out));
    let out = view_original(&["--archive", x.to_str().unwrap(), "--line", "3"], &b);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    assert!(err.contains("numbers the lines of the first log"), "{err}");
    assert!(!err.contains("does not match"), "{err}");
    // b's line 1 comes before anything the archive numbers.
    let out = view_original(&["--archive", x.to_str().unwrap(), "--line", "1"], &b);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("cover log lines 3 to 5"),
        "{}",
        stderr(&out)
    );
}

/// A log gzip- or zstd-compressed after it was written (logrotate's compress) is read
/// decompressed to check the archive against it.
#[test]
fn a_compressed_log_reads_its_originals() {
    let dir = tempdir("archive-compressed-log");
    let (log, x) = (dir.join("run.jsonl"), dir.join("run.jsonl.orig.zst"));
    tee(&x, &[&log], false);
    let plain = std::fs::read(&log).unwrap();
    let gz = dir.join("run.jsonl.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut enc, &plain).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let zst = dir.join("copy.jsonl.zst");
    std::fs::write(&zst, zstd::encode_all(&plain[..], 3).unwrap()).unwrap();
    // The archive beside the name the log had before it was compressed is found.
    let out = view_original(&["--line", "3"], &gz);
    assert_eq!(out.stdout, b"{\"n\":3}\n", "{}", stderr(&out));
    let out = view_original(&["--archive", x.to_str().unwrap(), "--line", "2"], &zst);
    assert_eq!(out.stdout, b"{\"n\":2}\n", "{}", stderr(&out));
}

/// A pair rotated by logrotate (`run.jsonl.1`, `run.jsonl.orig.zst.1`, the log compressed or
/// not) finds its archive without `--archive`; an archive compressed as a whole says so.
#[test]
fn a_rotated_pair_finds_its_archive_by_its_rotated_name() {
    let dir = tempdir("archive-rotated-pair");
    let (log, x) = (dir.join("run.jsonl"), dir.join("run.jsonl.orig.zst"));
    tee(&x, &[&log], false);
    let rotated = dir.join("run.jsonl.1");
    std::fs::rename(&log, &rotated).unwrap();
    std::fs::rename(&x, dir.join("run.jsonl.orig.zst.1")).unwrap();
    let out = view_original(&["--line", "1"], &rotated);
    assert_eq!(out.stdout, b"{\"n\":1}\n", "{}", stderr(&out));
    let gz = dir.join("run.jsonl.1.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut enc, &std::fs::read(&rotated).unwrap()).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let out = view_original(&["--line", "2"], &gz);
    assert_eq!(out.stdout, b"{\"n\":2}\n", "{}", stderr(&out));
    // logrotate's compress applied to the archive too: a clear message.
    let whole = dir.join("run.jsonl.orig.zst.1");
    let gz_archive = dir.join("whole.zst.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut enc, &std::fs::read(&whole).unwrap()).unwrap();
    std::fs::write(&gz_archive, enc.finish().unwrap()).unwrap();
    let out = view_original(
        &["--archive", gz_archive.to_str().unwrap(), "--line", "1"],
        &rotated,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(
        stderr(&out).contains("compressed as a whole"),
        "{}",
        stderr(&out)
    );
}

/// Input that pauses: the lines so far reach the archive while smart-tee still runs (the log
/// worker tells the archive the input is idle), so a kill then loses none of them.
#[test]
fn a_paused_stream_reaches_the_archive_while_smart_tee_runs() {
    let dir = tempdir("archive-paused");
    let (log, x) = (dir.join("run.jsonl"), dir.join("run.jsonl.orig.zst"));
    let mut child = bin()
        .arg("--archive")
        .arg(&x)
        .arg(&log)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"n\":1}\n{\"n\":2}\n{\"partial\":")
        .unwrap();
    stdin.flush().unwrap();
    let start = Instant::now();
    loop {
        let out = view_original(&["--line", "2"], &log);
        if out.status.success() {
            assert_eq!(out.stdout, b"{\"n\":2}\n");
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the paused stream's lines never reached the archive: {}",
            stderr(&out)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The unfinished line goes on in the next frame.
    stdin.write_all(b"3}\n").unwrap();
    drop(stdin);
    assert!(common::wait_timeout(&mut child).success());
    let out = view_original(&["--line", "3"], &log);
    assert_eq!(out.stdout, b"{\"partial\":3}\n", "{}", stderr(&out));
}
