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
//! The masks come from SSE2 (part of every x86_64 target), from AVX2 or AVX-512BW when the CPU
//! has them (detected at run time), or from a portable loop elsewhere. This module holds the
//! crate's SIMD unsafe code (the only other unsafe item is `early.rs`'s start-up check): the
//! calls into functions compiled for those instruction sets, each after the check that makes it
//! sound. Tests check the SIMD masks against a byte-at-a-time reference on every byte value in
//! every lane, and `scan`'s tests check the whole scan, each way this CPU can run it, against a
//! plain walk.

/// The line is not valid JSON. Where it went wrong is not kept: a malformed line is logged as a
/// record of its text either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Invalid;

/// The escapes other than `\u`: `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`.
pub static SIMPLE_ESCAPE: [bool; 256] = {
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

/// The first cut point at or after `p`.
pub fn boundary_at_or_after(s: &[u8], p: usize) -> usize {
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

/// Which bytes of a block are `"`, `\`, `n` or `t` (the usual escape letters: an escaped byte
/// that is one of these four needs no further check), and below 0x20: bit `k` for byte `k`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Masks<T> {
    pub quote: T,
    pub backslash: T,
    pub letter: T,
    pub control: T,
}

/// Which bytes of a block may belong to a `\uXXXX` escape: `u`, hex digits, and `d` or `D` (the
/// first digit of every surrogate half): bit `k` for byte `k`. Looked at only in blocks with a
/// backslash.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UMasks<T> {
    pub u: T,
    pub hex: T,
    pub d: T,
}

/// Which bytes of a block can make a run of integer array elements (`1,-2, 30`): ASCII digits,
/// `0` among them, `,`, ` ` and `-`: bit `k` for byte `k`. Read by [`crate::line::scan::integers`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NumMasks<T> {
    pub digit: T,
    pub zero: T,
    pub comma: T,
    pub space: T,
    pub minus: T,
}

impl Masks<u32> {
    /// Quotes, backslashes and control characters together.
    #[inline(always)]
    pub fn stops(self) -> u32 {
        self.quote | self.backslash | self.control
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

/// The end of the string whose content starts at `at`: sixty-four bytes at a time.
#[inline(never)]
fn content_end(s: &[u8], at: usize) -> Result<usize, Invalid> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512bw") {
        #[allow(unsafe_code)]
        // SAFETY: `avx512::content_end` is unsafe to call only because it is compiled for
        // AVX-512BW, and the CPU has it (checked just above).
        return unsafe { avx512::content_end(s, at) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        #[allow(unsafe_code)]
        // SAFETY: `avx2::content_end` is unsafe to call only because it is compiled for AVX2,
        // and the CPU has AVX2 (checked just above).
        return unsafe { avx2::content_end(s, at) };
    }
    content_end_with(s, at, masks64, u_masks64)
}

/// [`content_end`] as each kind of CPU runs it: without AVX2, with AVX2, with AVX-512BW (the
/// last two when this CPU has them; for tests).
#[cfg(test)]
pub(crate) fn content_end_each_way(s: &[u8], at: usize) -> Vec<Result<usize, Invalid>> {
    let mut ends = vec![content_end_with(s, at, masks64, u_masks64)];
    #[cfg(target_arch = "x86_64")]
    {
        #[allow(unsafe_code)]
        if is_x86_feature_detected!("avx2") {
            // SAFETY: as in `content_end`: the CPU has AVX2, checked just above.
            ends.push(unsafe { avx2::content_end(s, at) });
        }
        #[allow(unsafe_code)]
        if is_x86_feature_detected!("avx512bw") {
            // SAFETY: as in `content_end`: the CPU has AVX-512BW, checked just above.
            ends.push(unsafe { avx512::content_end(s, at) });
        }
    }
    ends
}

/// [`masks64`] as each kind of CPU computes it: without AVX2, with AVX2, with AVX-512BW (the last
/// two when this CPU has them; for tests).
#[cfg(test)]
fn masks64_each_way(block: &[u8; 64]) -> Vec<(Masks<u64>, UMasks<u64>)> {
    let mut masks = vec![(masks64(block), u_masks64(block))];
    #[cfg(target_arch = "x86_64")]
    {
        #[allow(unsafe_code)]
        if is_x86_feature_detected!("avx2") {
            // SAFETY: as in `content_end`: the CPU has AVX2, checked just above.
            masks.push(unsafe { (avx2::masks64(block), avx2::u_masks64(block)) });
        }
        #[allow(unsafe_code)]
        if is_x86_feature_detected!("avx512bw") {
            // SAFETY: as in `content_end`: the CPU has AVX-512BW, checked just above.
            masks.push(unsafe { (avx512::masks64(block), avx512::u_masks64(block)) });
        }
    }
    masks
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

/// The masks of sixteen bytes.
#[inline(always)]
pub fn masks16(block: &[u8; 16]) -> Masks<u32> {
    #[cfg(all(
        any(target_arch = "x86_64", target_arch = "x86"),
        target_feature = "sse2"
    ))]
    #[allow(unsafe_code)]
    // SAFETY: `sse2::masks16` is unsafe to call only because it is compiled for SSE2, and this
    // call is compiled only when the target enables SSE2 (the `cfg` above; every x86_64 target
    // does), so the CPU running it has SSE2. It reads nothing but `block`.
    return unsafe { sse2::masks16(block) };
    #[cfg(not(all(
        any(target_arch = "x86_64", target_arch = "x86"),
        target_feature = "sse2"
    )))]
    return portable_masks16(block);
}

