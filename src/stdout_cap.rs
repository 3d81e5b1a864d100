//! `--stdout-max-line-bytes`: standard output lines longer than N are cut with the engine
//! (valid JSON, structure kept); shorter lines pass byte for byte.
//!
//! A line's length is known only at its newline, so with this option an unfinished line is held
//! back until it ends (or input ends); without it, stdout gets every read at once.

use memchr::memchr_iter;

use crate::engine::LineEngine;

pub struct StdoutCap {
    max: usize,
    engine: LineEngine,
    pending: Vec<u8>,
}

impl StdoutCap {
    /// `engine` must be configured with `max_line_bytes == max`.
    pub fn new(max: usize, engine: LineEngine) -> StdoutCap {
        StdoutCap {
            max,
            engine,
            pending: Vec::new(),
        }
    }

    /// Appends to `out` what stdout gets for this chunk: every line it finishes.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<u8>) {
        let mut start = 0;
        for nl in memchr_iter(b'\n', chunk) {
            if self.pending.is_empty() {
                self.line(&chunk[start..nl], true, out);
            } else {
                let mut line = std::mem::take(&mut self.pending);
                line.extend_from_slice(&chunk[start..nl]);
                self.line(&line, true, out);
                line.clear();
                self.pending = line;
            }
            start = nl + 1;
        }
        self.pending.extend_from_slice(&chunk[start..]);
    }

    /// Appends the unfinished last line, if any (without a newline when it passes unchanged).
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        let line = std::mem::take(&mut self.pending);
        if !line.is_empty() {
            self.line(&line, false, out);
        }
    }

    fn line(&mut self, line: &[u8], newline: bool, out: &mut Vec<u8>) {
        let body = line.strip_suffix(b"\r").unwrap_or(line);
        if body.len() <= self.max {
            out.extend_from_slice(line);
            if newline {
                out.push(b'\n');
            }
        } else if self.engine.process(line, out) == crate::Outcome::Blank {
            // A whitespace-only line over the limit becomes an empty line.
            out.push(b'\n');
        }
    }
}
