//! The read side on arbitrary bytes: a log file of the input's bytes (plain; behind a gzip or
//! zstd magic number; or compressed here with gzip or zstd, whole or cut short) read by the
//! decoder every reader uses, by `--view` in each format and by `--summary`, in-process
//! (`read::view::run_to`). No panic; a damaged stream is an error, never a panic or an
//! unbounded read; the output is UTF-8, and no unsafe character (control, bidi, zero-width)
//! shows raw in the text, JSON lines, JSON or summary outputs (but a tab between JSON tokens of
//! an event, and the newlines between lines); `--format jsonl` is one strict
//! JSON value a line, `--format json` one JSON array, `--summary --format json` one JSON
//! object, and under `--max-tokens` the output keeps within its bytes.
//!
//! The first byte chooses the file's encoding (bits 0-2) and the N of `--head`/`--tail` (bits
//! 3-7); the second the format (bits 0-1), `--summary` (bit 2), `--max-tokens` (bits 3-5),
//! `--tail` (bit 6) and `--head` (bit 7). The file is one per process, unlinked once open and
//! rewritten for each input.
#![no_main]

use std::cell::RefCell;
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use smart_tee::read::log::{DecompressLimit, Format, ViewOptions, is_unsafe_char};

/// The most bytes decompressed from one log (a few KiB of zstd can say gigabytes).
const DECOMPRESS_CAP: u64 = 1 << 20;

/// The log file, created once, and its path.
fn log() -> &'static (Arc<File>, PathBuf) {
    static LOG: OnceLock<(Arc<File>, PathBuf)> = OnceLock::new();
    LOG.get_or_init(|| {
        let dir = ["/dev/shm"]
            .iter()
            .map(PathBuf::from)
            .find(|d| d.is_dir())
            .unwrap_or_else(std::env::temp_dir);
        let path = dir.join(format!(
            "smart-tee-fuzz-readers-{}.jsonl",
            std::process::id()
        ));
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        // Read through this descriptor only (`ViewOptions::opened`): no file is left behind.
        // (The path is looked at only for an archive beside the log, which there is not.)
        std::fs::remove_file(&path).unwrap();
        (Arc::new(file), path)
    })
}

thread_local! {
    static ZSTD: RefCell<zstd::bulk::Compressor<'static>> =
        RefCell::new(zstd::bulk::Compressor::new(1).unwrap());
}

/// The file's bytes for `encoding` of `body`.
fn encode(encoding: u8, body: &[u8]) -> Vec<u8> {
    let gzip = || {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(body).unwrap();
        e.finish().unwrap()
    };
    let zstd = || ZSTD.with(|c| c.borrow_mut().compress(body).unwrap());
    // Cut short at a point the body's length chooses, past the magic number.
    let cut = |mut v: Vec<u8>| {
        let keep = 4 + body.len() % v.len().saturating_sub(4).max(1);
        v.truncate(keep);
        v
    };
    match encoding {
        1 => [&[0x1f, 0x8b][..], body].concat(),
        2 => [&[0x28, 0xb5, 0x2f, 0xfd][..], body].concat(),
        // A zstd skippable frame's magic.
        3 => [&[0x50, 0x2a, 0x4d, 0x18][..], body].concat(),
        4 => gzip(),
        5 => zstd(),
        6 => cut(gzip()),
        7 => cut(zstd()),
        _ => body.to_vec(),
    }
}

fn strict(bytes: &[u8]) -> Option<serde_json::Value> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    de.disable_recursion_limit();
    let v = <serde_json::Value as serde::Deserialize>::deserialize(&mut de).ok()?;
    de.end().ok().map(|()| v)
}

fuzz_target!(|data: &[u8]| {
    let [encoding, view, body @ ..] = data else {
        return;
    };
    let bytes = encode(encoding & 7, body);
    let (file, path) = log();
    file.set_len(0).unwrap();
    file.write_all_at(&bytes, 0).unwrap();

    // The decoder alone, within a bound: a damaged stream is an error.
    if let Ok(f) = file.try_clone()
        && let Ok(r) = smart_tee::tee::decompress::open(f)
    {
        let mut sink = Vec::new();
        let _ = r.take(DECOMPRESS_CAP).read_to_end(&mut sink);
    }

    let n = usize::from(encoding >> 3) + 1;
    let format = [Format::Text, Format::Jsonl, Format::Json, Format::Html][usize::from(view & 3)];
    let summary = view & 4 != 0;
    let max_tokens = [
        None,
        Some(100),
        Some(300),
        Some(1000),
        Some(5000),
        None,
        None,
        None,
    ][usize::from(view >> 3 & 7)];
    let opts = ViewOptions {
        opened: vec![Arc::clone(file)],
        format,
        summary,
        max_tokens,
        tail: (view & 0x40 != 0).then_some(n),
        head: (view & 0x80 != 0).then_some(n),
        decompress: DecompressLimit {
            bytes: Some(DECOMPRESS_CAP),
            ..DecompressLimit::default()
        },
        ..ViewOptions::new(vec![path.clone()])
    };
    let mut out = Vec::new();
    // A file that cannot be read (a damaged stream) is a problem reported, not an error.
    let problems = smart_tee::read::view::run_to(&opts, &mut out).expect("written into memory");
    let text = std::str::from_utf8(&out).expect("the output is UTF-8");
    // A log line kept verbatim keeps its JSON whitespace, tabs included (outside strings: the
    // checks below hold the output to strict JSON), which act on no terminal.
    let events_json = !summary && matches!(format, Format::Jsonl | Format::Json);
    let allowed = |c: char| c == '\n' || (c == '\t' && events_json);
    if format != Format::Html
        && let Some(c) = text.chars().find(|&c| !allowed(c) && is_unsafe_char(c))
    {
        panic!("raw {c:?} in {text:?}");
    }
    if let Some(tokens) = max_tokens.filter(|_| format != Format::Html) {
        let budget = tokens * 3;
        assert!(out.len() <= budget, "{} > {budget}: {text:?}", out.len());
    }
    match (summary, format) {
        // A summary of a file that could not be read (a damaged stream) is no summary: the
        // problem says so (finding readers-summary-of-a-damaged-gzip).
        (true, Format::Json) if out.is_empty() => assert!(!problems.is_empty()),
        (true, Format::Json) => {
            let v = strict(out.trim_ascii_end()).expect("the summary is JSON");
            assert!(v.is_object(), "{text}");
        }
        (false, Format::Json) => {
            let v = strict(&out).expect("--format json is JSON");
            assert!(v.is_array(), "{text}");
        }
        (false, Format::Jsonl) => {
            for line in text.lines() {
                assert!(strict(line.as_bytes()).is_some(), "not JSON: {line:?}");
            }
        }
        _ => {}
    }
});
