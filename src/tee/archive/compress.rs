//! The compression threads: each compresses a frame [`super::frames`] hands over, then, in
//! the order the frames were closed, writes its record (entry and frame) with one write and
//! gives the frame's buffer back. Frames are independent, so two threads compress two at once.
//!
//! Crash consistency: a record is written whole or, after a failed write, cut back off the
//! file; a kill can still tear the last record, and the next run with `-a` cuts it off when it
//! opens the archive (readers ignore it meanwhile). One writer at a time holds an archive (an
//! exclusive `flock`); a second one is refused and writes none.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Cursor, Write};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::{Backlog, CONTINUES, Entry, OPEN_END, PACE};
use crate::error::Error;

/// A closed frame: its input bytes and its entry (sizes filled in here).
pub struct Frame {
    pub bytes: Vec<u8>,
    pub entry: Entry,
}

/// What the log thread sends the compression threads, in order.
pub enum ToCompressor {
    Frame(Frame),
    /// Open the archive again by its path (SIGUSR1): the frames before go to the one open
    /// until now, except those of a line still open, which move to the new one (see
    /// [`Output::reopen`]); the log line number the next logged line gets.
    Reopen(u64),
    /// End of input; the log line number the next logged line would have got.
    End(u64),
}

/// A message and its place in the order.
pub type Numbered = (u64, ToCompressor);

/// The archive file, as the compression threads share it: written in turn.
pub struct Output {
    pub path: PathBuf,
    pub mode: u32,
    /// `None` once a write failed (until a reopen).
    pub file: Option<File>,
    /// Where the archive's last whole record ends (its length, as the only writer).
    pub len: u64,
    /// The number of the next message to be written.
    pub turn: u64,
    pub errors: Arc<Mutex<Vec<Error>>>,
    /// Where the records of the line still open at the file's end start (the line began in a
    /// frame of its own and goes on past it: [`super::frames::FrameBuilder::begin_long_line`]).
    pub open_line: Option<u64>,
}

/// What the compression threads share: the messages, the file and whose turn it is.
pub struct Shared {
    pub rx: Mutex<Receiver<Numbered>>,
    pub output: Mutex<Output>,
    pub turn: Condvar,
    pub free: Mutex<Sender<Vec<u8>>>,
    /// How far the stream is from being held back, for the pace.
    pub backlog: Arc<Backlog>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One compression thread: takes the next message, compresses, waits for its turn, writes.
pub fn run(shared: &Shared, mut zstd: zstd::bulk::Compressor<'static>) {
    let mut out = Vec::new();
    // The rung of [`PACE`] this thread compresses at.
    let mut pace = 0;
    loop {
        let Ok((seq, msg)) = lock(&shared.rx).recv() else {
            return;
        };
        let (compressed, frame): (io::Result<()>, _) = match msg {
            ToCompressor::Frame(frame) => {
                shared.backlog.frames.fetch_sub(1, Ordering::Relaxed);
                let rung = step(pace, shared.backlog.behind());
                if rung != pace && zstd.set_compression_level(PACE[rung]).is_ok() {
                    pace = rung;
                }
                let done = compress(&mut zstd, frame.entry.clone(), &frame.bytes, &mut out);
                (done, Some(frame.bytes))
            }
            ToCompressor::End(next_log) => {
                let entry = Entry {
                    log_first: next_log,
                    ..Entry::default()
                };
                (compress(&mut zstd, entry, &[], &mut out), None)
            }
            ToCompressor::Reopen(next_log) => {
                let mut o = lock(&shared.output);
                while o.turn != seq {
                    o = shared.turn.wait(o).unwrap_or_else(|p| p.into_inner());
                }
                o.reopen(next_log);
                o.turn += 1;
                drop(o);
                shared.turn.notify_all();
                continue;
            }
        };
        let mut o = lock(&shared.output);
        while o.turn != seq {
            o = shared.turn.wait(o).unwrap_or_else(|p| p.into_inner());
        }
        match (compressed, &frame) {
            (done, Some(_)) => o.write(done, &out),
            // An empty input: one empty frame, so that `zstd -dc` reads an empty stream
            // rather than refusing an empty file.
            (done, None) if o.len == 0 => o.write(done, &out),
            (_, None) => {}
        }
        o.turn += 1;
        drop(o);
        shared.turn.notify_all();
        if let Some(bytes) = frame {
            let _ = lock(&shared.free).send(bytes);
        }
    }
}

/// The rung of [`PACE`] after `rung`: one faster while the stream is about to be held back,
/// one slower (back towards [`super::LEVEL`]) when it is not.
fn step(rung: usize, behind: bool) -> usize {
    if behind {
        (rung + 1).min(PACE.len() - 1)
    } else {
        rung.saturating_sub(1)
    }
}

/// Compresses `data` into `out` after its entry (a cursor writes into the spare capacity: no
/// copy of the compressed bytes).
fn compress(
    zstd: &mut zstd::bulk::Compressor<'static>,
    mut entry: Entry,
    data: &[u8],
    out: &mut Vec<u8>,
) -> io::Result<()> {
    entry.dsize = data.len() as u64;
    out.clear();
    entry.write_to(out);
    let head = out.len();
    out.reserve(zstd::zstd_safe::compress_bound(data.len()));
    let mut cursor = Cursor::new(std::mem::take(out));
    cursor.set_position(head as u64);
    let done = zstd.compress_to_buffer(data, &mut cursor);
    *out = cursor.into_inner();
    Entry::seal(out, done? as u64);
    Ok(())
}

impl Output {
    /// Writes a record compressed by [`compress`].
    fn write(&mut self, compressed: io::Result<()>, record: &[u8]) {
        if self.file.is_none() {
            return;
        }
        if let Err(source) = compressed {
            self.fail(source);
            return;
        }
        let Some(file) = self.file.as_mut() else {
            return;
        };
        // Another process may have truncated the archive (logrotate's `copytruncate`): the
        // record then lands at its new end (`O_APPEND`), and a torn one is cut back to there.
        if let Ok(m) = file.metadata()
            && m.len() < self.len
        {
            self.len = m.len();
            self.open_line = None;
        }
        match file.write_all(record) {
            Ok(()) => {
                self.follow_open_line(record);
                self.len += record.len() as u64;
            }
            Err(source) => {
                // Cut the torn record off: every record in the file stays whole.
                let _ = file.set_len(self.len);
                self.fail(source);
            }
        }
    }

