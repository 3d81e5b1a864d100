//! Run health: how a run stands now (running, stalled, finished, ended without a final event),
//! from the summary's events and what is known of the log beyond its lines (a writer holding
//! its lock, the time now, its modification time).

use std::fs::File;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::{ENDED_WITHOUT_FINAL, EXITED_NO_FINAL, Summary};
use crate::line::agents::Format;
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
    /// No writer, and the format has no final event (Kimi CLI): the run ended with its
    /// process, which says nothing of how it went.
    Exited,
}

impl State {
    /// The state's name, as `state` gives it in JSON.
    pub fn name(&self) -> &'static str {
        match self {
            State::Running => "running",
            State::Stalled(_) => "stalled",
            State::Finished(_) => "finished",
            State::Ended => ENDED_WITHOUT_FINAL,
            State::Exited => EXITED_NO_FINAL,
        }
    }
}

/// True when a smart-tee writer holds `file`'s shared lock (writers hold it for their
/// lifetime). On Linux, read from `/proc/locks` (a `FLOCK` entry on the file's device and
/// inode, waiters aside): the probe takes no lock, so it can never make a starting writer wait.
/// Where `/proc/locks` cannot be read, an exclusive lock is tried and, when taken, let go at
/// once. A file system without locks reads as no writer.
pub fn writer_holds(file: &File) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = file.metadata() else {
        return false;
    };
    match std::fs::read_to_string("/proc/locks") {
        Ok(locks) => flock_listed(&locks, meta.dev(), meta.ino()),
        Err(_) => match file.try_lock() {
            Ok(()) => {
                let _ = file.unlock();
                false
            }
            Err(std::fs::TryLockError::WouldBlock) => true,
            Err(_) => false,
        },
    }
}

/// True when `locks` (the text of `/proc/locks`) lists a granted `flock` on the file of
/// device `dev` and inode `ino`. Its lines read `1: FLOCK  ADVISORY  READ 4711 fd:01:1234 0
/// EOF`: the device as hexadecimal major:minor, the inode in decimal; a waiter's line has `->`.
fn flock_listed(locks: &str, dev: u64, ino: u64) -> bool {
    // Linux's encoding of a device number (`major(3)`, `minor(3)`): `/proc/locks` is Linux's.
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    let want = format!("{major:02x}:{minor:02x}:{ino}");
    locks.lines().any(|line| {
        let mut words = line.split_whitespace();
        words.next(); // the lock's number
        words.next() == Some("FLOCK") && line.split_whitespace().any(|w| w == want)
    })
}

/// True for an event that says the agent is alive without saying it progressed.
pub(super) fn is_heartbeat(v: &Value, kind: &str) -> bool {
    heartbeat_kind(kind, v.get("subtype").and_then(Value::as_str))
        || (kind == "stream_event" && v.pointer("/event/type") == Some(&json!("ping")))
}

