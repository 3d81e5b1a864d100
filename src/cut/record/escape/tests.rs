//! Tests of the block writers against a plain unit-by-unit reference.

use super::*;
use proptest::prelude::*;

/// Calls `f(raw bytes, escaped bytes)` for each unit of `raw` as [`escape_text`] writes it
/// (a character, or a run of bytes that are not text), in order, while `f` returns true:
/// the plain reference of the block-at-a-time writers, from `str::utf8_chunks`.
fn for_each_unit(raw: &[u8], text: Text, mut f: impl FnMut(usize, usize) -> bool) {
    if text == Text::Binary {
        return super::super::binary::tests::for_each_unit(raw, |raw_len, escaped, _| {
            f(raw_len, escaped)
        });
    }
    let mut noise = 0;
    for chunk in raw.utf8_chunks() {
        for c in chunk.valid().chars() {
            if text == Text::Lossy && c.is_ascii() && is_noise(c as u8) {
                noise += 1;
                continue;
            }
            if noise > 0 {
                if !f(noise, REPLACEMENT.len()) {
                    return;
                }
                noise = 0;
            }
            let escaped = if c.is_ascii() {
                usize::from(ESCAPES[c as usize].1)
            } else {
                c.len_utf8()
            };
            if !f(c.len_utf8(), escaped) {
                return;
            }
        }
        noise += chunk.invalid().len();
    }
    if noise > 0 {
        f(noise, REPLACEMENT.len());
    }
}

/// Escaped length of `raw` as [`escape_text`] writes it.
pub(crate) fn escaped_text_len(raw: &[u8], text: Text) -> usize {
    let mut len = 0;
    for_each_unit(raw, text, |_, escaped| {
        len += escaped;
        true
    });
    len
}

/// [`escape_text`] the plain way: unit by unit, from [`for_each_unit`].
pub(crate) fn escape_reference(raw: &[u8], limit: usize, text: Text) -> (Vec<u8>, usize) {
    if text == Text::Binary {
        return super::super::binary::tests::escape_reference(raw, limit);
    }
    let (mut out, mut at) = (Vec::new(), 0);
    for_each_unit(raw, text, |raw_len, escaped| {
        if out.len() + escaped > limit {
            return false;
        }
        match std::str::from_utf8(&raw[at..at + raw_len]) {
            Ok(s) if text == Text::Utf8 || !s.bytes().all(is_noise) => {
                for c in s.chars() {
                    crate::line::marker::escape_char(c, &mut out);
                }
            }
            _ => out.extend_from_slice(REPLACEMENT),
        }
        at += raw_len;
        true
    });
    (out, at)
}

/// [`escape_text`] into a new buffer, as a loop the tests run each way the CPU can; the
/// last field says whether the text's kind is known (as [`escape_known_text`] runs it).
#[derive(Clone)]
struct EscapeNew<'a>(&'a [u8], usize, Text, bool);

impl BlockLoop for EscapeNew<'_> {
    type Out = (Vec<u8>, usize);
    fn run(
        self,
        masks64: impl Fn(&[u8; 64]) -> Masks<u64>,
        text_masks64: impl Fn(&[u8; 64]) -> TextMasks<u64>,
        escapes64: impl Fn(&[u8; 64]) -> u64,
    ) -> (Vec<u8>, usize) {
        let mut out = Vec::new();
        let consumed = Escape {
            raw: self.0,
            limit: self.1,
            text: self.2,
            known: self.3,
            out: &mut out,
        }
        .run(masks64, text_masks64, escapes64)
        .expect("the text is UTF-8 as Text::of says");
        (out, consumed)
    }
}

fn escaped(raw: &[u8]) -> String {
    escaped_as(raw, Text::of(raw))
}

