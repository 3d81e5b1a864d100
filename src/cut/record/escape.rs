//! How a record writes a line's text as the content of a JSON string: escaped sixty-four bytes
//! at a time from the SIMD masks of [`crate::line::strings`] (the bytes that need attention
//! found a block at a time, the runs between them copied whole), losslessly for UTF-8 and, for
//! text that is not, with each run of bytes that are not text written as one U+FFFD. Tests
//! check the block writers, each way this CPU can run them, against a plain unit-by-unit
//! reference.

use crate::line::strings::{BlockLoop, Masks, TextMasks, block_at, run_block_loop};

/// How a record writes its text, decided once for the whole line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Text {
    /// Valid UTF-8: every character kept, control bytes escaped (`\u001b`, `\t`).
    Utf8,
    /// Not UTF-8 throughout, and no byte that text does not hold (a Latin-1 file, UTF-8 with
    /// a stray byte): every character kept, and each run of bytes that are not text written as
    /// one U+FFFD.
    Lossy,
    /// Not UTF-8, with a byte that text does not hold (a binary dump): its strings, as
    /// `strings` prints them ([`super::binary`]).
    Binary,
}

impl Text {
    pub fn of(raw: &[u8]) -> Text {
        if super::binary::starts_binary(raw) {
            // Random bytes: the standard library's check stops within their first bytes, where
            // simdutf8's reads the whole line (faster on text).
            return if std::str::from_utf8(raw).is_ok() {
                Text::Utf8
            } else {
                Text::Binary
            };
        }
        if simdutf8::basic::from_utf8(raw).is_ok() {
            Text::Utf8
        } else {
            Text::not_utf8(raw)
        }
    }

    /// What `raw`, known not to be UTF-8, is: binary or text.
    pub fn not_utf8(raw: &[u8]) -> Text {
        if super::binary::holds_binary(raw) {
            Text::Binary
        } else {
            Text::Lossy
        }
    }
}

/// What is known of the text of the lines cut from one chunk of input: whether each is UTF-8,
/// found by one check of the chunk from a line end onwards, where a check of each line alone
/// costs a call per line (a third of the time spent on short lines of text).
///
/// Checked are the bytes after a line that is not JSON ([`ChunkText::check_after`]): its
/// neighbours are likely text too, and lines of JSON are checked as they are read.
#[derive(Clone, Copy, Debug, Default)]
pub struct ChunkText {
    /// `chunk[from..to]` is UTF-8, `from` at the start of a character.
    from: usize,
    to: usize,
    /// At `to` starts a sequence that is not UTF-8 (rather than the chunk's end, or the end of
    /// a character the chunk cuts).
    bad: bool,
}

impl ChunkText {
    /// What is known of `line`, a line of `chunk` (`None` for bytes from elsewhere): UTF-8 when
    /// it lies in the span checked, not UTF-8 when the span ends inside it at a sequence that is
    /// not.
    pub fn of(&self, chunk: &[u8], line: &[u8]) -> Option<Text> {
        let (start, end) = crate::line::offsets(chunk, line)?;
        if self.from <= start && end <= self.to {
            Some(Text::Utf8)
        } else if self.bad && self.from <= start && start <= self.to && self.to < end {
            // The check reached the line's start in step with the characters, so the line
            // alone fails where the chunk did.
            Some(Text::not_utf8(line))
        } else {
            None
        }
    }

    /// Checks `chunk` from the end of `line` (at its newline, an ASCII byte, so at the start
    /// of a character) to the first byte that is not UTF-8, or to the chunk's end; or takes
    /// what the reading thread found `ahead`, when its check covers the line's end.
    pub fn check_after(&mut self, chunk: &[u8], line: &[u8], ahead: Option<&TextAhead>) {
        let Some((_, end)) = crate::line::offsets(chunk, line) else {
            return;
        };
        *self = match ahead {
            Some(a) if a.text.from <= end && end <= a.text.to => {
                if a.text.bad || chunk.len() == a.checked {
                    ChunkText {
                        from: end,
                        ..a.text
                    }
                } else {
                    // Bytes were added to the chunk after the reader checked it: the check
                    // goes on from where the reader's stopped (a character's start).
                    ChunkText {
                        from: end,
                        ..ChunkText::checked_from(chunk, a.text.to)
                    }
                }
            }
            _ => ChunkText::checked_from(chunk, end),
        };
    }

