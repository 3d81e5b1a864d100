//! `--stdout-max-line-bytes`: standard output lines longer than N are cut with the engine
//! (valid JSON, structure kept); shorter lines pass byte for byte.
//!
//! A line's length is known only at its newline, so with this option an unfinished line is held
//! back until it ends (or input ends); without it, stdout gets every read at once.

use crate::engine::LineEngine;
use crate::split::{Piece, Splitter};

pub struct StdoutCap {
    max: usize,
    engine: LineEngine,
    /// No cap: a line is cut whole, so it is held whole (a known limit for giant lines).
    lines: Splitter,
}

impl StdoutCap {
    /// `engine` must be configured with `max_line_bytes == max`.
    pub fn new(max: usize, engine: LineEngine) -> StdoutCap {
        StdoutCap {
            max,
            engine,
            lines: Splitter::new(usize::MAX),
        }
    }

    /// Appends to `out` what stdout gets for this chunk: every line it finishes.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<u8>) {
        let mut lines = std::mem::take(&mut self.lines);
        let mut at = 0;
        while let Some(piece) = lines.next(chunk, &mut at) {
            if let Piece::Line(line) = piece {
                self.line(line, true, out);
            }
        }
        self.lines = lines;
    }

    /// Appends the unfinished last line, if any (without a newline when it passes unchanged).
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        let mut lines = std::mem::take(&mut self.lines);
        if let Some(Piece::Line(line)) = lines.finish() {
            self.line(line, false, out);
        }
        self.lines = lines;
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
