//! The bit masks of a block of bytes (which bytes are quotes, backslashes, control bytes, escape
//! letters, hex digits, integer-run bytes, UTF-8 leads and continuations), sixteen or sixty-four
//! at a time, computed by SIMD ([`super::simd`]) or without (SWAR, for targets without SSE2).
//! [`run_block_loop`] runs a loop over blocks compiled for the path [`Simd::pick`] gives the
//! block writers. Tests check every mask against a byte-at-a-time reference on every byte value
//! in every lane, on every path this CPU has.

use super::dispatch::{Simd, default};

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

/// [`masks64`] as each path this CPU has computes it, the portable one first (for tests).
#[cfg(test)]
fn masks64_each_way(block: &[u8; 64]) -> Vec<(Masks<u64>, UMasks<u64>)> {
    Simd::offered()
        .map(|path| match path {
            Simd::Portable => (portable_masks64(block), portable_u_masks64(block)),
            _ => (masks64(block), u_masks64(block)),
        })
        .collect()
}

/// The bytes of sixty-four that a JSON string's content escapes: quotes, backslashes, control
/// bytes.
#[inline(always)]
pub fn escapes64(block: &[u8; 64]) -> u64 {
    let m = masks64(block);
    m.quote | m.backslash | m.control
}

/// [`escapes64`] on each path this CPU has, the portable one first (for tests).
#[cfg(test)]
fn escapes64_each_way(block: &[u8; 64]) -> Vec<u64> {
    Simd::offered()
        .map(|path| match path {
            Simd::Portable => portable_escapes64(block),
            _ => escapes64(block),
        })
        .collect()
}

/// [`escapes64`] without SIMD instructions.
#[inline(always)]
pub fn portable_escapes64(block: &[u8; 64]) -> u64 {
    let m = portable_masks64(block);
    m.quote | m.backslash | m.control
}

/// The masks of sixteen bytes.
#[inline(always)]
pub fn masks16(block: &[u8; 16]) -> Masks<u32> {
    sse2_or_portable!(masks16, portable_masks16, block)
}

/// The masks of sixty-four bytes.
#[inline(always)]
pub fn masks64(block: &[u8; 64]) -> Masks<u64> {
    masks64_of(block, masks16)
}

/// [`masks64`] without SIMD instructions.
#[inline(always)]
pub fn portable_masks64(block: &[u8; 64]) -> Masks<u64> {
    masks64_of(block, portable_masks16)
}

/// The masks of sixty-four bytes, sixteen at a time by `masks16`.
#[inline(always)]
fn masks64_of(block: &[u8; 64], masks16: impl Fn(&[u8; 16]) -> Masks<u32>) -> Masks<u64> {
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
    text_masks64_of(block, text_masks16)
}

/// [`text_masks64`] without SIMD instructions.
#[inline(always)]
pub fn portable_text_masks64(block: &[u8; 64]) -> TextMasks<u64> {
    text_masks64_of(block, portable_text_masks16)
}

/// The text masks of sixty-four bytes, sixteen at a time by `text_masks16`.
#[inline(always)]
fn text_masks64_of(
    block: &[u8; 64],
    text_masks16: impl Fn(&[u8; 16]) -> TextMasks<u32>,
) -> TextMasks<u64> {
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
/// writers of `record.rs`), run by [`run_block_loop`] compiled for one [`Simd`] path.
pub trait BlockLoop {
    type Out;
    /// Runs the loop with these mask functions. Should be `#[inline(always)]`, so that it is
    /// compiled into each instruction set's caller.
    fn run(
        self,
        masks64: impl Fn(&[u8; 64]) -> Masks<u64>,
        text_masks64: impl Fn(&[u8; 64]) -> TextMasks<u64>,
        escapes64: impl Fn(&[u8; 64]) -> u64,
    ) -> Self::Out;
}

/// Runs `body` on the block writers' path ([`Simd::pick`], found once).
pub fn run_block_loop<L: BlockLoop>(body: L) -> L::Out {
    static PATH: std::sync::OnceLock<Simd> = std::sync::OnceLock::new();
    run_block_loop_on(
        *PATH.get_or_init(|| Simd::pick(default::BLOCK_WRITER)),
        body,
    )
}

/// Runs `body` with the masks of `path` (SSE2's from SSE2 on: no wider code earned its place).
fn run_block_loop_on<L: BlockLoop>(path: Simd, body: L) -> L::Out {
    match path {
        Simd::Portable => body.run(portable_masks64, portable_text_masks64, portable_escapes64),
        _ => body.run(masks64, text_masks64, escapes64),
    }
}

/// [`run_block_loop`] on each code path there is (portable and SSE2; every wider path runs
/// SSE2's), the portable one first (for tests).
#[cfg(test)]
pub(crate) fn run_block_loop_each_way<L: BlockLoop + Clone>(body: L) -> Vec<L::Out> {
    [Simd::Portable, Simd::Sse2]
        .into_iter()
        .map(|path| run_block_loop_on(path, body.clone()))
        .collect()
}

/// [`text_masks64`] on each path this CPU has, the portable one first (for tests).
#[cfg(test)]
fn text_masks64_each_way(block: &[u8; 64]) -> Vec<TextMasks<u64>> {
    Simd::offered()
        .map(|path| match path {
            Simd::Portable => portable_text_masks64(block),
            _ => text_masks64(block),
        })
        .collect()
}

/// The text masks of sixteen bytes.
#[inline(always)]
pub fn text_masks16(block: &[u8; 16]) -> TextMasks<u32> {
    sse2_or_portable!(text_masks16, portable_text_masks16, block)
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
    sse2_or_portable!(u_masks16, portable_u_masks16, block)
}

/// The masks of the bytes of `\u` escapes in sixty-four bytes.
#[inline(always)]
pub fn u_masks64(block: &[u8; 64]) -> UMasks<u64> {
    u_masks64_of(block, u_masks16)
}

/// [`u_masks64`] without SIMD instructions.
#[inline(always)]
pub fn portable_u_masks64(block: &[u8; 64]) -> UMasks<u64> {
    u_masks64_of(block, portable_u_masks16)
}

/// The `\u` masks of sixty-four bytes, sixteen at a time by `u_masks16`.
#[inline(always)]
fn u_masks64_of(block: &[u8; 64], u_masks16: impl Fn(&[u8; 16]) -> UMasks<u32>) -> UMasks<u64> {
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
    sse2_or_portable!(num_masks16, portable_num_masks16, block)
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
                let r = reference(&block);
                for stops in escapes64_each_way(&block) {
                    assert_eq!(stops, r.quote | r.backslash | r.control, "{b:#x} @ {lane}");
                }
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

    /// The writers' tests run both block loops (`run_block_loop_each_way`), the portable
    /// one first.
    #[test]
    fn every_block_writer_is_run() {
        assert_eq!(run_block_loop_each_way(Count).len(), 2);
    }

    /// A loop that only says it ran.
    #[derive(Clone)]
    struct Count;

    impl BlockLoop for Count {
        type Out = ();
        fn run(
            self,
            _: impl Fn(&[u8; 64]) -> Masks<u64>,
            _: impl Fn(&[u8; 64]) -> TextMasks<u64>,
            _: impl Fn(&[u8; 64]) -> u64,
        ) {
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
