//! Planning the cuts of one over-budget line on its index.
//!
//! Two passes, neither recursive:
//!
//! 1. **Structure, top down.** Every value has four costs in output bytes: `full` (kept whole),
//!    `floor` (a long string reduced to its marker, a cut-last one to a head and its marker; an
//!    object keeping its short ids, numbers, usage and container members at their floors, or
//!    at worst only its marker member; an array keeping its records at their floors, or only
//!    its marker element), `bare` (its least form: an object with every member in its least
//!    form, so its key set, when that takes at most half the budget; an array as its marker)
//!    and `pref` (what it would cost if every long string in it kept a fair share, 1/8 of the
//!    budget). A container never becomes a string: it keeps its JSON type (the type rule; only
//!    containers nested deeper than [`MAX_LOG_DEPTH`] become a marker string). Objects of
//!    numbers (usage, costs) and preserved objects with nothing to cut are kept whole or left
//!    out. The root gets the whole budget; a container whose `pref` does not fit hands its
//!    budget down to its children by water-filling between their floors and prefs. An array
//!    that cannot give each element its share keeps elements from both ends and puts one
//!    marker element, in the form of its first element, where the middle was (records with
//!    ids in their least forms, when that keeps more of them). An object whose members' floors
//!    do not all fit keeps every member in its least form first (its key set), by rank while
//!    they fit (ids and short preserved values, usage whole, short values and containers, other
//!    preserved members, the rest), then raises them to their floors: cut-last strings (a
//!    head), objects, arrays (`keep_members`; docs/cut-policy.md gives the order in which all
//!    this gives way).
//! 2. **Strings, globally.** With the structure fixed, every kept string starts at its floor and
//!    the strings are raised class by class — preserved, cut-last, normal, cut-first — each
//!    class to the highest common level (water-filling) that still fits. A class that cannot be
//!    kept whole leaves the classes below it at their floors: cut-first fields give their bytes
//!    first.
//!
//! Base64 payloads (image data, signatures: see `payload::is_base64_payload`) come before both:
//! in a planned line each is replaced by a short descriptor that keeps its media type and size.
//!
//! The costs (`costs.rs`) are exact for the emitter in `emit.rs`; the engine still checks the emitted length
//! and falls back to a minimal record should the two ever disagree.

use crate::cut::costs::{
    Costs, MIN_CUT_LEN, MarkerForm, Sizes, descriptor_cost, has_ids, marker_form, marker_key_suffix,
};
use crate::line::fields::FieldClass;
use crate::line::index::Node;
use crate::line::scan::Kind;

mod members;

/// What becomes of a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Kept; a container keeps all its children.
    Keep,
    /// A container that dropped children (`kept` says how many remain).
    Reduced,
    /// Replaced by a marker string: a container past the depth limit, or a scalar longer than
    /// [`MIN_CUT_LEN`] with no room.
    Collapsed,
    /// Left out; its container shows a marker instead.
    Dropped,
}

/// The deepest nesting of containers a log line has: a container nested deeper becomes a
/// marker string, so that readers with default depth limits (serde_json 128, jq 256, Python's
/// recursion limit near 1000) read every log line.
pub const MAX_LOG_DEPTH: usize = 64;

/// `kept` value of a string kept whole.
pub const WHOLE: u32 = u32::MAX;
/// `kept` value of a base64 payload replaced by its descriptor.
pub const DESCRIPTOR: u32 = u32::MAX - 1;

/// A value that holds no string: a number, a boolean, null, or a container of such values
/// (usage, costs, timings). An object keeps such members before any other but the preserved
/// ones.
const NUMBERS_ONLY: u8 = 1;
/// A value with nothing to cut: no string longer than [`MIN_CUT_LEN`] in it. Such a container of
/// at most half the budget that holds only numbers, or is preserved (`usage`), is kept whole
/// or left out, never cut, so a reader finds it with every member it had.
const NO_CUT: u8 = 2;
/// A value kept whole or not at all that an object keeps first, and keeps even in its least
/// form: short numbers, short preserved strings (`type`, ids), usage objects.
const RIGID: u8 = 4;

/// Content bytes a cut-last string (`result`, `text`) keeps at least, head and tail, while its
/// object keeps its members' floors: the head of the agent's answer outlasts the inputs of
/// records.
const LAST_HEAD: usize = MIN_CUT_LEN;

