//! The push tokenizer: the JSON grammar one byte at a time, resumable at any piece boundary,
//! with what is whole in the piece read in one go (small array elements, short strings, numbers).

use super::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum St {
    /// A value must come (after `:` or `,` in an array, or at the start).
    Value,
    /// A value or `]` (just after `[`).
    ValueOrClose,
    /// A key must come (after `,` in an object).
    Key,
    /// A key or `}` (just after `{`).
    KeyOrClose,
    Colon,
    AfterValue,
    Str,
    Num(Num),
    /// Inside `true`, `false` or `null`: the literal and the bytes of it matched.
    Lit(&'static [u8], u8),
    /// The top-level value is complete: only whitespace may follow.
    Done,
}

/// Where a number is in the grammar `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Num {
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    E,
    ESign,
    Exp,
}

impl Num {
    pub(super) fn next(self, b: u8) -> Option<Num> {
        use Num::*;
        Some(match (self, b) {
            (Minus, b'0') => Zero,
            (Minus, b'1'..=b'9') => Int,
            (Int, b'0'..=b'9') => Int,
            (Zero | Int, b'.') => Dot,
            (Dot | Frac, b'0'..=b'9') => Frac,
            (Zero | Int | Frac, b'e' | b'E') => E,
            (E, b'+' | b'-') => ESign,
            (E | ESign | Exp, b'0'..=b'9') => Exp,
            _ => return None,
        })
    }
    pub(super) fn complete(self) -> bool {
        matches!(self, Num::Zero | Num::Int | Num::Frac | Num::Exp)
    }
}

/// The largest array element read in one go (see `Reducer::small_element`): too small to hold
/// a container of more than [`ENDS`] values.
const SMALL: usize = 128;

/// Sees whether an element is compact (no whitespace between its tokens) as the scanner reads
/// it, and counts its values as the reducer does (keys are not values).
struct Compact<'a> {
    s: &'a [u8],
    /// The end of the last token.
    last: usize,
    compact: bool,
    values: usize,
}

impl Compact<'_> {
    /// The next token starts at `at`: between it and the last, at most a `,` or a `:`.
    #[inline(always)]
    fn next(&mut self, at: usize) {
        let gap = &self.s[self.last..at];
        self.compact &= gap.len() <= 1 && !gap.first().is_some_and(u8::is_ascii_whitespace);
    }
}

impl scan::Visitor for Compact<'_> {
    #[inline(always)]
    fn key(&mut self, start: usize, end: usize) {
        self.next(start);
        self.last = end;
    }
    #[inline(always)]
    fn scalar(&mut self, _: Kind, start: usize, end: usize) {
        self.next(start);
        self.last = end;
        self.values += 1;
    }
    #[inline(always)]
    fn open(&mut self, _: Kind, start: usize) {
        self.next(start);
        self.last = start + 1;
        self.values += 1;
    }
    #[inline(always)]
    fn close(&mut self, end: usize) {
        self.next(end - 1);
        self.last = end;
    }
}

impl Reducer {
    /// Reads from the start of `s` (never empty); returns the bytes consumed.
    pub(super) fn step(&mut self, s: &[u8]) -> usize {
        let b = s[0];
        match self.st {
            St::Str => return self.string(s),
            St::Num(mut n) => match n.next(b) {
                Some(next) => {
                    // The rest of the number's digits in one go.
                    n = next;
                    let mut k = 1;
                    while let Some(next) = s.get(k).and_then(|&b| n.next(b)) {
                        n = next;
                        k += 1;
                    }
                    if self.writing() {
                        self.out.extend_from_slice(&s[..k]);
                    }
                    self.st = St::Num(n);
                    return k;
                }
                None if n.complete() => {
                    // The number ended; `b` is read again after it.
                    self.value_done();
                    return 0;
                }
                None => {
                    self.fail(Failure::Invalid);
                    return 1;
                }
            },
            St::Lit(lit, k) => {
                if b != lit[k as usize] {
                    self.fail(Failure::Invalid);
                } else if k as usize + 1 == lit.len() {
                    self.put(b);
                    self.value_done();
                } else {
                    self.put(b);
                    self.st = St::Lit(lit, k + 1);
                }
                return 1;
            }
            _ => {}
        }
        if matches!(b, b' ' | b'\t' | b'\r' | b'\n') {
            return 1;
        }
        match (self.st, b) {
            (St::ValueOrClose, b']') => self.close(false),
            (St::Value | St::ValueOrClose, b'{' | b'[')
                if self.writing()
                    && self.frames.last().is_some_and(|f| !f.object)
                    && self.frames.len() + SMALL < MAX_DEPTH =>
            {
                match self.small_element(s) {
                    0 => self.value_start(b),
                    n => return n,
                }
            }
            (St::Value | St::ValueOrClose, _) => self.value_start(b),
            (St::KeyOrClose, b'}') => self.close(true),
            (St::Key | St::KeyOrClose, b'"') => self.key_start(),
            (St::Colon, b':') => {
                self.put(b':');
                self.st = St::Value;
            }
            (St::AfterValue, b',') => {
                self.st = match self.frames.last() {
                    Some(f) if f.object => St::Key,
                    _ => St::Value,
                }
            }
            (St::AfterValue, b']') if self.frames.last().is_some_and(|f| !f.object) => {
                self.close(false)
            }
            (St::AfterValue, b'}') if self.frames.last().is_some_and(|f| f.object) => {
                self.close(true)
            }
            _ => self.fail(Failure::Invalid),
        }
        1
    }

