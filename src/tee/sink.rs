//! Log files: opening them as tee does, writing whole batches of lines, and keeping them whole
//! across kills, full disks, rotation and compaction.
//!
//! - Every writer holds a shared advisory lock (`flock`) on its log for its lifetime; `--compact`
//!   takes the exclusive lock, so it never rewrites a log that is being written, and a writer
//!   that waited for a compaction reopens the file it renamed into place.
//! - A log whose last line has no newline is repaired when it is opened with `-a` (or reopened)
//!   and no other writer holds it, without losing a byte ([`repair_tail`]): a complete JSON line
//!   gets its newline, a torn one becomes a `torn` record. A log that another smart-tee holds is
//!   appended to even without `-a`, never truncated under it. Every
//!   write to a regular file looks at its end first, in turn with the other smart-tee writers
//!   (a POSIX record lock held for the look and the write), and ends a torn line with a newline
//!   in the same write: nothing is glued onto a torn line, whoever tore it and whenever.
//! - After a failed or short write, a sole writer cuts the log back to its last whole line.
//! - [`LogSink::reopen`] opens the path again (SIGUSR1, after logrotate renamed the file).
//!
//! Logs are always opened with `O_APPEND`: every write lands at the end whatever else truncated
//! or appended meanwhile, and one write of whole lines is never interleaved with another
//! writer's.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, IoSlice, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::fs::FlockOperation;

use crate::error::Error;

/// The permission bits of a log file smart-tee creates: agent logs hold source code, prompts
/// and sometimes secrets. An existing file keeps its own.
pub const DEFAULT_MODE: u32 = 0o600;

/// How long opening a log waits for a compaction of it to finish before writing without the
/// lock (and saying so).
const LOCK_WAIT: Duration = Duration::from_secs(10);

enum Target {
    File(File),
    /// Any writer (tests, fuzzing): no locks, no repairs.
    Other(Box<dyn Write + Send>),
}

/// One log destination. After a failed write it is dropped from the stream until it is
/// reopened.
pub struct LogSink {
    path: PathBuf,
    target: Target,
    mode: u32,
    /// A regular file that smart-tee can read too: its tail can be checked and repaired.
    repairable: bool,
    failed: bool,
    /// The length the file has at least, as this writer last saw it and then wrote to it; a
    /// shorter file was truncated by another process ([`LogSink::was_truncated`]).
    least_len: u64,
    /// A write found the file shorter than `least_len`.
    truncated: bool,
}

impl LogSink {
    /// Opens `path` for writing, truncating it or (`append`) appending to it, creating it with
    /// `mode` if missing, and takes the writers' shared lock. Like tee: a symlink is followed,
    /// a FIFO is opened for writing (which waits for a reader).
    pub fn open(path: &Path, append: bool, mode: u32) -> Result<LogSink, Error> {
        let mut sink = LogSink {
            path: path.to_owned(),
            target: Target::Other(Box::new(io::sink())),
            mode,
            repairable: false,
            failed: false,
            least_len: 0,
            truncated: false,
        };
        sink.open_target(!append).map_err(|source| Error::OpenLog {
            path: path.to_owned(),
            source,
        })?;
        Ok(sink)
    }