    /// Notes where the line left open at the end of the file starts, from the record about to
    /// be written at `self.len` (an entry, then its frame).
    fn follow_open_line(&mut self, record: &[u8]) {
        let flags = record
            .get(12..16)
            .map_or(0, |f| u32::from_le_bytes(f.try_into().unwrap_or([0; 4])));
        let ends = record
            .get(44..48)
            .map_or(1, |f| u32::from_le_bytes(f.try_into().unwrap_or([0; 4])));
        self.open_line = if flags & OPEN_END == 0 {
            None
        } else if flags & CONTINUES == 0 {
            // A line that begins with the frame can move; one that begins after other lines
            // in it cannot (begin_long_line sees that none does).
            (ends == 0).then_some(self.len)
        } else if ends == 0 {
            self.open_line
        } else {
            None
        };
    }

    fn fail(&mut self, source: io::Error) {
        self.file = None;
        self.open_line = None;
        if let Ok(mut e) = self.errors.lock() {
            e.push(Error::WriteArchive {
                path: self.path.clone(),
                source,
            });
        }
    }

    /// SIGUSR1: the archive is opened again by its path (the same file when it was not
    /// renamed: then it is written on). A line still open moves with the rotation: its
    /// records, the whole line so far, are copied to the new archive (their entries numbered
    /// from `next_log`, the new log's) and then cut off the old one, so that each archive
    /// holds the lines of its log, and the line is read whole from the new one.
    fn reopen(&mut self, next_log: u64) {
        let old = self.file.take();
        if let Some(f) = &old
            && same_file(&self.path, f)
        {
            self.file = old;
            return;
        }
        // Our own lock must go before the path is locked again (when it is the same file, a
        // failed archive's).
        let moving = old.zip(self.open_line.take());
        match open(&self.path, true, self.mode) {
            Ok((file, len)) => {
                self.file = Some(file);
                self.len = len;
            }
            Err(e) => {
                self.say(e);
                return;
            }
        }
        if let Some((old, from)) = moving {
            self.move_open_line(&old, from, next_log);
        }
    }

