//! The truncation markers and JSON string escaping.
//!
//! A string marker is rendered from a template such as `[TRUNCATED: {original} → {kept} bytes]`.
//! Both numbers count bytes of the string's JSON text between its quotes, escapes counted as
//! written: `{original}` is the whole value, `{kept}` the head and tail that were kept (the
//! marker's own bytes are not counted). Arrays and objects get `[TRUNCATED: 57 → 6 items]` and
//! `[TRUNCATED: 900 → 40 keys]`, counting elements and members.

use std::fmt;

pub const DEFAULT_MARKER: &str = "[TRUNCATED: {original} → {kept} bytes]";

#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    /// Literal text, already JSON-escaped.
    Text(String),
    Original,
    Kept,
}

/// A parsed `--marker` template. Rendering never needs escaping: literal text is escaped once,
/// here, and the numbers are digits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarkerTemplate {
    pieces: Vec<Piece>,
}

impl MarkerTemplate {
    /// The marker's text before its first number, as written in a JSON string (`[TRUNCATED: `
    /// for the default): how a reader finds a cut. Empty when the template starts with a
    /// number.
    pub fn prefix(&self) -> &str {
        match self.pieces.first() {
            Some(Piece::Text(t)) => t,
            _ => "",
        }
    }

    /// Parses a template; `{original}` and `{kept}` are the placeholders, any other text is kept
    /// literally.
    pub fn parse(template: &str) -> MarkerTemplate {
        let mut pieces = Vec::new();
        let mut rest = template;
        let mut text = String::new();
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix("{original}") {
                flush(&mut text, &mut pieces);
                pieces.push(Piece::Original);
                rest = r;
            } else if let Some(r) = rest.strip_prefix("{kept}") {
                flush(&mut text, &mut pieces);
                pieces.push(Piece::Kept);
                rest = r;
            } else {
                let c = rest.chars().next().unwrap_or_default();
                text.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
        flush(&mut text, &mut pieces);
        return MarkerTemplate { pieces };

        fn flush(text: &mut String, pieces: &mut Vec<Piece>) {
            if !text.is_empty() {
                let mut escaped = Vec::new();
                escape_str(text, &mut escaped);
                pieces.push(Piece::Text(String::from_utf8(escaped).unwrap_or_default()));
                text.clear();
            }
        }
    }

    /// Parses a template given by a user, refusing one that would hide cuts or that names a
    /// placeholder that does not exist: it must hold `{original}` or `{kept}`, and no other
    /// `{name}`.
    pub fn check(template: &str) -> Result<MarkerTemplate, String> {
        if template.trim().is_empty() {
            return Err("an empty marker would make cuts invisible".into());
        }
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            let after = &rest[open + 1..];
            let name_len = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            let name = &after[..name_len];
            if !name.is_empty()
                && after[name_len..].starts_with('}')
                && !matches!(name, "original" | "kept")
            {
                return Err(format!(
                    "unknown placeholder {{{name}}} in {template:?}; the placeholders are \
                     {{original}} and {{kept}}"
                ));
            }
            rest = after;
        }
        if !template.contains("{original}") && !template.contains("{kept}") {
            return Err(format!(
                "{template:?} has no {{original}} or {{kept}}: a reader could not tell how much \
                 was cut"
            ));
        }
        Ok(MarkerTemplate::parse(template))
    }

    /// Length in bytes of the rendered, escaped marker.
    #[inline]
    pub fn len(&self, original: usize, kept: usize) -> usize {
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.len(),
                Piece::Original => digits(original),
                Piece::Kept => digits(kept),
            })
            .sum()
    }

    pub fn render(&self, original: usize, kept: usize, out: &mut Vec<u8>) {
        for p in &self.pieces {
            match p {
                Piece::Text(t) => out.extend_from_slice(t.as_bytes()),
                Piece::Original => push_usize(out, original),
                Piece::Kept => push_usize(out, kept),
            }
        }
    }
}

impl Default for MarkerTemplate {
    fn default() -> Self {
        MarkerTemplate::parse(DEFAULT_MARKER)
    }
}

/// What a container marker counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Items,
    Keys,
}

