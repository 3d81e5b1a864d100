//! Lines of plain text one after another, without the engine: in a stretch of a chunk known to
//! be UTF-8, the records of a run of lines that are not JSON are written in one pass, each line
//! end found by the same mask as the bytes to escape (a newline is a control byte). Each record
//! is the one [`crate::cut::engine::LineEngine`] writes for the line alone; a line that needs
//! more of the engine (a cut, a CR to drop, a line that may be JSON) ends the run, and the
//! engine takes it.

use super::escape::{Runs, TextAhead, push_escape};
use super::{NON_JSON, open_record, record_overhead};
use crate::line::scan;
use crate::line::strings::{BlockLoop, Masks, TextMasks, block_at, byte_set, run_block_loop};

/// A run of plain lines written by [`write_text_run`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TextRun {
    /// Input bytes of the lines written, newlines included.
    pub bytes: usize,
    /// How many lines.
    pub lines: u64,
}

/// Whether a line starting with `b` may be text the engine writes whole as it is: not a byte
/// that starts an object, an array or a string, nor whitespace (trimmed, or a blank line),
/// nor the first byte of a BOM. A line that starts like a number or `true`, `false`, `null`
/// is text unless [`may_be_json`] says it may be JSON.
fn starts_plain(b: u8) -> bool {
    !matches!(b, b'{' | b'[' | b'"') && !b.is_ascii_whitespace() && b != 0xEF
}

/// The bytes JSON has outside strings when a text is a number or `true`, `false`, `null`
/// (with the whitespace the engine trims, a form feed too, and the punctuation of values after
/// it).
static SCALAR: [bool; 256] = byte_set(b"0123456789+-.eEtruefalsn{}[],: \t\r\n\x0c");

/// Whether `line`, which starts with a byte a number or `true`, `false`, `null` starts with,
/// may be JSON: it has no byte that JSON has nowhere but in a string before a quote (which may
/// start one). `7 passed` is text (`p`); `-1e5`, `true`, `1 "x"` are the engine's to decide.
fn may_be_json(line: &[u8]) -> bool {
    for &b in line {
        if b == b'"' {
            return true;
        }
        if !SCALAR[usize::from(b)] {
            return false;
        }
    }
    true
}

/// Writes the records of the lines at the start of `text`, UTF-8 that starts at a line's
/// start, while each is plain: its first byte [`starts_plain`], it does not end in a CR, it is
/// no longer than `max_line` bytes and its record fits in `budget` as the engine measures it.
/// Stops before the first line that is not, or that does not end within `text`, and after the
/// line that takes `out` to `out_max` bytes (writes nothing when `out` is there already). A
/// record is `{"type":"non_json","text":"…"}` with the text escaped as
/// [`super::escape_known_text`] writes UTF-8.
pub fn write_text_run(
    text: &[u8],
    budget: usize,
    max_line: usize,
    out: &mut Vec<u8>,
    out_max: usize,
) -> TextRun {
    if !text.first().is_some_and(|&b| starts_plain(b)) || budget == 0 || out.len() >= out_max {
        return TextRun::default();
    }
    run_block_loop(Run {
        text,
        budget,
        max_line,
        out,
        out_max,
    })
}

/// The runs of plain lines of a chunk, written by the reading thread while the log worker is
/// behind ([`crate::tee::handoff::Looks`]): from each line of the part found UTF-8
/// ([`TextAhead`]) that a run may start at, a run as [`write_text_run`] writes it, where the
/// worker, after a line of text, would write it. A run's records are the same wherever it
/// starts or stops (each is the one the engine writes for its line alone), so the worker takes
/// a run that starts where its own would and ends within the text it may write, and writes its
/// own otherwise. The records of a chunk stop before the chunk's length (or 16 KiB,
/// [`crate::cut::engine::records_cap`]).
#[derive(Debug, Default)]
pub struct RunsAhead {
    /// Each run: where it starts in the chunk, what it wrote, and where its records end in
    /// `records`.
    runs: Vec<(u32, TextRun, u32)>,
    records: Vec<u8>,
}

