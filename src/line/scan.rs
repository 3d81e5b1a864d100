//! Scanning one line of JSON: strict RFC 8259 validation and, for lines that must be cut, a flat
//! index of their values.
//!
//! The scanner is one iterative loop with an explicit stack of open containers, so nesting depth
//! costs heap bytes, never call-stack frames. It is generic over a [`Visitor`]: validation uses a
//! visitor that does nothing (and compiles away), planning uses `index::IndexBuilder`.
//!
//! Strictness matches serde_json's except where noted: lone surrogate escapes (`"\ud800"`) are
//! rejected because they cannot become valid UTF-8; there is no depth limit (serde_json stops at
//! 128 levels); numbers of any size are accepted (serde_json without `arbitrary_precision` rejects
//! `1e400`). UTF-8 is checked first, in one SIMD pass (simdutf8); strings are then scanned 64
//! bytes at a time from bit masks of their quotes, backslashes and control bytes
//! ([`crate::line::strings`]); numbers and runs of integer elements in [`numbers`].

use crate::line::strings;
pub use crate::line::strings::Invalid;
pub(crate) use numbers::{Integers, integers, number_end, number_end_inlined};

mod numbers;

/// What a node in the index is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Object,
    Array,
    String,
    /// A number, `true`, `false` or `null`: kept as its exact text.
    Scalar,
}

/// Receives the structure of a line as the scanner finds it.
pub trait Visitor {
    fn key(&mut self, start: usize, end: usize);
    fn scalar(&mut self, kind: Kind, start: usize, end: usize);
    fn open(&mut self, kind: Kind, start: usize);
    fn close(&mut self, end: usize);
}

/// The visitor for plain validation.
pub struct Validate;

impl Visitor for Validate {
    #[inline(always)]
    fn key(&mut self, _: usize, _: usize) {}
    #[inline(always)]
    fn scalar(&mut self, _: Kind, _: usize, _: usize) {}
    #[inline(always)]
    fn open(&mut self, _: Kind, _: usize) {}
    #[inline(always)]
    fn close(&mut self, _: usize) {}
}

/// The visitor for `--add-timestamp`: notes whether the top-level object has a given key.
pub struct TopLevelKey<'a> {
    line: &'a [u8],
    name: &'a [u8],
    depth: usize,
    pub found: bool,
}

impl<'a> TopLevelKey<'a> {
    pub fn new(line: &'a [u8], name: &'a [u8]) -> Self {
        TopLevelKey {
            line,
            name,
            depth: 0,
            found: false,
        }
    }
}

impl Visitor for TopLevelKey<'_> {
    fn key(&mut self, start: usize, end: usize) {
        if self.depth == 1 && crate::line::fields::key_is(&self.line[start + 1..end - 1], self.name)
        {
            self.found = true;
        }
    }
    fn scalar(&mut self, _: Kind, _: usize, _: usize) {}
    fn open(&mut self, _: Kind, _: usize) {
        self.depth += 1;
    }
    fn close(&mut self, _: usize) {
        self.depth -= 1;
    }
}

const OBJ: u8 = 0;
const ARR: u8 = 1;

/// The first byte at or after `i` that is not JSON whitespace (or `s.len()`).
#[inline]
pub(crate) fn skip_ws(s: &[u8], mut i: usize) -> usize {
    while let Some(&b) = s.get(i) {
        if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            break;
        }
        i += 1;
    }
    i
}

/// True when a JSON value can start with `b` (a line whose first byte past the whitespace is
/// any other is not JSON, known without reading further).
#[inline]
pub fn can_start_value(b: u8) -> bool {
    matches!(
        b,
        b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'
    )
}

/// True when `s` is one strict JSON text in valid UTF-8 (surrounding whitespace allowed).
pub fn is_valid(s: &[u8], stack: &mut Vec<u8>) -> bool {
    scan(s, &mut Validate, stack).is_ok()
}

