//! What the caller of [`LineEngine::process_known`] knows of a line already, found for many
//! lines at once: by the log worker for a chunk's text, and by the reading thread, while the
//! worker is behind, for `--redact`'s filters ([`crate::cut::redact::Scouted`]) and for the
//! check every line that fits is given before it is copied ([`LinesAhead`]).

use super::{BOM, EngineConfig, LineEngine, MAX_LOG_DEPTH, Outcome, write_non_json};
use crate::cut::record::Text;
use crate::line::scan;

/// What is known of a line given to [`LineEngine::process_known`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Known {
    /// `--redact`'s filters ruled the line out on the reading thread
    /// ([`crate::cut::redact::Scouted`]): it is not looked at for secrets again.
    pub ruled_out: bool,
    /// The reading thread saw no key's header in the line (`Scouted::holds_no_header`).
    pub no_key_header: bool,
    /// Whether the line is UTF-8, found for the chunk it was cut from
    /// ([`crate::cut::record::ChunkText`]).
    pub text: Option<Text>,
    /// The reading thread found the line's JSON text (`json_text`) one JSON text of valid
    /// UTF-8 nested at most [`MAX_LOG_DEPTH`] deep ([`LinesAhead`]): when it fits, it is copied.
    pub verbatim: bool,
}

/// A line without its trailing CRs, as the engine takes it.
pub(super) fn without_crs(line: &[u8]) -> &[u8] {
    let end = line.iter().rposition(|&b| b != b'\r').map_or(0, |p| p + 1);
    &line[..end]
}

/// The JSON text of a line (without its CRs): without a BOM and without the whitespace around
/// it, which is not part of the value (so a line is measured, and logged, the same way
/// whichever path it takes).
pub(super) fn json_text(line: &[u8]) -> &[u8] {
    line.strip_prefix(BOM).unwrap_or(line).trim_ascii()
}

/// Whether a line's JSON text is copied to the log as it is when it fits: one JSON text of
/// valid UTF-8, nested at most [`MAX_LOG_DEPTH`] deep. `Err` when it is not JSON, `Ok(false)`
/// when it is too deep for common readers (then it is planned, and its deepest containers
/// become markers).
pub(super) fn copied_whole(json: &[u8], stack: &mut Vec<u8>) -> Result<bool, scan::Invalid> {
    scan::valid_depth(json, stack).map(|depth| depth <= MAX_LOG_DEPTH)
}

/// What the reading thread found of the lines of a chunk, for the log worker: the lines the
/// engine copies whole when they fit (`copied_whole`), and, when asked, the log line of each
/// line that is not JSON (the record `write_non_json` writes: text, binary, colour codes).
/// Only lines of at most the budget are checked, and only those that start as a JSON value
/// may be copied whole: the others cost one comparison. At most one line in `PER_LINE` bytes
/// of the chunk is noted (or `PER_LINE` lines), and records of about the chunk's length (or
/// `RECORDS_MIN` bytes; the worker does the lines after), so that the notes of the chunks
/// queued stay within about twice their bytes.
#[derive(Debug, Default)]
pub struct LinesAhead {
    /// Each line noted: its newline, and where its record ends in `records` (a line copied
    /// whole has none: where the record before ends).
    notes: Vec<(u32, u32)>,
    records: Vec<u8>,
    /// The lines looked at.
    lines: usize,
}

/// What [`LinesAhead`] found of a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found<'a> {
    /// Copied whole when it fits.
    Whole,
    /// Not JSON: its log line, newline included.
    Record(&'a [u8]),
}

/// The bytes of a chunk for each line [`LinesAhead`] notes, at most.
const PER_LINE: usize = 128;

/// The records [`LinesAhead`] and [`crate::cut::record::RunsAhead`] write of a chunk shorter
/// than this stop at this length, not the chunk's.
const RECORDS_MIN: usize = 16 << 10;

/// The most lines or runs the reader notes of `chunk`: one for each `PER_LINE` bytes (or
/// `PER_LINE`).
pub fn notes_cap(chunk: &[u8]) -> usize {
    (chunk.len() / PER_LINE).max(PER_LINE)
}

/// Where the records the reader writes of `chunk` stop: one more record may start before it,
/// and each fits `budget`, so that they stay within the chunk's length (or `RECORDS_MIN`).
/// None when a budget that large (or none) would not bound them.
pub fn records_cap(chunk: &[u8], budget: usize) -> Option<usize> {
    let cap = chunk.len().max(RECORDS_MIN);
    // A record is its line's newline more than the budget.
    (budget != 0 && budget < cap / 2).then(|| cap - budget - 1)
}

