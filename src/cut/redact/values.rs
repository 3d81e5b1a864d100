//! `--redact` by value: the secrets smart-tee's own environment holds (and those of a dotenv
//! file, `--redact-values`), found wherever their exact bytes show, as written or JSON-escaped.
//!
//! A variable is taken when its name says it holds a secret ([`says_secret`]) and its value
//! could be one ([`plainly_not_secret`]). A value is never printed: [`Secret`]'s `Debug` shows
//! the name only, and errors name the file and the line.

use std::fmt;
use std::path::Path;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

/// The fewest bytes a value must have to be taken: shorter ones would match ordinary text.
pub const MIN_VALUE_LEN: usize = 8;

/// A secret to redact by value, and the name of the variable that held it.
#[derive(Clone)]
pub struct Secret {
    name: String,
    value: Vec<u8>,
}

impl Secret {
    /// A secret named `name`; in the label, bytes of the name other than letters, digits, `_`,
    /// `.` and `-` become `_` (the label is written inside JSON strings).
    pub fn new(name: &str, value: &[u8]) -> Secret {
        let name = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        Secret {
            name,
            value: value.to_vec(),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret({}, {} bytes)", self.name, self.value.len())
    }
}

/// The words that make a variable's name say it holds a secret, anywhere in it; each may be
/// plural, and must not go on with a letter (`TOKENIZER`, `MAX_TOKENS_USED` are not secrets).
const NAME_WORDS: &[&str] = &["PASSWORD", "PASSWD", "SECRET", "TOKEN", "CREDENTIAL"];

/// Whether a variable named `name` holds a secret: its name contains PASSWORD, PASSWD, SECRET,
/// TOKEN or CREDENTIAL, or ends in KEY (`OPENAI_API_KEY`, `AZURE_STORAGE_KEY`, `apikey`), in
/// any case.
pub fn says_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    let upper = upper.as_bytes();
    if upper.ends_with(b"KEY") {
        return true;
    }
    NAME_WORDS.iter().any(|word| {
        memchr::memmem::find_iter(upper, word.as_bytes()).any(|at| {
            let mut end = at + word.len();
            if upper.get(end) == Some(&b'S') {
                end += 1;
            }
            !upper.get(end).is_some_and(u8::is_ascii_alphabetic)
        })
    })
}

/// Values that are plainly not secrets, whatever their variable's name: shorter than
/// [`MIN_VALUE_LEN`], flags (`true`, `disabled`), numbers, versions and times (`4096`,
/// `1.2.3`, `10:30`), and paths (`/home/…`, `./…`, `~/…`, `C:\…`).
pub fn plainly_not_secret(value: &[u8]) -> bool {
    let v = value.trim_ascii();
    let word = |w: &[u8]| v.eq_ignore_ascii_case(w);
    v.len() < MIN_VALUE_LEN
        || [
            &b"true"[..],
            b"false",
            b"enabled",
            b"disabled",
            b"undefined",
            b"required",
            b"optional",
        ]
        .iter()
        .any(|w| word(w))
        || v.iter()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b',' | b':' | b'_' | b'+' | b'-'))
        || v.starts_with(b"/")
        || v.starts_with(b"./")
        || v.starts_with(b"../")
        || v.starts_with(b"~/")
        || (v.len() > 2 && v[0].is_ascii_alphabetic() && v[1] == b':' && v[2] == b'\\')
}

/// The secrets among `vars` (name, value): the values of the variables [`says_secret`] names
/// and [`plainly_not_secret`] does not rule out.
pub fn secrets_of<N, V>(vars: impl IntoIterator<Item = (N, V)>) -> Vec<Secret>
where
    N: AsRef<std::ffi::OsStr>,
    V: AsRef<std::ffi::OsStr>,
{
    use std::os::unix::ffi::OsStrExt;
    vars.into_iter()
        .filter_map(|(name, value)| {
            let name = name.as_ref().to_string_lossy();
            let value = value.as_ref().as_bytes();
            (says_secret(&name) && !plainly_not_secret(value)).then(|| Secret::new(&name, value))
        })
        .collect()
}

