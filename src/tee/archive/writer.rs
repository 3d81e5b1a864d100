//! Writing an archive: [`ArchiveFeed`] runs on the log thread and hands each line's bytes, and
//! whether it produced a log line, to a compression thread of its own, which closes frames at
//! line ends and writes each record (entry and frame) with one write.
//!
//! Crash consistency: a record is written whole or, after a failed write, cut back off the
//! file; a kill can still tear the last record, and the next run with `-a` cuts it off when it
//! opens the archive (readers ignore it meanwhile). One writer at a time holds an archive (an
//! exclusive `flock`); a second one is refused and writes none.
//!
//! Memory is bounded whatever the line length: a frame holds at most [`FRAME_MAX`] bytes, and
//! at most [`QUEUE`] batches of one read each wait for the compressor.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, SyncSender, channel, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::{
    CONTINUES, EOF_END, Entry, FRAME_MAX, FRAME_TARGET, LEVEL, MAX_BLANKS, OPEN_END, fold,
    line_hash,
};
use crate::cut::redact::Redactor;
use crate::error::Error;
use crate::tee::split::Piece;

/// Batches waiting for the compressor at most.
const QUEUE: usize = 4;
/// A frame that ends at a line end is closed after this long without input, so that a slow
/// stream's lines reach the archive file soon after they reach the log.
const IDLE: Duration = Duration::from_secs(1);

/// Where and how to write an archive.
#[derive(Clone, Debug)]
pub struct ArchiveOptions {
    pub path: PathBuf,
    pub append: bool,
    /// Permission bits of a new archive (as the logs').
    pub mode: u32,
    /// The log whose line numbers the archive records (the first log), if any.
    pub log: Option<PathBuf>,
    /// `--redact`: the archive gets the same redaction as the log.
    pub redact: bool,
    /// Frame sizes ([`FRAME_TARGET`], [`FRAME_MAX`]); tests make them tiny.
    pub frame_target: usize,
    pub frame_max: usize,
}

impl ArchiveOptions {
    /// An archive at `path`, emptied first, numbering lines from 1, with the standard frames.
    pub fn new(path: &Path) -> ArchiveOptions {
        ArchiveOptions {
            path: path.to_owned(),
            append: false,
            mode: crate::tee::sink::DEFAULT_MODE,
            log: None,
            redact: false,
            frame_target: FRAME_TARGET,
            frame_max: FRAME_MAX,
        }
    }
}

/// One line end, as the compressor sees it.
#[derive(Clone, Copy, Debug)]
struct End {
    /// Where the line ends in the batch's bytes (just past its newline).
    at: usize,
    /// The hash of the log line it produced, if any.
    log: Option<u64>,
    /// Ended by end of input, without a newline.
    eof: bool,
}

#[derive(Default)]
struct Batch {
    bytes: Vec<u8>,
    ends: Vec<End>,
}

enum ToArchive {
    Batch(Batch),
    /// Open the archive again by its path; the log now has this many lines.
    Reopen(u64),
}

/// The log thread's side of an archive.
pub struct ArchiveFeed {
    batch: Batch,
    tx: Option<SyncSender<ToArchive>>,
    free: Receiver<Batch>,
    thread: Option<JoinHandle<()>>,
    errors: Arc<Mutex<Vec<Error>>>,
    redactor: Option<Redactor>,
    redacted: Vec<u8>,
    /// `--redact` on a line past the memory cap: its bytes since the last `"`, held until the
    /// next piece so that a secret is never split between two redactions.
    held: Vec<u8>,
    log: Option<PathBuf>,
}

/// The most a line past the memory cap holds back for `--redact` (see [`ArchiveFeed::piece`]).
const HOLD_MAX: usize = 1 << 20;