/// Reusable planning state: one slot per node.
#[derive(Default)]
pub struct Planner {
    pub state: Vec<State>,
    /// Containers: children kept. Strings: content bytes kept, or [`WHOLE`].
    pub kept: Vec<u32>,
    /// Containers: an object's marker key suffix, an array's marker form, looked up once per
    /// line in `measure` (the suffix scans the object's keys); see [`Planner::object_suffix`]
    /// and [`Planner::array_form`].
    marks: Vec<u32>,
    full: Vec<usize>,
    floor: Vec<usize>,
    pref: Vec<usize>,
    /// What each value holds, as [`NUMBERS_ONLY`] and [`NO_CUT`] bits.
    solid: Vec<u8>,
    /// Each value's least form (see the module doc): what an object keeps of a member when the
    /// members' floors do not all fit.
    bare: Vec<usize>,
    work: Vec<(u32, usize)>,
    children: Vec<u32>,
    candidates: Vec<u32>,
    members: Vec<(usize, usize)>,
    keep: Vec<bool>,
    depth: Vec<u32>,
}

impl Planner {
    /// Plans `nodes` (the index of `line`) into at most `budget` bytes. Returns false if the
    /// structure could not be made to fit (the caller falls back to a minimal record).
    pub fn plan(&mut self, sz: Sizes, line: &[u8], budget: usize, costs: &Costs) -> bool {
        let nodes = sz.nodes;
        let n = nodes.len();
        self.state.clear();
        self.state.resize(n, State::Keep);
        self.kept.clear();
        self.kept.extend(nodes.iter().map(|nd| match nd.kind {
            Kind::Object | Kind::Array => nd.children,
            _ => WHOLE,
        }));
        self.cap_depth(nodes);
        self.measure(sz, line, budget, costs);
        self.plan_structure(sz, line, budget, costs);
        self.plan_strings(sz, line, budget, costs)
    }

    /// Collapses every container nested deeper than [`MAX_LOG_DEPTH`] (the outermost of each
    /// too-deep run; what is inside goes with it). Nodes come in document order, parents first.
    fn cap_depth(&mut self, nodes: &[Node]) {
        self.depth.clear();
        for (i, nd) in nodes.iter().enumerate() {
            let p = nd.parent as usize;
            let outer = if p == i { 0 } else { self.depth[p] };
            let own = outer + u32::from(matches!(nd.kind, Kind::Object | Kind::Array));
            self.depth.push(own);
            if own as usize == MAX_LOG_DEPTH + 1 && outer as usize == MAX_LOG_DEPTH {
                self.state[i] = State::Collapsed;
            }
        }
    }

