//! Whether a text may hold one of a set of short ASCII literals anywhere: a filter of their
//! first three bytes, sixty-four positions at a time (`--redact`'s first look at a line, before
//! any search of its own).
//!
//! Each literal is put in one of eight groups (by its first byte); three tables give, for each
//! byte value, the groups that have a literal with that byte first, second and third. A position
//! may start a literal of a group only where its byte and the next two are all in that group's
//! tables: three table look-ups and two ANDs a byte, which AVX-512 VBMI does for sixty-four bytes
//! in a handful of instructions (`vpermi2b` looks up a 128-byte table). The filter has false
//! hits (two literals of a group mix), never misses: a text it rules out holds none of the
//! literals. On a CPU without VBMI it rules nothing out, and the searches run as before.

/// The filter of a set of literals (see the module doc).
#[derive(Clone, Debug)]
pub struct Trigrams {
    /// By position in the literal (first, second, third byte), by byte value, the groups.
    tables: [[u8; 128]; 3],
    /// Whether this CPU runs the filter (AVX-512 VBMI).
    fast: bool,
}

impl Trigrams {
    /// The filter of `literals`: each of at least three bytes, the first three ASCII and not
    /// NUL (the end of a text is padded with NUL).
    pub fn new(literals: &[&[u8]]) -> Trigrams {
        for literal in literals {
            assert!(
                literal.len() >= 3 && literal[..3].iter().all(|&b| b != 0 && b < 0x80),
                "a literal of the trigram filter starts with three ASCII bytes"
            );
        }
        // The literals of one first byte share a group. The first bytes with the most literals
        // are placed first, each in the group where it lets through the fewest trigrams that
        // are no literal's: the product of the group's first, second and third bytes.
        let mut firsts: Vec<u8> = literals.iter().map(|l| l[0]).collect();
        firsts.sort_unstable();
        firsts.dedup();
        let count = |f: u8| literals.iter().filter(|l| l[0] == f).count();
        firsts.sort_by_key(|&f| std::cmp::Reverse(count(f)));
        let mut tables = [[0u8; 128]; 3];
        let add = |tables: &mut [[u8; 128]; 3], first: u8, group: u8| {
            for literal in literals.iter().filter(|l| l[0] == first) {
                for (k, table) in tables.iter_mut().enumerate() {
                    table[usize::from(literal[k])] |= 1 << group;
                }
            }
        };
        let passed = |tables: &[[u8; 128]; 3]| -> usize {
            (0..8)
                .map(|g| {
                    let n = |t: &[u8; 128]| t.iter().filter(|&&m| m & 1 << g != 0).count();
                    n(&tables[0]) * n(&tables[1]) * n(&tables[2])
                })
                .sum()
        };
        for &first in &firsts {
            let best = (0..8)
                .min_by_key(|&g| {
                    let mut trial = tables;
                    add(&mut trial, first, g);
                    passed(&trial)
                })
                .unwrap_or(0);
            add(&mut tables, first, best);
        }
        #[cfg(target_arch = "x86_64")]
        let fast = is_x86_feature_detected!("avx512bw") && is_x86_feature_detected!("avx512vbmi");
        #[cfg(not(target_arch = "x86_64"))]
        let fast = false;
        Trigrams { tables, fast }
    }

    /// True when no literal starts anywhere in `text`; false when one may (or this CPU cannot
    /// tell at the filter's speed).
    #[inline]
    pub fn rules_out(&self, text: &[u8]) -> bool {
        #[cfg(target_arch = "x86_64")]
        if self.fast {
            #[allow(unsafe_code)]
            // SAFETY: `vbmi::rules_out` is unsafe to call only because it is compiled for
            // AVX-512BW and VBMI, and `fast` says the CPU has both (checked in `new`).
            return unsafe { vbmi::rules_out(&self.tables, text) };
        }
        false
    }

    /// [`Trigrams::rules_out`] a byte at a time (for tests: what the SIMD filter must say).
    #[cfg(test)]
    pub fn rules_out_slowly(&self, text: &[u8]) -> bool {
        let groups = |k: usize, i: usize| match text.get(i + k) {
            Some(&b) if b < 0x80 => self.tables[k][usize::from(b)],
            _ => 0,
        };
        (0..text.len()).all(|i| groups(0, i) & groups(1, i) & groups(2, i) == 0)
    }
}

#[cfg(target_arch = "x86_64")]
mod vbmi {
    use std::arch::x86_64::*;

