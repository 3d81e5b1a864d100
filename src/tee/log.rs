//! The log side of the tee: splitting chunks into lines, running each finished line through the
//! engine and writing the results to every log.
//!
//! Lines finished by one chunk are batched and written with one write per log before the next
//! chunk is read, so a line reaches the log as soon as its newline has been read, and every write
//! carries whole lines only: a crash or a kill never leaves half a line behind.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::cut::engine::{Found, Known, LineEngine, Outcome};
use crate::cut::record::{self, ChunkText, Text};
use crate::cut::redact::Scouted;
use crate::error::Error;
use crate::line::agents::{Drift, Head};
use crate::tee::handoff::{Ahead, Looks};
use crate::tee::progress::Progress;
use crate::tee::sink::LogSink;
use crate::tee::split::{Piece, Splitter};

/// A batch is written early once it holds this much, to bound its memory.
const BATCH_LIMIT: usize = 256 * 1024;

pub(crate) use crate::tee::big_line::{BigLine, Next, line_cap};
pub use crate::tee::big_line::{LINE_CAP, STREAM_CAP};

/// Counts of what went through the engine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub bytes_in: u64,
    pub bytes_logged: u64,
    pub lines_blank: u64,
    pub lines_verbatim: u64,
    pub lines_cut: u64,
    pub lines_non_json: u64,
    pub lines_unplanned: u64,
    /// Lines whose processing panicked (a bug), caught and logged as records.
    pub panics: u64,
}

impl Stats {
    fn count(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Blank => self.lines_blank += 1,
            Outcome::Verbatim => self.lines_verbatim += 1,
            Outcome::Cut => self.lines_cut += 1,
            Outcome::NonJson => self.lines_non_json += 1,
            Outcome::Unplanned => self.lines_unplanned += 1,
        }
    }

    /// Lines read, blank ones included.
    pub fn lines_in(&self) -> u64 {
        self.lines_logged() + self.lines_blank
    }

    /// Lines written to the log.
    pub fn lines_logged(&self) -> u64 {
        self.lines_verbatim + self.lines_cut + self.lines_non_json + self.lines_unplanned
    }
}

/// Turns the input stream into log lines and writes them to the sinks.
pub struct LogWriter {
    engine: LineEngine,
    sinks: Vec<LogSink>,
    lines: Splitter,
    /// The unfinished last line, when it is past the memory cap.
    big: Option<BigLine>,
    batch: Vec<u8>,
    stats: Stats,
    finished: bool,
    /// False when nothing would read the engine's work (no logs, no stats): then lines are
    /// not processed at all.
    active: bool,
    /// Lines looked at for signs of pretty-printed JSON (only the first few are).
    looked: u8,
    notice: Option<String>,
    /// `--archive`: every line's bytes, and whether it was logged (hook: `archive` module).
    archive: Option<crate::tee::archive::writer::ArchiveFeed>,
    /// `--progress`: each batch of log lines is handed to its thread.
    progress: Option<Progress>,
    /// `smart-tee run`: each batch of log lines, and input ending inside a line.
    watcher: Option<Box<dyn crate::tee::watch::Watch>>,
    /// Lines logged when the last batch was written: the next batch's count.
    batched_lines: u64,
    /// `--stats`: the agent, its version and the event kinds no reader knows.
    drift: Option<Box<DriftWatch>>,
    /// The last chunk had a line that is not JSON: the reading thread checks the text of the
    /// next ones ([`Ahead::text`]).
    text_seen: Arc<AtomicBool>,
}

/// Format drift as the tee sees it: each log line's head, taken by one scan.
struct DriftWatch {
    drift: Drift,
    stack: Vec<u8>,
    /// Say the first unknown kind on stderr (`--stats`), once.
    say: bool,
}

impl LogWriter {
    pub fn new(engine: LineEngine, sinks: Vec<LogSink>) -> LogWriter {
        let active = !sinks.is_empty() || engine.config().field_stats;
        let cap = line_cap(engine.config());
        LogWriter {
            active,
            engine,
            sinks,
            lines: Splitter::new(cap),
            big: None,
            batch: Vec::new(),
            stats: Stats::default(),
            finished: false,
            looked: 0,
            notice: None,
            archive: None,
            progress: None,
            watcher: None,
            batched_lines: 0,
            drift: None,
            text_seen: Arc::default(),
        }
    }

