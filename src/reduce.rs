//! Reducing a giant line while it is read, so that no line needs to be held whole.
//!
//! A line that outgrows [`crate::log::STREAM_CAP`] is fed here piece by piece as it arrives.
//! The [`Reducer`] validates it as strict JSON (the same rules as `scan.rs`, UTF-8 included)
//! and writes a *reduced* copy of it, compact and in bounded memory:
//!
//! - a string longer than about `2 × keep` bytes keeps its first and last `keep` bytes, cut on
//!   character and escape boundaries (`keep` is a little over the budget, so that planning the
//!   reduced copy cuts exactly where planning the whole line would);
//! - an array keeps its first and last [`ENDS`] elements;
//! - an object keeps its first [`MEMBERS`] members.
//!
//! What was left out is recorded per value as an [`Elided`] (the value's length in the input,
//! the children it dropped), so the planner and the emitter write markers with the true sizes.
//! The engine then plans the reduced copy like any other line (`LineEngine::process_reduced`).
//!
//! Memory is the reduced copy (at most [`REDUCED_CAP`] bytes and [`MAX_VALUES`] values), the
//! open containers (at most [`MAX_DEPTH`]) and one string's tail (about `3 × keep`). A line
//! that needs more is logged as an excerpt.

use std::collections::VecDeque;

use crate::scan::{self, Kind, Visitor};
use crate::strings;
use crate::strings::escape_len;

/// What a streaming reduction (`reduce.rs`) left out of a value before the line was indexed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Elided {
    /// The value's length in the input; 0 when it is as indexed.
    pub text_len: u64,
    /// Children dropped: from the middle of an array, from the end of an object.
    pub children: u64,
}

const BOM: &[u8] = "\u{FEFF}".as_bytes();

/// Elements kept from each end of an array. A log line of the default budget shows far fewer.
pub const ENDS: usize = 128;
/// Members kept from the start of an object.
pub const MEMBERS: usize = 2 * ENDS;
/// The largest reduced copy; a line whose reduction is larger is logged as an excerpt.
pub const REDUCED_CAP: usize = 8 << 20;
/// The most values in a reduced copy: indexing and planning take about 100 bytes a value.
pub const MAX_VALUES: usize = 250_000;
/// The deepest nesting reduced; deeper lines are logged as an excerpt.
pub const MAX_DEPTH: usize = 100_000;

/// Why a line could not be reduced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The line is not strict JSON.
    Invalid,
    /// The reduced copy would pass [`REDUCED_CAP`] or [`MAX_DEPTH`].
    TooBig,
}

/// A reduced line: its compact text and what each value left out, by the value's position in
/// document order (the order of `index::IndexBuilder`'s nodes).
#[derive(Debug, Default)]
pub struct Reduced {
    pub doc: Vec<u8>,
    pub elided: Vec<(u32, Elided)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    /// A value must come (after `:` or `,` in an array, or at the start).
    Value,
    /// A value or `]` (just after `[`).
    ValueOrClose,
    /// A key must come (after `,` in an object).
    Key,
    /// A key or `}` (just after `{`).
    KeyOrClose,
    Colon,
    AfterValue,
    Str,
    Num(Num),
    /// Inside `true`, `false` or `null`: the literal and the bytes of it matched.
    Lit(&'static [u8], u8),
    /// The top-level value is complete: only whitespace may follow.
    Done,
}

/// Where a number is in the grammar `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Num {
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    E,
    ESign,
    Exp,
}

impl Num {
    fn next(self, b: u8) -> Option<Num> {
        use Num::*;
        Some(match (self, b) {
            (Minus, b'0') => Zero,
            (Minus, b'1'..=b'9') => Int,
            (Int, b'0'..=b'9') => Int,
            (Zero | Int, b'.') => Dot,
            (Dot | Frac, b'0'..=b'9') => Frac,
            (Zero | Int | Frac, b'e' | b'E') => E,
            (E, b'+' | b'-') => ESign,
            (E | ESign | Exp, b'0'..=b'9') => Exp,
            _ => return None,
        })
    }
    fn complete(self) -> bool {
        matches!(self, Num::Zero | Num::Int | Num::Frac | Num::Exp)
    }
}

