//! `smart-tee run [OPTIONS] LOG... -- COMMAND [ARGS...]`: the tee with the agent under it. Its
//! own flags are taken out of the command line here; the rest is the tee's, parsed as for
//! `COMMAND | smart-tee LOG...`. `supervise` starts and watches the agent; `outcome` says how
//! the run ended (the exit status, stderr, `--summary-json`).

mod outcome;
mod supervise;
mod terminal;

pub use self::outcome::Outcome;
pub use self::supervise::run;

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use super::{Config, Mode};

/// What `smart-tee run` was asked to do.
#[derive(Debug)]
pub struct RunOptions {
    /// The tee's configuration, as `COMMAND | smart-tee ...` would have it.
    pub config: Config,
    /// COMMAND and its arguments (never empty).
    pub command: Vec<OsString>,
    pub stall_after: Option<Duration>,
    pub kill_after: Duration,
    pub timeout: Option<Duration>,
    pub max_cost: Option<f64>,
    pub max_output_tokens: Option<u64>,
    pub summary_json: Option<PathBuf>,
    /// Exit with the agent's own status instead of the run's.
    pub agent_status: bool,
}

/// `--kill-after`'s default: the grace between SIGTERM and SIGKILL.
pub const KILL_AFTER: Duration = Duration::from_secs(10);

const USAGE: &str = "Usage: smart-tee run [OPTIONS] LOG... -- COMMAND [ARGS...]";

const HELP: &str = "Start COMMAND with its standard output piped through smart-tee: the same logs,
flags and guarantees as `COMMAND | smart-tee LOG...`. COMMAND inherits standard input and
standard error and runs in a process group of its own; SIGINT, SIGTERM and SIGHUP reach that
group. The exit status says how the run ended (docs/run.md).

