//! The tee loop: read a chunk, write it to stdout at once, hand it to the logs.
//!
//! Output errors follow GNU tee's `--output-error` modes, with one deliberate difference: by
//! default a stdout whose reader has gone (EPIPE) is silently dropped and the logs go on, as with
//! `-p`, because losing an agent's log because a viewer was closed is the worse failure.
//!
//! SIGINT and SIGTERM are handled on a thread of their own: it waits until the loop is between
//! chunks, logs the unfinished last line as a record, and exits with 128 + the signal number.
//! With `-i`, SIGINT is ignored.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, MutexGuard};

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::cli::{Config, OutputError};
use crate::engine::LineEngine;
use crate::error::Error;
use crate::log::LogWriter;
use crate::sink::LogSink;

/// Bytes asked of one read.
const CHUNK: usize = 128 * 1024;

/// What a write error does, by mode.
enum Reaction {
    /// Drop the output without a word (EPIPE in the `-nopipe` modes).
    Drop,
    /// Diagnose, drop the output, exit 1 at the end.
    Warn,
    /// Diagnose and exit 1 now.
    Exit,
}

fn reaction(mode: OutputError, err: &Error) -> Reaction {
    let pipe = err.is_broken_pipe();
    match mode {
        OutputError::WarnNopipe | OutputError::ExitNopipe if pipe => Reaction::Drop,
        OutputError::Warn | OutputError::WarnNopipe => Reaction::Warn,
        OutputError::Exit | OutputError::ExitNopipe => Reaction::Exit,
    }
}

fn lock(log: &Mutex<LogWriter>) -> MutexGuard<'_, LogWriter> {
    log.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs smart-tee on the process's stdin and stdout.
pub fn run(config: Config) -> ExitCode {
    // Take over SIGINT and SIGTERM first: one that arrives while the logs are being opened
    // waits in the queue instead of killing the process.
    let signals = match Signals::new([SIGINT, SIGTERM]) {
        Ok(s) => s,
        Err(source) => {
            eprintln!("smart-tee: {}", Error::Signals { source });
            return ExitCode::from(1);
        }
    };
    let mut failed = false;
    let mut sinks = Vec::new();
    for path in &config.files {
        match LogSink::open(path, config.append, config.file_mode) {
            Ok(sink) => sinks.push(sink),
            Err(e) => {
                eprintln!("smart-tee: {e}");
                failed = true;
            }
        }
    }
    let log = Arc::new(Mutex::new(LogWriter::new(
        LineEngine::new(config.engine.clone()),
        sinks,
    )));
    watch_signals(signals, &log, config.ignore_interrupts);
    let stdin = io::stdin().as_fd().try_clone_to_owned().map(File::from);
    let stdout = io::stdout().as_fd().try_clone_to_owned().map(File::from);
    let (mut stdin, stdout) = match (stdin, stdout) {
        (Ok(i), Ok(o)) => (i, Some(o)),
        (Ok(i), Err(_)) => (i, None),
        (Err(source), _) => {
            eprintln!("smart-tee: {}", Error::ReadStdin { source });
            return ExitCode::from(1);
        }
    };
    let ok = copy(&mut stdin, stdout, &log, config.output_error);
    if ok && !failed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Copies `input` to `stdout` and into the logs until end of input, or until no output is left.
/// Returns false if any error was diagnosed. With an `exit` mode, exits the process on error.
pub fn copy<R: Read, W: Write>(
    input: &mut R,
    mut stdout: Option<W>,
    log: &Mutex<LogWriter>,
    mode: OutputError,
) -> bool {
    let mut ok = true;
    let mut buf = vec![0u8; CHUNK];
    let handle = |err: Error, ok: &mut bool| match reaction(mode, &err) {
        Reaction::Drop => {}
        Reaction::Warn => {
            eprintln!("smart-tee: {err}");
            *ok = false;
        }
        Reaction::Exit => {
            eprintln!("smart-tee: {err}");
            lock(log).finish();
            std::process::exit(1);
        }
    };
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(source) => {
                eprintln!("smart-tee: {}", Error::ReadStdin { source });
                ok = false;
                break;
            }
        };
        let chunk = &buf[..n];
        let written = stdout
            .as_mut()
            .map(|out| out.write_all(chunk).and_then(|()| out.flush()));
        if let Some(Err(source)) = written {
            stdout = None;
            let err = Error::WriteStdout { source };
            if matches!(reaction(mode, &err), Reaction::Exit) {
                // Log what was read before stopping: the log should hold all of it.
                lock(log).feed(chunk);
            }
            handle(err, &mut ok);
        }
        let mut guard = lock(log);
        let errors = guard.feed(chunk);
        let live = guard.has_live_sinks();
        drop(guard);
        for err in errors {
            handle(err, &mut ok);
        }
        if stdout.is_none() && !live {
            // Like tee: with no output left, stop reading.
            break;
        }
    }
    for err in lock(log).finish() {
        handle(err, &mut ok);
    }
    ok
}

/// Starts the thread that turns SIGINT and SIGTERM into a clean exit.
fn watch_signals(mut signals: Signals, log: &Arc<Mutex<LogWriter>>, ignore_interrupts: bool) {
    let log = Arc::clone(log);
    std::thread::spawn(move || {
        for signal in signals.forever() {
            if signal == SIGINT && ignore_interrupts {
                continue;
            }
            // Waits until the loop is between chunks: complete lines are logged already.
            let errors = lock(&log).finish();
            for err in errors {
                eprintln!("smart-tee: {err}");
            }
            std::process::exit(128 + signal);
        }
    });
}