struct Frame {
    object: bool,
    /// Offsets of the container in the reduced copy and in the input.
    out_start: usize,
    in_start: u64,
    /// Members or elements seen.
    count: u64,
    /// Arrays: where each element past the first [`ENDS`] starts in the reduced copy, and the
    /// number of values before it.
    back: Vec<(usize, usize)>,
    /// Elements dropped from the middle (arrays).
    dropped: u64,
}

/// The string being read.
#[derive(Default)]
struct Str {
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
    /// True once the front of `tail` has been dropped.
    compacted: bool,
}

/// Reduces one line fed in pieces. See the module documentation.
pub struct Reducer {
    keep: usize,
    out: Vec<u8>,
    /// What values left out, by their offset in `out`.
    elided: Vec<(usize, Elided)>,
    frames: Vec<Frame>,
    /// Values in the reduced copy.
    values: usize,
    st: St,
    s: Str,
    /// Input bytes read so far.
    pos: u64,
    /// While a member past [`MEMBERS`] is skipped: the depth of its object.
    skip: Option<usize>,
    /// The unfinished UTF-8 character at the end of the last piece.
    utf8_carry: Vec<u8>,
    /// Bytes of a leading byte order mark seen; 3 once past it.
    bom: usize,
    failure: Option<Failure>,
}

impl Reducer {
    /// A reducer for lines that will be cut to `budget` bytes: it keeps enough of each long
    /// string for the planner to cut it exactly where it would cut the whole string.
    pub fn for_budget(budget: usize) -> Reducer {
        // The planner keeps at most `budget` bytes of a string, and looks at most 12 bytes
        // past a cut point for a boundary.
        Reducer::new(budget + 16)
    }

    /// A reducer that keeps `keep` bytes from each end of a long string.
    pub fn new(keep: usize) -> Reducer {
        Reducer {
            keep: keep.max(64),
            out: Vec::new(),
            elided: Vec::new(),
            frames: Vec::new(),
            values: 0,
            st: St::Value,
            s: Str::default(),
            pos: 0,
            skip: None,
            utf8_carry: Vec::new(),
            bom: 0,
            failure: None,
        }
    }

    /// Whether the line has failed to reduce (then the rest of it need not be fed).
    pub fn failure(&self) -> Option<Failure> {
        self.failure
    }

    /// Feeds the next piece of the line (no `\n` in it).
    pub fn feed(&mut self, piece: &[u8]) {
        if self.failure.is_some() {
            return;
        }
        let mut piece = piece;
        // A byte order mark may open the line (the engine drops it too).
        while self.bom < 3 && self.pos == 0 {
            match piece.first() {
                None => return,
                Some(&b) if b == BOM[self.bom] => {
                    self.bom += 1;
                    piece = &piece[1..];
                }
                Some(_) if self.bom == 0 => self.bom = 3,
                Some(_) => return self.fail(Failure::Invalid),
            }
        }
        if !self.utf8(piece) {
            return self.fail(Failure::Invalid);
        }
        let mut i = 0;
        while i < piece.len() && self.failure.is_none() {
            let n = self.step(&piece[i..]);
            i += n;
            self.pos += n as u64;
        }
        if self.out.len() > REDUCED_CAP || self.values > MAX_VALUES {
            self.fail(Failure::TooBig);
        }
    }