/// The nesting depth of `s` (`1` is `[1]`, `0` a scalar) if it is one strict JSON text in valid
/// UTF-8.
pub fn valid_depth(s: &[u8], stack: &mut Vec<u8>) -> Result<usize, Invalid> {
    // The structure first: a line that is not JSON (text that starts like a value: `fn main`,
    // `"quoted" words`, `42 tests passed`) is turned away within a few bytes, without a UTF-8
    // pass over all of it. On bytes that are not UTF-8 the scan's answer is only wrong, and the
    // UTF-8 check after it settles the line.
    let depth = scan_with(s, &mut Validate, stack)?;
    match simdutf8::basic::from_utf8(s) {
        Ok(_) => Ok(depth),
        Err(_) => Err(Invalid),
    }
}

/// Scans `s` as one JSON text in valid UTF-8, reporting its structure to `v`.
pub fn scan<V: Visitor>(s: &[u8], v: &mut V, stack: &mut Vec<u8>) -> Result<(), Invalid> {
    if simdutf8::basic::from_utf8(s).is_err() {
        return Err(Invalid);
    }
    scan_with(s, v, stack).map(|_| ())
}

/// Scans the JSON value at the start of `s` as [`scan`] does, for a caller that has checked
/// its UTF-8 already (with invalid UTF-8 the result is wrong, never unsafe), and returns where
/// it ends; what follows it is not looked at.
pub fn first_value<V: Visitor>(s: &[u8], v: &mut V, stack: &mut Vec<u8>) -> Result<usize, Invalid> {
    scan_prefix::<V, true>(s, v, stack).map(|(_, end)| end)
}

/// Scans `s`; returns its nesting depth.
fn scan_with<V: Visitor>(s: &[u8], v: &mut V, stack: &mut Vec<u8>) -> Result<usize, Invalid> {
    scan_prefix::<V, false>(s, v, stack).map(|(depth, _)| depth)
}

/// Scans the value at the start of `s`, and then (unless `PREFIX`) checks that only whitespace
/// follows; returns its nesting depth and its end.
#[inline(always)]
fn scan_prefix<V: Visitor, const PREFIX: bool>(
    s: &[u8],
    v: &mut V,
    stack: &mut Vec<u8>,
) -> Result<(usize, usize), Invalid> {
    stack.clear();
    let mut depth = 0;
    let mut i = skip_ws(s, 0);
    'value: loop {
        // A value starts at `i`.
        match *s.get(i).ok_or(Invalid)? {
            b'{' => {
                v.open(Kind::Object, i);
                depth = depth.max(stack.len() + 1);
                i = skip_ws(s, i + 1);
                if s.get(i) == Some(&b'}') {
                    i += 1;
                    v.close(i);
                } else {
                    stack.push(OBJ);
                    i = member_key(s, i, v)?;
                    continue 'value;
                }
            }
            b'[' => {
                v.open(Kind::Array, i);
                depth = depth.max(stack.len() + 1);
                i = skip_ws(s, i + 1);
                if s.get(i) == Some(&b']') {
                    i += 1;
                    v.close(i);
                } else {
                    stack.push(ARR);
                    continue 'value;
                }
            }
            b'"' => {
                let end = strings::string_end(s, i)?;
                v.scalar(Kind::String, i, end);
                i = end;
            }
            b'-' | b'0'..=b'9' => {
                let end = number_end(s, i)?;
                v.scalar(Kind::Scalar, i, end);
                i = end;
            }
            b't' => i = literal(s, i, b"true", v)?,
            b'f' => i = literal(s, i, b"false", v)?,
            b'n' => i = literal(s, i, b"null", v)?,
            _ => return Err(Invalid),
        }
        // A value ended at `i`: close containers until one wants another value.
        loop {
            if PREFIX && stack.is_empty() {
                return Ok((depth, i));
            }
            i = skip_ws(s, i);
            match stack.last() {
                None => {
                    return if i == s.len() {
                        Ok((depth, i))
                    } else {
                        Err(Invalid)
                    };
                }
                Some(&kind) => match (s.get(i), kind) {
                    (Some(b','), OBJ) => {
                        i = member_key(s, skip_ws(s, i + 1), v)?;
                        continue 'value;
                    }
                    (Some(b','), _) => {
                        i = skip_ws(s, i + 1);
                        continue 'value;
                    }
                    (Some(b'}'), OBJ) | (Some(b']'), ARR) => {
                        i += 1;
                        stack.pop();
                        v.close(i);
                    }
                    _ => return Err(Invalid),
                },
            }
        }
    }
}