    /// A value starts with byte `b`.
    pub(super) fn value_start(&mut self, b: u8) {
        let writing = self.writing();
        self.element_start(writing);
        if writing {
            self.values += 1;
        }
        self.st = match b {
            b'{' | b'[' => {
                if self.frames.len() >= MAX_DEPTH {
                    self.fail(Failure::TooBig);
                    return;
                }
                let object = b == b'{';
                self.frames.push(Frame {
                    object,
                    out_start: self.out.len(),
                    in_start: self.pos,
                    count: 0,
                    back: Vec::new(),
                    dropped: 0,
                });
                self.put(b);
                if object {
                    St::KeyOrClose
                } else {
                    St::ValueOrClose
                }
            }
            b'"' => {
                self.string_start(false);
                St::Str
            }
            b'-' => {
                self.put(b);
                St::Num(Num::Minus)
            }
            b'0' => {
                self.put(b);
                St::Num(Num::Zero)
            }
            b'1'..=b'9' => {
                self.put(b);
                St::Num(Num::Int)
            }
            b't' | b'f' | b'n' => {
                self.put(b);
                let lit: &'static [u8] = match b {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                };
                St::Lit(lit, 1)
            }
            _ => {
                self.fail(Failure::Invalid);
                St::Value
            }
        };
    }

    /// In an array, a value starts: counted, and in the copy after a comma.
    fn element_start(&mut self, writing: bool) {
        if let Some(f) = self.frames.last_mut()
            && !f.object
        {
            f.count += 1;
            if writing {
                if f.count > 1 {
                    self.out.push(b',');
                }
                if f.count > ENDS as u64 {
                    f.back.push((self.out.len(), self.values));
                }
            }
        }
    }

    /// Reads a small array element at the start of `s` in one go, when it can be copied as it
    /// is: an object or array of at most [`SMALL`] bytes (and `keep`), whole in `s`, compact,
    /// and valid. Such an element has no string long enough to cut and no container long enough
    /// to reduce. Returns the bytes consumed, or 0 to read it a byte at a time.
    fn small_element(&mut self, s: &[u8]) -> usize {
        let s = &s[..s.len().min(SMALL).min(self.keep)];
        let mut element = Compact {
            s,
            last: 0,
            compact: true,
            values: 0,
        };
        // The piece's UTF-8 is checked already. An element that is not whole here, not valid
        // or not compact is read a byte at a time (to fail where the grammar does).
        let end = match scan::first_value(s, &mut element, &mut self.stack) {
            Ok(end) if element.compact => end,
            _ => return 0,
        };
        self.element_start(true);
        self.values += element.values;
        self.out.extend_from_slice(&s[..end]);
        self.value_done();
        end
    }

    pub(super) fn key_start(&mut self) {
        let depth = self.frames.len();
        let f = self.frames.last_mut().expect("keys are in objects");
        f.count += 1;
        let count = f.count;
        if self.skip.is_none() && count > MEMBERS as u64 {
            self.skip = Some(depth);
        }
        if self.writing() && count > 1 {
            self.out.push(b',');
        }
        self.string_start(true);
        self.st = St::Str;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values in the reduced copy of `line` fed in `chunk`-byte pieces, before it finishes.
    fn values(line: &[u8], chunk: usize) -> usize {
        let mut r = Reducer::new(200);
        for piece in line.chunks(chunk) {
            r.feed(piece);
        }
        assert!(r.failure().is_none());
        r.values
    }

    #[test]
    fn small_elements_read_in_one_go_count_their_values() {
        let element = r#"{"a":[1,{"b":null}],"c":"x"}"#;
        for n in [3, 200, 300, 1000] {
            let line = format!("[{}]", vec![element; n].join(","));
            assert_eq!(
                values(line.as_bytes(), 1),
                values(line.as_bytes(), 1 << 20),
                "{n}"
            );
        }
    }
}
