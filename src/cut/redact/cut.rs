//! The parts of a text that a cut leaves: what to search around a cut point, and what an
//! excerpt may show. A secret cut in two shows as a part of itself that no pattern or value
//! matches, inside the run of bytes at the cut that holds no space, quote or backslash; an
//! excerpt leaves that run out, after the text is redacted whole.

use std::sync::LazyLock;

use memchr::memmem::Finder;

use super::{Hit, Label, Redactor, Rule, hidden};

/// The searches for a private key's header and footer, built once: `memmem::find` builds its
/// searcher at each call, which cost more than the search itself on the short lines of text
/// (the engine asks [`Redactor::key_line`] of every line it looks at).
static BEGIN: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"-----BEGIN "));
static END: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"-----END "));
static PRIVATE_KEY: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"PRIVATE KEY"));

/// The bytes no secret has in it (but a private key, found by its header): ASCII whitespace,
/// quotes and the backslash of JSON escapes. A secret that shows in part around a cut point is
/// inside the run of other bytes there.
pub(super) fn ends_run(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C | b'"' | b'\'' | b'\\'
    )
}

/// [`ends_run`] for the byte at `text[at]`: a backslash that starts an escape of a printable
/// character (`\u0070`, `\/`, see [`hidden`]) is inside a word, not at its end.
fn ends_run_at(text: &[u8], at: usize) -> bool {
    ends_run(text[at]) && !(text[at] == b'\\' && hidden::hides_at(text, at))
}

/// The longest run around a cut point that [`around_cut`] searches; a longer one is not taken
/// apart.
pub(super) const MAX_RUN: usize = 4096;
/// The size of the parts a long text is redacted in ([`Redactor::redact_in_parts`]).
pub const PART: usize = 1 << 20;
/// Bytes searched on each side of the run: room for a secret's name (`password = `,
/// `Bearer `), and for a private key's header or footer cut in two.
const NAME_ROOM: usize = 128;

/// What to search for a secret cut in two at position `at` of `text`: the run of bytes that
/// are not [`ends_run`] around it, with [`NAME_ROOM`] bytes on each side. `None` when the run is
/// longer than [`MAX_RUN`] on either side.
pub fn around_cut(text: &[u8], at: usize) -> Option<std::ops::Range<usize>> {
    let before = (at.saturating_sub(MAX_RUN + 1)..at)
        .rev()
        .position(|i| ends_run_at(text, i));
    let after = (at..text.len().min(at + MAX_RUN + 1)).position(|i| ends_run_at(text, i));
    let start = match before {
        Some(k) => at - k,
        None if at <= MAX_RUN => 0,
        None => return None,
    };
    let end = match after {
        Some(k) => at + k,
        None if text.len() - at <= MAX_RUN => text.len(),
        None => return None,
    };
    Some(start.saturating_sub(NAME_ROOM)..(end + NAME_ROOM).min(text.len()))
}

impl Redactor {
    /// Where the part of an excerpt should end (`head`) or start (its tail) to leave out the
    /// run of bytes at its inner end, however long, and at least the longest secret value:
    /// there a secret cut by the excerpt would show a part of itself.
    pub fn inner_end(&self, part: &[u8], head: bool) -> usize {
        let longest = self.values.as_ref().map_or(0, |v| v.longest);
        let end = part.len();
        if head {
            let run = (0..end)
                .rev()
                .position(|i| ends_run_at(part, i))
                .unwrap_or(end);
            end - run.max(longest).min(end)
        } else {
            let run = (0..end).position(|i| ends_run_at(part, i)).unwrap_or(end);
            run.max(longest).min(end)
        }
    }

    /// What to search for a secret cut in two at position `at` of `text`: [`around_cut`]'s
    /// run, widened to hold any secret value that spans `at`. `None` when the run is too long.
    pub fn around_cut(&self, text: &[u8], at: usize) -> Option<std::ops::Range<usize>> {
        let run = around_cut(text, at)?;
        Some(match &self.values {
            Some(v) => {
                run.start.min(at.saturating_sub(v.longest))
                    ..run.end.max((at + v.longest).min(text.len()))
            }
            None => run,
        })
    }

