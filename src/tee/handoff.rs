//! The hand-over between the tee's reading thread and its log worker: a queue bounded in bytes,
//! and the order that makes a stop lose nothing.
//!
//! - The log side owns a chunk before standard output is given it: the reader queues each chunk
//!   first and writes stdout after ([`Handoff::send_chunk`]; on the in-kernel path it holds the
//!   delivery turn from the `tee(2)` to the queueing, [`Handoff::delivery`]). A stop is queued
//!   in the same turn and marks the queue stopping, so every chunk stdout got is ahead of it and
//!   no chunk is queued or written after it: the log holds every byte stdout got.
//! - Up to [`QUEUE_BYTES`] of input wait for a slow log while stdout goes on. Past that the
//!   reader waits for the log, and stdout with it: nothing is dropped.
//! - While the log keeps up the queue is empty and a chunk is handed over as it was read; while
//!   it is behind, a small read is copied into the last queued buffer, so that a trickle of short
//!   lines does not hold a whole buffer each, and the memory held stays within about twice the
//!   bound.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::cut::engine::{EngineConfig, LinesAhead};
use crate::cut::record::{RunsAhead, TextAhead};
use crate::cut::redact::{Pace, Redactor, Scouted};

/// Input bytes that may wait for the logs while stdout goes on.
pub const QUEUE_BYTES: usize = 8 << 20;

/// A buffer of input, shared between the log worker and the reader's write to stdout.
pub type Buf = Arc<Vec<u8>>;

/// What the reading thread did of the log worker's work on a chunk before queueing it, while
/// the worker was behind (the reader has time then, the worker has not).
#[derive(Debug, Default)]
pub struct Ahead {
    /// `--redact`'s filters: the lines they rule out ([`Scouted`]).
    pub scouted: Option<Scouted>,
    /// Where the text is UTF-8, when the log has had lines that are not JSON ([`TextAhead`]).
    pub text: Option<TextAhead>,
    /// The lines that are copied whole when they fit, and the records of the lines that are
    /// not JSON ([`LinesAhead`]).
    pub lines: Option<LinesAhead>,
    /// The runs of plain lines of text, written ([`RunsAhead`]).
    pub runs: Option<RunsAhead>,
}

/// What the reading thread may do of the log worker's work, from the log's options
/// ([`crate::tee::log::LogWriter::looks`]), and where its looks are: the reader has time while
/// the worker is behind, and two cores do the log's work of a chunk then.
#[derive(Default)]
pub struct Looks {
    /// `--redact`'s redactor: the filters look at each line ([`Redactor::scout`]), paced.
    pub scout: Option<Arc<Redactor>>,
    pub pace: Pace,
    /// Set by the worker when the last chunk had a line that is not JSON: the text of the next
    /// ones is checked ([`TextAhead`]).
    pub text_seen: Arc<AtomicBool>,
    /// The log's engine configuration, when the lines are looked at ([`LinesAhead`]): a line
    /// that fits is copied whole once checked (`whole`), a line that is not JSON is logged as
    /// its record alone (`records`).
    pub lines: Option<EngineConfig>,
    pub whole: bool,
    pub records: bool,
    /// Paused after a chunk where less than half the lines were noted (text, whose runs are
    /// written instead; JSON lines over the budget).
    pub lines_pace: Pace,
    /// The budget and the longest line of a run of plain lines of text, when the log writes
    /// such runs: with the text checked, they are written ([`RunsAhead`]).
    pub text_runs: Option<(usize, usize)>,
    pub stack: Vec<u8>,
}

impl Looks {
    /// What the reader does of the log's work on `chunk`: nothing while the worker keeps up
    /// (`behind` false). A panic in a look (a bug) is caught and counted, as the engine's are,
    /// and costs the chunk its look, never the stream: the worker does that work itself.
    pub fn look(&mut self, chunk: &[u8], behind: bool) -> Ahead {
        if !behind {
            return Ahead::default();
        }
        crate::cut::engine::guarded(|| self.look_unguarded(chunk)).unwrap_or_default()
    }

