//! Command-line flags, parsed with clap and checked into a [`Config`].
//!
//! Every rejected value exits with status 2 and a message that names the flag and the reason
//! (clap's convention); for the tee, standard input is copied to standard output first
//! ([`Mode::Refused`]). Nothing here panics on any input.

use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::{CommandFactory, FromArgMatches, Parser};

use crate::cut::engine::{DEFAULT_BUDGET, EngineConfig};
use crate::line::fields::{FieldClass, FieldClasses};
use crate::line::marker::{DEFAULT_MARKER, MarkerTemplate};
use crate::tee::stats::StatsReport;
pub use crate::tee::{Config, OutputError};

#[derive(Parser, Debug)]
#[command(
    name = "smart-tee",
    version,
    // A flag given twice is the flag given once, and for an option the last value counts, as
    // with GNU tee (`-a -a`); options that add up (`--preserve F`) keep every value.
    args_override_self = true,
    about = "Copy standard input to standard output unchanged, and to each FILE as a log of \
             valid JSON lines, each within a byte budget.",
    long_about = "Copy standard input to standard output unchanged, and to each FILE as a log of \
                  valid JSON lines, each within a byte budget.\n\n\
                  Made for AI-agent streams (claude -p --output-format stream-json): one log line \
                  per input line; lines that fit are logged byte for byte; longer lines keep \
                  their structure, ids, types, timestamps and errors while long strings are cut \
                  to head + marker + tail and long arrays keep their first and last elements; \
                  lines that are not JSON are logged as {\"type\":\"non_json\",\"text\":\"...\"}.",
    after_help = "Subcommands: smart-tee mcp [--root DIR]... serves the logs over MCP; smart-tee \
                  completions SHELL and smart-tee man print a completion script and the man page \
                  (a log named mcp, completions or man is written as ./mcp).\n\n\
                  Signals: SIGINT (unless -i), SIGTERM, SIGHUP and SIGQUIT log every line read, \
                  the unfinished one as a record, and exit 128+N. SIGUSR1 reopens the logs by \
                  their paths (for logrotate).\n\n\
                  Exit status: 0 on success; 1 if a log could not be opened or written, stdin \
                  could not be read, or stdout failed (closed, or a diagnosed error); 2 for bad \
                  flags or values (no log is written; unless stdin is a terminal, it is still \
                  copied to stdout); 128+N when ended by signal N (SIGHUP 129, SIGINT 130, \
                  SIGQUIT 131, SIGTERM 143)."
)]
struct Cli {
    /// Log files to write. With none, standard input is only copied to standard output. A file
    /// that cannot be opened is reported and skipped; standard output is still copied.
    #[arg(value_name = "FILE", value_parser = clap::value_parser!(std::ffi::OsString))]
    files: Vec<std::ffi::OsString>,

    /// Append to the logs instead of overwriting them.
    #[arg(short, long)]
    append: bool,

    /// Ignore SIGINT (interrupt).
    #[arg(short, long)]
    ignore_interrupts: bool,

    /// Same as --output-error=warn-nopipe. This is also the default.
    #[arg(short = 'p')]
    pipe: bool,

