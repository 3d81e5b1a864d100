//! `--archive`: the archive decodes to exactly what stdout received, and every log line's
//! original reads back byte for byte, across appends, torn tails, rotation and compaction.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use smart_tee::cut::engine::LineEngine;
use smart_tee::tee::archive::reader::{self, Archive};
use smart_tee::tee::archive::writer::{ArchiveFeed, ArchiveOptions};
use smart_tee::tee::log::LogWriter;
use smart_tee::tee::sink::LogSink;

use crate::common::{self, bin, config, run_cmd, stderr, tempdir};

/// The input lines that become log lines, as they came in: split on `\n` (a last line without
/// one included), `\r`s kept; blank lines (spaces, tabs, `\r`) left out.
fn logged_lines(input: &[u8]) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    if input.ends_with(b"\n") || input.is_empty() {
        lines.pop();
    }
    lines
        .into_iter()
        .filter(|l| !l.iter().all(|b| b" \t\r".contains(b)))
        .collect()
}

/// Decodes a whole archive with libzstd's streaming decoder (which skips the index frames).
fn decode(path: &Path) -> Vec<u8> {
    zstd::stream::decode_all(std::fs::File::open(path).unwrap()).unwrap()
}

/// The original of line `n` of `log`, or the reader's message.
fn original(archive: &Path, log: &Path, n: u64) -> Result<Vec<u8>, String> {
    let mut a = Archive::open(archive).map_err(|e| e.to_string())?;
    let loc = a.locate(log, n)?;
    let mut out = Vec::new();
    a.read(loc, 0, u64::MAX, &mut out).unwrap();
    assert_eq!(out.len() as u64, loc.len);
    Ok(out)
}

/// Runs the tee's log path on `input` in chunks of `chunk` bytes, with a log and an archive
/// whose frames close at `target` and never exceed `max` bytes. Returns the log's path.
fn tee_lib(
    dir: &Path,
    input: &[u8],
    chunk: usize,
    target: usize,
    max: usize,
    append: bool,
) -> PathBuf {
    tee_lib_workers(dir, input, chunk, (target, max), append, 1)
}

/// [`tee_lib`] with `workers` compression threads.
fn tee_lib_workers(
    dir: &Path,
    input: &[u8],
    chunk: usize,
    (target, max): (usize, usize),
    append: bool,
    workers: usize,
) -> PathBuf {
    let log = dir.join("log");
    let sink = LogSink::open(&log, append, 0o600).unwrap();
    let feed = ArchiveFeed::start(ArchiveOptions {
        log: Some(log.clone()),
        append,
        frame_target: target,
        frame_max: max,
        workers,
        ..ArchiveOptions::new(&dir.join("a.zst"))
    })
    .unwrap();
    let mut w = LogWriter::new(LineEngine::new(config(1024)), vec![sink]).with_archive(feed);
    for c in input.chunks(chunk.max(1)) {
        assert!(w.feed(c).is_empty());
    }
    assert!(w.finish().is_empty());
    log
}

/// Every log line's original is its input line, byte for byte.
fn check_originals(archive: &Path, log: &Path, input: &[u8]) {
    let want = logged_lines(input);
    let logged = std::fs::read(log).unwrap();
    assert_eq!(common::lines(&logged).len(), want.len());
    for (i, line) in want.iter().enumerate() {
        let got = original(archive, log, i as u64 + 1).unwrap();
        assert_eq!(got, *line, "line {}", i + 1);
    }
}