/// Whether a value has the shape of a generated key, whatever its variable's name: 16 bytes or
/// more, no space, not a path or a URL, and either upper case, lower case and digits mixed
/// (`Vx93kq2LmPz81Rtw`, `sk_live_51Hx…`) or 32 hex digits or more (a 40-character key). Taken
/// from a `--redact-values` file only: a dotenv file names the secrets the user chose to hide,
/// where the environment holds `LS_COLORS` and build ids. Ordinary settings stay (`8080`,
/// `production`, `true`, `/usr/local/bin`, `https://example.com`, `my-app-2024`).
pub fn looks_generated(value: &[u8]) -> bool {
    let v = value.trim_ascii();
    let has = |f: fn(&u8) -> bool| v.iter().any(f);
    v.len() >= 16
        && !v.iter().any(u8::is_ascii_whitespace)
        && memchr::memmem::find(v, b"://").is_none()
        && !plainly_not_secret(v)
        && ((has(u8::is_ascii_uppercase) && has(u8::is_ascii_lowercase) && has(u8::is_ascii_digit))
            || (v.len() >= 32 && v.iter().all(u8::is_ascii_hexdigit)))
}

/// The secrets of smart-tee's own environment.
pub fn from_env() -> Vec<Secret> {
    secrets_of(std::env::vars_os())
}

/// The secrets of the dotenv file at `path`: those the environment's rules take, and every
/// value with a key's shape whatever its name ([`looks_generated`]). The error names the file
/// and the line, never a value.
pub fn from_dotenv(path: &Path) -> Result<Vec<Secret>, String> {
    let text = std::fs::read(path).map_err(|e| format!("reading {:?}: {e}", path.display()))?;
    let vars = parse_dotenv(&text).map_err(|line| {
        format!(
            "{:?} line {line}: expected NAME=VALUE (a name of letters, digits and _, then =)",
            path.display()
        )
    })?;
    // A value whose name says nothing is taken when it has a key's shape (looks_generated).
    Ok(vars
        .iter()
        .filter_map(|(name, value)| {
            let name = String::from_utf8_lossy(name);
            let taken =
                (says_secret(&name) && !plainly_not_secret(value)) || looks_generated(value);
            taken.then(|| Secret::new(&name, value))
        })
        .collect())
}

/// A variable's name and value, as bytes.
pub type Variable = (Vec<u8>, Vec<u8>);

/// The `NAME=VALUE` pairs of a dotenv file: blank lines and `#` comments skipped, `export `
/// allowed before the name; a value in single quotes is taken as it is, one in double quotes
/// with `\n`, `\"` and `\\` read as escapes (and may go on over lines); an unquoted value ends
/// at ` #`. Returns the number of the first line that is none of these.
pub fn parse_dotenv(text: &[u8]) -> Result<Vec<Variable>, usize> {
    let mut vars = Vec::new();
    let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    let mut i = 0;
    while i < lines.len() {
        let number = i + 1;
        let line = lines[i].trim_ascii();
        i += 1;
        if line.is_empty() || line.starts_with(b"#") {
            continue;
        }
        let line = line
            .strip_prefix(b"export ")
            .unwrap_or(line)
            .trim_ascii_start();
        let eq = memchr::memchr(b'=', line).ok_or(number)?;
        let name = line[..eq].trim_ascii();
        let is_name = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-');
        if name.is_empty() || !name.iter().all(is_name) || name[0].is_ascii_digit() {
            return Err(number);
        }
        let rest = line[eq + 1..].trim_ascii_start();
        let value = match rest.first() {
            Some(b'\'') => match memchr::memchr(b'\'', &rest[1..]) {
                Some(end) => rest[1..1 + end].to_vec(),
                None => return Err(number),
            },
            Some(b'"') => {
                // Until the closing quote, over lines if need be.
                let mut value = Vec::new();
                let mut text = rest[1..].to_vec();
                loop {
                    let mut closed = false;
                    let mut k = 0;
                    while k < text.len() {
                        match text[k] {
                            b'\\' if k + 1 < text.len() => {
                                value.push(match text[k + 1] {
                                    b'n' => b'\n',
                                    b'r' => b'\r',
                                    b't' => b'\t',
                                    other => other,
                                });
                                k += 2;
                            }
                            b'"' => {
                                closed = true;
                                break;
                            }
                            b => {
                                value.push(b);
                                k += 1;
                            }
                        }
                    }
                    if closed {
                        break;
                    }
                    let Some(next) = lines.get(i) else {
                        return Err(number);
                    };
                    value.push(b'\n');
                    text = next.strip_suffix(b"\r").unwrap_or(next).to_vec();
                    i += 1;
                }
                value
            }
            _ => {
                let end = memchr::memmem::find(rest, b" #").unwrap_or(rest.len());
                rest[..end].trim_ascii_end().to_vec()
            }
        };
        vars.push((name.to_vec(), value));
    }
    Ok(vars)
}