    /// `part` of a longer text as an excerpt may show it, into `out`: redacted whole, then
    /// without the run of bytes at each end where the text was cut (`cut_start`, `cut_end`),
    /// and at least the longest secret value there ([`Redactor::inner_end`]). The ends fall on
    /// character boundaries, and outside a `[REDACTED:…]` label: it goes whole or not at all.
    pub fn excerpt(&self, part: &[u8], cut_start: bool, cut_end: bool, out: &mut Vec<u8>) {
        let mut redacted = Vec::new();
        let text = if self.redact(part, &mut redacted) {
            &redacted[..]
        } else {
            part
        };
        let continuation = |at: usize| text.get(at).is_some_and(|&b| b & 0xC0 == 0x80);
        let mut from = 0;
        if cut_start {
            from = self.inner_end(text, false);
            while continuation(from) {
                from += 1;
            }
        }
        let mut to = text.len();
        if cut_end {
            to = self.inner_end(text, true);
            while to > 0 && continuation(to) {
                to -= 1;
            }
        }
        // A private key cut by the excerpt: its body runs over several lines, past any run.
        // What the whole text redacted is gone, so a header or footer left is of a cut key.
        if cut_start && let Some(footer) = key_footer_before_header(text) {
            from = from.max(footer);
        }
        if cut_end && let Some(header) = key_header_after_footer(text) {
            to = to.min(header);
        }
        let label = |at: usize| {
            let start = memchr::memmem::rfind(&text[..at], b"[REDACTED:")?;
            let end = start + memchr::memchr(b']', &text[start..])? + 1;
            (end > at).then_some((start, end))
        };
        if let Some((_, end)) = label(from) {
            from = end;
        }
        if let Some((start, _)) = label(to) {
            to = start;
        }
        out.clear();
        if from < to {
            out.extend_from_slice(&text[from..to]);
        }
    }

    /// Where to end the part of a text read so far (`text`, more to come) that can be
    /// redacted now, so that no secret is split between two redactions: at a byte no token
    /// holds ([`ends_run`]) at least [`MAX_RUN`] and the longest secret value before its end,
    /// moved back to the start of any secret found across that point, and before a private
    /// key's header whose footer has not come. What follows it waits for the next bytes; `0`
    /// when nothing can go yet.
    pub fn safe_cut(&self, text: &[u8]) -> usize {
        let longest = self.values.as_ref().map_or(0, |v| v.longest);
        let at = text.len().saturating_sub(MAX_RUN + longest);
        // After the last byte that ends a run; before it when it is a backslash, so that a
        // part never ends between an escape's backslashes and what they escape: the next part
        // began `neyJ…` for `\neyJ…`, where no token starts (#49's audit: a JWT's tail reached
        // the log, a whole token the archive).
        let mut cut = (0..at)
            .rev()
            .find(|&i| ends_run_at(text, i))
            .map_or(at, |i| match text[i] {
                b'\\' => i - text[..i].iter().rev().take_while(|&&b| b == b'\\').count(),
                _ => i + 1,
            });
        let from = cut.saturating_sub(MAX_RUN + longest);
        self.each_hit(&text[from..], |hit| {
            if let Some(h) = hit
                && from + h.start < cut
                && from + h.end > cut
            {
                cut = from + h.start;
            }
            false
        });
        // A key's body is a few KiB: past that a header is not held for.
        if let Some(header) = key_header_after_footer(&text[..cut])
            && cut - header <= 64 << 10
        {
            cut = header;
        }
        cut
    }

    /// `text` redacted in parts of about [`PART`] bytes, each ending where no secret is split
    /// ([`Redactor::safe_cut`]), handed to `part` in order: the memory of a part beside `text`,
    /// not of a redacted copy of it. A part that cannot end before [`PART`] (a secret as long
    /// as that) goes with the rest, redacted whole. `buf` holds each redacted part.
    pub fn redact_in_parts(&self, text: &[u8], buf: &mut Vec<u8>, mut part: impl FnMut(&[u8])) {
        let mut from = 0;
        while text.len() - from > 2 * PART {
            let end = from + self.safe_cut(&text[from..from + PART]);
            if end == from {
                break;
            }
            part(self.redacted_or(&text[from..end], buf));
            from = end;
        }
        part(self.redacted_or(&text[from..], buf));
    }

