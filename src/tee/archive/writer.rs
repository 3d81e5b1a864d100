//! Writing an archive: [`ArchiveFeed`] runs on the log thread, redacts when asked and gathers
//! each line's bytes straight into its frame ([`super::frames`]); a compression thread of its
//! own ([`super::compress`]) compresses each closed frame and writes its record.
//!
//! Memory is bounded whatever the line length: a frame holds at most [`FRAME_MAX`] bytes, and
//! at most [`QUEUE`] closed frames wait for the compressor, besides the one it compresses and
//! the one being gathered.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, sync_channel};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::compress::{self, Output, Shared, open};
use super::frames::{End, FrameBuilder};
use super::{Backlog, FRAME_MAX, FRAME_TARGET, LEVEL, line_hash};
use crate::cut::redact::Redactor;
use crate::error::Error;
use crate::tee::split::Piece;

/// Closed frames waiting for a compression thread at most.
const QUEUE: usize = 1;
/// Compression threads. Frames are independent, so more than one can compress at once; on the
/// 2-core machine measured, a second thread made no run faster (the corpus: 0.40 s against
/// 0.36 s with one, alternating runs) and held another frame and context (1 MiB more).
pub const WORKERS: usize = 1;
/// A frame that ends at a line end is closed after this long without input, so that a slow
/// stream's lines reach the archive file soon after they reach the log (the log worker calls
/// [`ArchiveFeed::idle`]).
pub const IDLE: Duration = Duration::from_secs(1);

/// Where and how to write an archive.
#[derive(Clone, Debug)]
pub struct ArchiveOptions {
    pub path: PathBuf,
    pub append: bool,
    /// Permission bits of a new archive (as the logs').
    pub mode: u32,
    /// The log whose line numbers the archive records (the first log), if any.
    pub log: Option<PathBuf>,
    /// `--redact`: the archive gets the same redaction as the log, with the same secrets
    /// (`secrets`: the environment's and `--redact-values`', as the engine has them).
    pub redact: bool,
    pub secrets: Vec<crate::cut::redact::Secret>,
    /// Frame sizes ([`FRAME_TARGET`], [`FRAME_MAX`]); tests make them tiny.
    pub frame_target: usize,
    pub frame_max: usize,
    /// Compression threads ([`WORKERS`]).
    pub workers: usize,
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
            secrets: Vec::new(),
            frame_target: FRAME_TARGET,
            frame_max: FRAME_MAX,
            workers: WORKERS,
        }
    }
}

/// The log thread's side of an archive.
pub struct ArchiveFeed {
    frames: FrameBuilder,
    threads: Vec<JoinHandle<()>>,
    errors: Arc<Mutex<Vec<Error>>>,
    redactor: Option<Redactor>,
    redacted: Vec<u8>,
    /// Where the stream is in a private key written over several lines.
    keys: crate::cut::redact::KeyLines,
    /// What the line read in pieces says of keys' blocks so far.
    marks: crate::cut::redact::KeyMarks,
    /// `--redact` on a line past the memory cap: its bytes not yet redacted, held until the
    /// next piece so that a secret is never split between two redactions.
    held: Vec<u8>,
    log: Option<PathBuf>,
}

/// `--redact` on a line past the memory cap: the bytes it gathers before it redacts a part
/// (see [`ArchiveFeed::piece`]).
const HOLD_MAX: usize = crate::cut::redact::PART;

impl ArchiveFeed {
    /// Opens the archive (cutting back a torn last record with `append`) and starts its
    /// compression thread.
    pub fn start(opts: ArchiveOptions) -> Result<ArchiveFeed, Error> {
        let (file, len) = open(&opts.path, opts.append, opts.mode)?;
        let base = log_lines(opts.log.as_deref());
        let compressors = (0..opts.workers.max(1))
            .map(|_| {
                let mut c = zstd::bulk::Compressor::new(LEVEL)?;
                c.include_checksum(true)?;
                c.include_contentsize(true)?;
                Ok(c)
            })
            .collect::<io::Result<Vec<_>>>()
            .map_err(|source| Error::OpenArchive {
                path: opts.path.clone(),
                source,
            })?;
        let (tx, rx) = sync_channel(QUEUE);
        let (free_tx, free) = channel();
        let errors = Arc::new(Mutex::new(Vec::new()));
        let backlog = Arc::new(Backlog::default());
        let shared = Arc::new(Shared {
            rx: Mutex::new(rx),
            output: Mutex::new(Output {
                path: opts.path.clone(),
                mode: opts.mode,
                file: Some(file),
                len,
                turn: 0,
                errors: Arc::clone(&errors),
                open_line: None,
            }),
            turn: Condvar::new(),
            free: Mutex::new(free_tx),
            backlog: Arc::clone(&backlog),
        });
        let mut threads = Vec::new();
        for zstd in compressors {
            let shared = Arc::clone(&shared);
            let spawned = std::thread::Builder::new()
                .name("archive".into())
                .spawn(move || compress::run(&shared, zstd));
            match spawned {
                Ok(t) => threads.push(t),
                Err(_) if !threads.is_empty() => break,
                Err(source) => {
                    return Err(Error::OpenArchive {
                        path: opts.path.clone(),
                        source,
                    });
                }
            }
        }
        Ok(ArchiveFeed {
            frames: FrameBuilder::new(
                opts.frame_target,
                opts.frame_max,
                base + 1,
                tx,
                free,
                backlog,
            ),
            threads,
            errors,
            redactor: opts.redact.then(|| Redactor::with_secrets(&opts.secrets)),
            redacted: Vec::new(),
            keys: Default::default(),
            marks: Default::default(),
            held: Vec::new(),
            log: opts.log,
        })
    }

