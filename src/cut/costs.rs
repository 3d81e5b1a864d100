//! The cost model of a cut line, shared by the planner (`plan.rs`) and the emitter (`emit.rs`):
//! the output bytes of a cut string, a marker and a payload's descriptor, the forms of the
//! markers (an object's marker key, an array's marker element in the form of its first
//! element), and the input sizes of the indexed values. What the planner prices here is what
//! the emitter writes.

use crate::line::fields::FieldClass;
use crate::line::index::Node;
use crate::line::marker::{
    MarkerTemplate, Unit, container_marker_len, digits, payload_descriptor_len, push_usize,
};
use crate::line::scan::Kind;
use crate::reduce::Elided;

/// Strings this short are never cut: an id or a path is worth more whole than its marker.
pub const MIN_CUT_LEN: usize = 64;

/// The key of an object's marker member; when the object has a key of that name already, the
/// first of `_truncated_1`, `_truncated_2`, … it does not have (see [`marker_key_suffix`]).
pub const OBJECT_MARKER_KEY: &str = "_truncated";
/// `{"type":"text","text":""}`: the marker element of an array of typed blocks.
const TYPED_MARKER_OVERHEAD: usize = 25;
/// `{"_truncated":""}`: the marker element of an array of other objects.
const OBJECT_ELEMENT_OVERHEAD: usize = 17;
/// The quotes, colon and quotes of `"<key>":""`.
const OBJECT_MARKER_OVERHEAD: usize = 5;

/// How an array's marker element reads: like the array's first element, so that a reader
/// typed for the elements reads it too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkerForm {
    /// `"[TRUNCATED: n → k items]"`: elements that are not objects.
    Text,
    /// `{"type":"text","text":"[TRUNCATED: n → k items]"}`: typed blocks (`type` first).
    Block,
    /// `{"_truncated":"[TRUNCATED: n → k items]"}`: other objects.
    Object,
}

/// The cost model shared by the planner and the emitter.
pub struct Costs<'a> {
    pub marker: &'a MarkerTemplate,
}

impl Costs<'_> {
    /// Output bytes of a string whose content (between the quotes) is `len` bytes, cut to keep
    /// `kept` of them. Keeping it whole wins whenever it is no longer than the cut form, and
    /// always for strings of at most [`MIN_CUT_LEN`] bytes.
    #[inline]
    pub fn string(&self, len: usize, kept: usize) -> usize {
        if kept >= len || len <= MIN_CUT_LEN {
            return len + 2;
        }
        (len + 2).min(2 + kept + self.marker.len(len, kept))
    }

    /// A value of `len` bytes replaced by a marker string.
    #[inline]
    pub fn collapsed(&self, len: usize) -> usize {
        2 + self.marker.len(len, 0)
    }

    pub fn array_marker(&self, n: usize, kept: usize, form: MarkerForm) -> usize {
        let overhead = match form {
            MarkerForm::Text => 2,
            MarkerForm::Block => TYPED_MARKER_OVERHEAD,
            MarkerForm::Object => OBJECT_ELEMENT_OVERHEAD,
        };
        overhead + container_marker_len(n, kept, Unit::Items)
    }

    /// The marker member of an object whose marker key has suffix `suffix` (0: none).
    pub fn object_marker(&self, n: usize, kept: usize, suffix: usize) -> usize {
        OBJECT_MARKER_OVERHEAD + marker_key_len(suffix) + container_marker_len(n, kept, Unit::Keys)
    }
}

/// Bytes of the marker key `_truncated` or `_truncated_<suffix>`.
pub fn marker_key_len(suffix: usize) -> usize {
    OBJECT_MARKER_KEY.len() + if suffix == 0 { 0 } else { 1 + digits(suffix) }
}

/// Writes the marker key (without quotes).
pub fn push_marker_key(suffix: usize, out: &mut Vec<u8>) {
    out.extend_from_slice(OBJECT_MARKER_KEY.as_bytes());
    if suffix > 0 {
        out.push(b'_');
        push_usize(out, suffix);
    }
}

/// The suffix of object `i`'s marker key: 0 (`_truncated`) unless the object has a key that
/// spells `_truncated` already, else the least `k` for which it has no key `_truncated_<k>`.
pub fn marker_key_suffix(nodes: &[Node], line: &[u8], i: usize) -> usize {
    let has = |name: &[u8]| {
        let mut c = i + 1;
        while c < nodes[i].next as usize {
            let m = &nodes[c];
            if crate::line::fields::key_is(
                &line[m.key_start as usize + 1..m.key_end as usize - 1],
                name,
            ) {
                return true;
            }
            c = m.next as usize;
        }
        false
    };
    if !has(OBJECT_MARKER_KEY.as_bytes()) {
        return 0;
    }
    let mut name = Vec::with_capacity(32);
    (1..)
        .find(|&k| {
            name.clear();
            push_marker_key(k, &mut name);
            !has(&name)
        })
        .unwrap_or(0)
}

/// The form of array `i`'s marker element, from its first element.
pub fn marker_form(nodes: &[Node], line: &[u8], i: usize) -> MarkerForm {
    match nodes.get(i + 1).filter(|_| nodes[i].children > 0) {
        Some(first) if first.kind == Kind::Object => {
            if is_typed_array(nodes, line, i) {
                MarkerForm::Block
            } else {
                MarkerForm::Object
            }
        }
        _ => MarkerForm::Text,
    }
}