fn escaped_as(raw: &[u8], text: Text) -> String {
    let mut out = Vec::new();
    escape_text(raw, usize::MAX, text, &mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn a_run_of_bytes_that_are_not_text_is_one_replacement() {
    // Two maximal subparts (`\xF0\x9F`, then `\xFF\xFE`) and a control byte in one run, a
    // lone continuation byte after an `é`, a tab kept, and a run that crosses a block's end.
    let mut raw = b"x\xF0\x9F\xFF\x01\xFEy\xC3\xA9\x80z\t".to_vec();
    raw.extend(std::iter::repeat_n(b'a', 60));
    raw.extend_from_slice(b"\xFF\x00\xFF\xFFb");
    let want = format!("x\u{FFFD}yé\u{FFFD}z\\t{}\u{FFFD}b", "a".repeat(60));
    // The lossy writer, though the line is binary (\x01, \x00) and written as its strings.
    assert_eq!(escaped_as(&raw, Text::Lossy), want);
    assert_eq!(Text::of(&raw), Text::Binary);
    let strings = format!("\u{FFFD}z\\t{}\u{FFFD}", "a".repeat(60));
    assert_eq!(escaped(&raw), strings);
}

#[test]
fn every_byte_value_escapes_as_json_says() {
    for b in 0..=255u8 {
        for lane in [0, 17, 63, 64] {
            let mut raw = vec![b'a'; 70];
            raw[lane] = b;
            let text = Text::of(&raw);
            let mut out = Vec::new();
            escape_text(&raw, usize::MAX, text, &mut out);
            assert_eq!(
                out,
                escape_reference(&raw, usize::MAX, text).0,
                "{b:#x} @ {lane}"
            );
            let parsed: String =
                serde_json::from_str(&format!("\"{}\"", String::from_utf8(out).unwrap())).unwrap();
            assert_eq!(parsed, String::from_utf8_lossy(&raw), "{b:#x} @ {lane}");
        }
    }
}

#[test]
fn the_utf8_writer_gives_up_at_the_first_byte_that_is_not() {
    for at in [0, 5, 63, 64, 130] {
        let mut raw = "é".repeat(100).into_bytes();
        raw[at] = 0xFF;
        let mut out = Vec::new();
        assert_eq!(
            try_escape_text(&raw, usize::MAX, Text::Utf8, &mut out),
            Err(NotUtf8),
            "{at}"
        );
        out.clear();
        escape_text(&raw, usize::MAX, Text::Utf8, &mut out);
        assert_eq!(
            out,
            escape_reference(&raw, usize::MAX, Text::Lossy).0,
            "{at}"
        );
    }
}

#[test]
fn characters_across_block_ends_are_kept_beside_bytes_that_are_not() {
    for c in [
        "é",
        "€",
        "😀",
        "\u{80}",
        "\u{D7FF}",
        "\u{E000}",
        "\u{10FFFF}",
    ] {
        for at in 58..66 {
            let mut raw = vec![b'a'; 80];
            raw.splice(at..at, c.bytes());
            raw.push(0xFF);
            assert_eq!(
                escaped(&raw),
                format!("{}{c}{}\u{FFFD}", "a".repeat(at), "a".repeat(80 - at)),
                "{c} @ {at}"
            );
        }
    }
}

#[test]
fn a_character_across_a_block_end_is_kept_whole_near_the_limit() {
    // Lossy text written a block at a time up to near the limit, then a unit at a time:
    // the units must start at the character's first byte, not inside it.
    for at in 60..132 {
        let mut raw: Vec<u8> = (0..at).map(|i| [b'a', 0xFF][i % 2]).collect();
        raw.extend_from_slice("\u{D3CF}\u{20AC}zz".as_bytes());
        for limit in [300, 456, 520, 600, 639, usize::MAX] {
            let mut out = Vec::new();
            let n = escape_text(&raw, limit, Text::Lossy, &mut out);
            assert_eq!(
                (out, n),
                escape_reference(&raw, limit, Text::Lossy),
                "{at} {limit}"
            );
        }
    }
}

pub(crate) fn text_bytes() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(
        prop_oneof![
            4 => Just(b'a'),
            1 => Just(0x01u8),
            1 => Just(0x1Bu8),
            1 => Just(b'\t'),
            1 => Just(0x7Fu8),
            1 => Just(b'"'),
            1 => Just(b'\\'),
            1 => Just(b'\n'),
            1 => Just(0xC3u8),
            1 => Just(0xA9u8),
            1 => Just(0xFFu8),
            1 => Just(0xE2u8),
            1 => Just(0x82u8),
            1 => Just(0xF0u8),
            1 => Just(0x9Fu8),
            1 => Just(0xEDu8),
            1 => Just(0xF4u8),
            1 => Just(0x8Fu8),
            1 => Just(0xE0u8),
            1 => Just(0xA0u8),
            2 => any::<u8>(),
        ],
        0..300,
    )
}

/// Valid UTF-8 text with every kind of character and escape, so the UTF-8 writer is tested
/// as much as the lossy one.
pub(crate) fn utf8_text() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(
        prop_oneof![
            6 => Just("a"),
            1 => Just("\u{1}"),
            1 => Just("\u{1b}"),
            1 => Just("\t"),
            1 => Just("\u{7f}"),
            1 => Just("\""),
            1 => Just("\\"),
            1 => Just("é"),
            1 => Just("€"),
            1 => Just("😀"),
        ],
        0..200,
    )
    .prop_map(|parts| parts.concat().into_bytes())
}