/// Writes `v` as it reads inside a JSON string: `"`, `\` and control bytes escaped (the
/// short escapes where JSON has one), optionally `/` as `\/` and non-ASCII as `\uXXXX`.
fn json_escaped(v: &[u8], slash: bool, ascii: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() + 8);
    let unicode = |c: u32, out: &mut Vec<u8>| {
        out.extend_from_slice(format!("\\u{c:04x}").as_bytes());
    };
    let text = if ascii {
        std::str::from_utf8(v).ok()
    } else {
        None
    };
    match text {
        Some(s) => {
            for c in s.chars() {
                if c.is_ascii() {
                    escape_byte(c as u8, slash, &mut out);
                } else {
                    let mut units = [0u16; 2];
                    for u in c.encode_utf16(&mut units) {
                        unicode(u32::from(*u), &mut out);
                    }
                }
            }
        }
        None => {
            for &b in v {
                escape_byte(b, slash, &mut out);
            }
        }
    }
    out
}

fn escape_byte(b: u8, slash: bool, out: &mut Vec<u8>) {
    match b {
        b'"' => out.extend_from_slice(b"\\\""),
        b'\\' => out.extend_from_slice(b"\\\\"),
        b'/' if slash => out.extend_from_slice(b"\\/"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        b'\t' => out.extend_from_slice(b"\\t"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x0C => out.extend_from_slice(b"\\f"),
        0..0x20 | 0x7F => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
        _ => out.push(b),
    }
}

/// The forms in which `value` may show in a log: as written, JSON-escaped (with `/` as `\/`
/// too, and non-ASCII as `\uXXXX`, as some encoders write them), and escaped twice (a JSON
/// string inside a JSON string, or a `non_json` record of a JSON line). No duplicates.
pub(super) fn forms(value: &[u8]) -> Vec<Vec<u8>> {
    let once = json_escaped(value, false, false);
    let mut forms = vec![
        value.to_vec(),
        json_escaped(value, true, false),
        json_escaped(value, false, true),
        json_escaped(&once, false, false),
        once,
    ];
    forms.sort();
    forms.dedup();
    forms
}

/// All the forms of all the secrets, as one automaton; each match says whose value it is.
/// Lines are not run through the automaton: a filter of four-byte grams ([`Grams`]) finds
/// where a value may start, and the automaton runs on a window there.
pub(super) struct ValueSet {
    grams: Grams,
    searcher: AhoCorasick,
    /// Under `SMART_TEE_REDACT_SKIP=grams` ([`super::skipped`]): the values as one automaton
    /// run over the whole text, with no gram filter in front.
    whole: Option<AhoCorasick>,
    /// By pattern of the automaton, the index of its secret.
    owner: Vec<u32>,
    names: Vec<String>,
    /// The longest form's length.
    pub(super) longest: usize,
}

impl ValueSet {
    /// `None` when there is no secret to look for.
    pub(super) fn new(secrets: &[Secret]) -> Option<ValueSet> {
        let mut patterns = Vec::new();
        let mut owner = Vec::new();
        let mut names = Vec::new();
        for (k, s) in secrets.iter().enumerate() {
            for form in forms(&s.value) {
                patterns.push(form);
                owner.push(k as u32);
            }
            names.push(s.name.clone());
        }
        if patterns.is_empty() {
            return None;
        }
        let longest = patterns.iter().map(Vec::len).max().unwrap_or(0);
        let grams = Grams::new(&patterns);
        // It runs only on windows the grams point to: a contiguous NFA, built in a fraction of
        // the time and memory of a DFA (which took 20-40 ms and 2 MiB for 100 secrets).
        let searcher = AhoCorasick::builder()
            .kind(Some(AhoCorasickKind::ContiguousNFA))
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)
            .ok()?;
        let whole = super::skipped("grams").then(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&patterns)
        });
        Some(ValueSet {
            grams,
            searcher,
            whole: whole.and_then(Result::ok),
            owner,
            names,
            longest,
        })
    }

    /// Calls `found(start, end, secret)` for each value in `text`, leftmost-longest, until it
    /// returns true; returns whether it did.
    pub(super) fn each(
        &self,
        text: &[u8],
        mut found: impl FnMut(usize, usize, u32) -> bool,
    ) -> bool {
        if let Some(whole) = &self.whole {
            return whole
                .find_iter(text)
                .any(|m| found(m.start(), m.end(), self.owner[m.pattern().as_usize()]));
        }
        let stride = self.grams.stride;
        let mut covered = 0;
        let mut q = 0;
        while let Some(at) = self.grams.next_hit(text, q) {
            // A value with this gram at `at` starts at most `stride - 1` bytes before.
            let from = (at + 1).saturating_sub(stride).max(covered);
            let to = (at + self.longest).min(text.len());
            if from < to {
                for m in self.searcher.find_iter(&text[from..to]) {
                    let (start, end) = (from + m.start(), from + m.end());
                    if found(start, end, self.owner[m.pattern().as_usize()]) {
                        return true;
                    }
                    covered = end;
                }
            }
            q = at + stride;
        }
        false
    }

    /// True when `text` holds none of the values (its grams rule them all out), without a
    /// search: what [`ValueSet::each`] would find nothing in.
    pub(super) fn rules_out(&self, text: &[u8]) -> bool {
        self.first(text).is_none()
    }

    /// Where in `text` the first value may be: a position that a value there would hold, its
    /// grams', or the start of the first value the automaton over the whole text finds. `None`
    /// where [`ValueSet::rules_out`] would rule out every line of `text`.
    pub(super) fn first(&self, text: &[u8]) -> Option<usize> {
        if let Some(whole) = &self.whole {
            return whole.find(text).map(|m| m.start());
        }
        self.grams.next_hit(text, 0)
    }

    /// The name of secret `k`.
    pub(super) fn name(&self, k: u32) -> &str {
        &self.names[k as usize]
    }
}

