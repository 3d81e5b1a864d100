//! How a supervised run ended, and what it says of it: the exit status (README, Exit status),
//! the line on stderr, and the summary written by `--summary-json`.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::read::summary::live::duration_text;

/// How the run ended, by the exit status it gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The final event reports success.
    Ok,
    /// A log could not be opened or written; the run itself ended ok.
    LogFailed,
    /// A malformed command line, or a COMMAND that could not be started.
    Usage,
    /// The final event reports a failure (whatever the agent's own exit status).
    Failed,
    /// The agent was killed by a signal smart-tee did not send, or ended without a final event.
    Died,
    /// Stopped by smart-tee: no event for `--stall-after`.
    Stalled,
    /// Stopped by smart-tee: `--timeout` passed.
    TimedOut,
    /// Stopped by smart-tee: `--max-cost` or `--max-output-tokens` passed.
    OverCeiling,
}

impl Outcome {
    pub fn status(self) -> u8 {
        match self {
            Outcome::Ok => 0,
            Outcome::LogFailed => 1,
            Outcome::Usage => 2,
            Outcome::Failed => 3,
            Outcome::Died => 4,
            Outcome::Stalled => 5,
            Outcome::TimedOut => 6,
            Outcome::OverCeiling => 7,
        }
    }

    /// The outcome's name in `--summary-json`.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::LogFailed => "log_failed",
            Outcome::Usage => "usage",
            Outcome::Failed => "failed",
            Outcome::Died => "died",
            Outcome::Stalled => "stalled",
            Outcome::TimedOut => "timed_out",
            Outcome::OverCeiling => "over_ceiling",
        }
    }
}

/// Why smart-tee stopped the run.
#[derive(Clone, Debug, PartialEq)]
pub enum Stop {
    Stalled(Duration),
    TimedOut(Duration),
    OverCost {
        limit: f64,
        cost: f64,
    },
    OverTokens {
        limit: u64,
        tokens: u64,
    },
    /// `--stall-after` or `--timeout` passed after the final event, the agent still running:
    /// the run had ended, and its final event says how.
    Lingered(Box<Stop>),
    /// Standard output or a log failed under `--output-error exit`/`exit-nopipe`: the tee
    /// gave up, and the agent with it.
    OutputFailed,
}

impl Stop {
    /// The outcome the stop gives; none when the final event's verdict stands
    /// ([`Stop::Lingered`]).
    pub fn outcome(&self) -> Option<Outcome> {
        match self {
            Stop::Stalled(_) => Some(Outcome::Stalled),
            Stop::TimedOut(_) => Some(Outcome::TimedOut),
            Stop::OverCost { .. } | Stop::OverTokens { .. } => Some(Outcome::OverCeiling),
            Stop::Lingered(_) => None,
            Stop::OutputFailed => Some(Outcome::LogFailed),
        }
    }

    /// `stalled, stopped by smart-tee after 10m without an event`.
    pub fn text(&self) -> String {
        match self {
            Stop::Stalled(d) => format!(
                "stalled, stopped by smart-tee after {} without an event",
                duration_text(*d)
            ),
            Stop::TimedOut(d) => {
                format!(
                    "timed out, stopped by smart-tee after {}",
                    duration_text(*d)
                )
            }
            Stop::OverCost { limit, cost } => format!(
                "over the cost ceiling, stopped by smart-tee at ${cost:.4} (--max-cost {limit})"
            ),
            Stop::OverTokens { limit, tokens } => format!(
                "over the output-token ceiling, stopped by smart-tee at {tokens} output tokens \
                 (--max-output-tokens {limit})"
            ),
            Stop::Lingered(stop) => format!("after its final event: {}", stop.text()),
            Stop::OutputFailed => {
                "an output failed (--output-error exit), stopped by smart-tee".to_string()
            }
        }
    }
}

/// The agent's own end: its exit code, or the signal that killed it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AgentExit {
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

impl AgentExit {
    pub fn of(status: std::process::ExitStatus) -> AgentExit {
        use std::os::unix::process::ExitStatusExt;
        AgentExit {
            code: status.code(),
            signal: status.signal(),
        }
    }

    /// The status a shell gives of it: its code, or 128 + the signal.
    pub fn shell_status(self) -> u8 {
        match (self.code, self.signal) {
            (Some(c), _) => (c & 0xff) as u8,
            (None, Some(s)) => (128 + (s & 0x7f)) as u8,
            (None, None) => Outcome::Died.status(),
        }
    }
}

