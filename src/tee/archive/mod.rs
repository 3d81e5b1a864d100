//! `--archive`: the whole input, zstd-compressed, with an index that finds the original of any
//! log line without decompressing from the start.
//!
//! An archive is a sequence of records. Each record is a zstd skippable frame (the index entry,
//! [`Entry`]) followed by one independent zstd frame of input bytes (with its content size and
//! checksum). `zstd -dc` skips the entries and prints the input. A frame ends at a line end,
//! except that a line longer than [`FRAME_MAX`] spans several frames.
//!
//! Lines and log lines: an archive line is an input line (the bytes up to its `\n`, a `\r`
//! before it kept). Each non-blank input line becomes one log line; an entry says which log
//! line the first logged line ending in its frame became (`log_first`), how many logged lines
//! end there, which line ends produced no log line (blank lines), and a hash of those log lines'
//! bytes. A reader checks the hash against the log before it trusts the numbering, so a log
//! that was rotated, copied, shared by other writers or cut back never gets a wrong original,
//! only a clear "no original".
//!
//! The tee's side: `writer` (the feed on the log thread, `--compact --archive`), `frames`
//! (cutting the input into frames, on the log thread) and `compress` (the compression thread
//! and the file). The reading side: `reader` (finding and reading a line) and `original`
//! (`--view --original`, the MCP tool). This file owns the format and the names.

pub mod compress;
pub mod frames;
pub mod original;
pub mod reader;
pub mod writer;

use std::path::{Path, PathBuf};

/// A frame is closed at the first line end once it holds this much input.
pub const FRAME_TARGET: usize = 1 << 20;
/// A frame never holds more: a longer line is cut across frames here.
pub const FRAME_MAX: usize = 2 << 20;
/// A frame is closed early once this many of its lines produced no log line, so an entry
/// stays small.
pub const MAX_BLANKS: usize = 1024;
/// The zstd level, by measurement on tests/data/real in 1 MiB frames (`zstd -b1 -e3 -B1MiB`):
/// level 1 keeps 21.2% of the input, over the 20% asked; level 2 keeps 17.6% at level 1's
/// speed; level 3 keeps 16.7% for about a tenth more time.
pub const LEVEL: i32 = 2;
/// The levels a compression thread steps through, one a frame: down while the tee's queue of
/// input waiting for the log side is at least half full and another frame waits for the
/// compressor (the stream is about to be held back, by compression: the input comes faster
/// than [`LEVEL`] compresses it), back up once either is not. On the 200 MB
/// corpus (`examples/archive_levels`, one core): level 2 730 MB/s keeping 25%, -1 920 MB/s
/// (literals left unencoded) keeping 36%, -8 950 MB/s, -64 1,230 MB/s keeping 46%; on text
/// with few repeats -64 keeps nearly all of it. Only a burst that fills the queue gets there.
pub const PACE: [i32; 4] = [LEVEL, -1, -8, -64];

/// How full the tee's queue of input waiting for the log side is, as the tee reports it
/// ([`crate::tee::handoff::Handoff::reporting`]), and how many closed frames wait for the
/// compressor: the compression threads pace themselves by both. With nobody reporting
/// (`--compact --archive`, the library) the queue stays empty.
#[derive(Debug, Default)]
pub struct Backlog {
    /// Bytes queued.
    pub queued: std::sync::atomic::AtomicUsize,
    /// The most that may be queued (0: nobody reports).
    pub bound: std::sync::atomic::AtomicUsize,
    /// Frames handed to the compression threads (or being handed) and not taken yet.
    pub frames: std::sync::atomic::AtomicUsize,
}

impl Backlog {
    /// True when the queue is at least half full and a frame waits for compression.
    pub fn behind(&self) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        let bound = self.bound.load(Relaxed);
        bound > 0 && self.queued.load(Relaxed) >= bound / 2 && self.frames.load(Relaxed) > 0
    }
}

/// The magic of the skippable frame that holds an entry (one of the 16 zstd reserves).
pub const ENTRY_MAGIC: u32 = 0x184D_2A5B;
/// The first bytes of an entry's payload: the format and its version. Version 2 hashes log
/// lines with [`line_hash`]; version 1 (still read) with [`line_hash_v1`].
pub const ENTRY_TAG: &[u8; 4] = b"stA2";
/// The tag of version 1 entries.
pub const ENTRY_TAG_V1: &[u8; 4] = b"stA1";
/// The fixed part of an entry's payload; the blank list follows (4 bytes each), then, from
/// version 2 on, a check of all that ([`ENTRY_CHECK`] bytes).
pub const ENTRY_FIXED: usize = 48;
/// The check at the end of a version 2 entry: [`line_hash`] of the payload before it, so that a
/// damaged entry (a flipped flag, a blank index) is refused instead of numbering lines wrong.
pub const ENTRY_CHECK: usize = 8;
/// The largest input a frame may claim, for a reader that meets a damaged entry.
pub const READ_FRAME_MAX: u64 = 64 << 20;