impl RunsAhead {
    /// The runs of `chunk`, in its part found UTF-8 (`text`), with the budget and the longest
    /// line of [`write_text_run`]. At most [`crate::cut::engine::records_cap`] bytes of
    /// records, and one run for each line [`crate::cut::engine::notes_cap`] allows: none with a
    /// budget too large for a record to be bounded by it.
    pub fn of(chunk: &[u8], text: &TextAhead, budget: usize, max_line: usize) -> RunsAhead {
        let mut ahead = RunsAhead::default();
        let span = text.utf8();
        let (Some(out_max), Ok(end)) = (
            crate::cut::engine::records_cap(chunk, budget),
            u32::try_from(span.end),
        ) else {
            return ahead;
        };
        let most = crate::cut::engine::notes_cap(chunk);
        // The chunk's first line may be the end of one the chunk before began.
        let mut at = span.start + 1;
        while at < span.end && ahead.records.len() < out_max && ahead.runs.len() < most {
            // Each record fits the budget: the run stops within it past `out_max`.
            let run = write_text_run(
                &chunk[at..span.end],
                budget,
                max_line,
                &mut ahead.records,
                out_max,
            );
            if run.lines > 0 {
                // `at` and the records' end are below `end` and the cap, both in a u32.
                ahead
                    .runs
                    .push((at as u32, run, ahead.records.len() as u32));
                at += run.bytes;
            }
            // The line the run stopped before is the engine's: the next run may start after it.
            match memchr::memchr(b'\n', &chunk[at..end as usize]) {
                Some(newline) => at += newline + 1,
                None => break,
            }
        }
        // Held while the chunk waits in the queue: no more than they use.
        ahead.runs.shrink_to_fit();
        ahead
    }

    /// The bytes of the chunk the runs cover.
    pub fn covered(&self) -> usize {
        self.runs.iter().map(|(_, run, _)| run.bytes).sum()
    }

    /// The run that starts at `at` and ends within `len` bytes, and its records. `cursor` is
    /// where the last answer left off: a chunk's runs are asked for in order, from 0.
    pub fn at(&self, at: usize, len: usize, cursor: &mut usize) -> Option<(TextRun, &[u8])> {
        let at = u32::try_from(at).ok()?;
        while self
            .runs
            .get(*cursor)
            .is_some_and(|&(start, ..)| start < at)
        {
            *cursor += 1;
        }
        let &(start, run, end) = self.runs.get(*cursor)?;
        let from = cursor
            .checked_sub(1)
            .map_or(0, |before| self.runs[before].2);
        (start == at && run.bytes <= len).then(|| (run, &self.records[from as usize..end as usize]))
    }
}

struct Run<'a, 'b> {
    text: &'a [u8],
    budget: usize,
    max_line: usize,
    out: &'b mut Vec<u8>,
    out_max: usize,
}

impl BlockLoop for Run<'_, '_> {
    type Out = TextRun;

    #[inline(always)]
    fn run(
        self,
        _: impl Fn(&[u8; 64]) -> Masks<u64>,
        _: impl Fn(&[u8; 64]) -> TextMasks<u64>,
        escapes64: impl Fn(&[u8; 64]) -> u64,
    ) -> TextRun {
        let Run {
            text,
            budget,
            max_line,
            out,
            out_max,
        } = self;
        let runs = Runs::new(text);
        // The room for a record's text, as the engine gives it.
        let room = budget.saturating_sub(record_overhead(NON_JSON));
        let mut done = TextRun::default();
        // The line being written starts at `line` in the text, its record at `record` in `out`
        // and the record's text at `written`; `text[..copied]` is written.
        let (mut line, mut record, mut copied) = (0, out.len(), 0);
        open_record(NON_JSON, out);
        let mut written = out.len();
        let mut pad = [0; 64];
        let mut at = 0;
        while at < text.len() {
            // Past the text's end the block is padded with spaces, which are not stops.
            let block = block_at(text, at, &mut pad);
            let mut stops = escapes64(block);
            while stops != 0 {
                let end = at + stops.trailing_zeros() as usize;
                stops &= stops - 1;
                runs.push(copied, end, out);
                copied = end + 1;
                if text[end] != b'\n' {
                    push_escape(text[end], out);
                    continue;
                }
                let fits = out.len() - written <= room && end - line <= max_line;
                let json = scan::can_start_value(text[line]) && may_be_json(&text[line..end]);
                if !fits || json || text[..end].ends_with(b"\r") {
                    out.truncate(record);
                    return done;
                }
                out.extend_from_slice(b"\"}\n");
                done.bytes = end + 1;
                done.lines += 1;
                let next = text.get(end + 1).copied();
                if out.len() >= out_max || !next.is_some_and(starts_plain) {
                    return done;
                }
                (line, record) = (end + 1, out.len());
                open_record(NON_JSON, out);
                written = out.len();
            }
            if out.len() - written > room {
                break;
            }
            at += 64;
        }
        // The last line does not end within the text, or is over the budget.
        out.truncate(record);
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &[u8], budget: usize, out_max: usize) -> (String, TextRun) {
        let mut out = b"before\n".to_vec();
        let run = write_text_run(text, budget, usize::MAX, &mut out, out_max);
        (String::from_utf8(out).unwrap(), run)
    }