    /// `chunk` checked from `from`, the start of a character.
    fn checked_from(chunk: &[u8], from: usize) -> ChunkText {
        let (to, bad) = match simdutf8::compat::from_utf8(&chunk[from..]) {
            Ok(_) => (chunk.len(), false),
            Err(e) => (from + e.valid_up_to(), e.error_len().is_some()),
        };
        ChunkText { from, to, bad }
    }

    /// The bytes of `chunk` from `at` that are known to be UTF-8, if `at` is in the span
    /// checked.
    pub fn utf8_from<'c>(&self, chunk: &'c [u8], at: usize) -> Option<&'c [u8]> {
        (self.from <= at && at <= self.to).then(|| chunk.get(at..self.to))?
    }
}

/// What the reading thread found of a chunk's text before queueing it, while the log worker
/// was behind ([`ChunkText::check_after`] then has the check done): the chunk checked from its
/// first newline, and how long the chunk was then (bytes may be added to it after).
#[derive(Clone, Copy, Debug)]
pub struct TextAhead {
    text: ChunkText,
    checked: usize,
}

impl TextAhead {
    /// The bytes of the chunk found UTF-8: from its first newline.
    pub(super) fn utf8(&self) -> std::ops::Range<usize> {
        self.text.from..self.text.to
    }

    /// `None` when the chunk has no newline.
    pub fn of(chunk: &[u8]) -> Option<TextAhead> {
        let newline = memchr::memchr(b'\n', chunk)?;
        Some(TextAhead {
            text: ChunkText::checked_from(chunk, newline),
            checked: chunk.len(),
        })
    }
}

/// An ASCII byte that [`Text::Lossy`] does not keep: a control byte other than tab, or DEL.
#[inline]
pub(super) fn is_noise(b: u8) -> bool {
    (b < 0x20 && b != b'\t') || b == 0x7F
}

/// U+FFFD, the replacement character, in UTF-8.
pub(super) const REPLACEMENT: &[u8; 3] = "\u{FFFD}".as_bytes().first_chunk().unwrap();

/// How each ASCII byte is written in a JSON string, padded to six bytes, and its length: the
/// two-character escapes JSON has (`\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`), `\u00XX` for the
/// other control bytes, the byte itself otherwise.
pub(super) static ESCAPES: [([u8; 6], u8); 128] = {
    let mut t = [([0; 6], 1); 128];
    let mut b = 0;
    while b < 128 {
        t[b].0[0] = b as u8;
        b += 1;
    }
    let hex = b"0123456789abcdef";
    let mut c = 0;
    while c < 0x20 {
        t[c] = (*b"\\u00\0\0", 6);
        t[c].0[4] = hex[c >> 4];
        t[c].0[5] = hex[c & 15];
        c += 1;
    }
    let short = [
        (b'"', b'"'),
        (b'\\', b'\\'),
        (b'\n', b'n'),
        (b'\r', b'r'),
        (b'\t', b't'),
        (0x08, b'b'),
        (0x0C, b'f'),
    ];
    let mut k = 0;
    while k < short.len() {
        t[short[k].0 as usize] = ([b'\\', short[k].1, 0, 0, 0, 0], 2);
        k += 1;
    }
    t
};

/// Writes the escape of the ASCII byte `b` (a quote, a backslash or a control byte).
#[inline(always)]
pub(super) fn push_escape(b: u8, out: &mut Vec<u8>) {
    let (bytes, len) = ESCAPES[usize::from(b & 0x7F)];
    // All six bytes, then the length cut back: one fixed-size copy instead of a call.
    out.extend_from_slice(&bytes);
    out.truncate(out.len() - 6 + usize::from(len));
}