    /// What a write error does. Without this flag smart-tee acts as with warn-nopipe: a closed
    /// stdout is dropped silently and the logs go on (GNU tee would die of SIGPIPE). Given
    /// without a MODE, MODE is warn.
    #[arg(
        long,
        value_name = "MODE",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "warn"
    )]
    output_error: Option<OutputError>,

    /// Budget of one log line in bytes, newline excluded. Accepts K and M suffixes (1024-based);
    /// 0 means no truncation (the log still gets only valid JSON lines). The least accepted
    /// budget is 128. Without this flag, SMART_TEE_MAX_LINE_BYTES gives it; a bad value there
    /// is reported, naming the variable, and the default used.
    #[arg(
        short = 'b',
        long,
        value_name = "N",
        default_value_t = DEFAULT_BUDGET,
        value_parser = parse_size,
        allow_hyphen_values = true
    )]
    max_line_bytes: usize,

    /// Set when -b was not given (from the parse, not a flag).
    #[arg(skip)]
    budget_from_default: bool,

    /// A field whose values (and everything inside them) are never cut unless nothing else is
    /// left (repeatable; adds to the defaults: type, subtype, timestamp, error, is_error, ids of
    /// every agent such as id, uuid, session_id, tool_use_id, call_id, tool_id, thread_id,
    /// sessionID, callID, and name, tool, status, exit_code, path, model, role, usage and costs;
    /// docs/cut-policy.md says how they are chosen).
    #[arg(long, value_name = "FIELD")]
    preserve: Vec<String>,

    /// A field holding a copy of what the model saw; copies give up their bytes before any
    /// other field (repeatable; adds to the defaults: tool_use_result, toolUseResult,
    /// originalFile, filediff, beforeFullFileContent, afterFullFileContent). With --plain they
    /// are cut-first fields.
    #[arg(long, value_name = "FIELD")]
    duplicate: Vec<String>,

    /// A field whose values give up their bytes first, after duplicates (repeatable; adds to the
    /// defaults: data, tool_result, content, input, tool_input, output, aggregated_output,
    /// stdout, stderr, arguments, parameters, diff, patch, toolResult, resultDisplay).
    #[arg(long, value_name = "FIELD")]
    truncate_first: Vec<String>,

    /// A field whose values give up their bytes last, before only preserved fields (repeatable;
    /// adds to the defaults: text, result, summary).
    #[arg(long, value_name = "FIELD")]
    cut_last: Vec<String>,

    /// Start from no field rules: only --preserve, --duplicate, --truncate-first and --cut-last
    /// apply.
    #[arg(long)]
    no_default_fields: bool,

    /// Plain truncation: no base64 descriptors, duplicates are ordinary cut-first fields.
    /// Default: off (agent-aware cutting).
    #[arg(long)]
    plain: bool,

    /// Replace base64 payloads (images, signatures) by descriptors in lines that fit the budget
    /// too, not only in lines that are cut. Such lines are then rewritten compactly. Default: off.
    #[arg(long)]
    omit_images: bool,

    /// The marker put where a string was cut. {original} is the string's length and {kept} the
    /// bytes of it kept, both counting its JSON text between the quotes; at least one of them
    /// must be there, and no other {name}.
    #[arg(long, value_name = "FORMAT", default_value = DEFAULT_MARKER)]
    marker: String,

    /// Share of a cut string's kept bytes taken from its head (0 to 1); the rest is its tail.
    #[arg(long, value_name = "R", default_value_t = 0.5, value_parser = parse_ratio)]
    head_ratio: f64,

    /// Give every object line without a top-level "timestamp" the time it was received, as
    /// RFC 3339 UTC with milliseconds, added as its last key (in the logs only). Default: off.
    #[arg(long)]
    add_timestamp: bool,

    /// Replace secrets in the logs, --stats, --stats-json and --view's output (never on stdout)
    /// before cutting. By value, as [REDACTED:env:NAME]: the value of every environment variable whose
    /// name contains PASSWORD, PASSWD, SECRET, TOKEN or CREDENTIAL or ends in KEY (any case),
    /// when 8 bytes or more and not a flag, number or path, as written and JSON-escaped. By
    /// name, as [REDACTED:assignment]: the value after a name ending in password, passwd,
    /// secret, token, api_key, access_key, secret_key, private_key, storage_key or credentials
    /// and = or :,
    /// and the password of scheme://user:password@host URLs. By pattern, as [REDACTED:kind]:
    /// Anthropic, OpenAI, OpenRouter, Stripe (keys, whsec_), Google, npm, Hugging Face, GitHub,
    /// GitLab, Slack, Supabase, Tavily, Telegram bot, Twilio, SendGrid, Databricks,
    /// DigitalOcean, Linear, Notion, Shopify, PyPI, Doppler, Vercel Blob, Groq, xAI and
    /// Replicate tokens, AWS keys, Azure AccountKey= and SAS sig=, Discord Bot tokens, JWTs,
    /// bearer tokens, PEM private keys. Default: off.
    #[arg(long)]
    redact: bool,

    /// Redact the values of FILE (a dotenv file of NAME=VALUE lines) as those of the
    /// environment, by the same rules (implies --redact). A value is never printed.
    #[arg(long, value_name = "FILE")]
    redact_values: Option<PathBuf>,

    /// Cut stdout lines longer than N bytes with the same engine (valid JSON, structure kept);
    /// shorter lines pass byte for byte. An unfinished line is then held until its newline
    /// (past 8 MiB, reduced while read, in bounded memory).
    /// Accepts K and M suffixes; the least is 128. Default: off.
    #[arg(long, value_name = "N", value_parser = parse_size)]
    stdout_max_line_bytes: Option<usize>,

    /// At exit, print a summary on stderr: lines in, cut, not JSON; bytes in, logged, saved;
    /// and the fields that gave up the most bytes. Default: off.
    #[arg(long)]
    stats: bool,

    /// At exit, write the summary as a JSON object to FILE. Default: off.
    #[arg(long, value_name = "FILE")]
    stats_json: Option<PathBuf>,

    /// Also write the whole input, zstd-compressed, to FILE (exactly what stdout received; with
    /// --redact, redacted as the log is), in independent frames with an index, so that any log
    /// line's original can be read back (--view --original). Without this flag,
    /// SMART_TEE_ARCHIVE=1 writes one beside the first log, named LOG.orig.zst. With --view
    /// --original: the archive to read, when it is not LOG.orig.zst. With --compact: archive
    /// the log's lines to FILE before rewriting it.
    #[arg(long, value_name = "FILE")]
    archive: Option<PathBuf>,

    /// With --line: print each line's original bytes from the archive, exactly as they came
    /// in, and a newline (the log line numbered N, as the text view shows it: #N).
    #[arg(
        long,
        requires = "view",
        requires = "lines",
        help_heading = "Reading logs (--view)"
    )]
    original: bool,

    /// Only the events on these lines of the log (repeatable; N or a range N-M; the text view
    /// numbers each event #N).
    #[arg(
        long = "line",
        value_name = "N|N-M",
        requires = "view",
        value_parser = parse_line_range,
        help_heading = "Reading logs (--view)"
    )]
    lines: Vec<(u64, u64)>,

    /// With --original: start the page at this byte of the line (pages concatenate to the
    /// original; standard error says where the next page starts).
    #[arg(
        long,
        value_name = "BYTES",
        requires = "original",
        help_heading = "Reading logs (--view)"
    )]
    offset: Option<u64>,

    /// With --original: at most this many bytes of the line, from --offset (default: the rest
    /// of the line).
    #[arg(
        long,
        value_name = "BYTES",
        requires = "original",
        help_heading = "Reading logs (--view)"
    )]
    limit: Option<u64>,

    /// Read mode: the FILEs are logs to read (smart-tee logs, raw stream-json or Claude Code
    /// transcripts), printed to stdout as the options below say. Nothing is written.
    #[arg(long, help_heading = "Reading logs (--view)", conflicts_with_all = ["compact", "append", "ignore_interrupts", "pipe", "output_error", "stats", "stats_json", "stdout_max_line_bytes", "add_timestamp"])]
    view: bool,

    /// Only the last N events (lines). Large files are read from their end. Not with --head.
    #[arg(
        long,
        value_name = "N",
        requires = "view",
        conflicts_with = "head",
        help_heading = "Reading logs (--view)"
    )]
    tail: Option<usize>,

    /// Only the first N events.
    #[arg(
        long,
        value_name = "N",
        requires = "view",
        help_heading = "Reading logs (--view)"
    )]
    head: Option<usize>,

    /// Only events whose line matches PATTERN (a regular expression).
    #[arg(
        long,
        value_name = "PATTERN",
        requires = "view",
        help_heading = "Reading logs (--view)"
    )]
    grep: Option<String>,

    /// Only events of this `type` (repeatable).
    #[arg(
        long = "type",
        value_name = "T",
        requires = "view",
        help_heading = "Reading logs (--view)"
    )]
    types: Vec<String>,

    /// text: one readable line per event (time, type, gist); jsonl: events as log lines; json:
    /// one JSON array; html: one self-contained page (summary, charts, timeline) for a browser.
    #[arg(
        long,
        value_enum,
        default_value = "text",
        requires = "view",
        help_heading = "Reading logs (--view)"
    )]
    format: crate::read::view::Format,

    /// The whole output fits in N tokens, counted as bytes / --bytes-per-token: the oldest
    /// events are dropped first, long fields are cut, and a first line says how many events
    /// were left out. The least is 100.
    #[arg(long, value_name = "N", requires = "view", value_parser = parse_max_tokens, help_heading = "Reading logs (--view)")]
    max_tokens: Option<u64>,

    /// Bytes per token for --max-tokens. 3 overestimates tokens for English text and code, so
    /// the output stays within the reader's limit.
    #[arg(long, value_name = "R", default_value_t = 3.0, value_parser = parse_bytes_per_token, requires = "view", help_heading = "Reading logs (--view)")]
    bytes_per_token: f64,

    /// Keep printing new events as the logs grow, like tail -F: a log that does not exist yet or
    /// is replaced is waited for; a compacted log goes on where it was. Not with --format json.
    #[arg(long, requires = "view", help_heading = "Reading logs (--view)")]
    follow: bool,

    /// Instead of the events, one summary of them: session, model, time, turns, cost, tokens,
    /// tools used, errors, files written, and how the run ended (text, or JSON with --format
    /// json or jsonl).
    #[arg(
        long,
        requires = "view",
        conflicts_with = "follow",
        help_heading = "Reading logs (--view)"
    )]
    summary: bool,

    /// With --summary: a run whose writer still holds the log reads `stalled` after SECS
    /// seconds without an event (heartbeats do not count).
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 120,
        requires = "summary",
        help_heading = "Reading logs (--view)"
    )]
    stall_after: u64,

    /// Leave out events of this `type` (repeatable), e.g. --exclude-type progress.
    #[arg(
        long = "exclude-type",
        value_name = "T",
        requires = "view",
        help_heading = "Reading logs (--view)"
    )]
    exclude_types: Vec<String>,

    /// Only events that report a failure: is_error, an error, a non-success result, a failed
    /// status or a non-zero exit code.
    #[arg(long, requires = "view", help_heading = "Reading logs (--view)")]
    errors: bool,

    /// Only events at or after TIME: an RFC 3339 date or date-time (2026-11-20,
    /// 2026-11-20T10:30:00Z, 2026-11-20 10:30+02:00; UTC when no offset is given) or an age
    /// (90s, 15m, 2h, 3d). Compared as instants; events without a time are left out.
    #[arg(
        long,
        value_name = "TIME",
        requires = "view",
        help_heading = "Reading logs (--view)"
    )]
    since: Option<String>,

    /// Only events before TIME (as --since).
    #[arg(
        long,
        value_name = "TIME",
        requires = "view",
        help_heading = "Reading logs (--view)"
    )]
    until: Option<String>,

    /// Colour the text view by event kind: auto (when stdout is a terminal and NO_COLOR is not
    /// set), always or never. On a terminal, lines are also cut to its width.
    #[arg(
        long,
        value_name = "WHEN",
        default_value = "auto",
        value_parser = ["auto", "always", "never"],
        requires = "view",
        help_heading = "Reading logs (--view)"
    )]
    color: String,

    /// Rewrite the FILEs in place to the budget and the field rules, atomically (a temporary
    /// file beside each, synced, renamed over it; permissions kept). A file being appended to
    /// meanwhile is refused.
    #[arg(long, help_heading = "Compacting logs (--compact)", conflicts_with_all = ["append", "ignore_interrupts", "pipe", "output_error", "stats", "stats_json", "stdout_max_line_bytes", "add_timestamp"])]
    compact: bool,

    /// With --compact: change nothing, report per file lines, bytes before and after, lines
    /// cut and lines not JSON.
    #[arg(
        long,
        requires = "compact",
        help_heading = "Compacting logs (--compact)"
    )]
    dry_run: bool,

    /// Permission bits, in octal, of log files that smart-tee creates (existing files keep
    /// theirs; the umask applies). The default keeps agent logs private. Setuid, setgid and
    /// sticky bits are refused.
    #[arg(long, value_name = "OCTAL", default_value = "600", value_parser = parse_mode)]
    file_mode: u32,
}

