//! Reading an archive: walking its records, finding the original of a log line, and reading
//! it, or a page of it, in bounded time and memory.
//!
//! Finding line N reads only the entries (two small reads per record) and the log up to the
//! lines the candidate frame claims, whose hash must match the entry's; reading it
//! decompresses only the frames that hold the requested bytes, one at a time (at most
//! [`super::FRAME_MAX`] bytes each).

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::{CONTINUES, EOF_END, Entry, OPEN_END, fold, line_hash, line_hash_v1};
use crate::error::Error;

/// A record whose entry and frame are both whole in the file.
#[derive(Clone, Debug)]
pub struct Record {
    /// Where its zstd frame starts.
    pub at: u64,
    pub entry: Entry,
}

/// Walks the whole records from the start, calling `each` with each. Returns where the last
/// whole record ends, and whether the file is an archive at all (empty, or starting with an
/// entry).
fn walk(file: &File, mut each: impl FnMut(Record)) -> io::Result<(u64, bool)> {
    let len = file.metadata()?.len();
    let mut off = 0u64;
    let mut payload = Vec::new();
    while off < len {
        let mut header = [0u8; 8];
        if off + 8 > len || file.read_exact_at(&mut header, off).is_err() {
            break;
        }
        let Some(plen) = Entry::payload_len(&header) else {
            break;
        };
        let data_at = off + 8 + plen as u64;
        if data_at > len {
            break;
        }
        payload.resize(plen, 0);
        file.read_exact_at(&mut payload, off + 8)?;
        let Some(entry) = Entry::parse(&payload) else {
            break;
        };
        let end = data_at.saturating_add(entry.csize);
        if end > len {
            break;
        }
        each(Record { at: data_at, entry });
        off = end;
    }
    let ours = len == 0 || off > 0;
    Ok((off, ours))
}

