//! The summary read as the events pass (`smart-tee run`): each log line as it is written goes
//! through the code `--summary` reads a log with, so the tokens, the cost (the estimate where
//! the agent reports none) and how the run ended are the figures `--summary` gives of the log.
//!
//! Reading every event as a value costs more than the tee itself does per line, so a run that
//! needs no totals (no ceiling, no summary to write) reads only the events that tell how it
//! stands: each line's `type` is taken by one allocation-free scan ([`Head`]), and only a
//! final event or a possible heartbeat is read whole; any other event after a final one says the
//! run went on, as [`Summary::add_event`] notes it.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::Summary;
use super::health::{Health, heartbeat_kind, is_final, is_heartbeat};
use crate::line::agents::Head;
use crate::read::log::STALL_AFTER;
use crate::read::when::Instant;

/// A run's summary, event by event.
#[derive(Debug, Default)]
pub struct Live {
    summary: Summary,
    /// Every event read whole (the totals are wanted), not only those that tell how it stands.
    whole: bool,
    stack: Vec<u8>,
}

/// The `type` of an event whose first member it is (`{"type":"assistant",...`, as every agent
/// writes its events), without reading further; none when the line starts otherwise or the
/// type has an escape.
fn leading_type(line: &[u8]) -> Option<&[u8]> {
    let rest = line.strip_prefix(b"{\"type\":")?.trim_ascii_start();
    let rest = rest.strip_prefix(b"\"")?;
    let end = memchr::memchr2(b'"', b'\\', rest)?;
    (rest[end] == b'"').then(|| &rest[..end])
}

/// True for a type that is surely not telling (see [`telling`]): no scan of the line needed.
fn plainly_untelling(kind: &[u8]) -> bool {
    matches!(
        kind,
        b"assistant"
            | b"user"
            | b"progress"
            | b"item.started"
            | b"item.completed"
            | b"item.updated"
    )
}

/// True for an event's `type` (with its subtype and payload type) that may say how a run
/// stands: a final event, or one that may be a heartbeat.
fn telling(head: &Head<'_>) -> bool {
    let kind = head.kind.unwrap_or("");
    is_final(kind)
        || heartbeat_kind(kind, head.subtype)
        || kind == "stream_event"
        || (kind == "event_msg" && matches!(head.payload, Some("task_complete" | "turn_aborted")))
}

impl Live {
    /// A live summary; `whole` to read every event (for the totals and the summary at the end).
    pub fn new(whole: bool) -> Live {
        Live {
            whole,
            ..Live::default()
        }
    }

    /// Takes one log line (without its newline). False for a heartbeat (an event that says the
    /// agent is alive without saying it progressed, as `--summary`'s `stalled` reads them);
    /// true for any other line, JSON or not.
    pub fn add(&mut self, line: &[u8]) -> bool {
        self.summary.lines += 1;
        if !self.whole {
            // An event of the run that says nothing of how it stands; after a final one, it
            // says the run went on.
            if leading_type(line).is_some_and(plainly_untelling) {
                if self.summary.finished.is_some() {
                    self.summary.after_final = true;
                }
                return true;
            }
            let Some(head) = Head::of_line(line, &mut self.stack) else {
                return true;
            };
            if !telling(&head) {
                if self.summary.finished.is_some()
                    && !matches!(head.kind, Some("non_json" | "torn"))
                {
                    self.summary.after_final = true;
                }
                return true;
            }
        }
        let Some(v) = crate::read::events::parse(line) else {
            return true;
        };
        let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
        let heartbeat = is_heartbeat(&v, kind);
        self.summary.add_event(&v);
        !heartbeat
    }

    /// The cost so far, in USD, as `--summary` gives it: reported, else estimated.
    pub fn cost_usd(&self) -> Option<f64> {
        self.summary.cost_figure().usd()
    }

    /// The output tokens so far, as `--summary` counts them.
    pub fn output_tokens(&self) -> Option<u64> {
        self.summary.usage().tokens.output
    }

    /// Whether the run has ended with a final event, and whether it said so with success: the
    /// last final event, unless events of the run came after it.
    pub fn finished(&self) -> Option<bool> {
        self.summary.finished.filter(|_| !self.summary.after_final)
    }

    /// Whether the run's format has no final event (Kimi CLI): its ending is then the agent's
    /// exit (`smart-tee run`).
    pub fn format_has_no_final_event(&self) -> bool {
        self.summary.format_has_no_final_event()
    }

    /// The summary as `--summary --format json` gives it of the log once its writer is gone.
    pub fn json_ended(&mut self) -> Value {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128);
        self.summary.set_health(Health {
            writer: false,
            now: Instant(now),
            modified: None,
            stall_after: STALL_AFTER,
        });
        self.summary.to_json()
    }
}

/// `d` as the run's flags write it: `10m`, `2s`, `1h30m` read back as `5400s`, `250ms`.
pub fn duration_text(d: Duration) -> String {
    let ms = d.as_millis();
    match ms {
        _ if ms.is_multiple_of(3_600_000) && ms > 0 => format!("{}h", ms / 3_600_000),
        _ if ms.is_multiple_of(60_000) && ms > 0 => format!("{}m", ms / 60_000),
        _ if ms.is_multiple_of(1000) => format!("{}s", ms / 1000),
        _ => format!("{ms}ms"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A heartbeat is no progress; a result that reports an error ends the run as failed; the
    /// output tokens are the result's.
    #[test]
    fn heartbeats_finals_and_tokens_as_the_summary_reads_them() {
        let mut live = Live::new(true);
        assert!(live.add(
            br#"{"type":"system","subtype":"init","session_id":"s","model":"claude-sonnet-4-5"}"#
        ));
        assert!(!live.add(br#"{"type":"keep_alive"}"#));
        assert!(live.add(b"not json"));
        assert_eq!(live.finished(), None);
        assert!(live.add(
            br#"{"type":"result","subtype":"success","is_error":true,"session_id":"s","total_cost_usd":0.5,"usage":{"input_tokens":10,"output_tokens":20}}"#
        ));
        assert_eq!(live.finished(), Some(false));
        assert_eq!(live.cost_usd(), Some(0.5));
        assert_eq!(live.output_tokens(), Some(20));
        let json = live.json_ended();
        assert_eq!(json["state"], "finished");
        assert_eq!(json["ok"], false);
        assert_eq!(duration_text(Duration::from_secs(600)), "10m");
        // Read lean, the same verdicts.
        let mut lean = Live::new(false);
        assert!(lean.add(br#"{"type":"system","subtype":"init","session_id":"s"}"#));
        assert!(!lean.add(br#"{"type":"system","subtype":"keep_alive"}"#));
        assert!(!lean.add(br#"{"type":"stream_event","event":{"type":"ping"}}"#));
        assert!(lean.add(br#"{"type":"result","is_error":false}"#));
        assert_eq!(lean.finished(), Some(true));
        assert!(lean.add(br#"{"type":"non_json","text":"=== next ==="}"#));
        assert_eq!(lean.finished(), Some(true));
        assert!(lean.add(br#"{"type":"assistant","message":{}}"#));
        assert_eq!(lean.finished(), None);
        assert!(lean.add(br#"{"type": "result", "is_error": true}"#));
        assert_eq!(lean.finished(), Some(false));
        assert!(lean.add(br#"{"type": "user", "message": {}}"#));
        assert_eq!(lean.finished(), None);
        assert_eq!(leading_type(br#"{"type": "a\"b"}"#), None);
        assert_eq!(leading_type(br#"{"id":1,"type":"user"}"#), None);
        assert_eq!(duration_text(Duration::from_millis(2500)), "2500ms");
    }
}