/// Where the character starting with the non-ASCII byte at `i` ends (`Ok`), or the length of
/// the bytes there that are not UTF-8 (`Err`): Unicode's maximal subpart, as
/// `String::from_utf8_lossy` replaces them.
#[inline]
pub(super) fn utf8_at(s: &[u8], i: usize) -> Result<usize, usize> {
    let (len, lo, hi) = match s[i] {
        0xC2..=0xDF => (2, 0x80, 0xBF),
        0xE0 => (3, 0xA0, 0xBF),
        0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80, 0xBF),
        0xED => (3, 0x80, 0x9F),
        0xF0 => (4, 0x90, 0xBF),
        0xF1..=0xF3 => (4, 0x80, 0xBF),
        0xF4 => (4, 0x80, 0x8F),
        _ => return Err(1),
    };
    if !s.get(i + 1).is_some_and(|b| (lo..=hi).contains(b)) {
        return Err(1);
    }
    for k in 2..len {
        if s.get(i + k).is_none_or(|&b| b & 0xC0 != 0x80) {
            return Err(k);
        }
    }
    Ok(len)
}

/// Bytes one block can make at most: six for each byte (`\u0001`).
const BLOCK_MAX: usize = 64 * 6;

/// [`Text::Utf8`] was asked for and the text is not UTF-8.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotUtf8;

/// Writes `raw` as the content of a JSON string until the next unit would take the text past
/// `limit` bytes; returns the raw bytes written (all of `raw` when it fits). With
/// [`Text::Utf8`] quotes, backslashes and control bytes are escaped (`\"`, `\n`, `\u001b`) and
/// everything else copied; with [`Text::Lossy`] characters are kept (quotes, backslashes and
/// tabs escaped) and each run of bytes that are not text becomes one U+FFFD: a byte that is
/// not UTF-8 has no spelling in JSON (a `\u` escape names a character, not a byte), and the
/// replacement says where such a run was in three bytes, however long it is; with
/// [`Text::Binary`] the strings of the line ([`super::binary`]). [`Text::Utf8`] on text that
/// is not UTF-8 writes it as [`Text::not_utf8`] says.
pub fn escape_text(raw: &[u8], limit: usize, text: Text, out: &mut Vec<u8>) -> usize {
    let at = out.len();
    try_escape_text(raw, limit, text, out).unwrap_or_else(|NotUtf8| {
        out.truncate(at);
        escape_text(raw, limit, Text::not_utf8(raw), out)
    })
}

/// [`escape_text`], or `Err` with [`Text::Utf8`] as soon as a byte is found that is not UTF-8
/// (what was written is then to be dropped): validating the text costs no pass of its own.
pub fn try_escape_text(
    raw: &[u8],
    limit: usize,
    text: Text,
    out: &mut Vec<u8>,
) -> Result<usize, NotUtf8> {
    run_block_loop(Escape {
        raw,
        limit,
        text,
        known: false,
        out,
    })
}

/// [`escape_text`] of `raw` as [`Text::of`] found it: [`Text::Utf8`] is then not checked again,
/// so the writer looks only for quotes, backslashes and control bytes (a pass of `simdutf8`
/// costs less than the masks that check UTF-8 on the way).
pub fn escape_known_text(raw: &[u8], limit: usize, text: Text, out: &mut Vec<u8>) -> usize {
    // A slice of a line that is not UTF-8 may be UTF-8 itself: only `Utf8` promises anything.
    debug_assert!(text != Text::Utf8 || std::str::from_utf8(raw).is_ok());
    let written = run_block_loop(Escape {
        raw,
        limit,
        text,
        known: true,
        out,
    });
    written.unwrap_or(0)
}

/// [`escape_text`] as a [`BlockLoop`], so that it runs with the widest SIMD the CPU has.
struct Escape<'a, 'b> {
    raw: &'a [u8],
    limit: usize,
    text: Text,
    /// `text` is what [`Text::of`] says of `raw`: UTF-8 need not be checked.
    known: bool,
    out: &'b mut Vec<u8>,
}

