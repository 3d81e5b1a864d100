//! The one door out. Every byte smart-tee writes to standard error, and every answer it gives
//! on standard output in a reading mode (`--view` in every format, `--original`, `--summary`,
//! the HTML page, MCP), leaves through this module:
//! - with `--redact`, redacted by the process's one [`Redactor`], built once from the command
//!   line's secrets ([`open`]): the patterns, the names, the environment's values and those of
//!   `--redact-values`, the same rules the logs' engine applies;
//! - on standard error, never blocking for long and never panicking ([`say`]): a diagnostic
//!   that cannot be written within [`STDERR_WAIT`] is dropped and counted ([`dropped`]), so that
//!   a full, non-blocking stderr never costs the stream, a log, or the exit status's meaning.
//!
//! What the read side reads passes here too, before anything is cut from it: [`line_in`]
//! redacts each log line whole as it is read, so that a gist, a summary's string, a grep
//! snippet or a page can never end inside a secret the whole line would have redacted; a
//! private key written as lines of text is followed from line to line ([`Forward`],
//! [`before`]).
//!
//! Nothing else reaches standard output or standard error: `clippy.toml` disallows
//! `eprintln!`, `println!`, `std::io::stdout`/`stderr` and rustix's descriptors 1 and 2 in the
//! whole crate, and `tests/it/layout.rs` checks that only this module and the tee's raw stream
//! (standard output is the stream itself, never redacted) allow them.
#![allow(clippy::disallowed_methods, clippy::disallowed_macros)]

use std::borrow::Cow;
use std::io::{self, Write};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::io::Errno;

use crate::cut::redact::{Redactor, Secret};

mod keys;
pub use keys::{Forward, before, may_be_a_keys, replaced_after, said_by};

/// The secrets of `--redact`, set at start; the redactor is built from them at its first use
/// (the tee's diagnostics are rare, and its engine builds its own from the same secrets).
static SECRETS: OnceLock<Vec<Secret>> = OnceLock::new();
static REDACTOR: OnceLock<Redactor> = OnceLock::new();

/// How long one diagnostic waits for a full, non-blocking standard error before it is dropped.
pub const STDERR_WAIT: Duration = Duration::from_secs(2);

/// Diagnostics dropped because standard error stayed full (or was closed).
static DROPPED: AtomicU64 = AtomicU64::new(0);
/// Set once a diagnostic was dropped for a full stderr: the next ones try once, without
/// waiting, until one gets through.
static STALLED: AtomicBool = AtomicBool::new(false);

/// Turns redaction on for everything that leaves this process, with the patterns and the
/// values of `secrets`. Called once at start when `--redact` is on; later calls change nothing.
pub fn open(secrets: &[Secret]) {
    let _ = SECRETS.set(secrets.to_vec());
}

/// The redactor of this process, when `--redact` is on.
pub fn redactor() -> Option<&'static Redactor> {
    let secrets = SECRETS.get()?;
    Some(REDACTOR.get_or_init(|| Redactor::with_secrets(secrets)))
}

/// `bytes` with their secrets replaced, when redaction is on (else as they are).
pub fn bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    let Some(r) = redactor() else {
        return Cow::Borrowed(bytes);
    };
    let mut out = Vec::new();
    if r.redact(bytes, &mut out) {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(bytes)
    }
}

/// `text` with its secrets replaced, when redaction is on.
pub fn text(text: String) -> String {
    match bytes(text.as_bytes()) {
        Cow::Borrowed(_) => text,
        Cow::Owned(b) => String::from_utf8_lossy(&b).into_owned(),
    }
}

/// A log line as the read side reads it: redacted whole, when redaction is on, before any
/// surface cuts, pages or summarises it. A log written without `--redact` may hold a secret
/// that its own cut split, its head before a `[TRUNCATED: …]` marker and its tail after: no
/// pattern knows a part, so beside each marker the run of bytes a secret could end or start
/// with is left out too ([`Redactor::without_cut_ends`]).
#[inline]
pub fn line_in(line: &[u8]) -> Cow<'_, [u8]> {
    let Some(r) = redactor() else {
        return Cow::Borrowed(line);
    };
    // The ends first: a name before a marker (`DB_PASSWORD=…[TRUNCATED: …]`) would otherwise
    // take the marker for its value and hide where the cut was.
    // (`without_cut_ends` looks for a marker first, and gives `None` without one.)
    if let Some(trimmed) = r.without_cut_ends(line, CUT_MARKER) {
        return Cow::Owned(bytes(&trimmed).into_owned());
    }
    bytes(line)
}

