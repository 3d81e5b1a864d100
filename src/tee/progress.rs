//! `--progress[=FILE]`: a readable line for each event as it is logged, on standard error or in
//! FILE, while standard output stays the input byte for byte.
//!
//! The tee path never waits for it. The log worker hands each batch of log lines (a copy, in a
//! recycled buffer) to a thread of its own: at most [`RATE`] lines a second (bursts of
//! [`BURST`]), through a queue bounded in bytes ([`QUEUE_BYTES`]); lines past the rate or the
//! queue are dropped and counted, and the thread says how many events it did not show before
//! the next ones. It opens FILE itself (a FIFO without a reader blocks it, not the stream) and
//! renders each line with the renderer given by the caller (the text view's line lives in a
//! later phase). At the end of input the worker waits for it to catch up while it makes
//! progress, and gives up after [`STUCK`] without a line written (a destination that no longer
//! reads).

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, SyncSender, TrySendError};
use std::time::{Duration, Instant};

/// Bytes of log lines queued for the progress thread at most; past it, batches are dropped.
pub const QUEUE_BYTES: usize = 1 << 20;

/// How long the end of the run waits for a progress thread that writes nothing.
pub const STUCK: Duration = Duration::from_secs(1);

/// Lines shown per second at most, sustained, and in a burst: more than anyone reads live, and
/// more than an agent writes events (a stream blasted from a file runs at tens of thousands a
/// second; rendering them all would cost the tee as much CPU again).
pub const RATE: f64 = 200.0;
pub const BURST: f64 = 400.0;

/// Where progress lines go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProgressTo {
    Stderr,
    File(PathBuf),
}

/// Renders one log line (without its newline), numbered `n` in this run's log, as the line to
/// print (without a newline).
pub type RenderLine = Box<dyn FnMut(&[u8], u64) -> Vec<u8> + Send>;

/// Makes the renderer once the destination is open: `color` when it is a terminal and
/// `NO_COLOR` is not set, `width` its columns when it is a terminal.
pub type MakeRender = Box<dyn FnOnce(bool, Option<usize>) -> RenderLine + Send>;

/// One batch of log lines for the thread.
struct Batch {
    /// The number of the batch's first line in this run's log.
    first: u64,
    /// Lines dropped since the last batch sent.
    dropped: u64,
    lines: Vec<u8>,
}

/// The log worker's end of the progress thread.
pub struct Progress {
    queue: Option<SyncSender<Batch>>,
    /// Buffers the thread is done with, for reuse.
    spent: Receiver<Vec<u8>>,
    queued: Arc<AtomicUsize>,
    /// Lines the thread has written: the end waits while it grows.
    written: Arc<AtomicU64>,
    done: Receiver<()>,
    /// Lines handed over or dropped so far.
    lines: u64,
    dropped: u64,
    /// Lines that may be shown now (a token bucket: [`RATE`] a second, at most [`BURST`]).
    tokens: f64,
    refilled: Instant,
}

impl Progress {
    /// Starts the progress thread writing to `to`.
    pub fn start(to: ProgressTo, make: MakeRender) -> Progress {
        let (queue, batches) = std::sync::mpsc::sync_channel::<Batch>(1024);
        let (give_back, spent) = std::sync::mpsc::channel();
        let (finished, done) = std::sync::mpsc::channel();
        let queued = Arc::new(AtomicUsize::new(0));
        let written = Arc::new(AtomicU64::new(0));
        {
            let (queued, written) = (Arc::clone(&queued), Arc::clone(&written));
            std::thread::spawn(move || {
                show(to, make, &batches, &give_back, &queued, &written);
                let _ = finished.send(());
            });
        }
        Progress {
            queue: Some(queue),
            spent,
            queued,
            written,
            done,
            lines: 0,
            dropped: 0,
            tokens: BURST,
            refilled: Instant::now(),
        }
    }

    /// Hands over `batch`, which holds `lines` whole log lines: as many of its first lines as
    /// the rate allows, and only if the queue has room; the others are counted. Never waits.
    pub fn send(&mut self, batch: &[u8], lines: u64) {
        let first = self.lines + 1;
        self.lines += lines;
        let Some(queue) = &self.queue else { return };
        let now = Instant::now();
        let elapsed = now.duration_since(self.refilled).as_secs_f64();
        self.tokens = (self.tokens + elapsed * RATE).min(BURST);
        self.refilled = now;
        let shown = (self.tokens as u64).min(lines);
        let end = match shown {
            0 => 0,
            n if n == lines => batch.len(),
            n => memchr::memchr_iter(b'\n', batch)
                .nth(n as usize - 1)
                .map_or(batch.len(), |at| at + 1),
        };
        if shown == 0 || self.queued.load(Ordering::Relaxed) + end > QUEUE_BYTES {
            self.dropped += lines;
            return;
        }
        let mut buf = self.spent.try_recv().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(&batch[..end]);
        self.queued.fetch_add(end, Ordering::Relaxed);
        let b = Batch {
            first,
            dropped: self.dropped,
            lines: buf,
        };
        match queue.try_send(b) {
            Ok(()) => {
                self.tokens -= shown as f64;
                self.dropped = lines - shown;
            }
            Err(TrySendError::Full(_)) => {
                self.queued.fetch_sub(end, Ordering::Relaxed);
                self.dropped += lines;
            }
            Err(TrySendError::Disconnected(_)) => self.queue = None,
        }
    }

