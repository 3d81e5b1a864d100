//! Characters written as escapes. A JSON writer may escape any character: Go writes `&` as
//! `\u0026`, .NET writes `+` as `\u002B`, a hostile or careless one writes a whole token as
//! `\u0067\u0068\u0070_…`, and JSON inside a JSON string doubles each backslash (`\\u0041`,
//! `https:\\\/\\\/`). No pattern or value matches a secret written so, so the search runs on
//! a [`Shadow`] of the line, where each such escape (at any depth) is the printable ASCII
//! character it stands for, and each secret found there is replaced in the line as written,
//! escapes and all.
//!
//! Escapes of control characters, `"` and `\` are not read (`\"`, `\\`, `\n`, `\u001b`
//! stay as they are, as the patterns and [`super::after_escape`] expect them). The line as
//! written is searched too: a `\u0041` before a token is a boundary there.

/// The character that the escape at `text[at..]` stands for, and the escape's length, when
/// it is one that hides a character: one or more backslashes, then `/`, or `u` and four hex
/// digits of a character that is not a control character, `"` or `\`.
fn escape_at(text: &[u8], at: usize) -> Option<(char, usize)> {
    let slashes = text[at..].iter().take_while(|&&b| b == b'\\').count();
    let after = at + slashes;
    if slashes == 0 {
        return None;
    }
    match text.get(after)? {
        b'/' => Some(('/', slashes + 1)),
        b'u' => {
            let unit = |at: usize| -> Option<u32> {
                let hex = std::str::from_utf8(text.get(at..at + 4)?).ok()?;
                u32::from_str_radix(hex, 16).ok()
            };
            let first = unit(after + 1)?;
            let (code, len) = if (0xD800..0xDC00).contains(&first) {
                // A surrogate pair (`\uD83D\uDE00`): the low half is escaped the same way.
                let next = at + slashes + 5;
                let low_at = next + slashes;
                let same = text.get(next..low_at)?.iter().all(|&b| b == b'\\')
                    && text.get(low_at) == Some(&b'u');
                let low = unit(low_at + 1).filter(|l| same && (0xDC00..0xE000).contains(l))?;
                (
                    0x10000 + ((first - 0xD800) << 10) + (low - 0xDC00),
                    2 * (slashes + 5),
                )
            } else {
                (first, slashes + 5)
            };
            let c = char::from_u32(code)?;
            (!c.is_control() && c != '"' && c != '\\').then_some((c, len))
        }
        _ => None,
    }
}

/// True when the backslash at `text[at]` (maybe one of a run) starts an escape that hides a
/// printable character: it is inside a word, not between words.
pub(super) fn hides_at(text: &[u8], at: usize) -> bool {
    let start = text[..at].iter().rev().take_while(|&&b| b == b'\\').count();
    escape_at(text, at - start).is_some()
}

/// True when `line` has an escape that hides a printable character.
pub(super) fn hides(line: &[u8]) -> bool {
    first(line).is_some()
}

/// Where the first escape that hides a printable character starts (its first backslash): one
/// pass over the backslashes, each run of them read once (two searches, for `\u` and `\/`,
/// cost a text without escapes twice as much, #49).
pub(super) fn first(line: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(k) = memchr::memchr(b'\\', &line[from..]) {
        let start = from + k;
        // Past the run: the byte after it is no backslash.
        let after = start + line[start..].iter().take_while(|&&b| b == b'\\').count();
        if may_hide(line, after) && escape_at(line, start).is_some() {
            return Some(start);
        }
        from = after;
    }
    None
}

/// Whether a run of backslashes that ends before `line[after]` may start an escape that hides
/// a character. Most escapes are `\n`, `\"`, `\\` and a terminal's `\u001b`, which hide
/// nothing: told by a look at the bytes after the run, before the escape is read.
fn may_hide(line: &[u8], after: usize) -> bool {
    match line.get(after) {
        Some(b'/') => true,
        Some(b'u') => {
            let hex = &line[after + 1..];
            !(hex.starts_with(b"00") && matches!(hex.get(2), Some(b'0' | b'1')))
        }
        _ => false,
    }
}

/// One step of reading a line: a character an escape stood for (and the escape's length), or
/// bytes copied as they are (plain bytes up to a backslash, or a run of backslashes that hides
/// nothing with the byte after it, so that a later backslash of the run is not read as the
/// start of an escape).
enum Step {
    Char(char, usize),
    Copy(usize),
}