/// Where a value may show, at one position in `stride`: every value of `n >= stride + 3` bytes
/// that shows at `p` holds the four bytes at the first multiple of `stride` at or after `p`,
/// at one of its offsets `0..stride`; those grams of every form are kept, in a bitmap (one
/// bit per hash, in the L1 cache) and, to rule out the bitmap's false hits, exactly.
struct Grams {
    stride: usize,
    /// One bit per hash (a fixed size: looked up without a bounds check).
    bits: Box<[u64; 1 << (GRAM_BITS - 6)]>,
    /// Open addressing by hash: gram + 1 (0 is an empty slot), as u64.
    exact: Vec<u64>,
}

const GRAM_BITS: u32 = 16;

fn gram_hash(g: u32) -> u32 {
    g.wrapping_mul(0x9E37_79B1)
}

impl Grams {
    fn new(forms: &[Vec<u8>]) -> Grams {
        let shortest = forms.iter().map(Vec::len).min().unwrap_or(MIN_VALUE_LEN);
        let stride = shortest.saturating_sub(3).clamp(1, 16);
        let mut grams: Vec<u32> = forms
            .iter()
            .flat_map(|f| {
                (0..stride).filter_map(move |o| {
                    f.get(o..o + 4)
                        .map(|g| u32::from_le_bytes([g[0], g[1], g[2], g[3]]))
                })
            })
            .collect();
        grams.sort_unstable();
        grams.dedup();
        let slots = (grams.len() * 4).next_power_of_two().max(64);
        let mut g = Grams {
            stride,
            bits: Box::new([0; 1 << (GRAM_BITS - 6)]),
            exact: vec![0; slots],
        };
        for gram in grams {
            let h = gram_hash(gram);
            let bit = (h >> (32 - GRAM_BITS)) as usize;
            g.bits[bit / 64] |= 1 << (bit % 64);
            let mut slot = h as usize & (slots - 1);
            while g.exact[slot] != 0 {
                slot = (slot + 1) & (slots - 1);
            }
            g.exact[slot] = u64::from(gram) + 1;
        }
        g
    }

