//! Log lines as the read side reads them, as a reader: what `--compact` rewrites under
//! `--redact` ([`LinesIn`]).

use std::io::{self, Read};

/// A reader of whole lines as the read side reads them ([`crate::door::line_in`]): with
/// `--redact`, the run of bytes beside each cut marker of a log written without it is left out.
/// A line longer than [`crate::tee::log::LINE_CAP`] goes through as it is, in bounded memory.
pub struct LinesIn {
    inner: Box<dyn Read>,
    /// Bytes read and not yet given: a line being gathered.
    line: Vec<u8>,
    /// Lines ready to give, and how far they were given.
    ready: Vec<u8>,
    at: usize,
    done: bool,
    /// What is read from `inner` at a time.
    chunk: Vec<u8>,
    door: crate::door::Forward,
    /// With `--redact`, inside a line past the cap (given as it comes): what it says of
    /// private keys' blocks so far.
    long: Option<crate::cut::redact::KeyMarks>,
}

impl LinesIn {
    pub fn new(inner: Box<dyn Read>, chunk: usize) -> LinesIn {
        LinesIn {
            inner,
            line: Vec::new(),
            ready: Vec::new(),
            at: 0,
            done: false,
            chunk: vec![0u8; chunk],
            door: Default::default(),
            long: None,
        }
    }

    /// Moves the whole lines of `line` (and, at the end or past the cap, the rest) to `ready`.
    fn settle(&mut self) {
        let mut from = 0;
        while let Some(nl) = memchr::memchr(b'\n', &self.line[from..]) {
            let l = &self.line[from..from + nl];
            match self.long.take() {
                // The end of a line past the cap: what all of it says of keys' blocks stands.
                Some(mut marks) => {
                    marks.see(l);
                    self.ready.extend_from_slice(&crate::door::line_in(l));
                    self.door.after_pieces(&marks);
                }
                None => self.ready.extend_from_slice(&self.door.line(l)),
            }
            self.ready.push(b'\n');
            from += nl + 1;
        }
        self.line.drain(..from);
        let cap = crate::tee::log::LINE_CAP;
        if self.done && !self.line.is_empty() && self.line.len() <= cap {
            // A compressed log's last line without a newline is a line, read as any other.
            let last = self.door.line(&self.line).into_owned();
            self.ready.extend_from_slice(&last);
            self.line.clear();
        } else if self.done || self.line.len() > cap {
            if crate::door::redactor().is_some() {
                self.long.get_or_insert_default().see(&self.line);
            }
            self.ready.append(&mut self.line);
        }
    }
}

impl Read for LinesIn {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at == self.ready.len() {
            self.ready.clear();
            self.at = 0;
            if self.done {
                return Ok(0);
            }
            let n = self.inner.read(&mut self.chunk)?;
            self.done = n == 0;
            self.line.extend_from_slice(&self.chunk[..n]);
            self.settle();
        }
        let n = buf.len().min(self.ready.len() - self.at);
        buf[..n].copy_from_slice(&self.ready[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}