    /// Also notes which agent wrote the stream, its version and the event kinds no reader
    /// knows (`--stats`, `--stats-json`); with `say`, the first unknown kind is said at once
    /// on stderr ([`LogWriter::take_notice`]).
    pub fn with_drift(mut self, say: bool) -> LogWriter {
        self.drift = Some(Box::new(DriftWatch {
            drift: Drift::default(),
            stack: Vec::new(),
            say,
        }));
        self.active = true;
        self
    }

    /// What the stream said of its format, when asked for ([`LogWriter::with_drift`]).
    pub fn drift(&self) -> Option<&Drift> {
        self.drift.as_ref().map(|d| &d.drift)
    }

    /// Notes the head of the log line written at `before` in the batch.
    #[inline]
    fn watch(&mut self, before: usize) {
        let Some(w) = self.drift.as_mut() else { return };
        let logged = &self.batch[before..];
        let Some(line) = logged.strip_suffix(b"\n") else {
            return;
        };
        let Some(head) = Head::of_line(line, &mut w.stack) else {
            return;
        };
        let known = w.drift.unknown.len();
        let line_no = self.stats.lines_logged();
        w.drift.add(&head, line_no);
        if w.say && w.drift.unknown.len() > known {
            w.say = false;
            let (kind, _) = w
                .drift
                .unknown
                .iter()
                .find(|(_, (_, at))| *at == line_no)
                .unzip();
            self.notice = Some(format!(
                "log line {line_no}: event kind {} is not known to smart-tee's readers ({}): \
                 --view and --summary may read such events poorly (--stats counts them)",
                kind.map_or("?", |k| k.as_str()),
                w.drift.agent.unwrap_or("?").to_string()
                    + &w.drift
                        .version
                        .as_ref()
                        .map_or(String::new(), |v| format!(" {v}")),
            ));
        }
    }

    /// Also shows each logged line (`--progress`): then every line is split and run through
    /// the engine, even with no log to write.
    pub fn with_progress(mut self, progress: Progress) -> LogWriter {
        self.progress = Some(progress);
        self.active = true;
        self
    }

    /// Also tells `watch` of every batch of log lines (`smart-tee run`).
    pub fn with_watch(mut self, watch: Box<dyn crate::tee::watch::Watch>) -> LogWriter {
        self.watcher = Some(watch);
        self.active = true;
        self
    }

    /// Also writes the archive fed here (`--archive`): then every line is split and numbered,
    /// even with no log to write.
    pub fn with_archive(mut self, feed: crate::tee::archive::writer::ArchiveFeed) -> LogWriter {
        self.archive = Some(feed);
        self.active = true;
        self
    }

    /// A remark about the input worth one line on stderr (said once): that it looks like
    /// pretty-printed JSON rather than JSON lines.
    pub fn take_notice(&mut self) -> Option<String> {
        self.notice.take()
    }

    /// Opens every log again by its path (after logrotate renamed it). Returns the errors.
    pub fn reopen(&mut self) -> Vec<Error> {
        let mut errors: Vec<Error> = self
            .sinks
            .iter_mut()
            .filter_map(|s| s.reopen().err())
            .collect();
        if let Some(a) = self.archive.as_mut() {
            a.reopen();
            errors.extend(a.take_errors());
        }
        errors
    }

    pub fn stats(&self) -> Stats {
        Stats {
            panics: self.engine.panics(),
            ..self.stats
        }
    }

    pub fn engine(&self) -> &LineEngine {
        &self.engine
    }

    /// True while at least one log can still be written.
    pub fn has_live_sinks(&self) -> bool {
        self.sinks.iter().any(|s| !s.is_failed())
    }

    /// Feeds the next chunk of input. Returns the write errors of this chunk (each log fails at
    /// most once and is then left out).
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<Error> {
        self.feed_ahead(chunk, &Ahead::default())
    }