/// True when an array's first element is an object whose first key is `"type"`: its marker
/// element is then a text block, so consumers that dispatch on `type` read it as text.
pub fn is_typed_array(nodes: &[Node], line: &[u8], i: usize) -> bool {
    let Some(first) = nodes.get(i + 1).filter(|_| nodes[i].children > 0) else {
        return false;
    };
    first.kind == Kind::Object
        && first.children > 0
        && nodes.get(i + 2).is_some_and(|m| {
            crate::line::fields::key_is(
                &line[m.key_start as usize + 1..m.key_end as usize - 1],
                b"type",
            )
        })
}

/// True when the elements are records that carry ids: objects with a preserved member other
/// than `type` (`tool_use_id`, `call_id`, `id`, `status`, …), looked for in the first element.
/// With `named`, only a member named as an id counts: `id`, or a name ending in `_id`, `Id` or
/// `ID` (`tool_use_id`, `callID`).
pub(super) fn has_ids(nodes: &[Node], line: &[u8], children: &[u32], named: bool) -> bool {
    let Some(&first) = children.first() else {
        return false;
    };
    let rec = &nodes[first as usize];
    if rec.kind != Kind::Object {
        return false;
    }
    let mut c = first as usize + 1;
    while c < rec.next as usize {
        let m = &nodes[c];
        let key = &line[m.key_start as usize + 1..m.key_end as usize - 1];
        if m.class == FieldClass::Preserved
            && !crate::line::fields::key_is(key, b"type")
            && (!named || is_id_name(key))
        {
            return true;
        }
        c = m.next as usize;
    }
    false
}

/// Whether a key's text (without its quotes) names an id: `id`, or a name ending in `_id`, `Id`
/// or `ID` (`tool_use_id`, `callID`), or `uuid` (`parentUuid`).
/// A key spelled with escapes (`\u0069d`) is read first.
fn is_id_name(k: &[u8]) -> bool {
    if k.contains(&b'\\') {
        return is_escaped_id_name(k);
    }
    spells_id_name(k)
}

fn spells_id_name(k: &[u8]) -> bool {
    k == b"id"
        || k == b"uuid"
        || [&b"_id"[..], b"Id", b"ID", b"Uuid"]
            .iter()
            .any(|end| k.ends_with(end))
}

#[cold]
fn is_escaped_id_name(k: &[u8]) -> bool {
    let mut text = Vec::with_capacity(k.len());
    crate::line::strings::unescape_into(k, &mut text);
    spells_id_name(&text)
}

/// Whether a member's key, quotes included, names an id (see [`is_id_name`]).
pub fn named_as_id(key: &[u8]) -> bool {
    key.len() >= 2 && is_id_name(&key[1..key.len() - 1])
}

/// The media type of a payload: its own, for a `data:` URL, or the one next to it
/// (`{"media_type":"image/png","data":"…"}`, MCP's `{"mimeType":…}`), when that is a short
/// plain string.
pub fn media_type_of<'l>(nodes: &[Node], line: &'l [u8], i: usize) -> Option<&'l [u8]> {
    let own = &line[nodes[i].start as usize + 1..nodes[i].end as usize - 1];
    if let Some(media) = crate::line::payload::data_url_media(own) {
        return Some(media);
    }
    let parent = nodes[i].parent as usize;
    if parent == i || nodes[parent].kind != Kind::Object {
        return None;
    }
    let mut c = parent + 1;
    while c < nodes[parent].next as usize {
        let nd = &nodes[c];
        let key = &line[nd.key_start as usize..nd.key_end as usize];
        if nd.kind == Kind::String
            && matches!(key, b"\"media_type\"" | b"\"mimeType\"" | b"\"mime_type\"")
        {
            let m = &line[nd.start as usize + 1..nd.end as usize - 1];
            return (m.len() <= 100 && !m.contains(&b'\\')).then_some(m);
        }
        c = nd.next as usize;
    }
    None
}

/// Output bytes of payload `i` as its descriptor, quotes included.
pub fn descriptor_cost(sz: Sizes, line: &[u8], i: usize) -> usize {
    2 + payload_descriptor_len(media_type_of(sz.nodes, line, i), sz.text_len(i) - 2)
}

/// The sizes of the indexed values as they were in the input: the index's own, except where a
/// streaming reduction left something out. Markers always count input sizes.
#[derive(Clone, Copy)]
pub struct Sizes<'a> {
    pub nodes: &'a [Node],
    /// One per node, or empty for a line indexed whole.
    pub elided: &'a [Elided],
}

impl Sizes<'_> {
    /// Bytes of value `i`'s text in the input.
    #[inline]
    pub fn text_len(&self, i: usize) -> usize {
        match self.elided.get(i) {
            Some(e) if e.text_len > 0 => e.text_len as usize,
            _ => self.nodes[i].text_len(),
        }
    }

    /// Children of container `i` that the reduction dropped.
    #[inline]
    pub fn dropped(&self, i: usize) -> usize {
        self.elided.get(i).map_or(0, |e| e.children as usize)
    }

    /// Children of container `i` in the input.
    #[inline]
    pub fn children(&self, i: usize) -> usize {
        self.nodes[i].children as usize + self.dropped(i)
    }
}