    /// `text` redacted into `buf`, or `text` itself when it holds no secret.
    fn redacted_or<'a>(&self, text: &'a [u8], buf: &'a mut Vec<u8>) -> &'a [u8] {
        if self.redact(text, buf) { buf } else { text }
    }

    /// `line` (JSON) with, in every string that holds a cut marker (its text up to the first
    /// number: `[TRUNCATED: `), each piece between markers as [`Redactor::excerpt`] makes it:
    /// redacted on its own, without the run of bytes beside a marker, on character boundaries.
    /// A secret that a cut left in two parts, its head before a marker and its tail after, is
    /// left out; one whole in a piece is redacted. `None` when `line` is not JSON (or nested
    /// past serde_json's depth) or holds no such string.
    pub fn without_cut_ends(&self, line: &[u8], marker: &str) -> Option<Vec<u8>> {
        fn walk(v: &mut serde_json::Value, r: &Redactor, marker: &str, changed: &mut bool) {
            match v {
                serde_json::Value::String(s) if s.contains(marker) => {
                    *s = r.trim_cut_ends(s, marker);
                    *changed = true;
                }
                serde_json::Value::Array(a) => {
                    a.iter_mut().for_each(|v| walk(v, r, marker, changed));
                }
                serde_json::Value::Object(o) => {
                    o.values_mut().for_each(|v| walk(v, r, marker, changed));
                }
                _ => {}
            }
        }
        if marker.is_empty() || memchr::memmem::find(line, marker.as_bytes()).is_none() {
            return None;
        }
        let mut value: serde_json::Value = serde_json::from_slice(line).ok()?;
        let mut changed = false;
        walk(&mut value, self, marker, &mut changed);
        changed.then(|| serde_json::to_vec(&value).ok()).flatten()
    }

    /// `s` as its pieces between markers, each made an excerpt ([`Redactor::excerpt`]) cut
    /// where a marker is beside it.
    fn trim_cut_ends(&self, s: &str, marker: &str) -> String {
        let mut pieces: Vec<(&str, bool)> = Vec::new(); // (text, is a marker)
        let mut rest = s;
        while let Some(at) = rest.find(marker) {
            let end = rest[at..].find(']').map_or(rest.len(), |e| at + e + 1);
            pieces.push((&rest[..at], false));
            pieces.push((&rest[at..end], true));
            rest = &rest[end..];
        }
        pieces.push((rest, false));
        let mut out = String::with_capacity(s.len());
        let mut excerpt = Vec::new();
        for (i, &(piece, marker)) in pieces.iter().enumerate() {
            if marker {
                out.push_str(piece);
                continue;
            }
            self.excerpt(piece.as_bytes(), i > 0, i + 1 < pieces.len(), &mut excerpt);
            out.push_str(&String::from_utf8_lossy(&excerpt));
        }
        out
    }
}

/// Whether `line` is taken for a JSON line by [`Redactor::key_line`]: it starts as JSON does
/// (after a byte order mark and whitespace, as the engine reads it) and, inside a block, is
/// valid JSON: a line that only starts as JSON does (`kubectl logs --prefix` writes
/// `[pod/name/container] ` before each line) is one of the block's lines of text.
pub fn is_json_line(line: &[u8], inside: bool) -> bool {
    let text = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    matches!(text.trim_ascii_start().first(), Some(b'{' | b'['))
        && (!inside || crate::line::scan::is_valid(text, &mut Vec::new()))
}

/// True when where a line of text leaves keys' blocks ([`Redactor::key_line`]) does not depend
/// on where they were before it: a private key's footer before any header ends a block (and
/// opens the next one with a header after it), and a header without a footer after it opens one
/// or goes on in it. A header or footer of anything else (a certificate) decides nothing.
pub fn text_line_decides(line: &[u8]) -> bool {
    key_footer_before_header(line).is_some() || key_header_after_footer(line).is_some()
}

/// Where the first `-----BEGIN ` of `text` is: what may open a private key's block.
pub(super) fn first_header(text: &[u8]) -> Option<usize> {
    BEGIN.find(text)
}

