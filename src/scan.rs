//! Scanning one line of JSON: strict RFC 8259 validation and, for lines that must be cut, a flat
//! index of their values.
//!
//! The scanner is one iterative loop with an explicit stack of open containers, so nesting depth
//! costs heap bytes, never call-stack frames. It is generic over a [`Visitor`]: validation uses a
//! visitor that does nothing (and compiles away), planning uses [`IndexBuilder`].
//!
//! Strictness matches serde_json's except where noted: lone surrogate escapes (`"\ud800"`) are
//! rejected because they cannot become valid UTF-8; there is no depth limit (serde_json stops at
//! 128 levels); numbers of any size are accepted (serde_json without `arbitrary_precision` rejects
//! `1e400`). UTF-8 is checked first, in one SIMD pass (simdutf8); strings are then scanned 64 bytes
//! at a time from bit masks of their quotes, backslashes and control bytes ([`crate::strings`]).

use crate::fields::{FieldClass, FieldClasses};
use crate::strings;

/// What a node in the index is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Object,
    Array,
    String,
    /// A number, `true`, `false` or `null`: kept as its exact text.
    Scalar,
}

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
        if self.depth == 1 && &self.line[start + 1..end - 1] == self.name {
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

/// The line is not valid JSON. Where it went wrong is not kept: a malformed line is logged as a
/// record of its text either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Invalid;

const OBJ: u8 = 0;
const ARR: u8 = 1;

#[inline]
fn skip_ws(s: &[u8], mut i: usize) -> usize {
    while let Some(&b) = s.get(i) {
        if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            break;
        }
        i += 1;
    }
    i
}

/// True when `s` is one strict JSON text in valid UTF-8 (surrounding whitespace allowed).
pub fn is_valid(s: &[u8], stack: &mut Vec<u8>) -> bool {
    scan(s, &mut Validate, stack).is_ok()
}

/// The nesting depth of `s` (`1` is `[1]`, `0` a scalar) if it is one strict JSON text in valid
/// UTF-8.
pub fn valid_depth(s: &[u8], stack: &mut Vec<u8>) -> Result<usize, Invalid> {
    if simdutf8::basic::from_utf8(s).is_err() {
        return Err(Invalid);
    }
    scan_with(s, &mut Validate, stack)
}

/// Scans `s` as one JSON text in valid UTF-8, reporting its structure to `v`.
pub fn scan<V: Visitor>(s: &[u8], v: &mut V, stack: &mut Vec<u8>) -> Result<(), Invalid> {
    if simdutf8::basic::from_utf8(s).is_err() {
        return Err(Invalid);
    }
    scan_with(s, v, stack).map(|_| ())
}

