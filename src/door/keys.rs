//! A private key written as lines of text, followed on the read side. A log written without
//! `--redact` holds each line of such a key (`cat key.pem` in a stream that mixes text and
//! JSON) as a line of its own: a `non_json` record of the log, or a line of a raw stream. No
//! such line alone shows it is a key's, so the readers follow the blocks from line to line as
//! the log's engine does ([`Redactor::key_line`]): forward with [`Forward`], and from the end
//! by looking back from each line for the one that decides ([`before`]).

use std::borrow::Cow;

use crate::cut::redact::{KEY_LINES, KeyLines, Redactor};

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
}

/// What `line` becomes as a line of a private key's block ([`Redactor::key_line`]), the
/// `text` of a `non_json` record or a line of text; `None` when it is none. `keys` moves on.
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
    let replaced = r.key_line(text.as_bytes(), keys)?;
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

/// True when what `line` says of keys' blocks does not depend on the lines before it: a JSON
/// line (not a `non_json` record), or one that holds a header or a footer.
fn decides(line: &[u8]) -> bool {
    let json = matches!(line.trim_ascii_start().first(), Some(b'{' | b'['))
        && crate::line::scan::is_valid(line, &mut Vec::new());
    (json && non_json_record(line).is_none())
        || memchr::memmem::find(line, b"-----BEGIN ").is_some()
        || memchr::memmem::find(line, b"-----END ").is_some()
}

/// True when `line` may be replaced as a line of a key's block: a `non_json` record or a line
/// of text, not another JSON line.
pub fn may_be_a_keys(line: &[u8]) -> bool {
    !matches!(line.trim_ascii_start().first(), Some(b'{' | b'[')) || non_json_record(line).is_some()
}

/// Where a reader that gives a log's lines from its end is in keys' blocks before a line:
/// `back` gives the lines before it, the nearest first (`None` at the log's start). It reads
/// back to a line that decides (or as many lines as a block spans) and follows them forward.
pub fn before(mut back: impl FnMut() -> Option<Vec<u8>>) -> KeyLines {
    let mut lines = Vec::new();
    while lines.len() <= KEY_LINES as usize {
        let Some(line) = back() else { break };
        let decided = decides(&line);
        lines.push(line);
        if decided {
            break;
        }
    }
    let mut keys = KeyLines::default();
    if let Some(r) = super::redactor() {
        for line in lines.iter().rev() {
            followed(r, line, &mut keys);
        }
    }
    keys
}

/// What `line` becomes as a line of a private key's block when `keys` is where the log is
/// before it ([`before`]); `None` when it is not one, and without `--redact`.
pub fn replaced_after(mut keys: KeyLines, line: &[u8]) -> Option<Vec<u8>> {
    followed(super::redactor()?, line, &mut keys)
}