    /// A sink over any writer; `path` names it in messages.
    pub fn new(path: &Path, writer: Box<dyn Write + Send>) -> LogSink {
        LogSink {
            path: path.to_owned(),
            target: Target::Other(writer),
            mode: DEFAULT_MODE,
            repairable: false,
            failed: false,
            least_len: 0,
            truncated: false,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The regular file this sink writes (its device and inode), if it writes one.
    pub fn file_id(&self) -> Option<(u64, u64)> {
        match &self.target {
            Target::File(f) => f
                .metadata()
                .ok()
                .filter(|m| m.is_file())
                .map(|m| (m.dev(), m.ino())),
            Target::Other(_) => None,
        }
    }

    pub fn is_failed(&self) -> bool {
        self.failed
    }

    /// Opens the path again, appending (after logrotate renamed the file, this creates a new
    /// one), and clears a failure. A sink over a plain writer is left as it is.
    pub fn reopen(&mut self) -> Result<(), Error> {
        if let Target::Other(_) = self.target {
            return Ok(());
        }
        self.open_target(false).map_err(|source| {
            self.failed = true;
            Error::OpenLog {
                path: self.path.clone(),
                source,
            }
        })?;
        self.failed = false;
        Ok(())
    }

    /// Opens `self.path` into `self.target`, locked and with a whole last line.
    fn open_target(&mut self, truncate: bool) -> io::Result<()> {
        // A compaction may rename a new file over the path while we wait for its lock: then
        // the file we hold is stale, and the path is opened again.
        for attempt in 0..8 {
            // A FIFO or a device is opened for writing only, as tee does (reading a FIFO too
            // would not wait for its reader).
            let special = std::fs::metadata(&self.path).is_ok_and(|m| !m.is_file());
            let (file, readable) = match open_file(&self.path, self.mode, !special) {
                Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                    (open_file(&self.path, self.mode, false)?, false)
                }
                other => (other?, !special),
            };
            if !file.metadata()?.is_file() {
                self.set(file, false);
                return Ok(());
            }
            let sole = file.try_lock().is_ok();
            if sole {
                if truncate {
                    empty(&file)?;
                } else if readable && let Some(said) = repair_tail(&file)? {
                    crate::say!("smart-tee: log {:?}: {said}", self.path);
                }
            }
            // Held by other writers only (shared locks), not by a compaction.
            let writers = !sole && file.try_lock_shared().is_ok();
            let locked = writers
                || sole && file.lock_shared().is_ok()
                || lock_shared_within(&file, LOCK_WAIT);
            if !locked {
                crate::say!(
                    "smart-tee: log {:?}: still locked by another process (a --compact?) after \
                     {} s; writing without the lock",
                    self.path,
                    LOCK_WAIT.as_secs()
                );
            }
            if locked && (!sole && !writers && attempt < 7 || !same_file(&self.path, &file)) {
                // Waited for a compaction, which may have replaced the file: look again.
                continue;
            }
            if writers && truncate {
                // Truncating would destroy the lines a running smart-tee wrote and writes.
                crate::say!(
                    "smart-tee: log {:?}: another smart-tee is writing it; appending instead of \
                     truncating",
                    self.path
                );
            } else if !sole && truncate {
                // As tee does, when the file system has no locks to tell.
                empty(&file)?;
            }
            self.set(file, readable);
            return Ok(());
        }
        Err(io::Error::other(
            "the file kept being replaced while it was opened",
        ))
    }

    fn set(&mut self, file: File, readable: bool) {
        let meta = file.metadata().ok().filter(|m| m.is_file());
        self.target = Target::File(file);
        self.repairable = meta.is_some() && readable;
        self.least_len = meta.map_or(0, |m| m.len());
        self.truncated = false;
    }

    /// Whether another process truncated the log since this writer last looked (logrotate's
    /// `copytruncate`, `: > LOG`): it is shorter than this writer left it. Told once per
    /// truncation; always false for a file smart-tee cannot read, a FIFO or a device.
    pub fn was_truncated(&mut self) -> bool {
        let Target::File(f) = &self.target else {
            return false;
        };
        if !self.repairable || self.failed {
            return false;
        }
        let Ok(len) = f.metadata().map(|m| m.len()) else {
            return false;
        };
        let truncated = self.truncated || len < self.least_len;
        self.truncated = false;
        self.least_len = len;
        truncated
    }

    /// Writes whole lines with one `write_all`; on failure the sink is marked failed and, when
    /// no other writer holds the file, the file is cut back to its last whole line.
    pub fn write_lines(&mut self, lines: &[u8]) -> Result<(), Error> {
        if self.failed || lines.is_empty() {
            return Ok(());
        }
        let result = match &mut self.target {
            Target::File(f) if self.repairable => {
                write_on_a_fresh_line(f, lines).map(|seen| {
                    // The length before the write, when the writers' turn was taken.
                    if let Some(before) = seen {
                        self.truncated |= before < self.least_len;
                        self.least_len = before + lines.len() as u64;
                    }
                })
            }
            Target::File(f) => crate::tee::fd::write_all(f.as_fd(), lines),
            Target::Other(w) => w.write_all(lines).and_then(|()| w.flush()),
        };
        result.map_err(|source| {
            self.failed = true;
            self.repair_after_failure();
            Error::WriteLog {
                path: self.path.clone(),
                source,
            }
        })
    }

    /// After a failed write part of a line may be in the file. The sole writer cuts it off;
    /// with other writers, the torn line is ended with a newline if the disk takes one.
    fn repair_after_failure(&mut self) {
        let Target::File(f) = &self.target else {
            return;
        };
        if !self.repairable {
            return;
        }
        // Converting the shared lock may drop it when another writer holds one: take it back.
        if f.try_lock().is_ok() {
            let _ = cut_to_last_newline(f);
            let _ = f.lock_shared();
        } else {
            let _ = f.lock_shared();
            // Nothing but the newline, in turn with the other writers, as every write is.
            let _ = write_on_a_fresh_line(f, b"");
        }
    }
}

/// Truncates a log to nothing, as tee's `O_TRUNC` does. A file that is empty already (one just
/// created) is only touched: truncating it changes nothing but its times, and on ext4 it arms
/// the flush at close of a file rewritten in place (`auto_da_alloc`), which the kernel then
/// runs in the closing process: 0.09 s more at exit after writing 287 MB. `O_TRUNC` skips files
/// it creates too.
///
/// The touch sets both times to now (the access time too, unlike `O_TRUNC`): that is the one
/// change of times that write access allows, where any other needs the file's owner, and a
/// shared log is often someone else's. A file system that refuses it costs only the new times.
fn empty(file: &File) -> io::Result<()> {
    if file.metadata()?.len() > 0 {
        return file.set_len(0);
    }
    let now = rustix::fs::Timespec {
        tv_sec: 0,
        tv_nsec: rustix::fs::UTIME_NOW,
    };
    let times = rustix::fs::Timestamps {
        last_access: now,
        last_modification: now,
    };
    let _ = rustix::fs::futimens(file, &times);
    Ok(())
}

#[allow(
    clippy::disallowed_methods,
    reason = "a door (docs/redaction.md): the log, every record made by the redacting engine"
)]
fn open_file(path: &Path, mode: u32, read: bool) -> io::Result<File> {
    OpenOptions::new()
        .read(read)
        .append(true)
        .create(true)
        .mode(mode)
        .open(path)
}

