//! Strings: validated as they stream, with their head kept in the copy and only their tail
//! held, so a long string costs about `3 × keep` bytes whatever its length.

use super::*;

/// Strings shorter than this (and than `keep`, which is at least 64) are read in one go when
/// they have no escape and end in the piece.
const SHORT: usize = 64;

/// The string being read.
#[derive(Default)]
pub(super) struct Str {
    key: bool,
    out_start: usize,
    len: u64,
    /// An escape cut by the end of the last piece (at most 11 bytes), not yet taken.
    partial: Vec<u8>,
    /// The string's last bytes (all of them until it is long); `tail[0]` is content byte
    /// `origin`.
    tail: Vec<u8>,
    origin: u64,
    /// Content offsets that fall on a character and escape boundary, at least `keep / 4`
    /// apart: where the tail may start.
    marks: VecDeque<u64>,
    /// The first content offset far enough past the last mark to be marked.
    next_mark: u64,
}

impl Str {
    /// The last boundary with at least `keep` bytes of content after it, up to `end`.
    fn tail_start(&self, end: u64, keep: usize) -> Option<u64> {
        self.marks
            .iter()
            .rev()
            .find(|&&m| end - m >= keep as u64)
            .copied()
    }
}

impl Reducer {
    pub(super) fn string_start(&mut self, key: bool) {
        let s = &mut self.s;
        s.key = key;
        s.out_start = self.out.len();
        s.len = 0;
        s.partial.clear();
        s.tail.clear();
        s.origin = 0;
        s.marks.clear();
        s.marks.push_back(0);
        s.next_mark = (self.keep / 4) as u64;
        if self.skip.is_none() {
            self.out.push(b'"');
        }
    }

    /// Reads string content from the start of `s`; returns the bytes consumed.
    pub(super) fn string(&mut self, s: &[u8]) -> usize {
        if self.s.len == 0 && self.s.partial.is_empty() {
            // The common case first: a short string without escapes, whole in this piece.
            if let Some(j) = memchr::memchr2(b'"', b'\\', s)
                && j < SHORT
                && s[j] == b'"'
            {
                if strings::has_control(&s[..j]) {
                    self.fail(Failure::Invalid);
                    return j;
                }
                self.s.len = j as u64;
                if self.writing() {
                    self.out.extend_from_slice(&s[..j]);
                }
                self.string_done();
                return j + 1;
            }
        }
        let mut i = self.finish_escape(s);
        if self.failure.is_some() {
            return i;
        }
        // Then whole runs and escapes: the content is taken a segment at a time.
        let (start, base) = (i, self.s.len);
        while i < s.len() {
            // Escapes first: escape-dense text has them back to back, with no run to search.
            if s[i] == b'\\' {
                match escape_len(&s[i..]) {
                    Ok(n) => {
                        i += n;
                        let at = base + (i - start) as u64;
                        if at >= self.s.next_mark {
                            self.mark(at);
                        }
                        continue;
                    }
                    Err(true) => {
                        self.fail(Failure::Invalid);
                        return i;
                    }
                    Err(false) => {
                        // The piece ends inside the escape: it is finished with the next piece.
                        self.take(&s[start..i]);
                        self.s.partial.extend_from_slice(&s[i..]);
                        return s.len();
                    }
                }
            }
            if s[i] == b'"' {
                self.take(&s[start..i]);
                self.string_done();
                return i + 1;
            }
            let rest = &s[i..];
            let j = memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
            if strings::has_control(&rest[..j]) {
                self.fail(Failure::Invalid);
                return i;
            }
            // In plain text any byte that does not continue a UTF-8 character starts one: a
            // boundary `keep` bytes before the run's end, or at its start.
            let p = i + j.saturating_sub(self.keep);
            if let Some(k) = s[p..i + j].iter().position(|&b| b & 0xC0 != 0x80) {
                self.mark(base + (p + k - start) as u64);
            }
            i += j;
        }
        self.take(&s[start..]);
        s.len()
    }

