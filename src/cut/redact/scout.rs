//! `--redact`'s filters run ahead on the reading thread: while the log worker is behind, the
//! reader, idle between two reads, looks at each chunk before queueing it and notes the lines
//! that the filters do not rule out. The worker then skips its own look at every other line
//! of the chunk, so that `--redact` costs the worker, which bounds the run, next to nothing on
//! lines with no secret. A line the reader did not look at (one that spans chunks, one in bytes
//! copied into a chunk already queued) is looked at by the worker, as without the reader.

use super::{Redactor, hidden};

/// What the reader saw of one chunk: the lines, by the newline that ends them, that may hold a
/// secret.
#[derive(Debug, Default)]
pub struct Scouted {
    /// The bytes of the chunk looked at: those of every line whose newline is before this.
    upto: usize,
    /// The newlines (offsets in the chunk) that end a line the filters did not rule out,
    /// ascending.
    dirty: Vec<usize>,
    /// The bytes of the lines ruled out, newlines included.
    clean: usize,
    /// While the look pauses: the newlines that end a line holding `-----BEGIN `, ascending
    /// (the worker looks for a private key's header in the other lines no more,
    /// [`Scouted::holds_no_header`]); `None` when the filters looked. While it pauses, no line
    /// is ruled out.
    headers: Option<Vec<usize>>,
}

/// Whether the reader's look is worth its time: while most bytes it looks at are in lines it
/// rules out. Where it rules out little, the worker searches those lines again anyway, and the
/// look only delays the chunk: the stream-json of an agent, whose long lines each held a literal
/// a secret starts with (`"input_tokens"` in every usage, before the filter passed by names that
/// go on; base64 images still show `eyJ`, `xox`, `AIza` by chance), went 12% faster without it, while
/// text and short lines go twice and one and a half times as fast with it
/// (`ONLY=filters benches/compare.sh`). So after a chunk with less than half its bytes ruled
/// out, the reader does not look at the next [`PAUSE`] chunks, then looks again. The check of
/// the lines that fit (`LinesAhead`) is paced the same way, by its own measure.
#[derive(Debug, Default)]
pub struct Pace {
    paused: u32,
}

/// The chunks not looked at after one that was not worth it (16 MiB of 256 KiB chunks).
const PAUSE: u32 = 63;

impl Pace {
    /// Whether to look at the next chunk.
    pub fn wants(&mut self) -> bool {
        if self.paused == 0 {
            return true;
        }
        self.paused -= 1;
        false
    }

    /// Whether the look at a chunk was worth it.
    pub fn saw(&mut self, worth_it: bool) {
        if !worth_it {
            self.paused = PAUSE;
        }
    }
}

impl Redactor {
    /// Looks at each line of `chunk` that ends in it (from its start or from a newline, to a
    /// newline) with the filters alone, as [`Redactor::rules_out`] does, over the whole chunk
    /// at once: each filter runs on to the first position it lets through, the line there is
    /// noted, and the filters go on from the next line (a filter whose next position is past it
    /// is not run again). A position a filter lets through lies in the line it was let through
    /// for: no literal or escape holds a newline, and a value that shows in a line holds a gram
    /// of it at any grid of positions. One pass a chunk, not three calls a line: on text, a
    /// line is some hundred bytes, and the calls cost as much as the filters.
    pub fn scout(&self, chunk: &[u8]) -> Scouted {
        let upto = lines_end(chunk);
        let text = &chunk[..upto];
        let mut scouted = Scouted {
            upto,
            ..Scouted::default()
        };
        // Each filter's next position let through from `from`, as an offset in the chunk
        // (`usize::MAX`: none). A filter that cannot tell (no start literals' filter on this
        // CPU, or none at all) lets every position through.
        let first = |k: usize, from: usize| -> usize {
            let rest = &text[from..];
            let found = match k {
                0 => match &self.starts {
                    Some(starts) => starts.first(rest).unwrap_or(Some(0)),
                    None => Some(0),
                },
                1 => self.values.as_ref().and_then(|v| v.first(rest)),
                _ => hidden::first(rest),
            };
            found.map_or(usize::MAX, |p| from + p)
        };
        let mut next = [0, 1, 2].map(|k| first(k, 0));
        let mut at = 0;
        let mut dirty = 0;
        while at < upto {
            for (k, n) in next.iter_mut().enumerate() {
                if *n < at {
                    *n = first(k, at);
                }
            }
            let hit = next.iter().copied().min().unwrap_or(usize::MAX);
            if hit >= upto {
                break;
            }
            let start = memchr::memrchr(b'\n', &text[at..hit]).map_or(at, |n| at + n + 1);
            let newline = hit + memchr::memchr(b'\n', &text[hit..]).unwrap_or(upto - 1 - hit);
            scouted.dirty.push(newline);
            dirty += newline + 1 - start;
            at = newline + 1;
        }
        scouted.clean = upto - dirty;
        scouted
    }

