//! Where a JSON string ends: its content scanned sixty-four bytes at a time.
//!
//! This is the hottest loop of the engine. Agent text has an escape (`\n`, `\"`) every few dozen
//! bytes, so a byte-at-a-time or escape-at-a-time scan spends its time on branches. Here a block
//! becomes bit masks (which bytes are `"`, `\`, control bytes, usual escape letters) by SIMD
//! compares, which bytes are escaped follows from the backslash mask by arithmetic
//! ([`escaped_bytes`]), and a whole block is settled with no branch per escape. Blocks follow
//! each other every sixty-four bytes whatever they hold (an escape that crosses into the next
//! block is carried over), so the loads of the next blocks never wait on this one's masks.
//!
//! The masks come from SSE2 (part of every x86_64 target) or from a portable loop (AVX2 and
//! AVX-512 versions were measured less than 15% faster end to end and deleted): each family of
//! functions runs the path [`Simd::pick`] gives it (the fastest measured on this CPU, or the one
//! `SMART_TEE_SIMD=portable|sse2|avx2|avx512` forces, capped at what the CPU has; [`dispatch`]).
//! This module and its submodules hold the crate's SIMD unsafe code (the only other unsafe item
//! is `early.rs`'s start-up check): the SSE2 mask functions ([`simd`], compiled only where the
//! target has SSE2) and `trigrams`' AVX2 filter, an `unsafe fn` called only after the check that
//! makes it sound ([`Trigrams::new`]). Tests check the SIMD masks against a byte-at-a-time
//! reference on every byte value in every lane, and `scan`'s tests check the whole scan on every
//! path against a plain walk.
//!
//! The masks themselves, and the loop runner that picks the path, are in [`masks`] (and
//! [`printable`], those of binary lines); the functions compiled for SSE2 in [`simd`].
//! [`trigrams`] is a filter of short literals (`--redact`'s), with an AVX2 version.

/// The body of a function of sixteen bytes: `sse2::$f(block)` where the target has SSE2 (every
/// x86_64 target does), else `$portable(block)`.
macro_rules! sse2_or_portable {
    ($f:ident, $portable:ident, $block:expr) => {{
        #[cfg(all(
            any(target_arch = "x86_64", target_arch = "x86"),
            target_feature = "sse2"
        ))]
        #[allow(unsafe_code)]
        // SAFETY: `sse2::$f` is unsafe to call only because it is compiled for SSE2, and this
        // call is compiled only when the target enables SSE2 (the `cfg` above), so the CPU
        // running it has SSE2. It reads nothing but the block.
        return unsafe { super::simd::sse2::$f($block) };
        #[cfg(not(all(
            any(target_arch = "x86_64", target_arch = "x86"),
            target_feature = "sse2"
        )))]
        return $portable($block);
    }};
}

mod dispatch;
mod masks;
mod printable;
mod simd;
mod trigrams;

pub use dispatch::{SIMD_VAR, Simd};
pub use masks::*;
pub use printable::*;
pub use trigrams::Trigrams;

/// The line is not valid JSON. Where it went wrong is not kept: a malformed line is logged as a
/// record of its text either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Invalid;

/// The escapes other than `\u`: `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`.
pub static SIMPLE_ESCAPE: [bool; 256] = byte_set(b"\"\\/bfnrt");

/// A table of the bytes in `bytes`, to look a byte up in one load.
pub const fn byte_set(bytes: &[u8]) -> [bool; 256] {
    let mut t = [false; 256];
    let mut k = 0;
    while k < bytes.len() {
        t[bytes[k] as usize] = true;
        k += 1;
    }
    t
}

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
pub fn hex4(s: &[u8], i: usize) -> Option<u32> {
    let digits = s.get(i..)?.first_chunk::<4>()?.map(|b| HEX[b as usize]);
    if digits.iter().any(|&d| d > 0xF) {
        return None;
    }
    Some(digits.iter().fold(0, |n, &d| n << 4 | u32::from(d)))
}

/// True when the escape whose backslash is at `j` is a `\uXXXX` outside the surrogate range
/// (nearly every `\u` escape: colour codes, control characters); false for a surrogate half or
/// anything that is not four hex digits, which [`escape_end`] settles.
#[inline(always)]
fn is_plain_u_escape(s: &[u8], j: usize) -> bool {
    let Some(digits) = s.get(j + 2..).and_then(<[u8]>::first_chunk::<4>) else {
        return false;
    };
    let d = digits.map(|b| HEX[b as usize]);
    (d[0] | d[1] | d[2] | d[3]) <= 0xF && (d[0] != 0xD || d[1] < 0x8)
}