/// Parses `"key" :` at `i`; returns where the member's value starts.
#[inline]
fn member_key<V: Visitor>(s: &[u8], i: usize, v: &mut V) -> Result<usize, Invalid> {
    if s.get(i) != Some(&b'"') {
        return Err(Invalid);
    }
    let end = strings::string_end(s, i)?;
    v.key(i, end);
    let i = skip_ws(s, end);
    if s.get(i) != Some(&b':') {
        return Err(Invalid);
    }
    Ok(skip_ws(s, i + 1))
}

#[inline]
fn literal<V: Visitor>(s: &[u8], i: usize, word: &[u8], v: &mut V) -> Result<usize, Invalid> {
    let end = i + word.len();
    if s.get(i..end) != Some(word) {
        return Err(Invalid);
    }
    v.scalar(Kind::Scalar, i, end);
    Ok(end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::line::strings::escape_end;
    use proptest::prelude::*;

    /// The end of the string at `i`, a byte or an escape at a time: what `string_end` must agree
    /// with.
    fn reference_string_end(s: &[u8], i: usize) -> Result<usize, Invalid> {
        let mut j = i + 1;
        loop {
            match *s.get(j).ok_or(Invalid)? {
                b'"' => return Ok(j + 1),
                b'\\' => j = escape_end(s, j)?,
                0x00..=0x1F => return Err(Invalid),
                _ => j += 1,
            }
        }
    }

    /// Pieces of string content, hostile to a 64-byte block scan: runs of backslashes, escaped
    /// quotes, `\u` escapes and surrogate pairs (whole, lone or broken), bad escapes, raw
    /// control bytes, multi-byte characters, and plain runs long enough for memchr.
    const PIECES: &[&str] = &[
        "a",
        "abcdefghij",
        "é",
        "😀",
        "\\n",
        "\\t",
        "\\\"",
        "\\\\",
        "\\\\\\",
        "\\\\\\\\",
        "\\/",
        "\\u0041",
        "\\u001b",
        "\\u00e9",
        "\\uFFfd",
        "\\uD7FF",
        "\\ud800",
        "\\udFFF",
        "\\u12",
        "\\u123g",
        "\\u\\u0041",
        "\\uD83D\\uDE00",
        "\\uD83D",
        "\\uDE00",
        "\\uD83Dx",
        "\\uD83D\\n",
        "\\uzzzz",
        "\\x",
        "\\",
        "\"",
        "\n",
        "\u{0}",
        "\u{1f}",
        " ",
        "\\\\\"",
        "\\\\\\\"",
    ];

    fn check_string_end(s: &[u8], i: usize) -> Result<(), TestCaseError> {
        let want = reference_string_end(s, i).ok();
        let text = String::from_utf8_lossy(s);
        prop_assert_eq!(strings::string_end(s, i).ok(), want, "{:?}", text);
        // Every path this CPU has: portable, SSE2, AVX2.
        for end in strings::content_end_each_way(s, i + 1) {
            prop_assert_eq!(end.ok(), want, "{:?}", text);
        }
        Ok(())
    }

    #[test]
    fn every_piece_at_every_offset_of_a_block() -> Result<(), TestCaseError> {
        let long = "x".repeat(300);
        for piece in PIECES.iter().copied().chain([long.as_str()]) {
            for offset in 0..140 {
                for tail in ["\"", "bc\"", "", "\\"] {
                    let s = format!("\"{}{piece}{piece}{tail}", "a".repeat(offset));
                    check_string_end(s.as_bytes(), 0)?;
                }
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        #[test]
        fn block_string_scan_agrees_with_a_byte_walk(
            lead in 0usize..70,
            pieces in prop::collection::vec((prop::sample::select(PIECES), 0usize..4), 0..60),
            close in any::<bool>(),
        ) {
            let mut s = vec![b' '; lead];
            s.push(b'"');
            for &(p, run) in &pieces {
                s.extend_from_slice(p.as_bytes());
                // Now and then a plain run of several blocks.
                if run == 0 {
                    s.extend(std::iter::repeat_n(b'y', 257 + p.len()));
                }
            }
            if close {
                s.extend_from_slice(b"\" ,");
            }
            for cut in [s.len(), s.len().saturating_sub(1), s.len() / 2] {
                check_string_end(&s[..cut.max(lead + 1)], lead)?;
            }
        }
    }

    fn valid(s: &str) -> bool {
        is_valid(s.as_bytes(), &mut Vec::new())
    }

    #[test]
    fn accepts_strict_json() {
        for s in [
            "0",
            "-0",
            "1.0",
            "1e400",
            "-1.5E+3",
            "\"\"",
            "\"\\ud83d\\ude00\"",
            "[]",
            "{}",
            " [1, {\"a\" : [true,false,null]}] ",
            "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000\"",
        ] {
            assert!(valid(s), "{s}");
        }
    }

    #[test]
    fn rejects_what_serde_json_rejects() {
        for s in [
            "",
            " ",
            "01",
            "1.",
            ".5",
            "-",
            "+1",
            "1e",
            "NaN",
            "Infinity",
            "tru",
            "nul",
            "[1,]",
            "{\"a\":1,}",
            "{\"a\"}",
            "{1:2}",
            "[1 2]",
            "\"\\x\"",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\\ud800\\u0041\"",
            "\"a\tb\"",
            "\"abc",
            "[",
            "{}{}",
            "1 2",
        ] {
            assert!(!valid(s), "{s:?}");
        }
    }

    #[test]
    fn utf8_is_validated_in_strings() {
        let mut stack = Vec::new();
        for (bytes, ok) in [
            (&b"\"\xc3\xa9\xe2\x86\x92\xf0\x9f\x98\x80\""[..], true),
            (b"\"\xc0\xaf\"", false),
            (b"\"\xed\xa0\x80\"", false),
            (b"\"\xf4\x90\x80\x80\"", false),
            (b"\"\xe2\x86\"", false),
            (b"\"\xff\"", false),
            (b"\xc3\xa9", false),
            (b"\"abcdefghijklmnop\x80qrst\"", false),
        ] {
            assert_eq!(is_valid(bytes, &mut stack), ok, "{bytes:?}");
            assert_eq!(std::str::from_utf8(bytes).is_ok() && ok, ok);
        }
    }

    /// Pieces of UTF-8 for `utf8_is_checked_in_every_kind_of_string`: whole characters of every
    /// length, and broken, overlong, surrogate and out-of-range ones.
    const UTF8_PIECES: &[&[u8]] = &[
        b"\xc3\xa9",
        b"\xe2\x86\x92",
        b"\xf0\x9f\x98\x80",
        b"\xc3",
        b"\x80",
        b"\xe2\x86",
        b"\xf0\x9f\x98",
        b"\xc0\xaf",
        b"\xed\xa0\x80",
        b"\xf4\x90\x80\x80",
        b"\xff",
        b"\\n",
        b"\\u00e9",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// A line's UTF-8 is checked in its strings only, wherever the scan of a string meets it
        /// (the first sixteen bytes, a block, a long plain run): the verdict is serde_json's.
        #[test]
        fn utf8_is_checked_in_every_kind_of_string(
            strings in prop::collection::vec(
                (
                    prop_oneof![0usize..8, 0usize..400],
                    prop::collection::vec(prop::sample::select(UTF8_PIECES), 0..3),
                    prop_oneof![0usize..8, 0usize..300],
                ),
                1..4,
            ),
            outside in prop::option::of(0usize..4),
        ) {
            let mut line = b"[".to_vec();
            for (k, (before, pieces, after)) in strings.iter().enumerate() {
                if k > 0 {
                    line.push(b',');
                }
                if outside == Some(k) {
                    line.extend_from_slice(b"\xc3\xa9");
                }
                line.push(b'"');
                line.extend(std::iter::repeat_n(b'a', *before));
                for piece in pieces {
                    line.extend_from_slice(piece);
                }
                line.extend(std::iter::repeat_n(b'z', *after));
                line.push(b'"');
            }
            line.push(b']');
            let theirs = serde_json::from_slice::<serde_json::Value>(&line).is_ok();
            prop_assert_eq!(is_valid(&line, &mut Vec::new()), theirs, "{:?}", String::from_utf8_lossy(&line));
        }
    }

    #[test]
    fn deep_nesting_does_not_recurse() {
        let depth = 1_000_000;
        let s = "[".repeat(depth) + &"]".repeat(depth);
        assert!(valid(&s));
        assert!(!valid(&s[..s.len() - 1]));
    }
}