    /// The first position from `q` on, one in `stride` (`q`, `q + stride`, …), whose gram is
    /// one of the values'.
    #[inline]
    fn next_hit(&self, text: &[u8], mut q: usize) -> Option<usize> {
        let stride = self.stride;
        loop {
            // Four positions a step while the bitmap rules them all out, as it does almost
            // everywhere: one branch for four look-ups.
            while let Some(run) = text.get(q..q + 3 * stride + 4)
                && self.none_of_four(run, stride)
            {
                q += 4 * stride;
            }
            let gram = text.get(q..).and_then(<[u8]>::first_chunk::<4>)?;
            if self.may_hold(u32::from_le_bytes(*gram)) {
                return Some(q);
            }
            q += stride;
        }
    }

    /// Whether the bitmap rules out the grams at `run[0]`, `run[stride]`, `run[2 * stride]` and
    /// `run[3 * stride]` (`run` holds the last one's four bytes).
    #[inline]
    fn none_of_four(&self, run: &[u8], stride: usize) -> bool {
        let bit = |at: usize| {
            let gram = run[at..at + 4]
                .first_chunk::<4>()
                .map_or(0, |g| u32::from_le_bytes(*g));
            let bit = (gram_hash(gram) >> (32 - GRAM_BITS)) as usize;
            self.bits[bit / 64] >> (bit % 64)
        };
        (bit(0) | bit(stride) | bit(2 * stride) | bit(3 * stride)) & 1 == 0
    }

    #[inline]
    fn may_hold(&self, gram: u32) -> bool {
        let h = gram_hash(gram);
        let bit = (h >> (32 - GRAM_BITS)) as usize;
        self.bits[bit / 64] & (1 << (bit % 64)) != 0 && self.holds(h, gram)
    }

