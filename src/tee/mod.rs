//! The tee: one thread reads a chunk, hands it to the log worker and then writes it to stdout;
//! the log worker, on the calling thread, splits the chunks into lines, runs them through the
//! engine and writes the logs. The two overlap on two cores; the queue between them
//! (`handoff.rs`) is bounded in bytes: stdout does not wait for a slow log until
//! [`QUEUE_BYTES`] of input are queued for it.
//!
//! Output errors follow GNU tee's `--output-error` modes, with one deliberate difference: by
//! default a stdout whose reader has gone (EPIPE) is silently dropped and the logs go on, as with
//! `-p`, because losing an agent's log because a viewer was closed is the worse failure. A
//! stdout or stdin that another process made non-blocking is waited on (`fd.rs`).
//!
//! SIGINT, SIGTERM, SIGHUP and SIGQUIT are handled on a thread of their own: it queues a stop
//! behind the chunks already handed over (every byte stdout got is among them), so the worker
//! logs every complete line received, then the unfinished last line as a record, and exits with
//! 128 + the signal number. With `-i`, SIGINT is ignored. SIGUSR1 queues a reopen of every log
//! by its path (after logrotate renamed it). SIGXFSZ is caught so that a file-size limit fails a
//! write (and the log is repaired) instead of killing the process.
//!
//! The tee path takes no descriptor of its own for stdin and stdout, and sets them up before the
//! logs are opened: under a short descriptor limit a log may fail to open (and is named), the
//! stream never does.

pub mod archive;
mod big_line;
pub mod decompress;
pub mod fd;
pub mod handoff;
pub mod log;
pub mod progress;
pub mod sink;
pub mod splice;
pub mod split;
pub mod stats;
pub mod stdout_cap;
pub mod watch;

use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGXFSZ};
use signal_hook::iterator::Signals;

pub use self::handoff::QUEUE_BYTES;
use self::handoff::{Buf, Handoff, Msg, Sent};
use self::log::LogWriter;
use self::sink::LogSink;
use self::splice::Splice;
use self::stats::StatsReport;
use self::stdout_cap::StdoutCap;
use crate::cut::engine::{EngineConfig, LineEngine};
use crate::error::Error;

/// Bytes asked of one read. Each chunk costs a hand-over between the threads (a futex wake and
/// a context switch each way) and, per log, a write with its lock, identity check and
/// last-byte read: at 128 KiB these were a quarter of smart-tee's CPU time on 300-byte lines.
/// A read returns what the pipe holds, so a slow stream is not delayed by the size.
const CHUNK: usize = 256 * 1024;

/// What a write error on an output does (GNU tee's `--output-error` modes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputError {
    /// Diagnose errors writing to any output, go on with the others.
    Warn,
    /// Diagnose errors writing to any output that is not a pipe; drop a broken pipe silently.
    WarnNopipe,
    /// Exit on any write error.
    Exit,
    /// Exit on any write error other than a broken pipe; drop a broken pipe silently.
    ExitNopipe,
}

/// Everything smart-tee needs to run, checked.
#[derive(Clone, Debug)]
pub struct Config {
    pub files: Vec<PathBuf>,
    pub append: bool,
    pub ignore_interrupts: bool,
    pub output_error: OutputError,
    pub file_mode: u32,
    pub engine: EngineConfig,
    /// `--stdout-max-line-bytes`.
    pub stdout_max_line_bytes: Option<usize>,
    pub stats: StatsReport,
    /// Problems that do not stop the stream (a bad environment value), said at start.
    pub warnings: Vec<String>,
    /// `--archive FILE` (or `SMART_TEE_ARCHIVE`): the whole input, compressed, here.
    pub archive: Option<PathBuf>,
    /// `--progress[=FILE]`: a readable line per logged event, there.
    pub progress: Option<progress::ProgressTo>,
}

