//! The record of a line's text, `{"type":"<kind>","text":"…"}`: for a line that is not JSON
//! (`non_json`), and for a JSON line that could not be planned (`truncated`).
//!
//! The text is escaped as a JSON string's content sixty-four bytes at a time ([`escape`], from
//! the SIMD masks of [`crate::line::strings`]): the bytes that need attention are found a block
//! at a time and the runs between them are copied whole. Text that is valid UTF-8 (checked on
//! the way) is written losslessly: quotes, backslashes and control bytes escaped, the rest
//! copied. Text that is not ([`Text::Lossy`]) keeps its characters, and each run of bytes that
//! are not text (bytes that are no part of a UTF-8 character, control bytes other than tab,
//! DEL) becomes one U+FFFD. A binary line ([`Text::Binary`]: not UTF-8, with a control byte
//! that text does not hold) keeps its strings, as `strings` prints them ([`binary`]).
//!
//! A record over the budget keeps a head and a tail of the text with a marker between them:
//! the text is escaped until it passes the budget, so what a cut drops is never escaped.

use crate::cut::emit::EmitStyle;
pub use escape::{
    ChunkText, NotUtf8, Text, TextAhead, escape_known_text, escape_text, try_escape_text,
};
use escape::{ESCAPES, REPLACEMENT, is_noise, utf8_at};

mod binary;
mod escape;
mod text_run;
pub use binary::starts_binary;
pub use text_run::{RunsAhead, TextRun, write_text_run};

/// The `type` of the record that holds a line that is not JSON.
pub const NON_JSON: &str = "non_json";
/// The `type` of the record that holds a JSON line the planner could not fit (a line over
/// 4 GiB, or a planning bug caught by the engine's length check).
pub const UNPLANNED: &str = "truncated";

/// Bytes of `{"type":"<kind>","text":""}`.
pub fn record_overhead(kind: &str) -> usize {
    r#"{"type":"","text":""}"#.len() + kind.len()
}

/// Writes a record holding a line's text: `{"type":"<kind>","text":"…"}`, the text escaped
/// (see [`escape_text`]) and, past `budget` (0: no limit), cut to head + marker + tail. The
/// marker counts the line's raw bytes.
pub fn emit_record(kind: &str, raw: &[u8], budget: usize, style: &EmitStyle, out: &mut Vec<u8>) {
    // UTF-8 is checked first, in a pass of its own: the writer then looks for less.
    emit_text_record(kind, raw, Text::of(raw), budget, style, out);
}

/// [`emit_record`] of a text known to be `text` ([`Text::of`]).
pub fn emit_text_record(
    kind: &str,
    raw: &[u8],
    text: Text,
    budget: usize,
    style: &EmitStyle,
    out: &mut Vec<u8>,
) {
    open_record(kind, out);
    let room = budget.saturating_sub(record_overhead(kind));
    let limit = if budget == 0 { usize::MAX } else { room };
    let at = out.len();
    if escape_known_text(raw, limit, text, out) < raw.len() {
        out.truncate(at);
        let n = raw.len();
        let text_room = room.saturating_sub(style.marker.len(n, n));
        write_head_marker_tail(raw, raw, text, n, text_room, style, out);
    }
    out.extend_from_slice(b"\"}");
}

