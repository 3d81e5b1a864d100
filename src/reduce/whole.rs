//! Containers whole in a piece, read in one go: the scanner validates one (with the 64-byte
//! string scan of lines held whole) and reports its tokens, from which the compact copy is made,
//! instead of the grammar stepping through it a byte at a time.
//!
//! A container read this way is one the reduction would copy unchanged but for whitespace: at
//! most `keep` bytes (no string in it long enough to cut) and [`MAX_VALUES_WHOLE`] values (no
//! array in it long enough to lose its middle, no object its last members). Anything else is
//! read a byte at a time, and so is what follows a failed attempt for a while
//! ([`Reducer::whole_value`]), so that attempts never cost more than a constant factor.

use super::copier::Counter;
use super::*;

/// The most values in a container read in one go: no array of at most this many elements loses
/// any ([`ENDS`] from each end are kept), no object of at most this many members ([`MEMBERS`]).
pub(super) const MAX_VALUES_WHOLE: usize = MEMBERS;
const _: () = assert!(MAX_VALUES_WHOLE <= 2 * ENDS);

/// After an attempt that failed over `w` bytes, no attempt for the next `w / SKIP` bytes: the
/// scanner reads about eight times faster than the grammar's byte steps, so failed attempts
/// cost at most about as much as the bytes they are charged to.
const SKIP: usize = 8;

/// The end of the scalar (a string of at most `max` bytes, a number or a literal) at `i` when
/// it is whole in `s` and valid. The piece's UTF-8 is checked already.
#[inline(always)]
fn scalar_end(s: &[u8], i: usize, max: usize) -> Option<usize> {
    let word = |w: &[u8]| s[i..].starts_with(w).then_some(i + w.len());
    match s[i] {
        b'"' => strings::string_end(&s[..s.len().min(i + max)], i).ok(),
        // A number that reaches the end of `s` may go on in the next piece.
        b'-' | b'0'..=b'9' => scan::number_end_inlined(s, i)
            .ok()
            .filter(|&end| end < s.len()),
        b't' => word(b"true"),
        b'f' => word(b"false"),
        b'n' => word(b"null"),
        _ => None,
    }
}

/// Notes where the last [`ENDS`] of the integer elements [`scan::integers`] read from `i` start
/// and end, in `run` at their index in the run (the first is the run's `m`-th) modulo `ENDS`:
/// found back from the last comma, since each element but the first starts after a comma and
/// at most one space.
fn last_integers(run: &mut [(usize, usize)], s: &[u8], i: usize, m: usize, ints: scan::Integers) {
    let mut end = ints.last_comma;
    for q in (ints.count.saturating_sub(ENDS)..ints.count).rev() {
        let comma = memchr::memrchr(b',', &s[i..end]).map(|c| i + c);
        let start = comma.map_or(i, |c| c + 1 + usize::from(s[c + 1] == b' '));
        run[(m + q) % ENDS] = (start, end);
        end = comma.unwrap_or(i);
    }
}

/// Where the next element of the array starts when the one that ends at `end` is followed, in
/// `s`, by a comma and an element whose first byte is one of `first`.
#[inline(always)]
fn next_element(s: &[u8], end: usize, first: impl Fn(u8) -> bool) -> Option<usize> {
    let comma = scan::skip_ws(s, end);
    if s.get(comma) != Some(&b',') {
        return None;
    }
    let next = scan::skip_ws(s, comma + 1);
    s.get(next).is_some_and(|&b| first(b)).then_some(next)
}

fn is_container(b: u8) -> bool {
    matches!(b, b'{' | b'[')
}