    /// The bytes of a piece of input, before the engine sees it. With `--redact` (the one call
    /// into `redact.rs`: [`Redactor::redact`], per line), a whole line is redacted whole; a line
    /// past the memory cap is redacted in parts of at least [`HOLD_MAX`] bytes, each ending
    /// where no secret is split ([`Redactor::safe_cut`]); the bytes after that wait for the
    /// next piece. `ruled_out`: the reading thread's filters ruled the line out already.
    #[inline]
    pub fn piece(&mut self, piece: &Piece, ruled_out: bool) {
        let (bytes, last) = match piece {
            Piece::Line(b) | Piece::End(b) => (*b, true),
            Piece::Start(b) => {
                self.frames.begin_long_line();
                (*b, false)
            }
            Piece::Part(b) => (*b, false),
        };
        let Some(r) = &self.redactor else {
            self.frames.push(bytes);
            return;
        };
        if !matches!(piece, Piece::Line(_)) {
            self.marks.see(bytes);
            if last {
                self.keys.after_pieces(&std::mem::take(&mut self.marks));
            }
        }
        let mut text = bytes;
        let joined;
        if !self.held.is_empty() {
            self.held.extend_from_slice(bytes);
            joined = std::mem::take(&mut self.held);
            text = &joined;
        }
        let cut = match last {
            true => text.len(),
            false if text.len() <= HOLD_MAX => 0,
            false => r.safe_cut(text),
        };
        // The filters alone rule out most lines, at a fraction of a search's cost; the
        // reading thread ran them on most lines already (`ruled_out`, its verdict).
        let whole_line = matches!(piece, Piece::Line(_));
        let clean = (whole_line && ruled_out) || r.rules_out(&text[..cut]);
        // A line of a private key written over several lines of text goes as its redaction.
        // Blank lines are not counted in a key's block, as the log's engine passes them by.
        if whole_line
            && !crate::line::is_blank(text)
            && (self.keys.inside() || !clean)
            && let Some(replaced) = r.key_line(text, &mut self.keys)
        {
            self.frames.push(&replaced);
            return;
        }
        if clean {
            self.frames.push(&text[..cut]);
        } else {
            // In parts, as later pieces are: redacted whole, the first 8 MiB piece of a line
            // dense with escapes held its redaction and its shadow beside it (45 MiB of peak
            // RSS, #49's audit).
            let frames = &mut self.frames;
            r.redact_in_parts(&text[..cut], &mut self.redacted, |part| frames.push(part));
        }
        self.held.extend_from_slice(&text[cut..]);
    }

    /// The end of the line whose bytes came last: with its newline unless it ended at end of
    /// input, and the log line it produced, if any (newline excluded).
    #[inline]
    pub fn end(&mut self, newline: bool, logged: Option<&[u8]>) {
        if newline {
            self.frames.push(b"\n");
        }
        self.frames.end(End {
            log: logged.map(line_hash),
            eof: !newline,
        });
    }

    /// How full the tee's queue is, for the compression threads' pace: the tee reports it here.
    pub fn backlog(&self) -> Arc<Backlog> {
        self.frames.backlog()
    }

    /// The input has paused ([`IDLE`]): the frame so far goes to the compressor, up to its last
    /// line end.
    pub fn idle(&mut self) {
        self.frames.close_at_line_end();
    }

    /// After the logs were opened again (SIGUSR1): the archive is too, and numbers lines from
    /// the log's count.
    pub fn reopen(&mut self) {
        let base = log_lines(self.log.as_deref());
        self.frames.rotate(base);
    }

    /// The log was truncated under the writer (logrotate's `copytruncate`): the next logged
    /// line is numbered after the log's lines now, as the log numbers it.
    pub fn log_truncated(&mut self) {
        let base = log_lines(self.log.as_deref());
        self.frames.renumber(base);
    }

    /// The log whose lines the archive numbers (the first log), if any.
    pub fn log(&self) -> Option<&Path> {
        self.log.as_deref()
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
        if !self.threads.is_empty() {
            self.frames.finish();
            for t in self.threads.drain(..) {
                let _ = t.join();
            }
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
        secrets: config.engine.secrets.clone(),
        ..ArchiveOptions::new(&path)
    };
    match ArchiveFeed::start(opts) {
        Ok(feed) => log.with_archive(feed),
        Err(e) => {
            crate::say!("smart-tee: {e}");
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

/// `--compact --archive FILE`: archives the whole lines of the one log in `files`, numbered as
/// the compacted log will number them, before it is rewritten. `lines` reads the log's whole
/// lines as the compaction reads them (with `--redact`, as the read side does: see
/// `read::lines_in`), so that the archive and the compacted log are made of the same lines.
/// Says what failed; false then.
pub fn archive_logs(
    files: &[PathBuf],
    path: &Path,
    engine: &crate::EngineConfig,
    lines: impl FnOnce(Box<dyn io::Read>) -> Box<dyn io::Read>,
) -> bool {
    let [log] = files else {
        crate::say!("smart-tee: --compact --archive FILE compacts one log at a time");
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
            secrets: engine.secrets.clone(),
            ..ArchiveOptions::new(path)
        })?;
        let mut writer = crate::LogWriter::new(crate::LineEngine::new(engine.clone()), Vec::new())
            .with_archive(feed);
        let mut input = lines(Box::new(io::Read::take(file, whole)));
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
            crate::say!(
                "smart-tee: --compact --archive: {e}; {} was not compacted",
                log.display()
            );
            false
        }
    }
}