    /// Ends the line. `Ok(None)` for a line of whitespace only.
    pub fn finish(mut self) -> Result<Option<Reduced>, Failure> {
        if let St::Num(n) = self.st
            && self.frames.is_empty()
        {
            if !n.complete() {
                self.fail(Failure::Invalid);
            }
            self.st = St::Done;
        }
        if let Some(f) = self.failure {
            return Err(f);
        }
        if !self.utf8_carry.is_empty() || matches!(self.bom, 1 | 2) {
            return Err(Failure::Invalid);
        }
        match self.st {
            St::Done => {}
            St::Value if self.frames.is_empty() => return Ok(None),
            _ => return Err(Failure::Invalid),
        }
        self.elided.sort_unstable_by_key(|e| e.0);
        let mut order = Ordinals {
            elided: &self.elided,
            next: 0,
            ordinal: 0,
            found: Vec::with_capacity(self.elided.len()),
        };
        // The reduced copy is strict JSON by construction; scanning it again only numbers its
        // values. Should it ever fail, the line is logged as an excerpt.
        let mut stack = Vec::new();
        if scan::scan(&self.out, &mut order, &mut stack).is_err()
            || order.found.len() != self.elided.len()
        {
            debug_assert!(false, "reduced copy is not JSON");
            return Err(Failure::TooBig);
        }
        let elided = order.found;
        Ok(Some(Reduced {
            doc: self.out,
            elided,
        }))
    }

    fn fail(&mut self, f: Failure) {
        self.failure = Some(f);
        // Give the memory back at once: the rest of the line may be long.
        self.out = Vec::new();
        self.s = Str::default();
        self.frames = Vec::new();
    }

    /// Checks the UTF-8 of `piece`, carrying an unfinished character over to the next piece.
    fn utf8(&mut self, mut piece: &[u8]) -> bool {
        if !self.utf8_carry.is_empty() {
            let width = match self.utf8_carry[0] {
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                _ => 4,
            };
            let take = (width - self.utf8_carry.len()).min(piece.len());
            self.utf8_carry.extend_from_slice(&piece[..take]);
            piece = &piece[take..];
            if self.utf8_carry.len() < width {
                return true;
            }
            if std::str::from_utf8(&self.utf8_carry).is_err() {
                return false;
            }
            self.utf8_carry.clear();
        }
        match simdutf8::compat::from_utf8(piece) {
            Ok(_) => true,
            Err(e) if e.error_len().is_none() => {
                self.utf8_carry.extend_from_slice(&piece[e.valid_up_to()..]);
                true
            }
            Err(_) => false,
        }
    }

    fn writing(&self) -> bool {
        self.skip.is_none()
    }

    fn put(&mut self, b: u8) {
        if self.writing() {
            self.out.push(b);
        }
    }

    /// Reads from the start of `s` (never empty); returns the bytes consumed.
    fn step(&mut self, s: &[u8]) -> usize {
        let b = s[0];
        match self.st {
            St::Str => return self.string(s),
            St::Num(n) => match n.next(b) {
                Some(n) => {
                    self.put(b);
                    self.st = St::Num(n);
                    return 1;
                }
                None if n.complete() => {
                    // The number ended; `b` is read again after it.
                    self.value_done();
                    return 0;
                }
                None => {
                    self.fail(Failure::Invalid);
                    return 1;
                }
            },
            St::Lit(lit, k) => {
                if b != lit[k as usize] {
                    self.fail(Failure::Invalid);
                } else if k as usize + 1 == lit.len() {
                    self.put(b);
                    self.value_done();
                } else {
                    self.put(b);
                    self.st = St::Lit(lit, k + 1);
                }
                return 1;
            }
            _ => {}
        }
        if matches!(b, b' ' | b'\t' | b'\r' | b'\n') {
            return 1;
        }
        match (self.st, b) {
            (St::ValueOrClose, b']') => self.close(false),
            (St::Value | St::ValueOrClose, _) => self.value_start(b),
            (St::KeyOrClose, b'}') => self.close(true),
            (St::Key | St::KeyOrClose, b'"') => self.key_start(),
            (St::Colon, b':') => {
                self.put(b':');
                self.st = St::Value;
            }
            (St::AfterValue, b',') => {
                self.st = match self.frames.last() {
                    Some(f) if f.object => St::Key,
                    _ => St::Value,
                }
            }
            (St::AfterValue, b']') if self.frames.last().is_some_and(|f| !f.object) => {
                self.close(false)
            }
            (St::AfterValue, b'}') if self.frames.last().is_some_and(|f| f.object) => {
                self.close(true)
            }
            _ => self.fail(Failure::Invalid),
        }
        1
    }