impl ArchiveFeed {
    /// Opens the archive (cutting back a torn last record with `append`) and starts its
    /// compression thread.
    pub fn start(opts: ArchiveOptions) -> Result<ArchiveFeed, Error> {
        let (file, len) = open(&opts.path, opts.append, opts.mode)?;
        let base = log_lines(opts.log.as_deref());
        let compressor = zstd::bulk::Compressor::new(LEVEL)
            .and_then(|mut c| {
                c.include_checksum(true)?;
                c.include_contentsize(true)?;
                Ok(c)
            })
            .map_err(|source| Error::OpenArchive {
                path: opts.path.clone(),
                source,
            })?;
        let (tx, rx) = sync_channel(QUEUE);
        let (free_tx, free) = channel();
        let errors = Arc::new(Mutex::new(Vec::new()));
        let mut writer = FrameWriter {
            path: opts.path.clone(),
            mode: opts.mode,
            file: Some(file),
            len,
            frame: Vec::new(),
            target: opts.frame_target.max(1),
            max: opts.frame_max.max(opts.frame_target).max(1),
            flags: 0,
            entry: Entry::default(),
            next_log: base + 1,
            last_end: 0,
            zstd: compressor,
            data: Vec::new(),
            out: Vec::new(),
            errors: Arc::clone(&errors),
        };
        let thread = std::thread::Builder::new()
            .name("archive".into())
            .spawn(move || writer.run(rx, free_tx))
            .map_err(|source| Error::OpenArchive {
                path: opts.path.clone(),
                source,
            })?;
        Ok(ArchiveFeed {
            batch: Batch::default(),
            tx: Some(tx),
            free,
            thread: Some(thread),
            errors,
            redactor: opts.redact.then(Redactor::new),
            redacted: Vec::new(),
            held: Vec::new(),
            log: opts.log,
        })
    }

    /// The bytes of a piece of input, before the engine sees it. With `--redact` (the one call
    /// into `redact.rs`: [`Redactor::redact`], per line), a whole line is redacted whole; a line
    /// past the memory cap is redacted in runs that end at a `"` (which no secret pattern
    /// matches inside a JSON string), the bytes after the last one held for the next piece, up
    /// to [`HOLD_MAX`].
    #[inline]
    pub fn piece(&mut self, piece: &Piece) {
        let (bytes, last) = match piece {
            Piece::Line(b) | Piece::End(b) => (*b, true),
            Piece::Start(b) | Piece::Part(b) => (*b, false),
        };
        let Some(r) = &self.redactor else {
            self.batch.bytes.extend_from_slice(bytes);
            return;
        };
        let mut text = bytes;
        let joined;
        if !self.held.is_empty() {
            self.held.extend_from_slice(bytes);
            joined = std::mem::take(&mut self.held);
            text = &joined;
        }
        let cut = if last {
            text.len()
        } else {
            match memchr::memrchr(b'"', text) {
                Some(p) if text.len() - p - 1 <= HOLD_MAX => p + 1,
                _ if text.len() <= HOLD_MAX => 0,
                _ => text.len(),
            }
        };
        if r.redact(&text[..cut], &mut self.redacted) {
            self.batch.bytes.extend_from_slice(&self.redacted);
        } else {
            self.batch.bytes.extend_from_slice(&text[..cut]);
        }
        self.held.extend_from_slice(&text[cut..]);
    }

    /// The end of the line whose bytes came last: with its newline unless it ended at end of
    /// input, and the log line it produced, if any (newline excluded).
    #[inline]
    pub fn end(&mut self, newline: bool, logged: Option<&[u8]>) {
        if newline {
            self.batch.bytes.push(b'\n');
        }
        self.batch.ends.push(End {
            at: self.batch.bytes.len(),
            log: logged.map(line_hash),
            eof: !newline,
        });
    }

    /// Hands what was gathered to the compressor (at the end of each read).
    pub fn flush(&mut self) {
        if self.batch.bytes.is_empty() && self.batch.ends.is_empty() {
            return;
        }
        let mut next = self.free.try_recv().unwrap_or_default();
        next.bytes.clear();
        next.ends.clear();
        let batch = std::mem::replace(&mut self.batch, next);
        self.send(ToArchive::Batch(batch));
    }

    /// After the logs were opened again (SIGUSR1): the archive is too, and numbers lines from
    /// the log's count.
    pub fn reopen(&mut self) {
        self.flush();
        let base = log_lines(self.log.as_deref());
        self.send(ToArchive::Reopen(base));
    }

    fn send(&mut self, msg: ToArchive) {
        if let Some(tx) = &self.tx
            && tx.send(msg).is_err()
        {
            self.tx = None; // the thread has ended: its errors say why
        }
    }

    /// The errors the compressor met so far (each said once).
    pub fn take_errors(&mut self) -> Vec<Error> {
        match self.errors.lock() {
            Ok(mut e) if !e.is_empty() => std::mem::take(&mut *e),
            _ => Vec::new(),
        }
    }

