//! Which SIMD path each family of functions runs ([`Simd`]): the fastest one measured on this
//! CPU's feature set (the defaults below, from docs/performance.md, "SIMD paths"), or the one
//! `SMART_TEE_SIMD` forces, capped at what the CPU has. Both are read once and cached: a
//! dispatch is one relaxed load. No path is skipped because a wider one exists: a family whose
//! wider variant was not measured faster keeps the narrower one.

use std::sync::atomic::{AtomicU8, Ordering};

/// A SIMD path: the instructions a family of functions is run with, narrowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Simd {
    /// No SIMD instructions: eight bytes in a `u64` (SWAR) or a byte at a time, as on a target
    /// without SSE2 (aarch64). On x86_64 the sixteen-byte first looks (a short string's end, a
    /// run of integers) stay SSE2, part of every x86_64 CPU; the 64-byte loops are portable.
    Portable = 1,
    /// SSE2, sixteen bytes per compare (every x86_64 CPU).
    Sse2 = 2,
    /// AVX2, thirty-two bytes per compare: `--redact`'s trigram filter. The string scan and the
    /// block writers run SSE2's code here (AVX2's gained less than 15% and were deleted).
    Avx2 = 3,
    /// A CPU with AVX-512BW: it runs the AVX2 code. The AVX-512 versions (string scan, block
    /// writers, VBMI2's block writer, VBMI's trigram filter) were measured no faster end to
    /// end than AVX2's and deleted (docs/performance.md, "SIMD paths"); the name stays so that
    /// scripts and tests name every kind of CPU.
    Avx512 = 4,
}

/// The path each family runs by default, capped at what the CPU has: the fastest measured end
/// to end (docs/performance.md, "SIMD paths").
pub mod default {
    use super::Simd;
    /// Where a JSON string ends (`content_end`): the corpus, the escapes line. (AVX2's was
    /// 11-13% faster on the corpus: under the 15% that keeps a variant.)
    pub const STRING_SCAN: Simd = Simd::Sse2;
    /// The writers of lines that are not JSON (`run_block_loop`): text and random bytes.
    /// (AVX2's was 2-8% faster on text, 1-2% on random bytes.)
    pub const BLOCK_WRITER: Simd = Simd::Sse2;
    /// The writer of binary lines (`run_string_loop`): random bytes.
    pub const STRING_WRITER: Simd = Simd::Sse2;
    /// `--redact`'s trigram filter.
    pub const TRIGRAMS: Simd = Simd::Avx2;
}

/// The environment variable that forces every family onto one path.
pub const SIMD_VAR: &str = "SMART_TEE_SIMD";

/// Bits 0..4: the widest path this CPU has; bits 4..8: the path `SMART_TEE_SIMD` forces
/// (capped), 0 when it is unset; 0 in all: not read yet.
static STATE: AtomicU8 = AtomicU8::new(0);

impl Simd {
    /// Every path, narrowest first.
    pub const ALL: [Simd; 4] = [Simd::Portable, Simd::Sse2, Simd::Avx2, Simd::Avx512];

    /// The name `SMART_TEE_SIMD` takes.
    pub fn name(self) -> &'static str {
        match self {
            Simd::Portable => "portable",
            Simd::Sse2 => "sse2",
            Simd::Avx2 => "avx2",
            Simd::Avx512 => "avx512",
        }
    }

    /// The path of a name `SMART_TEE_SIMD` takes.
    pub fn parse(name: &str) -> Option<Simd> {
        Simd::ALL.into_iter().find(|p| p.name() == name)
    }

    #[inline(always)]
    fn from_bits(bits: u8) -> Option<Simd> {
        match bits {
            1 => Some(Simd::Portable),
            2 => Some(Simd::Sse2),
            3 => Some(Simd::Avx2),
            4 => Some(Simd::Avx512),
            _ => None,
        }
    }

    /// The widest path this CPU has (AVX-512 means AVX-512BW).
    #[inline]
    pub fn widest() -> Simd {
        Simd::from_bits(state() & 15).unwrap_or(Simd::Portable)
    }

    /// The paths this CPU has, narrowest first.
    pub fn offered() -> impl Iterator<Item = Simd> {
        let widest = Simd::widest();
        Simd::ALL.into_iter().filter(move |&p| p <= widest)
    }

    /// The path `SMART_TEE_SIMD` forces, capped at what the CPU has; `None` when it is unset
    /// (or names no path: `cli` refuses that before anything runs).
    pub fn forced() -> Option<Simd> {
        Simd::from_bits(state() >> 4)
    }

    /// The path a family whose fastest measured path is `default` runs: the forced one, else
    /// `default`, capped at what the CPU has.
    #[inline]
    pub fn pick(default: Simd) -> Simd {
        let state = state();
        let forced = state >> 4;
        let bits = if forced != 0 {
            forced
        } else {
            (default as u8).min(state & 15)
        };
        Simd::from_bits(bits).unwrap_or(Simd::Portable)
    }

    /// `SMART_TEE_SIMD`'s value when it names no path (for `cli`'s check).
    pub fn unknown_in_env() -> Option<String> {
        let value = std::env::var_os(SIMD_VAR)?;
        let value = value.to_string_lossy();
        Simd::parse(&value).is_none().then(|| value.into_owned())
    }
}

/// The cached [`STATE`], read on first use.
#[inline]
fn state() -> u8 {
    match STATE.load(Ordering::Relaxed) {
        0 => detect(),
        state => state,
    }
}

#[cold]
fn detect() -> u8 {
    let widest = widest_detected();
    let forced = std::env::var_os(SIMD_VAR)
        .and_then(|v| Simd::parse(&v.to_string_lossy()))
        .map_or(0, |p| p.min(widest) as u8);
    let state = forced << 4 | widest as u8;
    STATE.store(state, Ordering::Relaxed);
    state
}

fn widest_detected() -> Simd {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512bw") {
            return Simd::Avx512;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return Simd::Avx2;
        }
    }
    #[cfg(all(
        any(target_arch = "x86_64", target_arch = "x86"),
        target_feature = "sse2"
    ))]
    return Simd::Sse2;
    #[allow(unreachable_code)]
    Simd::Portable
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_the_default_is_capped() {
        for p in Simd::ALL {
            assert_eq!(Simd::parse(p.name()), Some(p));
        }
        assert_eq!(Simd::parse("avx-512"), None);
        assert!(Simd::offered().any(|p| p == Simd::Portable));
        for p in Simd::ALL {
            assert!(Simd::pick(p) <= Simd::widest());
        }
    }
}
