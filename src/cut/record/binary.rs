//! The text of a binary line, as `strings` prints it: the runs of at least [`MIN_STRING`]
//! printable ASCII bytes (or tabs), and one U+FFFD for each stretch between them.
//!
//! A line is binary when it is not UTF-8 and holds a byte that text does not (a control byte
//! other than the ones terminals and editors use, as `file` judges: [`holds_binary`]). Its
//! bytes have no spelling in JSON, and the single characters that random bytes happen to hold
//! between them are noise: written one U+FFFD a run, random bytes made a log a third larger
//! than their input, of which nothing could be read. A line that is not UTF-8 but holds no
//! such byte (Latin-1 text, UTF-8 with a stray byte) is text, and keeps its characters
//! ([`super::Text::Lossy`]).
//!
//! The strings are found sixty-four bytes at a time from one SIMD mask of the string bytes
//! ([`crate::line::strings::string_masks64`]): a byte is kept when it is in a window of four string bytes, which is
//! four shifts and ands of the mask (with the next block's first bytes and the last block's
//! windows carried in).

use super::escape::{REPLACEMENT, push_escape};
use crate::line::strings::{StringLoop, StringMasks, binary16, run_string_loop};

/// The fewest printable bytes in a row that make a string (`strings`' default).
pub const MIN_STRING: usize = 4;
const _: () = assert!(MIN_STRING == 4, "the windows of `Pieces` are four bytes");

/// True when `raw` holds a byte that text does not hold ([`crate::line::strings::is_binary_byte`]):
/// random bytes show one within their first few, text never does.
pub fn holds_binary(raw: &[u8]) -> bool {
    let (blocks, rest) = raw.as_chunks::<16>();
    blocks.iter().any(|b| binary16(b) != 0)
        || rest
            .iter()
            .any(|&b| crate::line::strings::is_binary_byte(b))
}

/// True when the first bytes of `line` hold a byte that text does not: the line is likely
/// binary (a guess that costs a few instructions, for what to do next, never for what is
/// written).
pub fn starts_binary(line: &[u8]) -> bool {
    holds_binary(&line[..line.len().min(64)])
}

/// A piece of a binary line's text, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece {
    /// `raw[from..to]`, bytes of a string (within one block of sixty-four), and which of them
    /// a JSON string escapes (bit `k` for `raw[from + k]`).
    String { from: usize, to: usize, escape: u64 },
    /// The start of a stretch of bytes that are in no string, written as one U+FFFD.
    Gap { at: usize },
}

/// The [`Piece`]s of a binary line, in order, from the masks `M` makes of its blocks.
pub struct Pieces<'a, M> {
    raw: &'a [u8],
    masks: M,
    /// The block being read: where it starts, its length, the position in it.
    at: usize,
    len: usize,
    k: usize,
    /// Its bytes in a string, its bytes in a gap, its bytes to escape.
    keep: u64,
    gap: u64,
    escape: u64,
    /// Bit `k`: the four bytes from `k` are string bytes.
    windows: u64,
    /// The masks of the block after it.
    next: StringMasks<u64>,
    /// The last piece was a gap (a gap that goes on into the next block is one piece).
    in_gap: bool,
}

