//! The line engine: one input line in, one log line out.
//!
//! The common case is short: check UTF-8, validate, and copy the line when it fits. Only a line
//! over the budget is indexed (`scan.rs`), planned (`plan.rs`) and emitted (`emit.rs`); only a
//! line that is not JSON becomes a record. All buffers are reused from line to line.

use std::collections::HashMap;
use std::mem::take;
use std::sync::Arc;

use crate::cut::costs::{Costs, Sizes};
use crate::cut::emit::{self, EmitStyle};
use crate::cut::plan::{MAX_LOG_DEPTH, Planner};
use crate::cut::record::{self, NON_JSON, Text, UNPLANNED};
use crate::cut::redact::{self, KeyLines, Redactor};
use crate::line::fields::FieldClasses;
use crate::line::index::{IndexBuilder, Node};
use crate::line::marker::MarkerTemplate;
use crate::line::scan;
use crate::reduce::{Elided, Failure, Reduced, Reducer};

/// The smallest budget any configuration may have: a marker record must always fit.
pub const MIN_BUDGET: usize = 128;
/// The default `--max-line-bytes`.
pub const DEFAULT_BUDGET: usize = 5120;

const BOM: &[u8] = "\u{FEFF}".as_bytes();

/// How a line is cut.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Budget of one log line in bytes, newline excluded; 0 means no limit.
    pub max_line_bytes: usize,
    /// Share of a cut string's kept bytes taken from its head, in `0.0..=1.0`.
    pub head_ratio: f64,
    pub marker: MarkerTemplate,
    pub fields: FieldClasses,
    /// Agent-aware cutting: base64 payloads become descriptors, duplicates give way first.
    /// Off with `--plain` (then `fields` should come `without_duplicates`).
    pub value_aware: bool,
    /// Replace base64 payloads by descriptors in lines that fit, too (`--omit-images`).
    pub omit_images: bool,
    /// Give object lines without a top-level `timestamp` the receive time (`--add-timestamp`).
    pub add_timestamp: bool,
    /// Replace secrets by `[REDACTED:kind]` before cutting (`--redact`).
    pub redact: bool,
    /// With `redact`, the secrets also found by value (`[REDACTED:env:NAME]`): those of the
    /// environment and of `--redact-values`.
    pub secrets: Vec<crate::cut::redact::Secret>,
    /// Count the bytes each field gave up (`--stats`).
    pub field_stats: bool,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            max_line_bytes: DEFAULT_BUDGET,
            head_ratio: 0.5,
            marker: MarkerTemplate::default(),
            fields: FieldClasses::defaults(),
            value_aware: true,
            omit_images: false,
            add_timestamp: false,
            redact: false,
            secrets: Vec::new(),
            field_stats: false,
        }
    }
}

/// The largest budget under which long lines are reduced while read (and lines of too many
/// values reduced before planning): a reduction keeps about twice the budget from each long
/// string.
pub const MAX_STREAM_BUDGET: usize = 1 << 20;

impl EngineConfig {
    /// Whether lines too big to plan whole are reduced first (`reduce.rs`): with a budget, up
    /// to [`MAX_STREAM_BUDGET`].
    pub fn reduces(&self) -> bool {
        self.max_line_bytes != 0 && self.max_line_bytes <= MAX_STREAM_BUDGET
    }

    /// The smallest budget this configuration accepts: a record holding only a marker must fit,
    /// whatever the numbers in the marker.
    pub fn min_budget(&self) -> usize {
        let marker = self.marker.len(usize::MAX, usize::MAX);
        MIN_BUDGET.max(record::record_overhead(UNPLANNED) + marker + 8)
    }
}

/// What became of a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Empty or whitespace only: nothing logged.
    Blank,
    /// Valid JSON within the budget: logged byte for byte.
    Verbatim,
    /// Valid JSON over the budget: logged cut, its structure kept.
    Cut,
    /// Not JSON: logged as a `non_json` record.
    NonJson,
    /// Valid JSON that could not be planned (over 4 GiB, or a planner bug): logged as a
    /// `truncated` record of its text.
    Unplanned,
}

/// `--redact` on a line over the budget: the search of its log line for secrets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Search {
    /// Not asked for: the line is redacted whole, or not at all.
    Off,
    /// To be made once the line is planned.
    Pending,
    /// Made: no secret shows in the log line.
    Clean,
    /// Made: a secret may show, so the whole line is redacted and cut again.
    Found,
}