/// What smart-tee was asked to do.
#[derive(Debug)]
pub enum Mode {
    /// `smart-tee mcp [--root DIR]...`: serve the logs under the roots over MCP (stdio).
    Mcp {
        roots: Vec<PathBuf>,
        /// Serve logs in hidden folders (`--hidden`).
        hidden: bool,
        /// Serve files that have other hard links (`--hard-links`).
        hard_links: bool,
    },
    /// `smart-tee completions SHELL`: the shell's completion script on stdout.
    Completions(clap_complete::Shell),
    /// `smart-tee man`: the man page (roff) on stdout.
    Man,
    Tee(Config),
    View(Box<crate::read::view::ViewOptions>),
    Compact {
        files: Vec<PathBuf>,
        engine: EngineConfig,
        dry_run: bool,
        /// `--archive FILE`: the logs' lines are archived there first.
        archive: Option<PathBuf>,
    },
    /// `--view --original --line N LOG`: lines' original bytes from the archive.
    Original(crate::tee::archive::original::OriginalRequest),
    /// A malformed command line for the tee (not for `--view`, `--compact` or a subcommand):
    /// the caller says why, copies stdin to stdout all the same (a typo in a pipeline must not
    /// cost the stream), and exits with status 2.
    Refused(clap::Error),
}