fn alphabet() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(
        prop_oneof![
            4 => Just(b'\n'),
            2 => Just(b'\r'),
            2 => Just(b' '),
            1 => Just(0u8),
            1 => Just(0xffu8),
            2 => Just(b'{'),
            2 => Just(b'}'),
            8 => Just(b'a'),
            1 => any::<u8>(),
        ],
        0..400,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Arbitrary bytes in: the archive decodes to them, and every log line's original is its
    /// input line, whatever the reads, however small the frames (lines across frames) and
    /// however many threads compress them (records written in order).
    #[test]
    fn the_archive_decodes_to_stdout(
        input in alphabet(),
        chunk in 1usize..50,
        target in 1usize..40,
        extra in 0usize..40,
        workers in 1usize..4,
    ) {
        let dir = tempdir(&format!("archive-prop-{}", std::thread::current().name().unwrap_or("t").replace("::", "-")));
        let log = tee_lib_workers(&dir, &input, chunk, (target, target + extra), false, workers);
        let archive = dir.join("a.zst");
        prop_assert_eq!(decode(&archive), input.clone());
        check_originals(&archive, &log, &input);
    }
}

/// Lines past the frame size span frames; blank lines by the thousand close frames early.
#[test]
fn long_lines_and_many_blank_lines_read_back() {
    let dir = tempdir("archive-long");
    let mut input = Vec::new();
    input.extend_from_slice(&[b'x'; 5000]);
    input.extend_from_slice(b"\n");
    input.extend_from_slice(&b"\n \r\n".repeat(3000));
    input.extend_from_slice(b"{\"a\":1}\r\n");
    input.extend_from_slice(&[b'y'; 777]);
    let log = tee_lib(&dir, &input, 100, 64, 200, false);
    let archive = dir.join("a.zst");
    assert_eq!(decode(&archive), input);
    check_originals(&archive, &log, &input);
}

/// `smart-tee --view --original` with `args`, then `log`.
fn view_original(args: &[&str], log: &Path) -> Output {
    run_cmd(
        bin().args(["--view", "--original"]).args(args).arg(log),
        b"",
    )
}

/// For every line of every file of the real corpus, at budgets 1024 and 5120, `--view
/// --original --line N` is the input line byte for byte (a range gives them all in one run;
/// a few are asked one at a time too).
#[test]
fn every_corpus_line_reads_back_byte_for_byte() {
    let dir = tempdir("archive-corpus");
    for file in common::corpus_files() {
        let input = std::fs::read(&file).unwrap();
        let want = logged_lines(&input);
        for budget in ["1024", "5120"] {
            let log = dir.join("log.jsonl");
            let out = run_cmd(
                bin()
                    .args(["-b", budget, "--archive"])
                    .arg(dir.join("a.zst"))
                    .arg(&log),
                &input,
            );
            assert!(out.status.success(), "{}", stderr(&out));
            assert_eq!(out.stdout, input);
            assert_eq!(decode(&dir.join("a.zst")), input);
            let range = format!("1-{}", want.len());
            let archive = dir.join("a.zst");
            let out = view_original(
                &["--archive", archive.to_str().unwrap(), "--line", &range],
                &log,
            );
            assert!(out.status.success(), "{}", stderr(&out));
            let mut expect = Vec::new();
            for l in &want {
                expect.extend_from_slice(l);
                expect.push(b'\n');
            }
            assert!(out.stdout == expect, "{} at {budget}", file.display());
            for n in [1, want.len() / 2 + 1, want.len()] {
                let out = view_original(
                    &[
                        "--archive",
                        archive.to_str().unwrap(),
                        "--line",
                        &n.to_string(),
                    ],
                    &log,
                );
                assert_eq!(out.stdout, [want[n - 1], b"\n"].concat());
            }
        }
    }
}

