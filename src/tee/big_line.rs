//! A line past the memory cap ([`line_cap`]), read piece by piece, for the log
//! (`log.rs`) and for a capped stdout (`stdout_cap.rs`).

use crate::cut::engine::{EngineConfig, LineEngine, Outcome, guarded};
use crate::cut::redact::KeyMarks;
use crate::reduce::{Failure, Reducer};
use crate::tee::split::Piece;

/// The longest line held in memory whole when it cannot be reduced while read (no budget, or a
/// budget over [`crate::cut::engine::MAX_STREAM_BUDGET`]). A longer line is logged as a
/// `truncated` record of its first and last bytes (see [`Oversize`]), so no input can make
/// smart-tee allocate more.
pub const LINE_CAP: usize = 64 << 20;

/// The longest line held in memory whole. A longer line is reduced as it is read
/// (`reduce.rs`): it keeps its structure in bounded memory, however long it grows.
pub const STREAM_CAP: usize = 8 << 20;

/// The longest line held whole under `config`: [`STREAM_CAP`] when long lines are reduced while
/// read, else [`LINE_CAP`].
pub(crate) fn line_cap(config: &EngineConfig) -> usize {
    if config.reduces() {
        STREAM_CAP
    } else {
        LINE_CAP
    }
}

/// A line past the memory cap, read piece by piece: reduced as it comes, with an excerpt of
/// its raw bytes kept beside in case the reduction fails. The log and a capped stdout
/// (`stdout_cap.rs`) both read long lines this way.
pub(crate) struct BigLine {
    reducer: Option<Reducer>,
    /// Panics caught in the reducer (bugs), counted by the engine that logs the line.
    panics: u64,
    failure: Failure,
    excerpt: Oversize,
    /// With `--redact`: what the line says of private keys' blocks, for the lines after it.
    keys: Option<KeyMarks>,
}

impl BigLine {
    /// Starts a line past the memory cap with its first bytes.
    #[cold]
    pub(crate) fn start(config: &EngineConfig, first: &[u8]) -> BigLine {
        let budget = config.max_line_bytes;
        let mut big = BigLine {
            reducer: config.reduces().then(|| Reducer::for_budget(budget)),
            panics: 0,
            failure: Failure::TooBig,
            // Bytes kept from each end: enough for any record the budget allows.
            excerpt: Oversize::new(budget.max(64 * 1024)),
            keys: config.redact.then(KeyMarks::default),
        };
        big.push(first);
        big
    }

    pub(crate) fn push(&mut self, piece: &[u8]) {
        self.excerpt.push(piece);
        if let Some(keys) = self.keys.as_mut() {
            keys.see(piece);
        }
        if let Some(r) = self.reducer.as_mut() {
            // A bug in the reducer costs the line its structure (it is logged as an excerpt),
            // never the stream.
            let fed = guarded(|| {
                r.feed(piece);
                r.failure()
            });
            match fed {
                Ok(None) => {}
                Ok(Some(f)) => {
                    self.failure = f;
                    self.reducer = None;
                }
                Err(_) => {
                    self.panics += 1;
                    self.reducer = None;
                }
            }
        }
    }

    /// Follows the splitter's pieces of lines past the cap in `big`: hands back a whole line,
    /// or a long line once its last piece is in, and keeps the others.
    #[inline]
    pub(crate) fn follow<'a>(
        big: &mut Option<BigLine>,
        config: &EngineConfig,
        piece: Piece<'a>,
    ) -> Next<'a> {
        match piece {
            Piece::Line(line) => return Next::Line(line),
            Piece::Start(first) => *big = Some(BigLine::start(config, first)),
            Piece::Part(more) => {
                if let Some(big) = big.as_mut() {
                    big.push(more);
                }
            }
            Piece::End(last) => {
                if let Some(mut line) = big.take() {
                    line.push(last);
                    return Next::Big(Box::new(line));
                }
            }
        }
        Next::Nothing
    }

    /// Appends the line's log line to `out`: its reduction, or else an excerpt.
    #[cold]
    /// `unfinished`: the input ended inside the line (no newline).
    pub(crate) fn finish(
        self,
        engine: &mut LineEngine,
        unfinished: bool,
        out: &mut Vec<u8>,
    ) -> Outcome {
        if let Some(keys) = &self.keys {
            engine.after_pieces(keys);
        }
        let finished = self.reducer.map(|r| guarded(|| r.finish()));
        let panicked = matches!(finished, Some(Err(_)));
        engine.count_panics(self.panics + u64::from(panicked));
        let failure = match finished {
            Some(Ok(Ok(Some(reduced)))) => return engine.process_reduced(reduced, out),
            Some(Ok(Ok(None))) => return Outcome::Blank,
            Some(Ok(Err(f))) => f,
            Some(Err(_)) | None => self.failure,
        };
        let o = self.excerpt;
        let (a, b) = o.tail.as_slices();
        let tail = [a, b].concat();
        engine.process_excerpt(failure, &o.head, &tail, o.total, unfinished, out)
    }
}

/// What a piece from the splitter gives its reader ([`BigLine::follow`]).
pub(crate) enum Next<'a> {
    /// A whole line, held in memory.
    Line(&'a [u8]),
    /// A line past the cap, all read (boxed: it is rare, and large).
    Big(Box<BigLine>),
    /// Nothing yet.
    Nothing,
}

/// A line past [`LINE_CAP`]: only its first and last bytes and its length are kept.
struct Oversize {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    tail_cap: usize,
    total: u64,
}

impl Oversize {
    /// An empty excerpt keeping `keep` bytes from each end.
    fn new(keep: usize) -> Oversize {
        Oversize {
            head: Vec::with_capacity(keep),
            tail: std::collections::VecDeque::with_capacity(keep),
            tail_cap: keep,
            total: 0,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.tail_cap - self.head.len();
        self.head.extend_from_slice(&bytes[..room.min(bytes.len())]);
        let bytes = &bytes[bytes.len().saturating_sub(self.tail_cap)..];
        let over = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
        self.tail.drain(..over);
        self.tail.extend(bytes);
    }
}