/// What a write error does, by mode.
enum Reaction {
    /// Drop the output without a word (EPIPE in the `-nopipe` modes).
    Drop,
    /// Diagnose, drop the output, exit 1 at the end.
    Warn,
    /// Diagnose and exit 1 now.
    Exit,
}

/// Reports `err` as `mode` says (clearing `ok` for a diagnosed error); true when the mode says
/// to exit now.
fn diagnose(mode: OutputError, err: &Error, ok: &mut bool) -> bool {
    match reaction(mode, err) {
        Reaction::Drop => false,
        Reaction::Warn => {
            crate::say!("smart-tee: {err}");
            *ok = false;
            false
        }
        Reaction::Exit => {
            crate::say!("smart-tee: {err}");
            *ok = false;
            true
        }
    }
}

fn reaction(mode: OutputError, err: &Error) -> Reaction {
    let pipe = err.is_broken_pipe();
    match mode {
        OutputError::WarnNopipe | OutputError::ExitNopipe if pipe => Reaction::Drop,
        OutputError::Warn | OutputError::WarnNopipe => Reaction::Warn,
        OutputError::Exit | OutputError::ExitNopipe => Reaction::Exit,
    }
}

/// The signals the tee takes over: those that stop it, and SIGUSR1 (reopen the logs).
pub fn stopping_signals() -> io::Result<Signals> {
    Signals::new([SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1])
}

/// Runs smart-tee on the process's stdin and stdout. `render` makes the line `--progress`
/// shows of a log line (the text view's, from a later phase; needed only with `--progress`).
pub fn run(config: Config, render: Option<progress::MakeRender>) -> ExitCode {
    let (finish, failed) = run_supervised(config, render, None);
    finish.exit_code(failed)
}