fn step(line: &[u8], i: usize) -> Step {
    if line[i] != b'\\' {
        return Step::Copy(memchr::memchr(b'\\', &line[i..]).unwrap_or(line.len() - i));
    }
    if let Some((c, len)) = escape_at(line, i) {
        return Step::Char(c, len);
    }
    let run = line[i..].iter().take_while(|&&b| b == b'\\').count();
    Step::Copy(line.get(i + run).map_or(run, |_| run + 1))
}

/// How often (in bytes of the shadow) [`Shadow`] notes where it is in the line (often in the
/// tests, so that their short lines read on from marks).
const MARK_EVERY: usize = if cfg!(test) { 16 } else { 4096 };

/// A line with its hiding escapes read, and where its bytes are in the line.
pub(super) struct Shadow {
    pub text: Vec<u8>,
    /// Every [`MARK_EVERY`] bytes or so, where the shadow is (`.0`) and the line (`.1`), at the
    /// start of a step: a position is found by reading on from the mark before it. A position
    /// a byte took 8 bytes a byte of the line (an 8 MiB line held 67 MiB of them, #49's audit).
    marks: Vec<(usize, usize)>,
}

impl Shadow {
    /// The shadow of `line`, or `None` when it has no hiding escape.
    pub(super) fn of(line: &[u8]) -> Option<Shadow> {
        first(line)?;
        // Its exact length first: a line of escapes shrinks to a sixth, and a shadow as long
        // as the line held that much again of a long line (#49).
        let (mut len, mut i) = (0, 0);
        while i < line.len() {
            let (gives, takes) = match step(line, i) {
                Step::Char(c, n) => (c.len_utf8(), n),
                Step::Copy(n) => (n, n),
            };
            len += gives;
            i += takes;
        }
        let mut text = Vec::with_capacity(len);
        let mut marks = vec![(0, 0)];
        let mut i = 0;
        while i < line.len() {
            if marks.last().is_some_and(|m| text.len() >= m.0 + MARK_EVERY) {
                marks.push((text.len(), i));
            }
            match step(line, i) {
                Step::Char(c, len) => {
                    text.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                    i += len;
                }
                Step::Copy(n) => {
                    text.extend_from_slice(&line[i..i + n]);
                    i += n;
                }
            }
        }
        Some(Shadow { text, marks })
    }

