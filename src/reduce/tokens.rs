//! The push tokenizer: the JSON grammar one byte at a time, resumable at any piece boundary,
//! with what is whole in the piece read in one go (containers, see `whole.rs`; short strings;
//! numbers).

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
            // An array element or a member's value (never the line itself).
            (St::Value | St::ValueOrClose, b'{' | b'[') if !self.frames.is_empty() => {
                match self.whole_value(s) {
                    0 => self.value_start(b),
                    n => return n,
                }
            }
            // An element past the first `ENDS` of an array, not a container.
            (St::Value | St::ValueOrClose, _) if self.in_back() => match self.scalar_run(s) {
                0 => self.value_start(b),
                n => return n,
            },
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
                if self.frames.len() == self.frames.capacity() {
                    // Doubling, but not past MAX_DEPTH frames (the doubling held 8 MiB for 6.4).
                    let more = self.frames.len().max(4).min(MAX_DEPTH - self.frames.len());
                    self.frames.reserve_exact(more);
                }
                let Ok(out_start) = u32::try_from(self.out.len()) else {
                    self.fail(Failure::TooBig);
                    return;
                };
                self.frames.push(Frame {
                    object,
                    out_start,
                    in_start: self.pos,
                    count: 0,
                    back: Backs::default(),
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
    pub(super) fn element_start(&mut self, writing: bool) {
        if let Some(f) = self.frames.last_mut()
            && !f.object
        {
            f.count += 1;
            if writing {
                if f.count > 1 {
                    self.out.push(b',');
                }
                if f.count > ENDS as u64 {
                    f.back.push(Back {
                        at: self.out.len(),
                        values: self.values,
                        raw: false,
                    });
                }
            }
        }
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
