//! Shared test support: the serde_json oracle, the log contract, and runners that feed input in
//! chunks of several sizes.
#![allow(dead_code)]

pub mod naive;

use serde_json::Value;
use smart_tee::cut::engine::{EngineConfig, LineEngine};
use smart_tee::tee::log::LogWriter;
use smart_tee::tee::sink::LogSink;
use std::io::{self, Write};

/// The binary under test, with the budget variable of the caller's environment removed.
/// `SMART_TEE_TEST_BIN=path` runs the black-box tests against another build (an older one, to
/// see a regression test fail where the bug is).
pub fn bin() -> std::process::Command {
    let path = std::env::var_os("SMART_TEE_TEST_BIN")
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_smart-tee").into());
    let mut c = std::process::Command::new(path);
    c.env_remove("SMART_TEE_MAX_LINE_BYTES");
    c
}

/// How long any test waits for a child process before it kills it and fails.
pub const CHILD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// Waits for `child` to exit, at most [`CHILD_TIMEOUT`]; kills it and fails the test past that.
pub fn wait_timeout(child: &mut std::process::Child) -> std::process::ExitStatus {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        if start.elapsed() > CHILD_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("child did not exit within {CHILD_TIMEOUT:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// A child that is killed and reaped when the test lets go of it: a test that fails while the
/// child waits (on a FIFO, a pipe no one reads) does not leave it behind.
pub struct Reaped(pub std::process::Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Collects the child's stdout and stderr (piped) on threads and waits for it with a timeout.
pub fn output_timeout(mut child: std::process::Child) -> std::process::Output {
    use std::io::Read;
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut v);
            }
            v
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let status = wait_timeout(&mut child);
    let output = std::process::Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    };
    assert_no_caught_panic(&output.stderr);
    output
}

/// The phrase of the one line smart-tee says on stderr after a run in which it caught panics
/// (`tee::stats::panic_notice`).
pub const CAUGHT_PANIC: &str = "hit a bug in smart-tee";

/// #47.5: fails the test when a run of the binary caught a panic (said on its stderr), or when
/// an engine of this process did: a caught panic is a bug to fix, not a record to write.
pub fn assert_no_caught_panic(stderr: &[u8]) {
    let stderr = String::from_utf8_lossy(stderr);
    assert!(
        !stderr.contains(CAUGHT_PANIC),
        "smart-tee caught a panic: {stderr}"
    );
    assert_no_panic_in_process();
}

/// Fails the test when an engine of this test process caught a panic.
pub fn assert_no_panic_in_process() {
    assert_eq!(
        smart_tee::cut::engine::caught_panics(),
        0,
        "an engine caught a panic: {:?}",
        smart_tee::cut::engine::first_caught_panic()
    );
}

/// Runs `cmd` with stdin, stdout and stderr piped, writing `input` from another thread; returns
/// its output once it exits (within [`CHILD_TIMEOUT`]).
/// A child's standard error, as text.
/// Asserts that a run of the binary exited 0 and copied `input` to stdout byte for byte.
pub fn assert_copied(name: &str, out: &std::process::Output, input: &[u8]) {
    assert!(
        out.status.success(),
        "{name}: {:?} {}",
        out.status,
        stderr(out)
    );
    assert!(out.stdout == input, "{name}: stdout is the input");
}

pub fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn run_cmd(cmd: &mut std::process::Command, input: &[u8]) -> std::process::Output {
    use std::io::Write;
    let input = input.to_vec();
    run_cmd_fed(cmd, move |mut stdin| {
        let _ = stdin.write_all(&input);
    })
}

/// [`run_cmd`] with stdin written by `feed`, on another thread.
pub fn run_cmd_fed(
    cmd: &mut std::process::Command,
    feed: impl FnOnce(std::process::ChildStdin) + Send + 'static,
) -> std::process::Output {
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || feed(stdin));
    let out = output_timeout(child);
    writer.join().unwrap();
    out
}

/// Runs the binary with `args` and then `log`, writing `input` to its stdin from another
/// thread; returns its output once it exits.
pub fn run_fed(args: &[&str], log: &std::path::Path, input: &[u8]) -> std::process::Output {
    run_cmd(bin().args(args).arg(log), input)
}