impl BlockLoop for Escape<'_, '_> {
    type Out = Result<usize, NotUtf8>;

    #[inline(always)]
    fn run(
        self,
        masks64: impl Fn(&[u8; 64]) -> Masks<u64>,
        text_masks64: impl Fn(&[u8; 64]) -> TextMasks<u64>,
        escapes64: impl Fn(&[u8; 64]) -> u64,
    ) -> Result<usize, NotUtf8> {
        let Escape {
            raw,
            limit,
            text,
            known,
            out,
        } = self;
        match (text, known) {
            (Text::Utf8, true) => Ok(escape_utf8_blocks(raw, limit, out, escapes64)),
            (Text::Utf8, false) => {
                escape_blocks::<false, true>(raw, limit, out, masks64, text_masks64)
            }
            (Text::Lossy, _) => escape_blocks::<true, true>(raw, limit, out, masks64, text_masks64),
            (Text::Binary, _) => Ok(super::binary::escape_binary(raw, limit, out)),
        }
    }
}

/// The text being written, for copying runs of it: a short run is copied as one fixed
/// 64-byte copy cut back to its length (no call to `memcpy`), from the text or, within 64
/// bytes of its end, from a padded copy of its last bytes.
pub(super) struct Runs<'a> {
    raw: &'a [u8],
    /// `raw[end_at..]`, padded.
    end: [u8; 128],
    end_at: usize,
}

