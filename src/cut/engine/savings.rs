//! `--stats`' savings by field: what each cut value of a line gave up, added to the field it is
//! in.

use super::LineEngine;
use crate::cut::costs::Sizes;
use crate::cut::plan::{DESCRIPTOR, State, WHOLE};
use crate::line::scan::Kind;

impl LineEngine {
    /// Adds what each cut value gave up (in input bytes) to the field it is in: the nearest
    /// enclosing key.
    #[cold]
    pub(super) fn count_savings(&mut self, json: &[u8]) {
        let nodes = &self.nodes;
        let sz = Sizes {
            nodes,
            elided: &self.elided,
        };
        let (state, kept) = (&self.planner.state, &self.planner.kept);
        let mut i = 0;
        while i < nodes.len() {
            let nd = &nodes[i];
            let saved = match (state[i], nd.kind) {
                (State::Dropped | State::Collapsed, _) => sz.text_len(i),
                (_, Kind::String) if kept[i] == DESCRIPTOR => sz.text_len(i) - 2,
                (_, Kind::String) if kept[i] != WHOLE => sz.text_len(i) - 2 - kept[i] as usize,
                _ => 0,
            };
            if saved > 0 {
                let mut k = i;
                while !nodes[k].has_key() && nodes[k].parent as usize != k {
                    k = nodes[k].parent as usize;
                }
                let key = &json[nodes[k].key_start as usize..nodes[k].key_end as usize];
                let name = key
                    .get(1..key.len().saturating_sub(1))
                    .unwrap_or(b"(top level)");
                let name = if name.is_empty() {
                    &b"(top level)"[..]
                } else {
                    name
                };
                // A key is written to --stats-json: redacted as the log is.
                let mut redacted = Vec::new();
                let name = match &self.redactor {
                    Some(r) if r.redact(name, &mut redacted) => &redacted[..],
                    _ => name,
                };
                *self.saved_by_field.entry(name.to_vec()).or_default() += saved as u64;
            }
            i = if matches!(state[i], State::Dropped | State::Collapsed) {
                nd.next as usize
            } else {
                i + 1
            };
        }
    }
}