/// The escape whose backslash is at `j`; returns the index after it (after both halves of a
/// surrogate pair).
#[inline(always)]
pub fn escape_end(s: &[u8], j: usize) -> Result<usize, Invalid> {
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

/// Decodes the content of a valid JSON string (the scanner has checked it) into `out`: every
/// escape becomes the character it stands for. Used for keys written with escapes, so that
/// `"\u0074ype"` is the key `type`.
#[cold]
pub fn unescape_into(s: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut i = 0;
    while i < s.len() {
        let Some(off) = memchr::memchr(b'\\', &s[i..]) else {
            out.extend_from_slice(&s[i..]);
            break;
        };
        out.extend_from_slice(&s[i..i + off]);
        let j = i + off;
        let c = match s.get(j + 1) {
            Some(b'u') => {
                let hi = hex4(s, j + 2).unwrap_or(0xFFFD);
                let lo = (0xD800..0xDC00)
                    .contains(&hi)
                    .then(|| hex4(s, j + 8))
                    .flatten();
                i = j + if lo.is_some() { 12 } else { 6 };
                match lo {
                    Some(lo) => char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)),
                    None => char::from_u32(hi),
                }
                .unwrap_or('\u{FFFD}')
            }
            Some(&e) => {
                i = j + 2;
                match e {
                    b'n' => '\n',
                    b't' => '\t',
                    b'r' => '\r',
                    b'b' => '\u{8}',
                    b'f' => '\u{c}',
                    e => char::from(e),
                }
            }
            None => break,
        };
        let mut buf = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    }
}

/// Length of the escape at the start of `s` (a surrogate pair counts as one): `Err(true)` if
/// it is not a valid escape, `Err(false)` if `s` ends inside it.
#[inline]
pub fn escape_len(s: &[u8]) -> Result<usize, bool> {
    // Four hex digits: not there yet (`false`), or not hex digits (`true`).
    let hex4 = |h: Option<&[u8]>| hex4(h.ok_or(false)?, 0).ok_or(true);
    match *s.get(1).ok_or(false)? {
        c if SIMPLE_ESCAPE[c as usize] => Ok(2),
        b'u' => match hex4(s.get(2..6))? {
            0xDC00..=0xDFFF => Err(true),
            0xD800..=0xDBFF => {
                match (s.get(6), s.get(7)) {
                    (None, _) | (Some(b'\\'), None) => return Err(false),
                    (Some(b'\\'), Some(b'u')) => {}
                    _ => return Err(true),
                }
                match hex4(s.get(8..12))? {
                    0xDC00..=0xDFFF => Ok(12),
                    _ => Err(true),
                }
            }
            _ => Ok(6),
        },
        _ => Err(true),
    }
}

/// True when the backslash at `j` of a string's content starts an escape: a run of backslashes
/// pairs up from its start, so the last one of an odd run starts an escape.
pub fn is_escape_start(s: &[u8], j: usize) -> bool {
    let run = s[..=j].iter().rev().take_while(|&&b| b == b'\\').count();
    run % 2 == 1
}

/// Length of the escape at `j` of valid string content: a surrogate pair counts as one (12),
/// and so does each half looked at alone (6).
pub fn escape_len_in(s: &[u8], j: usize) -> usize {
    match escape_len(&s[j..]) {
        Ok(n) => n,
        Err(_) if s.get(j + 1) == Some(&b'u') => 6,
        Err(_) => 2,
    }
}

/// The last cut point at or before `p` that is not inside a UTF-8 character, an escape or a
/// surrogate pair.
pub fn boundary_at_or_before(s: &[u8], p: usize) -> usize {
    if p >= s.len() {
        return s.len();
    }
    let mut p = p;
    while p > 0 && (s[p] & 0xC0) == 0x80 {
        p -= 1;
    }
    // An escape is at most 12 bytes (a surrogate pair); the nearest escape start before `p`
    // either covers `p` or ends before it.
    let lo = p.saturating_sub(11);
    let mut j = p;
    while j > lo {
        j -= 1;
        if s[j] == b'\\' && is_escape_start(s, j) {
            if j + escape_len_in(s, j) > p {
                // A low surrogate half belongs to the pair that starts six bytes earlier.
                if j >= 6
                    && s[j - 6] == b'\\'
                    && escape_len_in(s, j - 6) == 12
                    && is_escape_start(s, j - 6)
                {
                    return j - 6;
                }
                return j;
            }
            break;
        }
    }
    p
}

