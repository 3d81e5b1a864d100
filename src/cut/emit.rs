//! Writing the planned cut of a JSON line (the record of a line that is not JSON is
//! `record.rs`'s).
//!
//! Cut lines are written compactly by copying byte ranges of the original line (keys, numbers,
//! string heads and tails stay exactly as written) and splicing markers in between.

use crate::cut::costs::{MarkerForm, Sizes, media_type_of, push_marker_key};
use crate::cut::plan::{DESCRIPTOR, Planner, State, WHOLE};
use crate::line::marker::{
    MarkerTemplate, Unit, render_container_marker, render_payload_descriptor,
};
use crate::line::scan::Kind;
use crate::line::strings::{
    boundary_at_or_after, boundary_at_or_before, escape_len_in, is_escape_start,
};

/// Settings the emitter needs.
pub struct EmitStyle<'a> {
    pub marker: &'a MarkerTemplate,
    /// Share of a cut string's kept bytes taken from its head.
    pub head_ratio: f64,
}

/// An open container while emitting: (node, entries written, marker written).
pub type Open = (usize, usize, bool);

/// Writes the planned line (no newline). `open` is scratch space for the open containers.
pub fn emit_plan(
    line: &[u8],
    sz: Sizes,
    plan: &Planner,
    style: &EmitStyle,
    open: &mut Vec<Open>,
    out: &mut Vec<u8>,
) {
    let (nodes, state, kept) = (sz.nodes, &plan.state, &plan.kept);
    open.clear();
    // Writes the marker element of array `a`, which keeps `kept` of its elements, in the form
    // of its first element (see `costs::MarkerForm`).
    let array_marker = |a: usize, kept: usize, out: &mut Vec<u8>| {
        let form = plan.array_form(a);
        out.extend_from_slice(match form {
            MarkerForm::Text => b"\"",
            MarkerForm::Block => b"{\"type\":\"text\",\"text\":\"",
            MarkerForm::Object => b"{\"_truncated\":\"",
        });
        render_container_marker(sz.children(a), kept, Unit::Items, out);
        out.extend_from_slice(if form == MarkerForm::Text {
            b"\""
        } else {
            b"\"}"
        });
    };
    let mut i = 0;
    loop {
        while let Some(&(c, written, marker_done)) = open.last() {
            if i < nodes[c].next as usize {
                break;
            }
            let nd = &nodes[c];
            let total = sz.children(c);
            if nd.kind == Kind::Object {
                if (kept[c] as usize) < total && !marker_done {
                    if written > 0 {
                        out.push(b',');
                    }
                    out.push(b'"');
                    push_marker_key(plan.object_suffix(c), out);
                    out.extend_from_slice(b"\":\"");
                    render_container_marker(total, kept[c] as usize, Unit::Keys, out);
                    out.push(b'"');
                }
                out.push(b'}');
            } else {
                if (kept[c] as usize) < total && !marker_done {
                    if written > 0 {
                        out.push(b',');
                    }
                    array_marker(c, kept[c] as usize, out);
                }
                out.push(b']');
            }
            open.pop();
        }
        if i >= nodes.len() {
            break;
        }
        let nd = &nodes[i];
        if let Some(top) = open.last_mut() {
            // The marker element of an array stands where its first dropped element was, or,
            // when only a reduction dropped elements, in the middle where they were.
            let parent = &nodes[top.0];
            let here = state[i] == State::Dropped
                || (sz.dropped(top.0) > 0 && top.1 == parent.children as usize / 2);
            if parent.kind == Kind::Array && here && !top.2 {
                if top.1 > 0 {
                    out.push(b',');
                }
                top.1 += 1;
                top.2 = true;
                array_marker(top.0, kept[top.0] as usize, out);
            }
        }
        if state[i] == State::Dropped {
            i = nd.next as usize;
            continue;
        }
        if let Some(top) = open.last_mut() {
            if top.1 > 0 {
                out.push(b',');
            }
            top.1 += 1;
        }
        if nd.has_key() {
            out.extend_from_slice(&line[nd.key_start as usize..nd.key_end as usize]);
            out.push(b':');
        }
        if state[i] == State::Collapsed {
            out.push(b'"');
            style.marker.render(sz.text_len(i), 0, out);
            out.push(b'"');
            i = nd.next as usize;
            continue;
        }
        match nd.kind {
            Kind::Scalar => out.extend_from_slice(&line[nd.start as usize..nd.end as usize]),
            Kind::String => {
                let content = &line[nd.start as usize + 1..nd.end as usize - 1];
                out.push(b'"');
                let len = sz.text_len(i) - 2;
                if kept[i] == WHOLE {
                    out.extend_from_slice(content);
                } else if kept[i] == DESCRIPTOR {
                    render_payload_descriptor(media_type_of(nodes, line, i), len, out);
                } else {
                    let ratio = if nd.tail_only { 0.0 } else { style.head_ratio };
                    cut_string(content, len, kept[i] as usize, ratio, style, out);
                }
                out.push(b'"');
            }
            Kind::Object => {
                out.push(b'{');
                open.push((i, 0, false));
            }
            Kind::Array => {
                out.push(b'[');
                open.push((i, 0, false));
            }
        }
        i += 1;
    }
}