impl LinesAhead {
    /// Looks at the lines of `chunk` that end in it (the first may be the end of a line the
    /// chunk before began: it is looked at as the bytes it is, which is all the worker asks of
    /// them), with the budget of `config`: checks the lines that may be copied whole when
    /// `whole`, writes the records of the lines that are not JSON when `records`.
    pub fn of(
        chunk: &[u8],
        config: &EngineConfig,
        whole: bool,
        records: bool,
        stack: &mut Vec<u8>,
    ) -> Self {
        let budget = config.max_line_bytes;
        let mut ahead = LinesAhead::default();
        let most = notes_cap(chunk);
        let records_cap = records_cap(chunk, budget).filter(|_| records);
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', chunk) {
            let Ok(at) = u32::try_from(end) else { break };
            if ahead.notes.len() == most {
                break;
            }
            ahead.lines += 1;
            let line = without_crs(&chunk[start..end]);
            start = end + 1;
            let json = json_text(line);
            let fits = budget == 0 || json.len() <= budget;
            let record = match json.first() {
                // As the engine has it: a line that fits and is not JSON is a record too.
                Some(&b) if scan::can_start_value(b) => match whole && fits {
                    true => match copied_whole(json, stack) {
                        Ok(true) => Some(false),
                        Ok(false) => None,
                        Err(_) => Some(true),
                    },
                    false => None,
                },
                Some(_) => Some(true),
                None => None,
            };
            let noted = match record {
                Some(true) if records_cap.is_some_and(|cap| ahead.records.len() < cap) => {
                    write_non_json(config, line, Text::of(line), &mut ahead.records);
                    ahead.records.push(b'\n');
                    true
                }
                Some(whole) => !whole,
                None => false,
            };
            if noted {
                ahead.notes.push((at, ahead.records.len() as u32));
            }
        }
        // Held while the chunk waits in the queue: no more than they use.
        ahead.notes.shrink_to_fit();
        ahead
    }

    /// Whether the look was worth its time: at least half the lines looked at were noted (the
    /// reader's pace, [`crate::cut::redact::Pace`]).
    pub fn worth_it(&self) -> bool {
        self.notes.len() * 2 >= self.lines
    }

    /// What was found of `line` (without its newline), if it is one of the lines of `chunk`
    /// noted: the bytes of `chunk` between two of its newlines, or its start and a newline.
    /// `cursor` is where the last answer left off: the lines of a chunk are asked about in
    /// order, from 0.
    pub fn find(&self, chunk: &[u8], line: &[u8], cursor: &mut usize) -> Option<Found<'_>> {
        let (_, end) = crate::line::whole_line_in(chunk, line)?;
        let end = u32::try_from(end).ok()?;
        while self.notes.get(*cursor).is_some_and(|&(e, _)| e < end) {
            *cursor += 1;
        }
        let &(e, to) = self.notes.get(*cursor)?;
        let from = cursor
            .checked_sub(1)
            .map_or(0, |before| self.notes[before].1);
        (e == end).then(|| match from == to {
            true => Found::Whole,
            false => Found::Record(&self.records[from as usize..to as usize]),
        })
    }
}

impl LineEngine {
    /// [`LineEngine::process`] for a line the caller knows something of already: it logs what
    /// [`LineEngine::process`] logs, without finding that out again.
    pub fn process_known(&mut self, line: &[u8], known: Known, out: &mut Vec<u8>) -> Outcome {
        self.known = known;
        self.given = (line.as_ptr() as usize, line.len());
        let outcome = self.process(line, out);
        self.known = Known::default();
        outcome
    }

    /// What the text of `line` is known to be, when it is the line given or a part of it, not a
    /// rewritten copy. A part is UTF-8 when the line is (it is cut at ASCII bytes); it is not
    /// when the line is not only if it is the line without its trailing CRs.
    pub(super) fn known_text(&self, line: &[u8]) -> Option<Text> {
        let (at, len) = self.given;
        let start = (line.as_ptr() as usize).checked_sub(at)?;
        match self.known.text? {
            Text::Utf8 if start + line.len() <= len => Some(Text::Utf8),
            // Trailing CRs are text: a binary line without them is binary still.
            text @ (Text::Lossy | Text::Binary) if start == 0 && line.len() <= len => Some(text),
            _ => None,
        }
    }