impl Reducer {
    /// Reads the container at the start of `s` (an array element or a member's value) in one
    /// go, when it is whole in `s` and small enough (see the module documentation). Returns
    /// the bytes consumed, or 0 to read it a byte at a time. The elements of an array that
    /// follow it whole in `s` are read in the same call.
    ///
    /// Elements that go among an array's back ones (past the first [`ENDS`]) are read a run
    /// at a time ([`Reducer::container_run`]): most are dropped with them.
    pub(super) fn whole_value(&mut self, s: &[u8]) -> usize {
        let mut i = 0;
        loop {
            if self.writing() && self.in_back() {
                return i + self.container_run(&s[i..], i as u64);
            }
            match self.one_whole_value(&s[i..], i as u64) {
                0 => return i,
                n => i += n,
            }
            // The next element of the same array, when it follows in the piece, in the same go.
            if self.frames.last().is_none_or(|f| f.object) {
                return i;
            }
            let Some(next) = next_element(s, i, is_container) else {
                return i;
            };
            self.st = St::Value;
            i = next;
        }
    }

    /// Reads one container as [`Reducer::whole_value`] does, not among an array's back
    /// elements; `at` is its offset in the piece.
    fn one_whole_value(&mut self, s: &[u8], at: u64) -> usize {
        let writing = self.writing();
        let Some((end, values)) = self.read_whole(s, at, writing) else {
            return 0;
        };
        self.element_start(writing);
        if writing {
            self.whole
                .append_to(&s[..end], &mut self.out, &mut self.elided);
            self.values += values;
        }
        self.value_done();
        end
    }

    /// Scans the container at the start of `s` (`at` bytes into the piece), making its
    /// compact copy in `self.whole` when `compact`; returns its end and its values when it may
    /// be read in one go. The piece's UTF-8 is checked already. A container that is not whole
    /// here, not valid or too big is read a byte at a time (to be reduced, or to fail where
    /// the grammar does), and so is what follows it for a while.
    #[inline(always)]
    fn read_whole(&mut self, s: &[u8], at: u64, compact: bool) -> Option<(usize, usize)> {
        let pos = self.pos + at;
        if pos < self.whole_after {
            return None;
        }
        let s = &s[..s.len().min(self.keep)];
        let read = if compact {
            self.whole.compact(s)
        } else {
            let mut counter = Counter::default();
            scan::first_value(s, &mut counter, &mut self.whole.stack)
                .map(|end| (end, counter.values, counter.depth))
        };
        match read {
            Ok((end, values, depth))
                if values <= MAX_VALUES_WHOLE && self.frames.len() + depth <= MAX_DEPTH =>
            {
                Some((end, values))
            }
            _ => {
                self.whole_after = pos + (s.len() / SKIP).max(1) as u64;
                None
            }
        }
    }