/// The masks of sixty-four bytes.
#[inline(always)]
pub fn masks64(block: &[u8; 64]) -> Masks<u64> {
    let mut m = Masks::default();
    for (k, chunk) in block.as_chunks::<16>().0.iter().enumerate() {
        let part = masks16(chunk);
        m.quote |= u64::from(part.quote) << (16 * k);
        m.backslash |= u64::from(part.backslash) << (16 * k);
        m.letter |= u64::from(part.letter) << (16 * k);
        m.control |= u64::from(part.control) << (16 * k);
    }
    m
}

/// Which bytes of a block are what, for writing text that is not UTF-8 throughout
/// (`record.rs`): bit `k` for byte `k`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TextMasks<T> {
    /// Not ASCII (the high bit set).
    pub high: T,
    /// UTF-8 continuation bytes, `0x80..=0xBF`; of them `0x80..=0x8F` and `0x90..=0x9F`.
    pub cont: T,
    pub cont_8: T,
    pub cont_9: T,
    /// The first byte of a two-, three- and four-byte character (`0xC2..=0xDF`,
    /// `0xE0..=0xEF`, `0xF0..=0xF4`).
    pub lead2: T,
    pub lead3: T,
    pub lead4: T,
    /// The leads whose second byte has a narrower range.
    pub e0: T,
    pub ed: T,
    pub f0: T,
    pub f4: T,
    pub tab: T,
    pub del: T,
}

/// The text masks of sixty-four bytes.
#[inline(always)]
pub fn text_masks64(block: &[u8; 64]) -> TextMasks<u64> {
    let mut m = TextMasks::default();
    for (k, chunk) in block.as_chunks::<16>().0.iter().enumerate() {
        let p = text_masks16(chunk);
        let w = |x: u32| u64::from(x) << (16 * k);
        m.high |= w(p.high);
        m.cont |= w(p.cont);
        m.cont_8 |= w(p.cont_8);
        m.cont_9 |= w(p.cont_9);
        m.lead2 |= w(p.lead2);
        m.lead3 |= w(p.lead3);
        m.lead4 |= w(p.lead4);
        m.e0 |= w(p.e0);
        m.ed |= w(p.ed);
        m.f0 |= w(p.f0);
        m.f4 |= w(p.f4);
        m.tab |= w(p.tab);
        m.del |= w(p.del);
    }
    m
}

/// A loop over 64-byte blocks that reads their [`Masks`] and [`TextMasks`] (the record
/// writers of `record.rs`), run by [`run_block_loop`] compiled for the widest SIMD this CPU has.
pub trait BlockLoop {
    type Out;
    /// Runs the loop with these mask functions. Should be `#[inline(always)]`, so that it is
    /// compiled into each instruction set's caller.
    fn run(
        self,
        masks64: impl Fn(&[u8; 64]) -> Masks<u64>,
        text_masks64: impl Fn(&[u8; 64]) -> TextMasks<u64>,
    ) -> Self::Out;
}

/// Runs `body` with the masks computed by AVX-512BW or AVX2 when the CPU has them (detected at
/// run time), else by SSE2 or the portable code.
pub fn run_block_loop<L: BlockLoop>(body: L) -> L::Out {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512bw") {
        #[allow(unsafe_code)]
        // SAFETY: `avx512::run_block_loop` is unsafe to call only because it is compiled for
        // AVX-512BW, and the CPU has it (checked just above).
        return unsafe { avx512::run_block_loop(body) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        #[allow(unsafe_code)]
        // SAFETY: as above, for AVX2.
        return unsafe { avx2::run_block_loop(body) };
    }
    body.run(masks64, text_masks64)
}

