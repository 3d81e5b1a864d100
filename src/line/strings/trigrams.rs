//! Whether a text may hold one of a set of short ASCII literals anywhere: a filter of their
//! first three bytes, thirty-two positions at a time (`--redact`'s first look at a line, before
//! any search of its own).
//!
//! Each literal is put in one of eight groups (by its first byte); three tables give, for each
//! byte value, the groups that have a literal with that byte first, second and third. A position
//! may start a literal of a group only where its byte and the next two are all in that group's
//! tables: three table look-ups and two ANDs a byte. With AVX2 (no 128-byte look-up) each table
//! is approached from above by two 16-byte ones, by the byte's low and high four bits
//! (`vpshufb`, as Teddy does), thirty-two positions at a time: six look-ups, which with their
//! masks fit in AVX2's sixteen registers. (An AVX-512 VBMI filter, sixty-four positions a
//! `vpermi2b`, was measured no faster end to end and deleted.) The rare positions that pass are
//! checked against exact tables of each literal's first five bytes (a bit each), then by the
//! caller's check of what follows, if it gave one ([`Trigrams::with_check`]): both paths give
//! the same answer, the one of the exact tables and the check alone. The filter has false hits only when a
//! literal's first five bytes show without the rest of it, and never misses: a text it rules
//! out holds none of the literals. (Past 128 different first five bytes the exact tables share
//! bits and let through mixes of them, which the groups may not: then the SIMD filters rule out
//! more than the exact tables alone, and still miss nothing.) On a CPU without AVX2 it rules
//! nothing out, and the searches run as before.

/// The filter of a set of literals (see the module doc).
#[derive(Clone, Debug)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub struct Trigrams {
    /// By position in the literal (first, second, third byte), the groups of the bytes with
    /// each low four bits, then with each high four bits (none from 0x80): their AND holds the
    /// groups of the byte, and maybe more. Each
    /// 16-byte table twice, as AVX2 loads it (one per lane).
    nibbles: [[[u8; 32]; 2]; 3],
    /// By position, by byte value (256: past the text's end), the literals' first [`EXACT`]
    /// bytes (as bits, by their rank; a set of more than 128 shares bits) that have this byte
    /// there, or are shorter: what a position the filter lets through is checked against.
    exact: Box<[[u128; 257]; EXACT]>,
    /// How this CPU runs the filter.
    simd: Simd,
    /// What a position that passes the exact tables must also pass to be a hit: the caller's
    /// own check of what follows a literal's first five bytes ([`Trigrams::with_check`]).
    check: fn(&[u8], usize) -> bool,
}

/// The instructions the filter runs on: made only by [`Simd::on`], which checks the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Simd {
    /// None: nothing is ruled out.
    Off,
    Avx2,
}

impl Simd {
    /// The filter of a path, as far as this CPU has it: AVX2's from the AVX2 path on, none
    /// below.
    fn on(path: super::Simd) -> Simd {
        #[cfg(target_arch = "x86_64")]
        if path >= super::Simd::Avx2 && is_x86_feature_detected!("avx2") {
            return Simd::Avx2;
        }
        let _ = path;
        Simd::Off
    }
}

const GROUPS: u8 = 8;

/// The bytes of each literal the exact check compares (`passed` is not `passw…`).
const EXACT: usize = 5;
const _: () = assert!(EXACT == 5, "Trigrams::hit_at compares five bytes");

impl Trigrams {
    /// The filter of `literals`: each of at least three bytes, the first three ASCII and not
    /// NUL (the end of a text is padded with NUL).
    pub fn new(literals: &[&[u8]]) -> Trigrams {
        Trigrams::with_check(literals, |_, _| true)
    }