/// The environment variable that gives the budget when `-b` does not.
pub const BUDGET_VAR: &str = "SMART_TEE_MAX_LINE_BYTES";

/// Parses the process's arguments. On a bad flag or value: for the tee, [`Mode::Refused`];
/// for the other modes, prints why and exits with status 2.
pub fn parse() -> Mode {
    parse_from(std::env::args_os())
}

pub fn parse_from<I, T>(args: I) -> Mode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    // Subcommands come first; a log named like one is written as `./mcp`.
    match args.get(1).and_then(|a| a.to_str()) {
        Some("mcp") => return parse_mcp(&args[1..]),
        Some("completions") => return parse_completions(&args[1..]),
        Some("man") if args.len() == 2 => return Mode::Man,
        _ => {}
    }
    let args = summary_implies_view(args);
    let reads = reads_logs(&args);
    let refuse = |e: clap::Error| match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => e.exit(),
        _ if reads => e.exit(),
        _ => Mode::Refused(e),
    };
    let matches = match Cli::command().try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) => return refuse(e),
    };
    let mut cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => return refuse(e),
    };
    cli.budget_from_default =
        matches.value_source("max_line_bytes") == Some(clap::parser::ValueSource::DefaultValue);
    match cli.into_mode() {
        Ok(mode) => mode,
        Err(msg) => refuse(Cli::command().error(ErrorKind::ValueValidation, msg)),
    }
}

