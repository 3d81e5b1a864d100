//! `--stdout-max-line-bytes`: standard output lines longer than N are cut with the engine
//! (valid JSON, structure kept); shorter lines pass byte for byte.
//!
//! A line's length is known only at its newline, so with this option an unfinished line is held
//! back until it ends (or input ends); without it, stdout gets every read at once. A line past
//! the memory cap is not held: it is reduced while read, as the log reduces it
//! ([`BigLine`]), and stdout gets the reduction at its newline.

use crate::cut::engine::LineEngine;
use crate::tee::log::{BigLine, Next, line_cap};
use crate::tee::split::{Piece, Splitter};

pub struct StdoutCap {
    max: usize,
    /// The longest line held whole.
    cap: usize,
    engine: LineEngine,
    lines: Splitter,
    /// The unfinished last line, when it is past the memory cap.
    big: Option<BigLine>,
}

impl StdoutCap {
    /// `engine` must be configured with `max_line_bytes == max`.
    pub fn new(max: usize, engine: LineEngine) -> StdoutCap {
        // A line within `max` (and its `\r`) passes whole, so it is held whole whatever the cap.
        let cap = line_cap(engine.config()).max(max.saturating_add(1));
        StdoutCap {
            max,
            cap,
            engine,
            lines: Splitter::new(cap),
            big: None,
        }
    }

    /// Appends to `out` what stdout gets for this chunk: every line it finishes.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<u8>) {
        let mut lines = std::mem::take(&mut self.lines);
        let mut at = 0;
        while let Some(piece) = lines.next(chunk, &mut at) {
            self.piece(piece, true, out);
        }
        self.lines = lines;
    }

    /// Appends the unfinished last line, if any (without a newline when it passes unchanged).
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        let mut lines = std::mem::take(&mut self.lines);
        if let Some(piece) = lines.finish() {
            self.piece(piece, false, out);
        }
        self.lines = lines;
    }

    fn piece(&mut self, piece: Piece, newline: bool, out: &mut Vec<u8>) {
        match BigLine::follow(&mut self.big, self.engine.config(), piece) {
            Next::Line(line) => self.line(line, newline, out),
            Next::Big(big) => self.big_line(*big, out),
            Next::Nothing => {}
        }
    }

    fn line(&mut self, line: &[u8], newline: bool, out: &mut Vec<u8>) {
        let body = line.strip_suffix(b"\r").unwrap_or(line);
        if body.len() <= self.max {
            out.extend_from_slice(line);
            if newline {
                out.push(b'\n');
            }
        } else if line.len() > self.cap {
            // Whatever the read sizes, a line past the cap is cut the same way.
            let big = BigLine::start(self.engine.config(), line);
            self.big_line(big, out);
        } else if self.engine.process(line, out) == crate::Outcome::Blank {
            // A whitespace-only line over the limit becomes an empty line.
            out.push(b'\n');
        }
    }

    fn big_line(&mut self, big: BigLine, out: &mut Vec<u8>) {
        if big.finish(&mut self.engine, false, out) == crate::Outcome::Blank {
            out.push(b'\n');
        }
    }
}