impl<'a, M: Fn(&[u8; 64]) -> StringMasks<u64> + Copy> Pieces<'a, M> {
    #[inline(always)]
    pub fn new(raw: &'a [u8], masks: M) -> Pieces<'a, M> {
        Pieces {
            raw,
            masks,
            // So that the first block loaded starts at 0.
            at: 0usize.wrapping_sub(64),
            len: 0,
            k: 0,
            keep: 0,
            gap: 0,
            escape: 0,
            windows: 0,
            next: masks_at(raw, 0, masks),
            in_gap: false,
        }
    }

    /// Moves on to the next block; false past the line's end.
    #[inline(always)]
    fn next_block(&mut self) -> bool {
        let at = self.at.wrapping_add(64);
        if at >= self.raw.len() {
            return false;
        }
        let cur = self.next;
        self.next = if at + 64 < self.raw.len() {
            masks_at(self.raw, at + 64, self.masks)
        } else {
            StringMasks::default()
        };
        let (t, n) = (cur.text, self.next.text);
        // The next block's first bytes complete the windows of this one's last three.
        let windows = t & (t >> 1 | n << 63) & (t >> 2 | n << 62) & (t >> 3 | n << 61);
        // A byte is kept when a window covers it: one of this block's, or of the last three
        // of the block before.
        self.keep = windows
            | windows << 1
            | windows << 2
            | windows << 3
            | self.windows >> 61
            | self.windows >> 62
            | self.windows >> 63;
        self.windows = windows;
        self.len = (self.raw.len() - at).min(64);
        self.gap = !self.keep & (u64::MAX >> (64 - self.len));
        self.escape = cur.escape;
        (self.at, self.k) = (at, 0);
        true
    }
}

impl<M> Pieces<'_, M> {
    /// The next piece of the block, if any is left.
    #[inline(always)]
    fn next_in_block(&mut self) -> Option<Piece> {
        while self.k < self.len {
            let k = self.k;
            if self.keep >> k & 1 != 0 {
                let end = k + (!(self.keep >> k)).trailing_zeros() as usize;
                self.k = end;
                self.in_gap = false;
                return Some(Piece::String {
                    from: self.at + k,
                    to: self.at + end,
                    escape: self.escape >> k & (u64::MAX >> (64 - (end - k))),
                });
            }
            self.k = k + (!(self.gap >> k)).trailing_zeros() as usize;
            if !std::mem::replace(&mut self.in_gap, true) {
                return Some(Piece::Gap { at: self.at + k });
            }
        }
        None
    }

    /// Writes the whole block, as its pieces one by one would: each string copied (escaped
    /// where it must be), a U+FFFD where each gap starts. At most [`BLOCK_MAX`] bytes.
    #[inline(always)]
    fn write_block(&mut self, out: &mut Vec<u8>) {
        let (at, len) = (self.at, self.len);
        if self.gap & 1 != 0 && !self.in_gap {
            out.extend_from_slice(REPLACEMENT);
        }
        let mut keep = self.keep;
        while keep != 0 {
            let from = keep.trailing_zeros() as usize;
            let run = (!(keep >> from)).trailing_zeros() as usize;
            let to = from + run;
            let escape = self.escape >> from & (u64::MAX >> (64 - run));
            push_string(self.raw, at + from, at + to, escape, out);
            if to < len {
                // The byte after a string is in a gap.
                out.extend_from_slice(REPLACEMENT);
            }
            keep &= u64::MAX.checked_shl(to as u32).unwrap_or(0);
        }
        self.in_gap = self.gap >> (len - 1) & 1 != 0;
        self.k = len;
    }
}

/// Bytes one block makes at most: each byte escaped, or U+FFFD and a byte by turns.
const BLOCK_MAX: usize = 64 * 3;

impl<M: Fn(&[u8; 64]) -> StringMasks<u64> + Copy> Iterator for Pieces<'_, M> {
    type Item = Piece;

    #[inline(always)]
    fn next(&mut self) -> Option<Piece> {
        loop {
            if let Some(piece) = self.next_in_block() {
                return Some(piece);
            }
            if !self.next_block() {
                return None;
            }
        }
    }
}

/// The [`StringMasks`] of the block of `raw` at `at`; past its end, zeros (bytes of no string).
#[inline(always)]
fn masks_at(
    raw: &[u8],
    at: usize,
    masks: impl Fn(&[u8; 64]) -> StringMasks<u64>,
) -> StringMasks<u64> {
    let rest = raw.get(at..).unwrap_or_default();
    match rest.first_chunk::<64>() {
        Some(block) => masks(block),
        None => {
            let mut pad = [0; 64];
            pad[..rest.len()].copy_from_slice(rest);
            masks(&pad)
        }
    }
}

/// Writes the text of the binary line `raw` as the content of a JSON string until the next unit
/// (a string's byte, a U+FFFD) would take it past `limit` bytes; returns the raw bytes written
/// (all of `raw` when it fits), as [`super::escape_text`] does.
pub fn escape_binary(raw: &[u8], limit: usize, out: &mut Vec<u8>) -> usize {
    run_string_loop(Escape { raw, limit, out })
}

/// [`escape_binary`] as a [`StringLoop`], so that it runs with the widest SIMD the CPU has.
struct Escape<'a, 'b> {
    raw: &'a [u8],
    limit: usize,
    out: &'b mut Vec<u8>,
}

impl StringLoop for Escape<'_, '_> {
    type Out = usize;