/// `--summary` alone means `--view --summary`: a summary is only ever of logs read back.
fn summary_implies_view(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let flags = || args.iter().skip(1).take_while(|a| *a != "--");
    if flags().any(|a| a == "--summary") && !flags().any(|a| a == "--view" || a == "--compact") {
        args.insert(1.min(args.len()), "--view".into());
    }
    args
}

/// True when the command line asks for a mode that reads logs (`--view`, `--compact`) rather
/// than the tee: there, a malformed command line copies nothing.
fn reads_logs(args: &[std::ffi::OsString]) -> bool {
    args.iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| a == "--view" || a == "--compact")
}

/// The secrets to redact by value: the environment's, and those of `file` (`--redact-values`).
fn secrets(file: Option<&std::path::Path>) -> Result<Vec<crate::cut::redact::Secret>, String> {
    let mut secrets = crate::cut::redact::from_env();
    if let Some(path) = file {
        secrets.extend(
            crate::cut::redact::from_dotenv(path).map_err(|e| format!("--redact-values: {e}"))?,
        );
    }
    Ok(secrets)
}

/// `smart-tee mcp [--root DIR]... [--hidden] [--hard-links] [--redact] [--redact-values FILE]`.
fn mcp_command() -> clap::Command {
    clap::Command::new("mcp")
        .bin_name("smart-tee mcp")
        .about(
            "Serve the agent logs under the roots to MCP clients over stdio, read-only: tools \
             list_logs, read_log, log_summary, wait_for_log and read_original. Only logs under the roots are \
             served: regular files named .jsonl, .ndjson or .log (and rotated .N/.gz/.zst \
             forms) whose first line is a JSON object, outside hidden folders, opened once \
             beneath the root without following symlinks out.",
        )
        .arg(
            clap::Arg::new("root")
                .long("root")
                .value_name("DIR")
                .action(clap::ArgAction::Append)
                .value_parser(clap::value_parser!(PathBuf))
                .value_hint(clap::ValueHint::DirPath)
                .help("A directory whose logs may be read (repeatable) [default: the current directory]"),
        )
        .arg(
            clap::Arg::new("hidden")
                .long("hidden")
                .action(clap::ArgAction::SetTrue)
                .help("Also serve logs in hidden folders (names starting with '.'), skipped by default"),
        )
        .arg(
            clap::Arg::new("hard-links")
                .long("hard-links")
                .action(clap::ArgAction::SetTrue)
                .help("Also serve files that have other hard links (refused by default: another name may be outside the roots)"),
        )
        .arg(
            clap::Arg::new("redact")
                .long("redact")
                .action(clap::ArgAction::SetTrue)
                .help("Redact every answer as smart-tee --redact redacts the logs"),
        )
        .arg(
            clap::Arg::new("redact-values")
                .long("redact-values")
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .help("Redact the values of this dotenv file too (implies --redact)"),
        )
}

fn parse_mcp(args: &[std::ffi::OsString]) -> Mode {
    let m = mcp_command().get_matches_from(args);
    let values = m.get_one::<PathBuf>("redact-values");
    if m.get_flag("redact") || values.is_some() {
        match secrets(values.map(PathBuf::as_path)) {
            Ok(secrets) => crate::cut::redact::answers_on(&secrets),
            Err(e) => {
                eprintln!("smart-tee mcp: {e}");
                std::process::exit(2);
            }
        }
    }
    let roots = m
        .get_many::<PathBuf>("root")
        .map(|r| r.cloned().collect())
        .unwrap_or_default();
    Mode::Mcp {
        roots,
        hidden: m.get_flag("hidden"),
        hard_links: m.get_flag("hard-links"),
    }
}