/// Where the private key's header that opens the last block of `text` without its footer
/// starts (`-----BEGIN … PRIVATE KEY`), if any.
fn key_header_after_footer(text: &[u8]) -> Option<usize> {
    // Forward first: memmem's search backward has no SIMD prefilter, and most lines hold no
    // header at all (the engine asks this of every JSON line it redacts).
    let first = first_header(text)?;
    let header = first + memchr::memmem::rfind(&text[first..], b"-----BEGIN ")?;
    let rest = &text[header..];
    (names_a_key(rest) && END.find(rest).is_none()).then_some(header)
}

/// Where the private key's footer that closes the first block of `text` without its header
/// ends (`-----END … PRIVATE KEY-----`), if any.
fn key_footer_before_header(text: &[u8]) -> Option<usize> {
    let footer = END.find(text)?;
    let before = &text[..footer];
    (names_a_key(&text[footer..]) && BEGIN.find(before).is_none()).then(|| footer_end(text, footer))
}

/// True when a header or footer at the start of `text` names a private key.
fn names_a_key(text: &[u8]) -> bool {
    PRIVATE_KEY.find(&text[..text.len().min(80)]).is_some()
}

/// Where the footer at `footer` (`-----END … PRIVATE KEY-----`) ends in `text`.
fn footer_end(text: &[u8], footer: usize) -> usize {
    let rest = &text[footer..];
    let key = PRIVATE_KEY.find(rest).unwrap_or(0);
    footer + memchr::memmem::find(&rest[key..], b"-----").map_or(key + 11, |d| key + d + 5)
}

/// A private key written over several lines of text (`cat key.pem` in a stream that mixes text
/// and JSON): a header line, body lines, a footer line, each a line of its own. Held by each
/// writer of a stream (the log's engine, the archive), line to line.
#[derive(Clone, Copy, Debug, Default)]
pub struct KeyLines {
    /// Lines since the header, 0 outside a key.
    inside: u32,
}

/// The most lines a key's block spans (an RSA 4096 key takes 51): past that, a header was not
/// a key's, and the lines after it are left alone.
pub const KEY_LINES: u32 = 200;

impl KeyLines {
    /// True inside a key's block: the next line must be looked at, whatever the filters say.
    pub fn inside(&self) -> bool {
        self.inside > 0
    }

    /// A line read in pieces (past the memory cap) has ended: what it said of keys' blocks
    /// ([`KeyMarks`]) opens or closes one, as [`Redactor::key_line`] has a line of text do.
    /// Whether it is JSON is not known while it is read (the archive redacts it as it comes),
    /// so it is taken for text: inside a block it ends the block only with a footer. Such a
    /// line is never replaced as a line of a key's body (a body's lines are 64 bytes): it is
    /// redacted as any line is, and a header or footer in it as a cut key's part.
    pub fn after_pieces(&mut self, marks: &KeyMarks) {
        // A footer before any header ends a block; a line without one is one more line of
        // the block, up to its most.
        let ends = marks.first == Some(false);
        self.inside = if self.inside > 0 && !ends && self.inside < KEY_LINES {
            self.inside + 1
        } else {
            u32::from(marks.last == Some(true))
        };
    }
}

/// What a line read in pieces says of private keys' blocks, piece by piece
/// ([`KeyLines::after_pieces`]): whether its first and its last header or footer that names a
/// key is a header. The bytes kept from the last piece find one split between two.
#[derive(Debug, Default)]
pub struct KeyMarks {
    /// Whether the first and the last header or footer seen is a header.
    first: Option<bool>,
    last: Option<bool>,
    carry: Vec<u8>,
}

/// The bytes a header or footer needs to be known as a key's: its dashes and word, and the
/// window [`names_a_key`] reads.
const MARK_ROOM: usize = 96;

impl KeyMarks {
    /// Whether the first and the last header or footer seen is a header.
    pub fn ends(&self) -> (Option<bool>, Option<bool>) {
        (self.first, self.last)
    }