/// Writes a record of a line too long to hold, from its first bytes `head`, its last bytes
/// `tail` and its length `original`: head + marker + tail, the marker always present. A
/// character cut by the excerpt's ends is left out.
pub fn emit_excerpt_record(
    kind: &str,
    head: &[u8],
    tail: &[u8],
    original: u64,
    budget: usize,
    style: &EmitStyle,
    out: &mut Vec<u8>,
) {
    open_record(kind, out);
    let original = original as usize;
    let room = if budget == 0 {
        usize::MAX / 4
    } else {
        budget.saturating_sub(record_overhead(kind))
    };
    let text_room = room.saturating_sub(style.marker.len(original, original));
    // The ends of an excerpt of UTF-8 text cut characters: those are left out, not replaced.
    let whole_head = match simdutf8::compat::from_utf8(head) {
        Err(e) if e.error_len().is_none() => &head[..e.valid_up_to()],
        _ => head,
    };
    let skip = tail
        .iter()
        .take(3)
        .take_while(|&&b| b & 0xC0 == 0x80)
        .count();
    let whole_tail = &tail[skip..];
    // The line is binary when either end shows it is: not UTF-8, and a byte text never holds.
    let text = match (Text::of(whole_head), Text::of(whole_tail)) {
        (Text::Utf8, Text::Utf8) => Text::Utf8,
        _ if binary::holds_binary(head) || binary::holds_binary(tail) => Text::Binary,
        _ => Text::Lossy,
    };
    let (head, tail) = match text {
        Text::Utf8 => (whole_head, whole_tail),
        Text::Lossy | Text::Binary => (head, tail),
    };
    write_head_marker_tail(head, tail, text, original, text_room, style, out);
    out.extend_from_slice(b"\"}");
}

fn open_record(kind: &str, out: &mut Vec<u8>) {
    if kind == NON_JSON {
        // The most written, in one copy.
        out.extend_from_slice(b"{\"type\":\"non_json\",\"text\":\"");
        return;
    }
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\",\"text\":\"");
}

/// Writes escaped text of at most `text_room` bytes taken from the start of `head` and the end of
/// `tail` (the same slice for a whole line), with the marker between them.
fn write_head_marker_tail(
    head: &[u8],
    tail: &[u8],
    text: Text,
    original: usize,
    text_room: usize,
    style: &EmitStyle,
    out: &mut Vec<u8>,
) {
    let head_want = (((text_room as f64) * style.head_ratio).round() as usize).min(text_room);
    let tail_want = text_room - head_want;
    let kept_head = escape_known_text(head, head_want, text, out);
    // When head and tail are one slice, the tail must not repeat what the head took.
    let floor = if std::ptr::eq(head, tail) {
        kept_head
    } else {
        0
    };
    if text == Text::Binary {
        binary::write_tail(tail, floor, tail_want, out, |start, out| {
            style
                .marker
                .render(original, kept_head + (tail.len() - start), out);
        });
        return;
    }
    let start = tail_start(tail, floor, tail_want, text);
    style
        .marker
        .render(original, kept_head + (tail.len() - start), out);
    escape_known_text(&tail[start..], usize::MAX, text, out);
}

/// Where the longest tail of `tail` that escapes to at most `want` bytes starts, at or after
/// `floor`, not on a UTF-8 continuation byte (so a tail never opens with a replacement
/// character it need not have). One walk back from the end, unit by unit: linear in what the
/// tail keeps, and a run of bytes that are not text costs one U+FFFD however long it is.
fn tail_start(tail: &[u8], floor: usize, want: usize, text: Text) -> usize {
    debug_assert!(
        text != Text::Binary,
        "a binary line's tail is binary::tail's"
    );
    let (mut at, mut start, mut cost) = (tail.len(), tail.len(), 0);
    while at > floor {
        if not_text_ending_at(tail, at, text) {
            cost += REPLACEMENT.len();
            if cost > want {
                break;
            }
            while at > floor && not_text_ending_at(tail, at, text) {
                at -= 1;
                if tail[at] & 0xC0 != 0x80 {
                    start = at;
                }
            }
            continue;
        }
        let b = tail[at - 1];
        let (lead, len) = match char_ending_at(tail, at) {
            Some(lead) if b >= 0x80 => (lead, at - lead),
            _ => (at - 1, usize::from(ESCAPES[usize::from(b & 0x7F)].1)),
        };
        cost += len;
        if lead < floor || cost > want {
            break;
        }
        at = lead;
        start = at;
    }
    start
}

/// True when the byte before `at` is not text: no part of a UTF-8 character (one that ends at
/// `at`, since the walk goes backwards), or with [`Text::Lossy`] a control byte other than tab
/// or DEL.
fn not_text_ending_at(s: &[u8], at: usize, text: Text) -> bool {
    let b = s[at - 1];
    if b < 0x80 {
        text == Text::Lossy && is_noise(b)
    } else {
        char_ending_at(s, at).is_none()
    }
}