/// [`run`], watched by `supervised` when given (`smart-tee run`): returns how the copy ended
/// and whether something failed before it (a log that could not be opened, a signal watch).
pub fn run_supervised(
    mut config: Config,
    render: Option<progress::MakeRender>,
    mut supervised: Option<watch::Supervised>,
) -> (Finish, bool) {
    // Take over the signals first: one that arrives while the logs are being opened waits in
    // the queue instead of killing the process. Without them (no descriptor left for their
    // pipe) the stream still goes on.
    let taken = supervised.as_mut().and_then(|s| s.signals.take());
    let signals = match taken.map_or_else(stopping_signals, Ok) {
        Ok(s) => Some(s),
        Err(source) => {
            crate::say!("smart-tee: {}", Error::Signals { source });
            None
        }
    };
    let _ = signal_hook::flag::register(SIGXFSZ, Arc::new(AtomicBool::new(false)));
    let mut failed = signals.is_none();
    for warning in config.warnings.drain(..) {
        crate::say!("smart-tee: {warning}");
    }
    // The tee path before the logs: stdin and stdout are used as they are (no descriptor of
    // their own), so no log can take what the stream needs.
    let closed = crate::early::stdout_was_closed()
        || rustix::io::fcntl_getfd(crate::tee::fd::stdout_fd()).is_err();
    let stdout = if closed {
        // A closed stdout (`>&-`): an error on an output, as GNU tee reports it.
        let source = io::Error::from_raw_os_error(9); // EBADF, as a write to it would fail
        let mut ok = true;
        if diagnose(config.output_error, &Error::WriteStdout { source }, &mut ok) {
            return (Finish::Stopped(1), true);
        }
        failed |= !ok;
        None
    } else {
        Some(crate::tee::fd::Stdout)
    };
    // Without a cap, a pipe on stdout is fed inside the kernel.
    let splice = match (&stdout, config.stdout_max_line_bytes) {
        (Some(_), None) => Splice::new(rustix::stdio::stdin(), crate::tee::fd::stdout_fd()),
        _ => None,
    };
    if let Some(path) = config.stats.json.clone() {
        // Said now, not at exit: the stream goes on, the status will be 1.
        #[allow(
            clippy::disallowed_methods,
            reason = "a door (docs/redaction.md): opened to check, nothing written"
        )]
        let writable = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path);
        if let Err(source) = writable {
            crate::say!(
                "smart-tee: --stats-json: {}",
                Error::WriteStats { path, source }
            );
            config.stats.json = None;
            failed = true;
        }
    }
    let mut sinks: Vec<LogSink> = Vec::new();
    for path in &config.files {
        // A file named twice (`LOG LOG`, `LOG ./LOG`, a link) is one log, written once: opened
        // again, it took its own lock for another writer's and got every line twice.
        use std::os::unix::fs::MetadataExt;
        if let Ok(m) = std::fs::metadata(path)
            && let Some(first) = sinks
                .iter()
                .find(|s| s.file_id() == Some((m.dev(), m.ino())))
        {
            crate::say!(
                "smart-tee: log {path:?}: the same file as log {:?}; written once",
                first.path()
            );
            continue;
        }
        match LogSink::open(path, config.append, config.file_mode) {
            Ok(sink) => sinks.push(sink),
            Err(e) => {
                crate::say!("smart-tee: {e}");
                failed = true;
                if matches!(
                    config.output_error,
                    OutputError::Exit | OutputError::ExitNopipe
                ) {
                    // As GNU tee: in this mode a log that cannot be opened ends the run.
                    return (Finish::Stopped(1), true);
                }
            }
        }
    }
    let mut log = LogWriter::new(LineEngine::new(config.engine.clone()), sinks);
    if config.stats.human || config.stats.json.is_some() {
        log = log.with_drift(config.stats.human);
    }
    if let (Some(to), Some(render)) = (config.progress.clone(), render) {
        log = log.with_progress(progress::Progress::start(to, render));
    }
    let (watch, on_signal, end) = match supervised {
        Some(s) => (Some(s.watch), Some(s.on_signal), Some(s.end)),
        None => (None, None, None),
    };
    if let Some(watch) = watch {
        log = log.with_watch(watch);
    }
    // --archive (hook: `archive` module).
    let log = crate::tee::archive::writer::attach(log, &config, &mut failed);
    let options = CopyOptions {
        mode: config.output_error,
        splice,
        on_signal,
        end,
        signals: signals.map(|s| (s, config.ignore_interrupts)),
        stats: config.stats.clone(),
        stdout_cap: config.stdout_max_line_bytes.map(|max| {
            let engine = crate::EngineConfig {
                max_line_bytes: max,
                redact: false,
                add_timestamp: false,
                omit_images: false,
                field_stats: false,
                ..config.engine.clone()
            };
            StdoutCap::new(max, LineEngine::new(engine))
        }),
    };
    let finish = copy(crate::tee::fd::Stdin, stdout, log, options);
    (finish, failed)
}

/// How [`copy`] runs.
pub struct CopyOptions {
    pub mode: OutputError,
    /// Signals to watch, and whether SIGINT is ignored.
    pub signals: Option<(Signals, bool)>,
    /// What a stopping signal does instead of stopping the copy (`smart-tee run`).
    pub on_signal: Option<Box<dyn Fn(i32) + Send>>,
    /// How the caller ends the copy before its input ends (`smart-tee run`).
    pub end: Option<watch::EndCopy>,
    /// The summary to give at exit.
    pub stats: StatsReport,
    /// Cut long stdout lines (`--stdout-max-line-bytes`).
    pub stdout_cap: Option<StdoutCap>,
    /// Feed stdout inside the kernel (stdout a pipe, no cap): the reads and writes of the
    /// stdout side go through this instead of `input` and `stdout` while it works.
    pub splice: Option<Splice<'static>>,
}

impl CopyOptions {
    pub fn new(mode: OutputError) -> CopyOptions {
        CopyOptions {
            mode,
            signals: None,
            on_signal: None,
            end: None,
            stats: StatsReport::default(),
            stdout_cap: None,
            splice: None,
        }
    }
}