    /// Completes an escape cut by the end of the last piece with the first bytes of `s`;
    /// returns the bytes consumed.
    pub(super) fn finish_escape(&mut self, s: &[u8]) -> usize {
        let mut i = 0;
        while !self.s.partial.is_empty() {
            match escape_len(&self.s.partial) {
                Ok(_) => {
                    let escape = std::mem::take(&mut self.s.partial);
                    self.take(&escape);
                    self.mark(self.s.len);
                }
                Err(false) if i < s.len() => {
                    self.s.partial.push(s[i]);
                    i += 1;
                }
                Err(false) => break,
                Err(true) => {
                    self.fail(Failure::Invalid);
                    break;
                }
            }
        }
        i
    }

    /// Notes that content offset `at` of the string is a character and escape boundary, if the
    /// last such note is far enough back.
    pub(super) fn mark(&mut self, at: u64) {
        let s = &mut self.s;
        if at >= s.next_mark {
            s.marks.push_back(at);
            s.next_mark = at + (self.keep / 4) as u64;
        }
    }

    /// Takes string content: into the copy while it is short (a key: all of it), and into the
    /// tail, which keeps at least `keep` bytes from a boundary.
    pub(super) fn take(&mut self, bytes: &[u8]) {
        let before = self.s.len;
        self.s.len += bytes.len() as u64;
        if !self.writing() {
            return;
        }
        if self.s.key {
            self.out.extend_from_slice(bytes);
            return;
        }
        // The head: the first `keep` bytes and a few more, so that a boundary can be found.
        let cap = (self.keep + 16) as u64;
        if before < cap {
            let n = ((cap - before) as usize).min(bytes.len());
            self.out.extend_from_slice(&bytes[..n]);
        }
        let keep = self.keep;
        let s = &mut self.s;
        let end = s.len;
        let tail_end = s.origin + s.tail.len() as u64;
        let from = match s.tail_start(end, keep) {
            // All the tail so far and the front of `bytes` are too far back to matter.
            Some(from) if from >= tail_end => {
                s.tail.clear();
                s.tail.extend_from_slice(&bytes[(from - before) as usize..]);
                from
            }
            _ => {
                s.tail.extend_from_slice(bytes);
                if s.tail.len() < 3 * keep {
                    return;
                }
                match s.tail_start(end, keep) {
                    Some(from) if from > s.origin => {
                        s.tail.drain(..(from - s.origin) as usize);
                        from
                    }
                    _ => return,
                }
            }
        };
        s.origin = from;
        while s.marks.front().is_some_and(|&m| m < from) {
            s.marks.pop_front();
        }
    }

    pub(super) fn string_done(&mut self) {
        if self.s.key {
            self.put(b'"');
            self.st = St::Colon;
            return;
        }
        if self.writing() {
            let s = &self.s;
            let body = s.out_start + 1;
            // The copy holds the string's first `held` bytes, the tail its bytes from `origin`.
            let held = (self.keep + 16) as u64;
            if s.len <= held {
                // All of it is in the copy.
            } else if s.origin <= held {
                // The head and the tail meet: not long enough to cut, all of it is here.
                self.out.truncate(body + s.origin as usize);
                self.out.extend_from_slice(&s.tail);
            } else {
                let head =
                    crate::line::strings::boundary_at_or_before(&self.out[body..], self.keep);
                self.out.truncate(body + head);
                let from = s.tail_start(s.len, self.keep).unwrap_or(s.origin);
                let from = (from - s.origin) as usize;
                self.out.extend_from_slice(&s.tail[from..]);
                let kept = head + s.tail.len() - from;
                debug_assert!(kept < s.len as usize);
                let e = Elided {
                    text_len: s.len + 2,
                    children: 0,
                };
                self.elided.push((s.out_start, e));
            }
            self.out.push(b'"');
        }
        self.value_done();
    }
}