impl Unit {
    /// The unit's word in a marker.
    pub const fn as_str(self) -> &'static str {
        match self {
            Unit::Items => "items",
            Unit::Keys => "keys",
        }
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

const CONTAINER_MARKER_FIXED: usize = "[TRUNCATED:  →  ]".len();

/// Length of `[TRUNCATED: {original} → {kept} items|keys]`.
pub fn container_marker_len(original: usize, kept: usize, unit: Unit) -> usize {
    CONTAINER_MARKER_FIXED + digits(original) + digits(kept) + unit.as_str().len()
}

pub fn render_container_marker(original: usize, kept: usize, unit: Unit, out: &mut Vec<u8>) {
    out.extend_from_slice(b"[TRUNCATED: ");
    push_usize(out, original);
    out.extend_from_slice(" → ".as_bytes());
    push_usize(out, kept);
    out.push(b' ');
    out.extend_from_slice(unit.as_str().as_bytes());
    out.push(b']');
}

/// Writes the descriptor that stands in for a base64 payload of `len` bytes:
/// `[IMAGE OMITTED: image/png, 604,112 bytes base64]`, `[DATA OMITTED: application/pdf, …]`, or
/// `[BASE64 OMITTED: 1,234 bytes]` when the media type is not known. `media` is raw JSON string
/// content without escapes.
pub fn render_payload_descriptor(media: Option<&[u8]>, len: usize, out: &mut Vec<u8>) {
    match media {
        Some(m) => {
            out.extend_from_slice(if m.starts_with(b"image/") {
                b"[IMAGE OMITTED: "
            } else {
                b"[DATA OMITTED: "
            });
            out.extend_from_slice(m);
            out.extend_from_slice(b", ");
            push_grouped(out, len);
            out.extend_from_slice(b" bytes base64]");
        }
        None => {
            out.extend_from_slice(b"[BASE64 OMITTED: ");
            push_grouped(out, len);
            out.extend_from_slice(b" bytes]");
        }
    }
}

/// Length of [`render_payload_descriptor`]'s output.
pub fn payload_descriptor_len(media: Option<&[u8]>, len: usize) -> usize {
    let number = digits(len) + (digits(len) - 1) / 3;
    match media {
        Some(m) => {
            let head = if m.starts_with(b"image/") { 16 } else { 15 };
            head + m.len() + 2 + number + 14
        }
        None => 17 + number + 7,
    }
}

/// Writes `n` with thousands separators: `604,112`.
pub fn push_grouped(out: &mut Vec<u8>, n: usize) {
    let mut plain = Vec::with_capacity(20);
    push_usize(&mut plain, n);
    for (k, d) in plain.iter().enumerate() {
        if k > 0 && (plain.len() - k) % 3 == 0 {
            out.push(b',');
        }
        out.push(*d);
    }
}

/// Number of decimal digits of `n`.
#[inline]
pub fn digits(mut n: usize) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

pub fn push_usize(out: &mut Vec<u8>, n: usize) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut n = n;
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// Bytes that `c` takes once escaped inside a JSON string.
#[inline]
pub fn escaped_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

#[inline]
pub fn escape_char(c: char, out: &mut Vec<u8>) {
    match c {
        '"' => out.extend_from_slice(b"\\\""),
        '\\' => out.extend_from_slice(b"\\\\"),
        '\n' => out.extend_from_slice(b"\\n"),
        '\r' => out.extend_from_slice(b"\\r"),
        '\t' => out.extend_from_slice(b"\\t"),
        '\u{8}' => out.extend_from_slice(b"\\b"),
        '\u{c}' => out.extend_from_slice(b"\\f"),
        c if (c as u32) < 0x20 => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[(c as usize) >> 4]);
            out.push(HEX[(c as usize) & 15]);
        }
        c => {
            let mut b = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
        }
    }
}

pub fn escape_str(s: &str, out: &mut Vec<u8>) {
    for c in s.chars() {
        escape_char(c, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_the_default_marker() {
        let m = MarkerTemplate::default();
        let mut out = Vec::new();
        m.render(45231, 5000, &mut out);
        assert_eq!(out, "[TRUNCATED: 45231 → 5000 bytes]".as_bytes());
        assert_eq!(m.len(45231, 5000), out.len());
    }

    #[test]
    fn escapes_template_text() {
        let m = MarkerTemplate::parse("\"cut\"\t{kept}/{original}{");
        let mut out = Vec::new();
        m.render(10, 2, &mut out);
        assert_eq!(out, b"\\\"cut\\\"\\t2/10{");
        assert_eq!(m.len(10, 2), out.len());
    }

    #[test]
    fn container_marker_length_matches() {
        let mut out = Vec::new();
        render_container_marker(57, 6, Unit::Items, &mut out);
        assert_eq!(out, "[TRUNCATED: 57 → 6 items]".as_bytes());
        assert_eq!(container_marker_len(57, 6, Unit::Items), out.len());
    }

    #[test]
    fn payload_descriptors() {
        for (media, len, want) in [
            (
                Some(&b"image/png"[..]),
                604_112,
                "[IMAGE OMITTED: image/png, 604,112 bytes base64]",
            ),
            (
                Some(b"application/pdf"),
                999,
                "[DATA OMITTED: application/pdf, 999 bytes base64]",
            ),
            (None, 1_234_567, "[BASE64 OMITTED: 1,234,567 bytes]"),
            (None, 100, "[BASE64 OMITTED: 100 bytes]"),
        ] {
            let mut out = Vec::new();
            render_payload_descriptor(media, len, &mut out);
            assert_eq!(String::from_utf8(out.clone()).unwrap(), want);
            assert_eq!(payload_descriptor_len(media, len), out.len());
        }
    }

    #[test]
    fn digits_counts() {
        assert_eq!(digits(0), 1);
        assert_eq!(digits(9), 1);
        assert_eq!(digits(10), 2);
        assert_eq!(digits(usize::MAX), 20);
    }
}
