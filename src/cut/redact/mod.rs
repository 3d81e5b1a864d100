//! `--redact`: secrets in the log become `[REDACTED:kind]` (or `[REDACTED:env:NAME]`) before
//! the line is cut. Standard output is never touched.
//!
//! Three ways to find one, all in one pass over the line:
//! - by value ([`values`]): the exact bytes of the secrets in smart-tee's environment (and a
//!   dotenv file), as written or JSON-escaped, one multi-literal automaton;
//! - by pattern ([`patterns`]): tokens by their shape (`sk-ant-…`, `ghp_…`, …);
//! - by name: a value assigned to a name that ends in `password`, `token`, `api_key`, …, and
//!   the password of a URL (`scheme://user:password@host`).
//!
//! The patterns run on the line as written, so inside JSON strings quotes appear as `\"`; no
//! pattern's secret part matches `"` or `\`, so a replacement never breaks a string or an
//! escape. A line with escapes that hide characters (`gh\u0070_…`) is also searched as its
//! [`hidden`] shadow, where they are read; a private key whose block is not whole in its string
//! is a rule over the hits ([`Redactor::key_parts`], `cut.rs`), and one written over several
//! lines of text a state per stream ([`KeyLines`]). Where a pattern names the secret (`password=…`, `Bearer …`), the name is kept and only
//! the value replaced.
//!
//! A line is not run through the patterns: a filter of their first three bytes
//! ([`crate::line::strings::Trigrams`], sixty-four positions at a time) rules out most lines at
//! once; the others are searched, at memchr-like speed, for the literals every secret starts
//! with ([`patterns::TOKEN_STARTS`], [`patterns::WORD_STARTS`], `://`, `:AA`), and a pattern is
//! matched, anchored, only where one of them shows.
//!
//! For a line over the budget the engine searches only what its log line keeps, with
//! [`Redactor::finds`] and the text [`Redactor::around_cut`] each cut point, and redacts the
//! whole line only when something shows. Everything else that leaves smart-tee (stderr, the
//! read side's answers) passes [`crate::door`], with a redactor built from the same secrets.

mod cut;
mod hidden;
mod patterns;
mod scout;
mod values;

#[cfg(test)]
mod table;
#[cfg(test)]
mod tests;

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use regex::bytes::Regex;
use regex_automata::{Anchored, Input, meta};

use crate::line::strings::Trigrams;
use cut::MAX_RUN;
pub use cut::{KEY_LINES, KeyLines, KeyMarks, PART, around_cut, is_json_line, text_line_decides};
pub use patterns::PATTERNS;
use patterns::{
    ASSIGNED_VALUE, OTHER_STARTS, SECRET_WORDS, TELEGRAM, TOKEN_STARTS, URL_CREDENTIALS,
    WORD_STARTS, may_start_a_secret, name_goes_on,
};
pub use scout::{Pace, Scouted};
use values::ValueSet;
pub use values::{
    MIN_VALUE_LEN, Secret, from_dotenv, from_env, looks_generated, plainly_not_secret, says_secret,
    secrets_of,
};

/// Whether `line[..at]` ends with a JSON escape (`\n`, `\t`, `\r`, `\b`, `\f`, `\uXXXX`) or a
/// terminal's escape sequence ([`after_ansi`]): the text has a character between words there,
/// though the byte before `at` is a letter or a digit. A `\uXXXX` of a letter counts too, so a
/// token after it is redacted, never left.
fn after_escape(line: &[u8], at: usize) -> bool {
    after_json_escape(line, at) || after_ansi(line, at)
}