    /// The reading thread's runs start after the chunk's first newline and after each line a
    /// run stops before (the engine's), as the worker's would; their records are those the
    /// worker writes, and stop at about the chunk's length.
    #[test]
    fn the_runs_written_ahead_start_where_the_workers_would() {
        // The first line is long: the records stop at the chunk's length.
        let chunk = [
            &[b'x'; 300][..],
            b"\na\nb\n{\"x\":1}\nc\nd\n7\n\ne\nunfinished",
        ]
        .concat();
        let chunk = &chunk[..];
        let text = TextAhead::of(chunk).unwrap();
        let ahead = RunsAhead::of(chunk, &text, 5120, usize::MAX);
        let starts: Vec<(u32, u64)> = ahead.runs.iter().map(|&(s, r, _)| (s, r.lines)).collect();
        assert_eq!(starts, [(301, 2), (313, 2), (320, 1)]);
        let mut cursor = 0;
        let rest = chunk.len() - 313;
        let (run, records) = ahead.at(313, rest, &mut cursor).unwrap();
        let mut want = Vec::new();
        assert_eq!(
            write_text_run(&chunk[313..], 5120, usize::MAX, &mut want, 1 << 20),
            run
        );
        assert_eq!(records, want);
        // Not where no run starts, nor one longer than the text the worker may write.
        assert_eq!(ahead.at(317, rest, &mut 0), None);
        assert_eq!(ahead.at(320, 1, &mut 0), None);
        let long = "line of text\n".repeat(3000);
        let text = TextAhead::of(long.as_bytes()).unwrap();
        let ahead = RunsAhead::of(long.as_bytes(), &text, 5120, usize::MAX);
        let records = ahead.records.len();
        assert!(
            (long.len() - 5121 - 40..=long.len()).contains(&records),
            "{records}"
        );
    }

    /// Found by an audit: each queued chunk held the reader's runs beside it, outside the
    /// queue's bound, and runs of one line each (text between lines that may be JSON) took 32
    /// bytes each, 45 MiB in all; a record past the cap was kept whole (960 KB of `\u0001` for
    /// a 160 KB line at `-b 1M`). Now the runs of a chunk are as many as its notes may be, and
    /// their records stay within its length.
    #[test]
    fn the_runs_a_chunk_holds_are_bounded() {
        let alternating = "a\n1 2\n".repeat(40_000);
        let text = TextAhead::of(alternating.as_bytes()).unwrap();
        let ahead = RunsAhead::of(alternating.as_bytes(), &text, 5120, usize::MAX);
        assert_eq!(
            ahead.runs.len(),
            crate::cut::engine::notes_cap(alternating.as_bytes())
        );
        let control = ["hello\n".as_bytes(), &[1; 160_000], b"\n"]
            .concat()
            .repeat(2);
        let text = TextAhead::of(&control).unwrap();
        for budget in [1 << 20, 0] {
            let ahead = RunsAhead::of(&control, &text, budget, usize::MAX);
            assert!(ahead.records.is_empty(), "{budget}");
        }
        let ahead = RunsAhead::of(&control, &text, 200_000, usize::MAX);
        assert!(ahead.records.len() <= control.len());
    }