/// A regression: UTF-8 text known as such, written block by block, switched to one unit at a
/// time near the limit from a block's start, inside a character that crossed the block end,
/// and stopped a byte short of the reference. Characters of two, three and four bytes across
/// the end, with escapes before them, at every limit.
#[test]
fn a_character_across_a_block_end_near_the_limit_is_written_as_the_reference_writes() {
    for ch in ["é", "€", "😀"] {
        for before in 0..ch.len() {
            let mut raw = "a\"\u{1b}".repeat(21).into_bytes();
            raw.truncate(64 - ch.len() + before);
            raw.extend_from_slice(ch.as_bytes());
            raw.extend_from_slice(&b"b\"".repeat(200));
            let text = Text::of(&raw);
            assert_eq!(text, Text::Utf8);
            for limit in 0..1200 {
                let (want, n) = escape_reference(&raw, limit, text);
                let mut out = Vec::new();
                assert_eq!(
                    escape_known_text(&raw, limit, text, &mut out),
                    n,
                    "{ch} limit {limit}"
                );
                assert_eq!(out, want, "{ch} limit {limit}");
            }
        }
    }
}

/// Blocks of many stops (binary, written at once where the CPU has a [`Squeeze`]) next to
/// blocks of few (text with a stray byte, written by copying runs), with a character across
/// every block end, at budgets from nothing to the whole: as the reference writes them.
#[test]
fn dense_and_sparse_blocks_mix_as_the_reference_writes() {
    let dense: Vec<u8> = (0..64)
        .map(|i| [0xFF, b'a', 0x01, b'"', 0x80, b'\t', b'\\'][i % 7])
        .collect();
    let mut sparse = b"plain text with one stray byte \xff in it, ".to_vec();
    sparse.resize(64, b'.');
    let mut raw = Vec::new();
    for k in 0..7 {
        raw.extend_from_slice(if k % 3 == 0 { &sparse } else { &dense });
    }
    for end in (64..raw.len()).step_by(64) {
        raw[end - 1] = 0xC3;
        raw[end] = 0xA9;
    }
    // Binary (\x01), written here by the lossy writer, as a line without such bytes would be.
    assert_eq!(Text::of(&raw), Text::Binary);
    let text = Text::Lossy;
    for limit in (0..1200).step_by(5).chain([usize::MAX]) {
        let (want, n) = escape_reference(&raw, limit, text);
        let mut out = Vec::new();
        assert_eq!(
            escape_known_text(&raw, limit, text, &mut out),
            n,
            "limit {limit}"
        );
        assert_eq!(out, want, "limit {limit}");
        for (each, m) in
            crate::line::strings::run_block_loop_each_way(EscapeNew(&raw, limit, text, true))
        {
            assert_eq!((each, m), (want.clone(), n), "limit {limit}");
        }
    }
}