    /// Bottom-up costs: children come after their parent, so a reverse sweep sees every child
    /// before its container.
    fn measure(&mut self, sz: Sizes, line: &[u8], budget: usize, costs: &Costs) {
        let nodes = sz.nodes;
        let n = nodes.len();
        for v in [&mut self.full, &mut self.floor, &mut self.pref] {
            v.clear();
            v.resize(n, 0);
        }
        self.solid.clear();
        self.solid.resize(n, 0);
        self.bare.clear();
        self.bare.resize(n, 0);
        self.marks.clear();
        self.marks.resize(n, 0);
        let share = (budget / 8).max(64);
        for i in (0..n).rev() {
            let nd = &nodes[i];
            if self.state[i] == State::Collapsed {
                let cost = costs.collapsed(sz.text_len(i));
                (self.full[i], self.floor[i], self.pref[i]) = (cost, cost, cost);
                self.bare[i] = cost;
                continue;
            }
            match nd.kind {
                Kind::String if nd.payload => {
                    let cost = descriptor_cost(sz, line, i);
                    self.full[i] = cost;
                    self.floor[i] = cost;
                    self.pref[i] = cost;
                    self.bare[i] = cost;
                }
                Kind::String => {
                    let len = sz.text_len(i) - 2;
                    if len <= MIN_CUT_LEN {
                        self.solid[i] = NO_CUT;
                        if nd.class == FieldClass::Preserved {
                            self.solid[i] |= RIGID;
                        }
                    }
                    // A cut-last string (`result`, `text`) keeps a head before records keep their
                    // inputs; its least form, when even that does not fit, is its marker.
                    let least = costs.string(len, 0);
                    let floor = if nd.class == FieldClass::CutLast {
                        costs.string(len, LAST_HEAD)
                    } else {
                        least
                    };
                    self.full[i] = len + 2;
                    self.floor[i] = floor;
                    self.bare[i] = least;
                    self.pref[i] = (len + 2).min(floor.max(share));
                }
                Kind::Scalar => {
                    // A number of at most MIN_CUT_LEN bytes is never cut (nor are `true`,
                    // `false` and `null`): it keeps its type.
                    let len = nd.text_len();
                    self.full[i] = len;
                    self.pref[i] = len;
                    self.floor[i] = if len <= MIN_CUT_LEN {
                        len
                    } else {
                        len.min(costs.collapsed(len))
                    };
                    if len <= MIN_CUT_LEN {
                        self.solid[i] = NUMBERS_ONLY | NO_CUT | RIGID;
                    }
                    self.bare[i] = self.floor[i];
                }
                Kind::Object | Kind::Array => {
                    // The marker's form is looked up once (it scans the members' keys).
                    let total = sz.children(i);
                    let (suffix, form) = if nd.kind == Kind::Object {
                        let suffix = marker_key_suffix(nodes, line, i);
                        self.marks[i] = suffix as u32;
                        (suffix, MarkerForm::Text)
                    } else {
                        let form = marker_form(nodes, line, i);
                        self.marks[i] = form as u32;
                        (0, form)
                    };
                    let marker_cost = |kept: usize| {
                        if nd.kind == Kind::Object {
                            costs.object_marker(total, kept, suffix)
                        } else {
                            costs.array_marker(total, kept, form)
                        }
                    };
                    let mut full = 2 + (nd.children as usize).saturating_sub(1);
                    let mut solid = NUMBERS_ONLY | NO_CUT;
                    if sz.dropped(i) > 0 {
                        // What a reduction dropped is always marked.
                        full += 1 + marker_cost(nd.children as usize);
                        solid = 0;
                    }
                    let mut min = full;
                    let mut pref = full;
                    // Every member in its least form: the key set kept.
                    let mut least_all = full;
                    // The rigid members an object keeps even in its least form.
                    let (mut rigid, mut rigid_bytes) = (0, 0);
                    // The same without the container members.
                    let (mut fixed, mut fixed_bytes) = (0, 0);
                    let mut c = i + 1;
                    while c < nd.next as usize {
                        let key = if nodes[c].has_key() {
                            nodes[c].key_len() + 1
                        } else {
                            0
                        };
                        full += key + self.full[c];
                        min += key + self.floor[c];
                        pref += key + self.pref[c];
                        least_all += key + self.bare[c];
                        solid &= self.solid[c];
                        if self.solid[c] & RIGID != 0 {
                            rigid += 1;
                            rigid_bytes += key + self.full[c] + 1;
                            fixed += 1;
                            fixed_bytes += key + self.full[c] + 1;
                        } else if matches!(nodes[c].kind, Kind::Object | Kind::Array) {
                            // A container member stays in its least form: the key set stays.
                            rigid += 1;
                            rigid_bytes += key + self.floor[c] + 1;
                        }
                        c = nodes[c].next as usize;
                    }
                    self.full[i] = full;
                    self.pref[i] = pref;
                    // Usage and costs are kept whole; any other container at least keeps its
                    // type: its least form holds only its marker (`{"_truncated":"…"}`, `[…]`).
                    self.solid[i] = if full <= budget / 2 { solid } else { 0 };
                    let whole = self.solid[i] & NUMBERS_ONLY != 0
                        || (self.solid[i] & NO_CUT != 0 && nd.class == FieldClass::Preserved);
                    if whole {
                        self.solid[i] |= RIGID;
                    }
                    // The floor: an object keeps its rigid members, its containers at their
                    // floors and its marker; an array of records that carry ids keeps them at
                    // their floors when that is small, else only its marker.
                    let marker_only = 2 + marker_cost(0);
                    // A key set too big for half the budget (deep nesting, wide records) gives
                    // way to the rigid members alone, or else to the marker alone.
                    let rigid_only = 2 + fixed_bytes + marker_cost(fixed);
                    let fallback = if rigid_only <= budget / 2 {
                        rigid_only
                    } else {
                        rigid_only.min(marker_only)
                    };
                    let least = if nd.kind == Kind::Object {
                        let keys = if rigid == sz.children(i) {
                            min
                        } else {
                            2 + rigid_bytes + marker_cost(rigid)
                        };
                        if keys <= budget / 2 {
                            keys
                        } else {
                            keys.min(fallback)
                        }
                    } else if min <= budget / 2 && self.array_has_ids(nodes, line, i) {
                        min
                    } else {
                        marker_only
                    };
                    // The least form (what an object keeps when its members' floors do not
                    // all fit): an object keeps every member in its least form, so its key set
                    // stays, when that takes at most half the budget; an array its marker.
                    let keys_kept = nd.kind == Kind::Object && least_all <= budget / 2;
                    self.floor[i] = if whole {
                        full
                    } else if keys_kept {
                        // Its floor then never leaves a member out either.
                        min.min(least.max(least_all))
                    } else {
                        min.min(least)
                    };
                    self.bare[i] = if whole {
                        full
                    } else if keys_kept {
                        least_all
                    } else if nd.kind == Kind::Object {
                        self.floor[i].min(fallback)
                    } else {
                        self.floor[i].min(marker_only)
                    };
                }
            }
        }
    }

