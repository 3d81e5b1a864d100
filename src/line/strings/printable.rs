//! The masks of a block of a binary line, for writing it as `strings` prints it
//! (`record/binary.rs`): which bytes are printable (a string's), which of them JSON escapes, and
//! which bytes text never holds. Sixteen at a time by SSE2 (an AVX2 version was measured no
//! faster end to end on random bytes and deleted), or without SIMD (the portable path); tests
//! check each against a byte-at-a-time reference on every byte value in every lane.

use super::dispatch::{Simd, default};

/// Which bytes of a block are what, for writing a binary line as `strings` prints it
/// (`record.rs`): bit `k` for byte `k`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StringMasks<T> {
    /// The bytes a string is made of: printable ASCII and tab ([`is_string_byte`]).
    pub text: T,
    /// Of them, the ones a JSON string escapes: `"`, `\` and tab.
    pub escape: T,
}

/// A byte that text does not hold: a control byte other than BEL, backspace, tab, newline,
/// vertical tab, form feed, carriage return and escape (the ones `file` counts as text), or DEL.
#[inline(always)]
pub const fn is_binary_byte(b: u8) -> bool {
    matches!(b, 0x00..=0x06 | 0x0E..=0x1A | 0x1C..=0x1F | 0x7F)
}

/// A byte of a string in a binary line: printable ASCII or tab, as `strings` reads them.
#[inline(always)]
pub const fn is_string_byte(b: u8) -> bool {
    matches!(b, 0x20..=0x7E | b'\t')
}

/// The string masks of sixteen bytes.
#[inline(always)]
pub fn string_masks16(block: &[u8; 16]) -> StringMasks<u32> {
    sse2_or_portable!(string_masks16, portable_string_masks16, block)
}

/// [`string_masks16`] without SIMD instructions: a byte at a time (for targets without SSE2
/// and for tests).
pub fn portable_string_masks16(block: &[u8; 16]) -> StringMasks<u32> {
    let bits = |f: fn(u8) -> bool| (0..16).fold(0, |m, k| m | u32::from(f(block[k])) << k);
    StringMasks {
        text: bits(is_string_byte),
        escape: bits(|b| matches!(b, b'"' | b'\\' | b'\t')),
    }
}

/// The string masks of sixty-four bytes.
#[inline(always)]
pub fn string_masks64(block: &[u8; 64]) -> StringMasks<u64> {
    string_masks64_of(block, string_masks16)
}

/// [`string_masks64`] without SIMD instructions.
#[inline(always)]
pub fn portable_string_masks64(block: &[u8; 64]) -> StringMasks<u64> {
    string_masks64_of(block, portable_string_masks16)
}

/// The string masks of sixty-four bytes, sixteen at a time by `string_masks16`.
#[inline(always)]
fn string_masks64_of(
    block: &[u8; 64],
    string_masks16: impl Fn(&[u8; 16]) -> StringMasks<u32>,
) -> StringMasks<u64> {
    let mut m = StringMasks::default();
    for (k, chunk) in block.as_chunks::<16>().0.iter().enumerate() {
        let part = string_masks16(chunk);
        m.text |= u64::from(part.text) << (16 * k);
        m.escape |= u64::from(part.escape) << (16 * k);
    }
    m
}

/// The bytes of sixteen that text does not hold ([`is_binary_byte`]): bit `k` for byte `k`.
#[inline(always)]
pub fn binary16(block: &[u8; 16]) -> u32 {
    sse2_or_portable!(binary16, portable_binary16, block)
}

/// [`binary16`] without SIMD instructions.
pub fn portable_binary16(block: &[u8; 16]) -> u32 {
    (0..16).fold(0, |m, k| m | u32::from(is_binary_byte(block[k])) << k)
}

/// A loop over 64-byte blocks that reads their [`StringMasks`] (the writer of binary lines in
/// `record.rs`), run by [`run_string_loop`] compiled for one [`Simd`] path.
pub trait StringLoop {
    type Out;
    /// Runs the loop with this mask function. Should be `#[inline(always)]`, as
    /// [`BlockLoop::run`](super::BlockLoop::run).
    fn run(self, string_masks64: impl Fn(&[u8; 64]) -> StringMasks<u64> + Copy) -> Self::Out;
}

/// Runs `body` on the string writer's path ([`Simd::pick`], found once).
pub fn run_string_loop<L: StringLoop>(body: L) -> L::Out {
    static PATH: std::sync::OnceLock<Simd> = std::sync::OnceLock::new();
    let path = *PATH.get_or_init(|| Simd::pick(default::STRING_WRITER));
    run_string_loop_on(path, body)
}

/// Runs `body` with the string masks of `path`: the portable ones, or SSE2's (portable on a
/// target without SSE2) from SSE2 on.
fn run_string_loop_on<L: StringLoop>(path: Simd, body: L) -> L::Out {
    match path {
        Simd::Portable => body.run(portable_string_masks64),
        _ => body.run(string_masks64),
    }
}

/// [`run_string_loop`] on each code path this CPU has (portable, SSE2), the portable one first
/// (for tests).
#[cfg(test)]
pub(crate) fn run_string_loop_each_way<L: StringLoop + Clone>(body: L) -> Vec<L::Out> {
    Simd::offered()
        .filter(|&p| p <= Simd::Sse2)
        .map(|path| run_string_loop_on(path, body.clone()))
        .collect()
}

/// [`string_masks64`] on each code path this CPU has, the portable one first (for tests).
#[cfg(test)]
fn string_masks64_each_way(block: &[u8; 64]) -> Vec<StringMasks<u64>> {
    Simd::offered()
        .filter(|&p| p <= Simd::Sse2)
        .map(|path| match path {
            Simd::Portable => portable_string_masks64(block),
            _ => string_masks64(block),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn every_byte_value_in_every_lane() {
        for lane in 0..64 {
            for b in 0..=255u8 {
                let mut block = [b'a'; 64];
                block[lane] = b;
                let bit = |f: fn(u8) -> bool| u64::from(f(b)) << lane;
                let rest = |f: fn(u8) -> bool| u64::from(f(b'a')) * !(1 << lane);
                for strings in string_masks64_each_way(&block) {
                    assert_eq!(
                        strings,
                        StringMasks {
                            text: bit(is_string_byte) | rest(is_string_byte),
                            escape: bit(|b| matches!(b, b'"' | b'\\' | b'\t')),
                        },
                        "{b:#x} @ {lane}"
                    );
                }
                if let Some(block) = block.first_chunk::<16>().filter(|_| lane < 16) {
                    assert_eq!(string_masks16(block), portable_string_masks16(block));
                    assert_eq!(u64::from(binary16(block)), bit(is_binary_byte));
                    assert_eq!(portable_binary16(block), binary16(block));
                }
            }
        }
    }

    proptest! {
        #[test]
        fn masks_of_mixed_blocks(block in any::<[u8; 16]>()) {
            prop_assert_eq!(string_masks16(&block), portable_string_masks16(&block));
            prop_assert_eq!(binary16(&block), portable_binary16(&block));
        }
    }
}