/// The first cut point at or after `p` (the end, for `p` at or past it).
pub fn boundary_at_or_after(s: &[u8], p: usize) -> usize {
    if p >= s.len() {
        return s.len();
    }
    let b = boundary_at_or_before(s, p);
    if b >= p {
        return b;
    }
    let unit = if s[b] == b'\\' {
        escape_len_in(s, b)
    } else {
        utf8_len(s[b])
    };
    (b + unit).min(s.len())
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    }
}

/// True when `s` holds a byte below 0x20 (raw in string content, which is invalid). Branch-free,
/// so it vectorizes.
pub(crate) fn has_control(s: &[u8]) -> bool {
    s.chunks(4096)
        .any(|c| c.iter().fold(false, |acc, &b| acc | (b < 0x20)))
}

/// Blocks in a row with nothing to stop at, after which the rest of a run is handed to memchr.
const LONG_RUN: u32 = 4;

const EVEN: u64 = 0x5555_5555_5555_5555;
const ODD: u64 = !EVEN;

/// The bytes of a block that a backslash escapes (escaped backslashes included), from its
/// backslash mask and `carry` (1 when the block's first byte is escaped by a run that ends the
/// block before); returns them and the carry into the next block. In a run of backslashes
/// starting at `r`, those at `r`, `r + 2`, … escape the next byte, so the byte after a run of
/// length `n` is escaped when `n` is odd. Adding each odd-started run to the mask carries through
/// it; where the carries land tells, by parity, which runs started on odd bits; the carry out of
/// the top bit is the next block's.
#[inline(always)]
fn escaped_bytes(backslash: u64, carry: u64) -> (u64, u64) {
    // An escaped backslash starts no run.
    let backslash = backslash & !carry;
    let follows = (backslash << 1) | carry;
    let odd_starts = backslash & ODD & !follows;
    let (sum, overflow) = odd_starts.overflowing_add(backslash);
    ((EVEN ^ (sum << 1)) & follows, u64::from(overflow))
}

/// The `N` bytes at `at`, or, near the end of `s`, the last of them copied to `pad` and padded
/// with a byte that stops nothing and is no part of an escape (a space).
#[inline(always)]
pub(crate) fn block_at<'a, const N: usize>(
    s: &'a [u8],
    at: usize,
    pad: &'a mut [u8; N],
) -> &'a [u8; N] {
    let rest = s.get(at..).unwrap_or_default();
    match rest.first_chunk::<N>() {
        Some(block) => block,
        None => {
            *pad = [b' '; N];
            pad[..rest.len()].copy_from_slice(rest);
            pad
        }
    }
}

/// The string starting with the quote at `i` in `s` (a line already checked to be UTF-8): the
/// index after its closing quote. Validates escapes and rejects raw control bytes.
#[inline]
pub(crate) fn string_end(s: &[u8], i: usize) -> Result<usize, Invalid> {
    // Most strings are short and plain (keys, types, ids): one look at sixteen bytes ends them.
    let stops = masks16(block_at(s, i + 1, &mut [0; 16])).stops();
    let j = i + 1 + stops.trailing_zeros() as usize;
    if stops != 0 && s[j] == b'"' {
        return Ok(j + 1);
    }
    content_end(s, i + 1)
}

/// The end of the string whose content starts at `at`: sixty-four bytes at a time, on the
/// string scan's path ([`Simd::pick`]).
#[inline(never)]
fn content_end(s: &[u8], at: usize) -> Result<usize, Invalid> {
    content_end_on(Simd::pick(dispatch::default::STRING_SCAN), s, at)
}

/// [`content_end`] on `path`, at most the widest this CPU has.
#[inline(always)]
fn content_end_on(path: Simd, s: &[u8], at: usize) -> Result<usize, Invalid> {
    match path {
        Simd::Portable => content_end_with(s, at, portable_masks64, portable_u_masks64),
        _ => content_end_with(s, at, masks64, u_masks64),
    }
}

/// [`content_end`] on each code path this CPU has, the portable one first (for tests).
#[cfg(test)]
pub(crate) fn content_end_each_way(s: &[u8], at: usize) -> Vec<Result<usize, Invalid>> {
    [Simd::Portable, Simd::Sse2]
        .into_iter()
        .map(|path| content_end_on(path, s, at))
        .collect()
}