impl<'a> Runs<'a> {
    #[inline(always)]
    pub(super) fn new(raw: &'a [u8]) -> Runs<'a> {
        let end_at = raw.len().saturating_sub(64);
        let mut end = [b' '; 128];
        end[..raw.len() - end_at].copy_from_slice(&raw[end_at..]);
        Runs { raw, end, end_at }
    }

    /// Appends `raw[from..to]`.
    #[inline(always)]
    pub(super) fn push(&self, from: usize, to: usize, out: &mut Vec<u8>) {
        if to - from > 64 {
            out.extend_from_slice(&self.raw[from..to]);
            return;
        }
        let chunk = match self.raw.get(from..from + 64) {
            Some(chunk) => chunk,
            None => &self.end[from - self.end_at..from - self.end_at + 64],
        };
        let len = out.len();
        out.extend_from_slice(chunk.first_chunk::<64>().unwrap());
        out.truncate(len + (to - from));
    }
}

/// [`escape_blocks`] of text known to be UTF-8, where only quotes, backslashes and control
/// bytes (the bits of `stops64`) stop the copy. A block with stops is written into a buffer of
/// its own by copies of fixed size (a run as sixty-four bytes, an escape as six), each cut
/// back to its length by where the next one starts, and appended to `out` at once.
#[inline(always)]
fn escape_utf8_blocks(
    raw: &[u8],
    limit: usize,
    out: &mut Vec<u8>,
    stops64: impl Fn(&[u8; 64]) -> u64,
) -> usize {
    let start = out.len();
    let mut pad = [0; 64];
    // The block and sixty-four bytes after it, so that a run from any byte of it is
    // copied as sixty-four bytes.
    let mut src = [0; 128];
    let mut dst = [0; BLOCK_MAX + 64];
    let mut at = 0;
    while at < raw.len() {
        if limit.saturating_sub(out.len() - start) < BLOCK_MAX {
            // Near the limit: one unit at a time, each checked, from the start of the character
            // the block starts in (its first bytes, copied, are taken back).
            let mut from = at;
            while from > 0 && raw[from] & 0xC0 == 0x80 {
                from -= 1;
            }
            out.truncate(out.len() - (at - from));
            let room = limit - (out.len() - start);
            return escape_units(raw, from, false, room, Text::Utf8, out).unwrap_or(from);
        }
        // A block past the text's end is padded with spaces, which are not stops.
        let block = block_at(raw, at, &mut pad);
        let len = (raw.len() - at).min(64);
        let mut stops = stops64(block);
        if stops == 0 {
            out.extend_from_slice(&block[..len]);
            at += 64;
            continue;
        }
        src[..64].copy_from_slice(block);
        let (mut from, mut n) = (0, 0);
        while stops != 0 {
            let k = stops.trailing_zeros() as usize;
            dst[n..n + 64].copy_from_slice(&src[from..from + 64]);
            n += k - from;
            let (bytes, len) = ESCAPES[usize::from(block[k] & 0x7F)];
            dst[n..n + 6].copy_from_slice(&bytes);
            n += usize::from(len);
            from = k + 1;
            stops &= stops - 1;
        }
        dst[n..n + 64].copy_from_slice(&src[from..from + 64]);
        n += len - from;
        out.extend_from_slice(&dst[..n]);
        at += 64;
    }
    raw.len()
}

/// [`escape_text`] sixty-four bytes at a time, `LOSSY` or not. Which bytes are part of a
/// valid character follows from the block's masks by arithmetic (a lead byte, the continuation
/// bytes its length asks for, the narrower range of some second bytes), so random bytes, where
/// most bytes need attention, take no branch per byte: each run of bytes that are not text is
/// one stop, written as one U+FFFD. Without `LOSSY` a byte that is not UTF-8 ends the loop
/// (`Err`), and only quotes, backslashes and control bytes stop the copy; without `CHECK` too,
/// the text is known to be UTF-8 and the masks that check it are not made.
#[inline(always)]
fn escape_blocks<const LOSSY: bool, const CHECK: bool>(
    raw: &[u8],
    limit: usize,
    out: &mut Vec<u8>,
    masks64: impl Fn(&[u8; 64]) -> Masks<u64>,
    text_masks64: impl Fn(&[u8; 64]) -> TextMasks<u64>,
) -> Result<usize, NotUtf8> {
    let mode = if LOSSY { Text::Lossy } else { Text::Utf8 };
    let start = out.len();
    // Blocks start at `at`; `raw[..copied]` is written.
    let (mut at, mut copied) = (0, 0);
    // Where the last U+FFFD written ends: a run of bytes that are not text goes on there.
    let mut replaced_to = usize::MAX;
    // Bytes at the start of this block that belong to a character begun in the block before.
    let mut carry_chars = 0u64;
    // The block before ended in a run of bytes that are not text.
    let mut carry_run = 0u64;
    let mut pad = [0; 64];
    let text = Runs::new(raw);
    while at < raw.len() {
        let written = out.len() - start + (at - copied);
        if limit.saturating_sub(written) < BLOCK_MAX {
            // Near the limit: one unit at a time, each checked.
            let room = limit - (out.len() - start);
            return escape_units(raw, copied, replaced_to == copied, room, mode, out);
        }
        let block = block_at(raw, at, &mut pad);
        let m = masks64(block);
        let t = if LOSSY || CHECK {
            text_masks64(block)
        } else {
            TextMasks::default()
        };
        let mut chars = carry_chars;
        carry_chars = 0;
        if t.high != 0 {
            // Continuation bytes (and the ranges second bytes are checked against) of the
            // three bytes after the block, for characters that end past it.
            let next = |j: usize| raw.get(at + 64 + j).copied().unwrap_or(b' ');
            let next = [next(0), next(1), next(2)];
            let after = |f: fn(u8) -> bool| {
                u64::from(f(next[0])) | u64::from(f(next[1])) << 1 | u64::from(f(next[2])) << 2
            };
            let cont = after(|b| b & 0xC0 == 0x80);
            // Whether the byte 1, 2, 3 after each is a continuation byte (of the next block's
            // first three bytes for the last ones); and the narrower ranges of the next byte.
            let (c1, c2, c3) = (
                t.cont >> 1 | cont << 63,
                t.cont >> 2 | cont << 62,
                t.cont >> 3 | cont << 61,
            );
            let s8 = t.cont_8 >> 1 | after(|b| (0x80..=0x8F).contains(&b)) << 63;
            let s9 = t.cont_9 >> 1 | after(|b| (0x90..=0x9F).contains(&b)) << 63;
            // A second byte outside its lead's range: E0 A0..BF, ED 80..9F, F0 90..BF, F4 80..8F.
            let bad_second = (t.e0 & (s8 | s9)) | (t.ed & !(s8 | s9)) | (t.f0 & s8) | (t.f4 & !s8);
            let two = t.lead2 & c1;
            let three = t.lead3 & c1 & c2 & !bad_second;
            let four = t.lead4 & c1 & c2 & c3 & !bad_second;
            chars |= two | two << 1 | three | three << 1 | three << 2;
            chars |= four | four << 1 | four << 2 | four << 3;
            // The bytes of the next block that end a character begun in this one.
            carry_chars = two >> 63 | three >> 63 | three >> 62;
            carry_chars |= four >> 63 | four >> 62 | four >> 61;
        }
        let mut stops = m.quote | m.backslash;
        let noise = if LOSSY {
            (t.high & !chars) | (m.control & !t.tab) | t.del
        } else {
            if t.high & !chars != 0 {
                return Err(NotUtf8);
            }
            stops |= m.control;
            0
        };
        if LOSSY {
            let runs = noise & !(noise << 1 | carry_run);
            carry_run = noise >> 63;
            if copied == at && noise & 1 != 0 && replaced_to == at {
                // A run that goes on from the block before: already replaced.
                copied = at + (!noise).trailing_zeros() as usize;
                replaced_to = copied;
            }
            stops |= runs | t.tab;
        }
        while stops != 0 {
            let k = stops.trailing_zeros() as usize;
            text.push(copied, at + k, out);
            // A run of bytes that are not text: as long as the mask says (to the block's end).
            let run = if LOSSY {
                (!(noise >> k)).trailing_zeros() as usize
            } else {
                0
            };
            if run > 0 {
                out.extend_from_slice(REPLACEMENT);
                copied = at + k + run;
                replaced_to = copied;
                stops &= u64::MAX.checked_shl((copied - at) as u32).unwrap_or(0);
            } else {
                push_escape(block[k], out);
                copied = at + k + 1;
                stops &= stops - 1;
            }
        }
        at += 64;
    }
    text.push(copied, raw.len(), out);
    Ok(raw.len())
}

/// [`escape_text`] from `raw[i..]`, one unit at a time, into at most `room` bytes; `merge` when
/// a run of bytes that are not text was replaced just before `i`. Returns where it stopped, or
/// `Err` with [`Text::Utf8`] at a byte that is not UTF-8.
#[cold]
fn escape_units(
    raw: &[u8],
    mut i: usize,
    mut merge: bool,
    room: usize,
    text: Text,
    out: &mut Vec<u8>,
) -> Result<usize, NotUtf8> {
    let mut written = 0;
    while i < raw.len() {
        let b = raw[i];
        let unit = if b < 0x80 {
            if text == Text::Lossy && is_noise(b) {
                Err(1)
            } else {
                let len = usize::from(ESCAPES[usize::from(b)].1);
                if written + len > room {
                    return Ok(i);
                }
                push_escape(b, out);
                Ok(len)
            }
        } else {
            match utf8_at(raw, i) {
                Ok(n) if written + n > room => return Ok(i),
                Ok(n) => {
                    out.extend_from_slice(&raw[i..i + n]);
                    Ok(n)
                }
                Err(_) if text == Text::Utf8 => return Err(NotUtf8),
                Err(n) => Err(n),
            }
        };
        match unit {
            Ok(len) => {
                written += len;
                i += if b < 0x80 { 1 } else { len };
                merge = false;
            }
            Err(n) => {
                if !merge {
                    if written + REPLACEMENT.len() > room {
                        return Ok(i);
                    }
                    out.extend_from_slice(REPLACEMENT);
                    written += REPLACEMENT.len();
                }
                i += n;
                merge = true;
            }
        }
    }
    Ok(raw.len())
}

#[cfg(test)]
pub(super) mod tests;
