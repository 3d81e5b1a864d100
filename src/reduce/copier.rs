//! The compact copy of a container read in one go (`whole.rs`): the scanner's visitor that copies
//! its tokens without the whitespace between them and notes the containers whose copy is
//! shorter than their input ([`Copier`]), the visitor that only counts values and depth for a
//! container copied as read ([`Counter`]), and the buffers both keep from one container to the
//! next ([`Scratch`]).

use super::*;

/// Buffers kept from one container to the next.
#[derive(Default)]
pub(super) struct Scratch {
    /// The scanner's stack of open containers.
    pub(super) stack: Vec<u8>,
    /// The containers open in the one being read: where each starts in the copy and in the
    /// input.
    pub(super) open: Vec<(usize, usize)>,
    /// The compact copy, once a gap with whitespace is met (before that, the copy is the
    /// input's bytes and is taken from there).
    pub(super) copy: Vec<u8>,
    /// Containers whose copy is shorter than their input (whitespace left out), by their
    /// offset in the copy.
    pub(super) elided: Vec<(usize, Elided)>,
    /// Whether the last container read was compact already (then `copy` is empty).
    pub(super) compact: bool,
    /// The last [`ENDS`] elements of a run read in one go ([`Reducer::scalar_run`],
    /// [`Reducer::container_run`]): where each starts and ends in the piece, at the index of
    /// its number in the run modulo `ENDS`.
    pub(super) run: Vec<(usize, usize)>,
    /// The values of each container in `run` (a scalar is one value: not noted).
    pub(super) run_values: Vec<usize>,
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

    /// Past [`super::whole::MAX_VALUES_WHOLE`] values the read is refused (`Reducer::read_whole`):
    /// nothing more is copied or stacked, which would only grow memory (16 bytes a level of an
    /// 8 MiB `[[[[`). The copy is then incomplete, and no caller takes it.
    #[inline(always)]
    fn refused(&self) -> bool {
        self.values > super::whole::MAX_VALUES_WHOLE
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
        if !self.refused() {
            self.token(start, end);
        }
    }
    #[inline(always)]
    fn scalar(&mut self, _: Kind, start: usize, end: usize) {
        self.values += 1;
        if !self.refused() {
            self.token(start, end);
        }
    }
    #[inline(always)]
    fn open(&mut self, _: Kind, start: usize) {
        self.values += 1;
        if self.refused() {
            return;
        }
        self.token(start, start + 1);
        let at = self.copied() - 1;
        self.open.push((at, start));
        self.depth = self.depth.max(self.open.len());
    }
    #[inline(always)]
    fn close(&mut self, end: usize) {
        if self.refused() {
            return;
        }
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

/// The visitor for a container copied as read: counts its values and its depth.
#[derive(Default)]
pub(super) struct Counter {
    pub(super) values: usize,
    pub(super) open: usize,
    pub(super) depth: usize,
}

impl scan::Visitor for Counter {
    #[inline(always)]
    fn key(&mut self, _: usize, _: usize) {}
    #[inline(always)]
    fn scalar(&mut self, _: Kind, _: usize, _: usize) {
        self.values += 1;
    }
    #[inline(always)]
    fn open(&mut self, _: Kind, _: usize) {
        self.values += 1;
        self.open += 1;
        self.depth = self.depth.max(self.open);
    }
    #[inline(always)]
    fn close(&mut self, _: usize) {
        self.open -= 1;
    }
}

/// A container read by the scanner: where it ends, its values and its depth.
pub(super) type Read = Result<(usize, usize, usize), scan::Invalid>;

impl Scratch {
    /// Scans the container at the start of `s`, making its compact copy.
    pub(super) fn compact(&mut self, s: &[u8]) -> Read {
        self.copy.clear();
        self.open.clear();
        self.elided.clear();
        let mut copier = Copier {
            s,
            last: 0,
            compact: true,
            copy: &mut self.copy,
            open: &mut self.open,
            elided: &mut self.elided,
            values: 0,
            depth: 0,
        };
        let end = scan::first_value(s, &mut copier, &mut self.stack)?;
        self.compact = copier.compact;
        Ok((end, copier.values, copier.depth))
    }

    /// Appends the copy [`Scratch::compact`] made of `container` to `out`, and what its
    /// containers left out to `elided`.
    pub(super) fn append_to(
        &self,
        container: &[u8],
        out: &mut Vec<u8>,
        elided: &mut Vec<(usize, Elided)>,
    ) {
        let base = out.len();
        if self.compact {
            out.extend_from_slice(container);
        } else {
            out.extend_from_slice(&self.copy);
        }
        elided.extend(self.elided.iter().map(|&(at, e)| (base + at, e)));
    }
}
