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
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::{Backlog, Entry, PACE};
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
    /// until now.
    Reopen,
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
        let (compressed, frame) = match msg {
            ToCompressor::Frame(frame) => {
                shared.backlog.frames.fetch_sub(1, Ordering::Relaxed);
                let rung = step(pace, shared.backlog.behind());
                if rung != pace && zstd.set_compression_level(PACE[rung]).is_ok() {
                    pace = rung;
                }
                let done = compress(&mut zstd, frame.entry.clone(), &frame.bytes, &mut out);
                (Some(done), Some(frame.bytes))
            }
            ToCompressor::End(next_log) => {
                let entry = Entry {
                    log_first: next_log,
                    ..Entry::default()
                };
                (Some(compress(&mut zstd, entry, &[], &mut out)), None)
            }
            ToCompressor::Reopen => (None, None),
        };
        let mut o = lock(&shared.output);
        while o.turn != seq {
            o = shared.turn.wait(o).unwrap_or_else(|p| p.into_inner());
        }
        match (compressed, &frame) {
            (Some(done), Some(_)) => o.write(done, &out),
            // An empty input: one empty frame, so that `zstd -dc` reads an empty stream
            // rather than refusing an empty file.
            (Some(done), None) if o.len == 0 => o.write(done, &out),
            (Some(_), None) => {}
            (None, _) => o.reopen(),
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
        match file.write_all(record) {
            Ok(()) => self.len += record.len() as u64,
            Err(source) => {
                // Cut the torn record off: every record in the file stays whole.
                let _ = file.set_len(self.len);
                self.fail(source);
            }
        }
    }

    fn fail(&mut self, source: io::Error) {
        self.file = None;
        if let Ok(mut e) = self.errors.lock() {
            e.push(Error::WriteArchive {
                path: self.path.clone(),
                source,
            });
        }
    }

    /// SIGUSR1: the archive is opened again by its path.
    fn reopen(&mut self) {
        // Our own lock must go before the path is locked again (it may be the same file).
        self.file = None;
        match open(&self.path, true, self.mode) {
            Ok((file, len)) => {
                self.file = Some(file);
                self.len = len;
            }
            Err(e) => {
                if let Ok(mut errors) = self.errors.lock() {
                    errors.push(e);
                }
            }
        }
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
