//! The flat index of a line that must be cut: one [`Node`] per value, in document order, built
//! by the scanner's visitor [`IndexBuilder`]. The planner and the emitter work on it.

use crate::line::fields::{FieldClass, FieldClasses, key_is};
use crate::line::payload::is_payload;
use crate::line::scan::{Kind, Visitor};

/// One value of the line. Ranges are byte offsets into the line.
#[derive(Clone, Copy, Debug)]
pub struct Node {
    pub kind: Kind,
    /// The value's text, quotes and brackets included.
    pub start: u32,
    pub end: u32,
    /// The member's key, quotes included; empty (`key_start == key_end`) outside objects.
    pub key_start: u32,
    pub key_end: u32,
    /// Index of the first node after this value's subtree (nodes are in document order).
    pub next: u32,
    /// Direct children (members or elements).
    pub children: u32,
    /// The enclosing container (the root is its own parent).
    pub parent: u32,
    pub class: FieldClass,
    /// A string that is a base64 payload (see [`is_base64_payload`]).
    pub payload: bool,
    /// A value inside a snapshot that grows at its end ([`FieldClasses::copy_in`]): a string
    /// of it, cut, keeps its tail only.
    pub tail_only: bool,
}

impl Node {
    /// Bytes of the value's text.
    pub fn text_len(&self) -> usize {
        (self.end - self.start) as usize
    }
    pub fn key_len(&self) -> usize {
        (self.key_end - self.key_start) as usize
    }
    pub fn has_key(&self) -> bool {
        self.key_end > self.key_start
    }
}

/// Builds the flat index of a line that must be cut.
pub struct IndexBuilder<'a> {
    pub nodes: &'a mut Vec<Node>,
    line: &'a [u8],
    fields: &'a FieldClasses,
    /// Whether to look for base64 payloads.
    payloads: bool,
    /// The open containers (a scratch stack the caller keeps, so a line allocates nothing).
    open: &'a mut Vec<u32>,
    key: (u32, u32),
    /// The raw content of the root's `type` string, once read, when a copy rule names that
    /// type ([`FieldClasses::has_copies`]; for [`FieldClasses::copy_in`]); empty otherwise.
    kind: (u32, u32),
    /// The root's `type` was read.
    kind_read: bool,
    /// Set when the line has more than [`MAX_NODES`] values: the index stops growing and the
    /// line is reduced (`reduce.rs`) before it is planned.
    pub overflow: bool,
    /// The deepest nesting of containers seen.
    pub depth: usize,
    /// Containers open past the overflow: counted, not stacked (4 bytes a level of a line of
    /// `[[[[` held 32 MiB).
    deeper: usize,
}

/// The most values indexed in one line. The index and the plan take about 86 bytes a value
/// (heaptrack), so this caps a line's planning memory near 21 MiB, within the 32 MiB the
/// whole process keeps to (it was 1.5 million: a 3 MB line of small values peaked at 128 MiB).
/// A line with more is reduced first, as a line past 8 MiB is. The reduction keeps at most as
/// many ([`crate::reduce::MAX_VALUES`]).
pub const MAX_NODES: usize = 250_000;

impl<'a> IndexBuilder<'a> {
    pub fn new(
        nodes: &'a mut Vec<Node>,
        open: &'a mut Vec<u32>,
        line: &'a [u8],
        fields: &'a FieldClasses,
        payloads: bool,
    ) -> Self {
        nodes.clear();
        open.clear();
        IndexBuilder {
            nodes,
            line,
            fields,
            payloads,
            open,
            key: (0, 0),
            kind: (0, 0),
            kind_read: false,
            overflow: false,
            depth: 0,
            deeper: 0,
        }
    }

    fn push(&mut self, kind: Kind, start: usize, end: usize) -> u32 {
        let (key_start, key_end) = std::mem::take(&mut self.key);
        let idx = self.nodes.len() as u32;
        let (parent, parent_class, parent_tail) = match self.open.last() {
            Some(&p) => {
                let pn = &mut self.nodes[p as usize];
                pn.children += 1;
                (p, pn.class, pn.tail_only)
            }
            None => (idx, FieldClass::Normal, false),
        };
        let mut tail_only = parent_tail;
        let own = if key_end > key_start + 2 {
            let key = &self.line[key_start as usize + 1..key_end as usize - 1];
            let by_name = self.fields.class_of(key);
            let copy = (self.kind.1 > self.kind.0)
                .then(|| {
                    let kind = &self.line[self.kind.0 as usize..self.kind.1 as usize];
                    self.fields.copy_in(kind, key)
                })
                .flatten();
            // A name kept whole stays kept; a copy is a copy whatever its name.
            match (by_name, copy) {
                (Some(FieldClass::Preserved), _) | (_, None) => by_name,
                (_, Some((class, snapshot))) => {
                    tail_only |= snapshot;
                    Some(class)
                }
            }
        } else {
            None
        };
        // The root's `type`, for the members after it.
        if kind == Kind::String
            && self.open.len() == 1
            && !self.kind_read
            && key_end > key_start + 2
            && key_is(
                &self.line[key_start as usize + 1..key_end as usize - 1],
                b"type",
            )
        {
            self.kind_read = true;
            // Most lines' types have no copy rule: their members are not looked up again.
            if self.fields.has_copies(&self.line[start + 1..end - 1]) {
                self.kind = (start as u32 + 1, end as u32 - 1);
            }
        }
        let class = FieldClass::inherit(own, parent_class);
        let payload = self.payloads
            && kind == Kind::String
            && is_payload(
                &self.line[key_start as usize..key_end as usize],
                &self.line[start + 1..end - 1],
            );
        self.nodes.push(Node {
            kind,
            start: start as u32,
            end: end as u32,
            key_start,
            key_end,
            next: idx + 1,
            children: 0,
            parent,
            class,
            payload,
            tail_only,
        });
        idx
    }
}

impl Visitor for IndexBuilder<'_> {
    fn key(&mut self, start: usize, end: usize) {
        self.key = (start as u32, end as u32);
    }
    fn scalar(&mut self, kind: Kind, start: usize, end: usize) {
        self.overflow |= self.nodes.len() >= MAX_NODES;
        if !self.overflow {
            self.push(kind, start, end);
        }
    }
    fn open(&mut self, kind: Kind, start: usize) {
        self.overflow |= self.nodes.len() >= MAX_NODES;
        if self.overflow {
            self.deeper += 1;
            self.depth = self.depth.max(self.open.len() + self.deeper);
            return;
        }
        let idx = self.push(kind, start, start);
        self.open.push(idx);
        self.depth = self.depth.max(self.open.len());
    }
    fn close(&mut self, end: usize) {
        if self.deeper > 0 {
            self.deeper -= 1;
            return;
        }
        if let Some(idx) = self.open.pop() {
            let next = self.nodes.len() as u32;
            let node = &mut self.nodes[idx as usize];
            node.end = end as u32;
            node.next = next;
        }
    }
}