    /// Where position `at` of the shadow of `line` is in `line` (the shadow's end: the line's
    /// end; each byte of a character an escape stood for: the escape's start).
    pub(super) fn raw(&self, line: &[u8], at: usize) -> usize {
        if at >= self.text.len() {
            return line.len();
        }
        // The last mark at or before `at` (the first is at 0).
        let k = self.marks.partition_point(|m| m.0 <= at) - 1;
        let (mut shadow, mut i) = self.marks[k];
        loop {
            let (gives, takes) = match step(line, i) {
                Step::Char(c, _) if at < shadow + c.len_utf8() => return i,
                Step::Char(c, len) => (c.len_utf8(), len),
                Step::Copy(n) if at < shadow + n => return i + (at - shadow),
                Step::Copy(n) => (n, n),
            };
            shadow += gives;
            i += takes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_of_characters_are_read_at_any_depth() {
        let line = br#"a\u0067h\\u0070_\/x\\\/y\"z\\n\u001b\u00E9\u0022"#;
        let s = Shadow::of(line).unwrap();
        assert_eq!(
            s.text,
            r#"aghp_/x/y\"z\\n\u001bé\u0022"#.as_bytes().to_vec()
        );
        // `h` after the first escape, `p` after the doubled one.
        assert_eq!(s.raw(line, 2), 7);
        assert_eq!(s.raw(line, 3), 8);
        assert_eq!(s.raw(line, 4), 15);
        assert_eq!(s.raw(line, s.text.len()), line.len());
    }

    #[test]
    fn a_line_without_hiding_escapes_has_no_shadow() {
        assert!(Shadow::of(br#"{"a":"x\n\"y\\u\u001b\u009b\u005c\ud800"}"#).is_none());
        assert!(hides(br#"{"a":"\u0041"}"#));
        assert!(hides(br#"{"a":"https:\/\/"}"#));
    }

    /// Found by attacking the door: a character past U+FFFF is written as a surrogate pair,
    /// and neither half is a character: a value holding one (an emoji) was left whole.
    #[test]
    fn a_surrogate_pair_is_read_as_its_character_at_any_depth() {
        for (line, want) in [
            (&br#"x\ud83d\ude00y"#[..], "x\u{1F600}y"),
            (br#"x\uD83D\uDE00y"#, "x\u{1F600}y"),
            (br#"x\\uD83D\\uDE00y"#, "x\u{1F600}y"),
        ] {
            assert_eq!(Shadow::of(line).unwrap().text, want.as_bytes(), "{line:?}");
        }
        // A lone half is no character: left as written.
        assert!(Shadow::of(br#"x\ud83dy"#).is_none());
    }

    /// The shadow's map, kept by marks, says what a map of every byte says (the way it was kept
    /// before, 8 bytes a byte of the line).
    fn dense(line: &[u8]) -> Option<(Vec<u8>, Vec<usize>)> {
        let mut i = first(line)?;
        let (mut text, mut raw_at) = (line[..i].to_vec(), (0..i).collect::<Vec<_>>());
        while i < line.len() {
            if line[i] == b'\\' {
                if let Some((c, len)) = escape_at(line, i) {
                    let mut utf8 = [0; 4];
                    let c = c.encode_utf8(&mut utf8).as_bytes();
                    text.extend_from_slice(c);
                    raw_at.extend(std::iter::repeat_n(i, c.len()));
                    i += len;
                    continue;
                }
                let run = line[i..].iter().take_while(|&&b| b == b'\\').count();
                let stop = line.get(i + run).map_or(run, |_| run + 1);
                text.extend_from_slice(&line[i..i + stop]);
                raw_at.extend(i..i + stop);
                i += stop;
                continue;
            }
            text.push(line[i]);
            raw_at.push(i);
            i += 1;
        }
        raw_at.push(line.len());
        Some((text, raw_at))
    }

    /// [`first`] as it was, by a search for each of `\u` and `\/`: its reference.
    fn first_by_two_searches(line: &[u8]) -> Option<usize> {
        let run_start =
            |at: usize| at - line[..at].iter().rev().take_while(|&&b| b == b'\\').count();
        let unicode = memchr::memmem::find_iter(line, b"\\u")
            .map(run_start)
            .find(|&start| escape_at(line, start).is_some());
        let slash = memchr::memmem::find(line, b"\\/").map(run_start);
        match (unicode, slash) {
            (Some(u), Some(s)) => Some(u.min(s)),
            (u, s) => u.or(s),
        }
    }

    /// Lines made of escapes that hide a character at every depth, ones that do not, lone
    /// surrogates and backslashes, and plain text.
    fn pieces() -> impl proptest::strategy::Strategy<Value = Vec<&'static str>> {
        use proptest::strategy::Just;
        proptest::collection::vec(
            proptest::prop_oneof![
                Just("\\u0041"),
                Just("\\\\u00e9"),
                Just("\\ud83d\\ude00"),
                Just("\\/"),
                Just("\\\\\\/"),
                Just("\\n"),
                Just("\\\\"),
                Just("\\u001b"),
                Just("\\u0010"),
                Just("\\u001F"),
                Just("\\u0020"),
                Just("\\u00"),
                Just("\\u0022"),
                Just("\\ud83d"),
                Just("ab"),
                Just("é"),
                Just("\\"),
                Just("\\u12"),
                Just("u"),
                Just("/"),
                Just("0"),
                Just("1"),
                Just("plain words between two escapes, far apart"),
            ],
            0..64,
        )
    }

    /// An escape at every distance from the one before, after runs of every length.
    #[test]
    fn a_hiding_escape_is_found_at_any_distance_from_the_escape_before() {
        for before in ["\\n", "\\\\", "\\u001b", "\\\\\\\\\\\\\\\\\\"] {
            for hiding in ["\\u0041", "\\/", "\\\\\\/", "\\\\u00e9"] {
                for gap in 0..300 {
                    let line = format!(
                        "{before}{}{before}{}{hiding}",
                        "x".repeat(gap % 7),
                        "y".repeat(gap)
                    );
                    let line = line.as_bytes();
                    assert_eq!(
                        first(line),
                        first_by_two_searches(line),
                        "{before} {gap} {hiding}"
                    );
                    assert!(first(line).is_some());
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn the_first_hiding_escape_is_found_in_one_pass_as_by_two_searches(
            pieces in pieces(),
        ) {
            let line = pieces.concat();
            proptest::prop_assert_eq!(first(line.as_bytes()), first_by_two_searches(line.as_bytes()));
        }

        #[test]
        fn the_map_by_marks_is_the_map_of_every_byte(
            pieces in pieces(),
        ) {
            let line = pieces.concat();
            let line = line.as_bytes();
            let shadow = Shadow::of(line);
            proptest::prop_assert_eq!(shadow.is_some(), dense(line).is_some());
            if let (Some(s), Some((text, raw_at))) = (shadow, dense(line)) {
                proptest::prop_assert_eq!(&s.text, &text);
                for (at, &raw) in raw_at.iter().enumerate() {
                    proptest::prop_assert_eq!(s.raw(line, at), raw, "at {} of {:?}", at, line);
                }
            }
        }
    }
}