/// Whether `line[..at]` ends with a terminal's escape sequence: an escape (`ESC`, as written
/// or JSON-escaped `\u001b`; or the 8-bit CSI, `0x9B`, U+009B, `\u009b`), maybe one byte that
/// opens a longer sequence (`[`, `O`, `P`, …), parameter and intermediate bytes, and a final
/// byte: colours (`ESC[31m`, `\u001b[1;32m`), `ESC7` and `ESC8` of progress bars, `ESC(B`.
/// Coloured output puts one right before a word, and its final byte (the `m` of a colour) is
/// a letter or a digit. A run of parameters longer than [`MAX_RUN`] is not looked through.
fn after_ansi(line: &[u8], at: usize) -> bool {
    let Some(last) = at.checked_sub(1) else {
        return false;
    };
    if !(0x30..=0x7E).contains(&line[last]) {
        return false;
    }
    let params = line[..last]
        .iter()
        .rev()
        .take(MAX_RUN)
        .take_while(|&&b| (0x20..=0x3F).contains(&b))
        .count();
    let before = &line[..last - params];
    // A control character, as written (`raw`, also the last byte of its UTF-8 form) or as a
    // JSON `\uXXXX` escape (after a backslash: maybe an escaped one, in JSON inside JSON).
    let control = |text: &[u8], raw: u8, hex: &[u8; 2]| {
        let json = |esc: [u8; 5]| text.ends_with(&esc) && text[..text.len() - 5].ends_with(b"\\");
        let [h, l] = *hex;
        text.ends_with(&[raw])
            || json([b'u', b'0', b'0', h, l])
            || json([b'u', b'0', b'0', h, l.to_ascii_uppercase()])
    };
    // A binary line is logged as its strings, each gap a U+FFFD (`cut/record/binary.rs`):
    // there the escape of `ESC[31m` is one, and may stand for it.
    let escape = |text: &[u8]| {
        control(text, 0x1B, b"1b") || text.ends_with("\u{FFFD}".as_bytes()) || {
            let lower = text
                .len()
                .checked_sub(6)
                .map(|s| text[s..].to_ascii_lowercase());
            lower.is_some_and(|l| l == b"\\ufffd")
        }
    };
    let opened = before
        .split_last()
        .is_some_and(|(&b, rest)| (0x40..=0x5F).contains(&b) && escape(rest));
    opened || escape(before) || control(before, 0x9B, b"9b")
}

fn after_json_escape(line: &[u8], at: usize) -> bool {
    let escaping = |slash: usize| {
        line[..=slash]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count()
            % 2
            == 1
    };
    let letter =
        at >= 2 && matches!(line[at - 1], b'n' | b't' | b'r' | b'b' | b'f') && escaping(at - 2);
    let unicode = at >= 6
        && line[at - 4..at].iter().all(u8::is_ascii_hexdigit)
        && line[at - 5] == b'u'
        && escaping(at - 6);
    letter || unicode
}

/// Values after a secret's name that are not secrets: counts, flags, empties, masks
/// (`********`) and references to a secret kept elsewhere (`${DB_PASSWORD}`, `{{ … }}`,
/// `<YOUR_API_KEY>`, `$TOKEN`, `%TOKEN%`).
fn is_placeholder(value: &[u8]) -> bool {
    let reference = |v: &[u8]| {
        v.len() > 1
            && v[1..]
                .iter()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
    };
    value.iter().all(u8::is_ascii_digit)
        || value.iter().all(|b| matches!(b, b'*' | b'x' | b'X' | b'.'))
        || [&b"${"[..], b"{{", b"$(", b"<", b"%"]
            .iter()
            .any(|w| value.starts_with(w))
        || (value[0] == b'$' && reference(value))
        || [
            &b"null"[..],
            b"none",
            b"true",
            b"false",
            b"undefined",
            b"[redacted",
            b"[truncated",
        ]
        .iter()
        .any(|w| value.len() >= w.len() && value[..w.len()].eq_ignore_ascii_case(w))
}

/// A name, `:` and words, as in a prompt or in docs (`Password: Enter the password for…`,
/// `password: (enter it when asked)`): the value after a `:` is letters only, maybe after an
/// opening parenthesis, and another word follows it.
fn is_prose(line: &[u8], name_end: usize, v_start: usize, v_end: usize) -> bool {
    let value = &line[v_start..v_end];
    let word = value.strip_prefix(b"(").unwrap_or(value);
    line[name_end..v_start].contains(&b':')
        && !word.is_empty()
        && word.iter().all(u8::is_ascii_alphabetic)
        && line.get(v_end) == Some(&b' ')
        && line.get(v_end + 1).is_some_and(u8::is_ascii_alphabetic)
}

/// Compiles a built-in pattern without Unicode: `\\b` and the classes are ASCII, which keeps the
/// matcher on its fast DFA over any input (a Unicode `\\b` makes it fall back to a slow engine
/// at the first non-ASCII byte).
fn ascii(pattern: &str) -> Regex {
    Regex::new(&format!("(?-u){pattern}"))
        .unwrap_or_else(|e| panic!("bad built-in pattern {pattern}: {e}"))
}

