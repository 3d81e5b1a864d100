//! Run health: how a run stands now (running, stalled, finished, ended without a final event),
//! from the summary's events and what is known of the log beyond its lines (a writer holding
//! its lock, the time now, its modification time).

use std::fs::File;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::{ENDED_WITHOUT_FINAL, Summary};
use crate::read::when::Instant;

/// What is known of a log beyond its lines: whether a writer holds it, the time now, and when
/// it was last written.
#[derive(Clone, Copy, Debug)]
pub struct Health {
    /// A smart-tee writer holds the log's shared lock ([`writer_holds`]).
    pub writer: bool,
    pub now: Instant,
    /// The log's modification time: the stall clock for logs whose events carry no time.
    pub modified: Option<Instant>,
    pub stall_after: Duration,
}

impl Health {
    /// The health of `file` now.
    pub fn of(file: &File, stall_after: Duration) -> Health {
        let instant = |t: SystemTime| {
            Instant(
                t.duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as i128),
            )
        };
        Health {
            writer: writer_holds(file),
            now: instant(SystemTime::now()),
            modified: file.metadata().and_then(|m| m.modified()).ok().map(instant),
            stall_after,
        }
    }
}

/// How a run stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum State {
    /// A writer holds the log and events arrive.
    Running,
    /// A writer holds the log and no event (heartbeats aside) came for this many seconds.
    Stalled(u64),
    /// The last event is a final one; `true` when it reports success.
    Finished(bool),
    /// No final event at the end and no writer: the agent or its pipeline died.
    Ended,
}

impl State {
    /// The state's name, as `state` gives it in JSON.
    pub fn name(&self) -> &'static str {
        match self {
            State::Running => "running",
            State::Stalled(_) => "stalled",
            State::Finished(_) => "finished",
            State::Ended => ENDED_WITHOUT_FINAL,
        }
    }
}

/// True when a smart-tee writer holds `file`'s shared lock (writers hold it for their
/// lifetime): an exclusive lock cannot be taken at once. The lock, when taken, is let go at
/// once. A file system without locks reads as no writer.
pub fn writer_holds(file: &File) -> bool {
    match file.try_lock() {
        Ok(()) => {
            let _ = file.unlock();
            false
        }
        Err(std::fs::TryLockError::WouldBlock) => true,
        Err(_) => false,
    }
}

/// True for an event that says the agent is alive without saying it progressed.
pub(super) fn is_heartbeat(v: &Value, kind: &str) -> bool {
    let sub = v.get("subtype").and_then(Value::as_str).unwrap_or("");
    matches!(
        kind,
        "tool_progress" | "keep_alive" | "keepalive" | "heartbeat" | "ping"
    ) || (kind == "system" && matches!(sub, "heartbeat" | "keep_alive"))
        || (kind == "stream_event" && v.pointer("/event/type") == Some(&json!("ping")))
}

/// True for the type of an event that ends a run, in any agent's stream.
pub fn is_final(kind: &str) -> bool {
    matches!(
        kind,
        "result" | "turn.completed" | "turn.failed" | "complete"
    )
}
impl Summary {
    /// Sets what is known of the log beyond its lines, for [`Summary::state`].
    pub fn set_health(&mut self, health: Health) {
        self.health = Some(health);
        // Only the last conversation may still be written to.
        let last = self.parts.len().saturating_sub(1);
        for (k, part) in self.parts.iter_mut().enumerate() {
            part.health = Some(Health {
                writer: health.writer && k == last,
                ..health
            });
        }
    }

    /// How the run stands, when its health is known: finished when its last event is a final
    /// one; else running or stalled while a writer holds the log, else ended without a final
    /// event. The stall clock is the last event's time (heartbeats aside), or the log's
    /// modification time when no event carries a time.
    pub fn state(&self) -> Option<State> {
        let h = self.health?;
        if let Some(ok) = self.finished
            && !self.after_final
        {
            return Some(State::Finished(ok));
        }
        if !h.writer {
            return Some(State::Ended);
        }
        let last = self.last_progress.or(h.modified);
        let idle = last.map_or(0, |l| ((h.now.0 - l.0).max(0) / 1_000_000_000) as u64);
        Some(if idle >= h.stall_after.as_secs() {
            State::Stalled(idle)
        } else {
            State::Running
        })
    }
    /// Merges the health of another log of the same summary: a writer on any, the latest
    /// modification.
    pub(super) fn merge_health(&mut self, h: Health) {
        self.set_health(match self.health {
            None => h,
            Some(o) => Health {
                writer: o.writer || h.writer,
                now: o.now.max(h.now),
                modified: o.modified.max(h.modified),
                stall_after: o.stall_after,
            },
        });
    }
}