    /// A value starts with byte `b`.
    fn value_start(&mut self, b: u8) {
        let writing = self.writing();
        if let Some(f) = self.frames.last_mut()
            && !f.object
        {
            f.count += 1;
            if writing {
                if f.count > 1 {
                    self.out.push(b',');
                }
                if f.count > ENDS as u64 {
                    f.back.push((self.out.len(), self.values));
                }
            }
        }
        if writing {
            self.values += 1;
        }
        self.st = match b {
            b'{' | b'[' => {
                if self.frames.len() >= MAX_DEPTH {
                    self.fail(Failure::TooBig);
                    return;
                }
                let object = b == b'{';
                self.frames.push(Frame {
                    object,
                    out_start: self.out.len(),
                    in_start: self.pos,
                    count: 0,
                    back: Vec::new(),
                    dropped: 0,
                });
                self.put(b);
                if object {
                    St::KeyOrClose
                } else {
                    St::ValueOrClose
                }
            }
            b'"' => {
                self.string_start(false);
                St::Str
            }
            b'-' => {
                self.put(b);
                St::Num(Num::Minus)
            }
            b'0' => {
                self.put(b);
                St::Num(Num::Zero)
            }
            b'1'..=b'9' => {
                self.put(b);
                St::Num(Num::Int)
            }
            b't' | b'f' | b'n' => {
                self.put(b);
                let lit: &'static [u8] = match b {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                };
                St::Lit(lit, 1)
            }
            _ => {
                self.fail(Failure::Invalid);
                St::Value
            }
        };
    }

    fn key_start(&mut self) {
        let depth = self.frames.len();
        let f = self.frames.last_mut().expect("keys are in objects");
        f.count += 1;
        let count = f.count;
        if self.skip.is_none() && count > MEMBERS as u64 {
            self.skip = Some(depth);
        }
        if self.writing() && count > 1 {
            self.out.push(b',');
        }
        self.string_start(true);
        self.st = St::Str;
    }

    fn string_start(&mut self, key: bool) {
        let s = &mut self.s;
        s.key = key;
        s.out_start = self.out.len();
        s.len = 0;
        s.partial.clear();
        s.tail.clear();
        s.origin = 0;
        s.marks.clear();
        s.marks.push_back(0);
        s.compacted = false;
        if self.skip.is_none() {
            self.out.push(b'"');
        }
    }

