//! Cutting the input into frames, on the log thread: [`FrameBuilder`] gathers a line's bytes
//! straight into the frame it belongs to (the one copy the archive makes of the input), keeps
//! the frame's index entry, and hands each closed frame to the compression thread
//! ([`super::compress`]).
//!
//! A frame closes at the first line end past the target, after [`MAX_BLANKS`] lines that
//! produced no log line, at end of input, after a pause of the input (at its last line end), or
//! at the maximum inside a longer line, which then goes on in the next frames.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, SyncSender};

use super::compress::{Frame, Numbered, ToCompressor};
use super::{Backlog, CONTINUES, EOF_END, Entry, MAX_BLANKS, OPEN_END, fold};

/// One line end, as the frame records it.
#[derive(Clone, Copy, Debug)]
pub struct End {
    /// The hash of the log line it produced, if any.
    pub log: Option<u64>,
    /// Ended by end of input, without a newline.
    pub eof: bool,
}

/// The frame being gathered, and where closed ones go.
pub struct FrameBuilder {
    frame: Vec<u8>,
    target: usize,
    max: usize,
    /// The frame's flags so far ([`CONTINUES`]).
    flags: u32,
    /// The frame's entry so far (line ends, log lines).
    entry: Entry,
    /// The log line number the next logged line gets.
    next_log: u64,
    /// Where the frame's last line end is (0 when none).
    last_end: usize,
    /// `None` once the compression threads have ended (their errors say why).
    tx: Option<SyncSender<Numbered>>,
    /// The number of the next message.
    seq: u64,
    /// Frame buffers the compression thread is done with.
    free: Receiver<Vec<u8>>,
    /// Counts the frames handed over, for the compression threads' pace.
    backlog: Arc<Backlog>,
}

impl FrameBuilder {
    pub fn new(
        target: usize,
        max: usize,
        next_log: u64,
        tx: SyncSender<Numbered>,
        free: Receiver<Vec<u8>>,
        backlog: Arc<Backlog>,
    ) -> FrameBuilder {
        let target = target.max(1);
        let max = max.max(target);
        FrameBuilder {
            frame: Vec::with_capacity(max),
            target,
            max,
            flags: 0,
            entry: Entry::default(),
            next_log,
            last_end: 0,
            tx: Some(tx),
            seq: 0,
            free,
            backlog,
        }
    }

    /// What the compression threads pace themselves by (shared with them).
    pub fn backlog(&self) -> Arc<Backlog> {
        Arc::clone(&self.backlog)
    }

    /// The most input a frame holds.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Adds bytes of a line; a frame full in mid-line is closed and the line goes on in the
    /// next.
    #[inline]
    pub fn push(&mut self, mut bytes: &[u8]) {
        loop {
            let room = self.max - self.frame.len();
            if bytes.len() <= room {
                self.frame.extend_from_slice(bytes);
                return;
            }
            self.frame.extend_from_slice(&bytes[..room]);
            bytes = &bytes[room..];
            self.close(OPEN_END);
        }
    }

    /// Ends the line whose bytes came last (its newline, if any, pushed already).
    #[inline]
    pub fn end(&mut self, end: End) {
        let index = self.entry.ends;
        self.entry.ends += 1;
        match end.log {
            Some(hash) => {
                if self.entry.logged == 0 {
                    self.entry.log_first = self.next_log;
                }
                self.entry.logged += 1;
                self.entry.hash = fold(self.entry.hash, hash);
                self.next_log += 1;
            }
            None => self.entry.blanks.push(index),
        }
        self.last_end = self.frame.len();
        if end.eof {
            self.close(EOF_END);
        } else if self.frame.len() >= self.target || self.entry.blanks.len() >= MAX_BLANKS {
            self.close(0);
        }
    }