/// The environment variable that turns the archive on for a pipeline whose command line cannot
/// change: any value but empty or `0` puts an archive next to the first log.
pub const ARCHIVE_VAR: &str = "SMART_TEE_ARCHIVE";

/// The frame's first byte continues a line begun in an earlier frame.
pub const CONTINUES: u32 = 1;
/// The frame's last line goes on in the next frame.
pub const OPEN_END: u32 = 2;
/// The frame's data ends with a line that ended at end of input, without a newline.
pub const EOF_END: u32 = 4;

/// The default archive of a log: `LOG.orig.zst` beside it.
pub fn default_path(log: &Path) -> PathBuf {
    let mut name = log.as_os_str().to_owned();
    name.push(".orig.zst");
    PathBuf::from(name)
}

/// Where a log's archive may be, in the order a reader looks: `LOG.orig.zst`; for a log that
/// was compressed after it was written (`.gz`, `.zst`), beside the name it had before; for a
/// log rotated by logrotate with its archive (`run.jsonl.1`, `run.jsonl-20260101`, compressed
/// or not), the archive rotated the same way (`run.jsonl.orig.zst.1`).
pub fn default_paths(log: &Path) -> Vec<PathBuf> {
    let mut out = vec![default_path(log)];
    let Some(name) = log.file_name().and_then(|n| n.to_str()) else {
        return out;
    };
    let plain = name
        .strip_suffix(".gz")
        .or_else(|| name.strip_suffix(".zst"))
        .unwrap_or(name);
    let beside = |file: String| log.with_file_name(file);
    if plain != name {
        out.push(beside(format!("{plain}.orig.zst")));
    }
    // logrotate's suffixes: `.N` (and `-DATE` with dateext), after the log's own name.
    for (at, c) in plain.char_indices().rev() {
        if at > 0 && (c == '.' || c == '-') {
            let (stem, suffix) = plain.split_at(at);
            let rotated = suffix[1..]
                .chars()
                .all(|c| c.is_ascii_digit() || c == '-' || c == '_');
            if rotated && !suffix[1..].is_empty() {
                out.push(beside(format!("{stem}.orig.zst{suffix}")));
            }
            break;
        }
    }
    out.dedup();
    out
}

/// True when the environment asks for an archive next to the log.
pub fn wanted_by_env() -> bool {
    std::env::var_os(ARCHIVE_VAR).is_some_and(|v| !v.is_empty() && v != "0")
}

/// One record's index entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    pub flags: u32,
    /// The compressed size of the frame that follows.
    pub csize: u64,
    /// Its content size.
    pub dsize: u64,
    /// The log line number (from 1) of the first logged line ending in the frame; when none
    /// does, the number the next one gets.
    pub log_first: u64,
    /// Lines ending in the frame that produced a log line.
    pub logged: u32,
    /// Lines ending in the frame (the line continued from an earlier frame, if it ends here,
    /// and a last line ended by end of input count).
    pub ends: u32,
    /// [`fold`] of the [`line_hash`] of each logged line's log bytes, in order.
    pub hash: u64,
    /// The indexes (among `ends`, from 0) of the line ends that produced no log line.
    pub blanks: Vec<u32>,
    /// Written by version 1: `hash` folds [`line_hash_v1`].
    pub v1: bool,
}