/// A test's own directory: `name` under a directory of this test process's own, so that two
/// runs of the tests at once (an editor's beside a terminal's, two checkouts sharing a target
/// directory) never share one. Removed when the test passes; kept, for a look, when it fails.
pub struct TestDir(std::path::PathBuf);

impl std::ops::Deref for TestDir {
    type Target = std::path::PathBuf;
    fn deref(&self) -> &std::path::PathBuf {
        &self.0
    }
}

impl AsRef<std::path::Path> for TestDir {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for TestDir {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// Makes a FIFO at `path` (`mkfifo`), or fails the test.
pub fn mkfifo(path: &std::path::Path) {
    let made = run_cmd(std::process::Command::new("mkfifo").arg(path), b"");
    assert!(
        made.status.success(),
        "mkfifo {}: {}",
        path.display(),
        stderr(&made)
    );
}

/// A fresh directory for test `name` ([`TestDir`]).
pub fn tempdir(name: &str) -> TestDir {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("run-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    TestDir(dir)
}

/// The chunk sizes every engine case is fed in (0 = the whole input at once).
pub const CHUNKS: [usize; 4] = [0, 1, 7, 64 * 1024];

/// Parses one log line with serde_json, strictly: exact number text, no depth limit. A value
/// nested deeper than 1000 levels is parsed (and dropped) on a thread with a large stack, and
/// only the verdict comes back: `Ok(Value::Null)`.
pub fn strict_parse(line: &[u8]) -> Result<Value, String> {
    fn parse(line: &[u8]) -> Result<Value, String> {
        let mut de = serde_json::Deserializer::from_slice(line);
        de.disable_recursion_limit();
        let v = serde::Deserialize::deserialize(&mut de).map_err(|e| e.to_string())?;
        de.end().map_err(|e| e.to_string())?;
        Ok(v)
    }
    if depth(line) <= 1000 {
        return parse(line);
    }
    let owned = line.to_vec();
    std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(move || parse(&owned).map(|_| Value::Null))
        .expect("spawn")
        .join()
        .expect("parser thread")
}

/// Greatest nesting depth of brackets outside strings.
pub fn depth(line: &[u8]) -> usize {
    let (mut d, mut max, mut in_str, mut esc) = (0usize, 0, false, false);
    for &b in line {
        if in_str {
            match b {
                _ if esc => esc = false,
                b'\\' => esc = true,
                b'"' => in_str = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_str = true,
                b'[' | b'{' => {
                    d += 1;
                    max = max.max(d);
                }
                b']' | b'}' => d = d.saturating_sub(1),
                _ => {}
            }
        }
    }
    max
}

/// True when `line` is JSON by the oracle (serde_json with the engine's documented exceptions:
/// no depth limit, numbers of any size).
pub fn is_json(line: &[u8]) -> bool {
    strict_parse(line).is_ok()
}

/// Runs the log side of the tee over `input`, fed in chunks of `chunk` bytes (0: at once).
/// Asserts that no line needed the last-resort record: the planner fits every line it is given.
pub fn log_of(input: &[u8], config: &EngineConfig, chunk: usize) -> Vec<u8> {
    let buf = SharedBuffer::default();
    let sink = LogSink::new("test.log".as_ref(), Box::new(buf.clone()));
    let mut log = LogWriter::new(LineEngine::new(config.clone()), vec![sink]);
    if chunk == 0 {
        assert!(log.feed(input).is_empty());
    } else {
        for c in input.chunks(chunk) {
            assert!(log.feed(c).is_empty());
        }
    }
    assert!(log.finish().is_empty());
    // Only a line past the memory cap may be logged as an excerpt, or one the index cannot
    // hold (more than MAX_NODES values) that nests deeper than the reduction goes.
    let big = input.split(|&b| b == b'\n').any(|l| {
        l.len() > smart_tee::tee::log::STREAM_CAP
            || (l.len() > smart_tee::line::index::MAX_NODES
                && depth(l) > smart_tee::reduce::MAX_DEPTH)
    });
    assert!(
        big || log.stats().lines_unplanned == 0,
        "the planner gave up on a line"
    );
    assert_eq!(log.stats().panics, 0, "the engine caught a panic");
    assert_no_panic_in_process();
    buf.contents()
}

/// The log of `input` fed in chunks of `chunk` bytes, each with what the reading thread does of
/// the log's work while the log worker is behind (`Looks::look`: the text's check, the check of
/// the lines that fit, `--redact`'s filters), made before the last `added` bytes of each chunk
/// were there (as when a read is copied into a chunk already queued). With `text`, every chunk
/// is looked at as after a line of text (its text checked and its runs of plain lines written);
/// without, as after JSON (the records of its lines that are not JSON written).
pub fn log_looked_ahead(
    input: &[u8],
    config: &EngineConfig,
    chunk: usize,
    added: usize,
    text: bool,
) -> Vec<u8> {
    let buf = SharedBuffer::default();
    let sink = LogSink::new("test.log".as_ref(), Box::new(buf.clone()));
    let mut log = LogWriter::new(LineEngine::new(config.clone()), vec![sink]);
    let mut looks = log.looks();
    for c in input.chunks(chunk) {
        looks
            .text_seen
            .store(text, std::sync::atomic::Ordering::Relaxed);
        // Every chunk looked at, whatever the looks at the chunks before found.
        looks.lines_pace = smart_tee::cut::redact::Pace::default();
        let ahead = looks.look(&c[..c.len().saturating_sub(added)], true);
        assert!(log.feed_ahead(c, &ahead).is_empty());
    }
    assert!(log.finish().is_empty());
    assert_eq!(log.stats().panics, 0, "the engine caught a panic");
    buf.contents()
}

pub fn config(budget: usize) -> EngineConfig {
    EngineConfig {
        max_line_bytes: budget,
        ..EngineConfig::default()
    }
}

/// The input lines as the log sees them: split on `\n`, one `\r` dropped, blanks left out.
pub fn input_lines(input: &[u8]) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    if input.ends_with(b"\n") || input.is_empty() {
        lines.pop();
    }
    lines
        .into_iter()
        .map(|l| &l[..l.iter().rposition(|&b| b != b'\r').map_or(0, |p| p + 1)])
        .filter(|l| !l.iter().all(|b| b" \t\r\n".contains(b)))
        .collect()
}

/// Checks the log contract for `input` at `budget`, feeding it in every chunk size; returns the
/// log. Items: one line per non-blank line, each strict JSON within the budget, valid lines that
/// fit unchanged, non-JSON lines as records, the same log whatever the chunking, and idempotence.
pub fn check_contract(input: &[u8], budget: usize) -> Vec<u8> {
    let cfg = config(budget);
    let log = log_of(input, &cfg, 0);
    let want = input_lines(input);
    assert!(
        log.is_empty() || log.ends_with(b"\n"),
        "log must end with a newline"
    );
    let got: Vec<&[u8]> = if log.is_empty() {
        Vec::new()
    } else {
        log[..log.len() - 1].split(|&b| b == b'\n').collect()
    };
    assert_eq!(
        got.len(),
        want.len(),
        "one log line per non-blank input line"
    );
    for (inp, out) in want.iter().zip(&got) {
        if budget != 0 {
            assert!(
                out.len() <= budget,
                "log line of {} bytes over budget {budget}",
                out.len()
            );
        }
        assert!(std::str::from_utf8(out).is_ok(), "log line not UTF-8");
        assert!(
            !out.contains(&b'\r'),
            "a raw CR, which line readers take for a line end: {}",
            String::from_utf8_lossy(out)
        );
        assert!(
            !out.starts_with("\u{FEFF}".as_bytes()),
            "log line starts with a BOM"
        );
        let parsed = strict_parse(out).unwrap_or_else(|e| {
            panic!("log line not JSON ({e}): {}", String::from_utf8_lossy(out))
        });
        assert!(
            depth(out) <= smart_tee::cut::plan::MAX_LOG_DEPTH,
            "log line nested {} deep",
            depth(out)
        );
        let inp_json = inp.strip_prefix("\u{FEFF}".as_bytes()).unwrap_or(inp);
        let inp_json = inp_json.trim_ascii();
        if is_json(inp_json) {
            let shallow = depth(inp_json) <= smart_tee::cut::plan::MAX_LOG_DEPTH;
            if (budget == 0 || inp_json.len() <= budget) && shallow {
                // Unchanged, but for the raw CRs between its tokens.
                let without_cr: Vec<u8> =
                    inp_json.iter().copied().filter(|&b| b != b'\r').collect();
                assert_eq!(
                    out, &without_cr,
                    "a valid line that fits is logged unchanged"
                );
            }
        } else {
            assert!(
                parsed.get("type").and_then(Value::as_str) == Some("non_json"),
                "non-JSON line not logged as a record: {}",
                String::from_utf8_lossy(out)
            );
        }
    }
    for chunk in &CHUNKS[1..] {
        let again = log_of(input, &cfg, *chunk);
        assert!(
            again == log,
            "log depends on chunking ({chunk}):\n{}\n{}",
            show(&again),
            show(&log)
        );
    }
    let again = log_of(&log, &cfg, 0);
    assert!(
        again == log,
        "feeding the log through again changed it:\n{}\n{}",
        show(&again),
        show(&log)
    );
    log
}

pub fn show(bytes: &[u8]) -> String {
    let s = String::from_utf8_lossy(bytes);
    if s.len() > 2000 {
        format!(
            "{}…{}",
            &s[..s.floor_char_boundary(1000)],
            &s[s.ceil_char_boundary(s.len() - 1000)..]
        )
    } else {
        s.into_owned()
    }
}

/// Splits a log into its lines (without newlines).
pub fn lines(log: &[u8]) -> Vec<&[u8]> {
    if log.is_empty() {
        return Vec::new();
    }
    log[..log.len() - 1].split(|&b| b == b'\n').collect()
}

/// The real corpus shipped with the tests: `tests/data/real` (MIT-licensed Claude Code streams and
/// transcripts; sources and licences beside them).
pub fn corpus_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/real")
}

/// The corpus files: the six shipped in `tests/data/real` (their absence fails the test), plus
/// any `.jsonl` files in the directory `SMART_TEE_CORPUS` names, when it is set.
pub fn corpus_files() -> Vec<std::path::PathBuf> {
    let jsonl = |dir: &std::path::Path| -> Vec<std::path::PathBuf> {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("reading corpus dir {}: {e}", dir.display()))
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        files.sort();
        files
    };
    let mut files = jsonl(&corpus_dir());
    assert!(
        files.len() >= 6,
        "expected the 6 corpus files in {}, found {}",
        corpus_dir().display(),
        files.len()
    );
    if let Some(extra) = std::env::var_os("SMART_TEE_CORPUS") {
        let extra = std::path::PathBuf::from(extra);
        for f in jsonl(&extra) {
            if !files.iter().any(|g| g.file_name() == f.file_name()) {
                files.push(f);
            }
        }
    }
    files
}

/// A writer into shared memory: the log of an in-process run.
#[derive(Clone, Default)]
pub struct SharedBuffer(pub std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl SharedBuffer {
    pub fn contents(&self) -> Vec<u8> {
        self.0.lock().map(|v| v.clone()).unwrap_or_default()
    }
}

impl Write for SharedBuffer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.0.lock() {
            Ok(mut v) => {
                v.extend_from_slice(buf);
                Ok(buf.len())
            }
            Err(_) => Err(io::Error::other("buffer poisoned")),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The environment variable that gives a property test a share of its cases:
/// `SMART_TEE_CASES_SHARE=N` runs 1/N of them (`tests/it/simd.rs` splits the contract's cases
/// between the SIMD paths this way).
pub const CASES_SHARE_VAR: &str = "SMART_TEE_CASES_SHARE";

/// `n` cases, or this run's share of them ([`CASES_SHARE_VAR`]), at least 8.
pub fn cases(n: u32) -> u32 {
    let share = std::env::var(CASES_SHARE_VAR)
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .filter(|&s| s > 0)
        .unwrap_or(1);
    (n / share).max(8)
}