    /// Reads the array elements that are scalars of at most `keep` bytes (copied unchanged),
    /// whole in `s`, from its start (in an array past its first [`ENDS`] elements); returns the
    /// bytes consumed, or 0 to read the first a byte at a time.
    ///
    /// Of a run of `m` such elements only the last [`ENDS`] can be kept: each of the others,
    /// and the back elements before them, has `ENDS` elements after it. Those are counted as
    /// dropped without being copied, so that a giant array of numbers or short strings costs
    /// a scan and a count per element; integers, the commonest such array (token ids, line
    /// numbers), are read sixty-four bytes at a time instead ([`scan::integers`]).
    pub(super) fn scalar_run(&mut self, s: &[u8]) -> usize {
        let run = &mut self.whole.run;
        // Only the entries of this run's last `ENDS` elements are read: stale ones may stay.
        run.resize(ENDS, (0, 0));
        let (mut i, mut m, mut end) = (0, 0, 0);
        // Where blocks of integers are looked for next, and how far after a look that read
        // none whole (doubling up to `MAX_GAP`, so that runs of floats or strings pay little).
        const MIN_GAP: usize = 64;
        const MAX_GAP: usize = 4096;
        let (mut look_at, mut gap) = (0, MIN_GAP);
        loop {
            let ints =
                (i >= look_at && matches!(s[i], b'-' | b'0'..=b'9')).then(|| scan::integers(s, i));
            match ints {
                Some(ints) if ints.count > 0 => {
                    last_integers(run, s, i, m, ints);
                    m += ints.count;
                    (look_at, gap) = (ints.stop, MIN_GAP);
                    end = ints.last_comma;
                }
                _ => {
                    if let Some(ints) = ints {
                        (look_at, gap) = (ints.stop + gap, (gap * 2).min(MAX_GAP));
                    }
                    let Some(e) = scalar_end(s, i, self.keep) else {
                        break;
                    };
                    end = e;
                    run[m % ENDS] = (i, end);
                    m += 1;
                }
            }
            let scalar = |b| matches!(b, b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n');
            let Some(next) = next_element(s, end, scalar) else {
                break;
            };
            i = next;
        }
        self.commit_run(s, m, false);
        end
    }

    /// Ends a run of `m` array elements read in one go (`self.whole.run` holds the last
    /// [`ENDS`]): the others, and the back elements before them, are counted as dropped
    /// without being copied, since `ENDS` elements follow each; the last are copied. Scalars,
    /// or (`containers`) containers copied as read, to be compacted when the array closes.
    #[inline(always)]
    fn commit_run(&mut self, s: &[u8], m: usize, containers: bool) {
        if m == 0 {
            return;
        }
        let writing = self.writing();
        let early = m.saturating_sub(ENDS);
        if early > 0 {
            let f = self.frames.last_mut().expect("in an array");
            let back = f.back.len();
            f.count += early as u64;
            if writing {
                f.back.add_dropped(early as u64);
                if back > 0 {
                    self.drop_elements(back);
                }
            }
        }
        for k in early..m {
            let (start, end) = self.whole.run[k % ENDS];
            self.element_start(writing);
            if writing {
                self.out.extend_from_slice(&s[start..end]);
                if containers {
                    self.values += self.whole.run_values[k % ENDS];
                    if let Some(back) = self.frames.last_mut().and_then(|f| f.back.last_mut()) {
                        back.raw = true;
                    }
                } else {
                    self.values += 1;
                }
            }
            self.value_done();
        }
    }

    /// Reads the containers that follow one another as elements of an array past its first
    /// [`ENDS`] (the first at the start of `s`, `at` bytes into the piece), each as
    /// [`Reducer::one_whole_value`] would read it there: only the last `ENDS` are copied (see
    /// [`Reducer::commit_run`]), so that a giant array of small objects costs a scan and a
    /// count per element. Returns the bytes consumed (0: none read).
    // Out of line: inlined into `feed` it ran 13% more instructions (bounds checks).
    #[inline(never)]
    fn container_run(&mut self, s: &[u8], at: u64) -> usize {
        self.whole.run.resize(ENDS, (0, 0));
        self.whole.run_values.resize(ENDS, 0);
        let (mut i, mut m, mut end) = (0, 0, 0);
        while let Some((n, values)) = self.read_whole(&s[i..], at + i as u64, false) {
            end = i + n;
            self.whole.run[m % ENDS] = (i, end);
            self.whole.run_values[m % ENDS] = values;
            m += 1;
            let Some(next) = next_element(s, end, is_container) else {
                break;
            };
            i = next;
        }
        self.commit_run(s, m, true);
        end
    }

    /// Before the innermost array closes: compacts the back elements it kept as read, and
    /// moves what the others left out to their new offsets.
    pub(super) fn compact_back(&mut self) {
        let Some(f) = self.frames.last_mut() else {
            return;
        };
        if !f.back.iter().any(|b| b.raw) {
            return;
        }
        let back = f.back.take();
        let from = back[0].at;
        let region = self.out.split_off(from);
        // What the elements read a byte at a time left out.
        let first = self.elided_from(from);
        let old: Vec<(usize, Elided)> = self.elided.drain(first..).collect();
        // Each element's start in `region` and in the copy.
        let mut moved = Vec::with_capacity(back.len());
        for (k, b) in back.iter().enumerate() {
            let start = b.at - from;
            // The next element starts after a comma.
            let end = back.get(k + 1).map_or(region.len(), |n| n.at - from - 1);
            if k > 0 {
                self.out.push(b',');
            }
            moved.push((start, self.out.len()));
            let element = &region[start..end];
            if !b.raw {
                self.out.extend_from_slice(element);
            } else if let Ok((end, ..)) = self.whole.compact(element) {
                self.whole
                    .append_to(&element[..end], &mut self.out, &mut self.elided);
            } else {
                // It was scanned as valid when it was read.
                debug_assert!(false, "an element kept as read no longer scans");
                return self.fail(Failure::TooBig);
            }
        }
        for (offset, e) in old {
            let at = offset - from;
            let (start, new_start) = moved[moved.partition_point(|m| m.0 <= at) - 1];
            self.elided.push((new_start + at - start, e));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reduction of `line` fed in `chunk`-byte pieces, and its value count before it
    /// finishes.
    fn reduce(line: &str, chunk: usize) -> (usize, Reduced) {
        let mut r = Reducer::new(200);
        for piece in line.as_bytes().chunks(chunk) {
            r.feed(piece);
        }
        assert!(r.failure().is_none());
        let values = r.values;
        (values, r.finish().unwrap().unwrap())
    }

    /// Containers read in one go count their values, and those with whitespace note their
    /// input lengths, as a byte at a time does: in arrays, as members' values, and past the
    /// members an object keeps.
    #[test]
    fn containers_read_in_one_go_count_values_and_lengths_as_bytes_do() {
        for value in [
            r#"{"a":[1,{"b":null}],"c":"x"}"#,
            r#"{"a": [1, {"b" : null}], "c":"x" }"#,
        ] {
            for n in [3, 200, 300, 1000] {
                let array = format!("[{}]", vec![value; n].join(", "));
                let members: Vec<String> = (0..n).map(|k| format!(r#""k{k}": {value}"#)).collect();
                let object = format!(r#"{{"o":{{{}}}}}"#, members.join(","));
                for line in [array, object] {
                    reduces_as_bytes_do(&line, &[1 << 20], &format!("{n} {value}"));
                }
            }
        }
    }

    /// `line` fed in each of `chunks`-byte pieces reduces as fed a byte at a time (then no
    /// container, run or short string is read in one go): the same values, copy and notes.
    fn reduces_as_bytes_do(line: &str, chunks: &[usize], label: &str) {
        let one = reduce(line, 1);
        for &chunk in chunks {
            let whole = reduce(line, chunk);
            assert_eq!(one.0, whole.0, "{label} {chunk}");
            assert_eq!(
                String::from_utf8_lossy(&one.1.doc),
                String::from_utf8_lossy(&whole.1.doc),
                "{label} {chunk}"
            );
            assert_eq!(one.1.elided, whole.1.elided, "{label} {chunk}");
        }
    }

    /// Back elements copied as read sit among elements read a byte at a time (too long to read
    /// in one go, or not containers), which left things out: compacting the first at the
    /// array's close moves the others' notes to where they now start, in arrays that keep all
    /// their back elements and in arrays that drop some.
    #[test]
    fn back_elements_kept_as_read_compact_among_elements_read_a_byte_at_a_time() {
        // Longer than `keep`, with no string long enough to cut (its cut may fall elsewhere
        // with other pieces).
        let numbers: Vec<String> = (0..100).map(|k| k.to_string()).collect();
        let long = format!(r#"{{"a": [{}], "b" : {{ }}}}"#, numbers.join(", "));
        let pieces = [
            r#"{"a": [1, {"b" : null}]}"#,
            &long,
            r#""short""#,
            "[ [ ], { } ]",
            "[[],{}]",
            "12.5e3",
        ];
        for n in [130, 256, 257, 300, 1000] {
            let elements: Vec<&str> = (0..n).map(|k| pieces[k % pieces.len()]).collect();
            let line = format!(r#"{{"x": [{}] }}"#, elements.join(" , "));
            reduces_as_bytes_do(&line, &[7, 1 << 20], &n.to_string());
        }
    }

    /// Scalars read a run at a time past an array's first `ENDS` elements (all but the last
    /// `ENDS` of a run counted as dropped, never copied) reduce as a byte at a time does: runs
    /// cut by containers, by strings longer than `keep`, by piece ends and by the array's end.
    #[test]
    fn runs_of_scalars_reduce_as_bytes_do() {
        // Copied whole by the byte path too (at most `keep + 16` bytes): not cut anywhere.
        let longer_than_keep = format!(r#""{}""#, "y".repeat(205));
        let scalars = [
            "0",
            "-0.0e+5",
            "12345",
            "-7",
            "3.25",
            "1E9",
            "true",
            "false",
            "null",
            r#""a\u00e9\n""#,
            r#""""#,
            r#""\ud83d\ude00 \"q\"""#,
            &longer_than_keep,
            r#"{"a": 1}"#,
            "[ ]",
        ];
        for n in [100, 128, 129, 200, 256, 257, 300, 1000, 5000] {
            for every in [1, 3, scalars.len(), 100] {
                let elements: Vec<&str> = (0..n)
                    .map(|k| scalars[(k / every) % scalars.len()])
                    .collect();
                for sep in [",", ", ", " ,\t"] {
                    let line = format!(r#"{{"x": [{}], "n": [1,2]}}"#, elements.join(sep));
                    reduces_as_bytes_do(&line, &[7, 64, 1000, 1 << 20], &format!("{n} {every}"));
                }
            }
        }
    }

    /// Integers read sixty-four bytes at a time ([`scan::integers`]; the last `ENDS` found back
    /// from the last comma) reduce as a byte at a time does: compact and spaced, negative, of
    /// every width, in runs cut by floats, strings, containers, two spaces, piece ends and the
    /// array's end, so that the blocks hold fewer elements than `ENDS`, or more.
    #[test]
    fn giant_runs_of_integers_reduce_as_bytes_do() {
        let widths = |k: usize| match k % 7 {
            0 => "0".to_string(),
            1 => format!("-{}", k % 10),
            2 => (k * 7919).to_string(),
            3 => "-0".to_string(),
            4 => format!("{}", u64::MAX - k as u64),
            5 => format!("-{}", k * 31),
            _ => "9".repeat(1 + k % 70),
        };
        let cuts = ["1.5", r#""s""#, "[1, 2]", "true", "-1e3"];
        for n in [127, 128, 129, 300, 1000, 5000] {
            for cut_every in [0, 20, 150, 700] {
                for sep in [",", ", ", " , ", ",  "] {
                    let elements: Vec<String> = (1..=n)
                        .map(|k| match cut_every {
                            0 => widths(k),
                            every if k % every == 0 => cuts[k / every % cuts.len()].to_string(),
                            _ => widths(k),
                        })
                        .collect();
                    let line = format!(r#"{{"ids": [{}], "n": 1}}"#, elements.join(sep));
                    let label = format!("{n} {cut_every} {sep:?}");
                    reduces_as_bytes_do(&line, &[7, 64, 100, 1000, 1 << 20], &label);
                }
            }
        }
    }

    /// A run of integers that ends with its last whole block, followed by a container, a string
    /// longer than `keep` or a number cut by the piece's end: the elements kept from the array's
    /// end are found back from the blocks' last comma, with the one after.
    #[test]
    fn a_run_that_ends_with_its_blocks_keeps_its_last_elements() {
        let long = format!(r#""{}""#, "z".repeat(300));
        for next in [r#"{"a":1}"#, &long, "12345678"] {
            for blocks in 4..8 {
                for extra in 0..64 {
                    // Element 129, where runs start, begins a block of 32 two-byte elements.
                    let ints: Vec<String> = (0..ENDS + 32 * blocks + extra)
                        .map(|k| (k % 10).to_string())
                        .collect();
                    let line = format!("[{},{next}]", ints.join(","));
                    let cut = 2 * (ENDS + 32 * blocks + extra) + 4;
                    let label = format!("{blocks} {extra} {next}");
                    reduces_as_bytes_do(&line, &[cut, 1 << 20], &label);
                }
            }
        }
    }

    /// Containers read a run at a time past an array's first `ENDS` elements (all but the last
    /// `ENDS` of a run counted as dropped, never copied; the last copied as read and compacted
    /// when the array closes) reduce as a byte at a time does: compact and spaced, nested, with
    /// runs longer than `ENDS` cut by scalars, by containers too long to read in one go and by
    /// piece ends, in arrays and as members' values.
    #[test]
    fn container_runs_reduce_as_bytes_do() {
        let long = format!(r#"{{"big": [{}]}}"#, vec!["7"; 300].join(", "));
        let containers = [
            r#"{"type":"text","n":1}"#,
            r#"{"type": "text", "text": "an item", "n": 12345}"#,
            r#"[1, [2, {"a" : [ ]}], "x"]"#,
            "{ }",
            "[]",
            r#"{"deep":[[[[{"e":null}]]]]}"#,
        ];
        for n in [127, 128, 129, 257, 300, 1000, 3000] {
            for cut_every in [0, 50, 200, 999] {
                for sep in [",", ", ", " ,\n"] {
                    let elements: Vec<&str> = (1..=n)
                        .map(|k| match cut_every {
                            every if every > 0 && k % every == 0 && k % 2 == 0 => "42",
                            every if every > 0 && k % every == 0 => &long,
                            _ => containers[k % containers.len()],
                        })
                        .collect();
                    let line = format!(
                        r#"{{"items": [{}], "more": {{"x": [{}]}}}}"#,
                        elements.join(sep),
                        elements[..n / 2].join(sep)
                    );
                    let label = format!("{n} {cut_every} {sep:?}");
                    reduces_as_bytes_do(&line, &[7, 64, 1000, 1 << 20], &label);
                }
            }
        }
    }

    /// A run of containers stops at one that may not be read in one go: one of more than
    /// `MAX_VALUES_WHOLE` values (its own middle must be dropped), or one that would nest
    /// past `MAX_DEPTH` (the line must fail as too big), as a byte at a time does.
    #[test]
    fn container_runs_stop_where_one_go_may_not_read() {
        let wide = format!("[{}]", vec!["0"; MAX_VALUES_WHOLE + 44].join(","));
        let line = format!("[{}]", vec![wide.as_str(); 400].join(","));
        let reduce = |chunk: usize| {
            let mut r = Reducer::new(5000);
            for piece in line.as_bytes().chunks(chunk) {
                r.feed(piece);
            }
            r.finish().unwrap().unwrap()
        };
        let (one, whole) = (reduce(1), reduce(1 << 20));
        assert_eq!(one.doc, whole.doc);
        assert_eq!(one.elided, whole.elided);

        let depth = MAX_DEPTH - 1;
        // Scalars first, so that no container is read before the array's back.
        let deep = format!(
            "{}{},{}{}",
            "[".repeat(depth),
            vec!["1"; 200].join(","),
            vec!["[[1]]"; 300].join(","),
            "]".repeat(depth)
        );
        for chunk in [1, 1 << 20] {
            let mut r = Reducer::new(200);
            for piece in deep.as_bytes().chunks(chunk) {
                r.feed(piece);
            }
            assert_eq!(r.finish().err(), Some(Failure::TooBig), "{chunk}");
        }
    }

    /// A bad scalar deep in a giant array's middle, where runs are read in one go and then
    /// dropped, still makes the line invalid, whatever the pieces.
    #[test]
    fn a_bad_scalar_in_a_run_fails_the_line() {
        for bad in [
            "01",
            "1.",
            "-",
            "1e",
            "1e+",
            ".5",
            "+1",
            "truex",
            "nul",
            "tru e",
            "1 2",
            "1,,2",
            "\"a\u{1}\"",
            r#""\x""#,
            r#""\ud800""#,
            "\"open",
            "NaN",
            "1,]",
            "-01",
            "00",
            "--1",
            "1-2",
            "- 1",
            "1, ,2",
            "-0-",
        ] {
            let mut elements = vec!["12"; 1000];
            elements[600] = bad;
            let line = format!("[{}]", elements.join(","));
            assert!(!scan::is_valid(line.as_bytes(), &mut Vec::new()), "{bad}");
            for chunk in [1, 5, 64, 1 << 20] {
                let mut r = Reducer::new(200);
                for piece in line.as_bytes().chunks(chunk) {
                    r.feed(piece);
                }
                assert_eq!(r.finish().err(), Some(Failure::Invalid), "{bad} {chunk}");
            }
        }
    }
}