impl Entry {
    /// The skippable frame holding this entry, appended to `out`.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        // A version 2 entry ends with its check, written by [`Entry::seal`] once the
        // compressed size is known.
        let check = if self.v1 { 0 } else { ENTRY_CHECK };
        let payload = ENTRY_FIXED + 4 * self.blanks.len() + check;
        out.extend_from_slice(&ENTRY_MAGIC.to_le_bytes());
        out.extend_from_slice(&(payload as u32).to_le_bytes());
        out.extend_from_slice(if self.v1 { ENTRY_TAG_V1 } else { ENTRY_TAG });
        out.extend_from_slice(&self.flags.to_le_bytes());
        out.extend_from_slice(&self.csize.to_le_bytes());
        out.extend_from_slice(&self.dsize.to_le_bytes());
        out.extend_from_slice(&self.log_first.to_le_bytes());
        out.extend_from_slice(&self.logged.to_le_bytes());
        out.extend_from_slice(&self.ends.to_le_bytes());
        out.extend_from_slice(&self.hash.to_le_bytes());
        for b in &self.blanks {
            out.extend_from_slice(&b.to_le_bytes());
        }
        out.resize(out.len() + check, 0);
    }

    /// Sets the compressed size in a record that starts with an entry written by
    /// [`Entry::write_to`] (it is known once the frame that follows is compressed), and seals
    /// a version 2 entry with its check.
    pub fn seal(record: &mut [u8], csize: u64) {
        record[16..24].copy_from_slice(&csize.to_le_bytes());
        if &record[8..12] == ENTRY_TAG {
            let end = 8 + u32::from_le_bytes([record[4], record[5], record[6], record[7]]) as usize;
            let check = line_hash(&record[8..end - ENTRY_CHECK]);
            record[end - ENTRY_CHECK..end].copy_from_slice(&check.to_le_bytes());
        }
    }

    /// The payload's length, from a skippable frame's 8-byte header; `None` when it is not an
    /// entry's header.
    pub fn payload_len(header: &[u8; 8]) -> Option<usize> {
        let magic = u32::from_le_bytes(header[..4].try_into().ok()?);
        let len = u32::from_le_bytes(header[4..].try_into().ok()?) as usize;
        // The blank list, and a version 2 entry's check (as long as two blank indexes).
        let rest = len.checked_sub(ENTRY_FIXED)?;
        (magic == ENTRY_MAGIC && rest % 4 == 0 && rest / 4 <= MAX_BLANKS + 3).then_some(len)
    }

    /// An entry from its payload; `None` when it is not one this version wrote, or it does not
    /// hold together.
    pub fn parse(p: &[u8]) -> Option<Entry> {
        let v1 = p.get(..4)? == ENTRY_TAG_V1;
        if !v1 && p.get(..4)? != ENTRY_TAG {
            return None;
        }
        let end = if v1 {
            p.len()
        } else {
            let end = p.len().checked_sub(ENTRY_CHECK)?;
            let check = u64::from_le_bytes(p[end..].try_into().ok()?);
            (end >= ENTRY_FIXED && line_hash(&p[..end]) == check).then_some(end)?
        };
        if end < ENTRY_FIXED {
            return None;
        }
        let u32_at = |at: usize| u32::from_le_bytes(p[at..at + 4].try_into().unwrap_or([0; 4]));
        let u64_at = |at: usize| u64::from_le_bytes(p[at..at + 8].try_into().unwrap_or([0; 8]));
        let e = Entry {
            flags: u32_at(4),
            csize: u64_at(8),
            dsize: u64_at(16),
            log_first: u64_at(24),
            logged: u32_at(32),
            ends: u32_at(36),
            hash: u64_at(40),
            blanks: p[ENTRY_FIXED..end]
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            v1,
        };
        let sane = e.dsize <= READ_FRAME_MAX
            && e.logged <= e.ends
            && (e.ends - e.logged) as usize == e.blanks.len()
            && e.blanks.iter().all(|&b| b < e.ends)
            && e.blanks.windows(2).all(|w| w[0] < w[1]);
        sane.then_some(e)
    }
}

/// The hash of one log line's bytes (its newline excluded), as version 2 entries fold it. Four
/// 64-bit lanes take 32 bytes a round, each word added to one lane as it is and the product of
/// its halves (keyed) to another, which compiles to a few vector instructions a round: the log
/// thread hashes every log line, so this ran at a word per multiply before (most of what the
/// archive cost on short lines). Any change of one word changes the sum of its lane; the
/// multiply-xorshift of [`line_hash_v1`] then mixes the lanes with the last bytes. Fixed here:
/// every version reads what another wrote.
pub fn line_hash(bytes: &[u8]) -> u64 {
    const KEYS: [u64; 4] = [
        0x9E37_79B9_7F4A_7C15,
        0xC2B2_AE3D_27D4_EB4F,
        0x1656_67B1_9E37_79F9,
        0x27D4_EB2F_1656_67C5,
    ];
    let seed = (bytes.len() as u64).wrapping_mul(KEYS[0]) ^ 0x5354_4545_4152_4348;
    let mut lanes = [seed, seed ^ KEYS[1], seed ^ KEYS[2], seed ^ KEYS[3]];
    let mut blocks = bytes.chunks_exact(32);
    // A salt that changes each round: the same 32 bytes add otherwise in another round, so
    // that blocks swapped within a line change the sums.
    let mut salt = 0u64;
    for b in &mut blocks {
        let mut words = [0u64; 4];
        for (i, w) in words.iter_mut().enumerate() {
            *w = u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap_or([0; 8])) ^ salt;
        }
        for i in 0..4 {
            let keyed = words[i] ^ KEYS[i];
            lanes[i ^ 1] = lanes[i ^ 1].wrapping_add(words[i]);
            lanes[i] = lanes[i].wrapping_add((keyed & 0xFFFF_FFFF) * (keyed >> 32));
        }
        salt = salt.wrapping_add(KEYS[1]);
    }
    // The lanes side by side (rotated apart), then mixed with the last bytes' words.
    let h = seed ^ lanes[0] ^ lanes[1].rotate_left(17) ^ lanes[2].rotate_left(31);
    words_hash(h ^ lanes[3].rotate_left(47), blocks.remainder())
}