    /// [`Trigrams::new`], where a position that passes the exact tables is a hit only if
    /// `check(text, i)` says so too: it must say true wherever a literal starts, and may say
    /// false where only the first five bytes of one show (`tokens` is no `token` assignment).
    pub fn with_check(literals: &[&[u8]], check: fn(&[u8], usize) -> bool) -> Trigrams {
        for literal in literals {
            assert!(
                literal.len() >= 3 && literal[..3].iter().all(|&b| b != 0 && b < 0x80),
                "a literal of the trigram filter starts with three ASCII bytes"
            );
        }
        let simd = Simd::on(super::Simd::pick(super::dispatch::default::TRIGRAMS));
        let mut prefixes: Vec<&[u8]> = literals.iter().map(|l| &l[..l.len().min(EXACT)]).collect();
        prefixes.sort_unstable();
        prefixes.dedup();
        let mut exact = Box::new([[0u128; 257]; EXACT]);
        for (rank, prefix) in prefixes.iter().enumerate() {
            let bit = 1 << (rank % 128);
            for (k, table) in exact.iter_mut().enumerate() {
                match prefix.get(k) {
                    Some(&b) => table[usize::from(b)] |= bit,
                    // A shorter literal: any byte there, or none.
                    None => table.iter_mut().for_each(|t| *t |= bit),
                }
            }
        }
        let mut firsts: Vec<u8> = literals.iter().map(|l| l[0]).collect();
        firsts.sort_unstable();
        firsts.dedup();
        // The literals of one first byte share a group. The first bytes with the most literals
        // are placed first, each in the group where it lets through the fewest trigrams that
        // are no literal's: the product of the group's first, second and third bytes (with
        // AVX2, of the four-bit halves of each, which it looks them up by).
        let count = |f: u8| literals.iter().filter(|l| l[0] == f).count();
        firsts.sort_by_key(|&f| std::cmp::Reverse(count(f)));
        // Each group's bytes at each of the three positions, as sets of the 128 ASCII bytes: a
        // placement changes one group, so the best is the one that adds the fewest to it.
        let mut sets = [[0u128; 3]; GROUPS as usize];
        let of = |first: u8| {
            let mut set = [0u128; 3];
            for literal in literals.iter().filter(|l| l[0] == first) {
                for (k, s) in set.iter_mut().enumerate() {
                    *s |= 1 << literal[k];
                }
            }
            set
        };
        let passed = |set: &[u128; 3]| -> usize {
            set.iter()
                .map(|&bytes| {
                    if simd != Simd::Avx2 {
                        return bytes.count_ones() as usize;
                    }
                    // The low four bits of the bytes, and the high: 16-bit rows of the set.
                    let (mut low, mut high) = (0u128, 0u32);
                    for h in 0..8 {
                        let row = bytes >> (16 * h) & 0xffff;
                        low |= row;
                        high |= u32::from(row != 0) << h;
                    }
                    (low.count_ones() * high.count_ones()) as usize
                })
                .product()
        };
        let mut groups = [[0u8; 128]; 3];
        for &first in &firsts {
            let add = of(first);
            let best = (0..GROUPS)
                .min_by_key(|&g| {
                    let now = &sets[usize::from(g)];
                    let trial = [0, 1, 2].map(|k| now[k] | add[k]);
                    passed(&trial) - passed(now)
                })
                .unwrap_or(0);
            for (k, set) in sets[usize::from(best)].iter_mut().enumerate() {
                *set |= add[k];
            }
            for literal in literals.iter().filter(|l| l[0] == first) {
                for (k, table) in groups.iter_mut().enumerate() {
                    table[usize::from(literal[k])] |= 1 << best;
                }
            }
        }
        let mut nibbles = [[[0u8; 32]; 2]; 3];
        for (k, table) in groups.iter().enumerate() {
            for (b, &groups) in table.iter().enumerate() {
                for lane in [0, 16] {
                    nibbles[k][0][lane + (b & 15)] |= groups;
                    nibbles[k][1][lane + (b >> 4)] |= groups;
                }
            }
        }
        Trigrams {
            nibbles,
            exact,
            simd,
            check,
        }
    }

    /// Whether the first [`EXACT`] bytes of a literal (all of a shorter one) start at `text[i]`,
    /// and the caller's check agrees.
    #[inline]
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    fn hit_at(&self, text: &[u8], i: usize) -> bool {
        let prefixes = |k: usize| self.exact[k][text.get(i + k).map_or(256, |&b| usize::from(b))];
        // Three bytes first: most positions let through go no further.
        let three = prefixes(0) & prefixes(1) & prefixes(2);
        three != 0 && three & prefixes(3) & prefixes(4) != 0 && (self.check)(text, i)
    }

    /// The first position of `bits` (from `at`) that starts a literal's first bytes by the
    /// exact tables and passes the caller's check: the positions the filter lets through are
    /// checked one by one. Inline: a call would spill the filter's tables around it.
    #[inline]
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    fn exact(&self, text: &[u8], at: usize, mut bits: u64) -> Option<usize> {
        while bits != 0 {
            let i = at + bits.trailing_zeros() as usize;
            if self.hit_at(text, i) {
                return Some(i);
            }
            bits &= bits - 1;
        }
        None
    }

    /// True when no literal starts anywhere in `text`; false when one may (or this CPU cannot
    /// tell at the filter's speed).
    #[inline]
    pub fn rules_out(&self, text: &[u8]) -> bool {
        self.first(text) == Some(None)
    }