Run options (every other flag is the tee's: smart-tee --help):
      --stall-after DURATION  Stop the run when no event arrives for DURATION (heartbeats do not count)
      --timeout DURATION      Stop the run after DURATION
      --kill-after DURATION   SIGKILL the group this long after SIGTERM [default: 10s]
      --max-cost USD          Stop the run once its cost (reported, else estimated) passes USD
      --max-output-tokens N   Stop the run once its output tokens pass N
      --summary-json FILE     At the end, write the run's summary (as --summary --format json) to FILE
      --agent-status          Exit with the agent's own status instead of the run's

DURATION: a number and a unit, ms, s, m, h or d (250ms, 2s, 10m); a bare number is seconds.

Exit status: 0 ok, 1 a log could not be written (the run otherwise ok), 2 usage (bad flags,
COMMAND could not be started), 3 failed (the final event says so), 4 died (no final event, or
killed by a signal), 5 stalled, 6 timed out, 7 over a ceiling, 128+N smart-tee received signal N.";

/// Says `msg` and the usage line, and exits with status 2.
fn refuse(msg: &str) -> ! {
    crate::say!("smart-tee run: {msg}\n{USAGE}\nFor more information, try 'smart-tee run --help'.");
    std::process::exit(i32::from(Outcome::Usage.status()))
}

/// A duration as the run's flags take it: `250ms`, `2s`, `10m`, `1.5h`, `1d`; a bare number is
/// seconds. Zero is refused: a limit of nothing would stop every run at once.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("invalid duration {s:?} (for example 250ms, 2s, 10m, 1h)"))?;
    let scale = match unit {
        "ms" => 0.001,
        "" | "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        "d" => 86_400.0,
        _ => {
            return Err(format!(
                "invalid duration {s:?}: the unit is ms, s, m, h or d"
            ));
        }
    };
    let secs = n * scale;
    if !(secs > 0.0 && secs < 1e9) {
        return Err(format!(
            "invalid duration {s:?}: more than 0 and less than 30 years"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// The run's flags that take a value.
const VALUED: &[&str] = &[
    "--stall-after",
    "--timeout",
    "--kill-after",
    "--max-cost",
    "--max-output-tokens",
    "--summary-json",
];

/// `args` from `run` on (`run`, then the options, `--`, COMMAND...).
pub(super) fn parse_run(args: &[OsString]) -> Mode {
    let Some(dash) = args.iter().position(|a| a == "--") else {
        if args.iter().any(|a| a == "--help" || a == "-h") {
            crate::door::answer_line(format!("{HELP}\n\n{USAGE}"));
            std::process::exit(0);
        }
        refuse("no COMMAND: it follows `--`");
    };
    let command = args[dash + 1..].to_vec();
    if command.is_empty() {
        refuse("no COMMAND after `--`");
    }
    let mut run = RunOptions {
        config: placeholder_config(),
        command,
        stall_after: None,
        kill_after: KILL_AFTER,
        timeout: None,
        max_cost: None,
        max_output_tokens: None,
        summary_json: None,
        agent_status: false,
    };
    let mut rest: Vec<OsString> = vec!["smart-tee".into()];
    let mut it = args[1..dash].iter();
    while let Some(a) = it.next() {
        let text = a.to_string_lossy();
        if text == "--agent-status" {
            run.agent_status = true;
            continue;
        }
        if text == "--help" || text == "-h" {
            crate::door::answer_line(format!("{HELP}\n\n{USAGE}"));
            std::process::exit(0);
        }
        let Some(name) = VALUED
            .iter()
            .find(|n| text == **n || text.starts_with(&format!("{n}=")))
        else {
            rest.push(a.clone());
            continue;
        };
        let value = match text.split_once('=') {
            Some((_, v)) => OsString::from(v),
            None => match it.next() {
                Some(v) => v.clone(),
                None => refuse(&format!("{name} needs a value")),
            },
        };
        set(&mut run, name, &value);
    }
    // A log named like a subcommand is written as `./run`, `./mcp`.
    if let Some(first) = rest.get_mut(1)
        && matches!(first.to_str(), Some("run" | "mcp" | "completions" | "man"))
    {
        let mut named = OsString::from("./");
        named.push(&*first);
        *first = named;
    }
    match super::parse_from(rest) {
        Mode::Tee(config) => {
            if let Some(path) = run.summary_json.as_deref()
                && config.files.iter().any(|log| same_file(log, path))
            {
                refuse(&format!(
                    "--summary-json {} is also a LOG: the summary would replace the log",
                    crate::door::path(path)
                ));
            }
            run.config = config;
            Mode::Run(Box::new(run))
        }
        Mode::Refused(e) => {
            crate::door::clap_message(&e);
            std::process::exit(i32::from(Outcome::Usage.status()))
        }
        _ => refuse("only the tee's flags go with run (not --view, --summary or --compact)"),
    }
}

/// True when `a` and `b` name one file: the same file if both exist, else the same path.
fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => (x.dev(), x.ino()) == (y.dev(), y.ino()),
        _ => std::path::absolute(a).ok() == std::path::absolute(b).ok(),
    }
}

/// Sets the run's flag `name` to `value`, or refuses it.
fn set(run: &mut RunOptions, name: &str, value: &std::ffi::OsStr) {
    let v = value.to_string_lossy();
    let bad = |why: String| -> ! { refuse(&format!("invalid value for {name}: {why}")) };
    match name {
        "--stall-after" => run.stall_after = Some(parse_duration(&v).unwrap_or_else(|e| bad(e))),
        "--timeout" => run.timeout = Some(parse_duration(&v).unwrap_or_else(|e| bad(e))),
        "--kill-after" => run.kill_after = parse_duration(&v).unwrap_or_else(|e| bad(e)),
        "--max-cost" => match v.trim().parse::<f64>() {
            Ok(usd) if usd.is_finite() && usd >= 0.0 => run.max_cost = Some(usd),
            _ => bad(format!("{v:?} is not an amount in USD (for example 2.50)")),
        },
        "--max-output-tokens" => match v.trim().parse::<u64>() {
            Ok(n) => run.max_output_tokens = Some(n),
            Err(_) => bad(format!("{v:?} is not a whole number of tokens")),
        },
        _ => run.summary_json = Some(PathBuf::from(value)),
    }
}

/// A configuration to fill in once the tee's flags are parsed.
fn placeholder_config() -> Config {
    Config {
        files: Vec::new(),
        append: false,
        ignore_interrupts: false,
        output_error: super::OutputError::WarnNopipe,
        file_mode: 0o600,
        engine: crate::cut::engine::EngineConfig::default(),
        stdout_max_line_bytes: None,
        stats: crate::tee::stats::StatsReport::default(),
        warnings: Vec::new(),
        archive: None,
        progress: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_a_unit_and_refuse_nothing() {
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert_eq!(parse_duration("1.5h"), Ok(Duration::from_secs(5400)));
        for bad in ["", "0", "0s", "2x", "-1s", "s", "1e400", "nan"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
