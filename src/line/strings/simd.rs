//! The masks of [`super::masks`] compiled for SSE2 (part of every x86_64 target) and AVX2, and
//! the loops of [`super`] compiled with them. (AVX-512BW versions of the string scan and the
//! block writers, and the AVX-512 VBMI2 block writer, were measured no faster end to end than
//! these and deleted: docs/performance.md, "SIMD paths".)
//!
//! The entry points the dispatch calls (`run_block_loop`, `content_end`, `squeeze`) are `unsafe fn`s with `#[target_feature]`: unsafe to call only because of the
//! instruction set they are compiled for, and called only after the CPU was checked
//! ([`super::Simd`], [`super::Squeeze`]). The helpers they share (the mask functions, `load`)
//! are safe `#[target_feature]` functions, which the language lets only code compiled for the
//! same instructions call without `unsafe`, and which coerce to no safe function pointer. The
//! SSE2 module exists only where the target enables SSE2 (`cfg`), so every CPU it runs on has it.

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

#[cfg(target_arch = "x86_64")]
#[allow(
    unsafe_code,
    reason = "unsafe fns compiled for instructions the CPU may lack"
)]
pub(super) mod avx2 {
    use crate::line::strings::{self, BlockLoop, Invalid, Masks, TextMasks, UMasks};
    use std::arch::x86_64::*;

    #[target_feature(enable = "avx2")]
    pub unsafe fn run_block_loop<L: BlockLoop>(
        body: L,
        squeeze: Option<strings::Squeeze>,
    ) -> L::Out {
        body.run(
            |block| masks64(block),
            |block| text_masks64(block),
            |block| escapes64(block),
            squeeze,
        )
    }