    /// Where the first literal may start in `text`: `Some(None)` where none does, `None` where
    /// this CPU cannot tell at the filter's speed.
    #[inline]
    pub fn first(&self, text: &[u8]) -> Option<Option<usize>> {
        #[cfg(not(target_arch = "x86_64"))]
        let _ = text; // no SIMD filter here: nothing is ruled out
        #[cfg(target_arch = "x86_64")]
        match self.simd {
            #[allow(unsafe_code)]
            // SAFETY: `avx2::first` is unsafe to call only because it is compiled for AVX2,
            // and `Simd::Avx2` says the CPU has it (`Simd::on` checked).
            Simd::Avx2 => return Some(unsafe { avx2::first(self, text) }),
            Simd::Off => {}
        }
        None
    }

    /// [`Trigrams::rules_out`] a byte at a time (for tests: what the SIMD filter must say).
    #[cfg(test)]
    pub fn rules_out_slowly(&self, text: &[u8]) -> bool {
        self.first_slowly(text).is_none()
    }

    /// [`Trigrams::first`] a byte at a time.
    #[cfg(test)]
    pub fn first_slowly(&self, text: &[u8]) -> Option<usize> {
        (0..text.len()).find(|&i| self.hit_at(text, i))
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(
    unsafe_code,
    reason = "unsafe fns compiled for instructions the CPU may lack"
)]
mod avx2 {
    use std::arch::x86_64::*;

    use super::Trigrams;

    /// 32 bytes as a vector.
    macro_rules! vector {
        ($bytes:expr) => {{
            let bytes: &[u8; 32] = $bytes;
            #[allow(unsafe_code)]
            // SAFETY: the load reads 32 bytes from a reference to 32 bytes.
            unsafe {
                _mm256_loadu_si256(bytes.as_ptr().cast())
            }
        }};
    }