/// How far from a cut point a newline is looked for.
fn newline_window(kept: usize) -> usize {
    (kept / 4).min(256)
}

/// Writes `content` (a JSON string's raw text) cut to about `kept` bytes: head, marker, tail.
/// `original` is the string's length in the input (more than `content` after a reduction).
fn cut_string(
    content: &[u8],
    original: usize,
    kept: usize,
    head_ratio: f64,
    style: &EmitStyle,
    out: &mut Vec<u8>,
) {
    let (head, tail) = cut_points(content, kept, head_ratio);
    out.extend_from_slice(&content[..head]);
    style
        .marker
        .render(original, head + (content.len() - tail), out);
    out.extend_from_slice(&content[tail..]);
}

/// Where a string's raw text `content` cut to about `kept` bytes is cut: its head is
/// `content[..head]` and its tail `content[tail..]`. The cuts fall on character and escape
/// boundaries and move to a nearby `\n` when there is one.
pub fn cut_points(content: &[u8], kept: usize, head_ratio: f64) -> (usize, usize) {
    let len = content.len();
    let head_want = ((kept as f64) * head_ratio).round() as usize;
    let head_want = head_want.min(kept);
    let tail_want = kept - head_want;

    let mut head = boundary_at_or_before(content, head_want);
    let window = newline_window(head);
    if let Some(p) = last_newline_escape(content, head - window, head) {
        head = p;
    }
    let mut tail = boundary_at_or_after(content, len - tail_want).max(head);
    let window = newline_window(len - tail);
    if let Some(p) = first_newline_escape(content, tail, tail + window) {
        tail = p;
    }
    (head, tail)
}

/// The position just after the last `\n` escape that ends within `from..=to`.
fn last_newline_escape(s: &[u8], from: usize, to: usize) -> Option<usize> {
    let hay = &s[from..to];
    let mut end = hay.len();
    while let Some(k) = memchr::memrchr(b'n', &hay[..end]) {
        let j = from + k;
        if j > 0 && s[j - 1] == b'\\' && is_escape_start(s, j - 1) {
            return Some(j + 1);
        }
        end = k;
    }
    None
}

/// The position just after the first `\n` escape that starts within `from..to`.
fn first_newline_escape(s: &[u8], from: usize, to: usize) -> Option<usize> {
    let to = to.min(s.len());
    let mut k = from;
    while let Some(off) = memchr::memchr(b'\\', &s[k..to]) {
        let j = k + off;
        if is_escape_start(s, j) {
            if s.get(j + 1) == Some(&b'n') {
                return Some(j + 2);
            }
            k = j + escape_len_in(s, j);
        } else {
            k = j + 1;
        }
        if k >= to {
            break;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_avoid_escapes_and_chars() {
        let s = br#"ab\ncd\u00e9\ud83d\ude00\\x"#;
        let ok: Vec<usize> = (0..=s.len()).map(|p| boundary_at_or_before(s, p)).collect();
        for (p, &b) in ok.iter().enumerate() {
            assert!(b <= p);
            assert!(
                [0, 1, 2, 4, 5, 6, 12, 24, 26, 27].contains(&b),
                "p={p} b={b}"
            );
        }
        assert_eq!(boundary_at_or_after(s, 3), 4);
        assert_eq!(boundary_at_or_after(s, 13), 24);
    }

    #[test]
    fn boundary_moves_to_char_start() {
        let s = "aé€😀".as_bytes();
        assert_eq!(boundary_at_or_before(s, 2), 1);
        assert_eq!(boundary_at_or_before(s, 5), 3);
        assert_eq!(boundary_at_or_after(s, 7), 10);
    }
}