/// [`run_block_loop`] each way this CPU can run it (for tests).
#[cfg(test)]
pub(crate) fn run_block_loop_each_way<L: BlockLoop + Clone>(body: L) -> Vec<L::Out> {
    let mut outs = vec![body.clone().run(masks64, text_masks64)];
    #[cfg(target_arch = "x86_64")]
    {
        #[allow(unsafe_code)]
        if is_x86_feature_detected!("avx2") {
            // SAFETY: as in `run_block_loop`: the CPU has AVX2, checked just above.
            outs.push(unsafe { avx2::run_block_loop(body.clone()) });
        }
        #[allow(unsafe_code)]
        if is_x86_feature_detected!("avx512bw") {
            // SAFETY: as in `run_block_loop`: the CPU has AVX-512BW, checked just above.
            outs.push(unsafe { avx512::run_block_loop(body) });
        }
    }
    outs
}

/// [`text_masks64`] each way this CPU computes it (for tests).
#[cfg(test)]
fn text_masks64_each_way(block: &[u8; 64]) -> Vec<TextMasks<u64>> {
    let mut masks = vec![text_masks64(block)];
    #[cfg(target_arch = "x86_64")]
    {
        #[allow(unsafe_code)]
        if is_x86_feature_detected!("avx2") {
            // SAFETY: as in `run_block_loop`: the CPU has AVX2, checked just above.
            masks.push(unsafe { avx2::text_masks64(block) });
        }
        #[allow(unsafe_code)]
        if is_x86_feature_detected!("avx512bw") {
            // SAFETY: as in `run_block_loop`: the CPU has AVX-512BW, checked just above.
            masks.push(unsafe { avx512::text_masks64(block) });
        }
    }
    masks
}

/// The text masks of sixteen bytes.
#[inline(always)]
pub fn text_masks16(block: &[u8; 16]) -> TextMasks<u32> {
    #[cfg(all(
        any(target_arch = "x86_64", target_arch = "x86"),
        target_feature = "sse2"
    ))]
    #[allow(unsafe_code)]
    // SAFETY: as in `masks16`.
    return unsafe { sse2::text_masks16(block) };
    #[cfg(not(all(
        any(target_arch = "x86_64", target_arch = "x86"),
        target_feature = "sse2"
    )))]
    return portable_text_masks16(block);
}

/// [`text_masks16`] without SIMD instructions: a byte at a time (the masks of text that is not
/// UTF-8 are read only on targets without SSE2 and in tests).
pub fn portable_text_masks16(block: &[u8; 16]) -> TextMasks<u32> {
    let bits = |f: fn(u8) -> bool| (0..16).fold(0, |m, k| m | u32::from(f(block[k])) << k);
    TextMasks {
        high: bits(|b| b >= 0x80),
        cont: bits(|b| (0x80..=0xBF).contains(&b)),
        cont_8: bits(|b| (0x80..=0x8F).contains(&b)),
        cont_9: bits(|b| (0x90..=0x9F).contains(&b)),
        lead2: bits(|b| (0xC2..=0xDF).contains(&b)),
        lead3: bits(|b| (0xE0..=0xEF).contains(&b)),
        lead4: bits(|b| (0xF0..=0xF4).contains(&b)),
        e0: bits(|b| b == 0xE0),
        ed: bits(|b| b == 0xED),
        f0: bits(|b| b == 0xF0),
        f4: bits(|b| b == 0xF4),
        tab: bits(|b| b == b'\t'),
        del: bits(|b| b == 0x7F),
    }
}

/// The masks of the bytes of `\u` escapes in sixteen bytes.
#[inline(always)]
pub fn u_masks16(block: &[u8; 16]) -> UMasks<u32> {
    #[cfg(all(
        any(target_arch = "x86_64", target_arch = "x86"),
        target_feature = "sse2"
    ))]
    #[allow(unsafe_code)]
    // SAFETY: as in `masks16`.
    return unsafe { sse2::u_masks16(block) };
    #[cfg(not(all(
        any(target_arch = "x86_64", target_arch = "x86"),
        target_feature = "sse2"
    )))]
    return portable_u_masks16(block);
}