    /// Writes the last frame and waits for the compressor. Returns its errors.
    pub fn finish(&mut self) -> Vec<Error> {
        self.flush();
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.take_errors()
    }
}

impl Drop for ArchiveFeed {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Starts the archive `config` asks for, if any, beside `log`; a failure to open it is said
/// (the stream goes on, the status will be 1).
pub fn attach(
    log: crate::LogWriter,
    config: &crate::tee::Config,
    failed: &mut bool,
) -> crate::LogWriter {
    let Some(path) = config.archive.clone() else {
        return log;
    };
    let opts = ArchiveOptions {
        append: config.append,
        mode: config.file_mode,
        log: config.files.first().cloned(),
        redact: config.engine.redact,
        ..ArchiveOptions::new(&path)
    };
    match ArchiveFeed::start(opts) {
        Ok(feed) => log.with_archive(feed),
        Err(e) => {
            eprintln!("smart-tee: {e}");
            *failed = true;
            log
        }
    }
}

/// The log's line count, as the archive numbers from it (0 without a log or when it cannot be
/// read: a wrong base is caught by the readers' hash check).
fn log_lines(log: Option<&Path>) -> u64 {
    log.and_then(|p| super::count_log_lines(p).ok())
        .unwrap_or(0)
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

/// The compression thread: gathers a frame, compresses it, writes the record.
struct FrameWriter {
    path: PathBuf,
    mode: u32,
    /// `None` once a write failed (until a reopen).
    file: Option<File>,
    /// Where the archive's last whole record ends (its length, as the only writer).
    len: u64,
    frame: Vec<u8>,
    target: usize,
    max: usize,
    /// The frame's flags so far ([`CONTINUES`]).
    flags: u32,
    /// The frame's entry so far (line ends, log lines).
    entry: Entry,
    /// The log line number the next logged line gets.
    next_log: u64,
    /// Where the frame's last line end is (0 when none).
    last_end: usize,
    zstd: zstd::bulk::Compressor<'static>,
    data: Vec<u8>,
    out: Vec<u8>,
    errors: Arc<Mutex<Vec<Error>>>,
}

impl FrameWriter {
    fn run(&mut self, rx: Receiver<ToArchive>, free: Sender<Batch>) {
        loop {
            match rx.recv_timeout(IDLE) {
                Ok(ToArchive::Batch(batch)) => {
                    self.batch(&batch);
                    let _ = free.send(batch);
                }
                Ok(ToArchive::Reopen(base)) => self.reopen(base),
                Err(RecvTimeoutError::Timeout) => self.close_at_line_end(),
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        let flags = if self.last_end < self.frame.len() {
            OPEN_END
        } else {
            0
        };
        self.close(flags);
        if self.len == 0 {
            // An empty input: one empty frame, so that `zstd -dc` reads an empty stream
            // rather than refusing an empty file.
            let entry = Entry {
                log_first: self.next_log,
                ..Entry::default()
            };
            self.write(entry);
        }
    }

    fn batch(&mut self, batch: &Batch) {
        let mut at = 0;
        for end in &batch.ends {
            self.push(&batch.bytes[at..end.at]);
            at = end.at;
            self.end(*end);
        }
        self.push(&batch.bytes[at..]);
    }

    /// Adds bytes of a line; a frame full in mid-line is closed and the line goes on in the
    /// next.
    fn push(&mut self, mut bytes: &[u8]) {
        loop {
            let room = self.max - self.frame.len();
            if bytes.len() <= room {
                self.frame.extend_from_slice(bytes);
                return;
            }
            self.frame.extend_from_slice(&bytes[..room]);
            bytes = &bytes[room..];
            self.close(OPEN_END);
        }
    }

    fn end(&mut self, end: End) {
        let index = self.entry.ends;
        self.entry.ends += 1;
        match end.log {
            Some(hash) => {
                if self.entry.logged == 0 {
                    self.entry.log_first = self.next_log;
                }
                self.entry.logged += 1;
                self.entry.hash = fold(self.entry.hash, hash);
                self.next_log += 1;
            }
            None => self.entry.blanks.push(index),
        }
        self.last_end = self.frame.len();
        if end.eof {
            self.close(EOF_END);
        } else if self.frame.len() >= self.target || self.entry.blanks.len() >= MAX_BLANKS {
            self.close(0);
        }
    }

    /// Closes the frame at its last line end (idle input, a rotation): the unfinished line
    /// that follows starts the next frame. A frame that began inside that line is left open.
    fn close_at_line_end(&mut self) {
        if self.last_end == 0 {
            return;
        }
        let rest = self.frame.split_off(self.last_end);
        self.close(0);
        self.frame = rest;
    }

    /// Compresses the frame and writes its record, then starts the next frame.
    fn close(&mut self, flags: u32) {
        let continues = self.flags & CONTINUES;
        if !self.frame.is_empty() || self.entry.ends > 0 {
            let mut entry = std::mem::take(&mut self.entry);
            entry.flags = continues | flags;
            if entry.logged == 0 {
                entry.log_first = self.next_log;
            }
            self.write(entry);
        }
        self.frame.clear();
        self.entry = Entry::default();
        self.last_end = 0;
        self.flags = if flags & OPEN_END != 0 { CONTINUES } else { 0 };
    }

    fn write(&mut self, mut entry: Entry) {
        if self.file.is_none() {
            return;
        }
        self.data.clear();
        self.data
            .reserve(zstd::zstd_safe::compress_bound(self.frame.len()));
        if let Err(source) = self.zstd.compress_to_buffer(&self.frame, &mut self.data) {
            self.fail(source);
            return;
        }
        entry.csize = self.data.len() as u64;
        entry.dsize = self.frame.len() as u64;
        self.out.clear();
        entry.write_to(&mut self.out);
        self.out.extend_from_slice(&self.data);
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
        // Memory goes back after a giant frame (never more than FRAME_MAX is held).
        self.out.truncate(0);
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

    /// SIGUSR1: the frame so far is written to the archive open until now, and the archive is
    /// opened again by its path. Lines are numbered from the log's new count.
    fn reopen(&mut self, base: u64) {
        self.close_at_line_end();
        let carried = std::mem::take(&mut self.frame);
        let continues = self.flags;
        // A line begun before the rotation and longer than the frame stays in the old archive
        // in part: the new archive's first frame says it continues.
        if continues & CONTINUES == 0 || carried.is_empty() {
            self.close(0);
        } else {
            self.close(OPEN_END);
        }
        self.flags = if carried.is_empty() { 0 } else { continues };
        // Our own lock must go before the path is locked again (it may be the same file).
        self.file = None;
        match open(&self.path, true, self.mode) {
            Ok((file, len)) => {
                self.file = Some(file);
                self.len = len;
            }
            Err(e) => {
                self.file = None;
                if let Ok(mut errors) = self.errors.lock() {
                    errors.push(e);
                }
            }
        }
        self.frame = carried;
        self.next_log = base + 1;
    }
}

/// `--compact --archive FILE`: archives the whole lines of the one log in `files`, numbered as
/// the compacted log will number them, before it is rewritten. Says what failed; false then.
pub fn archive_logs(files: &[PathBuf], path: &Path, engine: &crate::EngineConfig) -> bool {
    let [log] = files else {
        eprintln!("smart-tee: --compact --archive FILE compacts one log at a time");
        return false;
    };
    let run = || -> Result<(), Error> {
        let read_err = |source: io::Error| Error::ReadLog {
            path: log.clone(),
            source,
        };
        let file = File::open(log).map_err(read_err)?;
        let whole = crate::tee::sink::whole_lines_len(&file).map_err(read_err)?;
        let feed = ArchiveFeed::start(ArchiveOptions {
            redact: engine.redact,
            ..ArchiveOptions::new(path)
        })?;
        let mut writer = crate::LogWriter::new(crate::LineEngine::new(engine.clone()), Vec::new())
            .with_archive(feed);
        let mut input = io::Read::take(file, whole);
        let mut buf = vec![0u8; 256 * 1024];
        loop {
            let n = match io::Read::read(&mut input, &mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(read_err(e)),
            };
            if let Some(e) = writer.feed(&buf[..n]).into_iter().next() {
                return Err(e);
            }
        }
        match writer.finish().into_iter().next() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    };
    match run() {
        Ok(()) => true,
        Err(e) => {
            eprintln!(
                "smart-tee: --compact --archive: {e}; {} was not compacted",
                log.display()
            );
            false
        }
    }
}
