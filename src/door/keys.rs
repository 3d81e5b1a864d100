//! A private key written as lines of text, followed on the read side. A log written without
//! `--redact` holds each line of such a key (`cat key.pem` in a stream that mixes text and
//! JSON) as a line of its own: a `non_json` record of the log, or a line of a raw stream. No
//! such line alone shows it is a key's, so the readers follow the blocks from line to line as
//! the log's engine does ([`Redactor::key_line`]): forward with [`Forward`], and from the end
//! by looking back from each line for the one that decides ([`before`]).

use std::borrow::Cow;

use crate::cut::redact::{
    KEY_LINES, KeyLines, KeyMarks, Redactor, is_json_line, text_line_decides,
};

/// The door of a reader that reads a log forward, line after line: [`super::line_in`], and
/// the lines of a key's block replaced as the log's engine replaces them.
#[derive(Debug, Default)]
pub struct Forward {
    keys: KeyLines,
}

impl Forward {
    /// `line` as the read side reads it, the next line of the log after the last one given.
    pub fn line<'a>(&mut self, line: &'a [u8]) -> Cow<'a, [u8]> {
        let Some(r) = super::redactor() else {
            return Cow::Borrowed(line);
        };
        match followed(r, line, &mut self.keys) {
            Some(replaced) => Cow::Owned(replaced),
            None => super::line_in(line),
        }
    }

    /// A reader that starts in the middle of a log: where the line before its first is.
    pub fn after(keys: KeyLines) -> Forward {
        Forward { keys }
    }

    /// A line past the readers' cap has ended, given as its first bytes: what the whole of it
    /// said of keys' blocks ([`KeyMarks`], fed every piece) stands.
    pub fn after_pieces(&mut self, marks: &KeyMarks) {
        self.keys.after_pieces(marks);
    }

    /// [`Forward::line`] for a line past the readers' cap, given as its `first` bytes: where
    /// it leaves keys' blocks is what all of it says ([`Forward::after_pieces`]), counted once.
    pub fn long_line<'a>(&mut self, first: &'a [u8], marks: &KeyMarks) -> Cow<'a, [u8]> {
        let before = self.keys;
        let line = self.line(first);
        self.keys = before;
        self.after_pieces(marks);
        line
    }
}

/// What `line` becomes as a line of a private key's block ([`Redactor::key_line`]), the
/// `text` of a `non_json` record (text, whatever it reads as) or a line of the log; `None`
/// when it is none. `keys` moves on.
fn followed(r: &Redactor, line: &[u8], keys: &mut KeyLines) -> Option<Vec<u8>> {
    // Outside a block, a line without a header leaves the state as it is; a blank line is
    // not a line of a block (the log's engine passes it by).
    if !keys.inside() && memchr::memmem::find(line, b"-----BEGIN ").is_none()
        || crate::line::is_blank(line)
    {
        return None;
    }
    let Some(mut record) = non_json_record(line) else {
        return r.key_line(line, keys);
    };
    let text = record.get("text")?.as_str()?;
    let replaced = r.text_key_line(text.as_bytes(), keys)?;
    record.insert(
        "text".into(),
        String::from_utf8_lossy(&replaced).into_owned().into(),
    );
    serde_json::to_vec(&record).ok()
}

/// The log's record of a line that was not JSON (`{"type":"non_json","text":…}`), parsed.
fn non_json_record(line: &[u8]) -> Option<serde_json::Map<String, serde_json::Value>> {
    memchr::memmem::find(line, b"\"non_json\"")?;
    match serde_json::from_slice(line).ok()? {
        serde_json::Value::Object(o)
            if o.get("type").and_then(|t| t.as_str()) == Some("non_json")
                && o.get("text").is_some_and(|t| t.is_string()) =>
        {
            Some(o)
        }
        _ => None,
    }
}

/// True when `line` is a JSON line of the log as [`Redactor::key_line`] takes one inside a
/// block (valid JSON), and not a `non_json` record: its own string may open a block, but it is
/// never a line of one.
fn is_json(line: &[u8]) -> bool {
    is_json_line(line, true) && non_json_record(line).is_none()
}

/// True when where `line` leaves keys' blocks does not depend on the lines before it: a JSON
/// line, or a line of text (a record's) with a private key's footer or header that decides
/// ([`text_line_decides`]; the record's JSON around its text holds neither).
fn decides(line: &[u8]) -> bool {
    is_json(line) || text_line_decides(line)
}

/// True when `line` may be replaced as a line of a key's block: a `non_json` record or a line
/// of text, not a JSON line.
pub fn may_be_a_keys(line: &[u8]) -> bool {
    !crate::line::is_blank(line) && !is_json(line)
}

/// A line longer than this is held by [`before`] as what it says of keys' blocks alone: a
/// key's body lines are 64 bytes.
const HELD_MAX: usize = 64 << 10;