/// Waits up to `wait` for the shared lock (held off only by a compaction's exclusive one).
fn lock_shared_within(file: &File, wait: Duration) -> bool {
    let deadline = Instant::now() + wait;
    loop {
        match file.try_lock_shared() {
            Ok(()) => return true,
            Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            // No locks on this file system, or waited long enough.
            Err(_) => return false,
        }
    }
}

/// True when `path` still names the file `file` is open on.
fn same_file(path: &Path, file: &File) -> bool {
    match (std::fs::metadata(path), file.metadata()) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// True when the file is not empty and its last byte is not a newline.
pub fn ends_mid_line(file: &File) -> io::Result<bool> {
    end_of(file).map(|(_, mid)| mid)
}

/// The file's length, and whether it ends inside a line ([`ends_mid_line`]).
fn end_of(file: &File) -> io::Result<(u64, bool)> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok((0, false));
    }
    let mut last = [0u8];
    file.read_exact_at(&mut last, len - 1)?;
    Ok((len, last[0] != b'\n'))
}

/// Appends `lines` to a log that other writers may share, on a fresh line: if the file ends
/// inside a line (a writer was killed mid-write), a newline ends that line first, in the same
/// write. smart-tee writers take turns at this (a POSIX record lock on the file, held for the
/// look and the write), so one never takes another's write in progress for a torn line; when
/// the turn does not come within [`TURN_WAIT`] (a process holds a lock on the log for long, or
/// the file system has no locks), the lines are written as they are.
fn write_on_a_fresh_line(f: &File, lines: &[u8]) -> io::Result<Option<u64>> {
    if !take_turn(f) {
        return crate::tee::fd::write_all(f.as_fd(), lines).map(|()| None);
    }
    let (result, seen) = match end_of(f) {
        Ok((len, true)) => (write_after(f, b"\n", lines), Some(len)),
        Ok((len, false)) => (crate::tee::fd::write_all(f.as_fd(), lines), Some(len)),
        Err(_) => (crate::tee::fd::write_all(f.as_fd(), lines), None),
    };
    let _ = rustix::fs::fcntl_lock(f, FlockOperation::Unlock);
    result.map(|()| seen)
}

/// How long a write waits for its turn (see [`write_on_a_fresh_line`]).
const TURN_WAIT: Duration = Duration::from_millis(200);

/// Takes the writers' turn on `f` (a POSIX write lock on the whole file), waiting up to
/// [`TURN_WAIT`]; whether it did.
fn take_turn(f: &File) -> bool {
    let deadline = Instant::now() + TURN_WAIT;
    loop {
        match rustix::fs::fcntl_lock(f, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return true,
            Err(rustix::io::Errno::AGAIN | rustix::io::Errno::ACCESS | rustix::io::Errno::INTR)
                if Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(_) => return false,
        }
    }
}