    #[test]
    fn plain_lines_are_written_until_one_is_not() {
        let (out, got) = run(
            b"ok \x1b[1m\"1\"\x1b[0m\n\xc3\xa9t\xc3\xa9\t\\\n{\"a\":1}\nmore\n",
            5120,
            1 << 20,
        );
        assert_eq!(
            out,
            "before\n{\"type\":\"non_json\",\"text\":\"ok \\u001b[1m\\\"1\\\"\\u001b[0m\"}\n\
             {\"type\":\"non_json\",\"text\":\"été\\t\\\\\"}\n"
        );
        assert_eq!(
            got,
            TextRun {
                bytes: 23,
                lines: 2
            }
        );
    }

    #[test]
    fn a_line_the_engine_must_see_ends_the_run_before_it() {
        for (text, lines) in [
            (&b"a\nb\r\nc\n"[..], 1),   // a CR to drop
            (b"a\n -x\n", 1),           // whitespace to trim
            (b"a\n\n", 1),              // blank
            (b"a\n\xef\xbb\xbfx\n", 1), // a BOM
            (b"a\n7\n", 1),             // a number
            (b"a\n-1e5 \n", 1),         // a number and a space
            (b"a\ntrue\n", 1),          // a literal
            (b"a\nnull, 2\n", 1),       // not JSON, but the engine's to say
            (b"a\n1 \"x y\"\n", 1),     // a quote may start a string
            (b"a\n[1]\n", 1),           // an array
            (b"a\nno newline", 1),      // does not end in the text
            (b"{x\n", 0),
            (b"", 0),
        ] {
            let (out, got) = run(text, 5120, 1 << 20);
            assert_eq!(got.lines, lines, "{}", String::from_utf8_lossy(text));
            assert_eq!(out.lines().count(), 1 + lines as usize);
        }
    }

    /// A regression found on random bytes: `8` and a form feed is the JSON `8` to the engine,
    /// which trims ASCII whitespace, form feeds included; a run wrote it as text.
    #[test]
    fn a_number_before_a_form_feed_is_left_to_the_engine() {
        assert_eq!(run(b"a\n8\x0c\nb\n", 5120, 1 << 20).1.lines, 1);
    }

    #[test]
    fn a_line_that_starts_as_json_and_is_text_is_in_the_run() {
        let (out, got) = run(b"x\n7 passed\ntrue story\n-x\nfalse\n", 5120, 1 << 20);
        assert_eq!(got.lines, 4, "{out}");
    }

    #[test]
    fn a_record_over_the_budget_ends_the_run_before_it() {
        // 29 bytes of record around the text: 21 bytes of text fit in 50, 22 do not.
        let text = [&b"x\n"[..], &[b'y'; 21], b"\n", &[b'z'; 22], b"\n"].concat();
        let (_, got) = run(&text, 50, 1 << 20);
        assert_eq!(
            got,
            TextRun {
                bytes: 24,
                lines: 2
            }
        );
        let long = [&b"x\n"[..], &[b'q'; 200], b"\n"].concat();
        assert_eq!(run(&long, 50, 1 << 20).1.lines, 1);
    }

    /// A regression found by a helper's attack: after a line the engine wrote took the batch
    /// past its limit, a run wrote one line more before the batch was written out, so the
    /// writes (and a compressed `--compact` output) differed from the engine's alone.
    #[test]
    fn a_batch_already_full_gets_no_line_more() {
        let (out, got) = run(b"one\ntwo\n", 5120, 7);
        assert_eq!((out.as_str(), got), ("before\n", TextRun::default()));
    }

    #[test]
    fn the_run_stops_after_the_line_that_fills_the_output() {
        let (_, got) = run(b"one\ntwo\nthree\n", 5120, 10);
        assert_eq!(got, TextRun { bytes: 4, lines: 1 });
    }
}