/// Where a reader that gives a log's lines from its end is in keys' blocks before a line:
/// `back` gives the lines before it, the nearest first (`None` at the log's start). It reads
/// back to a line that decides (or as many lines as a block spans, blank lines left out) and
/// follows them forward. Returns, for each line read back, the nearest first, where the log is
/// after it: the first is where it is before the line asked about, and each next one where it
/// is before the line read back before it (the last, the line that decided, has none).
pub fn before(mut back: impl FnMut() -> Option<Vec<u8>>) -> Vec<KeyLines> {
    let mut lines = Vec::new();
    let mut counted = 0;
    while counted <= KEY_LINES as usize {
        let Some(mut line) = back() else { break };
        let decided = decides(&line);
        if !crate::line::is_blank(&line) {
            counted += 1;
        }
        if line.len() > HELD_MAX {
            line = what_it_says(&line);
        }
        lines.push(line);
        if decided {
            break;
        }
    }
    let mut keys = KeyLines::default();
    let mut states = vec![KeyLines::default(); lines.len()];
    if let Some(r) = super::redactor() {
        for (k, line) in lines.iter().enumerate().rev() {
            followed(r, line, &mut keys);
            states[k] = keys;
        }
    }
    states
}

/// A short line that says of keys' blocks what the long `line` says: a JSON line with a
/// header at its end, or none; a line of text with its first and last header or footer.
fn what_it_says(line: &[u8]) -> Vec<u8> {
    let mut marks = KeyMarks::default();
    marks.see(line);
    if is_json(line) {
        let mut keys = KeyLines::default();
        keys.after_pieces(&marks);
        return if keys.inside() {
            br#"{"t":"-----BEGIN PRIVATE KEY-----"}"#.to_vec()
        } else {
            b"{}".to_vec()
        };
    }
    said_by(&marks)
}

/// A short line that says of keys' blocks what a line past the readers' cap said, all of it
/// read ([`KeyMarks`]): taken for text, as [`KeyLines::after_pieces`] takes it.
pub fn said_by(marks: &KeyMarks) -> Vec<u8> {
    let (first, last) = marks.ends();
    let mut said = Vec::new();
    for mark in [first, last].into_iter().flatten() {
        said.extend_from_slice(if mark { HEADER } else { FOOTER });
        said.push(b' ');
    }
    said.push(b'.');
    said
}

const HEADER: &[u8] = b"-----BEGIN PRIVATE KEY-----";
const FOOTER: &[u8] = b"-----END PRIVATE KEY-----";

/// What `line` becomes as a line of a private key's block when `keys` is where the log is
/// before it ([`before`]); `None` when it is not one, and without `--redact`.
pub fn replaced_after(mut keys: KeyLines, line: &[u8]) -> Option<Vec<u8>> {
    followed(super::redactor()?, line, &mut keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line that decides leaves keys' blocks where it leaves them whatever came before it:
    /// the look back from the end stops there and follows from outside a block.
    #[test]
    fn a_line_that_decides_leaves_the_blocks_where_it_does_from_anywhere() {
        let r = Redactor::with_secrets(&[]);
        let lines: &[&[u8]] = &[
            b"-----BEGIN RSA PRIVATE KEY-----",
            b"-----END RSA PRIVATE KEY-----",
            b"-----END RSA PRIVATE KEY----- -----BEGIN EC PRIVATE KEY-----",
            b"-----BEGIN PRIVATE KEY----- x -----END PRIVATE KEY-----",
            b"-----BEGIN CERTIFICATE-----",
            b"-----END CERTIFICATE-----",
            b"-----BEGIN RSA PRIVATE KEY----- -----END CERTIFICATE-----",
            b"-----BEGIN PUBLIC KEY-----",
            br#"{"type":"non_json","text":"-----END RSA PRIVATE KEY-----"}"#,
            br#"{"type":"non_json","text":"-----BEGIN CERTIFICATE-----"}"#,
            br#"{"a":"-----BEGIN RSA PRIVATE KEY-----"}"#,
            br#"{"a":"-----END RSA PRIVATE KEY-----"}"#,
            b"{not json -----END CERTIFICATE-----",
            b"[pod/x] -----END CERTIFICATE-----",
            b"plain text",
        ];
        for line in lines {
            if !decides(line) {
                continue;
            }
            let after = |inside: u32| {
                let mut keys = KeyLines::default();
                for _ in 0..inside {
                    r.key_line(b"-----BEGIN RSA PRIVATE KEY-----", &mut keys);
                }
                followed(&r, line, &mut keys);
                keys.inside()
            };
            let outside = after(0);
            for inside in [1, 2, 150] {
                assert_eq!(after(inside), outside, "{}", String::from_utf8_lossy(line));
            }
        }
        assert!(!decides(b"-----BEGIN CERTIFICATE-----"));
        assert!(!decides(b"-----END CERTIFICATE-----"));
        assert!(decides(b"-----END RSA PRIVATE KEY-----"));
    }
}
