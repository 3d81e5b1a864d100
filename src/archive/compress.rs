//! The compression thread: compresses each frame [`super::frames`] hands over and writes its
//! record (entry and frame) with one write, then gives the frame's buffer back.
//!
//! Crash consistency: a record is written whole or, after a failed write, cut back off the
//! file; a kill can still tear the last record, and the next run with `-a` cuts it off when it
//! opens the archive (readers ignore it meanwhile). One writer at a time holds an archive (an
//! exclusive `flock`); a second one is refused and writes none.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Cursor, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};

use super::Entry;
use crate::error::Error;

/// A closed frame: its input bytes and its entry (sizes filled in here).
pub struct Frame {
    pub bytes: Vec<u8>,
    pub entry: Entry,
}

/// What the log thread sends the compression thread, in order.
pub enum ToCompressor {
    Frame(Frame),
    /// Open the archive again by its path (SIGUSR1): the frames before go to the one open
    /// until now.
    Reopen,
    /// End of input; the log line number the next logged line would have got.
    End(u64),
}

/// The compression thread's state.
pub struct Compressor {
    pub path: PathBuf,
    pub mode: u32,
    /// `None` once a write failed (until a reopen).
    pub file: Option<File>,
    /// Where the archive's last whole record ends (its length, as the only writer).
    pub len: u64,
    pub zstd: zstd::bulk::Compressor<'static>,
    /// The record being written: the entry, then the compressed frame.
    pub out: Vec<u8>,
    pub errors: Arc<Mutex<Vec<Error>>>,
}

impl Compressor {
    pub fn run(mut self, rx: Receiver<ToCompressor>, free: Sender<Vec<u8>>) {
        let mut next_log = None;
        for msg in rx {
            match msg {
                ToCompressor::Frame(frame) => {
                    self.write(frame.entry, &frame.bytes);
                    let _ = free.send(frame.bytes);
                }
                ToCompressor::Reopen => self.reopen(),
                ToCompressor::End(next) => next_log = Some(next),
            }
        }
        if let Some(next) = next_log
            && self.len == 0
        {
            // An empty input: one empty frame, so that `zstd -dc` reads an empty stream
            // rather than refusing an empty file.
            let entry = Entry {
                log_first: next,
                ..Entry::default()
            };
            self.write(entry, &[]);
        }
    }

    /// Compresses `data` and writes its record.
    fn write(&mut self, mut entry: Entry, data: &[u8]) {
        if self.file.is_none() {
            return;
        }
        entry.dsize = data.len() as u64;
        self.out.clear();
        entry.write_to(&mut self.out);
        let head = self.out.len();
        self.out
            .reserve(zstd::zstd_safe::compress_bound(data.len()));
        // The frame is compressed straight after the entry (a cursor writes into the spare
        // capacity): no copy of the compressed bytes.
        let mut out = Cursor::new(std::mem::take(&mut self.out));
        out.set_position(head as u64);
        let done = self.zstd.compress_to_buffer(data, &mut out);
        self.out = out.into_inner();
        let csize = match done {
            Ok(n) => n,
            Err(source) => {
                self.fail(source);
                return;
            }
        };
        Entry::set_csize(&mut self.out, csize as u64);
        let Some(file) = self.file.as_mut() else {
            return;
        };
        match file.write_all(&self.out) {
            Ok(()) => self.len += self.out.len() as u64,
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
        if whole < file.metadata().map_err(err)?.len() {
            file.set_len(whole).map_err(err)?;
        }
        whole
    } else {
        file.set_len(0).map_err(err)?;
        0
    };
    Ok((file, len))
}