/// Compiles `pattern` for anchored matches at a position of a line, as [`ascii`] does for a
/// search: ASCII classes and `\b`, any byte matched. A `\b` at the position looks at the byte
/// before it, which a match on the line's tail from there would not see.
fn anchored(pattern: &str) -> meta::Regex {
    meta::Builder::new()
        .syntax(
            regex_automata::util::syntax::Config::new()
                .unicode(false)
                .utf8(false),
        )
        // Only anchored searches run: no literal prefilter (its build was half the start-up).
        .configure(
            meta::Config::new()
                .utf8_empty(false)
                .auto_prefilter(false)
                .which_captures(regex_automata::nfa::thompson::WhichCaptures::Implicit),
        )
        .build(pattern)
        .unwrap_or_else(|e| panic!("bad built-in pattern {pattern}: {e}"))
}

/// The compiled patterns.
pub struct Redactor {
    /// [`TOKEN_STARTS`], then `://`.
    token_starts: AhoCorasick,
    /// [`WORD_STARTS`].
    word_starts: AhoCorasick,
    /// The first three bytes of every literal of both sets: a line it rules out is not
    /// searched for them (none under `SMART_TEE_REDACT_SKIP=trigrams`, [`skipped`]).
    starts: Option<Trigrams>,
    /// All token patterns as one alternation, matched where a `Token` literal starts.
    any: meta::Regex,
    /// Each token pattern on its own, to tell which one matched: compiled at the first secret
    /// (a third of the start-up time of `--redact`, on a stream that may have none).
    each: OnceLock<Vec<Regex>>,
    /// By [`WORD_STARTS`] index, the [`SECRET_WORDS`] that start with it, longest first.
    words: Vec<Vec<&'static [u8]>>,
    value: Regex,
    url: Regex,
    /// The rest of a Telegram bot token after its `:`.
    telegram: Regex,
    /// The secrets to find by value, if any.
    values: Option<ValueSet>,
}

/// One secret found: the bytes `start..end` of the line, of which `start..name_end` (its name)
/// and `after..end` are kept.
#[derive(Clone, Copy)]
struct Hit {
    start: usize,
    name_end: usize,
    after: usize,
    end: usize,
    label: Label,
    /// What found it; of two hits over the same bytes, the one found by the earlier rule
    /// is replaced.
    by: Rule,
}

/// The rules that find secrets, in the order they win a tie.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rule {
    Value,
    Token,
    Assignment,
    Url,
}

/// What a secret is replaced by: `[REDACTED:kind]`, or `[REDACTED:env:NAME]` for a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Label {
    Kind(&'static str),
    /// The index of the secret in the [`ValueSet`].
    Value(u32),
}

/// The filters in front of aho-corasick's own search that a benchmark may switch off, to
/// weigh what each buys (`SMART_TEE_REDACT_SKIP=trigrams,grams,scout`, read once; see
/// docs/performance.md): `trigrams`, the start literals' filter; `grams`, the values' filter
/// (the values are then searched by one automaton over the whole line); `scout`, the reading
/// thread's look ahead ([`Scouted`]). What is found is the same either way.
pub fn skipped(filter: &str) -> bool {
    static SKIP: OnceLock<String> = OnceLock::new();
    SKIP.get_or_init(|| std::env::var("SMART_TEE_REDACT_SKIP").unwrap_or_default())
        .split(',')
        .any(|f| f.trim() == filter)
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor::new()
    }
}

impl Redactor {
    /// The patterns, without secrets to find by value.
    pub fn new() -> Redactor {
        Redactor::with_secrets(&[])
    }

    /// The patterns and the values of `secrets`.
    pub fn with_secrets(secrets: &[Secret]) -> Redactor {
        let joined: Vec<String> = PATTERNS.iter().map(|(_, p)| format!("(?:{p})")).collect();
        let literals = |set: &[&str]| {
            // A search runs the literal searcher; its automaton only confirms what that finds,
            // and a DFA took as long to build as all the regexes.
            AhoCorasick::builder()
                .kind(Some(AhoCorasickKind::ContiguousNFA))
                .match_kind(MatchKind::LeftmostFirst)
                .build(set)
                .expect("the start literals are few and short")
        };
        let every_start: Vec<&[u8]> = [TOKEN_STARTS, OTHER_STARTS, WORD_STARTS]
            .concat()
            .iter()
            .map(|l| l.as_bytes())
            .collect();
        Redactor {
            starts: (!skipped("trigrams"))
                .then(|| Trigrams::with_check(&every_start, may_start_a_secret)),
            token_starts: literals(&[TOKEN_STARTS, OTHER_STARTS].concat()),
            word_starts: literals(WORD_STARTS),
            any: anchored(&joined.join("|")),
            each: OnceLock::new(),
            words: WORD_STARTS
                .iter()
                .map(|start| {
                    let mut words: Vec<&[u8]> = (SECRET_WORDS.iter())
                        .filter(|w| w.starts_with(start))
                        .map(|w| w.as_bytes())
                        .collect();
                    words.sort_by_key(|w| std::cmp::Reverse(w.len()));
                    words
                })
                .collect(),
            value: ascii(ASSIGNED_VALUE),
            url: ascii(URL_CREDENTIALS),
            telegram: ascii(TELEGRAM),
            values: ValueSet::new(secrets),
        }
    }