/// `smart-tee completions SHELL`.
fn completions_command() -> clap::Command {
    clap::Command::new("completions")
        .bin_name("smart-tee completions")
        .about("Print the completion script of SHELL (bash, zsh, fish, elvish, powershell)")
        .arg(
            clap::Arg::new("shell")
                .required(true)
                .value_parser(clap::value_parser!(clap_complete::Shell)),
        )
}

fn parse_completions(args: &[std::ffi::OsString]) -> Mode {
    let m = completions_command().get_matches_from(args);
    match m.get_one::<clap_complete::Shell>("shell") {
        Some(&shell) => Mode::Completions(shell),
        None => Mode::Man, // unreachable: the argument is required
    }
}

/// The command's definition, for completions and the man page: the tee's flags, the FILEs
/// (any number), and the subcommands, which `parse_from` handles before clap sees the rest.
pub fn command() -> clap::Command {
    Cli::command()
        // clap_mangen writes a positional's value name without clap's `...`.
        .mut_arg("files", |a| {
            a.value_name("FILE...")
                .value_hint(clap::ValueHint::FilePath)
        })
        .subcommand(mcp_command())
        .subcommand(completions_command())
        .subcommand(clap::Command::new("man").about("Print the man page (roff)"))
        .args_conflicts_with_subcommands(true)
        .disable_help_subcommand(true)
}

impl Cli {
    fn into_mode(mut self) -> Result<Mode, String> {
        let (view, compact) = (self.view, self.compact);
        if view {
            // `-` is standard input, as for cat, jq and less; so is no FILE when standard
            // input is not a terminal (`agent | smart-tee --view`).
            let stdin_is_terminal = std::io::IsTerminal::is_terminal(&std::io::stdin());
            if self.files.is_empty() && !stdin_is_terminal {
                self.files.push("-".into());
            }
            if self.follow && self.files.iter().any(|f| f == "-") {
                return Err(
                    "--follow waits for files to grow; standard input (-) is read to \
                            its end: give the log's path"
                        .into(),
                );
            }
        }
        if (view || compact) && self.files.is_empty() {
            return Err(format!(
                "--{} needs at least one FILE",
                if view { "view" } else { "compact" }
            ));
        }
        let grep = match self.grep.take() {
            Some(p) => {
                Some(regex::bytes::Regex::new(&p).map_err(|e| format!("--grep {p:?}: {e}"))?)
            }
            None => None,
        };
        let (tail, head, types, format) = (
            self.tail,
            self.head,
            std::mem::take(&mut self.types),
            self.format,
        );
        let (max_tokens, bytes_per_token, follow, dry_run) = (
            self.max_tokens,
            self.bytes_per_token,
            self.follow,
            self.dry_run,
        );
        if format == crate::read::view::Format::Html && (follow || self.summary) {
            return Err(
                "--format html is one finished page that holds the summary: not with \
                        --follow or --summary"
                    .into(),
            );
        }
        if follow && format == crate::read::view::Format::Json {
            return Err(
                "--follow prints events as they come, which a JSON array cannot hold; \
                        use --format jsonl or text"
                    .into(),
            );
        }
        let exclude_types = std::mem::take(&mut self.exclude_types);
        let now = std::time::SystemTime::now();
        let bound = |flag: &str, v: Option<String>| {
            v.map(|v| crate::read::when::parse_bound(flag, &v, now))
                .transpose()
        };
        let (errors, since, until) = (
            self.errors,
            bound("--since", self.since.take())?,
            bound("--until", self.until.take())?,
        );
        let (summary, stall_after) = (
            self.summary,
            std::time::Duration::from_secs(self.stall_after),
        );
        let (archive, original, lines) = (
            self.archive.clone(),
            self.original,
            std::mem::take(&mut self.lines),
        );
        let page = match (self.offset, self.limit) {
            (None, None) => None,
            (offset, limit) => Some((offset.unwrap_or(0), limit)),
        };
        let terminal = std::io::IsTerminal::is_terminal(&std::io::stdout());
        let color = match self.color.as_str() {
            "always" => true,
            "never" => false,
            _ => terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        };
        let width = terminal
            .then(|| rustix::termios::tcgetwinsize(rustix::stdio::stdout()).ok())
            .flatten()
            .map(|w| usize::from(w.ws_col))
            .filter(|&w| w >= 20);
        let config = self.into_config()?;
        if view && config.engine.redact {
            crate::cut::redact::answers_on(&config.engine.secrets);
        }
        if original {
            if config.files.len() != 1 {
                return Err("--original reads one LOG".into());
            }
            if page.is_some() && (lines.len() != 1 || lines[0].0 != lines[0].1) {
                return Err("--offset and --limit page through one line: give one --line N".into());
            }
            return Ok(Mode::Original(
                crate::tee::archive::original::OriginalRequest {
                    log: config.files[0].clone(),
                    archive,
                    lines,
                    page,
                },
            ));
        }
        Ok(if view {
            Mode::View(Box::new(crate::read::view::ViewOptions {
                files: config.files,
                head,
                tail,
                grep,
                types,
                exclude_types,
                errors,
                since,
                until,
                format,
                max_tokens: max_tokens.map(|t| t as usize),
                bytes_per_token,
                follow,
                color: color && format == crate::read::view::Format::Text,
                width,
                summary,
                stall_after,
                engine: config.engine,
                lines,
                ..crate::read::view::ViewOptions::new(Vec::new())
            }))
        } else if compact {
            Mode::Compact {
                files: config.files,
                engine: config.engine,
                dry_run,
                archive,
            }
        } else {
            Mode::Tee(config)
        })
    }