/// Turns lines into log lines. Reuse one engine for many lines: its buffers are kept.
pub struct LineEngine {
    config: EngineConfig,
    redactor: Option<Arc<Redactor>>,
    /// `--redact`: where the stream is in a private key written over several lines.
    keys: KeyLines,
    /// What the caller knew of the line being processed ([`LineEngine::process_known`]), and
    /// where that line is (its address and length), so that a line rewritten on the way
    /// (redacted, stamped) does not take what was known of the original.
    known: Known,
    given: (usize, usize),
    /// The line with its secrets redacted (`--redact`).
    redacted: Vec<u8>,
    /// The line with its timestamp added (`--add-timestamp`).
    stamped: Vec<u8>,
    /// Whether the log line being made is searched for secrets after it is planned.
    search_log: Search,
    /// Input bytes given up, by the name of the field they were in (`--stats`).
    saved_by_field: HashMap<Vec<u8>, u64>,
    stack: Vec<u8>,
    /// Scratch stacks of open containers for indexing and emitting: kept, so a line allocates
    /// nothing.
    open: Vec<u32>,
    emit_open: Vec<emit::Open>,
    nodes: Vec<Node>,
    /// What a streaming reduction left out of the line being processed, by node (see
    /// [`LineEngine::process_reduced`]); empty for lines read whole.
    reduction: Vec<(u32, Elided)>,
    /// The same, one entry per node once the line is indexed.
    elided: Vec<Elided>,
    planner: Planner,
    /// Panics caught in this engine's lines (see [`LineEngine::panics`]).
    panics: u64,
}

impl LineEngine {
    pub fn new(config: EngineConfig) -> LineEngine {
        LineEngine::with_redactor(config, None)
    }

    /// [`LineEngine::new`], with `--redact`'s redactor given when `config.redact` is set: one
    /// built for `config.secrets` ([`Redactor::with_secrets`], or [`LineEngine::redactor`] of
    /// another engine); `None` builds it. Building a redactor takes milliseconds, so callers
    /// that make many engines (the fuzz targets) share one.
    pub fn with_redactor(config: EngineConfig, redactor: Option<Arc<Redactor>>) -> LineEngine {
        quiet_caught_panics();
        LineEngine {
            redactor: config.redact.then(|| {
                redactor.unwrap_or_else(|| Arc::new(Redactor::with_secrets(&config.secrets)))
            }),
            keys: KeyLines::default(),
            known: Known::default(),
            given: (0, 0),
            config,
            redacted: Vec::new(),
            stamped: Vec::new(),
            search_log: Search::Off,
            saved_by_field: HashMap::new(),
            stack: Vec::new(),
            open: Vec::new(),
            emit_open: Vec::new(),
            nodes: Vec::new(),
            reduction: Vec::new(),
            elided: Vec::new(),
            planner: Planner::default(),
            panics: 0,
        }
    }

    /// Panics caught in this engine's lines so far, each line logged as a `truncated` record
    /// of its text (see [`LineEngine::process`]); `--stats` counts them and stderr says so once.
    /// Each is a bug: the test harnesses and fuzz targets assert there are none.
    pub fn panics(&self) -> u64 {
        self.panics
    }

    /// Counts `n` panics caught on this engine's behalf (a reduction's, `tee::log::BigLine`).
    pub(crate) fn count_panics(&mut self, n: u64) {
        self.panics += n;
    }

    /// `--redact`'s redactor, for the reading thread to look at chunks ahead
    /// ([`Redactor::scout`]).
    pub fn redactor(&self) -> Option<Arc<Redactor>> {
        self.redactor.clone()
    }

    /// Inside a private key's block over lines of text: the next line goes to the engine.
    pub fn in_key_block(&self) -> bool {
        self.keys.inside()
    }

    /// A line read in pieces has ended ([`KeyLines::after_pieces`]).
    pub(crate) fn after_pieces(&mut self, marks: &redact::KeyMarks) {
        self.keys.after_pieces(marks);
    }

    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Appends the log line for `line` to `out`, newline included, or nothing for a blank line.
    /// `line` is one input line without its `\n`; trailing `\r`s are dropped (so that a log
    /// line never ends with one, and a second pass changes nothing).
    ///
    /// A bug anywhere in a line's processing costs that line its detail, never the stream: a
    /// panic is caught here and the line is logged as a `truncated` record of its text.
    pub fn process(&mut self, line: &[u8], out: &mut Vec<u8>) -> Outcome {
        let start = out.len();
        let done = guarded(|| self.process_unguarded(line, out));
        let outcome = done.unwrap_or_else(|_| self.failed(line, start, out));
        self.release_scratch();
        outcome
    }