    /// Closes the frame at its last line end (input pauses, a rotation): the unfinished line
    /// that follows starts the next frame. A frame that began inside that line is left open.
    #[cold]
    pub fn close_at_line_end(&mut self) {
        if self.last_end == 0 {
            return;
        }
        let mut rest = Vec::with_capacity(self.max);
        rest.extend_from_slice(&self.frame[self.last_end..]);
        self.frame.truncate(self.last_end);
        self.close(0);
        self.frame = rest;
    }

    /// Hands the frame to the compressor, then starts the next frame.
    fn close(&mut self, flags: u32) {
        let continues = self.flags & CONTINUES;
        if !self.frame.is_empty() || self.entry.ends > 0 {
            let mut entry = std::mem::take(&mut self.entry);
            entry.flags = continues | flags;
            if entry.logged == 0 {
                entry.log_first = self.next_log;
            }
            let next = self.spare();
            let bytes = std::mem::replace(&mut self.frame, next);
            // Counted before the send, which waits while the queue is full.
            self.backlog.frames.fetch_add(1, Ordering::Relaxed);
            self.send(ToCompressor::Frame(Frame { bytes, entry }));
        }
        self.frame.clear();
        self.entry = Entry::default();
        self.last_end = 0;
        self.flags = if flags & OPEN_END != 0 { CONTINUES } else { 0 };
    }

    /// A cleared frame buffer: one the compressor gave back, or a new one (untouched memory
    /// until it is written, so a short frame costs what it holds).
    fn spare(&mut self) -> Vec<u8> {
        match self.free.try_recv() {
            Ok(mut v) => {
                v.clear();
                v
            }
            Err(_) => Vec::with_capacity(self.max),
        }
    }

    fn send(&mut self, msg: ToCompressor) {
        if let Some(tx) = &self.tx
            && tx.send((self.seq, msg)).is_err()
        {
            self.tx = None;
        }
        self.seq += 1;
    }

    /// A line past the memory cap starts (its first bytes come next): the frame so far, whole
    /// lines only, is closed, so that the line's first frame holds nothing else and can be
    /// moved whole to a new archive when the line is still open at a rotation
    /// ([`FrameBuilder::rotate`]).
    #[cold]
    pub fn begin_long_line(&mut self) {
        if !self.frame.is_empty() && self.last_end == self.frame.len() {
            self.close(0);
        }
    }

    /// SIGUSR1: the frame so far goes to the archive open until now (closed at its last line
    /// end), the compressor opens the archive again by its path, and lines are numbered from
    /// `base`, the log's new line count. The line in progress goes whole to the new archive:
    /// its part in the frame being gathered is carried over, and the frames it filled before
    /// (a line longer than a frame, which begins a frame of its own:
    /// [`FrameBuilder::begin_long_line`]) are moved from the old archive to the new one by the
    /// compressor ([`super::compress`]).
    pub fn rotate(&mut self, base: u64) {
        self.close_at_line_end();
        let carried = std::mem::take(&mut self.frame);
        let continues = self.flags;
        if continues & CONTINUES == 0 || carried.is_empty() {
            self.close(0);
        } else {
            self.close(OPEN_END);
        }
        self.flags = if carried.is_empty() { 0 } else { continues };
        self.next_log = base + 1;
        self.send(ToCompressor::Reopen(self.next_log));
        self.frame = carried;
    }

    /// The log was truncated under the writer (logrotate's `copytruncate`): the lines so far
    /// keep their numbers (the frame is closed at its last line end) and the next logged line
    /// is numbered `base + 1`, after the log's lines now.
    #[cold]
    pub fn renumber(&mut self, base: u64) {
        self.close_at_line_end();
        self.next_log = base + 1;
    }

    /// End of input: the last frame (leaving its line open when the input ended inside one that
    /// a frame boundary cut), then the compressor's end.
    pub fn finish(&mut self) {
        let flags = if self.last_end < self.frame.len() {
            OPEN_END
        } else {
            0
        };
        self.close(flags);
        self.send(ToCompressor::End(self.next_log));
        self.tx = None;
    }
}
