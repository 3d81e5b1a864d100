//! The log side of the tee: splitting chunks into lines, running each finished line through the
//! engine and writing the results to every log.
//!
//! Lines finished by one chunk are batched and written with one write per log before the next
//! chunk is read, so a line reaches the log as soon as its newline has been read, and every write
//! carries whole lines only: a crash or a kill never leaves half a line behind.

use memchr::memchr_iter;

use crate::engine::{LineEngine, Outcome};
use crate::error::Error;
use crate::sink::LogSink;

/// A batch is written early once it holds this much, to bound its memory.
const BATCH_LIMIT: usize = 256 * 1024;

/// Counts of what went through the engine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub bytes_in: u64,
    pub bytes_logged: u64,
    pub lines_blank: u64,
    pub lines_verbatim: u64,
    pub lines_cut: u64,
    pub lines_non_json: u64,
    pub lines_unplanned: u64,
}

impl Stats {
    fn count(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Blank => self.lines_blank += 1,
            Outcome::Verbatim => self.lines_verbatim += 1,
            Outcome::Cut => self.lines_cut += 1,
            Outcome::NonJson => self.lines_non_json += 1,
            Outcome::Unplanned => self.lines_unplanned += 1,
        }
    }

    /// Lines read, blank ones included.
    pub fn lines_in(&self) -> u64 {
        self.lines_logged() + self.lines_blank
    }

    /// Lines written to the log.
    pub fn lines_logged(&self) -> u64 {
        self.lines_verbatim + self.lines_cut + self.lines_non_json + self.lines_unplanned
    }
}

/// Turns the input stream into log lines and writes them to the sinks.
pub struct LogWriter {
    engine: LineEngine,
    sinks: Vec<LogSink>,
    /// The unfinished last line of the input so far.
    pending: Vec<u8>,
    batch: Vec<u8>,
    stats: Stats,
    finished: bool,
    /// False when nothing would read the engine's work (no logs, no stats): then lines are
    /// not processed at all.
    active: bool,
}

impl LogWriter {
    pub fn new(engine: LineEngine, sinks: Vec<LogSink>) -> LogWriter {
        let active = !sinks.is_empty() || engine.config().field_stats;
        LogWriter {
            active,
            engine,
            sinks,
            pending: Vec::new(),
            batch: Vec::new(),
            stats: Stats::default(),
            finished: false,
        }
    }

    pub fn stats(&self) -> Stats {
        self.stats
    }

    pub fn engine(&self) -> &LineEngine {
        &self.engine
    }

    /// True while at least one log can still be written.
    pub fn has_live_sinks(&self) -> bool {
        self.sinks.iter().any(|s| !s.is_failed())
    }

    /// Feeds the next chunk of input. Returns the write errors of this chunk (each log fails at
    /// most once and is then left out).
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<Error> {
        self.stats.bytes_in += chunk.len() as u64;
        let mut errors = Vec::new();
        if !self.active {
            return errors;
        }
        let mut start = 0;
        for nl in memchr_iter(b'\n', chunk) {
            if self.pending.is_empty() {
                self.line(&chunk[start..nl]);
            } else {
                let mut line = std::mem::take(&mut self.pending);
                line.extend_from_slice(&chunk[start..nl]);
                self.line(&line);
                line.clear();
                self.pending = line;
            }
            start = nl + 1;
            if self.batch.len() >= BATCH_LIMIT {
                self.write_batch(&mut errors);
            }
        }
        self.pending.extend_from_slice(&chunk[start..]);
        self.write_batch(&mut errors);
        errors
    }

    /// Ends the input: logs the unfinished last line, if any. Later calls do nothing.
    pub fn finish(&mut self) -> Vec<Error> {
        let mut errors = Vec::new();
        if self.finished {
            return errors;
        }
        self.finished = true;
        if !self.pending.is_empty() {
            let line = std::mem::take(&mut self.pending);
            self.line(&line);
        }
        self.write_batch(&mut errors);
        errors
    }

    fn line(&mut self, line: &[u8]) {
        let before = self.batch.len();
        let outcome = self.engine.process(line, &mut self.batch);
        self.stats.count(outcome);
        self.stats.bytes_logged += (self.batch.len() - before) as u64;
    }

    fn write_batch(&mut self, errors: &mut Vec<Error>) {
        if self.batch.is_empty() {
            return;
        }
        for sink in &mut self.sinks {
            if let Err(e) = sink.write_lines(&self.batch) {
                errors.push(e);
            }
        }
        self.batch.clear();
    }
}