    #[inline(always)]
    fn run(self, string_masks64: impl Fn(&[u8; 64]) -> StringMasks<u64> + Copy) -> usize {
        let Escape { raw, limit, out } = self;
        let start = out.len();
        let mut pieces = Pieces::new(raw, string_masks64);
        while pieces.next_block() {
            if limit - (out.len() - start) >= BLOCK_MAX {
                pieces.write_block(out);
                continue;
            }
            // Near the limit: a piece at a time, each checked.
            while let Some(piece) = pieces.next_in_block() {
                if let Some(stop) = write_piece(raw, piece, limit - (out.len() - start), out) {
                    return stop;
                }
            }
        }
        raw.len()
    }
}

/// Writes `piece` into at most `room` bytes; or, when it does not fit, as much of it as does,
/// and returns where it stopped.
#[inline(always)]
fn write_piece(raw: &[u8], piece: Piece, mut room: usize, out: &mut Vec<u8>) -> Option<usize> {
    match piece {
        Piece::Gap { at } if room < REPLACEMENT.len() => return Some(at),
        Piece::Gap { .. } => out.extend_from_slice(REPLACEMENT),
        Piece::String { from, to, escape } if to - from + escape.count_ones() as usize <= room => {
            push_string(raw, from, to, escape, out);
        }
        Piece::String { from, to, escape } => {
            for (k, &b) in raw[from..to].iter().enumerate() {
                let len = 1 + (escape >> k & 1) as usize;
                if len > room {
                    return Some(from + k);
                }
                push_escape(b, out);
                room -= len;
            }
        }
    }
    None
}

/// Appends `raw[from..to]`, bytes of a string within one block, escaping the ones `escape`
/// marks. Without escapes (the most), as one fixed copy of sixty-four bytes cut back to the
/// string's length: no call to `memcpy` for a few bytes.
#[inline(always)]
fn push_string(raw: &[u8], from: usize, to: usize, mut escape: u64, out: &mut Vec<u8>) {
    if escape == 0
        && let Some(block) = raw.get(from..).and_then(|r| r.first_chunk::<64>())
    {
        let len = out.len();
        out.extend_from_slice(block);
        out.truncate(len + (to - from));
        return;
    }
    let mut at = from;
    while escape != 0 {
        let k = from + escape.trailing_zeros() as usize;
        out.extend_from_slice(&raw[at..k]);
        push_escape(raw[k], out);
        at = k + 1;
        escape &= escape - 1;
    }
    out.extend_from_slice(&raw[at..to]);
}

/// The bytes `piece` takes when written.
fn written_len(piece: Piece) -> usize {
    match piece {
        Piece::Gap { .. } => REPLACEMENT.len(),
        Piece::String { from, to, escape } => to - from + escape.count_ones() as usize,
    }
}

/// The pieces of `raw` from `floor` on (a string that crosses it cut there).
fn pieces_from(raw: &[u8], floor: usize) -> impl Iterator<Item = Piece> {
    Pieces::new(raw, crate::line::strings::string_masks64).filter_map(move |piece| match piece {
        Piece::Gap { at } if at < floor => None,
        Piece::String { to, .. } if to <= floor => None,
        Piece::String { from, to, escape } if from < floor => Some(Piece::String {
            from: floor,
            to,
            escape: escape >> (floor - from),
        }),
        piece => Some(piece),
    })
}