    /// Gives back the scratch a large line grew (the index and the plan take ~90 bytes a
    /// value): kept, it stayed beside the next line's own memory.
    fn release_scratch(&mut self) {
        const KEEP_NODES: usize = 1 << 14;
        const KEEP_BYTES: usize = 1 << 20;
        if self.nodes.capacity() > KEEP_NODES {
            self.nodes = Vec::new();
            self.elided = Vec::new();
            self.planner = Planner::default();
            self.emit_open = Vec::new();
        }
        if self.open.capacity() > KEEP_NODES {
            self.open = Vec::new();
        }
        for v in [&mut self.stack, &mut self.redacted, &mut self.stamped] {
            if v.capacity() > KEEP_BYTES {
                *v = Vec::new();
            }
        }
    }

    /// The record of a line whose processing panicked (see [`LineEngine::process`]).
    #[cold]
    fn failed(&mut self, line: &[u8], start: usize, out: &mut Vec<u8>) -> Outcome {
        self.panics += 1;
        out.truncate(start);
        self.reduction.clear();
        self.search_log = Search::Off;
        let text = line.strip_prefix(BOM).unwrap_or(line).trim_ascii();
        // With --redact this record passes the redaction too; should that be what failed,
        // the text is withheld rather than logged in clear.
        let mut redacted = Vec::new();
        let text = match &self.redactor {
            None => text,
            Some(r) => match guarded(|| r.redact(text, &mut redacted)) {
                Ok(true) => &redacted[..],
                Ok(false) => text,
                Err(_) => {
                    self.panics += 1;
                    b"[TEXT WITHHELD: redaction failed]"
                }
            },
        };
        let budget = self.config.max_line_bytes;
        record::emit_record(UNPLANNED, text, budget, &self.style(), out);
        out.push(b'\n');
        Outcome::Unplanned
    }

    fn process_unguarded(&mut self, line: &[u8], out: &mut Vec<u8>) -> Outcome {
        #[cfg(test)]
        if line == tests::PANICS {
            panic!("a bug, provoked by a test");
        }
        let line = without_crs(line);
        if crate::line::is_blank(line) {
            return Outcome::Blank;
        }
        // A line of a private key written over several lines of text is replaced, whatever
        // the filters say of it (its body lines hold no secret's start).
        if let Some(r) = &self.redactor
            && (self.keys.inside() || !(self.known.ruled_out || self.known.no_key_header))
            && let Some(replaced) = r.key_line(line, &mut self.keys)
        {
            return self.process_line(&replaced, out);
        }
        // A line the reader ruled out has nothing to redact (see `process_rewritten`).
        if (self.redactor.is_none() || self.known.ruled_out) && !self.config.add_timestamp {
            return self.process_line(line, out);
        }
        self.process_rewritten(line, out)
    }

    /// `--redact` and `--add-timestamp`: the line is rewritten before it is cut, in buffers
    /// kept from line to line. A line over the budget is first cut as written, and only what
    /// the log keeps of it is searched for secrets (see [`LineEngine::logs_a_secret`]); the
    /// whole line is redacted only when a secret shows, so the cost of `--redact` follows
    /// the log's size, not the input's.
    #[cold]
    fn process_rewritten(&mut self, line: &[u8], out: &mut Vec<u8>) -> Outcome {
        if self.known.ruled_out {
            // Nothing to redact, so nothing to search in the log line either.
            return self.stamp_and_process(line, out);
        }
        let budget = self.config.max_line_bytes;
        if self.redactor.is_some() && budget != 0 && line.len() > budget {
            let start = out.len();
            self.search_log = Search::Pending;
            let outcome = self.stamp_and_process(line, out);
            let search = std::mem::replace(&mut self.search_log, Search::Off);
            if outcome == Outcome::Cut && search == Search::Clean {
                return outcome;
            }
            out.truncate(start);
            if outcome == Outcome::Cut
                && line.len() > redact::PART
                && self.reduction.is_empty()
                && self.config.reduces()
                && let Some(outcome) = self.process_redacted_in_parts(line, out)
            {
                return outcome;
            }
        }
        let mut redacted = take(&mut self.redacted);
        let mut src = line;
        // A reduced line's strings join their two ends where the reduction cut them: nothing
        // may move left of a join (`Redactor::redact_padded`).
        let redact = if self.reduction.is_empty() {
            Redactor::redact
        } else {
            Redactor::redact_padded
        };
        if let Some(r) = &self.redactor
            && redact(r, src, &mut redacted)
        {
            src = &redacted;
        }
        let outcome = self.stamp_and_process(src, out);
        self.redacted = redacted;
        outcome
    }