/// The masks of the bytes of `\u` escapes in sixty-four bytes.
#[inline(always)]
pub fn u_masks64(block: &[u8; 64]) -> UMasks<u64> {
    let mut m = UMasks::default();
    for (k, chunk) in block.as_chunks::<16>().0.iter().enumerate() {
        let part = u_masks16(chunk);
        m.u |= u64::from(part.u) << (16 * k);
        m.hex |= u64::from(part.hex) << (16 * k);
        m.d |= u64::from(part.d) << (16 * k);
    }
    m
}

/// The masks of the bytes of integer runs in sixteen bytes.
#[inline(always)]
pub fn num_masks16(block: &[u8; 16]) -> NumMasks<u32> {
    #[cfg(all(
        any(target_arch = "x86_64", target_arch = "x86"),
        target_feature = "sse2"
    ))]
    #[allow(unsafe_code)]
    // SAFETY: as in `masks16`.
    return unsafe { sse2::num_masks16(block) };
    #[cfg(not(all(
        any(target_arch = "x86_64", target_arch = "x86"),
        target_feature = "sse2"
    )))]
    return portable_num_masks16(block);
}

/// The masks of the bytes of integer runs in sixty-four bytes.
#[inline(always)]
pub fn num_masks64(block: &[u8; 64]) -> NumMasks<u64> {
    let mut m = NumMasks::default();
    for (k, chunk) in block.as_chunks::<16>().0.iter().enumerate() {
        let part = num_masks16(chunk);
        m.digit |= u64::from(part.digit) << (16 * k);
        m.zero |= u64::from(part.zero) << (16 * k);
        m.comma |= u64::from(part.comma) << (16 * k);
        m.space |= u64::from(part.space) << (16 * k);
        m.minus |= u64::from(part.minus) << (16 * k);
    }
    m
}

const ONES: u64 = 0x0101_0101_0101_0101;
const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;

/// The high bit of each byte of `w` that is zero (exact: no borrow crosses bytes).
#[inline(always)]
fn zero(w: u64) -> u64 {
    !(((w & LOW7) + LOW7) | w | LOW7)
}

/// The high bits gathered into one bit a byte: the high bit of byte `k` lands on bit `k`.
#[inline(always)]
fn gather(high: u64) -> u32 {
    ((high >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u32
}

/// The same masks as [`masks16`] without SIMD instructions: eight bytes at a time in a `u64`
/// (SWAR), for targets without SSE2.
pub fn portable_masks16(block: &[u8; 16]) -> Masks<u32> {
    let mut m = Masks::default();
    for (k, word) in block.as_chunks::<8>().0.iter().enumerate() {
        let w = u64::from_le_bytes(*word);
        let eq = |byte: u8| zero(w ^ (ONES * u64::from(byte)));
        m.quote |= gather(eq(b'"')) << (8 * k);
        m.backslash |= gather(eq(b'\\')) << (8 * k);
        m.letter |= gather(eq(b'n') | eq(b't')) << (8 * k);
        // Below 0x20: the top bit clear, and the low seven bits plus 0x60 still below 0x80.
        m.control |= gather(!(((w & LOW7) + ONES * 0x60) | w) & !LOW7) << (8 * k);
    }
    m
}

/// The same masks as [`u_masks16`] without SIMD instructions (SWAR, as [`portable_masks16`]).
pub fn portable_u_masks16(block: &[u8; 16]) -> UMasks<u32> {
    let mut m = UMasks::default();
    for (k, word) in block.as_chunks::<8>().0.iter().enumerate() {
        let w = u64::from_le_bytes(*word);
        let eq = |byte: u8| zero(w ^ (ONES * u64::from(byte)));
        // From `lo` to `hi` (ASCII): the top bit clear, the low seven bits plus `0x80 - lo` at
        // or past 0x80, plus `0x7F - hi` not.
        let within = |lo: u8, hi: u8| {
            let x = w & LOW7;
            let from = x + ONES * u64::from(0x80 - lo);
            let past = x + ONES * u64::from(0x7F - hi);
            from & !past & !w & !LOW7
        };
        m.u |= gather(eq(b'u')) << (8 * k);
        m.hex |= gather(within(b'0', b'9') | within(b'a', b'f') | within(b'A', b'F')) << (8 * k);
        m.d |= gather(eq(b'd') | eq(b'D')) << (8 * k);
    }
    m
}

/// The same masks as [`num_masks16`] without SIMD instructions (SWAR, as [`portable_masks16`]).
pub fn portable_num_masks16(block: &[u8; 16]) -> NumMasks<u32> {
    let mut m = NumMasks::default();
    for (k, word) in block.as_chunks::<8>().0.iter().enumerate() {
        let w = u64::from_le_bytes(*word);
        let eq = |byte: u8| zero(w ^ (ONES * u64::from(byte)));
        // `0`…`9`: the top bit clear, the low seven bits plus 0x50 at or past 0x80, plus 0x46
        // not (as `within` in `portable_u_masks16`).
        let x = w & LOW7;
        let digit = (x + ONES * 0x50) & !(x + ONES * 0x46) & !w & !LOW7;
        m.digit |= gather(digit) << (8 * k);
        m.zero |= gather(eq(b'0')) << (8 * k);
        m.comma |= gather(eq(b',')) << (8 * k);
        m.space |= gather(eq(b' ')) << (8 * k);
        m.minus |= gather(eq(b'-')) << (8 * k);
    }
    m
}

#[cfg(all(
    any(target_arch = "x86_64", target_arch = "x86"),
    target_feature = "sse2"
))]
mod sse2 {
    #[cfg(target_arch = "x86")]
    use std::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use std::arch::x86_64::*;