/// How a run of [`copy`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finish {
    /// Input ended (or no output was left); false if an error was diagnosed.
    Done(bool),
    /// Stopped early with this exit status: a signal (128 + N) or an `exit` mode's error (1).
    /// The logs hold every line read; the reading thread may still be blocked in a read, and
    /// the caller should end the process.
    Stopped(u8),
}

impl Finish {
    pub fn exit_code(self, failed_before: bool) -> ExitCode {
        match self {
            Finish::Done(true) if !failed_before => ExitCode::SUCCESS,
            Finish::Done(_) => ExitCode::from(1),
            Finish::Stopped(status) => ExitCode::from(status),
        }
    }
}

/// Copies `input` to `stdout` and into the logs until end of input, or until no output is left.
/// A thread reads `input`, hands each chunk to the logs and then writes it to `stdout`; the
/// calling thread runs the logs. With `signals`, SIGTERM, SIGHUP, SIGQUIT and (unless ignored)
/// SIGINT stop it after the log is finished, and SIGUSR1 reopens the logs. Never exits the
/// process.
pub fn copy<R, W>(input: R, stdout: Option<W>, log: LogWriter, options: CopyOptions) -> Finish
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let CopyOptions {
        mode,
        signals,
        on_signal,
        end,
        stats,
        stdout_cap,
        splice,
    } = options;
    // Input waiting for the logs: QUEUE_BYTES, with or without --archive. The archive's frames
    // (at most 6 MiB) are filled by the log thread, so a stalled log stalls them too: counted
    // against the queue, they left stdout 2 MiB of lead, not the 8 MiB README promises.
    let handoff = Arc::new(Handoff::with_bound(CHUNK, QUEUE_BYTES).reporting(log.backlog()));
    let logs_alive = Arc::new(AtomicBool::new(log.has_live_sinks()));
    if let Some(end) = end {
        end.set(Arc::clone(&handoff));
    }
    if let Some((signals, ignore_interrupts)) = signals {
        watch_signals(signals, Arc::clone(&handoff), ignore_interrupts, on_signal);
    }
    let looks = log.looks();
    let reader = {
        let alive = Arc::clone(&logs_alive);
        let handoff = Arc::clone(&handoff);
        let out = Stdout {
            file: stdout,
            cap: stdout_cap,
            splice,
        };
        std::thread::spawn(move || read_loop(input, out, mode, &handoff, alive, looks))
    };
    let finish = log_worker(&handoff, log, mode, logs_alive, stats);
    handoff.close();
    if let Finish::Done(_) = finish {
        // Input has ended, so the reader has too.
        let _ = reader.join();
    }
    finish
}

/// Standard output as the reading thread holds it.
struct Stdout<W> {
    /// `None` once it has failed (or when it was closed at start).
    file: Option<W>,
    cap: Option<StdoutCap>,
    splice: Option<Splice<'static>>,
}

/// The writable bytes of the reader's own buffer (see [`Handoff::send_chunk`]: a buffer the
/// reader holds is its alone once the previous write to stdout is done).
fn own(buf: &mut Buf) -> &mut Vec<u8> {
    if Arc::get_mut(buf).is_none() {
        *buf = Arc::new(vec![0; CHUNK]);
    }
    Arc::make_mut(buf)
}