    /// Looks at the next piece of the line.
    pub fn see(&mut self, piece: &[u8]) {
        let mut joined = std::mem::take(&mut self.carry);
        let seam = joined.len();
        joined.extend_from_slice(&piece[..piece.len().min(MARK_ROOM)]);
        // A mark that starts in the carry comes before any that starts in the piece.
        let (first, last) = match seam {
            0 => (None, None),
            _ => marks(&joined),
        };
        let (piece_first, piece_last) = marks(piece);
        self.first = self.first.or(first).or(piece_first);
        self.last = piece_last.or(last).or(self.last);
        if piece.len() >= MARK_ROOM {
            joined.clear();
            joined.extend_from_slice(&piece[piece.len() - MARK_ROOM..]);
        } else {
            joined.drain(..joined.len().saturating_sub(MARK_ROOM));
        }
        self.carry = joined;
    }
}

/// Whether the first and the last header or footer in `text` that names a private key is a
/// header.
fn marks(text: &[u8]) -> (Option<bool>, Option<bool>) {
    let found = |finder: &Finder| -> Vec<usize> {
        (finder.find_iter(text))
            .filter(|&at| names_a_key(&text[at..]))
            .collect()
    };
    let (headers, footers) = (found(&BEGIN), found(&END));
    let first = match (headers.first(), footers.first()) {
        (None, None) => None,
        (Some(h), Some(f)) => Some(h < f),
        (h, _) => Some(h.is_some()),
    };
    let last = match (headers.last(), footers.last()) {
        (None, None) => None,
        (h, f) => Some(h > f),
    };
    (first, last)
}

impl Redactor {
    /// What a line of text becomes when it is part of a private key's block that spans lines:
    /// from its header on (a header line), whole (a body line), up to its footer's end (the
    /// footer line) replaced by `[REDACTED:private_key]`. `None` for any other line, and for a
    /// JSON line (whose strings hold a key whole, `\n`s and all): one ends a block.
    pub fn key_line(&self, line: &[u8], keys: &mut KeyLines) -> Option<Vec<u8>> {
        if is_json_line(line, keys.inside()) {
            // A JSON line ends a block, and opens one when a string of it ends after a header
            // (the body comes next, as lines of text).
            keys.inside = u32::from(key_header_after_footer(line).is_some());
            return None;
        }
        self.text_key_line(line, keys)
    }

    /// [`Redactor::key_line`] for a line known to be text (the text of a log's `non_json`
    /// record, which may read as JSON once made UTF-8).
    pub fn text_key_line(&self, line: &[u8], keys: &mut KeyLines) -> Option<Vec<u8>> {
        const LABEL: &[u8] = b"[REDACTED:private_key]";
        // What the line keeps beside the key's part is redacted as any line is (a token after
        // a footer, before a header, a whole key after a footer: #49's audit).
        let redacted = |kept: Vec<u8>| {
            let mut out = Vec::new();
            if self.redact(&kept, &mut out) {
                out
            } else {
                kept
            }
        };
        if keys.inside > 0 {
            keys.inside += 1;
            if let Some(end) = key_footer_before_header(line) {
                let rest = &line[end..];
                // Another key may open after the footer (`cat a.pem b.pem`, the first without
                // its last newline).
                let header = key_header_after_footer(rest);
                keys.inside = u32::from(header.is_some());
                let kept = match header {
                    Some(header) => [LABEL, &rest[..header], LABEL].concat(),
                    None => [LABEL, rest].concat(),
                };
                return Some(redacted(kept));
            }
            if keys.inside <= KEY_LINES {
                return Some(LABEL.to_vec());
            }
            // Past a block's length: the header was not a key's, and this line is one as any
            // other, which may open a block.
            keys.inside = 0;
        }
        let header = key_header_after_footer(line)?;
        keys.inside = 1;
        Some(redacted([&line[..header], LABEL].concat()))
    }
}