    /// `--add-timestamp`, then the line is processed.
    fn stamp_and_process(&mut self, line: &[u8], out: &mut Vec<u8>) -> Outcome {
        let mut stamped = take(&mut self.stamped);
        let src = if self.config.add_timestamp && self.stamp(line, &mut stamped) {
            &stamped[..]
        } else {
            line
        };
        let outcome = self.process_line(src, out);
        self.stamped = stamped;
        outcome
    }

    /// Appends the log line of a line reduced while it was read (see `reduce.rs`). The reduced
    /// text is planned like any line, with markers counting the sizes the input had.
    pub fn process_reduced(&mut self, reduced: Reduced, out: &mut Vec<u8>) -> Outcome {
        self.reduction = reduced.elided;
        let before = out.len();
        let outcome = self.process(&reduced.doc, out);
        self.reduction.clear();
        // With --redact: the reduction cut its long strings before the engine saw them, so a
        // secret cut there shows as a part no pattern knows, beside the string's marker. The
        // log line leaves out the run of bytes beside each marker, as the read side does.
        if let Some(r) = &self.redactor {
            let line = out[before..].strip_suffix(b"\n").unwrap_or(&out[before..]);
            if let Some(trimmed) = r.without_cut_ends(line, self.config.marker.prefix()) {
                out.truncate(before);
                out.extend_from_slice(&trimmed);
                out.push(b'\n');
            }
        }
        outcome
    }

    /// Appends the record of a line too long to hold whole and that could not be reduced: its
    /// first bytes `head`, its last bytes `tail` and its length `total` (see `log.rs`). A line
    /// that is not JSON is a `non_json` record, one too big to plan a `truncated` one. With
    /// `--redact`, both are redacted first, as a line is, and lose the run of bytes at their
    /// inner ends, where a secret cut by the excerpt would show a part of itself; the tail of an
    /// `unfinished` line (the input ended inside it) loses the run at its end too.
    #[cold]
    pub fn process_excerpt(
        &mut self,
        why: Failure,
        head: &[u8],
        tail: &[u8],
        total: u64,
        unfinished: bool,
        out: &mut Vec<u8>,
    ) -> Outcome {
        let (kind, outcome) = match why {
            Failure::Invalid => (NON_JSON, Outcome::NonJson),
            Failure::TooBig => (UNPLANNED, Outcome::Unplanned),
        };
        let budget = self.config.max_line_bytes;
        let (mut h, mut t) = (Vec::new(), Vec::new());
        let (head, tail) = match &self.redactor {
            Some(r) => {
                r.excerpt(head, false, true, &mut h);
                r.excerpt(tail, true, unfinished, &mut t);
                (&h[..], &t[..])
            }
            None => (head, tail),
        };
        record::emit_excerpt_record(kind, head, tail, total, budget, &self.style(), out);
        out.push(b'\n');
        outcome
    }

    /// Input bytes each field gave up so far, by field name (with `field_stats`).
    pub fn saved_by_field(&self) -> &HashMap<Vec<u8>, u64> {
        &self.saved_by_field
    }