    /// Ends the queue and waits for the thread to show what is queued, while it writes.
    pub fn finish(&mut self) {
        let Some(queue) = self.queue.take() else {
            return;
        };
        if self.dropped > 0 {
            // The count of the last dropped lines, in an empty batch.
            let _ = queue.try_send(Batch {
                first: self.lines + 1,
                dropped: self.dropped,
                lines: Vec::new(),
            });
        }
        drop(queue);
        let mut seen = self.written.load(Ordering::Relaxed);
        loop {
            match self.done.recv_timeout(STUCK) {
                Ok(()) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    let now = self.written.load(Ordering::Relaxed);
                    if now == seen {
                        return;
                    }
                    seen = now;
                }
            }
        }
    }
}

/// The thread: opens the destination, then shows every batch until the queue ends.
fn show(
    to: ProgressTo,
    make: MakeRender,
    batches: &Receiver<Batch>,
    give_back: &Sender<Vec<u8>>,
    queued: &AtomicUsize,
    written: &AtomicU64,
) {
    match to {
        ProgressTo::Stderr => {
            let terminal = crate::door::stderr_terminal();
            show_on(
                crate::door::stderr(),
                terminal,
                None,
                make,
                batches,
                give_back,
                queued,
                written,
            );
        }
        ProgressTo::File(path) => {
            let name = format!("--progress={}", path.display());
            #[allow(
                clippy::disallowed_methods,
                reason = "a door (docs/redaction.md): written through crate::door::Answer"
            )]
            let file = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(&path);
            match file {
                Ok(f) => {
                    let terminal = crate::door::terminal(std::os::fd::AsFd::as_fd(&f));
                    show_on(
                        crate::door::Answer::new(f),
                        terminal,
                        Some(&name),
                        make,
                        batches,
                        give_back,
                        queued,
                        written,
                    );
                }
                Err(e) => crate::say!("smart-tee: {name}: {e}; no progress is shown"),
            }
        }
    }
}

/// Renders and writes every batch until the queue ends; `terminal`: the destination is one
/// (with its width). A write error is said once (on stderr, for a FILE) and ends the showing.
#[allow(clippy::too_many_arguments)]
fn show_on(
    mut out: impl Write,
    terminal: Option<Option<usize>>,
    name: Option<&str>,
    make: MakeRender,
    batches: &Receiver<Batch>,
    give_back: &Sender<Vec<u8>>,
    queued: &AtomicUsize,
    written: &AtomicU64,
) {
    let color = terminal.is_some() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut render = make(color, terminal.flatten());
    let mut text = Vec::new();
    while let Ok(batch) = batches.recv() {
        queued.fetch_sub(batch.lines.len(), Ordering::Relaxed);
        text.clear();
        if batch.dropped > 0 {
            text.extend_from_slice(
                format!(
                    "… {} events not shown (faster than --progress shows them)\n",
                    batch.dropped
                )
                .as_bytes(),
            );
        }
        let mut n = batch.first;
        for line in batch.lines.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            text.extend_from_slice(&render(line, n));
            text.push(b'\n');
            n += 1;
        }
        if let Err(e) = out.write_all(&text).and_then(|()| out.flush()) {
            // Said on standard error, unless that is what failed.
            if let Some(name) = name {
                crate::say!("smart-tee: {name}: {e}; no more progress is shown");
            }
            return;
        }
        written.fetch_add(n - batch.first + 1, Ordering::Relaxed);
        let _ = give_back.send(batch.lines);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A destination that falls behind, or more lines than the rate allows, cost lines,
    /// counted, never the sender's time: with the thread held in its first line, what does not
    /// fit is dropped, and once it goes on it says how many it did not show; every line is
    /// either shown or counted, and the first ones are shown.
    #[test]
    fn a_stuck_destination_drops_lines_and_counts_them() {
        let path = std::env::temp_dir().join(format!("smart-tee-progress-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let (permit, wait) = std::sync::mpsc::channel::<()>();
        let make: MakeRender = Box::new(move |color, width| {
            assert!(!color && width.is_none(), "a file is no terminal");
            let mut first = true;
            Box::new(move |line: &[u8], n: u64| {
                if std::mem::take(&mut first) {
                    let _ = wait.recv();
                }
                format!("#{n} {}", line.len()).into_bytes()
            })
        });
        let mut p = Progress::start(ProgressTo::File(path.clone()), make);
        let line = vec![b'x'; 1023];
        let mut batch = Vec::new();
        for _ in 0..1024 {
            batch.extend_from_slice(&line);
            batch.push(b'\n');
        }
        for _ in 0..12 {
            p.send(&batch, 1024);
        }
        assert!(p.dropped > 0, "12 MiB cannot all be queued");
        permit.send(()).unwrap();
        p.finish();
        let shown = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let dropped: u64 = shown
            .lines()
            .filter_map(|l| l.strip_prefix("… "))
            .map(|l| l.split(' ').next().unwrap().parse::<u64>().unwrap())
            .sum();
        let lines = shown.lines().filter(|l| l.starts_with('#')).count() as u64;
        assert!(dropped > 0, "{shown}");
        assert_eq!(lines + dropped, 12 * 1024);
        assert!(shown.starts_with("#1 1023\n"));
    }

    /// A burst past the rate shows its first lines and counts the rest.
    #[test]
    fn a_burst_shows_its_first_lines_and_counts_the_rest() {
        let path = std::env::temp_dir().join(format!("smart-tee-burst-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let make: MakeRender = Box::new(|_, _| {
            Box::new(|line: &[u8], n: u64| format!("#{n} {}", line.len()).into_bytes())
        });
        let mut p = Progress::start(ProgressTo::File(path.clone()), make);
        p.send(&b"{}\n".repeat(1000), 1000);
        p.finish();
        let shown = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines.len(), BURST as usize + 1, "{shown}");
        assert_eq!(lines[0], "#1 2");
        assert_eq!(lines[BURST as usize - 1], "#400 2");
        assert_eq!(
            lines[BURST as usize],
            "… 600 events not shown (faster than --progress shows them)"
        );
    }
}