/// Whether the bytes of `file` from `whole` (where its whole records end) to `len` can be a
/// record torn by a crash, to be cut off: no longer than a record can be, and no whole entry
/// after their start (a damaged entry in the middle of an archive, or one of a later version,
/// leaves whole records after it, which an append must not cut off).
pub fn torn_tail(file: &File, whole: u64, len: u64) -> io::Result<bool> {
    let most = 8
        + (super::ENTRY_FIXED + 4 * (super::MAX_BLANKS + 1) + super::ENTRY_CHECK)
        + zstd::zstd_safe::compress_bound(super::FRAME_MAX);
    if len - whole > most as u64 {
        return Ok(false);
    }
    let mut tail = vec![0; (len - whole) as usize];
    file.read_exact_at(&mut tail, whole)?;
    let magic = super::ENTRY_MAGIC.to_le_bytes();
    for at in memchr::memmem::find_iter(&tail, &magic).filter(|&at| at > 0) {
        let Some(plen) = tail[at..].first_chunk().and_then(Entry::payload_len) else {
            continue;
        };
        if tail
            .get(at + 8..at + 8 + plen)
            .is_some_and(|p| Entry::parse(p).is_some())
        {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Where the archive's last whole record ends, and whether the file is an archive.
pub fn whole_len(file: &File) -> io::Result<(u64, bool)> {
    walk(file, |_| {})
}

/// An archive opened for reading.
pub struct Archive {
    path: PathBuf,
    file: File,
    records: Vec<Record>,
    zstd: zstd::bulk::Decompressor<'static>,
}

/// Where a line's original is: from `start` (record index, offset in its frame) to `end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Located {
    pub start: (usize, u64),
    pub end: (usize, u64),
    /// Its length in bytes.
    pub len: u64,
}

impl Archive {
    pub fn open(path: &Path) -> Result<Archive, Error> {
        let err = |source: io::Error| Error::ReadArchive {
            path: path.to_owned(),
            source,
        };
        let file = File::open(path).map_err(err)?;
        let mut records = Vec::new();
        let (_, ours) = walk(&file, |r| records.push(r)).map_err(err)?;
        if !ours {
            let why = if crate::tee::decompress::Compression::of(&file)
                .map_err(err)?
                .is_some()
            {
                "compressed as a whole (by logrotate's compress?), so its frames cannot be \
                 found: decompress it first (gunzip, zstd -d), and leave archives out of \
                 logrotate's compress"
            } else {
                "not a smart-tee archive (no index entry at its start)"
            };
            return Err(err(io::Error::other(why)));
        }
        let zstd = zstd::bulk::Decompressor::new().map_err(err)?;
        Ok(Archive {
            path: path.to_owned(),
            file,
            records,
            zstd,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// The decompressed frame of record `i`.
    fn frame(&mut self, i: usize) -> io::Result<Vec<u8>> {
        let r = &self.records[i];
        let mut data = vec![0u8; r.entry.csize as usize];
        self.file.read_exact_at(&mut data, r.at)?;
        let out = self.zstd.decompress(&data, r.entry.dsize as usize)?;
        if out.len() as u64 != r.entry.dsize {
            return Err(io::Error::other(format!(
                "frame at byte {} holds {} bytes, its entry says {}",
                r.at,
                out.len(),
                r.entry.dsize
            )));
        }
        Ok(out)
    }

    /// Finds the original of line `n` (from 1) of `log`. The error is a sentence for the user.
    pub fn locate(&mut self, log: &Path, n: u64) -> Result<Located, String> {
        let archive = self.path.display().to_string();
        if n == 0 {
            return Err("line numbers start at 1".into());
        }
        let covers = |r: &Record| {
            let e = &r.entry;
            e.logged > 0 && e.log_first <= n && n < e.log_first + u64::from(e.logged)
        };
        let candidates: Vec<usize> = (0..self.records.len())
            .rev()
            .filter(|&i| covers(&self.records[i]))
            .collect();
        if candidates.is_empty() {
            let logged = self.records.iter().filter(|r| r.entry.logged > 0);
            let first = logged.clone().map(|r| r.entry.log_first).min();
            let last = logged
                .map(|r| r.entry.log_first + u64::from(r.entry.logged) - 1)
                .max();
            return Err(match first.zip(last) {
                None => format!("archive {archive} holds no logged line"),
                Some((first, last)) => format!(
                    "line {n} of {} has no original in archive {archive} (its frames cover log \
                     lines {first} to {last}: a line written before the archive started or \
                     after it stopped, or by another writer, has none)",
                    log.display()
                ),
            });
        }
        let mut short = None;
        for &i in &candidates {
            let e = &self.records[i].entry;
            let line_hash = if e.v1 { line_hash_v1 } else { line_hash };
            let hash = log_hash(log, e.log_first, e.logged, line_hash)
                .map_err(|err| format!("reading log {}: {err}", log.display()))?;
            match hash {
                Some(h) if h == e.hash => {
                    return self
                        .locate_in(i, n)
                        .map_err(|err| format!("reading archive {archive}: {err}"));
                }
                Some(_) => {}
                None => short = Some(e.log_first + u64::from(e.logged) - 1),
            }
        }
        let log = log.display();
        Err(match short {
            Some(last) if candidates.len() == 1 => format!(
                "log {log} ends before line {last}, but archive {archive} has line {n} in a \
                 frame that numbers log lines up to {last}: the archive numbers the lines of the \
                 first log of the run that wrote it, and this log is another one (appended to \
                 from another length) or was cut back since; read the original through that \
                 first log. No original is shown rather than a wrong one"
            ),
            _ => format!(
                "log {log} at line {n} is not the line archive {archive} recorded there: the \
                 archive numbers the lines of the first log of the run that wrote it, and this \
                 log is another one (appended to from another length), or was rewritten or \
                 shared with another writer since; read the original through that first log. \
                 No original is shown rather than a wrong one"
            ),
        })
    }

    /// Finds logged line `n` in record `i`, which holds its end.
    fn locate_in(&mut self, i: usize, n: u64) -> io::Result<Located> {
        let damaged = |what: &str| io::Error::other(format!("damaged archive: {what}"));
        let e = self.records[i].entry.clone();
        // The k-th logged line end of the frame, counting blank ones too.
        let mut k = n - e.log_first;
        let mut j = 0u32;
        let mut blanks = e.blanks.iter().peekable();
        loop {
            if blanks.peek() == Some(&&j) {
                blanks.next();
            } else if k == 0 {
                break;
            } else {
                k -= 1;
            }
            j += 1;
            if j >= e.ends {
                return Err(damaged("fewer line ends than the entry counts"));
            }
        }
        let data = self.frame(i)?;
        let newlines: Vec<usize> = memchr::memchr_iter(b'\n', &data).collect();
        let ends = newlines.len() as u32 + u32::from(e.flags & EOF_END != 0);
        if ends != e.ends {
            return Err(damaged("line ends differ from the entry's count"));
        }
        let end = newlines.get(j as usize).map_or(data.len(), |&p| p) as u64;
        if j > 0 {
            let start = newlines[j as usize - 1] as u64 + 1;
            return Ok(Located {
                start: (i, start),
                end: (i, end),
                len: end - start,
            });
        }
        if e.flags & CONTINUES == 0 {
            return Ok(Located {
                start: (i, 0),
                end: (i, end),
                len: end,
            });
        }
        // The line began in an earlier frame: the last one with a line end, or the first of
        // the run of frames it fills.
        let mut len = end;
        let mut s = i;
        loop {
            if s == 0 {
                return Err(io::Error::other(
                    "the line began before this archive's first frame (it was being written \
                     when the archive was rotated); only its end is here",
                ));
            }
            s -= 1;
            let prev = self.records[s].entry.clone();
            if prev.flags & OPEN_END == 0 {
                return Err(damaged("a frame continues a line no frame left open"));
            }
            if prev.ends > 0 || prev.flags & CONTINUES == 0 {
                let start = if prev.ends > 0 {
                    let data = self.frame(s)?;
                    memchr::memrchr(b'\n', &data).map_or(0, |p| p as u64 + 1)
                } else {
                    0
                };
                len += prev.dsize - start;
                return Ok(Located {
                    start: (s, start),
                    end: (i, end),
                    len,
                });
            }
            len += prev.dsize;
        }
    }

    /// Writes bytes `offset..offset + limit` of the located line to `out`; returns how many.
    /// Frames wholly before the page are skipped without being read.
    pub fn read(
        &mut self,
        loc: Located,
        offset: u64,
        limit: u64,
        out: &mut dyn Write,
    ) -> io::Result<u64> {
        let (from, to) = (
            offset.min(loc.len),
            offset.saturating_add(limit).min(loc.len),
        );
        let mut pos = 0u64; // of the line, at the start of the current record's part
        let mut written = 0;
        for i in loc.start.0..=loc.end.0 {
            let a = if i == loc.start.0 { loc.start.1 } else { 0 };
            let b = if i == loc.end.0 {
                loc.end.1
            } else {
                self.records[i].entry.dsize
            };
            let part = b - a;
            if pos + part > from && pos < to {
                let data = self.frame(i)?;
                let lo = (a + from.saturating_sub(pos)) as usize;
                let hi = (a + (to - pos).min(part)) as usize;
                out.write_all(&data[lo..hi])?;
                written += (hi - lo) as u64;
            }
            pos += part;
            if pos >= to {
                break;
            }
        }
        Ok(written)
    }
}

/// The folded `line_hash` of log lines `first..first + count` (from 1), or `None` when the log
/// has fewer lines. Lines are read one at a time; a line is held whole (log lines are within
/// their budget, or at most the engine's line cap).
fn log_hash(
    log: &Path,
    first: u64,
    count: u32,
    line_hash: fn(&[u8]) -> u64,
) -> io::Result<Option<u64>> {
    let mut f = io::BufReader::with_capacity(256 * 1024, open_log(log)?);
    let mut line = Vec::new();
    let mut n = 1u64;
    let mut hash = 0u64;
    let last = first + u64::from(count) - 1;
    while n <= last {
        line.clear();
        if n < first {
            // Skip the line without keeping it.
            if !skip_line(&mut f)? {
                return Ok(None);
            }
            n += 1;
            continue;
        }
        let read = io::BufRead::read_until(&mut f, b'\n', &mut line)?;
        if read == 0 || line.last() != Some(&b'\n') {
            return Ok(None);
        }
        hash = fold(hash, line_hash(&line[..line.len() - 1]));
        n += 1;
    }
    Ok(Some(hash))
}

/// A log's bytes, decompressed when it was gzip- or zstd-compressed since it was written
/// (logrotate's compress), by the decoder every reader uses.
fn open_log(log: &Path) -> io::Result<Box<dyn io::Read>> {
    Ok(crate::tee::decompress::open(File::open(log)?)?)
}

/// Reads past the next newline; false at end of file first.
fn skip_line(f: &mut impl io::BufRead) -> io::Result<bool> {
    loop {
        let buf = f.fill_buf()?;
        if buf.is_empty() {
            return Ok(false);
        }
        match memchr::memchr(b'\n', buf) {
            Some(p) => {
                f.consume(p + 1);
                return Ok(true);
            }
            None => {
                let n = buf.len();
                f.consume(n);
            }
        }
    }
}