/// How a cut shows in a log line (the default marker's first bytes).
const CUT_MARKER: &str = "[TRUNCATED: ";

/// A path as a diagnostic or an answer names it: its secrets redacted in place
/// (`/logs/[REDACTED:env:MY_API_TOKEN].jsonl`).
pub fn path(path: &std::path::Path) -> String {
    text(path.display().to_string())
}

/// Writes one diagnostic line to standard error, redacted: what [`say!`](crate::say) calls.
pub fn say(mut line: String) {
    line = text(line);
    line.push('\n');
    to_stderr(line.as_bytes());
}

/// Writes one line to standard output, redacted: what [`answer!`](crate::answer) calls. An
/// error (a reader gone) is ignored, as the caller's exit status does not depend on it.
pub fn answer_line(mut line: String) {
    line.push('\n');
    let _ = stdout().write_all(line.as_bytes());
}

/// Writes `bytes` to standard error as they are (already redacted, or with nothing to
/// redact), waiting with `poll` for a non-blocking stderr up to [`STDERR_WAIT`]; what is not
/// written then is dropped and counted. Never panics.
pub fn to_stderr(bytes: &[u8]) {
    let fd = rustix::stdio::stderr();
    let wait = if STALLED.load(Ordering::Relaxed) {
        Duration::ZERO
    } else {
        STDERR_WAIT
    };
    if write_within(fd, bytes, wait) {
        STALLED.store(false, Ordering::Relaxed);
    } else {
        DROPPED.fetch_add(1, Ordering::Relaxed);
    }
}

/// Writes all of `bytes` to `fd`, waiting for it with `poll` while it returns EAGAIN, at most
/// `wait` in all. False when it could not (full past `wait`, closed, or another error).
fn write_within(fd: std::os::fd::BorrowedFd<'_>, mut bytes: &[u8], wait: Duration) -> bool {
    let until = Instant::now() + wait;
    while !bytes.is_empty() {
        match rustix::io::write(fd, bytes) {
            Ok(0) => return false,
            Ok(n) => bytes = &bytes[n..],
            Err(Errno::INTR) => {}
            Err(Errno::AGAIN) => {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    STALLED.store(true, Ordering::Relaxed);
                    return false;
                }
                let timeout = Timespec {
                    tv_sec: left.as_secs() as _,
                    tv_nsec: left.subsec_nanos() as _,
                };
                let mut fds = [PollFd::new(&fd, PollFlags::OUT)];
                let _ = rustix::event::poll(&mut fds, Some(&timeout));
            }
            Err(_) => return false,
        }
    }
    true
}

/// How many diagnostics were dropped because standard error stayed full or was closed.
pub fn dropped() -> u64 {
    DROPPED.load(Ordering::Relaxed)
}

/// `Some(width)` when standard output is a terminal (its width in columns, when known and 20
/// or more), else `None`.
pub fn stdout_terminal() -> Option<Option<usize>> {
    terminal(rustix::stdio::stdout())
}

/// As [`stdout_terminal`], for standard error.
pub fn stderr_terminal() -> Option<Option<usize>> {
    terminal(rustix::stdio::stderr())
}

/// As [`stdout_terminal`], for any descriptor (a `--progress=FILE` that is a terminal).
pub fn terminal(fd: std::os::fd::BorrowedFd<'_>) -> Option<Option<usize>> {
    rustix::termios::isatty(fd).then(|| {
        rustix::termios::tcgetwinsize(fd)
            .ok()
            .map(|w| usize::from(w.ws_col))
            .filter(|&w| w >= 20)
    })
}

/// True when standard output is a pipe or socket whose reader has gone (`--follow | head -1`),
/// seen without writing: poll reports an error or hang-up on it.
pub fn stdout_gone() -> bool {
    let stdout = rustix::stdio::stdout();
    let mut fds = [PollFd::new(&stdout, PollFlags::OUT)];
    match rustix::event::poll(&mut fds, Some(&Timespec::default())) {
        Ok(_) => fds[0].revents().intersects(PollFlags::ERR | PollFlags::HUP),
        Err(_) => false,
    }
}