    fn into_config(self) -> Result<Config, String> {
        let mut fields = if self.no_default_fields {
            FieldClasses::default()
        } else {
            FieldClasses::defaults()
        };
        fields.extend(&self.duplicate, FieldClass::Duplicate);
        fields.extend(&self.truncate_first, FieldClass::CutFirst);
        fields.extend(&self.cut_last, FieldClass::CutLast);
        fields.extend(&self.preserve, FieldClass::Preserved);
        let mut warnings = Vec::new();
        let marker = MarkerTemplate::check(&self.marker).map_err(|e| format!("--marker: {e}"))?;
        let mut engine = EngineConfig {
            max_line_bytes: self.max_line_bytes,
            head_ratio: self.head_ratio,
            marker,
            fields: if self.plain {
                fields.without_duplicates()
            } else {
                fields
            },
            value_aware: !self.plain,
            omit_images: self.omit_images,
            add_timestamp: self.add_timestamp,
            redact: self.redact || self.redact_values.is_some(),
            secrets: Vec::new(),
            field_stats: self.stats || self.stats_json.is_some(),
        };
        if engine.redact {
            engine.secrets = secrets(self.redact_values.as_deref())?;
        }
        if self.plain && self.omit_images {
            return Err("--omit-images needs value-aware cutting; drop --plain".into());
        }
        let floor = engine.min_budget();
        if self.budget_from_default
            && let Some(value) = std::env::var_os(BUDGET_VAR)
        {
            // A bad value in the environment must not cost the stream: said, and the default
            // used.
            let value = value.to_string_lossy().into_owned();
            match parse_size(&value) {
                Ok(n) if n == 0 || n >= floor => engine.max_line_bytes = n,
                Ok(n) => warnings.push(format!(
                    "{BUDGET_VAR}={value}: {n} is below {floor}, the least that holds a marker \
                     record; using the default {DEFAULT_BUDGET}"
                )),
                Err(e) => warnings.push(format!(
                    "{BUDGET_VAR}={value}: {e}; using the default {DEFAULT_BUDGET}"
                )),
            }
        }
        if engine.max_line_bytes != 0 && engine.max_line_bytes < floor {
            return Err(format!(
                "--max-line-bytes {} is below {floor}, the least that holds a marker record{}; \
                 use 0 for no truncation",
                engine.max_line_bytes,
                if floor > crate::cut::engine::MIN_BUDGET {
                    " with this --marker"
                } else {
                    ""
                },
            ));
        }
        if let Some(n) = self.stdout_max_line_bytes.filter(|&n| n != 0 && n < floor) {
            return Err(format!(
                "--stdout-max-line-bytes {n} is below {floor}, the least that holds a marker record"
            ));
        }
        let output_error = match (self.output_error, self.pipe) {
            (Some(mode), _) => mode,
            (None, _) => OutputError::WarnNopipe,
        };
        let files: Vec<PathBuf> = self.files.into_iter().map(PathBuf::from).collect();
        // --archive, or the environment's archive beside the first log.
        let archive = match self.archive {
            Some(path) => Some(path),
            None if crate::tee::archive::wanted_by_env() => {
                if files.is_empty() {
                    warnings.push(format!(
                        "{}: no log to put the archive beside; no archive is written",
                        crate::tee::archive::ARCHIVE_VAR
                    ));
                }
                files.first().map(|f| crate::tee::archive::default_path(f))
            }
            None => None,
        };
        Ok(Config {
            archive,
            files,
            warnings,
            append: self.append,
            ignore_interrupts: self.ignore_interrupts,
            output_error,
            file_mode: self.file_mode,
            engine,
            stdout_max_line_bytes: self.stdout_max_line_bytes.filter(|&n| n > 0),
            stats: StatsReport {
                human: self.stats,
                json: self.stats_json,
            },
        })
    }
}

