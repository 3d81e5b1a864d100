//! What the caller of [`LineEngine::process_known`] knows of a line already, found for many
//! lines at once: by the log worker for a chunk's text, and by the reading thread, while the
//! worker is behind, for `--redact`'s filters ([`crate::cut::redact::Scouted`]) and for the
//! check every line that fits is given before it is copied ([`JsonAhead`]).

use super::{BOM, LineEngine, MAX_LOG_DEPTH, Outcome};
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
    /// The reading thread found the line's JSON text ([`json_text`]) one JSON text of valid
    /// UTF-8 nested at most [`MAX_LOG_DEPTH`] deep ([`JsonAhead`]): when it fits, it is copied.
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

/// The lines of a chunk that the engine copies whole when they fit ([`copied_whole`]), checked
/// by the reading thread: the newline of each, in order. Only lines of at most the budget are
/// checked, and only those that start as a JSON value may be: the others cost the reader one
/// comparison. At most one line in [`PER_LINE`] bytes of the chunk is noted (the worker checks
/// the lines after), so that the notes of the chunks queued stay within a sixteenth of them.
#[derive(Debug, Default)]
pub struct JsonAhead {
    ends: Vec<u32>,
    /// The lines checked.
    lines: usize,
}

/// The bytes of a chunk for each line [`JsonAhead`] notes, at most.
const PER_LINE: usize = 64;

impl JsonAhead {
    /// Checks the lines of `chunk` that end in it (the first may be the end of a line the chunk
    /// before began: it is checked as the bytes it is, which is all the worker asks of them).
    pub fn of(chunk: &[u8], budget: usize, stack: &mut Vec<u8>) -> JsonAhead {
        let (mut ends, mut lines) = (Vec::new(), 0);
        let most = chunk.len() / PER_LINE;
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', chunk) {
            let Ok(at) = u32::try_from(end) else { break };
            if ends.len() == most {
                break;
            }
            lines += 1;
            let json = json_text(without_crs(&chunk[start..end]));
            if (budget == 0 || json.len() <= budget)
                && json.first().is_some_and(|&b| scan::can_start_value(b))
                && copied_whole(json, stack) == Ok(true)
            {
                ends.push(at);
            }
            start = end + 1;
        }
        JsonAhead { ends, lines }
    }

    /// Whether the check was worth its time: at least half the lines checked are copied whole
    /// (the reader's pace, [`crate::cut::redact::Pace`]).
    pub fn worth_it(&self) -> bool {
        self.ends.len() * 2 >= self.lines
    }

    /// Whether `line` (without its newline) is one of the lines of `chunk` found to be copied
    /// whole: the bytes of `chunk` between two of its newlines, or its start and a newline.
    /// `cursor` is where the last answer left off: the lines of a chunk are asked about in
    /// order, from 0.
    pub fn copies(&self, chunk: &[u8], line: &[u8], cursor: &mut usize) -> bool {
        let Some((start, end)) = crate::line::offsets(chunk, line) else {
            return false;
        };
        if chunk.get(end) != Some(&b'\n') || (start > 0 && chunk[start - 1] != b'\n') {
            return false;
        }
        let Ok(end) = u32::try_from(end) else {
            return false;
        };
        while self.ends.get(*cursor).is_some_and(|&e| e < end) {
            *cursor += 1;
        }
        self.ends.get(*cursor) == Some(&end)
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

    /// The lines the reading thread found copied whole are those the worker is told of, asked
    /// in order: not a line cut short by the chunk's end, one over the budget, one too deep, one
    /// that is not JSON, nor a part of a line.
    #[test]
    fn the_lines_copied_whole_are_found_in_order() {
        let deep = format!("{}1{}", "[".repeat(65), "]".repeat(65));
        let lines = [
            r#"{"a":1}"#,
            "\u{feff} [1,2]\r\r",
            r#"{"long":"xxxxxxxxxxxxxxxxxxxxxxxx"}"#,
            &deep,
            "not json",
            r#"{"bad":"\u00"}"#,
            "",
            "true",
            r#"{"cut":"#,
        ];
        let chunk = lines.join("\n");
        let ahead = JsonAhead::of(chunk.as_bytes(), 32, &mut Vec::new());
        let mut cursor = 0;
        let copied: Vec<bool> = chunk
            .split('\n')
            .map(|line| ahead.copies(chunk.as_bytes(), line.as_bytes(), &mut cursor))
            .collect();
        let want = [true, true, false, false, false, false, false, true, false];
        assert_eq!(copied, want);
        // A part of a line, or a line of another buffer, is not one of them.
        let mut cursor = 0;
        assert!(!ahead.copies(chunk.as_bytes(), &chunk.as_bytes()[1..7], &mut cursor));
        assert!(!ahead.copies(chunk.as_bytes(), br#"{"a":1}"#, &mut cursor));
    }

    /// A chunk of lines shorter than [`PER_LINE`] bytes has notes for its first lines only:
    /// the notes of a full queue stay small.
    #[test]
    fn the_notes_of_a_chunk_of_short_lines_are_bounded() {
        let chunk = "1\n".repeat(1000);
        let ahead = JsonAhead::of(chunk.as_bytes(), 0, &mut Vec::new());
        assert_eq!(ahead.ends.len(), 2000 / PER_LINE);
        let mut cursor = 0;
        let copied = (0..1000)
            .filter(|i| {
                ahead.copies(
                    chunk.as_bytes(),
                    &chunk.as_bytes()[2 * i..][..1],
                    &mut cursor,
                )
            })
            .count();
        assert_eq!(copied, 2000 / PER_LINE);
    }
}
