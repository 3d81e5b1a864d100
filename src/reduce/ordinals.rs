//! Renumbering: what the reduction left out, by value offset in the copy, becomes the same by
//! value number in document order (the index's node numbers).

use super::*;

/// What `elided` (by value offset in `doc`) says, by value number in document order; `None`
/// if `doc` does not scan or an offset is not a value's.
pub(super) fn renumber(doc: &[u8], elided: &[(usize, Elided)]) -> Option<Vec<(u32, Elided)>> {
    let mut order = Ordinals {
        elided,
        next: 0,
        ordinal: 0,
        found: Vec::with_capacity(elided.len()),
    };
    let mut stack = Vec::new();
    scan::scan(doc, &mut order, &mut stack).ok()?;
    (order.found.len() == elided.len()).then_some(order.found)
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