    /// Copies the records of `old` from `from` to its end (the open line's) to the new
    /// archive, then cuts them off `old`. A record is written whole, with its entry numbered
    /// from `next_log`; after a failed read or write, `old` is left as it was (the line's
    /// start stays there, and the new archive's first frame says it continues).
    fn move_open_line(&mut self, old: &File, from: u64, next_log: u64) {
        let start = self.len;
        let mut moved = || -> io::Result<bool> {
            let end = old.metadata()?.len();
            let mut at = from;
            let mut record = Vec::new();
            while at < end {
                let mut header = [0u8; 8];
                old.read_exact_at(&mut header, at)?;
                let Some(plen) = Entry::payload_len(&header) else {
                    return Ok(false);
                };
                let mut payload = vec![0u8; plen];
                old.read_exact_at(&mut payload, at + 8)?;
                let Some(mut entry) = Entry::parse(&payload) else {
                    return Ok(false);
                };
                entry.log_first = next_log;
                record.clear();
                entry.write_to(&mut record);
                Entry::seal(&mut record, entry.csize);
                let head = record.len();
                record.resize(head + entry.csize as usize, 0);
                old.read_exact_at(&mut record[head..], at + 8 + plen as u64)?;
                self.write(Ok(()), &record);
                if self.file.is_none() {
                    return Ok(false);
                }
                at += 8 + plen as u64 + entry.csize;
            }
            old.set_len(from)?;
            if from == 0 {
                // The old archive held nothing but the line: one empty frame, as for an empty
                // input, so that `zstd -dc` reads it.
                let mut zstd = zstd::bulk::Compressor::new(super::LEVEL)?;
                zstd.include_checksum(true)?;
                zstd.include_contentsize(true)?;
                compress(
                    &mut zstd,
                    Entry {
                        log_first: next_log,
                        ..Entry::default()
                    },
                    &[],
                    &mut record,
                )?;
                (&*old).write_all(&record)?;
            }
            Ok(true)
        };
        let moved = moved();
        if let Err(source) = &moved {
            self.say(Error::WriteArchive {
                path: self.path.clone(),
                source: io::Error::new(
                    source.kind(),
                    format!("moving the line in progress to the rotated-to archive: {source}"),
                ),
            });
        }
        if !matches!(moved, Ok(true))
            && let Some(file) = &self.file
        {
            // Part of the line would read as all of it: the new archive goes back to before
            // the move, and its first frame says the line began earlier.
            if file.set_len(start).is_ok() {
                self.len = start;
            }
        }
    }

    fn say(&mut self, e: Error) {
        if let Ok(mut errors) = self.errors.lock() {
            errors.push(e);
        }
    }
}

/// Whether `path` names the file `file` is.
fn same_file(path: &Path, file: &File) -> bool {
    match (std::fs::metadata(path), file.metadata()) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Opens an archive for writing: emptied, or (`append`) with a torn last record cut off. Takes
/// the writer's exclusive lock. Returns the file and its length.
pub fn open(path: &Path, append: bool, mode: u32) -> Result<(File, u64), Error> {
    let err = |source: io::Error| Error::OpenArchive {
        path: path.to_owned(),
        source,
    };
    #[allow(
        clippy::disallowed_methods,
        reason = "a door (docs/redaction.md): the archive, redacted by ArchiveFeed's redactor"
    )]
    let file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .mode(mode)
        .open(path)
        .map_err(err)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            return Err(err(io::Error::other(
                "another smart-tee is writing it; this run writes no archive",
            )));
        }
        Err(TryLockError::Error(e)) => return Err(err(e)),
    }
    if !file.metadata().map_err(err)?.is_file() {
        return Err(err(io::Error::other("not a regular file")));
    }
    let len = if append {
        let (whole, ours) = super::reader::whole_len(&file).map_err(err)?;
        if !ours {
            return Err(err(io::Error::other(
                "it is not a smart-tee archive; not appending to it",
            )));
        }
        let len = file.metadata().map_err(err)?.len();
        if whole < len {
            if !super::reader::torn_tail(&file, whole, len).map_err(err)? {
                return Err(err(io::Error::other(format!(
                    "bytes {whole} to {len} are not whole records, and more than a torn last \
                     record (damaged, or written by a later version); not appending to it"
                ))));
            }
            file.set_len(whole).map_err(err)?;
        }
        whole
    } else {
        file.set_len(0).map_err(err)?;
        0
    };
    Ok((file, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pace_level_compresses_and_the_steps_stay_on_the_ladder() {
        let data: Vec<u8> = (0..200_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let mut zstd = zstd::bulk::Compressor::new(PACE[0]).unwrap();
        let mut out = Vec::new();
        for level in PACE {
            zstd.set_compression_level(level).unwrap();
            compress(&mut zstd, Entry::default(), &data, &mut out).unwrap();
            let frame = &out[8 + super::super::ENTRY_FIXED + super::super::ENTRY_CHECK..];
            assert_eq!(zstd::bulk::decompress(frame, data.len()).unwrap(), data);
        }
        let mut rung = 0;
        for _ in 0..10 {
            rung = step(rung, true);
        }
        assert_eq!(rung, PACE.len() - 1);
        assert_eq!(step(rung, false), PACE.len() - 2);
        assert_eq!(step(0, false), 0);
    }
}
