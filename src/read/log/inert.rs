//! Text from a log made inert for a terminal and for a page. Control characters (C0, DEL,
//! C1, ESC), bidi controls (U+061C, U+200E/F, U+202A–202E, U+2066–2069), zero-width and
//! invisible characters (U+200B–200D, U+2060–2064, U+FEFF) and line/paragraph separators
//! (U+2028/2029) are escaped in every format: as `\uXXXX` inside JSON strings, as `\e`,
//! `\n`, `\u{202e}`… in text, so no string can reorder, hide or forge what is around it.

use std::borrow::Cow;

/// Text made safe for a terminal: control characters become visible escapes (`\e`, `\r`,
/// `\t`, `\n`, `\x07`, `\u{9b}`), and so do bidi, zero-width and separator characters
/// (`\u{202e}`), so nothing in a log can clear a screen, set a title, colour the output,
/// reorder what is shown or start a line of its own.
pub fn escape_controls(s: &str) -> String {
    if !s.chars().any(is_unsafe_char) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '\x1b' => out.push_str("\\e"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 || c == '\x7f' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if is_unsafe_char(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// The terminal style sequences (SGR: `ESC[` parameters `m`, as coloured output has them) in
/// `s`: each one's byte range and parameters, in order.
pub fn sgr_sequences(s: &str) -> impl Iterator<Item = (std::ops::Range<usize>, &str)> {
    let b = s.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        while let Some(k) = memchr::memchr(0x1b, &b[at..]) {
            let start = at + k;
            at = start + 1;
            if b.get(start + 1) != Some(&b'[') {
                continue;
            }
            let params = b[start + 2..]
                .iter()
                .take_while(|c| c.is_ascii_digit() || matches!(c, b';' | b':'))
                .count();
            let end = start + 2 + params;
            if b.get(end) == Some(&b'm') {
                at = end + 1;
                return Some((start..end + 1, &s[start + 2..end]));
            }
        }
        None
    })
}

/// `s` without its terminal style sequences ([`sgr_sequences`]): what `--summary`'s text lines
/// show of coloured output. Other controls are left for [`escape_controls`].
pub fn strip_sgr(s: &str) -> std::borrow::Cow<'_, str> {
    let mut out = String::new();
    let mut done = 0;
    for (range, _) in sgr_sequences(s) {
        out.push_str(&s[done..range.start]);
        done = range.end;
    }
    if done == 0 {
        return std::borrow::Cow::Borrowed(s);
    }
    out.push_str(&s[done..]);
    std::borrow::Cow::Owned(out)
}

/// True for a character that acts on a terminal or on how text around it reads: C0, DEL, C1,
/// bidi controls, zero-width and invisible characters, line and paragraph separators.
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
        )
}

/// JSON text with every unsafe character ([`is_unsafe_char`]) outside ASCII, and DEL, written
/// as a `\uXXXX` escape. In valid JSON these can only be inside strings, where the escape
/// means the same character; C0 characters are already escaped in valid JSON. Text that is
/// not JSON stays not JSON, with the same characters escaped.
pub fn inert_json(text: &[u8]) -> Cow<'_, [u8]> {
    let risky = |b: &u8| *b >= 0x7f;
    if !text.iter().any(risky) {
        return Cow::Borrowed(text);
    }
    let mut out: Option<Vec<u8>> = None;
    let mut done = 0;
    for chunk in text.utf8_chunks() {
        let valid = chunk.valid();
        let base = chunk.valid().as_ptr() as usize - text.as_ptr() as usize;
        for (i, c) in valid.char_indices() {
            if c == '\x7f' || (c as u32 >= 0x80 && is_unsafe_char(c)) {
                let o = out.get_or_insert_with(|| Vec::with_capacity(text.len() + 16));
                o.extend_from_slice(&text[done..base + i]);
                o.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes());
                done = base + i + c.len_utf8();
            }
        }
    }
    match out {
        Some(mut o) => {
            o.extend_from_slice(&text[done..]);
            Cow::Owned(o)
        }
        None => Cow::Borrowed(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// #50: `--summary` printed colour codes as text; its lines drop them, and keep every
    /// other control for escape_controls to show.
    #[test]
    fn strip_sgr_drops_colours_and_keeps_other_controls() {
        assert_eq!(strip_sgr("\x1b[31m⎯⎯\x1b[39m ok\x1b[2K"), "⎯⎯ ok\x1b[2K");
        assert_eq!(strip_sgr("plain"), "plain");
        assert_eq!(strip_sgr("\x1b[1;38;5;196mX\x1b[m"), "X");
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(
            escape_controls("a\u{1b}[2J\u{1b}]0;pwned\u{7}\r\tb\u{9b}c"),
            "a\\e[2J\\e]0;pwned\\x07\\r\\tb\\u{9b}c"
        );
        assert_eq!(escape_controls("plain é"), "plain é");
    }

    /// #28.6: bidi overrides, isolates, separators and zero-width characters passed raw.
    #[test]
    fn bidi_and_zero_width_characters_are_escaped() {
        assert_eq!(
            escape_controls("safe \u{202e}gnp.exe\u{2066}\u{2028}\u{200b}"),
            "safe \\u{202e}gnp.exe\\u{2066}\\u{2028}\\u{200b}"
        );
        let json = "{\"a\":\"x\u{202e}y\u{9b}z\u{7f}é\"}";
        let inert = inert_json(json.as_bytes());
        assert_eq!(&*inert, r#"{"a":"x\u202ey\u009bz\u007fé"}"#.as_bytes());
        let back: Value = serde_json::from_slice(&inert).unwrap();
        assert_eq!(back["a"], "x\u{202e}y\u{9b}z\u{7f}é");
        assert_eq!(&*inert_json(b"\xff\xc2\x9b"), b"\xff\\u009b");
    }
}