    /// [`LogWriter::feed`], with what the reading thread did of the work on the chunk: the
    /// lines `--redact`'s filters ruled out are not looked at for secrets again, and the text's
    /// check is taken from it.
    pub fn feed_ahead(&mut self, chunk: &[u8], ahead: &Ahead) -> Vec<Error> {
        let scouted = ahead.scouted.as_ref();
        self.stats.bytes_in += chunk.len() as u64;
        let mut errors = Vec::new();
        if !self.active {
            return errors;
        }
        if self.archive.is_some() {
            self.follow_truncation();
        }
        let mut lines = std::mem::take(&mut self.lines);
        let (mut at, mut cursor, mut headers, mut noted, mut runs) = (0, 0, 0, 0, 0);
        let mut text = ChunkText::default();
        let mut text_seen = false;
        while let Some(piece) = lines.next(chunk, &mut at) {
            let (known, whole, record) = match piece {
                Piece::Line(line) => {
                    let found =
                        (ahead.lines.as_ref()).and_then(|l| l.find(chunk, line, &mut noted));
                    let known = Known {
                        ruled_out: scouted.is_some_and(|s| s.ruled_out(chunk, line, &mut cursor)),
                        no_key_header: scouted
                            .is_some_and(|s| s.holds_no_header(chunk, line, &mut headers)),
                        text: text.of(chunk, line),
                        verbatim: found == Some(Found::Whole),
                    };
                    let record = match found {
                        Some(Found::Record(record)) => Some(record),
                        _ => None,
                    };
                    (known, Some(line), record)
                }
                _ => (Known::default(), None, None),
            };
            let outcome = self.piece(piece, true, known, record);
            if let Some(line) = whole
                && outcome == Some(Outcome::NonJson)
                && known.text != Some(Text::Utf8)
                && !record::starts_binary(line)
            {
                // The lines after a line of text are likely text too (and after a binary line,
                // binary: those are not checked as a stretch, which would stop in the next).
                text.check_after(chunk, line, ahead.text.as_ref());
                text_seen = true;
            }
            if outcome == Some(Outcome::NonJson)
                && self.writes_text_runs()
                && let Some(span) = text.utf8_from(chunk, at)
                && let Some(span) = self.unredacted(span, at, scouted)
            {
                // And are written one after another, without the engine, while they are plain.
                let before = self.batch.len();
                let config = self.engine.config();
                let (budget, cap) = (config.max_line_bytes, line_cap(config));
                let written = (ahead.runs.as_ref()).and_then(|r| r.at(at, span.len(), &mut runs));
                let run = match written {
                    Some((run, records)) => {
                        self.batch.extend_from_slice(records);
                        run
                    }
                    None => record::write_text_run(span, budget, cap, &mut self.batch, BATCH_LIMIT),
                };
                at += run.bytes;
                self.stats.lines_non_json += run.lines;
                self.stats.bytes_logged += (self.batch.len() - before) as u64;
            }
            if self.batch.len() >= BATCH_LIMIT {
                self.write_batch(&mut errors);
            }
        }
        self.lines = lines;
        if text_seen != self.text_seen.load(Ordering::Relaxed) {
            self.text_seen.store(text_seen, Ordering::Relaxed);
        }
        self.write_batch(&mut errors);
        if let Some(w) = self
            .watcher
            .as_mut()
            .filter(|_| chunk.last() != Some(&b'\n'))
        {
            w.partial();
        }
        if let Some(a) = self.archive.as_mut() {
            errors.extend(a.take_errors());
        }
        errors
    }

    /// With `--archive`: when its log was truncated under the writer since the last chunk
    /// (logrotate's `copytruncate`), the archive numbers the next lines as the log now does,
    /// and stderr says so ([`LogWriter::take_notice`]).
    fn follow_truncation(&mut self) {
        let (Some(a), Some(sink)) = (self.archive.as_mut(), self.sinks.first_mut()) else {
            return;
        };
        if a.log() != Some(sink.path()) || !sink.was_truncated() {
            return;
        }
        a.log_truncated();
        let said = format!(
            "log {:?} was truncated while smart-tee wrote it (logrotate's copytruncate?): its \
             archive numbers the next lines from the log's new start; lines written between a \
             copy and its truncation are in neither copy, and a line logged while the log was \
             truncated may have no original (create and SIGUSR1 lose none: docs/archive.md)",
            sink.path()
        );
        self.notice = Some(match self.notice.take() {
            Some(before) => format!("{before}\nsmart-tee: {said}"),
            None => said,
        });
    }