    /// `--add-timestamp`: writes `line` with `"timestamp":"<now>"` as its last top-level key
    /// into `stamped`, if it is a JSON object without one. Returns whether it did.
    #[cold]
    fn stamp(&mut self, line: &[u8], stamped: &mut Vec<u8>) -> bool {
        let json = line.strip_prefix(BOM).unwrap_or(line).trim_ascii();
        if !(json.starts_with(b"{") && json.ends_with(b"}")) {
            return false;
        }
        let mut keys = scan::TopLevelKey::new(json, b"timestamp");
        if scan::scan(json, &mut keys, &mut self.stack).is_err() || keys.found {
            return false;
        }
        let body = json[..json.len() - 1].trim_ascii_end();
        stamped.clear();
        stamped.extend_from_slice(body);
        if body != b"{" {
            stamped.push(b',');
        }
        stamped.extend_from_slice(b"\"timestamp\":\"");
        let now = crate::cut::stamp::rfc3339_millis(std::time::SystemTime::now());
        stamped.extend_from_slice(now.as_bytes());
        stamped.extend_from_slice(b"\"}");
        true
    }

    fn process_line(&mut self, line: &[u8], out: &mut Vec<u8>) -> Outcome {
        let budget = self.config.max_line_bytes;
        let start = out.len();
        let json = json_text(line);
        // A reduced line is always cut: what it left out must be marked.
        let fits = (budget == 0 || json.len() <= budget) && self.reduction.is_empty();
        // Text, colour codes, binary: most lines that are not JSON say so in their first byte.
        let outcome = if !json.first().is_some_and(|&b| scan::can_start_value(b)) {
            self.non_json(line, out)
        } else if fits && self.config.omit_images && self.config.value_aware {
            self.omit_payloads(line, json, out)
        } else if fits {
            // Checked by the reading thread, or here.
            let whole = match self.known_verbatim(line) {
                true => Ok(true),
                false => copied_whole(json, &mut self.stack),
            };
            match whole {
                Ok(true) => {
                    copy_verbatim(json, out);
                    Outcome::Verbatim
                }
                // Too deep for common readers: planned, so the deepest containers become markers.
                Ok(false) => self.cut(line, json, out),
                Err(_) => self.non_json(line, out),
            }
        } else {
            // One pass validates and indexes: most of a stream's bytes are in lines like this.
            self.cut(line, json, out)
        };
        debug_assert!(
            budget == 0 || out.len() - start <= budget,
            "line over budget"
        );
        out.push(b'\n');
        outcome
    }