/// Parses a byte count: digits with an optional K or M suffix (1024-based; KB, KiB, MB and MiB
/// are accepted too, in any case).
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("expected a number of bytes such as 5120, 8K or 1M".into());
    }
    if t.starts_with('-') {
        return Err(format!(
            "{s:?} is negative; expected a number of bytes such as 5120, 8K or 1M"
        ));
    }
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(split);
    let unit: u64 = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1024,
        "m" | "mb" | "mib" => 1024 * 1024,
        _ => {
            return Err(format!(
                "{s:?} is not a number of bytes; expected digits with an optional K or M suffix"
            ));
        }
    };
    if digits.is_empty() {
        return Err(format!(
            "{s:?} has no digits; expected a number of bytes such as 5120, 8K or 1M"
        ));
    }
    let too_large = || format!("{s:?} is too large");
    let n: u64 = digits.parse().map_err(|_| too_large())?;
    let n = n.checked_mul(unit).ok_or_else(too_large)?;
    // Offsets in a line are kept in 32 bits: no budget needs more.
    if n > u32::MAX as u64 {
        return Err(format!(
            "{s:?} is too large; the largest budget is 4294967295 bytes"
        ));
    }
    Ok(n as usize)
}

/// Parses `--line`: `N` or `N-M` (line numbers from 1, M at least N).
fn parse_line_range(s: &str) -> Result<(u64, u64), String> {
    let bad = || format!("{s:?} is not a line number N or a range N-M (from 1)");
    let num = |t: &str| t.trim().parse::<u64>().ok().filter(|&n| n > 0);
    match s.split_once('-') {
        None => num(s).map(|n| (n, n)).ok_or_else(bad),
        Some((a, b)) => match (num(a), num(b)) {
            (Some(a), Some(b)) if a <= b => Ok((a, b)),
            _ => Err(bad()),
        },
    }
}

fn parse_bytes_per_token(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(r) if (0.5..=100.0).contains(&r) => Ok(r),
        _ => Err(format!(
            "{s:?} is not a number of bytes per token between 0.5 and 100"
        )),
    }
}

/// `--max-tokens`: a whole number of tokens, at least 100 (a budget that holds a line of
/// output and the note of what was left out).
fn parse_max_tokens(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if n >= 100 => Ok(n),
        Ok(_) => Err(format!("{s:?} is too small: the least is 100 tokens")),
        Err(_) => Err(format!(
            "{s:?} is not a whole number of tokens (100 or more)"
        )),
    }
}

fn parse_ratio(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(r) if (0.0..=1.0).contains(&r) => Ok(r),
        _ => Err(format!("{s:?} is not a ratio between 0 and 1")),
    }
}

fn parse_mode(s: &str) -> Result<u32, String> {
    match u32::from_str_radix(s.trim(), 8) {
        Ok(m) if m <= 0o777 => Ok(m),
        Ok(m) if m <= 0o7777 => Err(format!(
            "{s:?} has setuid, setgid or sticky bits, which a log must not have; use a mode \
             such as 600 or 644"
        )),
        _ => Err(format!(
            "{s:?} is not an octal file mode such as 600 or 644"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("5120"), Ok(5120));
        assert_eq!(parse_size("8K"), Ok(8192));
        assert_eq!(parse_size("8k"), Ok(8192));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("2MiB"), Ok(2 << 20));
        assert_eq!(parse_size("0"), Ok(0));
        for bad in [
            "",
            "-1",
            "abc",
            "1.5K",
            "K",
            "1T",
            "99999999999999999999999",
            "4096M",
        ] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn default_mode_is_private() {
        assert_eq!(parse_mode("600"), Ok(crate::tee::sink::DEFAULT_MODE));
        assert_eq!(parse_mode("777"), Ok(0o777));
        for bad in ["999", "7777", "4755", "1644", "2600", "-1", ""] {
            assert!(parse_mode(bad).is_err(), "{bad}");
        }
    }
}
