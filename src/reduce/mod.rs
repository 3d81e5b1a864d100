//! Reducing a giant line while it is read, so that no line needs to be held whole.
//!
//! A line that outgrows [`crate::tee::log::STREAM_CAP`] is fed here piece by piece as it arrives.
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
//!
//! By job: `tokens.rs` is the push tokenizer (the grammar a byte at a time, resumable at any
//! piece boundary; a short string without escapes and a number's digits in one go), `whole.rs`
//! reads a small container whole in a piece with the scanner, `utf8.rs` carries a character cut
//! by a piece boundary, `string.rs` keeps a long string's head and tail, this file reduces
//! containers, and `ordinals.rs` renumbers what was left out by value for the planner.

use std::collections::VecDeque;

use crate::line::scan::{self, Kind, Visitor};
use crate::line::strings;

mod copier;
mod ordinals;
mod string;
mod tokens;
mod utf8;
mod whole;

use crate::line::strings::escape_len;
use string::Str;
use tokens::St;

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
/// The most values in a reduced copy: as many as the index takes, so that a reduced copy is
/// always planned.
pub const MAX_VALUES: usize = crate::line::index::MAX_NODES;
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

/// An open container. One is kept for each level of nesting, up to [`MAX_DEPTH`]: 32 bytes,
/// so that a line nested that deep holds 3.2 MB of them (64 bytes each held 6.4 MB, twice with
/// `--stdout-max-line-bytes`, #49).
struct Frame {
    object: bool,
    /// Offsets of the container in the reduced copy (at most [`REDUCED_CAP`] and a piece) and
    /// in the input.
    out_start: u32,
    in_start: u64,
    /// Members or elements seen.
    count: u64,
    /// Arrays: the elements past the first [`ENDS`], which may be dropped from the middle.
    back: Backs,
}

const _: () = assert!(std::mem::size_of::<Frame>() <= 32);

/// An array's elements past its first [`ENDS`] and the count of those dropped, boxed: most
/// frames have neither.
#[derive(Default)]
struct Backs(Option<Box<BackList>>);

#[derive(Default)]
struct BackList {
    back: Vec<Back>,
    /// Elements dropped from the middle.
    dropped: u64,
}

impl std::ops::Deref for Backs {
    type Target = [Back];
    fn deref(&self) -> &[Back] {
        self.0.as_deref().map_or(&[], |l| &l.back)
    }
}

impl std::ops::DerefMut for Backs {
    fn deref_mut(&mut self) -> &mut [Back] {
        self.0.as_deref_mut().map_or(&mut [], |l| &mut l.back)
    }
}

impl Backs {
    fn push(&mut self, b: Back) {
        self.0.get_or_insert_default().back.push(b);
    }

    /// Removes the first `n`.
    fn drop_front(&mut self, n: usize) {
        if let Some(l) = &mut self.0 {
            l.back.drain(..n);
        }
    }

    /// Takes the elements, leaving the count of those dropped.
    fn take(&mut self) -> Vec<Back> {
        self.0
            .as_deref_mut()
            .map(|l| std::mem::take(&mut l.back))
            .unwrap_or_default()
    }

    fn dropped(&self) -> u64 {
        self.0.as_deref().map_or(0, |l| l.dropped)
    }

    fn add_dropped(&mut self, n: u64) {
        if n > 0 {
            self.0.get_or_insert_default().dropped += n;
        }
    }
}

/// An element past the first [`ENDS`] of an array.
#[derive(Clone, Copy)]
struct Back {
    /// Where it starts in the reduced copy.
    at: usize,
    /// The number of values before it.
    values: usize,
    /// Copied as read, whitespace and all: compacted when the array closes, if still there
    /// (`whole.rs`).
    raw: bool,
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
    /// Buffers for containers read in one go (`whole.rs`).
    whole: copier::Scratch,
    /// No container is read in one go before this input offset (after a failed attempt).
    whole_after: u64,
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
            whole: copier::Scratch::default(),
            whole_after: 0,
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
        // The reduced copy is strict JSON by construction; scanning it again only numbers its
        // values. Should it ever fail, the line is logged as an excerpt.
        let Some(elided) = ordinals::renumber(&self.out, &self.elided) else {
            debug_assert!(false, "reduced copy is not JSON");
            return Err(Failure::TooBig);
        };
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

    fn writing(&self) -> bool {
        self.skip.is_none()
    }

    fn put(&mut self, b: u8) {
        if self.writing() {
            self.out.push(b);
        }
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
        if writing && !object {
            self.compact_back();
        }
        let f = self.frames.pop().expect("just seen");
        debug_assert_eq!(f.object, object);
        if writing {
            self.out.push(if object { b'}' } else { b']' });
            let dropped = if object {
                f.count.saturating_sub(MEMBERS as u64)
            } else {
                f.back.dropped()
            };
            let in_len = self.pos - f.in_start + 1;
            let out_start = f.out_start as usize;
            if dropped > 0 || in_len != (self.out.len() - out_start) as u64 {
                let e = Elided {
                    text_len: in_len,
                    children: dropped,
                };
                self.elided.push((out_start, e));
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

    /// Whether the next value is an element past the first [`ENDS`] of the innermost array.
    fn in_back(&self) -> bool {
        self.frames
            .last()
            .is_some_and(|f| !f.object && f.count >= ENDS as u64)
    }

    /// Where the notes of values at offset `from` of the copy or later start in `elided`: the
    /// values inside the elements of an open array come last there.
    fn elided_from(&self, from: usize) -> usize {
        let mut first = self.elided.len();
        while first > 0 && self.elided[first - 1].0 >= from {
            first -= 1;
        }
        first
    }

    /// Removes the first `n` elements past the front ones of the innermost array from the copy
    /// (all of them, and the comma before them, when `n` is their number).
    fn drop_elements(&mut self, n: usize) {
        let f = self.frames.last_mut().expect("an open array");
        let (from, to, values_to) = match f.back.get(n) {
            Some(next) => (f.back[0].at, next.at, next.values),
            None => (f.back[0].at - 1, self.out.len(), self.values),
        };
        let (gone, values_gone) = (to - from, values_to - f.back[0].values);
        self.out.drain(from..to);
        self.values -= values_gone;
        f.back.drop_front(n);
        for b in f.back.iter_mut() {
            b.at -= gone;
            b.values -= values_gone;
        }
        f.back.add_dropped(n as u64);
        let first = self.elided_from(from);
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