    /// [`Trigrams::first`] with AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn first(filter: &Trigrams, text: &[u8]) -> Option<usize> {
        // Closures are not compiled for AVX2: the work is in macros.
        let n = &filter.nibbles;
        let lows = [vector!(&n[0][0]), vector!(&n[1][0]), vector!(&n[2][0])];
        let highs = [vector!(&n[0][1]), vector!(&n[1][1]), vector!(&n[2][1])];
        let low_bits = _mm256_set1_epi8(0x0F);
        // The positions of a block where a literal may start, as bits: those whose byte and the
        // next two are each in some same group by their four-bit halves.
        macro_rules! maybe {
            ($run:expr) => {{
                let run: &[u8; 34] = $run;
                let mut hits = _mm256_set1_epi8(-1);
                for k in 0..3 {
                    let x = vector!(run[k..].first_chunk::<32>().expect("34 bytes"));
                    let low = _mm256_and_si256(x, low_bits);
                    let high = _mm256_and_si256(_mm256_srli_epi16::<4>(x), low_bits);
                    let l = _mm256_shuffle_epi8(lows[k], low);
                    let h = _mm256_shuffle_epi8(highs[k], high);
                    hits = _mm256_and_si256(hits, _mm256_and_si256(l, h));
                }
                let none = _mm256_cmpeq_epi8(hits, _mm256_setzero_si256());
                u64::from(!(_mm256_movemask_epi8(none) as u32))
            }};
        }
        let mut at = 0;
        while let Some(run) = text.get(at..at + 34) {
            let bits = maybe!(run.first_chunk::<34>().expect("34 bytes"));
            if bits != 0
                && let Some(hit) = filter.exact(text, at, bits)
            {
                return Some(hit);
            }
            at += 32;
        }
        // The positions left that start three bytes of the text (a literal has three or more).
        if at + 2 >= text.len() {
            return None;
        }
        let (from, bits) = if let Some(from) = text.len().checked_sub(34) {
            // The last 34 bytes, without a copy: the positions before `at` were looked at.
            let run = text[from..].first_chunk::<34>().expect("34 bytes");
            (from, maybe!(run) & u64::MAX << (at - from))
        } else {
            // A text shorter than a block, padded with NUL (in no group).
            let mut run = [0u8; 34];
            run[..text.len()].copy_from_slice(text);
            (0, maybe!(&run) & u64::MAX >> (64 - text.len()))
        };
        if bits == 0 {
            return None;
        }
        filter.exact(text, from, bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const LITERALS: &[&[u8]] = &[b"sk-", b"token", b"Bearer", b"://", b":AA", b"eyJ", b"xox"];

    /// The SIMD filters of every path this CPU has.
    fn filters() -> Vec<Simd> {
        let mut filters: Vec<Simd> = crate::line::strings::Simd::offered()
            .map(Simd::on)
            .filter(|&s| s != Simd::Off)
            .collect();
        filters.dedup();
        filters
    }

    #[test]
    fn a_literal_anywhere_is_never_ruled_out() {
        let filter = Trigrams::new(LITERALS);
        for literal in LITERALS {
            // Around the AVX2 block (32 positions, 34 bytes) and twice it.
            for len in [0, 1, 29, 30, 31, 32, 33, 34, 61, 62, 63, 64, 65, 66, 130] {
                for at in 0..=len {
                    let mut text = vec![b'q'; len];
                    text.splice(at..at, literal.iter().copied());
                    assert!(!filter.rules_out(&text), "{literal:?} @ {at} of {len}");
                    assert!(!filter.rules_out_slowly(&text));
                    for simd in filters() {
                        let each = Trigrams {
                            simd,
                            ..filter.clone()
                        };
                        assert!(
                            !each.rules_out(&text),
                            "{simd:?}: {literal:?} @ {at} of {len}"
                        );
                    }
                }
            }
        }
        assert!(filter.rules_out_slowly(b"the type of the text"));
    }

    /// The exact check compares five bytes: a text with the first four of a longer literal,
    /// in its middle or at its end, is ruled out; a literal of three, at the end, is not.
    #[test]
    fn five_bytes_are_compared_and_a_short_literal_ends_a_text() {
        let filter = Trigrams::new(&[b"passw", b"sk-", b"Bearer"]);
        for text in [&b"12 passed; 0 failed"[..], b"tests pass", b"Beard"] {
            assert!(filter.rules_out_slowly(text), "{text:?}");
            if filter.simd != Simd::Off {
                assert!(filter.rules_out(text), "{text:?}");
            }
        }
        // Five bytes of a longer literal are a hit: the search decides.
        for text in [
            &b"a password"[..],
            b"key sk-",
            b"sk-",
            b"Bearer x",
            b"Beare",
        ] {
            assert!(!filter.rules_out_slowly(text), "{text:?}");
            assert!(!filter.rules_out(text), "{text:?}");
        }
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
            if filter.simd != Simd::Off {
                prop_assert_eq!(filter.rules_out(&text), slow);
            } else {
                prop_assert!(!filter.rules_out(&text));
            }
            for simd in filters() {
                let each = Trigrams { simd, ..filter.clone() };
                prop_assert_eq!(each.rules_out(&text), slow, "{:?}", simd);
                prop_assert_eq!(each.first(&text), Some(filter.first_slowly(&text)), "{:?}", simd);
            }
            // Ruled out only when no literal is there.
            let has = LITERALS.iter().any(|l| text.windows(l.len()).any(|w| w == *l));
            prop_assert!(!(slow && has));
        }

        /// More first bytes than groups: literals share groups, the four-bit look-ups let
        /// through many positions, and the exact check decides.
        #[test]
        fn shared_groups_stay_exact(
            text in proptest::collection::vec(
                prop_oneof![
                    Just(b'a'), Just(b'q'), Just(b'A'), Just(b'p'), Just(b's'), Just(b'k'),
                    Just(b'_'), Just(b'-'), Just(b'1'), Just(b'i'), Just(b'x'), any::<u8>()
                ],
                0..300,
            ),
        ) {
            const MANY: &[&[u8]] = &[
                b"api_", b"apik", b"AKIA", b"ASIA", b"AIza", b"sk-", b"sk_", b"sig=", b"sbp_",
                b"pypi-", b"passw", b"PASSW", b"xox", b"xai-", b"q1k", b"1aq", b"-k_", b"_sk",
                b"ip_", b"kA1", b"Ask", b"aqa", b"pk-", b"iq1", b"xp_", b"Q_a", b"k-x", b"sA_",
            ];
            let filter = Trigrams::new(MANY);
            let slow = filter.rules_out_slowly(&text);
            let has = MANY.iter().any(|l| text.windows(l.len()).any(|w| w == *l));
            prop_assert!(!(slow && has));
            for simd in filters() {
                let each = Trigrams { simd, ..filter.clone() };
                prop_assert_eq!(each.rules_out(&text), slow, "{:?}", simd);
                prop_assert_eq!(each.first(&text), Some(filter.first_slowly(&text)), "{:?}", simd);
            }
        }
    }
}