    /// Whether `line` (without its CRs) is known to be copied whole when it fits: it is the
    /// line given, not a rewritten copy, and the reading thread found it so.
    pub(super) fn known_verbatim(&self, line: &[u8]) -> bool {
        let (at, len) = self.given;
        self.known.verbatim && line.as_ptr() as usize == at && line.len() <= len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(budget: usize) -> EngineConfig {
        EngineConfig {
            max_line_bytes: budget,
            ..EngineConfig::default()
        }
    }

    /// What the reading thread found of each line, asked in order: copied whole, or the record
    /// of a line that is not JSON (the engine's, newline included: text, a line that fits and
    /// starts as JSON but is not, a line not UTF-8), or nothing (a line cut short by the chunk's
    /// end, one over the budget, one too deep, a blank one), and nothing for a part of a line.
    #[test]
    fn the_lines_noted_are_found_in_order() {
        let deep = format!("{}1{}", "[".repeat(65), "]".repeat(65));
        let long = format!(r#"{{"long":"{}"}}"#, "x".repeat(200));
        let lines = [
            r#"{"a":1}"#,
            "\u{feff} [1,2]\r\r",
            &long,
            &deep,
            "not json \u{1b}[1m\r",
            r#"{"bad":"\u00"}"#,
            " ",
            "true",
            "\u{feff}x\u{ff}",
            r#"{"cut":"#,
        ];
        let chunk = lines.join("\n");
        let chunk = [chunk.as_bytes(), b"\xff\x00"].concat();
        let config = config(128);
        let ahead = LinesAhead::of(&chunk, &config, true, true, &mut Vec::new());
        let mut engine = LineEngine::new(config.clone());
        let record = |line: &[u8], engine: &mut LineEngine| {
            let mut out = Vec::new();
            engine.process(line, &mut out);
            out
        };
        let records: Vec<Vec<u8>> = lines
            .iter()
            .map(|line| record(line.as_bytes(), &mut engine))
            .collect();
        let mut cursor = 0;
        let found: Vec<Option<Found>> = chunk
            .split(|&b| b == b'\n')
            .map(|line| ahead.find(&chunk, line, &mut cursor))
            .collect();
        let whole = Some(Found::Whole);
        let record = |i: usize| Some(Found::Record(&records[i]));
        let want = [
            whole,
            whole,
            None,
            None,
            record(4),
            record(5),
            None,
            whole,
            record(8),
            None,
        ];
        assert_eq!(found, want);
        // A part of a line, or a line of another buffer, is not one of them.
        let mut cursor = 0;
        assert_eq!(ahead.find(&chunk, &chunk[1..7], &mut cursor), None);
        assert_eq!(ahead.find(&chunk, br#"{"a":1}"#, &mut cursor), None);
        // Without records, or without the check, only the other is noted.
        let ahead = LinesAhead::of(&chunk, &config, true, false, &mut Vec::new());
        assert_eq!(ahead.find(&chunk, &chunk[..7], &mut 0), whole);
        assert!(ahead.records.is_empty());
        let ahead = LinesAhead::of(&chunk, &config, false, true, &mut Vec::new());
        // Only the line that does not start as JSON: the others are not checked.
        assert_eq!(ahead.notes.len(), 1);
    }

    /// A chunk of lines shorter than [`PER_LINE`] bytes has notes for its first lines only, and
    /// a chunk's records stop at about its length: the notes of a full queue stay small.
    #[test]
    fn the_notes_of_a_chunk_are_bounded() {
        let chunk = "1\n".repeat(10_000);
        let ahead = LinesAhead::of(chunk.as_bytes(), &config(0), true, true, &mut Vec::new());
        assert_eq!(ahead.notes.len(), 20_000 / PER_LINE);
        let mut cursor = 0;
        let found = (0..10_000)
            .filter(|i| {
                let line = &chunk.as_bytes()[2 * i..][..1];
                ahead.find(chunk.as_bytes(), line, &mut cursor).is_some()
            })
            .count();
        assert_eq!(found, 20_000 / PER_LINE);
        let chunk = format!("{}\n", "some text ".repeat(10)).repeat(400);
        let ahead = LinesAhead::of(chunk.as_bytes(), &config(5120), true, true, &mut Vec::new());
        let records = ahead.records.len();
        assert!(
            (chunk.len() - 5121 - 200..=chunk.len()).contains(&records),
            "{records}"
        );
        // Without a budget a record is not bounded: none is written.
        let ahead = LinesAhead::of(chunk.as_bytes(), &config(0), true, true, &mut Vec::new());
        assert!(ahead.records.is_empty());
    }
}