    /// While the look pauses ([`Pace`]): the lines of `chunk` that hold a private key's header
    /// (`-----BEGIN `), one search of the chunk. A long line of an agent's stream that holds
    /// none need not be searched for one by the worker, which otherwise does so for every line
    /// (a key may go on over the lines of text after it): 5 ms of the worker's time on a 100 MB
    /// stream, taken by the reading thread, idle two thirds of the time there.
    pub fn headers(&self, chunk: &[u8]) -> Scouted {
        let upto = lines_end(chunk);
        let text = &chunk[..upto];
        let mut headers = Vec::new();
        let mut from = 0;
        while let Some(k) = super::cut::first_header(&text[from..]) {
            let newline = from + k + memchr::memchr(b'\n', &text[from + k..]).unwrap_or(0);
            headers.push(newline);
            from = newline + 1;
        }
        Scouted {
            upto,
            headers: Some(headers),
            ..Scouted::default()
        }
    }
}

/// Where the lines that end in `chunk` end: after its last newline.
fn lines_end(chunk: &[u8]) -> usize {
    memchr::memrchr(b'\n', chunk).map_or(0, |n| n + 1)
}

impl Scouted {
    /// Whether the filters looked: not while the look paused ([`Redactor::headers`]).
    fn looked(&self) -> bool {
        self.headers.is_none()
    }

    /// Where the lines ruled out from `at` (a line's start) end: the newline of the first line
    /// from there that the reader noted, or the end of what it looked at. Every line that ends
    /// (its newline) between `at` and this holds no secret.
    pub fn clean_until(&self, at: usize) -> usize {
        if !self.looked() {
            return at;
        }
        let first = self.dirty.partition_point(|&d| d < at);
        let noted = self.dirty.get(first).copied().unwrap_or(usize::MAX);
        noted.min(self.upto).max(at)
    }

    /// Whether the look was worth its time ([`Pace`]): at least half the bytes it looked at are
    /// in lines it ruled out.
    pub fn worth_it(&self) -> bool {
        self.clean * 2 >= self.upto
    }

    /// Whether `line` (without its newline) was ruled out by the reader: true only when it is
    /// the bytes of `chunk` between two of its newlines (or its start and a newline) that the
    /// reader looked at and did not note. `cursor` is where the last answer left off in the
    /// notes: the lines of a chunk are asked about in order, from 0.
    pub fn ruled_out(&self, chunk: &[u8], line: &[u8], cursor: &mut usize) -> bool {
        self.looked() && self.unnoted(&self.dirty, chunk, line, cursor)
    }

    /// Whether `line` holds no `-----BEGIN `, as [`Redactor::headers`] saw while the look
    /// paused: as [`Scouted::ruled_out`], of the lines it noted.
    pub fn holds_no_header(&self, chunk: &[u8], line: &[u8], cursor: &mut usize) -> bool {
        self.headers
            .as_ref()
            .is_some_and(|noted| self.unnoted(noted, chunk, line, cursor))
    }