/// The reading thread: each chunk to the log worker, then to stdout. Sends `End(ok)` at end of
/// input, or `Stop(1)` on an `exit` mode's stdout error; returns at once when a stop is queued.
/// While the log worker is behind, the reader does some of its work on each chunk before
/// queueing it ([`handoff::Ahead`]): the reader has time then, the worker has not. With
/// `--redact` (`scout`) it looks at the lines with the redaction's filters (see
/// `cut::redact::scout`); after lines that are not JSON (`text_seen`) it checks the text.
fn read_loop<R: Read, W: Write>(
    mut input: R,
    mut stdout: Stdout<W>,
    mode: OutputError,
    handoff: &Handoff,
    logs_alive: Arc<AtomicBool>,
    mut looks: handoff::Looks,
) {
    if io::IsTerminal::is_terminal(&io::stdin()) {
        // A background job that reads its terminal is stopped by SIGTTIN, and stopped it takes
        // no SIGTERM: the read restarts on SIGCONT and stops it again (`kill %1`, `timeout`).
        // With SIGTTIN blocked in this thread, that read fails instead (EIO), and the run ends
        // saying so, as a stop signal would end it.
        block_in_this_thread(nix::sys::signal::Signal::SIGTTIN);
    }
    let mut look = |chunk: &[u8]| looks.look(chunk, handoff.behind());
    let mut ok = true;
    let mut capped = Vec::new();
    let mut buf = handoff.buffer();
    loop {
        let sent = if let Some(splice) = stdout.splice.as_mut().filter(|_| stdout.file.is_some()) {
            // Inside the kernel: stdout gets the bytes before they are read, so the delivery
            // and the queueing are one turn that a stop cannot come between.
            if !handoff.reserve(CHUNK) {
                return;
            }
            let turn = handoff.delivery();
            if handoff.stopping() {
                return;
            }
            match splice.fill(own(&mut buf)) {
                Ok(0) => break,
                Ok(n) => match handoff.send_chunk(&buf, n, look(&buf[..n])) {
                    Some(sent) => sent,
                    None => return,
                },
                Err(splice::Failed::Input(e)) if e.kind() == io::ErrorKind::Interrupted => {
                    continue;
                }
                Err(splice::Failed::Input(source)) => {
                    crate::say!("smart-tee: {}", Error::ReadStdin { source });
                    ok = false;
                    break;
                }
                Err(splice::Failed::WouldBlock) => {
                    drop(turn);
                    splice.wait();
                    continue;
                }
                Err(splice::Failed::Unsupported) => {
                    stdout.splice = None;
                    continue;
                }
                Err(splice::Failed::Output(source)) => {
                    // Nothing was read: the next round reads without stdout.
                    drop(turn);
                    stdout.file = None;
                    if diagnose(mode, &Error::WriteStdout { source }, &mut ok) {
                        handoff.send(Msg::Stop(1));
                        return;
                    }
                    continue;
                }
            }
        } else {
            let n = match input.read(own(&mut buf)) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    crate::say!("smart-tee: {}", Error::ReadStdin { source });
                    ok = false;
                    break;
                }
            };
            // The log owns the chunk before stdout is given it; the log gets what was read
            // even when stdout failed: it should hold all of it.
            let Some(sent) = handoff.send_chunk(&buf, n, look(&buf[..n])) else {
                return;
            };
            let mut exit = false;
            if let Some(out) = stdout.file.as_mut() {
                let bytes = match stdout.cap.as_mut() {
                    Some(cap) => {
                        capped.clear();
                        cap.feed(&buf[..n], &mut capped);
                        &capped[..]
                    }
                    None => &buf[..n],
                };
                if let Err(source) = out.write_all(bytes).and_then(|()| out.flush()) {
                    stdout.file = None;
                    exit = diagnose(mode, &Error::WriteStdout { source }, &mut ok);
                }
            }
            if exit {
                handoff.send(Msg::Stop(1));
                return;
            }
            sent
        };
        if let Sent::Queued(next) = sent {
            buf = next;
        }
        if stdout.file.is_none() && !logs_alive.load(Ordering::Relaxed) {
            // Like tee: with no output left, stop reading.
            break;
        }
    }
    if let (Some(cap), Some(out)) = (stdout.cap.as_mut(), stdout.file.as_mut()) {
        capped.clear();
        cap.finish(&mut capped);
        if let Err(source) = out.write_all(&capped).and_then(|()| out.flush()) {
            // At the very end there is nothing left to stop: exit modes just report.
            diagnose(mode, &Error::WriteStdout { source }, &mut ok);
        }
    }
    handoff.send(Msg::End(ok));
}

