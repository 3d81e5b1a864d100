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

/// Writes `bytes` to stdout; a reader that went away (`| head`) is not an error.
fn print_all(what: &str, bytes: &[u8]) -> ExitCode {
    use std::io::Write;
    let mut out = smart_tee::door::stdout();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            smart_tee::say!("smart-tee: {what}: writing standard output: {e}");
            ExitCode::from(1)
        }
    }
}

/// A malformed command line for the tee: says why, then copies stdin to stdout as `cat`
/// would, so that a typo in `agent | smart-tee --bad LOG | next` costs the log, not the stream.
/// Not from a terminal: there the user reads the message and types again. Status 2.
fn refused(error: &clap::Error) -> ExitCode {
    use std::io::IsTerminal;
    smart_tee::door::clap_message(error);
    if std::io::stdin().is_terminal() {
        return ExitCode::from(2);
    }
    smart_tee::say!("smart-tee: no log is written; standard input is copied to standard output");
    // The stream itself, as the tee writes it: unchanged, waiting on a non-blocking pipe.
    let (mut stdin, mut stdout) = (smart_tee::tee::fd::Stdin, smart_tee::tee::fd::Stdout);
    match std::io::copy(&mut stdin, &mut stdout) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            smart_tee::say!("smart-tee: copying standard input to standard output: {e}");
        }
        _ => {}
    }
    ExitCode::from(2)
}

/// --progress shows the text view's line of each event: the renderer comes from the reading
/// phase, which the tee does not use.
fn progress_renderer() -> smart_tee::tee::progress::MakeRender {
    Box::new(|color, width| Box::new(smart_tee::read::view::progress_renderer(color, width)))
}

fn main() -> ExitCode {
    let mode = cli::parse();
    if !matches!(mode, Mode::Tee(_) | Mode::Run(_)) {
        ignore_reopen_signal();
    }
    match mode {
        Mode::Tee(config) => smart_tee::tee::run(config, Some(progress_renderer())),
        Mode::Run(options) => cli::run::run(*options, Some(progress_renderer())),
        Mode::Refused(error) => refused(&error),
        #[cfg(feature = "mcp")]
        Mode::Mcp {
            roots,
            hidden,
            hard_links,
        } => smart_tee::mcp::run(smart_tee::mcp::McpOptions {
            roots,
            hidden,
            hard_links,
        }),
        #[cfg(not(feature = "mcp"))]
        Mode::Mcp { .. } => {
            smart_tee::say!(
                "smart-tee: mcp: this build has no MCP server (built without the mcp feature)"
            );
            ExitCode::from(2)
        }
        Mode::Completions(shell) => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut cli::command(), "smart-tee", &mut script);
            print_all("completions", &script)
        }
        Mode::Man => {
            let mut page = Vec::new();
            match cli::man_page(&mut page) {
                Ok(()) => print_all("man", &page),
                Err(e) => {
                    smart_tee::say!("smart-tee: man: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Mode::View(mut options) => {
            // `-`: standard input, read to its end into a private file first, since reading
            // a log back seeks (its end for --tail, its first bytes for the format).
            let spooled = match smart_tee::read::view::spool_stdin(&mut options.files) {
                Ok(spooled) => spooled,
                Err(e) => {
                    smart_tee::say!("smart-tee: reading standard input: {e}");
                    return ExitCode::from(1);
                }
            };
            let status = view(&options);
            drop(spooled);
            status
        }
        Mode::Original(req) => {
            let (mut out, mut err) = (smart_tee::door::stdout(), smart_tee::door::stderr());
            match smart_tee::tee::archive::original::run(&req, &mut out, &mut err) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::from(1),
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(e) => {
                    smart_tee::say!("smart-tee: --original: writing standard output: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Mode::Compact {
            files,
            engine,
            dry_run,
            archive,
        } => {
            // A write past a file-size limit should fail with an error (and leave the original
            // intact), not kill the process with SIGXFSZ.
            let _ = signal_hook::flag::register(
                signal_hook::consts::SIGXFSZ,
                std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
            );
            // --compact --archive (hook: `archive` module): the lines first, then the rewrite.
            // The archive takes a plain log's lines; a compressed one is refused before anything.
            if archive.is_some()
                && let Some(log) = files.iter().find(|f| {
                    std::fs::File::open(f)
                        .and_then(|f| smart_tee::read::log::is_compressed(&f))
                        .unwrap_or(false)
                })
            {
                smart_tee::say!(
                    "smart-tee: --compact --archive: {} is compressed; archive its lines from a \
                     plain copy (zcat it to a file), or compact it without --archive",
                    log.display()
                );
                return ExitCode::from(1);
            }
            if let Some(path) = archive.as_ref().filter(|_| !dry_run)
                && !smart_tee::tee::archive::writer::archive_logs(&files, path, &engine, |log| {
                    // With --redact the compaction reads each line as the read side does: the
                    // archive takes the same lines, so each original matches its log line.
                    if engine.redact {
                        Box::new(smart_tee::read::lines_in::LinesIn::new(log, 1 << 20))
                    } else {
                        log
                    }
                })
            {
                return ExitCode::from(1);
            }
            if smart_tee::read::compact::run(&files, &engine, dry_run) {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
    }
}

/// `--view`'s run and its exit status.
fn view(options: &smart_tee::read::log::ViewOptions) -> ExitCode {
    match smart_tee::read::view::run(options) {
        Ok(true) => ExitCode::SUCCESS,
        // A file could not be read: said, and the others shown.
        Ok(false) => ExitCode::from(1),
        // A reader that went away (`| head`) is not an error.
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            smart_tee::say!("smart-tee: {e}");
            ExitCode::from(1)
        }
    }
}