    /// The suffix of object `i`'s marker key (see [`marker_key_suffix`]).
    #[inline]
    pub fn object_suffix(&self, i: usize) -> usize {
        self.marks[i] as usize
    }

    /// The form of array `i`'s marker element (see [`marker_form`]).
    #[inline]
    pub fn array_form(&self, i: usize) -> MarkerForm {
        match self.marks[i] {
            0 => MarkerForm::Text,
            1 => MarkerForm::Block,
            _ => MarkerForm::Object,
        }
    }

    /// The marker of container `i` when it keeps `kept` of its children.
    fn marker_cost(&self, sz: Sizes, i: usize, kept: usize, costs: &Costs) -> usize {
        let (nodes, n) = (sz.nodes, sz.children(i));
        if nodes[i].kind == Kind::Object {
            costs.object_marker(n, kept, self.object_suffix(i))
        } else {
            costs.array_marker(n, kept, self.array_form(i))
        }
    }

    /// Whether array `i`'s elements are records that carry ids (see [`has_ids`]).
    fn array_has_ids(&mut self, nodes: &[Node], line: &[u8], i: usize) -> bool {
        let mut children = std::mem::take(&mut self.children);
        children.clear();
        if let Some(first) = (nodes[i].children > 0).then_some(i as u32 + 1) {
            children.push(first);
        }
        let ids = has_ids(nodes, line, &children, false);
        self.children = children;
        ids
    }

    fn plan_structure(&mut self, sz: Sizes, line: &[u8], budget: usize, costs: &Costs) {
        let nodes = sz.nodes;
        self.work.clear();
        self.work.push((0, budget));
        while let Some((i, b)) = self.work.pop() {
            let i = i as usize;
            if self.pref[i] <= b || self.state[i] == State::Collapsed {
                continue;
            }
            match nodes[i].kind {
                Kind::String => {}
                Kind::Scalar => {
                    if nodes[i].text_len() > b {
                        self.state[i] = State::Collapsed;
                    }
                }
                Kind::Object | Kind::Array => self.reduce(sz, line, i, b, costs),
            }
        }
    }

