//! The read side of `--redact`: what `--view` prints and what the MCP tools answer passes
//! [`answer`] or an [`AnswerWriter`], which redact as the logs are redacted once
//! [`answers_on`] has been called (at start, from the command line), and pass text through
//! unchanged otherwise.

use std::io::{self, Write};
use std::sync::OnceLock;

use super::{Redactor, Secret};

static ANSWERS: OnceLock<Redactor> = OnceLock::new();

/// Turns redaction on for every answer of this process, with the patterns and the values of
/// `secrets`. Later calls change nothing.
pub fn answers_on(secrets: &[Secret]) {
    let _ = ANSWERS.get_or_init(|| Redactor::with_secrets(secrets));
}

/// `text` with its secrets replaced, when answers are redacted.
pub fn answer(text: String) -> String {
    let Some(r) = ANSWERS.get() else {
        return text;
    };
    let mut out = Vec::new();
    if r.redact(text.as_bytes(), &mut out) {
        String::from_utf8_lossy(&out).into_owned()
    } else {
        text
    }
}

/// A writer that redacts what goes through it line by line, when answers are redacted (else
/// it writes straight through). A line is held until its newline, or until a flush.
pub struct AnswerWriter<W: Write> {
    out: W,
    held: Vec<u8>,
    redacted: Vec<u8>,
}

impl<W: Write> AnswerWriter<W> {
    pub fn new(out: W) -> AnswerWriter<W> {
        AnswerWriter {
            out,
            held: Vec::new(),
            redacted: Vec::new(),
        }
    }

    /// Writes the first `n` held bytes, redacted.
    fn write_held(&mut self, r: &Redactor, n: usize) -> io::Result<()> {
        let text = &self.held[..n];
        if r.redact(text, &mut self.redacted) {
            self.out.write_all(&self.redacted)?;
        } else {
            self.out.write_all(text)?;
        }
        self.held.drain(..n);
        Ok(())
    }
}

impl<W: Write> Write for AnswerWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let Some(r) = ANSWERS.get() else {
            return self.out.write(buf);
        };
        self.held.extend_from_slice(buf);
        if let Some(last) = memchr::memrchr(b'\n', &self.held) {
            self.write_held(r, last + 1)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if let Some(r) = ANSWERS.get()
            && !self.held.is_empty()
        {
            self.write_held(r, self.held.len())?;
        }
        self.out.flush()
    }
}

impl<W: Write> Drop for AnswerWriter<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}