/// A line of 100 MB, paged with --offset/--limit: the pages concatenate to it, and stderr says
/// where each next page starts.
#[test]
fn a_100_mb_line_pages_with_offset_and_limit() {
    let dir = tempdir("archive-giant");
    let mut input = b"{\"type\":\"user\"}\n{\"type\":\"tool_result\",\"content\":\"".to_vec();
    let body: Vec<u8> = (0..100_000_000u32).map(|i| b'a' + (i % 23) as u8).collect();
    input.extend_from_slice(&body);
    input.extend_from_slice(b"\"}\n{\"type\":\"result\"}\n");
    let log = dir.join("log");
    let out = run_cmd(bin().env("SMART_TEE_ARCHIVE", "1").arg(&log), &input);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        dir.join("log.orig.zst").is_file(),
        "the archive's default name"
    );
    assert!(out.stdout == input);
    drop(out);
    assert_eq!(common::lines(&std::fs::read(&log).unwrap()).len(), 3);
    let line = &input[16..input.len() - 19];
    let limit = 16 << 20;
    let mut got = Vec::new();
    let mut offset = 0usize;
    loop {
        let out = view_original(
            &[
                "--line",
                "2",
                "--offset",
                &offset.to_string(),
                "--limit",
                &limit.to_string(),
            ],
            &log,
        );
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(out.stdout.len(), limit.min(line.len() - offset));
        got.extend_from_slice(&out.stdout);
        offset += out.stdout.len();
        if offset == line.len() {
            assert!(stderr(&out).contains("end of line"), "{}", stderr(&out));
            break;
        }
        assert!(
            stderr(&out).contains(&format!("next page: --offset {offset}")),
            "{}",
            stderr(&out)
        );
    }
    assert!(got == line, "the pages concatenate to the line");
    let out = view_original(&["--line", "3"], &log);
    assert_eq!(out.stdout, b"{\"type\":\"result\"}\n");
}