    /// Fits container `i` into `b` bytes: chooses the children it keeps and hands each a budget.
    fn reduce(&mut self, sz: Sizes, line: &[u8], i: usize, b: usize, costs: &Costs) {
        let nodes = sz.nodes;
        let nd = &nodes[i];
        let is_object = nd.kind == Kind::Object;
        self.children.clear();
        let mut c = i + 1;
        while c < nd.next as usize {
            self.children.push(c as u32);
            c = nodes[c].next as usize;
        }
        let n = self.children.len();
        // Children a reduction dropped: then there is always a marker.
        let (total, forced) = (sz.children(i), sz.dropped(i) > 0);
        // Every entry pays its key, its colon and one comma; one comma too many is paid back.
        let room = (b + 1).saturating_sub(2);
        let entry = |c: u32, cost: usize| {
            let nd = &nodes[c as usize];
            cost + 1 + if nd.has_key() { nd.key_len() + 1 } else { 0 }
        };
        let (form, suffix) = if is_object {
            (MarkerForm::Text, self.object_suffix(i))
        } else {
            (self.array_form(i), 0)
        };
        let marker = |kept: usize| {
            1 + if is_object {
                costs.object_marker(total, kept, suffix)
            } else {
                costs.array_marker(total, kept, form)
            }
        };

        // Which children stay (scratch kept in `self`, so planning allocates nothing).
        let mut keep = std::mem::take(&mut self.keep);
        keep.clear();
        keep.resize(n, false);
        let kept;
        if is_object {
            let all: usize = self
                .children
                .iter()
                .map(|&c| entry(c, self.floor[c as usize]))
                .sum();
            if all + if forced { marker(n) } else { 0 } <= room {
                keep.fill(true);
                kept = n;
            } else {
                kept = self.keep_members(sz, line, room, marker(n), forced, &mut keep);
            }
        } else {
            // Elements from both ends inward, each at its fair share. At their floors (their
            // insides cut first) instead: for records that carry ids, when every record fits so,
            // and for records with a member named as an id (`tool_use_id`) whenever that keeps
            // more of them (their ids stay before a record is left out); and
            // for any array whose fair shares would keep fewer than the first and the last, or
            // leave most of the room empty while elements are dropped.
            let (ph, pt, used) = self.select_ends(&entry, &marker, room, &self.pref, forced);
            let (fh, ft, _) = self.select_ends(&entry, &marker, room, &self.floor, forced);
            let records = (fh + ft == n && has_ids(nodes, line, &self.children, false))
                || (fh + ft > ph + pt && has_ids(nodes, line, &self.children, true));
            // Records that carry ids keep more of themselves in their least forms (their
            // inputs as markers) before one more of them is left out.
            let least = if fh + ft < n && has_ids(nodes, line, &self.children, false) {
                let (bh, bt, _) = self.select_ends(&entry, &marker, room, &self.bare, forced);
                (bh + bt > fh + ft).then_some((bh, bt))
            } else {
                None
            };
            let (h, t) = if let Some((bh, bt)) = least {
                for k in (0..bh).chain(n - bt..n) {
                    let c = self.children[k] as usize;
                    self.floor[c] = self.bare[c];
                }
                (bh, bt)
            } else if records {
                (fh, ft)
            } else if ph + pt >= n.min(2) && (ph + pt == n || 2 * used >= room) {
                (ph, pt)
            } else if fh + ft > ph + pt {
                (fh, ft)
            } else {
                (ph, pt)
            };
            keep[..h].fill(true);
            keep[n - t..].fill(true);
            kept = h + t;
        }

        if kept == 0 {
            // Only the marker is left; the container keeps its type.
            self.state[i] = State::Reduced;
            self.kept[i] = 0;
            for &c in &self.children {
                self.state[c as usize] = State::Dropped;
            }
            self.keep = keep;
            return;
        }
        for (k, &c) in self.children.iter().enumerate() {
            if !keep[k] {
                self.state[c as usize] = State::Dropped;
            }
        }
        if kept < n {
            self.state[i] = State::Reduced;
            self.kept[i] = kept as u32;
        }

        // Water-fill the room left among the kept children, between their floors and prefs.
        let mut fixed = if kept < n || forced { marker(kept) } else { 0 };
        let mut top = 0;
        for (k, &c) in self.children.iter().enumerate() {
            if keep[k] {
                fixed += entry(c, 0);
                top = top.max(self.pref[c as usize]);
            }
        }
        let avail = room.saturating_sub(fixed);
        let (floor, pref, children) = (&self.floor, &self.pref, &self.children);
        let fill = |level: usize| -> usize {
            children
                .iter()
                .enumerate()
                .filter(|&(k, _)| keep[k])
                .map(|(_, &c)| {
                    level.clamp(floor[c as usize], pref[c as usize].max(floor[c as usize]))
                })
                .sum()
        };
        let level = highest_level(top, |l| fill(l) <= avail);
        for (k, &c) in self.children.iter().enumerate() {
            if keep[k] {
                let c = c as usize;
                let b = level.clamp(self.floor[c], self.pref[c].max(self.floor[c]));
                self.work.push((c as u32, b));
            }
        }
        self.keep = keep;
    }