/// How the run ended: stopped by smart-tee, else died when `killed` (by a signal smart-tee
/// did not send), else the final event, else died. `finished` is the last final event's
/// verdict; `log_failed` when a log could not be written.
pub fn outcome_of(
    stop: Option<&Stop>,
    finished: Option<bool>,
    killed: bool,
    log_failed: bool,
) -> Outcome {
    if let Some(outcome) = stop.and_then(Stop::outcome) {
        return outcome;
    }
    match finished {
        _ if killed => Outcome::Died,
        Some(true) if log_failed => Outcome::LogFailed,
        Some(true) => Outcome::Ok,
        Some(false) => Outcome::Failed,
        None => Outcome::Died,
    }
}

/// What `--summary-json` adds to the summary of the run's events.
pub struct RunEnd<'a> {
    pub outcome: Outcome,
    pub stop: Option<&'a Stop>,
    pub agent: Option<AgentExit>,
    /// The signal smart-tee received and passed on to the agent's group.
    pub signalled: Option<i32>,
    /// A log (or standard output) could not be written, or `--summary-json` could not.
    pub log_failed: bool,
    pub exit_status: u8,
}

/// The summary with the run's end added: `run`, and for a run smart-tee stopped, `ended` says
/// why (and `state` reads `stalled` for a stall).
pub fn summary_json(mut summary: Value, end: &RunEnd<'_>) -> Value {
    if let Some(o) = summary.as_object_mut() {
        if let Some(stop) = end.stop {
            o.insert("ended".into(), json!(stop.text()));
            if let Stop::Stalled(_) = stop {
                o.insert("state".into(), json!("stalled"));
            }
        }
        o.insert(
            "run".into(),
            json!({
                "outcome": end.outcome.name(),
                "stopped_by_smart_tee": end.stop.map(Stop::text),
                "signal_received": end.signalled,
                "agent_exit_code": end.agent.and_then(|a| a.code),
                "agent_signal": end.agent.and_then(|a| a.signal),
                "log_failed": end.log_failed,
                "exit_status": end.exit_status,
            }),
        );
    }
    summary
}

/// Writes `value` to `path` atomically: a temporary file beside it, then renamed over it.
pub fn write_atomically(path: &Path, value: &Value) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut text = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    text.push(b'\n');
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("not a file name"))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = dir.map_or_else(|| tmp_name.clone().into(), |d| d.join(&tmp_name));
    #[allow(
        clippy::disallowed_methods,
        reason = "a door (docs/redaction.md): --summary-json, passed through crate::door::bytes"
    )]
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp);
    let res = file.and_then(|mut f| {
        f.write_all(&crate::door::bytes(&text))?;
        f.sync_all()
    });
    match res.and_then(|()| std::fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_wins_then_the_final_event_then_died() {
        let stall = Stop::Stalled(Duration::from_secs(2));
        assert_eq!(
            outcome_of(Some(&stall), Some(true), false, false),
            Outcome::Stalled
        );
        assert_eq!(outcome_of(None, Some(true), false, false), Outcome::Ok);
        assert_eq!(
            outcome_of(None, Some(true), false, true),
            Outcome::LogFailed
        );
        assert_eq!(outcome_of(None, Some(false), false, true), Outcome::Failed);
        assert_eq!(outcome_of(None, None, false, false), Outcome::Died);
        // Killed by a signal smart-tee did not send: died, whatever the final event said.
        assert_eq!(outcome_of(None, Some(true), true, false), Outcome::Died);
        // Stopped lingering after the final event: the final event's verdict.
        let lingered = Stop::Lingered(Box::new(stall.clone()));
        assert_eq!(
            outcome_of(Some(&lingered), Some(false), false, false),
            Outcome::Failed
        );
        assert_eq!(
            outcome_of(Some(&lingered), Some(true), false, false),
            Outcome::Ok
        );
        assert_eq!(
            stall.text(),
            "stalled, stopped by smart-tee after 2s without an event"
        );
        let statuses: std::collections::BTreeSet<u8> = [
            Outcome::Ok,
            Outcome::LogFailed,
            Outcome::Usage,
            Outcome::Failed,
            Outcome::Died,
            Outcome::Stalled,
            Outcome::TimedOut,
            Outcome::OverCeiling,
        ]
        .iter()
        .map(|o| o.status())
        .collect();
        assert_eq!(statuses.len(), 8);
    }
}