/// Writes `first` then `rest` with one `writev`: one `O_APPEND` write, so no other writer's
/// line lands between them. A short write is finished as `write_all` would.
fn write_after(mut f: &File, first: &[u8], rest: &[u8]) -> io::Result<()> {
    let written = loop {
        match f.write_vectored(&[IoSlice::new(first), IoSlice::new(rest)]) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => break other?,
        }
    };
    match written.checked_sub(first.len()) {
        Some(n) => crate::tee::fd::write_all(f.as_fd(), &rest[n..]),
        None => crate::tee::fd::write_all(f.as_fd(), &first[written..])
            .and_then(|()| crate::tee::fd::write_all(f.as_fd(), rest)),
    }
}

/// Where the file's last whole line ends: just past its last newline (0 if it has none).
pub fn whole_lines_len(file: &File) -> io::Result<u64> {
    let mut end = file.metadata()?.len();
    let mut block = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(block.len() as u64);
        let buf = &mut block[..(end - start) as usize];
        file.read_exact_at(buf, start)?;
        if let Some(p) = memchr::memrchr(b'\n', buf) {
            return Ok(start + p as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

/// The newlines in the file's first `upto` bytes, read in blocks at their offsets (the
/// file's position is not used).
pub fn count_newlines(file: &File, upto: u64) -> io::Result<u64> {
    let mut block = vec![0u8; 1 << 20];
    let (mut at, mut n) = (0u64, 0u64);
    while at < upto {
        let want = block.len().min((upto - at) as usize);
        let got = match file.read_at(&mut block[..want], at) {
            Ok(0) => break,
            Ok(k) => k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        n += memchr::memchr_iter(b'\n', &block[..got]).count() as u64;
        at += got as u64;
    }
    Ok(n)
}

/// Cuts an unfinished last line off the file (the caller holds the exclusive lock).
pub fn cut_to_last_newline(file: &File) -> io::Result<()> {
    if ends_mid_line(file)? {
        file.set_len(whole_lines_len(file)?)?;
    }
    Ok(())
}

/// The longest last line that [`repair_tail`] reads to judge: a longer one is ended as it is.
const TAIL_CAP: u64 = 64 << 20;

/// Ends a log's unended last line without losing a byte (the caller holds the exclusive lock;
/// `-a` and a reopen call it): a last line that is complete JSON (`printf '{"b":2}'`) is kept
/// and gets its newline; one that is not (a writer stopped mid-line) is replaced by a
/// `{"type":"torn","text":…}` record holding its bytes, so that every line stays JSON. Returns
/// what it did, for stderr.
pub fn repair_tail(file: &File) -> io::Result<Option<String>> {
    if !ends_mid_line(file)? {
        return Ok(None);
    }
    let whole = whole_lines_len(file)?;
    let len = file.metadata()?.len();
    if len - whole > TAIL_CAP {
        crate::tee::fd::write_all(file.as_fd(), b"\n")?;
        return Ok(Some(format!(
            "its last line had no newline and is too long to check ({} bytes): ended with one",
            len - whole
        )));
    }
    let mut tail = vec![0u8; (len - whole) as usize];
    file.read_exact_at(&mut tail, whole)?;
    let json = tail.trim_ascii();
    if json.is_empty() || crate::line::scan::valid_depth(json, &mut Vec::new()).is_ok() {
        crate::tee::fd::write_all(file.as_fd(), b"\n")?;
        return Ok(Some(
            "its last line had no newline; it is complete JSON: kept, and ended with one".into(),
        ));
    }
    // With --redact the record leaves through the door like every other byte: the torn text is
    // redacted whole, then loses the run of bytes at its torn end (where a secret cut by the
    // tear would show a part of itself).
    let mut kept = tail.clone();
    if let Some(r) = crate::door::redactor() {
        r.excerpt(&tail, false, true, &mut kept);
    }
    let text = String::from_utf8_lossy(&kept);
    let record = serde_json::to_vec(&serde_json::json!({"type": "torn", "text": text}))
        .map_err(io::Error::other)?;
    let mut record = crate::door::bytes(&record).into_owned();
    record.push(b'\n');
    file.set_len(whole)?;
    crate::tee::fd::write_all(file.as_fd(), &record)?;
    Ok(Some(format!(
        "its last line was torn ({} bytes, not JSON: a writer stopped mid-line); kept as a \
         {{\"type\":\"torn\"}} record",
        tail.len()
    )))
}