    #[cold]
    fn holds(&self, h: u32, gram: u32) -> bool {
        let mask = self.exact.len() - 1;
        let mut slot = h as usize & mask;
        loop {
            match self.exact[slot] {
                0 => return false,
                s if s == u64::from(gram) + 1 => return true,
                _ => slot = (slot + 1) & mask,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_say_secret() {
        for name in [
            "DB_PASSWORD",
            "PGPASSWORD",
            "MYSQL_PASSWD",
            "CLIENT_SECRET",
            "AWS_SECRET_ACCESS_KEY",
            "GITHUB_TOKEN",
            "AWS_SESSION_TOKEN",
            "GOOGLE_CREDENTIALS",
            "OPENAI_API_KEY",
            "AZURE_STORAGE_KEY",
            "PRIVATE_KEY",
            "stripe_api_key",
            "apiKey",
            "Slack_Bot_Token",
            "TOKEN",
        ] {
            assert!(says_secret(name), "{name}");
        }
        for name in [
            "HOME",
            "PATH",
            "TOKENIZERS_PARALLELISM",
            "MAX_TOKENIZER_LEN",
            "KEYBOARD",
            "KEY_ID",
            "AWS_ACCESS_KEY_ID",
            "SECRETARY",
            "LANG",
        ] {
            assert!(!says_secret(name), "{name}");
        }
    }

    #[test]
    fn values_that_are_plainly_not_secret() {
        for v in [
            "true",
            "false",
            "DISABLED",
            "8192",
            "32000",
            "1.2.3-4",
            "10:30:00",
            "/home/agent",
            "./secrets.json",
            "~/.aws/credentials",
            "C:\\keys\\a.pem",
            "short",
            "  4096  ",
        ] {
            assert!(plainly_not_secret(v.as_bytes()), "{v}");
        }
        for v in [
            "hunter2hunter2",
            "sk-ant-api03-xyz",
            "correct horse battery",
            "Zm9vYmFyYmF6",
        ] {
            assert!(!plainly_not_secret(v.as_bytes()), "{v}");
        }
    }

    #[test]
    fn a_secret_shows_its_name_never_its_value() {
        let s = Secret::new("DB \"PASS\"WORD", b"hunter2hunter2");
        let shown = format!("{s:?}");
        assert!(
            shown.contains("DB__PASS_WORD") && !shown.contains("hunter2"),
            "{shown}"
        );
    }

    #[test]
    fn forms_cover_json_escapes() {
        let f = forms(b"a\"b/c\\d\xc3\xa9");
        let has = |s: &[u8]| f.iter().any(|x| x == s);
        assert!(has(b"a\"b/c\\d\xc3\xa9"));
        assert!(has(b"a\\\"b/c\\\\d\xc3\xa9"));
        assert!(has(b"a\\\"b\\/c\\\\d\xc3\xa9"));
        assert!(has(b"a\\\"b/c\\\\d\\u00e9"));
        assert!(has(b"a\\\\\\\"b/c\\\\\\\\d\xc3\xa9"));
        assert_eq!(forms(b"plainvalue123").len(), 1);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// The gram filter finds every value the automaton alone finds, at any offset.
        #[test]
        fn the_gram_filter_misses_no_value(
            pad in 0usize..40,
            picks in proptest::collection::vec(0usize..6, 0..12),
        ) {
            const PIECES: &[&str] = &["hunter2hunter2", "q\"uo/te", "abcdefgh", " ", "-value", "abcdefg"];
            let secrets = vec![
                Secret::new("A_TOKEN", b"hunter2hunter2"),
                Secret::new("B_TOKEN", b"q\"uo/te-value"),
                Secret::new("C_TOKEN", b"abcdefgh"),
            ];
            let set = ValueSet::new(&secrets).unwrap();
            let mut line = "-".repeat(pad).into_bytes();
            for &k in &picks {
                line.extend_from_slice(PIECES[k].as_bytes());
            }
            let mut got = Vec::new();
            set.each(&line, |s, e, k| { got.push((s, e, k)); false });
            let want: Vec<_> = set
                .searcher
                .find_iter(&line)
                .map(|m| (m.start(), m.end(), set.owner[m.pattern().as_usize()]))
                .collect();
            proptest::prop_assert_eq!(got, want);
        }
    }

    /// Values of 19 bytes and more are looked for 16 bytes apart, four looks a step: a value
    /// is found at every offset, up to the text's last byte.
    #[test]
    fn a_long_value_is_found_at_every_offset() {
        let value = b"sEcReT-vAlUe-0123456789";
        let set = ValueSet::new(&[Secret::new("LONG_TOKEN", value)]).unwrap();
        assert_eq!(set.grams.stride, 16);
        for at in 0..160 {
            for after in [0, 1, 7, 70] {
                let mut line = vec![b'-'; at];
                line.extend_from_slice(value);
                line.resize(line.len() + after, b'~');
                let mut got = Vec::new();
                set.each(&line, |s, e, _| {
                    got.push((s, e));
                    false
                });
                assert_eq!(got, [(at, at + value.len())], "at {at}, {after} after");
            }
        }
    }

    #[test]
    fn dotenv_lines() {
        let text = b"# comment\n\nexport DB_PASSWORD=hunter2hunter2 # inline\nAPI_KEY='single # kept'\nPRIVATE_KEY=\"-----BEGIN\nline2\\nline3\n-----END\"\nEMPTY=\n";
        let vars = parse_dotenv(text).unwrap();
        let get = |n: &str| {
            vars.iter()
                .find(|(k, _)| k == n.as_bytes())
                .map(|(_, v)| String::from_utf8(v.clone()).unwrap())
        };
        assert_eq!(get("DB_PASSWORD").as_deref(), Some("hunter2hunter2"));
        assert_eq!(get("API_KEY").as_deref(), Some("single # kept"));
        assert_eq!(
            get("PRIVATE_KEY").as_deref(),
            Some("-----BEGIN\nline2\nline3\n-----END")
        );
        assert_eq!(get("EMPTY").as_deref(), Some(""));
        assert_eq!(parse_dotenv(b"OK=1\nnot a pair\n"), Err(2));
        assert_eq!(parse_dotenv(b"A=\"never closed\n"), Err(1));
        assert_eq!(parse_dotenv(b"=value\n"), Err(1));
    }
}