    /// An array of 64 bytes as a vector (a macro: a function compiled for AVX-512 may not be
    /// forced inline, and one left out of line returns the vector through memory).
    macro_rules! vector {
        ($bytes:expr) => {{
            let bytes: &[u8; 64] = $bytes;
            #[allow(unsafe_code)]
            // SAFETY: the load reads 64 bytes from a reference to 64 bytes.
            unsafe {
                _mm512_loadu_si512(bytes.as_ptr().cast())
            }
        }};
    }

    /// The 64 bytes of `text` from `at`, NUL past its end: a masked load, which reads no
    /// byte past the end (a macro, as `vector!`).
    macro_rules! block_at {
        ($text:expr, $at:expr) => {{
            let (text, at): (&[u8], usize) = ($text, $at);
            let n = text.len().saturating_sub(at).min(64);
            let mask = u64::MAX.checked_shr(64 - n as u32).unwrap_or(0);
            #[allow(unsafe_code)]
            // SAFETY: the load touches only the bytes its mask selects (masked-off bytes are
            // neither read nor faulted on): `text[at..at + n]`, inside the slice. The pointer
            // is formed with `wrapping_add`, so it is not used to read when `at` is past the end.
            unsafe {
                _mm512_maskz_loadu_epi8(mask, text.as_ptr().wrapping_add(at).cast())
            }
        }};
    }

    #[target_feature(enable = "avx512bw,avx512vbmi")]
    pub fn rules_out(tables: &[[u8; 128]; 3], text: &[u8]) -> bool {
        let halves = |t: &[u8; 128]| {
            let (lo, hi) = t.split_at(64);
            (
                vector!(lo.try_into().expect("64 bytes")),
                vector!(hi.try_into().expect("64 bytes")),
            )
        };
        let (first, second, third) = (halves(&tables[0]), halves(&tables[1]), halves(&tables[2]));
        // The groups of each byte: a 128-byte table looked up by the low seven bits; bytes
        // from 0x80 are in none.
        macro_rules! groups {
            ($table:expr, $x:expr) => {{
                let x = $x;
                _mm512_maskz_permutex2var_epi8(!_mm512_movepi8_mask(x), $table.0, x, $table.1)
            }};
        }
        macro_rules! any_hit {
            ($x:expr, $y:expr, $z:expr) => {{
                let hits = _mm512_and_si512(
                    _mm512_and_si512(groups!(first, $x), groups!(second, $y)),
                    groups!(third, $z),
                );
                _mm512_test_epi8_mask(hits, hits) != 0
            }};
        }
        let mut at = 0;
        // Whole blocks (and the two bytes after each) read as they are.
        while let Some(run) = text.get(at..at + 66) {
            let block = |k: usize| run[k..].first_chunk::<64>().expect("66 bytes");
            if any_hit!(vector!(block(0)), vector!(block(1)), vector!(block(2))) {
                return false;
            }
            at += 64;
        }
        while at < text.len() {
            if any_hit!(
                block_at!(text, at),
                block_at!(text, at + 1),
                block_at!(text, at + 2)
            ) {
                return false;
            }
            at += 64;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const LITERALS: &[&[u8]] = &[b"sk-", b"token", b"Bearer", b"://", b":AA", b"eyJ", b"xox"];

    #[test]
    fn a_literal_anywhere_is_never_ruled_out() {
        let filter = Trigrams::new(LITERALS);
        for literal in LITERALS {
            for len in [0, 1, 61, 62, 63, 64, 65, 130] {
                for at in 0..=len {
                    let mut text = vec![b'q'; len];
                    text.splice(at..at, literal.iter().copied());
                    assert!(!filter.rules_out(&text), "{literal:?} @ {at} of {len}");
                    assert!(!filter.rules_out_slowly(&text));
                }
            }
        }
        assert!(filter.rules_out_slowly(b"the type of the text"));
    }

    proptest! {
        #[test]
        fn the_filter_says_what_the_slow_filter_says(
            text in proptest::collection::vec(
                prop_oneof![
                    Just(b's'), Just(b'k'), Just(b'-'), Just(b't'), Just(b'o'), Just(b'e'),
                    Just(b':'), Just(b'/'), Just(b'A'), Just(b'y'), Just(b'J'), Just(b'x'),
                    Just(0u8), Just(0x80u8), Just(0xF3u8), any::<u8>()
                ],
                0..200,
            ),
        ) {
            let filter = Trigrams::new(LITERALS);
            let slow = filter.rules_out_slowly(&text);
            if filter.fast {
                prop_assert_eq!(filter.rules_out(&text), slow);
            } else {
                prop_assert!(!filter.rules_out(&text));
            }
            // Ruled out only when no literal is there.
            let has = LITERALS.iter().any(|l| text.windows(l.len()).any(|w| w == *l));
            prop_assert!(!(slow && has));
        }
    }
}