    /// Reads string content from the start of `s`; returns the bytes consumed.
    fn string(&mut self, s: &[u8]) -> usize {
        let mut i = self.finish_escape(s);
        if self.failure.is_some() {
            return i;
        }
        // Then whole runs and escapes: the content is taken a segment at a time.
        let (start, base) = (i, self.s.len);
        while i < s.len() {
            let rest = &s[i..];
            let j = memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
            if strings::has_control(&rest[..j]) {
                self.fail(Failure::Invalid);
                return i;
            }
            if j > 0 {
                // In plain text any byte that does not continue a UTF-8 character starts one:
                // a boundary `keep` bytes before the run's end, or at its start.
                let p = i + j.saturating_sub(self.keep);
                if let Some(k) = s[p..i + j].iter().position(|&b| b & 0xC0 != 0x80) {
                    self.mark(base + (p + k - start) as u64);
                }
            }
            i += j;
            if i == s.len() {
                break;
            }
            if s[i] == b'"' {
                self.take(&s[start..i]);
                self.string_done();
                return i + 1;
            }
            match escape_len(&s[i..]) {
                Ok(n) => {
                    i += n;
                    self.mark(base + (i - start) as u64);
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
        self.take(&s[start..]);
        s.len()
    }

    /// Completes an escape cut by the end of the last piece with the first bytes of `s`;
    /// returns the bytes consumed.
    fn finish_escape(&mut self, s: &[u8]) -> usize {
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
    fn mark(&mut self, at: u64) {
        let s = &mut self.s;
        if at >= s.marks.back().copied().unwrap_or(0) + (self.keep / 4) as u64 {
            s.marks.push_back(at);
        }
    }

    /// Takes string content: into the copy while it is short (a key: all of it), and into the
    /// tail, which keeps at least `keep` bytes from a boundary.
    fn take(&mut self, bytes: &[u8]) {
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
        s.compacted = true;
    }

    fn string_done(&mut self) {
        if self.s.key {
            self.put(b'"');
            self.st = St::Colon;
            return;
        }
        if self.writing() {
            let s = &self.s;
            let body = s.out_start + 1;
            if s.len > (self.keep + 16) as u64 && !s.compacted {
                // Not long enough to cut: the tail holds all of it.
                self.out.truncate(body);
                self.out.extend_from_slice(&s.tail);
            } else if s.compacted {
                let head = crate::strings::boundary_at_or_before(&self.out[body..], self.keep);
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

    fn close(&mut self, object: bool) {
        let writing = self.writing();
        let Some(excess) = self
            .frames
            .last()
            .map(|f| f.back.len().saturating_sub(ENDS))
        else {
            return self.fail(Failure::Invalid);
        };
        if writing && excess > 0 {
            self.drop_elements(excess);
        }
        let f = self.frames.pop().expect("just seen");
        debug_assert_eq!(f.object, object);
        if writing {
            self.out.push(if object { b'}' } else { b']' });
            let dropped = if object {
                f.count.saturating_sub(MEMBERS as u64)
            } else {
                f.dropped
            };
            let in_len = self.pos - f.in_start + 1;
            if dropped > 0 || in_len != (self.out.len() - f.out_start) as u64 {
                let e = Elided {
                    text_len: in_len,
                    children: dropped,
                };
                self.elided.push((f.out_start, e));
            }
        }
        self.value_done();
    }

    /// A value ended: back to its container.
    fn value_done(&mut self) {
        let depth = self.frames.len();
        let writing = self.writing();
        let Some(f) = self.frames.last_mut() else {
            self.st = St::Done;
            return;
        };
        self.st = St::AfterValue;
        if f.object {
            if self.skip == Some(depth) {
                self.skip = None;
            }
        } else if writing && f.back.len() >= 2 * ENDS {
            self.drop_elements(ENDS);
        }
    }

    /// Removes the first `n` elements past the front ones of the innermost array from the copy.
    fn drop_elements(&mut self, n: usize) {
        let f = self.frames.last_mut().expect("an open array");
        let ((from, values_from), (to, values_to)) = (f.back[0], f.back[n]);
        let (gone, values_gone) = (to - from, values_to - values_from);
        self.out.drain(from..to);
        self.values -= values_gone;
        f.back.drain(..n);
        for b in f.back.iter_mut() {
            b.0 -= gone;
            b.1 -= values_gone;
        }
        f.dropped += n as u64;
        // Values that left something out inside the dropped elements come last in `elided`.
        let mut first = self.elided.len();
        while first > 0 && self.elided[first - 1].0 >= from {
            first -= 1;
        }
        let mut kept = first;
        for r in first..self.elided.len() {
            let (offset, e) = self.elided[r];
            if offset >= to {
                self.elided[kept] = (offset - gone, e);
                kept += 1;
            }
        }
        self.elided.truncate(kept);
    }
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

/// Numbers the values of the reduced copy in document order and picks out those in `elided`.
struct Ordinals<'a> {
    elided: &'a [(usize, Elided)],
    next: usize,
    ordinal: u32,
    found: Vec<(u32, Elided)>,
}

impl Ordinals<'_> {
    fn value(&mut self, start: usize) {
        if let Some(&(off, e)) = self.elided.get(self.next)
            && off == start
        {
            self.found.push((self.ordinal, e));
            self.next += 1;
        }
        self.ordinal += 1;
    }
}

impl Visitor for Ordinals<'_> {
    fn key(&mut self, _: usize, _: usize) {}
    fn scalar(&mut self, _: Kind, start: usize, _: usize) {
        self.value(start);
    }
    fn open(&mut self, _: Kind, start: usize) {
        self.value(start);
    }
    fn close(&mut self, _: usize) {}
}