/// Two runs appended to the same pair, the first ending without a newline: each log line reads
/// back its own input line.
#[test]
fn two_runs_appended_to_the_same_pair_keep_their_numbers() {
    let dir = tempdir("archive-append");
    let log = dir.join("log");
    let archive = dir.join("a.zst");
    let a: &[u8] = b"{\"run\":1,\"n\":1}\n\n{\"run\":1,\"n\":2}\n{\"run\":1,\"last\":true}";
    let b: &[u8] = b"  \n{\"run\":2,\"n\":1}\r\n{\"run\":2,\"n\":2}\n";
    for (input, args) in [(a, vec![]), (b, vec!["-a"])] {
        let out = run_cmd(
            bin().args(&args).arg("--archive").arg(&archive).arg(&log),
            input,
        );
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert_eq!(decode(&archive), [a, b].concat());
    let want: Vec<&[u8]> = logged_lines(a).into_iter().chain(logged_lines(b)).collect();
    assert_eq!(
        common::lines(&std::fs::read(&log).unwrap()).len(),
        want.len()
    );
    for (i, w) in want.iter().enumerate() {
        assert_eq!(
            original(&archive, &log, i as u64 + 1).unwrap(),
            *w,
            "line {}",
            i + 1
        );
    }
}

/// A kill tore the archive's last record (written here on purpose): the whole records still
/// decode and read back; the torn one is no original; `-a` cuts it back and goes on, and the
/// log's numbering stays right.
/// Line `n` of [`three_frames`]' input.
fn padded_line(n: usize) -> String {
    format!("{{\"n\":{n},\"pad\":\"{}\"}}\n", "p".repeat(900))
}

/// A log and its archive in `dir` from 3,000 lines of about 900 bytes (three frames of about
/// 1 MiB): the log, the archive, the input and the archive's records.
fn three_frames(dir: &Path) -> (PathBuf, PathBuf, String, Vec<reader::Record>) {
    let log = dir.join("log");
    let archive = dir.join("log.orig.zst");
    let first: String = (1..=3000).map(padded_line).collect();
    let out = run_cmd(
        bin().arg("--archive").arg(&archive).arg(&log),
        first.as_bytes(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let records = Archive::open(&archive).unwrap().records().to_vec();
    assert!(records.len() >= 3, "{} records", records.len());
    (log, archive, first, records)
}

#[test]
fn a_torn_last_record_is_cut_back_on_append() {
    let dir = tempdir("archive-torn");
    let (log, archive, first, records) = three_frames(&dir);
    let line = padded_line;
    let last = records.last().unwrap();
    // Tear the last record in the middle of its frame.
    let torn_at = last.at + last.entry.csize / 2;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&archive)
        .unwrap();
    f.set_len(torn_at).unwrap();
    drop(f);
    let whole: u64 = records[..records.len() - 1]
        .iter()
        .map(|r| r.entry.logged as u64)
        .sum();
    // Whole records read back; the torn one's lines have no original, said so.
    assert_eq!(
        original(&archive, &log, whole).unwrap(),
        line(whole as usize).trim_end().as_bytes()
    );
    let err = original(&archive, &log, whole + 1).unwrap_err();
    assert!(err.contains("has no original"), "{err}");
    let out = view_original(&["--line", &(whole + 1).to_string()], &log);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("has no original"), "{}", stderr(&out));
    // -a cuts the torn record back and appends; the new lines number after the log's.
    let second = "{\"run\":2}\n";
    let out = run_cmd(
        bin().args(["-a", "--archive"]).arg(&archive).arg(&log),
        second.as_bytes(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let decoded = decode(&archive);
    let kept: usize = records[..records.len() - 1]
        .iter()
        .map(|r| r.entry.dsize as usize)
        .sum();
    assert_eq!(
        decoded,
        [&first.as_bytes()[..kept], second.as_bytes()].concat()
    );
    assert_eq!(original(&archive, &log, 3001).unwrap(), b"{\"run\":2}");
    assert_eq!(
        original(&archive, &log, 1).unwrap(),
        line(1).trim_end().as_bytes()
    );
}

/// The log's torn last line (a killed writer) is kept as a record by `-a`: the archive's
/// numbering follows the repaired log.
#[test]
fn a_torn_log_tail_repaired_keeps_the_pair_in_step() {
    let dir = tempdir("archive-torn-log");
    let log = dir.join("log");
    let archive = dir.join("a.zst");
    let out = run_cmd(
        bin().arg("--archive").arg(&archive).arg(&log),
        b"{\"a\":1}\n{\"a\":2}\n",
    );
    assert!(out.status.success());
    // A writer killed mid-line left half a line in the log, none of it in the archive.
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    f.write_all(b"{\"a\":3,\"tor").unwrap();
    drop(f);
    let out = run_cmd(
        bin().args(["-a", "--archive"]).arg(&archive).arg(&log),
        b"{\"b\":1}\n",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    // The torn line is kept as a record (it is the log's line 3, with no original: it never
    // reached the archive), and the next run's line is line 4.
    assert_eq!(
        std::fs::read(&log).unwrap(),
        b"{\"a\":1}\n{\"a\":2}\n{\"type\":\"torn\",\"text\":\"{\\\"a\\\":3,\\\"tor\"}\n{\"b\":1}\n"
    );
    assert_eq!(original(&archive, &log, 4).unwrap(), b"{\"b\":1}");
    assert_eq!(original(&archive, &log, 2).unwrap(), b"{\"a\":2}");
    assert!(original(&archive, &log, 3).is_err());
}

/// An archive that belongs to another log, or to a log rewritten since: no original rather
/// than a wrong one. A log without an archive: a clear message.
#[test]
fn a_mismatched_or_missing_archive_gives_no_wrong_original() {
    let dir = tempdir("archive-mismatch");
    let log = dir.join("log");
    let other = dir.join("other");
    let out = run_cmd(bin().arg(&log), b"{\"a\":1}\n");
    assert!(out.status.success());
    let out = view_original(&["--line", "1"], &log);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("has no archive"), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let archive = dir.join("a.zst");
    let out = run_cmd(
        bin().arg("--archive").arg(&archive).arg(&other),
        b"{\"b\":1}\n",
    );
    assert!(out.status.success());
    let out = view_original(
        &["--archive", archive.to_str().unwrap(), "--line", "1"],
        &log,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("is not the line archive"),
        "{}",
        stderr(&out)
    );
    assert!(out.stdout.is_empty());
    let out = view_original(
        &["--archive", archive.to_str().unwrap(), "--line", "1"],
        &other,
    );
    assert_eq!(out.stdout, b"{\"b\":1}\n");
    // Not an archive at all.
    let out = view_original(&["--archive", log.to_str().unwrap(), "--line", "1"], &log);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("not a smart-tee archive"),
        "{}",
        stderr(&out)
    );
}

/// SIGUSR1 after logrotate renamed both: the old pair and the new pair each read back.
#[test]
fn sigusr1_rotates_the_archive_with_the_log() {
    let dir = tempdir("archive-rotate");
    let log = dir.join("log");
    let archive = dir.join("log.orig.zst");
    let mut child = bin()
        .env("SMART_TEE_ARCHIVE", "1")
        .arg(&log)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"n\":1}\n{\"n\":2}\n{\"partial\":")
        .unwrap();
    stdin.flush().unwrap();
    let start = Instant::now();
    while common::lines(&std::fs::read(&log).unwrap_or_default()).len() < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "lines not logged"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    std::fs::rename(&log, dir.join("log.1")).unwrap();
    std::fs::rename(&archive, dir.join("log.orig.zst.1")).unwrap();
    let out = run_cmd(
        Command::new("kill").args(["-USR1", &child.id().to_string()]),
        b"",
    );
    assert!(out.status.success());
    let start = Instant::now();
    while !log.exists() || !archive.exists() {
        assert!(start.elapsed() < Duration::from_secs(60), "no reopen");
        std::thread::sleep(Duration::from_millis(5));
    }
    stdin.write_all(b"1}\n{\"n\":3}\n").unwrap();
    drop(stdin);
    assert!(common::wait_timeout(&mut child).success());
    let old = dir.join("log.orig.zst.1");
    assert_eq!(original(&old, &dir.join("log.1"), 1).unwrap(), b"{\"n\":1}");
    assert_eq!(original(&old, &dir.join("log.1"), 2).unwrap(), b"{\"n\":2}");
    // The line in progress at the rotation went whole to the new log and the new archive.
    assert_eq!(original(&archive, &log, 1).unwrap(), b"{\"partial\":1}");
    assert_eq!(original(&archive, &log, 2).unwrap(), b"{\"n\":3}");
    assert_eq!(
        [decode(&old), decode(&archive)].concat(),
        b"{\"n\":1}\n{\"n\":2}\n{\"partial\":1}\n{\"n\":3}\n"
    );
}

/// `--compact --archive FILE`: the old log's lines are archived before it is rewritten, and
/// every compacted line reads back its original.
#[test]
fn compact_archives_the_original_lines_first() {
    let dir = tempdir("archive-compact");
    let log = dir.join("old.jsonl");
    let lines: Vec<String> = (0..50)
        .map(|n| format!("{{\"n\":{n},\"text\":\"{}\"}}", "t".repeat(n * 100)))
        .collect();
    let input = lines.join("\n") + "\n";
    std::fs::write(&log, &input).unwrap();
    let archive = dir.join("old.jsonl.orig.zst");
    let out = run_cmd(
        bin()
            .args(["--compact", "-b", "1024", "--archive"])
            .arg(&archive)
            .arg(&log),
        b"",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::metadata(&log).unwrap().len() < input.len() as u64);
    assert_eq!(decode(&archive), input.as_bytes());
    for (i, l) in lines.iter().enumerate() {
        let out = view_original(&["--line", &(i + 1).to_string()], &log);
        assert_eq!(out.stdout, format!("{l}\n").as_bytes(), "line {}", i + 1);
    }
}

/// `--redact`: no secret reaches the archive either; the rest is the input.
#[test]
fn redact_keeps_secrets_out_of_the_archive() {
    let dir = tempdir("archive-redact");
    let log = dir.join("log");
    let archive = dir.join("a.zst");
    let secret = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";
    let input = format!("{{\"a\":1}}\n{{\"key\":\"{secret}\"}}\n");
    let out = run_cmd(
        bin()
            .args(["--redact", "--archive"])
            .arg(&archive)
            .arg(&log),
        input.as_bytes(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(out.stdout, input.as_bytes());
    let decoded = String::from_utf8(decode(&archive)).unwrap();
    assert!(!decoded.contains(secret), "{decoded}");
    assert!(
        decoded.starts_with("{\"a\":1}\n{\"key\":\"[REDACTED:"),
        "{decoded}"
    );
    assert!(
        original(&archive, &log, 2)
            .unwrap()
            .starts_with(b"{\"key\":\"[REDACTED:")
    );
}

/// A second writer of the same archive is refused: it says so, writes none, and the stream
/// and its log go on.
#[test]
fn a_second_writer_of_an_archive_is_refused() {
    let dir = tempdir("archive-second");
    let archive = dir.join("a.zst");
    let mut child = bin()
        .arg("--archive")
        .arg(&archive)
        .arg(dir.join("one"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"{\"one\":1}\n").unwrap();
    stdin.flush().unwrap();
    let start = Instant::now();
    while std::fs::read(dir.join("one"))
        .unwrap_or_default()
        .is_empty()
    {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "first writer not started"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = run_cmd(
        bin()
            .args(["-a", "--archive"])
            .arg(&archive)
            .arg(dir.join("two")),
        b"{\"two\":1}\n",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, b"{\"two\":1}\n");
    assert!(
        stderr(&out).contains("another smart-tee is writing it"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(dir.join("two")).unwrap(), b"{\"two\":1}\n");
    drop(stdin);
    assert!(common::wait_timeout(&mut child).success());
    assert_eq!(decode(&archive), b"{\"one\":1}\n");
}

/// The text view numbers events by their line in the log (#N); `--line` selects them, one by
/// one or as a range N-M, in every reading path (in order, --tail, --max-tokens).
#[test]
fn the_view_numbers_events_and_line_selects_them() {
    let dir = tempdir("archive-numbers");
    let log = dir.join("log");
    let input: String = (1..=6)
        .map(|n| format!("{{\"type\":\"t{n}\"}}\n"))
        .collect();
    std::fs::write(&log, &input).unwrap();
    for extra in [&[][..], &["--tail", "10"], &["--max-tokens", "1000"]] {
        let out = run_cmd(
            bin()
                .args(["--view", "--color", "never", "--line", "2", "--line", "4-5"])
                .args(extra)
                .arg(&log),
            b"",
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let ls: Vec<&str> = text.lines().filter(|l| l.starts_with('#')).collect();
        assert_eq!(ls.len(), 3, "{extra:?}: {text}");
        for (l, n) in ls.iter().zip([2, 4, 5]) {
            assert!(l.starts_with(&format!("#{n} t{n}")), "{extra:?}: {l}");
        }
    }
    let out = run_cmd(bin().args(["--view", "--line", "0"]).arg(&log), b"");
    assert_eq!(out.status.code(), Some(2));
}

/// `--redact` on a line past the memory cap, read in pieces that split a secret: the archive
/// still gets it redacted (runs end at a `"`), and the rest of the line as it came.
#[test]
fn redact_catches_a_secret_split_across_reads_of_a_giant_line() {
    let dir = tempdir("archive-redact-giant");
    let secret = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";
    let pad = "x".repeat(9 << 20);
    let input = format!("{{\"a\":\"{pad}\",\"k\":\"Bearer {secret}\",\"b\":\"{pad}\"}}\n");
    let at = input.find(secret).unwrap() + 10;
    let log = dir.join("log");
    let sink = LogSink::open(&log, false, 0o600).unwrap();
    let feed = ArchiveFeed::start(ArchiveOptions {
        log: Some(log.clone()),
        redact: true,
        ..ArchiveOptions::new(&dir.join("a.zst"))
    })
    .unwrap();
    let mut engine = config(1024);
    engine.redact = true;
    let mut w = LogWriter::new(LineEngine::new(engine), vec![sink]).with_archive(feed);
    // Reads of 64 KiB, one of them ending inside the secret.
    let bytes = input.as_bytes();
    let mut ends: Vec<usize> = (0..bytes.len()).step_by(64 << 10).skip(1).collect();
    ends.extend([at, bytes.len()]);
    ends.sort();
    let mut from = 0;
    for end in ends {
        if end > from {
            assert!(w.feed(&bytes[from..end]).is_empty());
            from = end;
        }
    }
    assert!(w.finish().is_empty());
    let decoded = String::from_utf8(decode(&dir.join("a.zst"))).unwrap();
    for part in ["sk-ant", "abcdefghijklmnop"] {
        assert!(
            !decoded.contains(part),
            "the secret reached the archive: {part}"
        );
    }
    assert!(decoded.contains("\"k\":\"Bearer [REDACTED:"));
    assert!(decoded.starts_with(&format!("{{\"a\":\"{pad}\",")));
    assert!(decoded.ends_with(&format!(",\"b\":\"{pad}\"}}\n")));
}

/// The pair in tests/data/archive-v1 was written by the version before the archive's entries
/// hashed log lines four lanes at a time (entries tagged `stA1`): its originals still read,
/// and a new run appended to it adds version 2 entries that read too.
#[test]
fn an_archive_written_by_version_1_still_gives_originals() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/archive-v1");
    let input = std::fs::read(data.join("input.jsonl")).unwrap();
    check_originals(
        &data.join("run.jsonl.orig.zst"),
        &data.join("run.jsonl"),
        &input,
    );

    let dir = tempdir("archive-v1-appended");
    for f in ["run.jsonl", "run.jsonl.orig.zst"] {
        std::fs::copy(data.join(f), dir.join(f)).unwrap();
    }
    let (log, archive) = (dir.join("run.jsonl"), dir.join("run.jsonl.orig.zst"));
    let more = b"{\"type\":\"result\",\"n\":41}\n{\"type\":\"result\",\"n\":42}\n";
    let out = run_cmd(
        bin()
            .args(["-a", "-b", "1024", "--archive"])
            .arg(&archive)
            .arg(&log),
        more,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let both = [input.as_slice(), more].concat();
    check_originals(&archive, &log, &both);
    assert_eq!(decode(&archive), both);
    let bytes = std::fs::read(&archive).unwrap();
    let tagged = |tag: &[u8]| bytes.windows(4).filter(|w| *w == tag).count();
    assert!(
        tagged(b"stA1") >= 1 && tagged(b"stA2") >= 1,
        "one run of each version"
    );
}

/// A regression: `-a` on an archive whose second entry was damaged (one bit) cut off every
/// record after it, silently. Only a torn last record is cut back; this is refused and said,
/// the archive is left as it was, and stdout and the log still get the run.
#[test]
fn an_append_never_cuts_off_whole_records_after_a_damaged_entry() {
    let dir = tempdir("archive-damaged-entry");
    let (log, archive, _, records) = three_frames(&dir);
    // Flip one bit of the second record's entry (its flags, just past the tag).
    let entry_at = records[0].at + records[0].entry.csize;
    let mut bytes = std::fs::read(&archive).unwrap();
    bytes[entry_at as usize + 12] ^= 1;
    std::fs::write(&archive, &bytes).unwrap();
    // The damaged entry is refused: no original from it, never a wrong one.
    let n = u64::from(records[0].entry.logged) + 1;
    assert!(original(&archive, &log, n).is_err());

    let out = run_cmd(
        bin().args(["-a", "--archive"]).arg(&archive).arg(&log),
        b"{\"run\":2}\n",
    );
    assert_eq!(out.stdout, b"{\"run\":2}\n");
    assert!(
        stderr(&out).contains("not appending to it") && stderr(&out).contains("orig.zst"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read(&archive).unwrap(),
        bytes,
        "the archive is left alone"
    );
    assert!(std::fs::read(&log).unwrap().ends_with(b"{\"run\":2}\n"));
}

/// With the tee's queue at least half full and frames waiting (set here by hand, as the tee
/// and the log thread report them), the compression thread steps down to its faster levels:
/// the archive is larger, every frame still decodes and every line's original reads back.
/// With the queue empty, level 2.
#[test]
fn a_backlog_steps_compression_down_and_every_line_still_reads() {
    use std::sync::atomic::Ordering::Relaxed;
    let input: Vec<u8> = (0..20_000)
        .flat_map(|n| {
            format!("{{\"n\":{n},\"text\":\"{}\"}}\n", "word ".repeat(n % 50)).into_bytes()
        })
        .collect();
    let size = |behind: bool| {
        let dir = tempdir(&format!("archive-backlog-{behind}"));
        let log = dir.join("log");
        let sink = LogSink::open(&log, false, 0o600).unwrap();
        let feed = ArchiveFeed::start(ArchiveOptions {
            log: Some(log.clone()),
            frame_target: 4096,
            frame_max: 8192,
            ..ArchiveOptions::new(&dir.join("a.zst"))
        })
        .unwrap();
        let backlog = feed.backlog();
        backlog.bound.store(1000, Relaxed);
        backlog
            .queued
            .store(if behind { 500 } else { 499 }, Relaxed);
        // A frame always waits, as when compression is what holds the stream back.
        backlog.frames.store(usize::MAX / 2, Relaxed);
        let mut w = LogWriter::new(LineEngine::new(config(1024)), vec![sink]).with_archive(feed);
        for c in input.chunks(64 * 1024) {
            assert!(w.feed(c).is_empty());
        }
        assert!(w.finish().is_empty());
        assert_eq!(decode(&dir.join("a.zst")), input);
        check_originals(&dir.join("a.zst"), &log, &input);
        std::fs::metadata(dir.join("a.zst")).unwrap().len()
    };
    let (fast, level2) = (size(true), size(false));
    assert!(fast > level2, "{fast} bytes behind, {level2} at level 2");
}

/// #49's audit: the first piece of a line (held whole up to 8 MiB) was redacted whole for the
/// archive, its redaction and shadow beside it (45 MiB of peak RSS on a line dense with
/// escapes). It is redacted in parts of about a MiB, each ending where no secret is split:
/// secrets placed around every part's end, some written with escapes, go as the whole line's
/// redaction would take them.
#[test]
fn a_long_line_redacted_in_parts_is_the_line_redacted_whole() {
    use smart_tee::cut::redact::Redactor;
    let dir = tempdir("archive-redact-parts");
    let secrets = [
        "ghp_Q7klQErQX4AEkpXlNPNwnwa0bI21K5kuXjYi",
        r"\u0067hp_Z7klQErQX4AEkpXlNPNwnwa0bI21K5kuXjYj",
        "sk-ant-api03-Q7kPdoHaZI5VlPVFrCJh8km1xTNgW7biwHprCyF9",
        "password=Q7kv8LpQ2zXw9RtYbN3m",
    ];
    let mut body = String::new();
    let filler = r"abc\u0041 def \n text ";
    let head = "{\"type\":\"user\",\"content\":\"";
    for k in 1..=6 {
        // Each secret starts 10 bytes before a MiB of the line.
        let at = (k << 20) - 10 - head.len();
        while body.len() + filler.len() <= at {
            body.push_str(filler);
        }
        body.extend(std::iter::repeat_n(' ', at - body.len()));
        body.push_str(secrets[k % secrets.len()]);
        body.push(' ');
    }
    let line = format!("{head}{body}\"}}");
    let input = format!("{line}\n{{\"tail\":1}}\n");
    let (log, archive) = (dir.join("log"), dir.join("a.zst"));
    let out = run_cmd(
        bin()
            .env_remove("SMART_TEE_MAX_LINE_BYTES")
            .args(["--redact", "--archive"])
            .arg(&archive)
            .arg(&log),
        input.as_bytes(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let mut whole = Vec::new();
    assert!(Redactor::new().redact(line.as_bytes(), &mut whole));
    let decoded = decode(&archive);
    assert!(
        decoded == [&whole[..], b"\n{\"tail\":1}\n"].concat(),
        "the archive's line is not the line redacted whole"
    );
    for part in [
        "Q7klQErQX4AE",
        "Z7klQErQX4AE",
        "Q7kPdoHaZI5V",
        "Q7kv8LpQ2zXw",
    ] {
        assert!(!String::from_utf8_lossy(&decoded).contains(part), "{part}");
    }
}
