//! `--archive`: the archive decodes to exactly what stdout received, and every log line's
//! original reads back byte for byte, across appends, torn tails, rotation and compaction.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use proptest::prelude::*;
use smart_tee::archive::reader::Archive;
use smart_tee::archive::writer::{ArchiveFeed, ArchiveOptions};
use smart_tee::engine::LineEngine;
use smart_tee::log::LogWriter;
use smart_tee::sink::LogSink;

use crate::common::{self, bin, config, run_cmd, tempdir};

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
    let log = dir.join("log");
    let sink = LogSink::open(&log, append, 0o600).unwrap();
    let feed = ArchiveFeed::start(ArchiveOptions {
        log: Some(log.clone()),
        append,
        frame_target: target,
        frame_max: max,
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
    /// input line, whatever the reads and however small the frames (lines across frames).
    #[test]
    fn the_archive_decodes_to_stdout(
        input in alphabet(),
        chunk in 1usize..50,
        target in 1usize..40,
        extra in 0usize..40,
    ) {
        let dir = tempdir(&format!("archive-prop-{}", std::thread::current().name().unwrap_or("t").replace("::", "-")));
        let log = tee_lib(&dir, &input, chunk, target, target + extra, false);
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
