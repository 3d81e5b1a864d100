//! The masks of [`super::masks`] compiled for SSE2, part of every x86_64 target. (AVX2 and
//! AVX-512BW versions of the string scan and the block writers, and AVX2's and AVX-512 VBMI2's
//! block writers of text that is not UTF-8, were measured less than 15% faster end to end than
//! these and deleted: docs/performance.md, "SIMD paths".)
//!
//! The mask functions are safe `#[target_feature(enable = "sse2")]` functions: the module
//! exists only where the target enables SSE2 (`cfg`), so every CPU it runs on has it.

#[cfg(all(
    any(target_arch = "x86_64", target_arch = "x86"),
    target_feature = "sse2"
))]
pub(super) mod sse2 {
    #[cfg(target_arch = "x86")]
    use std::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use std::arch::x86_64::*;

    use crate::line::strings::{Masks, NumMasks, StringMasks, TextMasks, UMasks};

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
    pub fn masks16(b: &[u8; 16]) -> Masks<u32> {
        let v = load(b);
        let mask = |eq| _mm_movemask_epi8(eq) as u32;
        let eq = |byte: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(byte as i8));
        Masks {
            quote: mask(eq(b'"')),
            backslash: mask(eq(b'\\')),
            letter: mask(_mm_or_si128(eq(b'n'), eq(b't'))),
            // Unsigned `v <= 0x1F`: SSE2 has no unsigned compare, but min(v, 0x1F) == v is one.
            control: mask(_mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v)),
        }
    }

    #[inline]
    #[target_feature(enable = "sse2")]
    pub fn string_masks16(b: &[u8; 16]) -> StringMasks<u32> {
        let v = load(b);
        let mask = |x| _mm_movemask_epi8(x) as u32;
        let set = |n: u8| _mm_set1_epi8(n as i8);
        let eq = |n: u8| _mm_cmpeq_epi8(v, set(n));
        let tab = eq(b'\t');
        // Signed compares: the bytes from 0x80 are negative, below every printable byte.
        let printable = _mm_and_si128(_mm_cmpgt_epi8(v, set(0x1F)), _mm_cmplt_epi8(v, set(0x7F)));
        StringMasks {
            text: mask(_mm_or_si128(printable, tab)),
            escape: mask(_mm_or_si128(_mm_or_si128(eq(b'"'), eq(b'\\')), tab)),
        }
    }

    #[inline]
    #[target_feature(enable = "sse2")]
    pub fn binary16(b: &[u8; 16]) -> u32 {
        let v = load(b);
        let set = |n: u8| _mm_set1_epi8(n as i8);
        // Unsigned `x <= n`, as in `masks16`.
        let at_most = |x, n: u8| _mm_cmpeq_epi8(_mm_min_epu8(x, set(n)), x);
        // The control bytes of text: BEL to CR (`v - 7 <= 6`), and ESC.
        let text_control = _mm_or_si128(
            at_most(_mm_sub_epi8(v, set(7)), 6),
            _mm_cmpeq_epi8(v, set(0x1B)),
        );
        let binary = _mm_or_si128(
            _mm_andnot_si128(text_control, at_most(v, 0x1F)),
            _mm_cmpeq_epi8(v, set(0x7F)),
        );
        _mm_movemask_epi8(binary) as u32
    }

    #[inline]
    #[target_feature(enable = "sse2")]
    pub fn text_masks16(b: &[u8; 16]) -> TextMasks<u32> {
        let v = load(b);
        let mask = |x| _mm_movemask_epi8(x) as u32;
        // Signed compares: the bytes from 0x80 are the negative ones, in order.
        let lt = |n: u8| mask(_mm_cmplt_epi8(v, _mm_set1_epi8(n as i8)));
        let gt = |n: u8| mask(_mm_cmpgt_epi8(v, _mm_set1_epi8(n as i8)));
        let eq = |n: u8| mask(_mm_cmpeq_epi8(v, _mm_set1_epi8(n as i8)));
        let high = mask(v);
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

    #[inline]
    #[target_feature(enable = "sse2")]
    pub fn u_masks16(b: &[u8; 16]) -> UMasks<u32> {
        let v = load(b);
        let mask = |eq| _mm_movemask_epi8(eq) as u32;
        let at_most = |x, max: u8| _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(max as i8)), x);
        let lower = _mm_or_si128(v, _mm_set1_epi8(0x20));
        UMasks {
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
    pub fn num_masks16(b: &[u8; 16]) -> NumMasks<u32> {
        let v = load(b);
        let mask = |eq| _mm_movemask_epi8(eq) as u32;
        let eq = |byte: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(byte as i8));
        let digit = _mm_sub_epi8(v, _mm_set1_epi8(b'0' as i8));
        NumMasks {
            // Unsigned `v - '0' <= 9`, as `min` (see `masks16`).
            digit: mask(_mm_cmpeq_epi8(_mm_min_epu8(digit, _mm_set1_epi8(9)), digit)),
            zero: mask(eq(b'0')),
            comma: mask(eq(b',')),
            space: mask(eq(b' ')),
            minus: mask(eq(b'-')),
        }
    }
}
