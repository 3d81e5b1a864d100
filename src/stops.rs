//! Finding the bytes that stop a run of string content, `"`, `\` and control characters (below
//! 0x20), sixteen or sixty-four bytes at a time, as bit masks.
//!
//! This is the hottest loop of the engine: agent text has an escape (`\n`, `\"`) every few dozen
//! bytes. One SSE2 compare-and-movemask turns sixteen bytes into a bit mask, and the scanner
//! works on the masks of a 64-byte block without a branch per escape. It is the crate's only
//! unsafe code (see [`masks16`]); on targets without SSE2 a portable loop gives the same masks,
//! and tests check that the two agree on every byte value in every lane.

/// Which bytes of a block are `"`, `\`, `n` or `t` (the usual escape letters: an escaped byte
/// that is one of these four needs no further check), and below 0x20: bit `k` for byte `k`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Masks<T> {
    pub quote: T,
    pub backslash: T,
    pub letter: T,
    pub control: T,
}

impl Masks<u32> {
    /// Quotes, backslashes and control characters together.
    #[inline(always)]
    pub fn stops(self) -> u32 {
        self.quote | self.backslash | self.control
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

/// The same masks as [`masks16`], a byte at a time.
pub fn portable_masks16(block: &[u8; 16]) -> Masks<u32> {
    let mut m = Masks::default();
    for (k, &b) in block.iter().enumerate() {
        m.quote |= u32::from(b == b'"') << k;
        m.backslash |= u32::from(b == b'\\') << k;
        m.letter |= u32::from(b == b'n' || b == b't') << k;
        m.control |= u32::from(b < 0x20) << k;
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

    #[inline]
    #[target_feature(enable = "sse2")]
    pub fn masks16(b: &[u8; 16]) -> super::Masks<u32> {
        // Built from the array's bytes (no pointer), which compiles to one unaligned load.
        let v = _mm_set_epi8(
            b[15] as i8,
            b[14] as i8,
            b[13] as i8,
            b[12] as i8,
            b[11] as i8,
            b[10] as i8,
            b[9] as i8,
            b[8] as i8,
            b[7] as i8,
            b[6] as i8,
            b[5] as i8,
            b[4] as i8,
            b[3] as i8,
            b[2] as i8,
            b[1] as i8,
            b[0] as i8,
        );
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
                assert_eq!(masks64(&block), reference(&block), "{b:#x} @ {lane}");
                if let Some(block) = block.first_chunk::<16>().filter(|_| lane < 16) {
                    assert_eq!(widen(masks16(block)), reference(block));
                    assert_eq!(widen(portable_masks16(block)), reference(block));
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
                    let special = [b'"', b'\\', b'n', b't', 0x00, 0x1F, 0x20, 0x7F, 0x80, 0xFF];
                    *b = special[(m / 2 % 10) as usize];
                }
            }
            prop_assert_eq!(masks16(&block), portable_masks16(&block));
            prop_assert_eq!(widen(masks16(&block)), reference(&block));
        }
    }
}