    fn look_unguarded(&mut self, chunk: &[u8]) -> Ahead {
        #[cfg(test)]
        if chunk.starts_with(crate::cut::engine::tests::PANICS) {
            panic!("a bug, provoked by a test");
        }
        let text = self.text_seen.load(Ordering::Relaxed);
        let scouted = self.scout.as_ref().map(|r| {
            if !self.pace.wants() {
                return r.headers(chunk);
            }
            let scouted = r.scout(chunk);
            self.pace.saw(scouted.worth_it());
            scouted
        });
        let text = text.then(|| TextAhead::of(chunk)).flatten();
        let runs = (text.as_ref().zip(self.text_runs))
            .map(|(text, (budget, cap))| RunsAhead::of(chunk, text, budget, cap));
        // Random bytes pass for text now and then: where runs cover little, records are written.
        let records = self.records && runs.as_ref().is_none_or(|r| r.covered() * 2 < chunk.len());
        let lines = match &self.lines {
            Some(config) if (self.whole || records) && self.lines_pace.wants() => {
                let lines = LinesAhead::of(chunk, config, self.whole, records, &mut self.stack);
                self.lines_pace.saw(lines.worth_it());
                Some(lines)
            }
            _ => None,
        };
        Ahead {
            scouted,
            text,
            lines,
            runs,
        }
    }
}

/// What the log worker is given, in order.
pub enum Msg {
    /// A buffer, how many of its bytes were read, and what the reading thread did of the
    /// log's work on them ([`Ahead`]).
    Chunk(Buf, usize, Box<Ahead>),
    /// End of input; false if reading or stdout had a diagnosed error.
    End(bool),
    /// Log what is queued and what is pending, then exit with this status.
    Stop(u8),
    /// Open every log again by its path.
    Reopen,
}

struct State {
    items: VecDeque<Msg>,
    /// Input bytes in the queued chunks.
    bytes: usize,
    /// A stop is queued: nothing more is.
    stopping: bool,
    /// The worker has returned: nothing will be taken any more.
    closed: bool,
    spare: Vec<Buf>,
    /// The worker waits for a message: a push wakes it (no wake-up call otherwise).
    worker_waits: bool,
    /// The reader waits for room: the worker wakes it once the queue is down to [`LOW`].
    reader_waits: bool,
}

/// See the module documentation.
pub struct Handoff {
    state: Mutex<State>,
    /// Held from a delivery to stdout inside the kernel to the queueing of its bytes.
    turn: Mutex<()>,
    ready: Condvar,
    room: Condvar,
    chunk: usize,
    /// The most input bytes queued ([`QUEUE_BYTES`] unless the log side holds input itself).
    bound: usize,
    /// Told how many bytes are queued, when the log side paces itself by it (the archive).
    backlog: Option<Arc<crate::tee::archive::Backlog>>,
}

