//! A watcher of the stream for a caller that supervises the process writing it (`smart-tee
//! run`): told of each batch of log lines as it is written, and of input that ends inside a
//! line; and what the signals that would stop the tee do instead.
//!
//! The tee knows nothing of what the watcher does with them: the summary's reading of events,
//! the clocks and the ceilings live in a later phase and are injected, as `--progress`'s
//! renderer is.

use std::sync::{Arc, OnceLock};

use super::handoff::Handoff;

/// What the log worker tells of the stream, on its own thread, as it goes.
pub trait Watch: Send {
    /// Bytes arrived that end inside a line: a line still arriving.
    fn partial(&mut self);
    /// Log lines were written (whole lines, each with its newline), in input order.
    fn logged(&mut self, lines: &[u8]);
    /// The input has ended and every line is logged.
    fn finished(&mut self) {}
}

/// What [`crate::tee::run_supervised`] adds to a plain run.
pub struct Supervised {
    pub watch: Box<dyn Watch>,
    /// Called with SIGINT (unless `-i`), SIGTERM, SIGHUP or SIGQUIT instead of stopping: the
    /// stream goes on to its end, which the caller brings about.
    pub on_signal: Box<dyn Fn(i32) + Send>,
    /// The signals, taken over by the caller before it started the agent (a signal that came
    /// since waits in them); none to take them over at the tee's start.
    pub signals: Option<signal_hook::iterator::Signals>,
    /// Set by the tee as the copy starts: how the caller ends it before its input does.
    pub end: EndCopy,
}

/// Ends the copy before its input ends, from another thread: every chunk read so far is
/// logged, and the copy returns [`crate::tee::Finish::Stopped`] with [`EndCopy::STATUS`]
/// instead of waiting for the end of an input that a process the caller does not know holds
/// open (the reading thread is left blocked in its read).
#[derive(Clone, Default)]
pub struct EndCopy(Arc<OnceLock<Arc<Handoff>>>);

impl EndCopy {
    /// The status the copy ends with when ended this way (no signal's, no error's).
    pub const STATUS: u8 = 0;

    /// Ends the copy, unless it has not started or input read is still waiting for the logs
    /// (the reader may then be waiting for room, not for input): false then.
    pub fn end(&self) -> bool {
        match self.0.get() {
            Some(h) if !h.behind() => {
                h.stop(Self::STATUS);
                true
            }
            _ => false,
        }
    }

    pub(super) fn set(&self, handoff: Arc<Handoff>) {
        let _ = self.0.set(handoff);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tee::handoff::{Ahead, Msg};

    /// The copy is not ended while input read waits for the logs: the reader may be waiting for
    /// room then, with more in the pipe.
    #[test]
    fn the_copy_is_not_ended_while_input_waits_for_the_logs() {
        let end = EndCopy::default();
        assert!(!end.end(), "not started");
        let h = Arc::new(Handoff::new(16));
        end.set(Arc::clone(&h));
        let buf = h.buffer();
        assert!(h.send_chunk(&buf, 2, Ahead::default()).is_some());
        assert!(!end.end(), "a chunk waits for the logs");
        assert!(matches!(h.recv(), Msg::Chunk(..)));
        assert!(end.end());
        assert!(matches!(h.recv(), Msg::Stop(EndCopy::STATUS)));
    }
}
