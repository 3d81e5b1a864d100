//! Containers whole in a piece, read in one go: the scanner validates one (with the 64-byte
//! string scan of lines held whole) and reports its tokens, from which the compact copy is made,
//! instead of the grammar stepping through it a byte at a time.
//!
//! A container read this way is one the reduction would copy unchanged but for whitespace: at
//! most `keep` bytes (no string in it long enough to cut) and [`MAX_VALUES_WHOLE`] values (no
//! array in it long enough to lose its middle, no object its last members). Anything else is
//! read a byte at a time, and so is what follows a failed attempt for a while
//! ([`Reducer::whole_value`]), so that attempts never cost more than a constant factor.

use super::*;

/// The most values in a container read in one go: no array of at most this many elements loses
/// any ([`ENDS`] from each end are kept), no object of at most this many members ([`MEMBERS`]).
const MAX_VALUES_WHOLE: usize = MEMBERS;
const _: () = assert!(MAX_VALUES_WHOLE <= 2 * ENDS);

/// After an attempt that failed over `w` bytes, no attempt for the next `w / SKIP` bytes: the
/// scanner reads about eight times faster than the grammar's byte steps, so failed attempts
/// cost at most about as much as the bytes they are charged to.
const SKIP: usize = 8;

/// Buffers kept from one container to the next.
#[derive(Default)]
pub(super) struct Scratch {
    /// The scanner's stack of open containers.
    stack: Vec<u8>,
    /// The containers open in the one being read: where each starts in the copy and in the
    /// input.
    open: Vec<(usize, usize)>,
    /// The compact copy, once a gap with whitespace is met (before that, the copy is the
    /// input's bytes and is taken from there).
    copy: Vec<u8>,
    /// Containers whose copy is shorter than their input (whitespace left out), by their
    /// offset in the copy.
    elided: Vec<(usize, Elided)>,
}

/// The visitor that makes the compact copy of the container the scanner reads, counts its
/// values and its depth.
struct Copier<'a> {
    s: &'a [u8],
    /// The end of the last token.
    last: usize,
    /// Whether every gap so far is compact (nothing or one `,` / `:`): then the copy is
    /// `s[..last]`, not yet written.
    compact: bool,
    /// The fields of [`Scratch`] the copy is made in.
    copy: &'a mut Vec<u8>,
    open: &'a mut Vec<(usize, usize)>,
    elided: &'a mut Vec<(usize, Elided)>,
    values: usize,
    depth: usize,
}

impl Copier<'_> {
    /// The token `s[start..end]` follows the last: copied, after the `,` or `:` between them.
    #[inline(always)]
    fn token(&mut self, start: usize, end: usize) {
        let gap = &self.s[self.last..start];
        if self.compact && (gap.len() > 1 || gap.first().is_some_and(u8::is_ascii_whitespace)) {
            self.compact = false;
            self.copy.extend_from_slice(&self.s[..self.last]);
        }
        if !self.compact {
            if let Some(&sep) = gap.iter().find(|b| !b.is_ascii_whitespace()) {
                self.copy.push(sep);
            }
            self.copy.extend_from_slice(&self.s[start..end]);
        }
        self.last = end;
    }

    /// The length of the copy so far.
    fn copied(&self) -> usize {
        if self.compact {
            self.last
        } else {
            self.copy.len()
        }
    }
}

impl scan::Visitor for Copier<'_> {
    #[inline(always)]
    fn key(&mut self, start: usize, end: usize) {
        self.token(start, end);
    }
    #[inline(always)]
    fn scalar(&mut self, _: Kind, start: usize, end: usize) {
        self.token(start, end);
        self.values += 1;
    }
    #[inline(always)]
    fn open(&mut self, _: Kind, start: usize) {
        self.token(start, start + 1);
        self.values += 1;
        let at = self.copied() - 1;
        self.open.push((at, start));
        self.depth = self.depth.max(self.open.len());
    }
    #[inline(always)]
    fn close(&mut self, end: usize) {
        self.token(end - 1, end);
        let Some((out_start, in_start)) = self.open.pop() else {
            return;
        };
        let (in_len, out_len) = (end - in_start, self.copied() - out_start);
        if in_len != out_len {
            let e = Elided {
                text_len: in_len as u64,
                children: 0,
            };
            self.elided.push((out_start, e));
        }
    }
}

impl Reducer {
    /// Reads the container at the start of `s` (an array element or a member's value) in one
    /// go, when it is whole in `s` and small enough (see the module documentation). Returns
    /// the bytes consumed, or 0 to read it a byte at a time.
    pub(super) fn whole_value(&mut self, s: &[u8]) -> usize {
        if self.pos < self.whole_after {
            return 0;
        }
        let s = &s[..s.len().min(self.keep)];
        let w = &mut self.whole;
        w.copy.clear();
        w.open.clear();
        w.elided.clear();
        let mut copier = Copier {
            s,
            last: 0,
            compact: true,
            copy: &mut w.copy,
            open: &mut w.open,
            elided: &mut w.elided,
            values: 0,
            depth: 0,
        };
        // The piece's UTF-8 is checked already. A container that is not whole here, not valid
        // or too big is read a byte at a time (to be reduced, or to fail where the grammar
        // does).
        let read = scan::first_value(s, &mut copier, &mut w.stack);
        let (values, depth, compact) = (copier.values, copier.depth, copier.compact);
        let end = match read {
            Ok(end) if values <= MAX_VALUES_WHOLE && self.frames.len() + depth <= MAX_DEPTH => end,
            _ => {
                self.whole_after = self.pos + (s.len() / SKIP).max(1) as u64;
                return 0;
            }
        };
        let writing = self.writing();
        self.element_start(writing);
        if writing {
            let base = self.out.len();
            if compact {
                self.out.extend_from_slice(&s[..end]);
            } else {
                self.out.extend_from_slice(&self.whole.copy);
            }
            let elided = self.whole.elided.iter().map(|&(at, e)| (base + at, e));
            self.elided.extend(elided);
            self.values += values;
        }
        self.value_done();
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reduction of `line` fed in `chunk`-byte pieces, and its value count before it
    /// finishes.
    fn reduce(line: &str, chunk: usize) -> (usize, Reduced) {
        let mut r = Reducer::new(200);
        for piece in line.as_bytes().chunks(chunk) {
            r.feed(piece);
        }
        assert!(r.failure().is_none());
        let values = r.values;
        (values, r.finish().unwrap().unwrap())
    }

    /// Containers read in one go count their values, and those with whitespace note their
    /// input lengths, as a byte at a time does: in arrays, as members' values, and past the
    /// members an object keeps.
    #[test]
    fn containers_read_in_one_go_count_values_and_lengths_as_bytes_do() {
        for value in [
            r#"{"a":[1,{"b":null}],"c":"x"}"#,
            r#"{"a": [1, {"b" : null}], "c":"x" }"#,
        ] {
            for n in [3, 200, 300, 1000] {
                let array = format!("[{}]", vec![value; n].join(", "));
                let members: Vec<String> = (0..n).map(|k| format!(r#""k{k}": {value}"#)).collect();
                let object = format!(r#"{{"o":{{{}}}}}"#, members.join(","));
                for line in [array, object] {
                    let (one, whole) = (reduce(&line, 1), reduce(&line, 1 << 20));
                    assert_eq!(one.0, whole.0, "{n} {value}");
                    assert_eq!(one.1.doc, whole.1.doc, "{n} {value}");
                    assert_eq!(one.1.elided, whole.1.elided, "{n} {value}");
                }
            }
        }
    }
}