    fn each(&self) -> &[Regex] {
        self.each
            .get_or_init(|| PATTERNS.iter().map(|(_, p)| ascii(p)).collect())
    }

    /// The kind of a token pattern that matches all of `value`, if any.
    fn kind_of(&self, value: &[u8]) -> Option<&'static str> {
        self.each()
            .iter()
            .zip(PATTERNS)
            .find_map(|(re, (kind, _))| {
                re.find(value)
                    .filter(|m| m.start() == 0 && m.end() == value.len())
                    .map(|_| *kind)
            })
    }

    /// The token pattern that matched `start..end` of `line`, with its kept name and suffix.
    fn token_hit(&self, line: &[u8], start: usize, end: usize) -> Hit {
        let found = &line[start..end];
        let (kind, name_end, after) = self
            .each()
            .iter()
            .zip(PATTERNS)
            .find_map(|(re, (kind, _))| {
                let c = re.captures(found)?;
                let whole = c.get(0)?;
                (whole.start() == 0 && whole.end() == found.len()).then(|| {
                    let name_end = c.get(1).map_or(0, |g| g.end());
                    let after = c.get(2).map_or(found.len(), |g| g.start());
                    (*kind, name_end, after)
                })
            })
            .unwrap_or(("secret", 0, found.len()));
        Hit {
            start,
            name_end: start + name_end,
            after: start + after,
            end,
            label: Label::Kind(kind),
            by: Rule::Token,
        }
    }

    /// An assignment around the secret word at `w_start..w_end`: a name that ends with the word
    /// (any prefix of letters, digits, `_`, `.`, `-`), then `=` or `:` and a value that is not
    /// a count, a flag or empty.
    fn assignment_at(&self, line: &[u8], w_start: usize, w_end: usize) -> Option<Hit> {
        if line.get(w_end).is_some_and(|&b| name_goes_on(b)) {
            return None; // `tokens`, `token_count`: the name goes on
        }
        let c = self.value.captures(&line[w_end..])?;
        let value = c.get(1)?;
        let (v_start, v_end) = (w_end + value.start(), w_end + value.end());
        if is_placeholder(&line[v_start..v_end]) || is_prose(line, w_end, v_start, v_end) {
            return None;
        }
        let name = |b: u8| name_goes_on(b) || b == b'.' || b == b'-';
        let start = line[..w_start]
            .iter()
            .rposition(|&b| !name(b))
            .map_or(0, |p| p + 1);
        let kind = self.kind_of(&line[v_start..v_end]).unwrap_or("assignment");
        Some(Hit {
            start,
            name_end: v_start,
            after: v_end,
            end: v_end,
            label: Label::Kind(kind),
            by: Rule::Assignment,
        })
    }

    /// URL credentials after the `://` (`sep` bytes, or `:\/\/`) at `at`:
    /// `scheme://user:password@`, the password replaced.
    fn url_at(&self, line: &[u8], at: usize, sep: usize) -> Option<Hit> {
        let scheme = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-');
        let start = line[..at]
            .iter()
            .rposition(|&b| !scheme(b))
            .map_or(0, |p| p + 1);
        // After an escape sequence (`\x1b[1mhttps://…`, `\x1b7https://…`), its parameters and
        // final byte are no part of the scheme: it starts after the last place in its first
        // bytes where one ends.
        let start = (start + 1..at.min(start + 64))
            .rev()
            .find(|&p| after_ansi(line, p))
            .unwrap_or(start);
        if start == at || !line[start].is_ascii_alphabetic() {
            return None;
        }
        let rest = at + sep;
        let c = self.url.captures(&line[rest..])?;
        let secret = c.get(1)?;
        Some(Hit {
            start,
            name_end: rest + secret.start(),
            after: rest + secret.end(),
            end: rest + secret.end() + 1,
            label: Label::Kind("url_credentials"),
            by: Rule::Url,
        })
    }

    /// A Telegram bot token around the `:AA` at `at`: 8 to 10 digits, a word boundary or `bot`
    /// before them, then [`TELEGRAM`].
    fn telegram_at(&self, line: &[u8], at: usize) -> Option<Hit> {
        let run = line[..at]
            .iter()
            .rev()
            .take(11)
            .take_while(|b| b.is_ascii_digit())
            .count();
        let word = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
        // After a word boundary, a JSON escape (`\n`), or in a Bot API URL (`/bot123…:AA…`).
        let bounded = |start: usize| {
            start == 0
                || !word(&line[start - 1])
                || after_escape(line, start)
                || line[..start].ends_with(b"bot")
        };
        // The whole run of digits, or a shorter one after an escape sequence that ends in a
        // digit (`\x1b7`, a progress bar's).
        let start = (8..=run.min(10))
            .rev()
            .map(|digits| at - digits)
            .find(|&start| {
                if start == at - run {
                    bounded(start)
                } else {
                    after_escape(line, start)
                }
            })?;
        let m = self.telegram.find(&line[at + 1..])?;
        let end = at + 1 + m.end();
        // The token goes on as a word: it is not one.
        if word(&line[end - 1]) && line.get(end).is_some_and(word) {
            return None;
        }
        Some(Hit {
            start,
            name_end: start,
            after: end,
            end,
            label: Label::Kind("telegram_bot_token"),
            by: Rule::Token,
        })
    }

    /// Calls `found` with each secret in `line` and each `PRIVATE KEY` header or footer (as
    /// `None`) until it returns true; returns whether it did. As with a search of each
    /// alternation from the end of its last match, the token patterns' matches do not overlap
    /// one another, nor do the words'.
    fn each_hit(&self, line: &[u8], mut found: impl FnMut(Option<Hit>) -> bool) -> bool {
        if self.each_hit_written(line, &mut found) {
            return true;
        }
        match hidden::Shadow::of(line) {
            None => false,
            Some(shadow) => self.each_hit_written(&shadow.text, |hit| {
                found(hit.map(|h| Hit {
                    start: shadow.raw(line, h.start),
                    name_end: shadow.raw(line, h.name_end),
                    after: shadow.raw(line, h.after),
                    end: shadow.raw(line, h.end),
                    ..h
                }))
            }),
        }
    }

    /// [`Redactor::each_hit`] on a line without escapes that hide a character.
    fn each_hit_written(&self, line: &[u8], mut found: impl FnMut(Option<Hit>) -> bool) -> bool {
        if let Some(values) = &self.values {
            let hit = |start, end, k| Hit {
                start,
                name_end: start,
                after: end,
                end,
                label: Label::Value(k),
                by: Rule::Value,
            };
            if values.each(line, |start, end, k| found(Some(hit(start, end, k)))) {
                return true;
            }
        }
        // Most lines hold none of the literals a secret starts with: one look rules them out.
        if self.starts.as_ref().is_some_and(|s| s.rules_out(line)) {
            return false;
        }
        let (url, telegram, url_escaped) = (
            TOKEN_STARTS.len(),
            TOKEN_STARTS.len() + 1,
            TOKEN_STARTS.len() + 2,
        );
        // The patterns start with `\b`. After a JSON escape (`\n`, `\t`, `\u00e9`) the byte
        // before is a letter or a digit, but the text has a boundary there: the match starts
        // the haystack then, with nothing before it.
        let token_at = |at: usize| {
            let from = if after_escape(line, at) { at } else { 0 };
            let input = Input::new(&line[from..])
                .range(at - from..)
                .anchored(Anchored::Yes);
            self.any.find(input).map(|m| from + m.end())
        };
        let (mut from, mut token_end) = (0, 0);
        while let Some(m) = self
            .token_starts
            .find(aho_corasick::Input::new(line).range(from..))
        {
            let at = m.start();
            from = at + 1;
            let kind = m.pattern().as_usize();
            let hit = if kind == url || kind == url_escaped {
                self.url_at(line, at, m.len())
            } else if kind == telegram {
                self.telegram_at(line, at)
            } else if at < token_end {
                None
            } else {
                token_at(at).map(|end| {
                    token_end = end;
                    self.token_hit(line, at, end)
                })
            };
            if hit.is_some_and(|h| found(Some(h))) {
                return true;
            }
        }
        let mut from = 0;
        while let Some(m) = self
            .word_starts
            .find(aho_corasick::Input::new(line).range(from..))
        {
            let at = m.start();
            if line[at..].starts_with(b"PRIVATE KEY") && found(None) {
                return true;
            }
            from = at + 1;
            let words = &self.words[m.pattern().as_usize()];
            if let Some(w) = words.iter().find(|w| line[at..].starts_with(w)) {
                from = at + w.len();
                if let Some(h) = self.assignment_at(line, at, from)
                    && found(Some(h))
                {
                    return true;
                }
            }
        }
        false
    }

    /// The secrets in `line`, ordered by position.
    fn hits(&self, line: &[u8]) -> Vec<Hit> {
        let mut hits = Vec::new();
        let mut key = false;
        self.each_hit(line, |hit| {
            key |= hit.is_none();
            hits.extend(hit);
            false
        });
        if key {
            // A `PRIVATE KEY` header or footer: a key whose block is not whole here.
            let parts = self.key_parts(line, &hits);
            hits.extend(parts);
        }
        hits.sort_by_key(|h| (h.start, std::cmp::Reverse(h.end), h.by));
        hits
    }

    /// True when the filters alone tell that `line` holds no secret, without a search: then
    /// [`Redactor::finds`] is false, and [`Redactor::redact`] leaves it alone.
    pub fn rules_out(&self, line: &[u8]) -> bool {
        self.values.as_ref().is_none_or(|v| v.rules_out(line))
            && self.starts.as_ref().is_some_and(|s| s.rules_out(line))
            && !hidden::hides(line)
    }

    /// True when `text` may hold a secret or a part of one: a secret, or a private key's
    /// `PRIVATE KEY` header or footer (whose body may run on past what `text` holds).
    pub fn finds(&self, text: &[u8]) -> bool {
        self.each_hit(text, |_| true)
    }

    /// Writes `line` with its secrets replaced into `out` and returns true, or returns false
    /// (leaving `out` alone) when there is nothing to redact.
    pub fn redact(&self, line: &[u8], out: &mut Vec<u8>) -> bool {
        self.redact_with(line, out, false)
    }

    /// [`Redactor::redact`], each replacement padded with spaces to the length of what it
    /// replaced, so that no part of `line` moves left: for a line reduced while read, whose
    /// strings join their first and last bytes where the reduction cut them. Shorter, the
    /// joined string let the cut of the log line keep bytes from both sides of the join as if
    /// they were one text, a secret cut there among them (#49's attack).
    pub fn redact_padded(&self, line: &[u8], out: &mut Vec<u8>) -> bool {
        self.redact_with(line, out, true)
    }

    fn redact_with(&self, line: &[u8], out: &mut Vec<u8>, pad: bool) -> bool {
        let hits = self.hits(line);
        if hits.is_empty() {
            return false;
        }
        let spaces = |out: &mut Vec<u8>, n: usize| {
            if pad {
                out.resize(out.len() + n, b' ');
            }
        };
        out.clear();
        // Room at once, not by doubling (an 8 MiB line took 16 MiB): for the bytes kept (a
        // secret running to the end of a long line leaves little), and for labels longer than
        // what they replace. Padded, nothing is taken out.
        let (mut taken, mut end) = (0, 0);
        for h in hits.iter().filter(|_| !pad) {
            let from = if h.start < end { end } else { h.name_end };
            let to = if h.start < end { h.end } else { h.after };
            taken += to.saturating_sub(from);
            end = end.max(h.end);
        }
        out.reserve_exact(line.len() - taken.min(line.len()) + 64 * hits.len());
        let mut last = 0;
        for h in hits {
            if h.start < last {
                // Inside a secret already replaced; what it covers past that goes too.
                spaces(out, h.end.saturating_sub(last));
                last = last.max(h.end);
                continue;
            }
            out.extend_from_slice(&line[last..h.name_end]);
            let label = out.len();
            out.extend_from_slice(b"[REDACTED:");
            match h.label {
                Label::Kind(kind) => out.extend_from_slice(kind.as_bytes()),
                Label::Value(k) => {
                    let name = self.values.as_ref().map_or("", |v| v.name(k));
                    out.extend_from_slice(b"env:");
                    out.extend_from_slice(name.as_bytes());
                }
            }
            out.push(b']');
            spaces(
                out,
                (h.after - h.name_end).saturating_sub(out.len() - label),
            );
            out.extend_from_slice(&line[h.after..h.end]);
            last = h.end;
        }
        out.extend_from_slice(&line[last..]);
        true
    }
}