    /// Raises the kept strings, class by class, as far as the budget allows.
    fn plan_strings(&mut self, sz: Sizes, line: &[u8], budget: usize, costs: &Costs) -> bool {
        let nodes = sz.nodes;
        let mut fixed = 0;
        self.candidates.clear();
        let mut i = 0;
        while i < nodes.len() {
            let nd = &nodes[i];
            if self.state[i] == State::Dropped {
                i = nd.next as usize;
                continue;
            }
            if nd.has_key() {
                fixed += nd.key_len() + 1;
            }
            if self.state[i] == State::Collapsed {
                fixed += costs.collapsed(sz.text_len(i));
                i = nd.next as usize;
                continue;
            }
            match nd.kind {
                Kind::String if nd.payload => {
                    // Base64 payloads give up their bytes first of all: a descriptor stands in.
                    fixed += descriptor_cost(sz, line, i);
                    self.kept[i] = DESCRIPTOR;
                }
                Kind::String => self.candidates.push(i as u32),
                Kind::Scalar => fixed += nd.text_len(),
                Kind::Object | Kind::Array => {
                    let kept = self.kept[i] as usize;
                    let n = sz.children(i);
                    let entries = kept + usize::from(kept < n);
                    fixed += 2 + entries.saturating_sub(1);
                    if kept < n {
                        fixed += self.marker_cost(sz, i, kept, costs);
                    }
                }
            }
            i += 1;
        }
        let Some(room) = budget.checked_sub(fixed) else {
            return false;
        };

        let len = |c: u32| sz.text_len(c as usize) - 2;
        let class = |c: u32| nodes[c as usize].class;
        // A cut-last string kept at its floor keeps its head (see `LAST_HEAD`): the structure
        // made room for it. Should the heads not fit after all, every string starts at its
        // marker.
        // (Its floor is above its least form, the marker, only while it keeps a head.)
        let (floor, bare) = (&self.floor, &self.bare);
        let head = |c: u32, heads: bool| {
            let c = c as usize;
            if heads && floor[c] > bare[c] && nodes[c].class == FieldClass::CutLast {
                LAST_HEAD
            } else {
                0
            }
        };
        let least = |heads: bool| -> usize {
            self.candidates
                .iter()
                .map(|&c| costs.string(len(c), head(c, heads)))
                .sum()
        };
        let mut heads = true;
        let mut total = least(true);
        if total > room {
            heads = false;
            total = least(false);
        }
        if total > room {
            return false;
        }
        let mut levels = [0usize; FieldClass::ALL.len()];
        // The content lengths (and least kept bytes) of one class at a time: the search below
        // prices them often.
        let mut members = std::mem::take(&mut self.members);
        for class_now in FieldClass::ALL.into_iter().rev() {
            members.clear();
            let of_class = self.candidates.iter().filter(|&&c| class(c) == class_now);
            members.extend(of_class.map(|&c| (len(c), head(c, heads))));
            let cost_at = |level: usize| {
                members
                    .iter()
                    .map(|&(l, h)| costs.string(l, level.max(h)))
                    .sum::<usize>()
            };
            let others = total - cost_at(0);
            // No cut string fits above `room`, so neither can the level.
            let top = members.iter().map(|&(l, _)| l).max().unwrap_or(0).min(room);
            let level = highest_level(top, |l| others + cost_at(l) <= room);
            levels[class_now as usize] = level;
            total = others + cost_at(level);
            if level < top {
                break;
            }
        }
        self.members = members;
        for &c in &self.candidates {
            let l = len(c);
            let level = levels[class(c) as usize].max(head(c, heads));
            self.kept[c as usize] = if costs.string(l, level) >= l + 2 {
                WHOLE
            } else {
                level as u32
            };
        }
        true
    }
}

/// The highest `level` in `0..=top` for which `fits(level)` holds, given that `fits` only turns
/// from true to false as the level rises; 0 when none fits.
fn highest_level(top: usize, fits: impl Fn(usize) -> bool) -> usize {
    if fits(top) {
        return top;
    }
    let (mut lo, mut hi) = (0, top);
    while lo + 1 < hi {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}
