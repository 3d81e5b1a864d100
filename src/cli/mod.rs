//! Command-line flags, parsed with clap and checked into a [`Config`].
//!
//! Every rejected value exits with status 2 and a message that names the flag and the reason
//! (clap's convention); for the tee, standard input is copied to standard output first
//! ([`Mode::Refused`]). Nothing here panics on any input.

mod checks;
pub mod run;
mod subcommands;
mod values;

pub use self::subcommands::{command, man_page};
use self::subcommands::{parse_completions, parse_mcp};
pub use self::values::parse_size;
use self::values::{
    parse_bytes_per_token, parse_line_range, parse_max_tokens, parse_mode, parse_ratio,
};

use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::{CommandFactory, FromArgMatches, Parser};

use crate::cut::engine::{DEFAULT_BUDGET, EngineConfig};
use crate::line::marker::DEFAULT_MARKER;
pub use crate::tee::{Config, OutputError};

/// What `-h` adds after its few flags: three examples and the modes. `--help` has every flag.
const SHORT_AFTER_HELP: &str = "Examples:\n  \
    claude -p \"$P\" --output-format stream-json --verbose | smart-tee --add-timestamp logs/a.jsonl\n  \
    smart-tee --view --tail 20 logs/a.jsonl     # read a log back, one line per event\n  \
    smart-tee --summary logs/*.jsonl            # what happened, what it cost, how it ended\n\n\
    Modes: --view (read logs: --tail, --grep, --errors, --format html, --original), --summary, \
    --compact (rewrite old logs), smart-tee run (supervise the agent), smart-tee mcp (serve logs to agents), smart-tee completions \
    SHELL, smart-tee man.\n\n\
    Every flag, signals and exit status: smart-tee --help.";

/// The flags `-h` shows (by id), each with a line of its own there; `--help` shows every flag
/// with its whole text.
const SHORT_HELP: &[(&str, &str)] = &[
    (
        "files",
        "Log files to write (none: standard input is only copied to standard output)",
    ),
    ("append", ""),
    (
        "max_line_bytes",
        "Budget of one log line in bytes (K and M suffixes; 0: no cut)",
    ),
    (
        "add_timestamp",
        "Give each event the time it arrived, when the agent gives none",
    ),
    (
        "archive",
        "Also keep the whole input in FILE, zstd-compressed (--view --original)",
    ),
    (
        "redact",
        "Replace secrets in every byte written or answered (never on stdout)",
    ),
    ("stats", ""),
    ("help", ""),
    ("version", ""),
];