/// The log worker: feeds chunks to the log writer, reports write errors by mode, and says how
/// the run ended.
fn log_worker(
    handoff: &Handoff,
    mut log: LogWriter,
    mode: OutputError,
    alive: Arc<AtomicBool>,
    stats: StatsReport,
) -> Finish {
    let mut ok = true;
    let summarize = |log: &LogWriter| {
        // Said once, at the end, whatever the flags (a caught panic is a bug).
        stats::say_panics(&log.stats());
        if stats.human || stats.json.is_some() {
            let by_field = log.engine().saved_by_field();
            if let Err(e) = stats::report(&log.stats(), by_field, log.drift(), &stats) {
                crate::say!("smart-tee: {e}");
                return false;
            }
        }
        true
    };
    // Reports the errors by mode; true when one says to stop now.
    let report = |errors: Vec<Error>, ok: &mut bool| {
        let mut stop = false;
        for err in errors {
            stop |= diagnose(mode, &err, ok);
        }
        stop
    };
    let reader_ok;
    let idle_after = log.idle_after();
    loop {
        let msg = match idle_after {
            Some(after) => match handoff.recv_timeout(after) {
                Some(msg) => msg,
                None => {
                    log.idle();
                    continue;
                }
            },
            None => handoff.recv(),
        };
        match msg {
            Msg::Chunk(buf, n, ahead) => {
                let errors = log.feed_ahead(&buf[..n], &ahead);
                if report(errors, &mut ok) {
                    report(log.finish(), &mut ok);
                    summarize(&log);
                    return Finish::Stopped(1);
                }
                if let Some(notice) = log.take_notice() {
                    crate::say!("smart-tee: {notice}");
                }
                alive.store(log.has_live_sinks(), Ordering::Relaxed);
                handoff.recycle(buf);
            }
            Msg::Reopen => {
                if report(log.reopen(), &mut ok) {
                    report(log.finish(), &mut ok);
                    summarize(&log);
                    return Finish::Stopped(1);
                }
                alive.store(log.has_live_sinks(), Ordering::Relaxed);
            }
            Msg::End(read_ok) => {
                reader_ok = read_ok;
                break;
            }
            Msg::Stop(status) => {
                report(log.finish(), &mut ok);
                summarize(&log);
                return Finish::Stopped(status);
            }
        }
    }
    let stop = report(log.finish(), &mut ok);
    let summarized = summarize(&log);
    if stop {
        return Finish::Stopped(1);
    }
    Finish::Done(ok && reader_ok && summarized)
}

/// Blocks `signal` in the calling thread alone (a terminal's SIGTTIN or SIGTTOU: blocked, the
/// read or the change of foreground that would stop the process fails or goes on instead).
pub fn block_in_this_thread(signal: nix::sys::signal::Signal) {
    let mut block = nix::sys::signal::SigSet::empty();
    block.add(signal);
    let _ = nix::sys::signal::pthread_sigmask(
        nix::sys::signal::SigmaskHow::SIG_BLOCK,
        Some(&block),
        None,
    );
}

/// Starts the thread that turns SIGINT, SIGTERM, SIGHUP and SIGQUIT into a clean exit and
/// SIGUSR1 into a reopen: each is queued behind the chunks already handed over, so every
/// complete line received is logged first (to the files open when it was read). With
/// `on_signal`, the stopping signals go there instead and the copy goes on.
fn watch_signals(
    mut signals: Signals,
    handoff: Arc<Handoff>,
    ignore_interrupts: bool,
    on_signal: Option<Box<dyn Fn(i32) + Send>>,
) {
    std::thread::spawn(move || {
        for signal in signals.forever() {
            match signal {
                SIGINT if ignore_interrupts => continue,
                SIGUSR1 => handoff.send(Msg::Reopen),
                _ if on_signal.is_some() => {
                    if let Some(f) = on_signal.as_ref() {
                        f(signal);
                    }
                }
                _ => handoff.stop(128 + signal as u8),
            }
        }
    });
}
