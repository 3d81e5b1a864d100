//! The whole stream path on arbitrary bytes in arbitrary chunks: stdout equals the input, the
//! log holds one valid line within the budget per non-blank input line, and the log does not
//! depend on how the input was split: the log of `tee::copy` (its reading thread handing
//! chunks of the sizes the input chooses to the log worker) equals the log of the whole input
//! fed at once to a `LogWriter` on this thread, and the log of the input fed to one in small
//! chunks. One `tee::copy` per input (a thread, its 256 KiB buffers, a hand-off per read) is
//! most of a run's time.
#![no_main]

use std::io::Read;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use smart_tee::cli::OutputError;
use smart_tee::tee::log::LogWriter;
use smart_tee::tee::sink::LogSink;
use smart_tee::{EngineConfig, LineEngine};

/// Hands out the input in the chunk sizes it is given, cycling.
struct Chunked {
    data: Vec<u8>,
    at: usize,
    sizes: Vec<usize>,
    next: usize,
}

impl Read for Chunked {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let size = self.sizes[self.next % self.sizes.len()].max(1);
        self.next += 1;
        let rest = &self.data[self.at..];
        let n = size.min(buf.len()).min(rest.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.at += n;
        Ok(n)
    }
}

/// The default configuration, built once.
fn config(budget: usize) -> EngineConfig {
    static CONFIG: OnceLock<EngineConfig> = OnceLock::new();
    EngineConfig {
        max_line_bytes: budget,
        ..CONFIG.get_or_init(EngineConfig::default).clone()
    }
}

/// A log writer at `budget` into memory, and its log.
fn writer(budget: usize) -> (LogWriter, SharedBuffer) {
    let log = SharedBuffer::default();
    let sink = LogSink::new("fuzz.log".as_ref(), Box::new(log.clone()));
    (LogWriter::new(LineEngine::new(config(budget)), vec![sink]), log)
}

/// The log of `data` fed whole to a log writer on this thread.
fn whole(data: &[u8], budget: usize) -> Vec<u8> {
    let (mut writer, log) = writer(budget);
    assert!(writer.feed(data).is_empty());
    assert!(writer.finish().is_empty());
    let panics = writer.engine().panics();
    assert_eq!(panics, 0, "{:?}", smart_tee::cut::engine::first_caught_panic());
    log.contents()
}

/// The log of `data` fed to a log writer on this thread in chunks of `sizes`, cycling.
fn fed(data: &[u8], sizes: &[usize], budget: usize) -> Vec<u8> {
    let (mut writer, log) = writer(budget);
    let mut rest = data;
    for &size in sizes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (chunk, after) = rest.split_at(size.min(rest.len()));
        assert!(writer.feed(chunk).is_empty());
        rest = after;
    }
    assert!(writer.finish().is_empty());
    log.contents()
}

/// stdout and the log of `data` through `tee::copy`, read in chunks of `sizes`.
fn run(data: &[u8], sizes: Vec<usize>, budget: usize) -> (Vec<u8>, Vec<u8>) {
    let (writer, log) = writer(budget);
    let stdout = SharedBuffer::default();
    let input = Chunked {
        data: data.to_vec(),
        at: 0,
        sizes,
        next: 0,
    };
    let options = smart_tee::tee::CopyOptions::new(OutputError::WarnNopipe);
    let finish = smart_tee::tee::copy(input, Some(stdout.clone()), writer, options);
    assert_eq!(finish, smart_tee::tee::Finish::Done(true));
    (stdout.contents(), log.contents())
}

fuzz_target!(|data: &[u8]| {
    let Some((head, data)) = data.split_first_chunk::<4>() else {
        return;
    };
    let budget = 128 + (head[0] as usize) * 8;
    let sizes: Vec<usize> = head[1..].iter().map(|&b| b as usize % 17 + 1).collect();
    // Through `tee::copy`, each read is a hand-off between two threads: in reads of 1 to 17
    // bytes for one input in sixteen, of 61 to 1037 bytes (still cutting lines, escapes and
    // characters anywhere) for the others. The reads of 1 to 17 bytes always go to a log
    // writer on this thread.
    let threaded: Vec<usize> = if head[1] < 16 {
        sizes.clone()
    } else {
        sizes.iter().map(|s| s * 61).collect()
    };
    let (stdout, log) = run(data, threaded, budget);
    assert_eq!(stdout, data);
    let whole = whole(data, budget);
    let fed = fed(data, &sizes, budget);
    // A caught panic is a bug, not a record to write (#47.5).
    let panics = smart_tee::cut::engine::caught_panics();
    assert_eq!(panics, 0, "{:?}", smart_tee::cut::engine::first_caught_panic());
    assert_eq!(log, whole, "the log depends on chunking");
    assert_eq!(fed, whole, "the log depends on chunking (on this thread)");
    let want = data
        .split(|&b| b == b'\n')
        .filter(|l| !l.iter().all(|b| b" \t\r".contains(b)))
        .count();
    let lines: Vec<&[u8]> = if log.is_empty() {
        vec![]
    } else {
        log[..log.len() - 1].split(|&b| b == b'\n').collect()
    };
    assert_eq!(lines.len(), want);
    for line in lines {
        assert!(line.len() <= budget);
        let mut de = serde_json::Deserializer::from_slice(line);
        de.disable_recursion_limit();
        assert!(
            <serde_json::Value as serde::Deserialize>::deserialize(&mut de).is_ok()
                && de.end().is_ok()
        );
    }
});

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

use std::io::{self, Write};