    /// [`strings::escapes64`], thirty-two bytes per compare.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(in crate::line::strings) fn escapes64(block: &[u8; 64]) -> u64 {
        let mut stops = 0;
        for (k, halves) in block.as_chunks::<16>().0.chunks_exact(2).enumerate() {
            let v = _mm256_set_m128i(super::sse2::load(&halves[1]), super::sse2::load(&halves[0]));
            let eq = |byte: u8| _mm256_cmpeq_epi8(v, _mm256_set1_epi8(byte as i8));
            // Unsigned `v <= 0x1F`, as in `masks64`.
            let control = _mm256_cmpeq_epi8(_mm256_min_epu8(v, _mm256_set1_epi8(0x1F)), v);
            let hit = _mm256_or_si256(_mm256_or_si256(eq(b'"'), eq(b'\\')), control);
            stops |= u64::from(_mm256_movemask_epi8(hit) as u32) << (32 * k);
        }
        stops
    }

    /// For each four bytes' widths (two bits a byte, the first byte lowest: 0 dropped, 1
    /// copied, 2 escaped, 3 U+FFFD), the shuffle that spells them from the sixteen bytes
    /// `b0 b1 b2 b3 l0 l1 l2 l3 \\ EF BF BD 0 0 0 0` (`l`: each byte's escape letter), and its
    /// length.
    const SPELL: [([u8; 16], u8); 256] = {
        let mut t = [([0x80u8; 16], 0u8); 256];
        let mut idx = 0;
        while idx < 256 {
            let mut n = 0;
            let mut i = 0;
            while i < 4 {
                match (idx >> (2 * i)) & 3 {
                    1 => {
                        t[idx].0[n] = i as u8;
                        n += 1;
                    }
                    2 => {
                        t[idx].0[n] = 8;
                        t[idx].0[n + 1] = 4 + i as u8;
                        n += 2;
                    }
                    3 => {
                        t[idx].0[n] = 9;
                        t[idx].0[n + 1] = 10;
                        t[idx].0[n + 2] = 11;
                        n += 3;
                    }
                    _ => {}
                }
                i += 1;
            }
            t[idx].1 = n as u8;
            idx += 1;
        }
        t
    };

    /// The bits of `m` as thirty-two bytes, all ones where the bit is set.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn bytes_of(m: u32) -> __m256i {
        // Byte `i` of the vector takes byte `i / 8` of `m`, and keeps bit `i % 8` of it.
        let spread = _mm256_shuffle_epi8(
            _mm256_set1_epi32(m as i32),
            _mm256_setr_epi64x(
                0,
                0x0101_0101_0101_0101,
                0x0202_0202_0202_0202,
                0x0303_0303_0303_0303,
            ),
        );
        let bit = _mm256_set1_epi64x(0x8040_2010_0804_0201_u64 as i64);
        _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit)
    }

    /// Appends the block as `spelling` says, four bytes a shuffle (SSSE3's `pshufb`): the
    /// [`strings::Squeeze`]. Each byte's way of being written
    /// (two bits), each four bytes' entry of [`SPELL`] and the bytes the shuffles take their
    /// bytes from are made thirty-two bytes at a time.
    #[target_feature(enable = "avx2")]
    pub unsafe fn squeeze(block: &[u8; 64], spelling: strings::Spelling, out: &mut Vec<u8>) {
        let copy = !(spelling.escape | spelling.replace | spelling.drop);
        let (low, high) = (spelling.replace | copy, spelling.replace | spelling.escape);
        // The backslash and U+FFFD, in the high half of each shuffle's source.
        let fixed =
            _mm_set1_epi64x(u64::from_le_bytes([b'\\', 0xEF, 0xBF, 0xBD, 0, 0, 0, 0]) as i64);
        // Each four bytes make at most twelve; each store writes sixteen.
        out.reserve(64 * 3 + 4);
        let room = &mut out.spare_capacity_mut()[..64 * 3 + 4];
        let mut n = 0;
        for (half, bytes) in block.as_chunks::<16>().0.chunks_exact(2).enumerate() {
            let part = |m: u64| bytes_of((m >> (32 * half)) as u32);
            // Each byte's way, 0 dropped, 1 copied, 2 escaped, 3 U+FFFD; each four bytes'
            // index, the first byte's way lowest.
            let ways = _mm256_or_si256(
                _mm256_and_si256(part(low), _mm256_set1_epi8(1)),
                _mm256_and_si256(part(high), _mm256_set1_epi8(2)),
            );
            let pairs = _mm256_maddubs_epi16(ways, _mm256_set1_epi16(0x0401));
            let index = _mm256_madd_epi16(pairs, _mm256_set1_epi32(0x0010_0001));
            let mut index_of = [0u32; 8];
            #[allow(unsafe_code)]
            // SAFETY: the store writes 32 bytes to an array of 32 bytes.
            unsafe {
                _mm256_storeu_si256(index_of.as_mut_ptr().cast(), index)
            };
            // The bytes and their escape letters (a tab's is `t`), four and four.
            let v = _mm256_set_m128i(super::sse2::load(&bytes[1]), super::sse2::load(&bytes[0]));
            let tabs = _mm256_and_si256(part(spelling.tab), _mm256_set1_epi8((b'\t' ^ b't') as i8));
            let letters = _mm256_xor_si256(v, tabs);
            let (lo, hi) = (
                _mm256_unpacklo_epi32(v, letters),
                _mm256_unpackhi_epi32(v, letters),
            );
            let sources = [
                _mm256_castsi256_si128(lo),
                _mm256_castsi256_si128(hi),
                _mm256_extracti128_si256::<1>(lo),
                _mm256_extracti128_si256::<1>(hi),
            ];
            // Each source holds two groups of four bytes, in order: its halves.
            for (q, &pair) in sources.iter().enumerate() {
                for (g, from) in [
                    _mm_unpacklo_epi64(pair, fixed),
                    _mm_unpackhi_epi64(pair, fixed),
                ]
                .into_iter()
                .enumerate()
                {
                    let (shuffle, len) = &SPELL[index_of[2 * q + g] as usize & 255];
                    let spelled = _mm_shuffle_epi8(from, super::sse2::load(shuffle));
                    let slots: &mut [_; 16] = (&mut room[n..n + 16]).try_into().expect("16 bytes");
                    #[allow(unsafe_code)]
                    // SAFETY: the store writes 16 bytes to a slice of 16 bytes.
                    unsafe {
                        _mm_storeu_si128(slots.as_mut_ptr().cast(), spelled)
                    };
                    n += usize::from(*len);
                }
            }
        }
        #[allow(unsafe_code)]
        // SAFETY: the first `n` bytes of the spare capacity were written just above (each
        // group's kept bytes, the next group's store starting where they end).
        unsafe {
            out.set_len(out.len() + n)
        };
    }

    /// [`strings::text_masks64`], thirty-two bytes per compare.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(in crate::line::strings) fn text_masks64(block: &[u8; 64]) -> TextMasks<u64> {
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
    pub unsafe fn content_end(s: &[u8], at: usize) -> Result<usize, Invalid> {
        strings::content_end_with(s, at, |block| masks64(block), |block| u_masks64(block))
    }

    /// [`strings::masks64`], thirty-two bytes per compare.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(in crate::line::strings) fn masks64(block: &[u8; 64]) -> Masks<u64> {
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

    /// [`strings::u_masks64`], thirty-two bytes per compare.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(in crate::line::strings) fn u_masks64(block: &[u8; 64]) -> UMasks<u64> {
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