/// True for an event's `type` and `subtype` that make it a heartbeat, whatever else it holds
/// (a `stream_event` is one only when it is a ping: [`is_heartbeat`]).
pub(super) fn heartbeat_kind(kind: &str, subtype: Option<&str>) -> bool {
    matches!(
        kind,
        "tool_progress" | "keep_alive" | "keepalive" | "heartbeat" | "ping"
    ) || (kind == "system" && matches!(subtype, Some("heartbeat" | "keep_alive")))
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

    /// Whether the run's format has no final event (Kimi CLI): its run ends with its process.
    /// A total's run is its last conversation's, whatever agent its first line named.
    pub fn format_has_no_final_event(&self) -> bool {
        let agent = self
            .parts
            .last()
            .map_or(self.drift.agent, |p| p.drift.agent);
        agent == Some(Format::Kimi.agent())
    }

    /// How the run stands, when its health is known: finished when its last event is a final
    /// one; else running or stalled while a writer holds the log, else ended without a final
    /// event. The stall clock is when the last event (heartbeats aside) arrived, not the time
    /// it carries (a replayed log's events are dated months ago while they arrive now): the
    /// log's modification time, less the time its events say passed between that event and
    /// the last heartbeat after it.
    pub fn state(&self) -> Option<State> {
        let h = self.health?;
        if let Some(ok) = self.finished
            && !self.after_final
        {
            return Some(State::Finished(ok));
        }
        if !h.writer {
            return Some(if self.format_has_no_final_event() {
                State::Exited
            } else {
                State::Ended
            });
        }
        let heartbeats = match (self.last_progress, self.last_any) {
            (Some(p), Some(a)) => (a.0 - p.0).max(0),
            _ => 0,
        };
        let last = h
            .modified
            .map(|m| Instant(m.0 - heartbeats))
            .or(self.last_progress);
        let idle = last.map_or(0, |l| ((h.now.0 - l.0).max(0) / 1_000_000_000) as u64);
        Some(if idle >= h.stall_after.as_secs() {
            State::Stalled(idle)
        } else {
            State::Running
        })
    }
    /// Merges the health of another log of the same summary: a writer on any, the latest
    /// modification.
    pub(crate) fn merge_health(&mut self, h: Health) {
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

#[cfg(test)]
#[allow(clippy::disallowed_methods, reason = "test fixtures, not a surface")]
mod tests {
    use super::*;

    const LOCKS: &str = "1: FLOCK  ADVISORY  READ  4711 fd:01:1234 0 EOF\n\
                         2: POSIX  ADVISORY  WRITE 4712 fd:01:99 0 EOF\n\
                         2: -> FLOCK  ADVISORY  WRITE 4713 fd:01:99 0 EOF\n\
                         3: OFDLCK ADVISORY  READ  -1 103:02:7 0 EOF\n";

    #[test]
    fn a_flock_on_the_inode_is_a_writer_and_nothing_else_is() {
        let dev = rustix::fs::makedev(0xfd, 1);
        assert!(flock_listed(LOCKS, dev, 1234));
        // A POSIX lock, and a waiter (`->`) for a flock, hold nothing a writer takes.
        assert!(!flock_listed(LOCKS, dev, 99));
        // The same inode number on another device.
        assert!(!flock_listed(LOCKS, rustix::fs::makedev(0x103, 2), 1234));
        assert!(!flock_listed("", dev, 1234));
    }

    /// #31.5: the probe took an exclusive lock for a moment, which could make a starting
    /// writer fail to take its shared lock. It now reads the lock table and takes none: a
    /// lock held through another open file is seen, and a lock held stays held.
    #[test]
    fn the_lock_probe_sees_a_writer_and_takes_no_lock() {
        let path = std::env::temp_dir().join(format!("smart-tee-probe-{}", std::process::id()));
        std::fs::write(&path, b"{}\n").unwrap();
        let writer = File::open(&path).unwrap();
        let reader = File::open(&path).unwrap();
        assert!(!writer_holds(&reader));
        writer.lock_shared().unwrap();
        assert!(writer_holds(&reader));
        writer.unlock().unwrap();
        assert!(!writer_holds(&reader));
        // A lock taken by the probe would show here: on a file it holds shared, trying an
        // exclusive lock converts it, and letting go drops it.
        reader.lock_shared().unwrap();
        assert!(writer_holds(&reader));
        assert!(matches!(
            writer.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        let _ = std::fs::remove_file(&path);
    }

    /// #50: liveness came from the times events carry: a replayed log whose events are dated
    /// months ago, arriving now, read stalled (idle_seconds 17,357,926). It comes from when
    /// they arrived; heartbeats after the last event still count for nothing.
    #[test]
    fn a_replayed_log_arriving_now_is_running_and_heartbeats_do_not_count() {
        let at = |s: &str| crate::read::when::event_instant(&json!({"timestamp": s})).unwrap();
        let now = at("2026-11-28T07:00:00Z");
        let health = |modified: &str| Health {
            writer: true,
            now,
            modified: Some(at(modified)),
            stall_after: Duration::from_secs(120),
        };
        let mut replay = Summary::default();
        replay.add(br#"{"type":"assistant","timestamp":"2026-02-11T21:41:41Z"}"#);
        replay.set_health(health("2026-11-28T06:59:59Z"));
        assert_eq!(replay.state(), Some(State::Running));
        // The last event, then ten minutes of heartbeats up to the last write: stalled.
        let mut beating = Summary::default();
        beating.add(br#"{"type":"assistant","timestamp":"2026-02-11T21:41:41Z"}"#);
        beating.add(br#"{"type":"keep_alive","timestamp":"2026-02-11T21:51:41Z"}"#);
        beating.set_health(health("2026-11-28T06:59:59Z"));
        assert!(
            matches!(beating.state(), Some(State::Stalled(n)) if n >= 600),
            "{:?}",
            beating.state()
        );
        // Nothing written for ten minutes: stalled.
        let mut quiet = Summary::default();
        quiet.add(br#"{"type":"assistant","timestamp":"2026-02-11T21:41:41Z"}"#);
        quiet.set_health(health("2026-11-28T06:50:00Z"));
        assert!(matches!(quiet.state(), Some(State::Stalled(_))));
    }
}