    /// Whether runs of plain text are written without the engine ([`record::write_text_run`]):
    /// not when each line has more to it than its record (the archive's line ends, `--stats`'
    /// look at each log line, timestamps), nor while the first lines are looked at for
    /// pretty-printed JSON. With `--redact`, only over the lines the reader ruled out
    /// ([`LogWriter::unredacted`]).
    fn writes_text_runs(&self) -> bool {
        self.may_write_text_runs() && self.looked >= 3
    }

    fn may_write_text_runs(&self) -> bool {
        self.archive.is_none() && self.drift.is_none() && !self.engine.config().add_timestamp
    }

    /// The part of `span` (the bytes of the chunk from `at`) that a run may write: all of it
    /// without `--redact`; with it, the lines up to the first one that the reading thread did
    /// not rule out ([`Scouted::clean_until`]), none when the reader did not look at the chunk
    /// or inside a private key's block (its body lines hold no secret's start: the reader rules
    /// them out). The line the run stops before is logged by the engine, which redacts it. A
    /// line ruled out holds no `-----BEGIN`, so no line of a run opens a key's block.
    fn unredacted<'c>(
        &self,
        span: &'c [u8],
        at: usize,
        scouted: Option<&Scouted>,
    ) -> Option<&'c [u8]> {
        if !self.engine.config().redact {
            return Some(span);
        }
        if self.engine.in_key_block() {
            return None;
        }
        let clean = scouted?.clean_until(at).saturating_sub(at);
        Some(&span[..clean.min(span.len())])
    }

    /// What the reading thread may do of this writer's work ([`Looks`]): nothing when no line
    /// is looked at (no log, no stats). The filters of `--redact`; the check of the lines that
    /// fit, unless such a line is not copied whole once checked (`--omit-images`,
    /// `--add-timestamp`); the records of lines that are not JSON and the runs of plain lines
    /// of text, unless a line may be rewritten first (`--redact`, `--add-timestamp`).
    pub fn looks(&self) -> Looks {
        let config = self.engine.config();
        let redacts = self.engine.redactor().is_some();
        Looks {
            scout: (self.engine.redactor())
                .filter(|_| self.active && !crate::cut::redact::skipped("scout")),
            text_seen: Arc::clone(&self.text_seen),
            lines: self.active.then(|| config.clone()),
            whole: !(config.add_timestamp || config.omit_images && config.value_aware),
            records: !redacts && !config.add_timestamp,
            // With --redact the worker's runs stop at the first line the filters let through,
            // and the reader's would be thrown away: 100 MiB of text took 0.161 s against 0.135.
            text_runs: (self.active && self.may_write_text_runs() && !redacts)
                .then(|| (config.max_line_bytes, line_cap(config))),
            ..Looks::default()
        }
    }

    /// Where the tee reports how full its queue is, when this writer paces itself by it (the
    /// archive's compression).
    pub fn backlog(&self) -> Option<std::sync::Arc<crate::tee::archive::Backlog>> {
        self.archive.as_ref().map(|a| a.backlog())
    }

    /// How long the input may pause before [`LogWriter::idle`] has work to do (`None`: never).
    pub fn idle_after(&self) -> Option<std::time::Duration> {
        self.archive
            .as_ref()
            .map(|_| crate::tee::archive::writer::IDLE)
    }

    /// The input has paused for [`LogWriter::idle_after`]: the archive writes what it holds, up
    /// to the last line end.
    pub fn idle(&mut self) {
        if let Some(a) = self.archive.as_mut() {
            a.idle();
        }
    }

    /// Logs what the splitter hands over: a whole line, or a piece of one past the memory cap.
    /// `newline`: a line that ends here ends with a newline (not at end of input).
    /// `known`: what is known of the piece, when it is a line. Returns what became of the line
    /// the piece ends, if any.
    #[inline]
    /// Logs a piece of input; `record` is the log line of a whole line that is not JSON, written
    /// by the reading thread ([`crate::cut::engine::LinesAhead`]).
    fn piece(
        &mut self,
        piece: Piece,
        newline: bool,
        known: Known,
        record: Option<&[u8]>,
    ) -> Option<Outcome> {
        let before = self.batch.len();
        let ends = matches!(piece, Piece::Line(_) | Piece::End(_));
        if let Some(a) = self.archive.as_mut() {
            a.piece(&piece, known.ruled_out);
        }
        let outcome = match BigLine::follow(&mut self.big, self.engine.config(), piece) {
            Next::Line(line) => Some(self.line(line, known, record)),
            Next::Big(big) => Some(self.big_line(*big, !newline)),
            Next::Nothing => None,
        };
        if ends && let Some(a) = self.archive.as_mut() {
            // The log line this line produced, if any (the engine writes one or nothing).
            let logged = &self.batch[before..];
            a.end(
                newline,
                (!logged.is_empty()).then(|| &logged[..logged.len() - 1]),
            );
        }
        outcome
    }

    /// Logs a line past the memory cap.
    #[cold]
    fn big_line(&mut self, big: BigLine, unfinished: bool) -> Outcome {
        let before = self.batch.len();
        let outcome = big.finish(&mut self.engine, unfinished, &mut self.batch);
        self.stats.count(outcome);
        self.stats.bytes_logged += (self.batch.len() - before) as u64;
        self.watch(before);
        outcome
    }

    /// Ends the input: logs the unfinished last line, if any. Later calls do nothing.
    pub fn finish(&mut self) -> Vec<Error> {
        let mut errors = Vec::new();
        if self.finished {
            return errors;
        }
        self.finished = true;
        let mut lines = std::mem::take(&mut self.lines);
        if let Some(piece) = lines.finish() {
            // With --redact, a last line the input ended inside (not JSON: cut by the end) is
            // redacted whole and loses the run of bytes at its end, where a secret cut by the
            // end would show a part of itself; the log and the archive both get that.
            let mut excerpt = Vec::new();
            let piece = match (self.engine.redactor(), piece) {
                (Some(r), Piece::Line(line))
                    if crate::line::scan::valid_depth(line, &mut Vec::new()).is_err() =>
                {
                    r.excerpt(line, false, true, &mut excerpt);
                    Piece::Line(&excerpt)
                }
                (_, piece) => piece,
            };
            self.piece(piece, false, Known::default(), None);
        }
        self.lines = lines;
        self.write_batch(&mut errors);
        if let Some(a) = self.archive.as_mut() {
            errors.extend(a.finish());
        }
        if let Some(p) = self.progress.as_mut() {
            p.finish();
        }
        if let Some(w) = self.watcher.as_mut() {
            w.finished();
        }
        errors
    }

    fn line(&mut self, line: &[u8], known: Known, record: Option<&[u8]>) -> Outcome {
        if line.len() > line_cap(self.engine.config()) {
            // Whatever the read sizes, a line past the cap is logged the same way.
            let big = BigLine::start(self.engine.config(), line);
            return self.big_line(big, false);
        }
        let before = self.batch.len();
        let outcome = match record {
            Some(record) => {
                self.batch.extend_from_slice(record);
                Outcome::NonJson
            }
            None => self.engine.process_known(line, known, &mut self.batch),
        };
        self.stats.count(outcome);
        self.stats.bytes_logged += (self.batch.len() - before) as u64;
        self.watch(before);
        if self.looked < 3 && outcome != Outcome::Blank {
            self.looked += 1;
            if outcome == Outcome::NonJson && matches!(line.trim_ascii(), b"{" | b"[") {
                self.looked = u8::MAX;
                self.notice = Some(
                    "the input looks like pretty-printed JSON, not JSON lines: each of its lines \
                     is logged as a non_json record (jq -c makes JSON lines)"
                        .into(),
                );
            }
        }
        outcome
    }

    fn write_batch(&mut self, errors: &mut Vec<Error>) {
        if self.batch.is_empty() {
            return;
        }
        for sink in &mut self.sinks {
            if let Err(e) = sink.write_lines(&self.batch) {
                errors.push(e);
            }
        }
        if let Some(p) = self.progress.as_mut() {
            let logged = self.stats.lines_logged();
            p.send(&self.batch, logged - self.batched_lines);
            self.batched_lines = logged;
        }
        if let Some(w) = self.watcher.as_mut() {
            w.logged(&self.batch);
        }
        self.batch.clear();
    }
}