/// What [`Handoff::send_chunk`] did with the reader's buffer.
pub enum Sent {
    /// Its bytes were copied into the last queued buffer: the reader keeps it.
    Copied,
    /// It was queued: the reader reads next into this one.
    Queued(Buf),
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Handoff {
    /// A queue of buffers of `chunk` bytes, holding up to [`QUEUE_BYTES`].
    pub fn new(chunk: usize) -> Handoff {
        Handoff::with_bound(chunk, QUEUE_BYTES)
    }

    /// Tells `backlog` how full the queue is, each time that changes.
    pub fn reporting(mut self, backlog: Option<Arc<crate::tee::archive::Backlog>>) -> Handoff {
        if let Some(b) = &backlog {
            b.bound.store(self.bound, Ordering::Relaxed);
        }
        self.backlog = backlog;
        self
    }

    /// A queue of buffers of `chunk` bytes, holding up to `bound` bytes (at least one chunk).
    pub fn with_bound(chunk: usize, bound: usize) -> Handoff {
        Handoff {
            state: Mutex::new(State {
                items: VecDeque::new(),
                bytes: 0,
                stopping: false,
                closed: false,
                spare: Vec::new(),
                worker_waits: false,
                reader_waits: false,
            }),
            turn: Mutex::new(()),
            ready: Condvar::new(),
            room: Condvar::new(),
            chunk,
            bound: bound.max(chunk),
            backlog: None,
        }
    }

    /// A fresh buffer for the reader.
    pub fn buffer(&self) -> Buf {
        lock(&self.state)
            .spare
            .pop()
            .unwrap_or_else(|| Arc::new(vec![0; self.chunk]))
    }

    fn wait_room<'a>(&'a self, mut s: MutexGuard<'a, State>, n: usize) -> MutexGuard<'a, State> {
        while !s.stopping && !s.closed && s.bytes > 0 && s.bytes + n > self.bound {
            s.reader_waits = true;
            s = self.room.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        s.reader_waits = false;
        s
    }

    /// Waits until `n` more bytes fit in the queue; false once it is stopping.
    pub fn reserve(&self, n: usize) -> bool {
        let s = self.wait_room(lock(&self.state), n);
        !(s.stopping || s.closed)
    }

    /// True once a stop is queued (or the worker has returned): nothing more may be delivered.
    pub fn stopping(&self) -> bool {
        let s = lock(&self.state);
        s.stopping || s.closed
    }

    /// The delivery turn (see the module documentation).
    pub fn delivery(&self) -> MutexGuard<'_, ()> {
        lock(&self.turn)
    }

    /// Queues the first `n` bytes of `buf`, waiting for room; `None` once the queue is stopping
    /// (then the bytes must not reach stdout either).
    pub fn send_chunk(&self, buf: &Buf, n: usize, ahead: Ahead) -> Option<Sent> {
        let mut s = self.wait_room(lock(&self.state), n);
        if s.stopping || s.closed {
            return None;
        }
        s.bytes += n;
        self.report(s.bytes);
        if let Some(Msg::Chunk(last, len, _)) = s.items.back_mut()
            && *len + n <= last.len()
            && let Some(room) = Arc::get_mut(last)
        {
            // What was seen of the bytes before stays theirs; these will be looked at by the
            // log worker.
            room[*len..*len + n].copy_from_slice(&buf[..n]);
            *len += n;
            return Some(Sent::Copied);
        }
        s.items
            .push_back(Msg::Chunk(Arc::clone(buf), n, Box::new(ahead)));
        let next = s.spare.pop();
        let wake = s.worker_waits;
        drop(s);
        if wake {
            self.ready.notify_one();
        }
        Some(Sent::Queued(
            next.unwrap_or_else(|| Arc::new(vec![0; self.chunk])),
        ))
    }

    /// Whether chunks wait in the queue: the log worker is behind the reader.
    pub fn behind(&self) -> bool {
        lock(&self.state).bytes > 0
    }

    /// Queues `msg` (not a chunk) unless the queue is stopping.
    pub fn send(&self, msg: Msg) {
        let mut s = lock(&self.state);
        if !s.stopping {
            s.items.push_back(msg);
            drop(s);
            self.ready.notify_one();
        }
    }

    /// Queues a stop behind everything queued, in the delivery turn: nothing is queued after it,
    /// and no chunk is in delivery to stdout without being queued before it.
    pub fn stop(&self, status: u8) {
        let _turn = self.delivery();
        let mut s = lock(&self.state);
        if !s.stopping {
            s.stopping = true;
            s.items.push_back(Msg::Stop(status));
        }
        drop(s);
        self.ready.notify_one();
        self.room.notify_all();
    }

    /// The next message, waiting for one.
    pub fn recv(&self) -> Msg {
        loop {
            if let Some(msg) = self.recv_until(None) {
                return msg;
            }
        }
    }

    /// The next message, waiting for one at most `timeout`: `None` when none came.
    pub fn recv_timeout(&self, timeout: Duration) -> Option<Msg> {
        self.recv_until(Some(Instant::now() + timeout))
    }

    #[inline]
    fn report(&self, bytes: usize) {
        if let Some(b) = &self.backlog {
            b.queued.store(bytes, Ordering::Relaxed);
        }
    }

    fn recv_until(&self, deadline: Option<Instant>) -> Option<Msg> {
        let mut s = lock(&self.state);
        loop {
            if let Some(msg) = s.items.pop_front() {
                if let Msg::Chunk(_, n, _) = &msg {
                    s.bytes -= n;
                    self.report(s.bytes);
                    // The level the queue drains to before a reader waiting for room is woken:
                    // one wake-up per few chunks instead of one per chunk.
                    if s.reader_waits && s.bytes <= self.bound / 2 {
                        drop(s);
                        self.room.notify_one();
                    }
                }
                return Some(msg);
            }
            s.worker_waits = true;
            s = match deadline {
                None => self.ready.wait(s).unwrap_or_else(|p| p.into_inner()),
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        s.worker_waits = false;
                        return None;
                    }
                    self.ready
                        .wait_timeout(s, left)
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
            };
            s.worker_waits = false;
        }
    }