/// Writes the tail of the binary line `raw` kept after a cut: the longest run of units (a
/// string's byte, a gap) at its end that starts at or after `floor` and is written in at most
/// `want` bytes, as [`super::tail_start`] finds for text. `before(start, out)` is called first,
/// with where the tail starts in `raw` (for the marker). Two passes over the line, the first
/// to add up what its units take: nothing is held but the line.
pub fn write_tail(
    raw: &[u8],
    floor: usize,
    want: usize,
    out: &mut Vec<u8>,
    before: impl FnOnce(usize, &mut Vec<u8>),
) {
    let total: usize = pieces_from(raw, floor).map(written_len).sum();
    // Bytes of units to leave out, from the first on, whole units only.
    let mut drop = total.saturating_sub(want);
    let mut pieces = pieces_from(raw, floor);
    let mut first = None;
    for mut piece in pieces.by_ref() {
        if drop == 0 {
            first = Some(piece);
            break;
        }
        if let Piece::String { from, to, escape } = &mut piece {
            while drop > 0 && from < to {
                drop = drop.saturating_sub(1 + (*escape & 1) as usize);
                *from += 1;
                *escape >>= 1;
            }
            if from < to {
                first = Some(piece);
                break;
            }
        } else {
            drop = drop.saturating_sub(REPLACEMENT.len());
        }
    }
    let start = match first {
        Some(Piece::Gap { at }) => at,
        Some(Piece::String { from, .. }) => from,
        None => raw.len(),
    };
    before(start, out);
    for piece in first.into_iter().chain(pieces) {
        write_piece(raw, piece, usize::MAX, out);
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The pieces of `raw` the plain way: each maximal run of string bytes, kept when it is
    /// at least [`MIN_STRING`] long; the rest gaps.
    fn reference(raw: &[u8]) -> Vec<(bool, std::ops::Range<usize>)> {
        let mut runs: Vec<(bool, std::ops::Range<usize>)> = Vec::new();
        let mut i = 0;
        while i < raw.len() {
            let string = crate::line::strings::is_string_byte(raw[i]);
            let end = (i..raw.len())
                .find(|&j| crate::line::strings::is_string_byte(raw[j]) != string)
                .unwrap_or(raw.len());
            let kept = string && end - i >= MIN_STRING;
            match runs.last_mut() {
                Some((false, r)) if !kept => r.end = end,
                _ => runs.push((kept, i..end)),
            }
            i = end;
        }
        runs
    }

    /// Calls `f(raw bytes, escaped bytes, replaced)` for each unit of `raw` as
    /// [`escape_binary`] writes it (a string's byte, or a gap), in order, while `f` returns
    /// true.
    pub(crate) fn for_each_unit(raw: &[u8], mut f: impl FnMut(usize, usize, bool) -> bool) {
        for (kept, r) in reference(raw) {
            if !kept {
                if !f(r.len(), REPLACEMENT.len(), true) {
                    return;
                }
                continue;
            }
            for &b in &raw[r] {
                let escaped = usize::from(super::super::escape::ESCAPES[usize::from(b)].1);
                if !f(1, escaped, false) {
                    return;
                }
            }
        }
    }

    /// [`escape_binary`] the plain way, unit by unit (a string's byte, a gap), from
    /// [`reference`]: the text, and the raw bytes written.
    pub(crate) fn escape_reference(raw: &[u8], limit: usize) -> (Vec<u8>, usize) {
        let (mut out, mut at) = (Vec::new(), 0);
        for_each_unit(raw, |raw_len, escaped, replaced| {
            if out.len() + escaped > limit {
                return false;
            }
            if replaced {
                out.extend_from_slice(REPLACEMENT);
            } else {
                push_escape(raw[at], &mut out);
            }
            at += raw_len;
            true
        });
        (out, at)
    }

    fn reference_text(raw: &[u8]) -> Vec<u8> {
        escape_reference(raw, usize::MAX).0
    }

    fn escaped(raw: &[u8]) -> String {
        let mut out = Vec::new();
        assert_eq!(escape_binary(raw, usize::MAX, &mut out), raw.len());
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_binary_line_keeps_its_strings() {
        // The start of a PNG file: its signature, then the IHDR chunk.
        let png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\x00\x00\x00\xc8\x08\x06";
        assert_eq!(escaped(png), "\u{FFFD}IHDR\u{FFFD}");
        // Strings at both ends, quotes and tabs escaped, a run of three dropped.
        let raw = b"say \"hi\"\x00\x01abc\x02\tpath\\to\x7f";
        assert_eq!(escaped(raw), "say \\\"hi\\\"\u{FFFD}\\tpath\\\\to\u{FFFD}");
        // No string at all.
        assert_eq!(escaped(b"\x00ab\x01c"), "\u{FFFD}");
    }

    #[test]
    fn strings_across_block_ends_are_kept_whole() {
        for at in 56..72 {
            for len in 1..9 {
                let mut raw = vec![0u8; 140];
                raw[at..at + len].fill(b'x');
                assert_eq!(
                    escaped(&raw),
                    String::from_utf8(reference_text(&raw)).unwrap()
                );
                let want = if len >= MIN_STRING {
                    format!("\u{FFFD}{}\u{FFFD}", "x".repeat(len))
                } else {
                    "\u{FFFD}".to_owned()
                };
                assert_eq!(escaped(&raw), want, "{at} {len}");
            }
        }
    }

    /// Cutting a binary line built its whole text and a table of its pieces, 24 bytes each:
    /// 770 MB for a 60 MiB line of short strings at `-b 2M` (found by attacking the binary
    /// records). The tail is now found in two passes that hold nothing.
    #[test]
    fn cutting_a_binary_line_keeps_the_longest_tail_that_fits() {
        let raw = b"abcd\x00".repeat(2_000_000);
        let mut out = b"head".to_vec();
        write_tail(&raw, 0, 1000, &mut out, |start, out| {
            // 142 strings and their gaps (994 bytes written), then a gap and `bcd` (6).
            assert_eq!(raw.len() - start, 142 * 5 + 1 + 3);
            out.extend_from_slice(b"[marker]");
        });
        assert_eq!(out.len(), b"head[marker]".len() + 1000);
        assert!(out.starts_with(b"head[marker]bcd\xef\xbf\xbdabcd"));
        assert!(out.ends_with("abcd\u{FFFD}".as_bytes()));
    }

    #[test]
    fn text_holds_no_binary_byte_and_random_bytes_do() {
        assert!(!holds_binary(
            b"caf\xe9 \x1b[31mred\x1b[0m\t\r\x07\x08\x0b\x0c"
        ));
        assert!(holds_binary(b"\x89PNG\r\n\x1a\n"));
        for b in 0..=255u8 {
            for lane in [0, 15, 16, 40] {
                let mut raw = vec![b'a'; 41];
                raw[lane] = b;
                assert_eq!(
                    holds_binary(&raw),
                    crate::line::strings::is_binary_byte(b),
                    "{b:#x} @ {lane}"
                );
            }
        }
    }

    fn binary_bytes() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            prop_oneof![
                6 => Just(b'a'),
                1 => Just(b'"'),
                1 => Just(b'\\'),
                1 => Just(b'\t'),
                2 => Just(0u8),
                1 => Just(0xFFu8),
                1 => Just(0x7Fu8),
                2 => any::<u8>(),
            ],
            0..400,
        )
    }

    /// [`escape_binary`] into a new buffer, as a loop the tests run each way the CPU can.
    #[derive(Clone)]
    struct EscapeNew<'a>(&'a [u8], usize);

    impl StringLoop for EscapeNew<'_> {
        type Out = (Vec<u8>, usize);
        fn run(self, masks: impl Fn(&[u8; 64]) -> StringMasks<u64> + Copy) -> (Vec<u8>, usize) {
            let mut out = Vec::new();
            let n = Escape {
                raw: self.0,
                limit: self.1,
                out: &mut out,
            }
            .run(masks);
            (out, n)
        }
    }

    proptest! {
        #[test]
        fn the_block_writer_writes_what_the_reference_writes(
            raw in binary_bytes(),
            limit in prop_oneof![Just(usize::MAX), 0usize..900],
        ) {
            let (want, want_n) = escape_reference(&raw, limit);
            let mut out = b"prefix".to_vec();
            let n = escape_binary(&raw, limit, &mut out);
            prop_assert_eq!(&out[6..], &want[..]);
            prop_assert_eq!(n, want_n);
            for each in crate::line::strings::run_string_loop_each_way(EscapeNew(&raw, limit)) {
                prop_assert_eq!(&each, &(want.clone(), want_n));
            }
        }

        #[test]
        fn the_tail_is_the_longest_that_fits(
            raw in binary_bytes(),
            floor in 0usize..450,
            want in 0usize..120,
        ) {
            let floor = floor.min(raw.len());
            // The units, each with where it starts and the bytes it takes.
            let mut units = Vec::new();
            let mut at = 0;
            for_each_unit(&raw, |raw_len, escaped, _| {
                units.push((at, escaped));
                at += raw_len;
                true
            });
            let naive = (0..=units.len())
                .filter(|&i| units.get(i).is_none_or(|u| u.0 >= floor))
                .find(|&i| units[i..].iter().map(|u| u.1).sum::<usize>() <= want)
                .unwrap();
            let mut out = Vec::new();
            let mut start = None;
            write_tail(&raw, floor, want, &mut out, |at, _| start = Some(at));
            prop_assert_eq!(start, Some(units.get(naive).map_or(raw.len(), |u| u.0)));
            let whole = escape_reference(&raw, usize::MAX).0;
            prop_assert!(whole.ends_with(&out) && out.len() <= want);
            prop_assert_eq!(out.len(), units[naive..].iter().map(|u| u.1).sum::<usize>());
        }
    }
}