/// [`content_end`] with the masks from `masks64` and `u_masks64`: the first quote or control byte
/// that is not escaped ends the string; escaped quotes, backslashes, `n` and `t` are valid by the
/// masks, and so are most `\u` escapes; only the rare other escapes are looked at one by one
/// (`\u` whole, with its surrogate pair).
/// Blocks follow each other sixty-four bytes apart whatever they hold (what crosses from one to
/// the next is carried in two numbers), so the next block's load never waits for this one's
/// masks.
#[inline(always)]
fn content_end_with(
    s: &[u8],
    mut at: usize,
    masks64: impl Fn(&[u8; 64]) -> Masks<u64>,
    u_masks64: impl Fn(&[u8; 64]) -> UMasks<u64>,
) -> Result<usize, Invalid> {
    let mut quiet = 0;
    let mut pad = [0; 64];
    // The first byte is escaped (by a run of backslashes that ended the block before).
    let mut carry = 0;
    // Where the last surrogate pair checked whole ends: it may reach into the next block.
    let mut checked_to = at;
    loop {
        let block = block_at(s, at, &mut pad);
        let m = masks64(block);
        let mut backslash = m.backslash;
        if checked_to > at {
            // The rest of a surrogate pair checked in the block before: its backslash neither
            // escapes nor is escaped.
            backslash &= u64::MAX << (checked_to - at);
            carry = 0;
        }
        let (escaped, carry_out) = escaped_bytes(backslash, carry);
        let ends = m.quote & !escaped;
        // The bits before the closing quote; all of them when the string goes on.
        let inside = (ends & ends.wrapping_neg()).wrapping_sub(1);
        if m.control & inside != 0 {
            return Err(Invalid);
        }
        // Escaped quotes, backslashes, `n` and `t` (nearly all escapes) are settled by the masks,
        // and so is a `\u` with four hex digits after it in the block, the first not `d` or `D`
        // (not a surrogate half: nearly every `\u` escape, colour codes and control characters).
        // That takes no branch per `\u`, which would be mispredicted in text where they are
        // sparse; blocks without a backslash (a branch taken or not for long stretches) skip it.
        let mut settled = m.quote | m.backslash | m.letter;
        if m.backslash != 0 {
            let h = u_masks64(block);
            let hex4 = (h.hex >> 1) & (h.hex >> 2) & (h.hex >> 3) & (h.hex >> 4);
            settled |= h.u & hex4 & !(h.d >> 1);
        }
        let mut escapes = escaped & inside & !settled;
        while escapes != 0 {
            let k = escapes.trailing_zeros() as usize;
            escapes &= escapes - 1;
            if block[k] != b'u' {
                if SIMPLE_ESCAPE[block[k] as usize] {
                    continue;
                }
                return Err(Invalid);
            }
            // The backslash is at `at + k - 1`: in the block before when `k == 0`.
            // A plain `\uXXXX` that reaches into the next block leaves hex digits there, which
            // stop nothing; so does a `\uD000`…`\uD7FF`.
            if is_plain_u_escape(s, at + k - 1) {
                continue;
            }
            let end = escape_end(s, at + k - 1)?;
            if end - (at + k - 1) == 12 {
                // A surrogate pair: its second half is checked with it.
                escapes &= !1u64.checked_shl(k as u32 + 6).unwrap_or(0);
            }
            checked_to = checked_to.max(end);
        }
        if ends != 0 {
            return Ok(at + ends.trailing_zeros() as usize + 1);
        }
        if at + 64 >= s.len() {
            return Err(Invalid);
        }
        at += 64;
        carry = carry_out;
        quiet = if m.backslash == 0 && m.control == 0 {
            quiet + 1
        } else {
            0
        };
        if quiet == LONG_RUN && checked_to <= at {
            // A long plain run (base64, minified text): memchr's unrolled wide loop is faster.
            let run = memchr::memchr2(b'"', b'\\', &s[at..]).ok_or(Invalid)?;
            if has_control(&s[at..at + run]) {
                return Err(Invalid);
            }
            at += run;
        }
    }
}

#[cfg(test)]
mod boundary_tests {
    use super::*;

    /// Found by attacking --redact: a string of a giant line's reduced copy that redaction made
    /// shorter than the reduction's cut points was asked for a cut point past its end, and the
    /// line's processing panicked (caught, and logged as a truncated record).
    #[test]
    fn a_cut_point_past_the_end_is_the_end() {
        let s = br#"abc\u00e9def"#;
        assert_eq!(boundary_at_or_after(s, s.len()), s.len());
        assert_eq!(boundary_at_or_after(s, s.len() + 7), s.len());
        assert_eq!(boundary_at_or_before(s, s.len() + 7), s.len());
        assert_eq!(boundary_at_or_after(s, 4), 9);
    }
}