/// Where the valid character of two or more bytes that ends at `at` starts, if one does.
fn char_ending_at(s: &[u8], at: usize) -> Option<usize> {
    let lead = (at.saturating_sub(4)..at)
        .rev()
        .find(|&c| s[c] & 0xC0 != 0x80)?;
    (s[lead] >= 0x80 && utf8_at(s, lead) == Ok(at - lead)).then_some(lead)
}

#[cfg(test)]
mod tests {
    use super::escape::tests::{escape_reference, escaped_text_len, text_bytes, utf8_text};
    use super::*;
    use crate::line::marker::MarkerTemplate;
    use proptest::prelude::*;

    fn style() -> EmitStyle<'static> {
        static MARKER: std::sync::LazyLock<MarkerTemplate> =
            std::sync::LazyLock::new(MarkerTemplate::default);
        EmitStyle {
            marker: &MARKER,
            head_ratio: 0.5,
        }
    }

    #[test]
    fn record_escapes_and_replaces() {
        let mut out = Vec::new();
        emit_record(NON_JSON, b"a\"b\x00\x1b\t", 0, &style(), &mut out);
        assert_eq!(
            out,
            "{\"type\":\"non_json\",\"text\":\"a\\\"b\\u0000\\u001b\\t\"}".as_bytes()
        );
        out.clear();
        emit_record(NON_JSON, b"a\"b\xff\x1b\t", 0, &style(), &mut out);
        assert_eq!(
            out,
            "{\"type\":\"non_json\",\"text\":\"a\\\"b\u{FFFD}\\t\"}".as_bytes()
        );
        // Binary (NUL): its strings, here none.
        out.clear();
        emit_record(NON_JSON, b"a\"b\xff\x00\t", 0, &style(), &mut out);
        assert_eq!(
            out,
            "{\"type\":\"non_json\",\"text\":\"\u{FFFD}\"}".as_bytes()
        );
    }

    /// The `text` of a record.
    fn record_text(record: &[u8]) -> String {
        let value: serde_json::Value = serde_json::from_slice(record).unwrap();
        value["text"].as_str().unwrap().to_owned()
    }

    /// A line that is not UTF-8 whose control bytes, escaped in six bytes each, would take it
    /// past the budget, but which fits as its record spells it (each run of them one U+FFFD):
    /// it was cut, under a marker that said nothing was dropped (`18 → 18 bytes`).
    #[test]
    fn a_line_that_fits_once_its_binary_runs_are_replaced_is_logged_whole() {
        let mut out = Vec::new();
        let mut raw = [1u8; 17].to_vec();
        raw.push(0xFF);
        emit_record(NON_JSON, &raw, 128, &style(), &mut out);
        assert_eq!(
            out,
            "{\"type\":\"non_json\",\"text\":\"\u{FFFD}\"}".as_bytes()
        );
        let mut raw = b"\x1b[1;31merror\x1b[0m: build failed ".repeat(26);
        raw.extend_from_slice(b"caf\xe9");
        out.clear();
        emit_record(NON_JSON, &raw, 1024, &style(), &mut out);
        assert!(out.len() <= 1024, "{} bytes", out.len());
        let text = record_text(&out);
        assert!(!text.contains("TRUNCATED"), "{text}");
        assert_eq!(text.matches("build failed").count(), 26);
    }

    /// The kept tail of a line that is not UTF-8 may be UTF-8 on its own; a debug build
    /// asserted that it was not (exit 101 on `\xff` and 200 `a`s at `-b 128`).
    #[test]
    fn the_kept_tail_of_a_line_that_is_not_utf8_may_be_utf8() {
        let mut raw = vec![0xFF];
        raw.extend_from_slice(&[b'a'; 200]);
        let mut out = Vec::new();
        emit_record(NON_JSON, &raw, 128, &style(), &mut out);
        assert!(out.len() <= 128, "{} bytes", out.len());
        let text = record_text(&out);
        assert!(text.starts_with('\u{FFFD}') && text.contains("TRUNCATED") && text.ends_with('a'));
    }

    proptest! {
        #[test]
        fn tail_start_finds_the_longest_fitting_tail(
            bytes in prop_oneof![text_bytes(), utf8_text()],
            floor in 0usize..300,
            want in 0usize..80,
        ) {
            // A binary line is cut as its strings, as UTF-8 text; tail_start reads it as lossy
            // text nonetheless.
            let text = match Text::of(&bytes) {
                Text::Binary => Text::Lossy,
                text => text,
            };
            let floor = floor.min(bytes.len());
            let got = tail_start(&bytes, floor, want, text);
            // The first start at or after `floor` that is not a continuation byte and whose
            // escaped suffix fits.
            let naive = (floor..bytes.len())
                .filter(|&p| bytes[p] & 0xC0 != 0x80)
                .find(|&p| escaped_text_len(&bytes[p..], text) <= want)
                .unwrap_or(bytes.len());
            prop_assert_eq!(got, naive);
        }

        #[test]
        fn records_fit_their_budget_and_read_as_json(
            raw in prop_oneof![text_bytes(), utf8_text()],
            budget in 128usize..400,
        ) {
            let mut out = Vec::new();
            emit_record(NON_JSON, &raw, budget, &style(), &mut out);
            prop_assert!(out.len() <= budget, "{} > {}", out.len(), budget);
            let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
            prop_assert_eq!(&v["type"], "non_json");
            // Without a budget: the whole text, written as the reference writes it.
            out.clear();
            emit_record(NON_JSON, &raw, 0, &style(), &mut out);
            let text = escape_reference(&raw, usize::MAX, Text::of(&raw)).0;
            let want = [&b"{\"type\":\"non_json\",\"text\":\""[..], &text, b"\"}"].concat();
            prop_assert_eq!(out, want);
        }
    }

    #[test]
    fn excerpt_of_control_bytes_is_linear_in_the_budget() {
        // 1.6 MB of \x01 (six escaped bytes each) at a 400,000-byte budget took 12.9 s when the
        // tail start moved a byte per scan; linear, it is a few milliseconds of work. The check
        // is on the result, not the time: the tail is as long as the room allows.
        let raw = vec![1u8; 1_600_000];
        let mut out = Vec::new();
        emit_record(NON_JSON, &raw, 400_000, &style(), &mut out);
        assert!(
            out.len() <= 400_000 && out.len() > 399_000 - 12,
            "{}",
            out.len()
        );
    }

    /// A line past the memory cap is binary when either end shows it is: its head UTF-8 with
    /// NULs and its tail Latin-1 made it text (found by attacking the binary records).
    #[test]
    fn an_over_cap_line_binary_at_one_end_only_is_logged_as_its_strings() {
        let (binary, latin1) = (
            &b"ab\x00cd\x00\xc3\xa9t\x00xxxx"[..],
            &b"xxxxcaf\xe9 ok"[..],
        );
        for (head, tail, want) in [
            (
                binary,
                latin1,
                "\u{FFFD}xxxx[TRUNCATED: 9000000 → 25 bytes]xxxxcaf\u{FFFD}",
            ),
            (
                latin1,
                binary,
                "xxxxcaf\u{FFFD}[TRUNCATED: 9000000 → 25 bytes]\u{FFFD}xxxx",
            ),
        ] {
            let mut out = Vec::new();
            emit_excerpt_record(NON_JSON, head, tail, 9_000_000, 5120, &style(), &mut out);
            assert_eq!(record_text(&out), want);
        }
    }

    #[test]
    fn an_excerpt_leaves_out_the_characters_its_ends_cut() {
        let mut out = Vec::new();
        // "é" cut at the head's end and at the tail's start.
        emit_excerpt_record(
            NON_JSON,
            b"ab\xC3",
            b"\xA9cd",
            1000,
            5120,
            &style(),
            &mut out,
        );
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["text"], "ab[TRUNCATED: 1000 → 4 bytes]cd");
    }
}
