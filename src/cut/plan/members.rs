//! Which members of an object and which elements of an array stay when a container is
//! reduced (`Planner::reduce`): an object's least forms first, then its floors; an array's
//! elements from both ends.

use super::{NO_CUT, Planner, RIGID};
use crate::cut::costs::{Sizes, named_as_id};
use crate::line::fields::{FieldClass, key_is};
use crate::line::scan::Kind;

impl Planner {
    /// Chooses the members object `i` keeps when their floors do not all fit in `room` (its
    /// children are in `self.children`), and lowers each kept member's floor to what it keeps.
    /// Returns how many it keeps.
    ///
    /// First every member in its least form, so the key set stays, by rank while they fit:
    /// `type` and `subtype`, then ids, then timestamps (and nothing else when not all of these
    /// fit: an object never drops its type, an id or its time while it keeps another member,
    /// whatever their order in the line); the other short preserved values (`cwd`, `version`);
    /// usage and costs, whole; short numbers and strings and containers (as their least forms),
    /// in document order; the other preserved members; the rest. Then, while they fit, the kept members are raised to their
    /// floors: cut-last strings first (the head of `result` or `text`), then objects, then
    /// arrays (records with ids keeping their inputs).
    pub(super) fn keep_members(
        &mut self,
        sz: Sizes,
        line: &[u8],
        room: usize,
        marker: usize,
        forced: bool,
        keep: &mut [bool],
    ) -> usize {
        let nodes = sz.nodes;
        // A member's entry: its cost, its key and colon, one comma (as in `reduce`).
        let entry = |c: u32, cost: usize| {
            let nd = &nodes[c as usize];
            cost + 1 + if nd.has_key() { nd.key_len() + 1 } else { 0 }
        };
        let bare_all: usize = self
            .children
            .iter()
            .map(|&c| entry(c, self.bare[c as usize]))
            .sum();
        let mut followed_dropped = false;
        let mut used = if bare_all + if forced { marker } else { 0 } <= room {
            keep.fill(true);
            bare_all
        } else {
            let mut used = marker;
            for pass in 0..8 {
                for (k, &c) in self.children.iter().enumerate() {
                    let c_ = c as usize;
                    let nd = &nodes[c_];
                    let key = &line[nd.key_start as usize..nd.key_end as usize];
                    let container = matches!(nd.kind, Kind::Object | Kind::Array);
                    let rigid = self.solid[c_] & RIGID != 0;
                    let followed = |names: &[&[u8]]| {
                        let name = key.get(1..key.len().saturating_sub(1)).unwrap_or_default();
                        names.iter().any(|f| key_is(name, f))
                    };
                    let short_preserved = rigid && !container && nd.class == FieldClass::Preserved;
                    // The last to go, of any length (a long one as its least form).
                    let rank = if !container && followed(&[b"type", b"subtype"]) {
                        0
                    } else if !container && named_as_id(key) {
                        1
                    } else if !container && followed(&[b"timestamp"]) {
                        2
                    } else if short_preserved {
                        3
                    } else if rigid && container {
                        4
                    } else if container || self.solid[c_] & NO_CUT != 0 {
                        5
                    } else if nd.class == FieldClass::Preserved {
                        6
                    } else {
                        7
                    };
                    if rank != pass || keep[k] {
                        continue;
                    }
                    let need = entry(c, self.bare[c_]);
                    if used + need <= room {
                        used += need;
                        keep[k] = true;
                    } else if rank <= 2 {
                        followed_dropped = true;
                    }
                }
                // An object never drops its type, an id or its time while it keeps another member.
                if followed_dropped {
                    break;
                }
            }
            used
        };
        for pass in 0..3 {
            for (k, &c) in self.children.iter().enumerate() {
                let c = c as usize;
                if !keep[k] {
                    continue;
                }
                let rank = match nodes[c].kind {
                    Kind::String => 0,
                    Kind::Object => 1,
                    Kind::Array => 2,
                    Kind::Scalar => continue,
                };
                if rank != pass {
                    continue;
                }
                let more = self.floor[c].saturating_sub(self.bare[c]);
                if used + more <= room {
                    used += more;
                } else {
                    self.floor[c] = self.bare[c];
                }
            }
        }
        keep.iter().filter(|&&k| k).count()
    }

    /// Counts of elements kept from the front and the back of an array, taking them alternately
    /// while they fit at their costs in `by` (fair shares, floors or least forms), and the bytes
    /// they take.
    pub(super) fn select_ends(
        &self,
        entry: &impl Fn(u32, usize) -> usize,
        marker: &impl Fn(usize) -> usize,
        room: usize,
        by: &[usize],
        forced: bool,
    ) -> (usize, usize, usize) {
        let n = self.children.len();
        let (mut h, mut t, mut used) = (0, 0, 0);
        while h + t < n {
            let c = if h <= t {
                self.children[h]
            } else {
                self.children[n - 1 - t]
            };
            let need = entry(c, by[c as usize]);
            let after = if h + t + 1 < n || forced {
                marker(h + t + 1)
            } else {
                0
            };
            if used + need + after > room {
                break;
            }
            used += need;
            if h <= t {
                h += 1;
            } else {
                t += 1;
            }
        }
        (h, t, used)
    }
}
