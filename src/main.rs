//! The smart-tee binary: parse the flags, run the mode asked for, exit with its status.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use smart_tee::cli::{self, Mode};

/// SIGUSR1 asks smart-tee writers to reopen their logs (`pkill -USR1 -x smart-tee` after
/// logrotate); a reader or a compaction must not die of it.
fn ignore_reopen_signal() {
    let _ = signal_hook::flag::register(
        signal_hook::consts::SIGUSR1,
        std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
    );
}

fn main() -> ExitCode {
    let mode = cli::parse();
    if !matches!(mode, Mode::Tee(_)) {
        ignore_reopen_signal();
    }
    match mode {
        Mode::Tee(config) => smart_tee::tee::run(config),
        Mode::View(options) => match smart_tee::view::run(&options) {
            Ok(true) => ExitCode::SUCCESS,
            // A file could not be read: said, and the others shown.
            Ok(false) => ExitCode::from(1),
            // A reader that went away (`| head`) is not an error.
            Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("smart-tee: {e}");
                ExitCode::from(1)
            }
        },
        Mode::Compact {
            files,
            engine,
            dry_run,
        } => {
            // A write past a file-size limit should fail with an error (and leave the original
            // intact), not kill the process with SIGXFSZ.
            let _ = signal_hook::flag::register(
                signal_hook::consts::SIGXFSZ,
                std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
            );
            if smart_tee::compact::run(&files, &engine, dry_run) {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
    }
}