    /// Whether `line` is a line of `chunk` the reader saw whose newline is not in `noted`.
    fn unnoted(&self, noted: &[usize], chunk: &[u8], line: &[u8], cursor: &mut usize) -> bool {
        let Some((_, end)) =
            crate::line::whole_line_in(chunk, line).filter(|&(_, e)| e < self.upto)
        else {
            return false;
        };
        while noted.get(*cursor).is_some_and(|&d| d < end) {
            *cursor += 1;
        }
        noted.get(*cursor) != Some(&end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cut::redact::{Secret, secrets_of};
    use proptest::prelude::*;

    fn redactor() -> Redactor {
        // Values of 8 to 20 bytes (the grams' stride is the shortest less three), one holding
        // a newline, one a quote, a slash and a backslash (#49's audit).
        let secrets: Vec<Secret> = secrets_of([
            ("SCOUT_API_KEY", "Zq9vX2mK7pL4wR8tY1uB"),
            ("DB_PASSWORD", "hunter2hunter2x"),
            ("SHORT_TOKEN", "Ab3dEf9h"),
            ("NL_SECRET", "line1abc\nline2xyz99"),
            ("Q_PASSWORD", "pa\"ss/wo\\rd77"),
        ]);
        Redactor::with_secrets(&secrets)
    }

    /// What a line may be made of: words of chat, and the starts and values of secrets.
    fn piece() -> impl Strategy<Value = &'static str> {
        prop_oneof![
            Just("{\"type\":\"assistant\",\"text\":\""),
            Just("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
            Just("the build is green "),
            Just("\"}\n"),
            Just("\n"),
            Just("\r\n"),
            Just("tool_use_id"),
            Just("ghp_0123456789abcdefghijABCDEFGHIJ012345"),
            Just("sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv_wx"),
            Just("Zq9vX2mK7pL4wR8tY1uB"),
            Just("hunter2hunter2x"),
            Just("password = \"letmein-now\""),
            Just("postgres://me:s3cretpw@db"),
            Just("12345678:AAH"),
            Just("sk-"),
            Just("pass"),
            // Word starts that go on as names (no secret), and ends that make them one.
            Just("\"input_tokens\":1234,"),
            Just("token"),
            Just("TOKEN"),
            Just("s"),
            Just("_"),
            Just("=\"Zq9vX2mK7pL4\""),
            Just("\":\"Zq9vX2mK7pL4"),
            Just("Secret_Key"),
            Just("PRIVATE KEY"),
            Just("\\u0073"),
            Just("Ab3dEf9h"),
            Just("line1abc\nline2xyz99"),
            Just("line1abc\\nline2xyz99"),
            Just("pa\\\"ss\\/wo\\\\rd77"),
            Just("\r"),
            Just("\\u001b[0m"),
            Just("\\u0010"),
            Just("https:\\/\\/user:pa55w0rd@host"),
            Just("gh\\u0070_0123456789abcdefghijABCDEFGHIJ012345"),
        ]
    }

    proptest! {
        /// The contract the worker relies on: a line the reader rules out is one in which the
        /// whole search finds nothing, wherever the chunk is cut.
        #[test]
        fn a_line_ruled_out_by_the_reader_holds_no_secret(
            pieces in proptest::collection::vec(piece(), 0..40),
            cut in 0usize..2000,
        ) {
            let r = redactor();
            let stream = pieces.concat();
            let stream = stream.as_bytes();
            let cut = cut.min(stream.len());
            for chunk in [&stream[..cut], &stream[cut..]] {
                let scouted = r.scout(chunk);
                let mut cursor = 0;
                let mut start = 0;
                while let Some(nl) = memchr::memchr(b'\n', &chunk[start..]) {
                    let line = &chunk[start..start + nl];
                    if scouted.ruled_out(chunk, line, &mut cursor) {
                        prop_assert!(!r.finds(line), "{:?}", String::from_utf8_lossy(line));
                    } else {
                        // Noted only where the filters let something through: the values'
                        // grams are looked up on a grid of positions from where the look
                        // started, so shifted (by bytes in no literal, value or escape).
                        let shifted = |p: usize| [vec![1u8; p], line.to_vec()].concat();
                        prop_assert!((0..16).any(|p| !r.rules_out(&shifted(p))));
                    }
                    // A run from any line start before it goes on through it only if it holds
                    // none.
                    let mut from = 0;
                    while from <= start {
                        if start + nl < scouted.clean_until(from) {
                            prop_assert!(!r.finds(line), "{:?} from {from}", String::from_utf8_lossy(line));
                        }
                        from += memchr::memchr(b'\n', &chunk[from..]).map_or(chunk.len(), |k| k + 1);
                    }
                    start += nl + 1;
                }
            }
        }
    }

    /// The look pauses after a chunk mostly of lines it cannot rule out, and looks again after
    /// PAUSE chunks; a chunk mostly ruled out keeps it looking.
    #[test]
    fn the_look_pauses_where_it_rules_out_little() {
        let r = redactor();
        let clean = "the build is green\n".repeat(400);
        let dirty = format!(
            "{{\"url\":\"https://example.com\",\"text\":\"{}\"}}\n",
            "x".repeat(4000)
        );
        let mut pace = Pace::default();
        for _ in 0..3 {
            assert!(pace.wants());
            pace.saw(r.scout(format!("{clean}{dirty}").as_bytes()).worth_it());
        }
        assert!(pace.wants());
        pace.saw(
            r.scout(format!("{dirty}{clean}{dirty}").as_bytes())
                .worth_it(),
        );
        for _ in 0..PAUSE {
            assert!(!pace.wants());
        }
        assert!(pace.wants());
        pace.saw(r.scout(clean.as_bytes()).worth_it());
        assert!(pace.wants());
    }

    /// While the look pauses, the lines with a key's header are noted, and no line is ruled
    /// out.
    #[test]
    fn a_paused_look_notes_the_lines_that_hold_a_keys_header() {
        let r = redactor();
        let chunk =
            b"{\"a\":\"x\"}\n{\"k\":\"-----BEGIN RSA PRIVATE KEY-----\"}\nMIIE\n-----BEGIN\nend";
        let scouted = r.headers(chunk);
        let lines: Vec<&[u8]> = chunk.split(|&b| b == b'\n').collect();
        let (mut cursor, mut headers) = (0, 0);
        let mut answers = Vec::new();
        for line in &lines {
            assert!(!scouted.ruled_out(chunk, line, &mut cursor));
            answers.push(scouted.holds_no_header(chunk, line, &mut headers));
        }
        // `-----BEGIN` without its space is no header; the unfinished line is not answered for.
        assert_eq!(answers, [true, false, true, true, false]);
        assert_eq!(scouted.clean_until(0), 0);
        // A part of a line, or a copy, is not answered for.
        let mut headers = 0;
        assert!(!scouted.holds_no_header(chunk, &chunk[1..5], &mut headers));
        let copy = lines[0].to_vec();
        assert!(!scouted.holds_no_header(chunk, &copy, &mut headers));
        // The look that ran answers for no header.
        let looked = r.scout(chunk);
        let mut headers = 0;
        assert!(!looked.holds_no_header(chunk, lines[0], &mut headers));
    }

    #[test]
    fn only_the_lines_between_newlines_of_the_chunk_are_answered_for() {
        let r = redactor();
        let chunk = b"first\nsecond ghp_0123456789abcdefghijABCDEFGHIJ012345\nthird\nunfinished";
        let scouted = r.scout(chunk);
        let mut cursor = 0;
        let line = |from: usize, to: usize| &chunk[from..to];
        assert!(scouted.ruled_out(chunk, line(0, 5), &mut cursor));
        assert!(!scouted.ruled_out(chunk, line(6, 53), &mut cursor));
        assert!(scouted.ruled_out(chunk, line(54, 59), &mut cursor));
        // Not a whole line of the chunk: a part of one, the unfinished one, a copy.
        let mut cursor = 0;
        assert!(!scouted.ruled_out(chunk, line(1, 5), &mut cursor));
        assert!(!scouted.ruled_out(chunk, line(54, 58), &mut cursor));
        assert!(!scouted.ruled_out(chunk, line(60, chunk.len()), &mut cursor));
        let copy = chunk[..5].to_vec();
        assert!(!scouted.ruled_out(chunk, &copy, &mut cursor));
        // A run from a line's start stops at the newline of the next line noted, or where the
        // reader stopped looking.
        assert_eq!(scouted.clean_until(0), 53);
        assert_eq!(scouted.clean_until(6), 53);
        assert_eq!(scouted.clean_until(54), 60);
        assert_eq!(scouted.clean_until(60), 60);
    }
}