    /// Gives a chunk's buffer back for reuse once the worker is done with it.
    ///
    /// Every buffer is kept (at most what the bound holds, and a few): a fresh one costs a
    /// `mmap` and a page fault per page, which made a log worker that lags behind by the whole
    /// queue (short lines, stdin a file) a third slower.
    pub fn recycle(&self, buf: Buf) {
        let mut s = lock(&self.state);
        if s.spare.len() <= 2 * self.bound / self.chunk + 4 {
            s.spare.push(buf);
        }
    }

    /// The worker has returned: a reader waiting for room gives up.
    pub fn close(&self) {
        lock(&self.state).closed = true;
        self.room.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bug in the reader's look costs that chunk its look, and the next chunks are looked at
    /// as before: the reading thread, which feeds stdout, goes on.
    #[test]
    fn a_panic_in_the_readers_look_costs_the_chunk_its_look() {
        let mut looks = Looks {
            lines: Some(EngineConfig::default()),
            whole: true,
            ..Looks::default()
        };
        let caught = crate::cut::engine::caught_panics();
        let chunk = [crate::cut::engine::tests::PANICS, b"\n[1]\n"].concat();
        let ahead = looks.look(&chunk, true);
        assert!(ahead.lines.is_none());
        assert!(crate::cut::engine::caught_panics() > caught);
        let ahead = looks.look(b"[1]\n[2]\n", true);
        assert!(ahead.lines.is_some_and(|j| j.worth_it()));
    }

    fn chunk(h: &Handoff, bytes: &[u8]) -> Option<Sent> {
        let mut buf = h.buffer();
        Arc::get_mut(&mut buf).unwrap()[..bytes.len()].copy_from_slice(bytes);
        h.send_chunk(&buf, bytes.len(), Ahead::default())
    }

    fn take(h: &Handoff) -> Vec<u8> {
        match h.recv() {
            Msg::Chunk(b, n, _) => b[..n].to_vec(),
            _ => panic!("not a chunk"),
        }
    }

    #[test]
    fn small_reads_behind_a_slow_log_share_a_buffer() {
        let h = Handoff::new(16);
        assert!(matches!(chunk(&h, b"abc"), Some(Sent::Queued(_))));
        assert!(matches!(chunk(&h, b"def"), Some(Sent::Copied)));
        assert!(matches!(chunk(&h, b"0123456789xy"), Some(Sent::Queued(_))));
        assert_eq!(take(&h), b"abcdef");
        assert_eq!(take(&h), b"0123456789xy");
    }

    #[test]
    fn nothing_is_queued_after_a_stop() {
        let h = Handoff::new(16);
        chunk(&h, b"a\n");
        h.stop(143);
        assert!(chunk(&h, b"b\n").is_none());
        h.send(Msg::End(true));
        assert_eq!(take(&h), b"a\n");
        assert!(matches!(h.recv(), Msg::Stop(143)));
        assert!(!h.reserve(1));
    }
}