proptest! {
    /// Whichever check `Text::of` takes, it says what the definitions say.
    #[test]
    fn text_of_is_what_its_definition_says(
        raw in prop_oneof![text_bytes(), utf8_text()],
        nul in any::<prop::sample::Index>(),
    ) {
        let mut with_nul = raw.clone();
        with_nul.insert(nul.index(raw.len() + 1), 0);
        for raw in [raw, with_nul] {
            let binary = raw.iter().any(|&b| crate::line::strings::is_binary_byte(b));
            let want = match std::str::from_utf8(&raw) {
                Ok(_) => Text::Utf8,
                Err(_) if binary => Text::Binary,
                Err(_) => Text::Lossy,
            };
            prop_assert_eq!(Text::of(&raw), want);
        }
    }

    #[test]
    fn escape_text_writes_what_the_reference_writes(
        raw in prop_oneof![text_bytes(), utf8_text()],
        limit in prop_oneof![Just(usize::MAX), 0usize..1200],
    ) {
        // A binary line is written as its strings; the lossy writer is checked on it too, as
        // it writes a line without the bytes that make it binary.
        let of = Text::of(&raw);
        let lossy = (of == Text::Binary).then_some(Text::Lossy);
        for text in std::iter::once(of).chain(lossy) {
            let mut out = b"prefix".to_vec();
            let consumed = if text == of {
                escape_text(&raw, limit, text, &mut out)
            } else {
                escape_known_text(&raw, limit, text, &mut out)
            };
            let (want, want_consumed) = escape_reference(&raw, limit, text);
            prop_assert_eq!(&out[6..], &want[..]);
            prop_assert_eq!(consumed, want_consumed);
            let mut known = b"prefix".to_vec();
            prop_assert_eq!(escape_known_text(&raw, limit, text, &mut known), want_consumed);
            prop_assert_eq!(&known[6..], &want[..]);
            for k in [false, true] {
                let each_way = EscapeNew(&raw, limit, text, k);
                for (each, n) in crate::line::strings::run_block_loop_each_way(each_way) {
                    prop_assert_eq!(&each, &want);
                    prop_assert_eq!(n, want_consumed);
                }
            }
            prop_assert_eq!(escaped_text_len(&raw, text) <= limit, consumed == raw.len());
        }
    }

}

/// A regression: a line that is not UTF-8, whose first block (dense, written at once) ends
/// inside a four-byte character, was written near the limit with that character's lead byte
/// alone before a U+FFFD: a log line that was not UTF-8 (`smart-tee -b 512`).
#[test]
fn a_squeezed_block_ending_inside_a_character_near_the_limit_leaves_no_lone_lead_byte() {
    let mut raw = b"aaaaaaa\x1baaaaa\x01".to_vec();
    raw.extend_from_slice(&[b'a'; 23]);
    raw.extend_from_slice(b"\x01aaa\"aaaaaa\x0baaaaaa\\aaaaaaa");
    raw.extend_from_slice("😀".as_bytes());
    raw.extend_from_slice(&[b'a'; 61]);
    raw.push(0x80);
    // Binary (\x01), written here by the lossy writer, as a line without such bytes would be.
    assert_eq!(Text::of(&raw), Text::Binary);
    let text = Text::Lossy;
    for limit in (0..1200).chain([usize::MAX]) {
        let (want, n) = escape_reference(&raw, limit, text);
        for (each, m) in
            crate::line::strings::run_block_loop_each_way(EscapeNew(&raw, limit, text, true))
        {
            assert_eq!(
                (m, String::from_utf8_lossy(&each)),
                (n, String::from_utf8_lossy(&want)),
                "limit {limit}"
            );
        }
    }
}