/// A message of clap's (a refused flag, `--help`, `--version`), written through the door:
/// help and version on standard output, errors on standard error, redacted either way. Never
/// panics on a full or closed descriptor.
pub fn clap_message(error: &clap::Error) {
    let message = error.render().to_string();
    if error.use_stderr() {
        to_stderr(text(message).as_bytes());
    } else {
        let _ = stdout().write_all(message.as_bytes());
    }
}

/// Standard output for an answer (`--view`, `--summary`, `--original`, the page, MCP): a
/// writer that redacts line by line when redaction is on. The only way to standard output
/// outside the tee's stream.
pub fn stdout() -> Answer<io::StdoutLock<'static>> {
    Answer::new(io::stdout().lock())
}

/// A JSON-RPC answer of the MCP server as it may leave, into one line: with redaction on, the
/// whole answer redacted but its `id`, which the client sent and must get back as sent (a
/// token-shaped id redacted would no longer match its request). Should the redacted answer not
/// read back as JSON, it is withheld: an error says so. Write the line with
/// [`stdout_answered`].
pub fn json_rpc_line(mut answer: serde_json::Value) -> String {
    if redactor().is_none() {
        return answer.to_string();
    }
    let id = answer.get_mut("id").map(std::mem::take);
    let redacted = text(answer.to_string());
    let Ok(mut answer) = serde_json::from_str::<serde_json::Value>(&redacted) else {
        let withheld = serde_json::json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32603, "message": "answer withheld: it did not redact cleanly"}});
        return withheld.to_string();
    };
    if let (Some(id), Some(slot)) = (id, answer.get_mut("id")) {
        *slot = id;
    }
    answer.to_string()
}

/// Standard output for lines made by [`json_rpc_line`], redacted already.
pub fn stdout_answered() -> io::StdoutLock<'static> {
    io::stdout().lock()
}

/// Standard error as a writer, for the few that write their diagnostics to a `dyn Write`:
/// every line passes [`say`]'s redaction and its bounded wait.
pub fn stderr() -> Answer<Stderr> {
    Answer::new(Stderr)
}

/// Descriptor 2 as a [`Write`], through [`to_stderr`]: never blocks past [`STDERR_WAIT`],
/// never fails.
pub struct Stderr;

impl Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        to_stderr(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A writer that redacts what goes through it line by line when redaction is on (else it
/// writes straight through). A line is held until its newline, or until a flush; what leaves
/// is a whole line redacted whole.
pub struct Answer<W: Write> {
    out: W,
    held: Vec<u8>,
    redacted: Vec<u8>,
}

impl<W: Write> Answer<W> {
    /// An answer written to `out`, a file smart-tee writes for the user (`--progress=FILE`,
    /// `--stats-json`) or a buffer that goes out later.
    pub fn new(out: W) -> Answer<W> {
        Answer {
            out,
            held: Vec::new(),
            redacted: Vec::new(),
        }
    }

    /// Writes the first `n` held bytes, redacted.
    fn write_held(&mut self, r: &Redactor, n: usize) -> io::Result<()> {
        let text = &self.held[..n];
        self.redacted.clear();
        if r.redact(text, &mut self.redacted) {
            self.out.write_all(&self.redacted)?;
        } else {
            self.out.write_all(text)?;
        }
        self.held.drain(..n);
        Ok(())
    }
}

impl<W: Write> Write for Answer<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let Some(r) = redactor() else {
            return self.out.write(buf);
        };
        self.held.extend_from_slice(buf);
        if let Some(last) = memchr::memrchr(b'\n', &self.held) {
            self.write_held(r, last + 1)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if let Some(r) = redactor()
            && !self.held.is_empty()
        {
            self.write_held(r, self.held.len())?;
        }
        self.out.flush()
    }
}

impl<W: Write> Drop for Answer<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// Writes a diagnostic line to standard error through the door: `say!("smart-tee: {e}")`.
/// Redacted when `--redact` is on; never blocks past [`door::STDERR_WAIT`](STDERR_WAIT), never
/// panics.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::door::say(::std::format!($($arg)*))
    };
}

/// Writes one line of an answer to standard output through the door: `answer!("{report}")`.
/// Redacted when `--redact` is on; a reader that went away is not an error, and nothing
/// panics.
#[macro_export]
macro_rules! answer {
    ($($arg:tt)*) => {
        $crate::door::answer_line(::std::format!($($arg)*))
    };
}