    /// Sixteen bytes in a vector, built from the array (no pointer): one unaligned load.
    #[inline]
    #[target_feature(enable = "sse2")]
    #[rustfmt::skip]
    pub fn load(b: &[u8; 16]) -> __m128i {
        let v = b.map(|x| x as i8);
        _mm_set_epi8(
            v[15], v[14], v[13], v[12], v[11], v[10], v[9], v[8],
            v[7], v[6], v[5], v[4], v[3], v[2], v[1], v[0],
        )
    }

    #[inline]
    #[target_feature(enable = "sse2")]
    pub fn masks16(b: &[u8; 16]) -> super::Masks<u32> {
        let v = load(b);
        let mask = |eq| _mm_movemask_epi8(eq) as u32;
        let eq = |byte: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(byte as i8));
        super::Masks {
            quote: mask(eq(b'"')),
            backslash: mask(eq(b'\\')),
            letter: mask(_mm_or_si128(eq(b'n'), eq(b't'))),
            // Unsigned `v <= 0x1F`: SSE2 has no unsigned compare, but min(v, 0x1F) == v is one.
            control: mask(_mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v)),
        }
    }

    #[inline]
    #[target_feature(enable = "sse2")]
    pub fn text_masks16(b: &[u8; 16]) -> super::TextMasks<u32> {
        let v = load(b);
        let mask = |x| _mm_movemask_epi8(x) as u32;
        // Signed compares: the bytes from 0x80 are the negative ones, in order.
        let lt = |n: u8| mask(_mm_cmplt_epi8(v, _mm_set1_epi8(n as i8)));
        let gt = |n: u8| mask(_mm_cmpgt_epi8(v, _mm_set1_epi8(n as i8)));
        let eq = |n: u8| mask(_mm_cmpeq_epi8(v, _mm_set1_epi8(n as i8)));
        let high = mask(v);
        let below_90 = lt(0x90);
        super::TextMasks {
            high,
            cont: lt(0xC0),
            cont_8: below_90,
            cont_9: lt(0xA0) & !below_90,
            lead2: high & gt(0xC1) & lt(0xE0),
            lead3: high & gt(0xDF) & lt(0xF0),
            lead4: high & gt(0xEF) & lt(0xF5),
            e0: eq(0xE0),
            ed: eq(0xED),
            f0: eq(0xF0),
            f4: eq(0xF4),
            tab: eq(b'\t'),
            del: eq(0x7F),
        }
    }

    #[inline]
    #[target_feature(enable = "sse2")]
    pub fn u_masks16(b: &[u8; 16]) -> super::UMasks<u32> {
        let v = load(b);
        let mask = |eq| _mm_movemask_epi8(eq) as u32;
        let at_most = |x, max: u8| _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(max as i8)), x);
        let lower = _mm_or_si128(v, _mm_set1_epi8(0x20));
        super::UMasks {
            u: mask(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'u' as i8))),
            // `0`…`9`, and `a`…`f` in either case (the case bit set).
            hex: mask(_mm_or_si128(
                at_most(_mm_sub_epi8(v, _mm_set1_epi8(b'0' as i8)), 9),
                at_most(_mm_sub_epi8(lower, _mm_set1_epi8(b'a' as i8)), 5),
            )),
            d: mask(_mm_cmpeq_epi8(lower, _mm_set1_epi8(b'd' as i8))),
        }
    }

    #[inline]
    #[target_feature(enable = "sse2")]
    pub fn num_masks16(b: &[u8; 16]) -> super::NumMasks<u32> {
        let v = load(b);
        let mask = |eq| _mm_movemask_epi8(eq) as u32;
        let eq = |byte: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(byte as i8));
        let digit = _mm_sub_epi8(v, _mm_set1_epi8(b'0' as i8));
        super::NumMasks {
            // Unsigned `v - '0' <= 9`, as `min` (see `masks16`).
            digit: mask(_mm_cmpeq_epi8(_mm_min_epu8(digit, _mm_set1_epi8(9)), digit)),
            zero: mask(eq(b'0')),
            comma: mask(eq(b',')),
            space: mask(eq(b' ')),
            minus: mask(eq(b'-')),
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{BlockLoop, Invalid, Masks, TextMasks, UMasks};
    use std::arch::x86_64::*;

    #[target_feature(enable = "avx2")]
    pub fn run_block_loop<L: BlockLoop>(body: L) -> L::Out {
        body.run(|block| masks64(block), |block| text_masks64(block))
    }

    /// [`super::text_masks64`], thirty-two bytes per compare.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) fn text_masks64(block: &[u8; 64]) -> TextMasks<u64> {
        let mut m = TextMasks::default();
        for (k, halves) in block.as_chunks::<16>().0.chunks_exact(2).enumerate() {
            let v = _mm256_set_m128i(super::sse2::load(&halves[1]), super::sse2::load(&halves[0]));
            let mask = |x| u64::from(_mm256_movemask_epi8(x) as u32) << (32 * k);
            let n = |b: u8| _mm256_set1_epi8(b as i8);
            // Signed compares, as in SSE2.
            let lt = |b: u8| mask(_mm256_cmpgt_epi8(n(b), v));
            let gt = |b: u8| mask(_mm256_cmpgt_epi8(v, n(b)));
            let eq = |b: u8| mask(_mm256_cmpeq_epi8(v, n(b)));
            let high = mask(v);
            let below_90 = lt(0x90);
            m.high |= high;
            m.cont |= lt(0xC0);
            m.cont_8 |= below_90;
            m.cont_9 |= lt(0xA0) & !below_90;
            m.lead2 |= high & gt(0xC1) & lt(0xE0);
            m.lead3 |= high & gt(0xDF) & lt(0xF0);
            m.lead4 |= high & gt(0xEF) & lt(0xF5);
            m.e0 |= eq(0xE0);
            m.ed |= eq(0xED);
            m.f0 |= eq(0xF0);
            m.f4 |= eq(0xF4);
            m.tab |= eq(b'\t');
            m.del |= eq(0x7F);
        }
        m
    }

    #[target_feature(enable = "avx2")]
    pub fn content_end(s: &[u8], at: usize) -> Result<usize, Invalid> {
        super::content_end_with(s, at, |block| masks64(block), |block| u_masks64(block))
    }

    /// [`super::masks64`], thirty-two bytes per compare.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) fn masks64(block: &[u8; 64]) -> Masks<u64> {
        let mut m = Masks::default();
        for (k, halves) in block.as_chunks::<16>().0.chunks_exact(2).enumerate() {
            let v = _mm256_set_m128i(super::sse2::load(&halves[1]), super::sse2::load(&halves[0]));
            let mask = |eq| u64::from(_mm256_movemask_epi8(eq) as u32) << (32 * k);
            let eq = |byte: u8| _mm256_cmpeq_epi8(v, _mm256_set1_epi8(byte as i8));
            m.quote |= mask(eq(b'"'));
            m.backslash |= mask(eq(b'\\'));
            m.letter |= mask(_mm256_or_si256(eq(b'n'), eq(b't')));
            // Unsigned `v <= 0x1F`, as in SSE2.
            let low = _mm256_min_epu8(v, _mm256_set1_epi8(0x1F));
            m.control |= mask(_mm256_cmpeq_epi8(low, v));
        }
        m
    }

    /// [`super::u_masks64`], thirty-two bytes per compare.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) fn u_masks64(block: &[u8; 64]) -> UMasks<u64> {
        let mut m = UMasks::default();
        for (k, halves) in block.as_chunks::<16>().0.chunks_exact(2).enumerate() {
            let v = _mm256_set_m128i(super::sse2::load(&halves[1]), super::sse2::load(&halves[0]));
            let mask = |eq| u64::from(_mm256_movemask_epi8(eq) as u32) << (32 * k);
            let at_most =
                |x, max: u8| _mm256_cmpeq_epi8(_mm256_min_epu8(x, _mm256_set1_epi8(max as i8)), x);
            let lower = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
            m.u |= mask(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'u' as i8)));
            m.hex |= mask(_mm256_or_si256(
                at_most(_mm256_sub_epi8(v, _mm256_set1_epi8(b'0' as i8)), 9),
                at_most(_mm256_sub_epi8(lower, _mm256_set1_epi8(b'a' as i8)), 5),
            ));
            m.d |= mask(_mm256_cmpeq_epi8(lower, _mm256_set1_epi8(b'd' as i8)));
        }
        m
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{BlockLoop, Invalid, Masks, TextMasks, UMasks};
    use std::arch::x86_64::*;

    #[target_feature(enable = "avx512bw")]
    pub fn run_block_loop<L: BlockLoop>(body: L) -> L::Out {
        body.run(|block| masks64(block), |block| text_masks64(block))
    }

    #[target_feature(enable = "avx512bw")]
    pub fn content_end(s: &[u8], at: usize) -> Result<usize, Invalid> {
        super::content_end_with(s, at, |block| masks64(block), |block| u_masks64(block))
    }

    /// All sixty-four bytes of a block in one vector (a macro, not a function: a function
    /// compiled for AVX-512 may not be forced inline, and one left out of line returns the
    /// vector through memory).
    macro_rules! load {
        ($block:expr) => {{
            let halves = $block.as_chunks::<16>().0;
            let low =
                _mm256_set_m128i(super::sse2::load(&halves[1]), super::sse2::load(&halves[0]));
            let high =
                _mm256_set_m128i(super::sse2::load(&halves[3]), super::sse2::load(&halves[2]));
            _mm512_inserti64x4::<1>(_mm512_castsi256_si512(low), high)
        }};
    }

    /// [`super::masks64`], all sixty-four bytes in one vector, each compare straight into a
    /// mask register.
    #[inline]
    #[target_feature(enable = "avx512bw")]
    pub(super) fn masks64(block: &[u8; 64]) -> Masks<u64> {
        let v = load!(block);
        let eq = |byte: u8| _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(byte as i8));
        Masks {
            quote: eq(b'"'),
            backslash: eq(b'\\'),
            letter: eq(b'n') | eq(b't'),
            control: _mm512_cmplt_epu8_mask(v, _mm512_set1_epi8(0x20)),
        }
    }

    /// [`super::u_masks64`], all sixty-four bytes in one vector.
    #[inline]
    #[target_feature(enable = "avx512bw")]
    pub(super) fn u_masks64(block: &[u8; 64]) -> UMasks<u64> {
        let v = load!(block);
        let below = |x, end: u8| _mm512_cmplt_epu8_mask(x, _mm512_set1_epi8(end as i8));
        let lower = _mm512_or_si512(v, _mm512_set1_epi8(0x20));
        UMasks {
            u: _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b'u' as i8)),
            hex: below(_mm512_sub_epi8(v, _mm512_set1_epi8(b'0' as i8)), 10)
                | below(_mm512_sub_epi8(lower, _mm512_set1_epi8(b'a' as i8)), 6),
            d: _mm512_cmpeq_epi8_mask(lower, _mm512_set1_epi8(b'd' as i8)),
        }
    }

    /// [`super::text_masks64`], all sixty-four bytes in one vector.
    #[inline]
    #[target_feature(enable = "avx512bw")]
    pub(super) fn text_masks64(block: &[u8; 64]) -> TextMasks<u64> {
        let v = load!(block);
        let n = |b: u8| _mm512_set1_epi8(b as i8);
        // Signed compares, as in SSE2.
        let lt = |b: u8| _mm512_cmplt_epi8_mask(v, n(b));
        let gt = |b: u8| _mm512_cmpgt_epi8_mask(v, n(b));
        let eq = |b: u8| _mm512_cmpeq_epi8_mask(v, n(b));
        let high = _mm512_movepi8_mask(v);
        let below_90 = lt(0x90);
        TextMasks {
            high,
            cont: lt(0xC0),
            cont_8: below_90,
            cont_9: lt(0xA0) & !below_90,
            lead2: high & gt(0xC1) & lt(0xE0),
            lead3: high & gt(0xDF) & lt(0xF0),
            lead4: high & gt(0xEF) & lt(0xF5),
            e0: eq(0xE0),
            ed: eq(0xED),
            f0: eq(0xF0),
            f4: eq(0xF4),
            tab: eq(b'\t'),
            del: eq(0x7F),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reference(block: &[u8]) -> Masks<u64> {
        let bits = |f: &dyn Fn(u8) -> bool| {
            block
                .iter()
                .enumerate()
                .fold(0, |m, (k, &b)| m | u64::from(f(b)) << k)
        };
        Masks {
            quote: bits(&|b| b == b'"'),
            backslash: bits(&|b| b == b'\\'),
            letter: bits(&|b| b == b'n' || b == b't'),
            control: bits(&|b| b < 0x20),
        }
    }

    fn u_reference(block: &[u8]) -> UMasks<u64> {
        let bits = |f: &dyn Fn(u8) -> bool| {
            block
                .iter()
                .enumerate()
                .fold(0, |m, (k, &b)| m | u64::from(f(b)) << k)
        };
        UMasks {
            u: bits(&|b| b == b'u'),
            hex: bits(&|b| b.is_ascii_hexdigit()),
            d: bits(&|b| b == b'd' || b == b'D'),
        }
    }

    fn num_reference(block: &[u8]) -> NumMasks<u64> {
        let bits = |f: &dyn Fn(u8) -> bool| {
            block
                .iter()
                .enumerate()
                .fold(0, |m, (k, &b)| m | u64::from(f(b)) << k)
        };
        NumMasks {
            digit: bits(&|b| b.is_ascii_digit()),
            zero: bits(&|b| b == b'0'),
            comma: bits(&|b| b == b','),
            space: bits(&|b| b == b' '),
            minus: bits(&|b| b == b'-'),
        }
    }

    fn num_widen(m: NumMasks<u32>) -> NumMasks<u64> {
        NumMasks {
            digit: m.digit.into(),
            zero: m.zero.into(),
            comma: m.comma.into(),
            space: m.space.into(),
            minus: m.minus.into(),
        }
    }

    fn u_widen(m: UMasks<u32>) -> UMasks<u64> {
        UMasks {
            u: m.u.into(),
            hex: m.hex.into(),
            d: m.d.into(),
        }
    }

    fn widen(m: Masks<u32>) -> Masks<u64> {
        Masks {
            quote: m.quote.into(),
            backslash: m.backslash.into(),
            letter: m.letter.into(),
            control: m.control.into(),
        }
    }

    #[test]
    fn every_byte_value_in_every_lane() {
        for lane in 0..64 {
            for b in 0..=255u8 {
                let mut block = [b'a'; 64];
                block[lane] = b;
                for masks in masks64_each_way(&block) {
                    assert_eq!(
                        masks,
                        (reference(&block), u_reference(&block)),
                        "{b:#x} @ {lane}"
                    );
                }
                assert_eq!(
                    num_masks64(&block),
                    num_reference(&block),
                    "{b:#x} @ {lane}"
                );
                let text = text_masks64(&block);
                for masks in text_masks64_each_way(&block) {
                    assert_eq!(masks, text, "{b:#x} @ {lane}");
                }
                if let Some(block) = block.first_chunk::<16>().filter(|_| lane < 16) {
                    assert_eq!(num_widen(portable_num_masks16(block)), num_reference(block));
                    assert_eq!(widen(masks16(block)), reference(block));
                    assert_eq!(widen(portable_masks16(block)), reference(block));
                    assert_eq!(u_widen(u_masks16(block)), u_reference(block));
                    assert_eq!(u_widen(portable_u_masks16(block)), u_reference(block));
                    assert_eq!(text_masks16(block), portable_text_masks16(block));
                }
            }
        }
    }

    proptest! {
        #[test]
        fn masks_of_mixed_blocks(block in any::<[u8; 16]>(), mix in any::<[u8; 16]>()) {
            // Bias half the bytes towards the ones that matter.
            let mut block = block;
            for (b, m) in block.iter_mut().zip(mix) {
                if m % 2 == 0 {
                    let special = b"\"\\ntudDfFgG09/@`\x00\x1F\x20\x7F\x80\xFF,-:\t\x8F\x90\x9F\xA0\xBF\xC0\xC1\xC2\xDF\xE0\xED\xEF\xF0\xF4\xF5";
                    *b = special[usize::from(m / 2) % special.len()];
                }
            }
            prop_assert_eq!(masks16(&block), portable_masks16(&block));
            prop_assert_eq!(widen(masks16(&block)), reference(&block));
            prop_assert_eq!(u_masks16(&block), portable_u_masks16(&block));
            prop_assert_eq!(u_widen(u_masks16(&block)), u_reference(&block));
            prop_assert_eq!(num_masks16(&block), portable_num_masks16(&block));
            prop_assert_eq!(text_masks16(&block), portable_text_masks16(&block));
            prop_assert_eq!(num_widen(num_masks16(&block)), num_reference(&block));
        }
    }
}