/// The hash of one log line's bytes as version 1 entries fold it: a word-at-a-time
/// multiply-xorshift.
pub fn line_hash_v1(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let h = (bytes.len() as u64).wrapping_mul(K) ^ 0x5354_4545_4152_4348;
    words_hash(h, bytes)
}

/// `h` with the bytes of `bytes` mixed in a word at a time.
fn words_hash(mut h: u64, bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let w = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        h = (h ^ w).wrapping_mul(K);
        h ^= h >> 32;
    }
    let mut last = [0u8; 8];
    last[..words.remainder().len()].copy_from_slice(words.remainder());
    h = (h ^ u64::from_le_bytes(last)).wrapping_mul(K);
    h ^ (h >> 29)
}

/// Adds one line's hash to a frame's.
pub fn fold(frame: u64, line: u64) -> u64 {
    (frame.rotate_left(23) ^ line).wrapping_mul(0xFF51_AFD7_ED55_8CCD)
}

/// Counts the lines of a log as a writer appending to it will number them: each newline ends
/// one, and an unfinished last line counts too (the next write ends it with a newline).
pub fn count_log_lines(path: &Path) -> std::io::Result<u64> {
    let f = std::fs::File::open(path)?;
    let len = f.metadata()?.len();
    Ok(
        crate::tee::sink::count_newlines(&f, len)?
            + u64::from(crate::tee::sink::ends_mid_line(&f)?),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry with every field set, and its record's entry bytes (sealed).
    fn sample() -> (Entry, Vec<u8>) {
        let e = Entry {
            flags: CONTINUES | EOF_END,
            csize: 12,
            dsize: 34,
            log_first: 56,
            logged: 2,
            ends: 4,
            hash: 0xdead_beef,
            blanks: vec![0, 3],
            v1: false,
        };
        let mut out = Vec::new();
        e.write_to(&mut out);
        Entry::seal(&mut out, 12);
        (e, out)
    }

    #[test]
    fn an_entry_reads_back_as_written() {
        let (e, out) = sample();
        let header: [u8; 8] = out[..8].try_into().unwrap();
        let len = Entry::payload_len(&header).unwrap();
        assert_eq!(len, out.len() - 8);
        assert_eq!(Entry::parse(&out[8..]), Some(e.clone()));
        // Version 1 entries have no check and read as they were written.
        let v1 = Entry { v1: true, ..e };
        let mut old = Vec::new();
        v1.write_to(&mut old);
        Entry::seal(&mut old, 12);
        assert_eq!(old.len(), out.len() - ENTRY_CHECK);
        assert_eq!(Entry::parse(&old[8..]), Some(v1));
    }

    /// A regression: one flipped bit of an entry (a blank index, the flag that says a frame
    /// continues a line) numbered lines wrong. A version 2 entry's check refuses it.
    #[test]
    fn an_entry_with_any_bit_flipped_is_refused() {
        let (_, out) = sample();
        for bit in 0..(out.len() - 8) * 8 {
            let mut bad = out[8..].to_vec();
            bad[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(Entry::parse(&bad), None, "bit {bit}");
        }
    }

    #[test]
    fn line_hash_sees_every_byte_and_the_length() {
        // Lines past a 32-byte round: a change in any lane, and in the remainder, is seen.
        let long = b"{\"type\":\"assistant\",\"message\":{\"id\":\"msg_01\",\"x\":12345}}";
        for i in 0..long.len() {
            let mut other = *long;
            other[i] ^= 1;
            assert_ne!(line_hash(long), line_hash(&other), "byte {i}");
        }
        assert_ne!(line_hash(&long[..40]), line_hash_v1(&long[..40]));
        // Two 32-byte blocks swapped (a regression: the lanes' sums did not see their order).
        let (a, b) = ([b'A'; 32], [b'B'; 32]);
        assert_ne!(line_hash(&[a, b].concat()), line_hash(&[b, a].concat()));
        assert_ne!(
            line_hash(&[a, b, a, [b'x'; 32]].concat()),
            line_hash(&[b, a, a, [b'x'; 32]].concat())
        );
        // Version 1 stays as it was written: archives of earlier versions still read.
        assert_eq!(line_hash_v1(b"{\"a\":1}"), 0x4c6c_fadd_74dc_20d8);
        let a = line_hash(b"{\"a\":1}");
        assert_ne!(a, line_hash(b"{\"a\":2}"));
        assert_ne!(line_hash(b""), line_hash(b"\0"));
        assert_ne!(line_hash(b"12345678"), line_hash(b"123456789"));
        assert_eq!(a, line_hash(b"{\"a\":1}"));
    }
}