    fn style(&self) -> EmitStyle<'_> {
        style(&self.config)
    }

    #[cold]
    fn non_json(&mut self, line: &[u8], out: &mut Vec<u8>) -> Outcome {
        let text = self.known_text(line).unwrap_or_else(|| Text::of(line));
        write_non_json(&self.config, line, text, out);
        Outcome::NonJson
    }

    /// `--omit-images` on a line that fits: index it, and if it holds base64 payloads, write it
    /// with descriptors in their place (compactly); otherwise unchanged.
    fn omit_payloads(&mut self, line: &[u8], json: &[u8], out: &mut Vec<u8>) -> Outcome {
        let mut index = IndexBuilder::new(
            &mut self.nodes,
            &mut self.open,
            json,
            &self.config.fields,
            true,
        );
        if json.len() >= u32::MAX as usize || scan::scan(json, &mut index, &mut self.stack).is_err()
        {
            return self.non_json(line, out);
        }
        if index.overflow || (index.depth <= MAX_LOG_DEPTH && !self.nodes.iter().any(|n| n.payload))
        {
            copy_verbatim(json, out);
            return Outcome::Verbatim;
        }
        self.cut_indexed(json, self.room(json), out)
    }

    /// A line over the budget: index it (which validates it), plan, emit.
    fn cut(&mut self, line: &[u8], json: &[u8], out: &mut Vec<u8>) -> Outcome {
        if json.len() < u32::MAX as usize {
            let payloads = self.config.value_aware;
            let mut index = IndexBuilder::new(
                &mut self.nodes,
                &mut self.open,
                json,
                &self.config.fields,
                payloads,
            );
            if scan::scan(json, &mut index, &mut self.stack).is_err() {
                return self.non_json(line, out);
            }
            if index.overflow {
                // Too many values to plan within the memory cap: reduced first, as a line past
                // the memory cap is, or else an excerpt of the text. The index and the stacks
                // of this scan are given back first: the reduction must not sit beside them.
                self.nodes = Vec::new();
                self.open = Vec::new();
                self.stack = Vec::new();
                return self.cut_reduced(json, out);
            }
        }
        self.cut_indexed(json, self.room(json), out)
    }

    /// The bytes a planned line may take: the budget, or with none (`-b 0`) room for a line
    /// that is planned only to cap its depth.
    fn room(&self, json: &[u8]) -> usize {
        match self.config.max_line_bytes {
            0 => json.len().saturating_mul(2).max(1 << 16),
            budget => budget,
        }
    }

    /// A line of more values than the index holds: reduced (arrays keep their ends, objects
    /// their first members, each counting what it left out), then planned.
    #[cold]
    fn cut_reduced(&mut self, json: &[u8], out: &mut Vec<u8>) -> Outcome {
        let budget = self.config.max_line_bytes;
        if self.config.reduces() && self.reduction.is_empty() {
            let mut reducer = Reducer::for_budget(budget);
            reducer.feed(json);
            if let Ok(Some(reduced)) = reducer.finish() {
                self.reduction = reduced.elided;
                let outcome = self.cut(&reduced.doc, reduced.doc.trim_ascii(), out);
                self.reduction.clear();
                return outcome;
            }
        }
        record::emit_record(UNPLANNED, json, budget, &self.style(), out);
        Outcome::Unplanned
    }

    /// Plans and emits an indexed line into `budget` bytes.
    fn cut_indexed(&mut self, json: &[u8], budget: usize, out: &mut Vec<u8>) -> Outcome {
        let start = out.len();
        let costs = Costs {
            marker: &self.config.marker,
        };
        self.elided.clear();
        if !self.reduction.is_empty() {
            self.elided.resize(self.nodes.len(), Elided::default());
            for &(node, e) in &self.reduction {
                if let Some(slot) = self.elided.get_mut(node as usize) {
                    *slot = e;
                }
            }
        }
        let sz = Sizes {
            nodes: &self.nodes,
            elided: &self.elided,
        };
        if json.len() < u32::MAX as usize && self.planner.plan(sz, json, budget, &costs) {
            // The config alone, as the emitter's scratch in `self` is borrowed mutably.
            let style = style(&self.config);
            emit::emit_plan(json, sz, &self.planner, &style, &mut self.emit_open, out);
            if out.len() - start <= budget {
                if self.search_log == Search::Pending {
                    self.search_log = if self.logs_a_secret(json, &out[start..]) {
                        Search::Found
                    } else {
                        Search::Clean
                    };
                }
                // A line cut again once redacted is counted then.
                if self.config.field_stats && self.search_log != Search::Found {
                    self.count_savings(json);
                }
                return Outcome::Cut;
            }
            out.truncate(start);
        }
        record::emit_record(UNPLANNED, json, budget, &self.style(), out);
        Outcome::Unplanned
    }
}

/// Writes a valid JSON line that fits: byte for byte, unless it holds a raw CR. A CR is JSON
/// whitespace (RFC 8259) and can only stand between tokens (a raw one in a string is invalid),
/// but a line-based reader (Python's text mode, Node's `readline`) takes it for a line end and
/// splits the line in two: such a line is written without its CRs, compacted as much as needed.
/// Other line ends a reader may see (U+2028, U+2029, `\x0b`, `\x0c`) are not JSON whitespace:
/// raw they are invalid (a control byte) or stand inside a string, where JSON readers and
/// file-line readers alike keep them.
#[inline]
fn copy_verbatim(json: &[u8], out: &mut Vec<u8>) {
    match memchr::memchr(b'\r', json) {
        None => out.extend_from_slice(json),
        Some(_) => out.extend(json.iter().filter(|&&b| b != b'\r')),
    }
}

/// The log line of a line that is not JSON, without its newline: a `non_json` record of its
/// text, known to be `text` ([`Text::of`]).
fn write_non_json(config: &EngineConfig, line: &[u8], text: Text, out: &mut Vec<u8>) {
    let budget = config.max_line_bytes;
    record::emit_text_record(NON_JSON, line, text, budget, &style(config), out);
}

/// How the emitter writes markers, from the config.
fn style(config: &EngineConfig) -> EmitStyle<'_> {
    EmitStyle {
        marker: &config.marker,
        head_ratio: config.head_ratio,
    }
}

mod guard;
mod known;
mod savings;
mod secrets;
#[cfg(test)]
pub(crate) mod tests;

pub(crate) use guard::guarded;
use guard::quiet_caught_panics;
pub use guard::{caught_panics, first_caught_panic};
pub use known::{Found, Known, LinesAhead, notes_cap, records_cap};
use known::{copied_whole, json_text, without_crs};
