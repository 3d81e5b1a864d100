//! Writing the log line: the planned cut of a JSON line, or the record of a line that is not
//! JSON.
//!
//! Cut lines are written compactly by copying byte ranges of the original line (keys, numbers,
//! string heads and tails stay exactly as written) and splicing markers in between.

use crate::marker::{
    MarkerTemplate, Unit, escape_char, escaped_len, render_container_marker,
    render_payload_descriptor,
};
use crate::plan::{
    DESCRIPTOR, MarkerForm, Sizes, State, WHOLE, marker_form, marker_key_suffix, media_type_of,
    push_marker_key,
};
use crate::scan::Kind;
use crate::strings::{boundary_at_or_after, boundary_at_or_before, escape_len_in, is_escape_start};

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
    state: &[State],
    kept: &[u32],
    style: &EmitStyle,
    open: &mut Vec<Open>,
    out: &mut Vec<u8>,
) {
    let nodes = sz.nodes;
    open.clear();
    // Writes the marker element of array `a`, which keeps `kept` of its elements, in the form
    // of its first element (see `plan::MarkerForm`).
    let array_marker = |a: usize, kept: usize, out: &mut Vec<u8>| {
        let form = marker_form(nodes, line, a);
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
                    push_marker_key(marker_key_suffix(nodes, line, c), out);
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
                    cut_string(content, len, kept[i] as usize, style, out);
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
fn cut_string(content: &[u8], original: usize, kept: usize, style: &EmitStyle, out: &mut Vec<u8>) {
    let (head, tail) = cut_points(content, kept, style.head_ratio);
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

/// The `type` of the record that holds a line that is not JSON.
pub const NON_JSON: &str = "non_json";
/// The `type` of the record that holds a JSON line the planner could not fit (a line over
/// 4 GiB, or a planning bug caught by the engine's length check).
pub const UNPLANNED: &str = "truncated";

/// Bytes of `{"type":"<kind>","text":""}`.
pub fn record_overhead(kind: &str) -> usize {
    22 + kind.len()
}

/// Writes a record holding a line's text: `{"type":"<kind>","text":"…"}`, the text with invalid
/// UTF-8 replaced by U+FFFD and, past `budget` (0: no limit), cut to head + marker + tail. The
/// marker counts the line's raw bytes.
pub fn emit_record(kind: &str, raw: &[u8], budget: usize, style: &EmitStyle, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\",\"text\":\"");
    let room = budget.saturating_sub(record_overhead(kind));
    if budget == 0 || escaped_text_len(raw, room + 1) <= room {
        escape_lossy(raw, usize::MAX, out);
    } else {
        let n = raw.len();
        let text_room = room.saturating_sub(style.marker.len(n, n));
        write_head_marker_tail(raw, raw, n, text_room, style, out);
    }
    out.extend_from_slice(b"\"}");
}

/// Writes a record of a line too long to hold, from its first bytes `head`, its last bytes
/// `tail` and its length `original`: head + marker + tail, the marker always present.
pub fn emit_excerpt_record(
    kind: &str,
    head: &[u8],
    tail: &[u8],
    original: u64,
    budget: usize,
    style: &EmitStyle,
    out: &mut Vec<u8>,
) {
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\",\"text\":\"");
    let original = original as usize;
    let room = if budget == 0 {
        usize::MAX / 4
    } else {
        budget.saturating_sub(record_overhead(kind))
    };
    let text_room = room.saturating_sub(style.marker.len(original, original));
    write_head_marker_tail(head, tail, original, text_room, style, out);
    out.extend_from_slice(b"\"}");
}

/// Writes escaped text of at most `text_room` bytes taken from the start of `head` and the end of
/// `tail` (the same slice for a whole line), with the marker between them.
fn write_head_marker_tail(
    head: &[u8],
    tail: &[u8],
    original: usize,
    text_room: usize,
    style: &EmitStyle,
    out: &mut Vec<u8>,
) {
    let head_want = (((text_room as f64) * style.head_ratio).round() as usize).min(text_room);
    let tail_want = text_room - head_want;
    let kept_head = escape_lossy(head, head_want, out);
    // When head and tail are one slice, the tail must not repeat what the head took.
    let floor = if std::ptr::eq(head, tail) {
        kept_head
    } else {
        0
    };
    let start = tail_start(tail, floor, tail_want);
    let kept = kept_head + (tail.len() - start);
    style.marker.render(original, kept, out);
    escape_lossy(&tail[start..], usize::MAX, out);
}

/// Where the longest tail of `tail` that escapes to at most `want` bytes starts, at or after
/// `floor`, on a character boundary. Linear in `want`: every raw byte escapes to at least one
/// byte, so the tail lies within the last `want` raw bytes; one pass measures that window and a
/// second walks it to the first character at which what follows fits (stray continuation
/// bytes are skipped, so a tail never opens with a replacement character it need not have).
fn tail_start(tail: &[u8], floor: usize, want: usize) -> usize {
    let from = char_start_at_or_after(tail, tail.len().saturating_sub(want).max(floor));
    let window = &tail[from..];
    let total = escaped_text_len(window, usize::MAX);
    let Some(mut excess) = total.checked_sub(want).filter(|&e| e > 0) else {
        return from;
    };
    let mut at = from;
    for chunk in window.utf8_chunks() {
        for c in chunk.valid().chars() {
            excess = excess.saturating_sub(escaped_len(c));
            at += c.len_utf8();
            if excess == 0 {
                return char_start_at_or_after(tail, at);
            }
        }
        if !chunk.invalid().is_empty() {
            excess = excess.saturating_sub(3);
            at += chunk.invalid().len();
            if excess == 0 {
                return char_start_at_or_after(tail, at);
            }
        }
    }
    tail.len()
}

fn char_start_at_or_after(raw: &[u8], mut p: usize) -> usize {
    let stop = (p + 3).min(raw.len());
    while p < stop && (raw[p] & 0xC0) == 0x80 {
        p += 1;
    }
    p.min(raw.len())
}

/// Escaped length of `raw` decoded lossily, counting no further than `limit`.
fn escaped_text_len(raw: &[u8], limit: usize) -> usize {
    let mut len = 0;
    for chunk in raw.utf8_chunks() {
        for c in chunk.valid().chars() {
            len += escaped_len(c);
            if len >= limit {
                return len;
            }
        }
        if !chunk.invalid().is_empty() {
            len += 3;
            if len >= limit {
                return len;
            }
        }
    }
    len
}

/// Escapes `raw`, decoded lossily, into `out` until the next character would pass `limit`
/// escaped bytes. Returns how many raw bytes were consumed.
fn escape_lossy(raw: &[u8], limit: usize, out: &mut Vec<u8>) -> usize {
    let mut written = 0;
    let mut consumed = 0;
    for chunk in raw.utf8_chunks() {
        for c in chunk.valid().chars() {
            let l = escaped_len(c);
            if written + l > limit {
                return consumed;
            }
            escape_char(c, out);
            written += l;
            consumed += c.len_utf8();
        }
        if !chunk.invalid().is_empty() {
            if written + 3 > limit {
                return consumed;
            }
            escape_char('\u{FFFD}', out);
            written += 3;
            consumed += chunk.invalid().len();
        }
    }
    consumed
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

    #[test]
    fn record_escapes_and_replaces() {
        let style = EmitStyle {
            marker: &MarkerTemplate::default(),
            head_ratio: 0.5,
        };
        let mut out = Vec::new();
        emit_record(NON_JSON, b"a\"b\xff\x00", 0, &style, &mut out);
        assert_eq!(
            out,
            "{\"type\":\"non_json\",\"text\":\"a\\\"b\u{FFFD}\\u0000\"}".as_bytes()
        );
    }

    /// The longest fitting tail by brute force: the first start at or after `floor` that is not
    /// a UTF-8 continuation byte and whose escaped suffix fits.
    fn tail_start_naive(tail: &[u8], floor: usize, want: usize) -> usize {
        (floor..tail.len())
            .filter(|&p| tail[p] & 0xC0 != 0x80)
            .find(|&p| escaped_text_len(&tail[p..], usize::MAX) <= want)
            .unwrap_or(tail.len())
    }

    proptest::proptest! {
        #[test]
        fn tail_start_finds_the_longest_fitting_tail(
            bytes in proptest::collection::vec(proptest::prop_oneof![
                proptest::prelude::Just(b'a'), proptest::prelude::Just(0x01u8),
                proptest::prelude::Just(b'"'), proptest::prelude::Just(0xC3u8),
                proptest::prelude::Just(0xA9u8), proptest::prelude::Just(0xFFu8),
                proptest::prelude::Just(0xE2u8), proptest::prelude::Just(0x82u8),
            ], 0..64),
            floor in 0usize..64,
            want in 0usize..80,
        ) {
            let floor = floor.min(bytes.len());
            let got = tail_start(&bytes, floor, want);
            let naive = tail_start_naive(&bytes, floor, want);
            // The tail fits, and it is as long as the byte-by-byte search finds.
            proptest::prop_assert!(escaped_text_len(&bytes[got..], usize::MAX) <= want);
            proptest::prop_assert!(got <= naive, "got {}, naive {}", got, naive);
        }
    }

    #[test]
    fn excerpt_of_control_bytes_is_linear_in_the_budget() {
        // 1.6 MB of \x01 (six escaped bytes each) at a 400,000-byte budget took 12.9 s when the
        // tail start moved a byte per scan; linear, it is a few milliseconds of work. The check
        // is on the result, not the time: the tail is as long as the room allows.
        let style = EmitStyle {
            marker: &MarkerTemplate::default(),
            head_ratio: 0.5,
        };
        let raw = vec![1u8; 1_600_000];
        let mut out = Vec::new();
        emit_record(NON_JSON, &raw, 400_000, &style, &mut out);
        assert!(
            out.len() <= 400_000 && out.len() > 399_000 - 12,
            "{}",
            out.len()
        );
    }
}