/// The tee's command as the user meets it: `-h` with the few flags of [`SHORT_HELP`] and three
/// examples, `--help` with every flag and the examples at the end.
pub(crate) fn tee_command() -> clap::Command {
    Cli::command().mut_args(|a| {
        let short = SHORT_HELP.iter().find(|(id, _)| *id == a.get_id().as_str());
        match short {
            None => a.hide_short_help(true),
            Some((_, "")) => a,
            Some((_, line)) => {
                let long = a.get_long_help().or(a.get_help()).cloned();
                let a = a.help(*line);
                match long {
                    Some(long) => a.long_help(long),
                    None => a,
                }
            }
        }
    })
}

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
    after_help = SHORT_AFTER_HELP,
    after_long_help = "Subcommands: smart-tee run [OPTIONS] LOG... -- COMMAND runs the agent under the \
                  tee and stops it on a stall, a timeout or a cost ceiling (smart-tee run --help); \
                  smart-tee mcp [--root DIR]... serves the logs over MCP; smart-tee \
                  completions SHELL and smart-tee man print a completion script and the man page \
                  (a log named run, mcp, completions or man is written as ./run, ./mcp…).\n\n\
                  Signals: SIGINT (unless -i), SIGTERM, SIGHUP and SIGQUIT log every line read, \
                  the unfinished one as a record, and exit 128+N. SIGUSR1 reopens the logs by \
                  their paths (for logrotate).\n\n\
                  Exit status: 0 on success; 1 if a log could not be opened or written, stdin \
                  could not be read, or stdout failed (closed, or a diagnosed error); 2 for bad \
                  flags or values (no log is written; unless stdin is a terminal, it is still \
                  copied to stdout); 128+N when ended by signal N (SIGHUP 129, SIGINT 130, \
                  SIGQUIT 131, SIGTERM 143).\n\n\
                  Examples:\n\
                  \x20 claude -p \"$P\" --output-format stream-json --verbose | smart-tee --add-timestamp logs/a.jsonl\n\
                  \x20 codex exec --json \"$PROMPT\" | smart-tee -a --archive logs/all.orig.zst logs/all.jsonl\n\
                  \x20 smart-tee --view --tail 20 logs/run.jsonl        # the end of the run, readable\n\
                  \x20 smart-tee --summary logs/*.jsonl                 # what happened, what it cost\n\
                  \x20 smart-tee --view --original --line 6 logs/run.jsonl   # a cut line's original\n\
                  \x20 smart-tee --compact -b 2K logs/old.jsonl          # rewrite an old log to the budget\n\
                  \x20 smart-tee mcp --root logs                        # serve the logs to an agent"
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

    /// Replace secrets in everything smart-tee writes or answers (never on stdout): the logs, the
    /// archive, stderr, --stats, --stats-json, --progress and every --view answer, each redacted whole
    /// before it is cut or paged. By value, as [REDACTED:env:NAME]: the value of every environment variable whose
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

    /// Print each event's line of the text view (as --view shows it) on standard error as it
    /// is logged, coloured on a terminal unless NO_COLOR is set; --progress=FILE appends them
    /// to FILE instead (the value only with =, so that --progress LOG names a log). Standard
    /// output stays the input byte for byte. At most 200 lines a second (bursts of 400) are
    /// shown: the others, and those a slow destination cannot take, are counted, and the
    /// stream never waits. Default: off.
    #[arg(
        long,
        value_name = "FILE",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "-"
    )]
    progress: Option<PathBuf>,

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
    #[arg(long, help_heading = "Reading logs (--view)", conflicts_with_all = ["compact", "append", "ignore_interrupts", "pipe", "output_error", "stats", "stats_json", "stdout_max_line_bytes", "add_timestamp", "progress"])]
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
    /// one JSON array; html: one self-contained page (summary, charts, timeline) for a browser;
    /// csv: --summary's table of runs.
    #[arg(
        long,
        value_enum,
        default_value = "text",
        requires = "view",
        help_heading = "Reading logs (--view)"
    )]
    format: crate::read::log::Format,

    /// The whole output fits in N tokens, counted as bytes / --bytes-per-token: the oldest
    /// events are dropped first, long fields are cut, and a first line says how many events
    /// were left out. The least is 100. A report page (--format html) takes at least 32 KiB.
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

    /// With --summary: one row per run (file, conversation, agent, model, start, duration,
    /// state, turns, calls/failed, tokens, cost) and a total row, sorted by start; the text
    /// --summary of more than 10 conversations is this table. Also --format json or csv.
    #[arg(long, requires = "summary", help_heading = "Reading logs (--view)")]
    by_run: bool,

    /// With --summary: estimate the cost of runs whose log reports none with this price
    /// table (JSON, USD per million tokens per model, dated; docs/health.md) instead of the
    /// one smart-tee ships.
    #[arg(
        long,
        value_name = "FILE",
        requires = "summary",
        help_heading = "Reading logs (--view)"
    )]
    prices: Option<PathBuf>,

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
    /// meanwhile is refused. A gzip or zstd log (a rotated .gz) stays compressed.
    #[arg(long, help_heading = "Compacting logs (--compact)", conflicts_with_all = ["append", "ignore_interrupts", "pipe", "output_error", "stats", "stats_json", "stdout_max_line_bytes", "add_timestamp", "progress"])]
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
    View(Box<crate::read::log::ViewOptions>),
    Compact {
        files: Vec<PathBuf>,
        engine: EngineConfig,
        dry_run: bool,
        /// `--archive FILE`: the logs' lines are archived there first.
        archive: Option<PathBuf>,
    },
    /// `--view --original --line N LOG`: lines' original bytes from the archive.
    Original(crate::tee::archive::original::OriginalRequest),
    /// `smart-tee run [OPTIONS] LOG... -- COMMAND`: the tee on COMMAND's output, supervised.
    Run(Box<run::RunOptions>),
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

/// With `--redact` or `--redact-values FILE` anywhere on the command line, redaction is on
/// before clap reads it: a refused flag's message quotes its value, which may be a secret.
fn open_door_early(args: &[std::ffi::OsString]) {
    let mut values = None;
    let mut redact = false;
    for (i, a) in args.iter().enumerate().skip(1) {
        let a = a.to_string_lossy();
        if a == "--" {
            break;
        }
        if a == "--redact" {
            redact = true;
        } else if a == "--redact-values" {
            redact = true;
            values = args.get(i + 1).map(std::path::PathBuf::from);
        } else if let Some(v) = a.strip_prefix("--redact-values=") {
            redact = true;
            values = Some(std::path::PathBuf::from(v));
        }
    }
    if redact {
        // A values file that cannot be read is refused later, naming it; here the environment's
        // secrets are enough.
        let secrets =
            checks::secrets(values.as_deref()).unwrap_or_else(|_| crate::cut::redact::from_env());
        crate::door::open(&secrets);
    }
}

pub fn parse_from<I, T>(args: I) -> Mode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    open_door_early(&args);
    // Subcommands come first; a log named like one is written as `./mcp`.
    match args.get(1).and_then(|a| a.to_str()) {
        Some("mcp") => return parse_mcp(&args[1..]),
        Some("completions") => return parse_completions(&args[1..]),
        Some("man") if args.len() == 2 => return Mode::Man,
        Some("run") => return run::parse_run(&args[1..]),
        _ => {}
    }
    let args = summary_implies_view(args);
    let reads = reads_logs(&args);
    let refuse = |e: clap::Error| match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            crate::door::clap_message(&e);
            std::process::exit(0)
        }
        _ if reads => {
            crate::door::clap_message(&e);
            std::process::exit(2)
        }
        _ => Mode::Refused(e),
    };
    let matches = match tee_command().try_get_matches_from(args) {
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
        Err(msg) => refuse(tee_command().error(ErrorKind::ValueValidation, msg)),
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