impl Redactor {
    /// The parts of private keys in `line` that no whole block covers (`hits`, sorted): a
    /// header whose footer is not in its string (`head -4 id_rsa`, a key cut short) goes with
    /// the rest of its string (of the line, outside JSON); a footer whose header is not in its
    /// string (the second half of a key split between two lines) goes with its string's start.
    pub(super) fn key_parts(&self, line: &[u8], hits: &[Hit]) -> Vec<Hit> {
        // Inside a whole block already found (an assignment's value that is a header's first
        // dashes is no block: the part goes on past it).
        let covered = |at: usize| {
            hits.iter()
                .any(|h| h.start <= at && at < h.end && h.label == Label::Kind("private_key"))
        };
        let hit = |start: usize, end: usize| Hit {
            start,
            name_end: start,
            after: end,
            end,
            label: Label::Kind("private_key"),
            by: Rule::Token,
        };
        let mut parts = Vec::new();
        for header in BEGIN.find_iter(line) {
            if covered(header) || !names_a_key(&line[header..]) {
                continue;
            }
            let end = string_end(line, header);
            if END.find(&line[header..end]).is_none() {
                parts.push(hit(header, end));
            }
        }
        for footer in END.find_iter(line) {
            if covered(footer) || !names_a_key(&line[footer..]) {
                continue;
            }
            let start = string_start(line, footer);
            if BEGIN.find(&line[start..footer]).is_none() {
                parts.push(hit(start, footer_end(line, footer)));
            }
        }
        parts
    }
}

/// Whether the `"` at `at` ends or starts a JSON string: not escaped (an even run of
/// backslashes before it).
fn unescaped_quote(line: &[u8], at: usize) -> bool {
    line[at] == b'"' && line[..at].iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 0
}

/// Where the JSON string holding `at` ends (its closing quote), or the line's end.
fn string_end(line: &[u8], at: usize) -> usize {
    (at..line.len())
        .find(|&i| unescaped_quote(line, i))
        .unwrap_or(line.len())
}

/// Where the JSON string holding `at` starts (after its opening quote), or the line's start.
fn string_start(line: &[u8], at: usize) -> usize {
    (0..at)
        .rev()
        .find(|&i| unescaped_quote(line, i))
        .map_or(0, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINES: &[&str] = &[
        "plain text",
        "x -----BEGIN RSA PRIVATE KEY-----",
        "-----BEGIN OPENSSH PRIVATE KEY----- body",
        "-----END RSA PRIVATE KEY----- after",
        "-----END RSA PRIVATE KEY----- then -----BEGIN EC PRIVATE KEY-----",
        "-----BEGIN PRIVATE KEY----- a -----END PRIVATE KEY-----",
        "-----BEGIN CERTIFICATE----- not a key",
        "{\"t\":\"-----BEGIN RSA PRIVATE KEY-----\"}",
        "  [\"-----END RSA PRIVATE KEY-----\"]",
        "{\"t\":\"no key\"}",
    ];

    /// Fed in pieces split at every byte (and in one), a line of text leaves a key's block
    /// open or closed as the same line held whole does ([`Redactor::key_line`]), from inside a
    /// block and from outside one; a JSON line leaves one open at least where it does.
    #[test]
    fn a_line_in_pieces_says_what_the_whole_line_says_of_keys() {
        let r = Redactor::with_secrets(&[]);
        for line in LINES {
            let line = line.as_bytes();
            for inside in [0, 1, KEY_LINES] {
                let mut whole = KeyLines { inside };
                r.key_line(line, &mut whole);
                for split in 0..=line.len() {
                    for second in [split, split + (line.len() - split) / 2] {
                        let mut marks = KeyMarks::default();
                        for piece in [&line[..split], &line[split..second], &line[second..]] {
                            marks.see(piece);
                        }
                        let mut pieces = KeyLines { inside };
                        pieces.after_pieces(&marks);
                        let what = format!(
                            "{:?} split at {split} and {second}, from {inside}",
                            String::from_utf8_lossy(line)
                        );
                        // A JSON line in pieces is taken for text: it may keep a block open
                        // that the whole line ends, never the other way.
                        if is_json_line(line, inside > 0) {
                            assert!(pieces.inside() || !whole.inside(), "{what}");
                        } else {
                            assert_eq!(pieces.inside(), whole.inside(), "{what}");
                        }
                    }
                }
            }
        }
    }

    /// A header whose bytes come one at a time, after a long piece, is found: the carry holds
    /// what the last pieces left.
    #[test]
    fn a_header_that_comes_a_byte_a_piece_is_found() {
        let mut marks = KeyMarks::default();
        marks.see(&[b'x'; 4096]);
        for b in b"-----BEGIN RSA PRIVATE KEY-----" {
            marks.see(&[*b]);
        }
        let mut keys = KeyLines::default();
        keys.after_pieces(&marks);
        assert!(keys.inside());
    }
}