/// Scans `s`; returns its nesting depth.
fn scan_with<V: Visitor>(s: &[u8], v: &mut V, stack: &mut Vec<u8>) -> Result<usize, Invalid> {
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
            i = skip_ws(s, i);
            match stack.last() {
                None => {
                    return if i == s.len() {
                        Ok(depth)
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

/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` starting at `i`; returns its end.
fn number_end(s: &[u8], mut i: usize) -> Result<usize, Invalid> {
    let digit = |i: usize| s.get(i).is_some_and(u8::is_ascii_digit);
    let digits = |mut i: usize| {
        while digit(i) {
            i += 1;
        }
        i
    };
    if s.get(i) == Some(&b'-') {
        i += 1;
    }
    match s.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits(i),
        _ => return Err(Invalid),
    }
    if s.get(i) == Some(&b'.') {
        if !digit(i + 1) {
            return Err(Invalid);
        }
        i = digits(i + 1);
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(s.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digit(i) {
            return Err(Invalid);
        }
        i = digits(i);
    }
    Ok(i)
}

/// The escapes other than `\u`: `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`.
pub(crate) static SIMPLE_ESCAPE: [bool; 256] = {
    let mut t = [false; 256];
    let chars = b"\"\\/bfnrt";
    let mut k = 0;
    while k < chars.len() {
        t[chars[k] as usize] = true;
        k += 1;
    }
    t
};

/// The value of each hex digit; 0xFF for every other byte.
static HEX: [u8; 256] = {
    let mut t = [0xFF; 256];
    let mut k = 0;
    while k < 10 {
        t[b'0' as usize + k] = k as u8;
        k += 1;
    }
    let mut k = 0;
    while k < 6 {
        t[b'a' as usize + k] = 10 + k as u8;
        t[b'A' as usize + k] = 10 + k as u8;
        k += 1;
    }
    t
};

/// The four hex digits at `i` as a number; `None` when one is not a hex digit.
#[inline]
pub(crate) fn hex4(s: &[u8], i: usize) -> Option<u32> {
    let digits = s.get(i..)?.first_chunk::<4>()?.map(|b| HEX[b as usize]);
    if digits.iter().any(|&d| d > 0xF) {
        return None;
    }
    Some(digits.iter().fold(0, |n, &d| n << 4 | u32::from(d)))
}

/// The escape whose backslash is at `j`; returns the index after it (after both halves of a
/// surrogate pair).
#[inline(always)]
pub(crate) fn escape_end(s: &[u8], j: usize) -> Result<usize, Invalid> {
    match s.get(j + 1) {
        Some(&c) if SIMPLE_ESCAPE[c as usize] => Ok(j + 2),
        Some(b'u') => {
            let cp = hex4(s, j + 2).ok_or(Invalid)?;
            match cp {
                0xD800..=0xDBFF => {
                    if s.get(j + 6) == Some(&b'\\') && s.get(j + 7) == Some(&b'u') {
                        match hex4(s, j + 8) {
                            Some(0xDC00..=0xDFFF) => Ok(j + 12),
                            _ => Err(Invalid),
                        }
                    } else {
                        Err(Invalid)
                    }
                }
                0xDC00..=0xDFFF => Err(Invalid),
                _ => Ok(j + 6),
            }
        }
        _ => Err(Invalid),
    }
}

/// Strings shorter than this are never taken for base64 payloads.
pub const PAYLOAD_MIN_LEN: usize = 256;

/// True for a string (raw content between the quotes) that is base64 by its alphabet and
/// length: at least [`PAYLOAD_MIN_LEN`] bytes of `A-Z a-z 0-9 + / =` (`=` only at the end),
/// with upper case, lower case and digits all present, so that long runs of one letter, words
/// and hex digests are not mistaken for one. Strings over 64 KiB are judged by samples.
pub fn is_base64_payload(s: &[u8]) -> bool {
    if s.len() < PAYLOAD_MIN_LEN {
        return false;
    }
    let body = s
        .strip_suffix(b"==")
        .or_else(|| s.strip_suffix(b"="))
        .unwrap_or(s);
    // A long string is judged by its first and last 16 KiB and 32 windows in between: a
    // screenshot is megabytes, and reading all of it would cost more than the rest of the line.
    const EDGE: usize = 16 << 10;
    if body.len() > 4 * EDGE {
        let step = (body.len() - 2 * EDGE) / 33;
        let windows = (1..33).map(|k| &body[EDGE + k * step..EDGE + k * step + 256]);
        let (head, tail) = (&body[..EDGE], &body[body.len() - EDGE..]);
        return base64_classes(std::iter::once(head).chain(windows).chain([tail]));
    }
    base64_classes(std::iter::once(body))
}

/// True when every byte of `parts` is base64 and upper case, lower case and digits all occur.
fn base64_classes<'a>(parts: impl Iterator<Item = &'a [u8]>) -> bool {
    // Checked a block at a time with branch-free compares (they vectorize), so ordinary text is
    // turned away within its first 64 bytes.
    let (mut upper, mut lower, mut digit) = (false, false, false);
    for block in parts.flat_map(|p| p.chunks(64)) {
        let mut bad = false;
        for &b in block {
            let u = b.wrapping_sub(b'A') < 26;
            let l = b.wrapping_sub(b'a') < 26;
            let d = b.wrapping_sub(b'0') < 10;
            upper |= u;
            lower |= l;
            digit |= d;
            bad |= !(u | l | d | (b == b'+') | (b == b'/'));
        }
        if bad {
            return false;
        }
    }
    upper && lower && digit
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
    /// Set when the line has more than [`MAX_NODES`] values: the index stops growing and the
    /// line is reduced (`reduce.rs`) before it is planned.
    pub overflow: bool,
    /// The deepest nesting of containers seen.
    pub depth: usize,
}

/// The most values indexed in one line. The index and the plan take about 70 bytes a value, so
/// this caps a line's planning memory near 100 MiB (a million-element array still fits).
pub const MAX_NODES: usize = 1_500_000;

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
            overflow: false,
            depth: 0,
        }
    }

    fn push(&mut self, kind: Kind, start: usize, end: usize) -> u32 {
        let (key_start, key_end) = std::mem::take(&mut self.key);
        let idx = self.nodes.len() as u32;
        let (parent, parent_class) = match self.open.last() {
            Some(&p) => {
                self.nodes[p as usize].children += 1;
                (p, self.nodes[p as usize].class)
            }
            None => (idx, FieldClass::Normal),
        };
        let own = if key_end > key_start + 2 {
            self.fields
                .class_of(&self.line[key_start as usize + 1..key_end as usize - 1])
        } else {
            None
        };
        let class = FieldClass::inherit(own, parent_class);
        let payload = self.payloads
            && kind == Kind::String
            && is_base64_payload(&self.line[start + 1..end - 1]);
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
        let idx = if self.overflow {
            u32::MAX
        } else {
            self.push(kind, start, start)
        };
        self.open.push(idx);
        self.depth = self.depth.max(self.open.len());
    }
    fn close(&mut self, end: usize) {
        if let Some(idx) = self.open.pop().filter(|&i| i != u32::MAX) {
            let next = self.nodes.len() as u32;
            let node = &mut self.nodes[idx as usize];
            node.end = end as u32;
            node.next = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        // What a CPU without AVX2 runs.
        let baseline = strings::content_end_baseline(s, i + 1).ok();
        prop_assert_eq!(baseline, want, "{:?}", text);
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

    #[test]
    fn base64_payloads_by_alphabet_and_length() {
        let b64: Vec<u8> = (0..400).map(|i| b"Ab3+/xYz9Q"[i % 10]).collect();
        assert!(is_base64_payload(&b64));
        assert!(is_base64_payload(&[&b64[..], b"=="].concat()));
        assert!(!is_base64_payload(&b64[..200]), "too short");
        assert!(!is_base64_payload(&vec![b'x'; 1000]), "one letter");
        assert!(!is_base64_payload(&b"0123456789abcdef".repeat(40)), "hex");
        assert!(
            !is_base64_payload(&[&b64[..], b" word"].concat()),
            "a space"
        );
        assert!(
            !is_base64_payload(&[&b64[..], b"\\n"].concat()),
            "an escape"
        );
    }

    #[test]
    fn deep_nesting_does_not_recurse() {
        let depth = 1_000_000;
        let s = "[".repeat(depth) + &"]".repeat(depth);
        assert!(valid(&s));
        assert!(!valid(&s[..s.len() - 1]));
    }
}
