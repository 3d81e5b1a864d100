//! `--redact`: secrets in the log become `[REDACTED:kind]` before the line is cut. Standard
//! output is never touched.
//!
//! The patterns run on the line as written, so inside JSON strings quotes appear as `\"`; no
//! pattern's secret part matches `"` or `\`, so a replacement never breaks a string or an
//! escape. Where a pattern names the secret (`password=…`, `Bearer …`), the name is kept and only
//! the value replaced.
//!
//! A line is not run through the patterns: it is searched, at memchr-like speed, for the
//! literals every secret starts with ([`TOKEN_STARTS`], [`WORD_STARTS`], `://`), and a pattern
//! is matched, anchored, only where one of them shows.
//!
//! For a line over the budget the engine searches only what its log line keeps, with
//! [`Redactor::finds`] and the text [`around_cut`] each cut point, and redacts the whole line
//! only when something shows.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use regex::bytes::Regex;
use regex_automata::{Anchored, Input, meta};

/// `(kind, pattern)`. A pattern's first capture group, when it has one, is kept: it is the name
/// in front of the secret. Its second group, when it matches, is kept too: what follows the
/// secret (the `@host` of a URL).
pub const PATTERNS: &[(&str, &str)] = &[
    (
        "private_key",
        r"-----BEGIN[A-Z ]*PRIVATE KEY-----.*?-----END[A-Z ]*PRIVATE KEY-----",
    ),
    ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    (
        "openai_key",
        r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
    ),
    ("stripe_key", r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}\b"),
    ("aws_access_key_id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    (
        "aws_secret_key",
        r#"((?:aws_secret_access_key|AWS_SECRET_ACCESS_KEY)(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?)[A-Za-z0-9/+]{40}\b"#,
    ),
    (
        "github_token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
    ),
    ("gitlab_token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
    ("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    (
        "jwt",
        r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
    ),
    (
        "bearer_token",
        r"(\b(?:Bearer|bearer|BEARER)\s+)[A-Za-z0-9._~+/-]{16,}=*",
    ),
];

/// The words a secret's name ends in (`DB_PASSWORD`, `OPENAI_API_KEY`, `GH_TOKEN`,
/// `client_secret`, `"apiKey"`): lower case, UPPER case, Capitalized and camelCase, as plain
/// literals (a case-insensitive set ran five times slower); the rest of an assignment is checked
/// around each one found. Where two start at the same byte, the longer is the name's end
/// (`secretKey`, not `secret`).
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "secret_key",
    "secret-key",
    "secretkey",
    "secret",
    "token",
    "api_key",
    "api-key",
    "apikey",
    "access_key",
    "access-key",
    "accesskey",
    "private_key",
    "private-key",
    "privatekey",
    "credentials",
    "credential", //
    "PASSWORD",
    "PASSWD",
    "SECRET_KEY",
    "SECRET-KEY",
    "SECRETKEY",
    "SECRET",
    "TOKEN",
    "API_KEY",
    "API-KEY",
    "APIKEY",
    "ACCESS_KEY",
    "ACCESS-KEY",
    "ACCESSKEY",
    "PRIVATE_KEY",
    "PRIVATE-KEY",
    "PRIVATEKEY",
    "CREDENTIALS",
    "CREDENTIAL", //
    "Password",
    "Passwd",
    "Secret_Key",
    "Secret-Key",
    "SecretKey",
    "secretKey",
    "Secret",
    "Token",
    "Api_Key",
    "Api-Key",
    "ApiKey",
    "apiKey",
    "Access_Key",
    "Access-Key",
    "AccessKey",
    "accessKey",
    "Private_Key",
    "Private-Key",
    "PrivateKey",
    "privateKey",
    "Credentials",
    "Credential",
];

/// What every match of a [`PATTERNS`] pattern starts with (a test checks it against the
/// literals the regex parser extracts from them). One search for these and `://` found them in
/// 30% less time than the alternation's own search for its literals did.
const TOKEN_STARTS: &[&str] = &[
    "-----BEGIN",
    "sk-",
    "sk_",
    "rk_",
    "AIza",
    "npm_",
    "hf_",
    "AKIA",
    "ASIA",
    "aws_secret",
    "AWS_SECRET",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xox",
    "eyJ",
    "Bearer",
    "bearer",
    "BEARER",
];

/// What every [`SECRET_WORDS`] word starts with, in a set of its own: the literal searcher is
/// at its fastest with at most 32 literals (one set of both ran a third slower than two); four
/// bytes each, not `api`, keep it so. Where one shows, the words that start with it are compared
/// there, the longest first.
const WORD_STARTS: &[&str] = &[
    "passw",
    "PASSW",
    "Passw",
    "secret",
    "SECRET",
    "Secret",
    "token",
    "TOKEN",
    "Token",
    "api_",
    "api-",
    "apik",
    "apiK",
    "API_",
    "API-",
    "APIK",
    "Api_",
    "Api-",
    "ApiK",
    "access",
    "ACCESS",
    "Access",
    "private",
    "PRIVATE",
    "Private",
    "credential",
    "CREDENTIAL",
    "Credential",
];

/// What may follow a secret's name: a quote, `=` or `:`, a quote, then the value.
const ASSIGNED_VALUE: &str = r#"^(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?([^\s"'\\&,;]{4,})"#;

/// What follows `://` in a URL with credentials: the user and `:` (kept), the password (the
/// secret), `@`. Checked at each `://`: a pattern starting with the scheme would have no literal
/// to look for.
const URL_CREDENTIALS: &str = r#"^[^\s:/@"'\\]+:([^\s:/@"'\\]+)@"#;

/// The bytes no secret has in it (but a private key, found by its header): ASCII whitespace,
/// quotes and the backslash of JSON escapes. A secret that shows in part around a cut point is
/// inside the run of other bytes there.
fn ends_run(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C | b'"' | b'\'' | b'\\'
    )
}

/// The longest run around a cut point that [`around_cut`] searches; a longer one is not taken
/// apart.
const MAX_RUN: usize = 4096;
/// Bytes searched on each side of the run: room for a secret's name (`password = `,
/// `Bearer `), and for a private key's header or footer cut in two.
const NAME_ROOM: usize = 128;

/// What to search for a secret cut in two at position `at` of `text`: the run of bytes that
/// are not [`ends_run`] around it, with [`NAME_ROOM`] bytes on each side. `None` when the run is
/// longer than [`MAX_RUN`] on either side.
pub fn around_cut(text: &[u8], at: usize) -> Option<std::ops::Range<usize>> {
    let before = text[..at]
        .iter()
        .rev()
        .take(MAX_RUN + 1)
        .position(|&b| ends_run(b));
    let after = text[at..]
        .iter()
        .take(MAX_RUN + 1)
        .position(|&b| ends_run(b));
    let start = match before {
        Some(k) => at - k,
        None if at <= MAX_RUN => 0,
        None => return None,
    };
    let end = match after {
        Some(k) => at + k,
        None if text.len() - at <= MAX_RUN => text.len(),
        None => return None,
    };
    Some(start.saturating_sub(NAME_ROOM)..(end + NAME_ROOM).min(text.len()))
}

/// Values after a secret's name that are not secrets: counts, flags and empties.
fn is_placeholder(value: &[u8]) -> bool {
    value.iter().all(u8::is_ascii_digit)
        || [
            &b"null"[..],
            b"none",
            b"true",
            b"false",
            b"undefined",
            b"[redacted",
        ]
        .iter()
        .any(|w| value.len() >= w.len() && value[..w.len()].eq_ignore_ascii_case(w))
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
    /// All token patterns as one alternation, matched where a `Token` literal starts.
    any: meta::Regex,
    /// Each token pattern on its own, to tell which one matched: compiled at the first secret
    /// (a third of the start-up time of `--redact`, on a stream that may have none).
    each: OnceLock<Vec<Regex>>,
    /// By [`WORD_STARTS`] index, the [`SECRET_WORDS`] that start with it, longest first.
    words: Vec<Vec<&'static [u8]>>,
    value: Regex,
    url: Regex,
}

/// One secret found: the bytes `start..end` of the line, of which `start..name_end` (its name)
/// and `after..end` are kept.
#[derive(Clone, Copy)]
struct Hit {
    start: usize,
    name_end: usize,
    after: usize,
    end: usize,
    kind: &'static str,
    /// What found it; of two hits over the same bytes, the one found by the earlier rule
    /// is replaced.
    by: Rule,
}

/// The rules that find secrets, in the order they win a tie.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rule {
    Token,
    Assignment,
    Url,
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor::new()
    }
}

impl Redactor {
    pub fn new() -> Redactor {
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
        Redactor {
            token_starts: literals(&[TOKEN_STARTS, &["://"]].concat()),
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
            kind,
            by: Rule::Token,
        }
    }

    /// An assignment around the secret word at `w_start..w_end`: a name that ends with the word
    /// (any prefix of letters, digits, `_`, `.`, `-`), then `=` or `:` and a value that is not
    /// a count, a flag or empty.
    fn assignment_at(&self, line: &[u8], w_start: usize, w_end: usize) -> Option<Hit> {
        let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        if line.get(w_end).is_some_and(|&b| word(b)) {
            return None; // `tokens`, `token_count`: the name goes on
        }
        let c = self.value.captures(&line[w_end..])?;
        let value = c.get(1)?;
        let (v_start, v_end) = (w_end + value.start(), w_end + value.end());
        if is_placeholder(&line[v_start..v_end]) {
            return None;
        }
        let name = |b: u8| word(b) || b == b'.' || b == b'-';
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
            kind,
            by: Rule::Assignment,
        })
    }

    /// URL credentials after the `://` at `at`: `scheme://user:password@`, the password replaced.
    fn url_at(&self, line: &[u8], at: usize) -> Option<Hit> {
        let scheme = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-');
        let start = line[..at]
            .iter()
            .rposition(|&b| !scheme(b))
            .map_or(0, |p| p + 1);
        if start == at || !line[start].is_ascii_alphabetic() {
            return None;
        }
        let rest = at + 3;
        let c = self.url.captures(&line[rest..])?;
        let secret = c.get(1)?;
        Some(Hit {
            start,
            name_end: rest + secret.start(),
            after: rest + secret.end(),
            end: rest + secret.end() + 1,
            kind: "url_credentials",
            by: Rule::Url,
        })
    }

    /// Calls `found` with each secret in `line` and each `PRIVATE KEY` header or footer (as
    /// `None`) until it returns true; returns whether it did. As with a search of each
    /// alternation from the end of its last match, the token patterns' matches do not overlap
    /// one another, nor do the words'.
    fn each_hit(&self, line: &[u8], mut found: impl FnMut(Option<Hit>) -> bool) -> bool {
        let url = TOKEN_STARTS.len();
        let at_start = |at: usize| Input::new(line).range(at..).anchored(Anchored::Yes);
        let (mut from, mut token_end) = (0, 0);
        while let Some(m) = self
            .token_starts
            .find(aho_corasick::Input::new(line).range(from..))
        {
            let at = m.start();
            from = at + 1;
            let hit = if m.pattern().as_usize() == url {
                self.url_at(line, at)
            } else if at < token_end {
                None
            } else {
                self.any.find(at_start(at)).map(|t| {
                    token_end = t.end();
                    self.token_hit(line, at, t.end())
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
        self.each_hit(line, |hit| {
            hits.extend(hit);
            false
        });
        hits.sort_by_key(|h| (h.start, std::cmp::Reverse(h.end), h.by));
        hits
    }

    /// True when `text` may hold a secret or a part of one: a secret, or a private key's
    /// `PRIVATE KEY` header or footer (whose body may run on past what `text` holds).
    pub fn finds(&self, text: &[u8]) -> bool {
        self.each_hit(text, |_| true)
    }

    /// Writes `line` with its secrets replaced into `out` and returns true, or returns false
    /// (leaving `out` alone) when there is nothing to redact.
    pub fn redact(&self, line: &[u8], out: &mut Vec<u8>) -> bool {
        let hits = self.hits(line);
        if hits.is_empty() {
            return false;
        }
        out.clear();
        let mut last = 0;
        for h in hits {
            if h.start < last {
                continue; // inside a secret already replaced
            }
            out.extend_from_slice(&line[last..h.name_end]);
            out.extend_from_slice(b"[REDACTED:");
            out.extend_from_slice(h.kind.as_bytes());
            out.push(b']');
            out.extend_from_slice(&line[h.after..h.end]);
            last = h.end;
        }
        out.extend_from_slice(&line[last..]);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redacted(s: &str) -> String {
        let mut out = Vec::new();
        if Redactor::new().redact(s.as_bytes(), &mut out) {
            String::from_utf8(out).unwrap()
        } else {
            s.to_string()
        }
    }

    #[test]
    fn one_case_per_kind() {
        for (input, want) in [
            (
                r#"key \"-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAK\n-----END RSA PRIVATE KEY-----\" end"#,
                r#"key \"[REDACTED:private_key]\" end"#,
            ),
            (
                "export ANTHROPIC_API_KEY=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv_wx",
                "export ANTHROPIC_API_KEY=[REDACTED:anthropic_key]",
            ),
            (
                "key sk-proj-AbCdEfGhIjKlMnOpQrStUvWx12 ok",
                "key [REDACTED:openai_key] ok",
            ),
            (
                "id AKIAIOSFODNN7EXAMPLE here",
                "id [REDACTED:aws_access_key_id] here",
            ),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "aws_secret_access_key = [REDACTED:aws_secret_key]",
            ),
            (
                "push ghp_0123456789abcdefghijABCDEFGHIJ012345 x",
                "push [REDACTED:github_token] x",
            ),
            ("glpat-AbCdEfGhIjKlMnOpQrSt1", "[REDACTED:gitlab_token]"),
            ("xoxb-1234567890-abcdefghij", "[REDACTED:slack_token]"),
            (
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "[REDACTED:jwt]",
            ),
            (
                "Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123",
                "Authorization: Bearer [REDACTED:bearer_token]",
            ),
            (
                "db password=hunter22 next",
                "db password=[REDACTED:assignment] next",
            ),
            (
                r#"{\"token\": \"abc123def\"}"#,
                r#"{\"token\": \"[REDACTED:assignment]\"}"#,
            ),
            (
                r#"{"token":"abc123def","n":1}"#,
                r#"{"token":"[REDACTED:assignment]","n":1}"#,
            ),
        ] {
            assert_eq!(redacted(input), want, "{input}");
        }
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        let b64: String = (0..3000)
            .map(|i| b"iVBORw0KGgoAAAANSUhEUgAA+/9z"[i % 28] as char)
            .collect();
        for input in [
            "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            "uuid 8463c716-a2ea-4c14-9efa-87158ebd9f20 commit 0511dee9e6f1d0c598230bf5c61202eee5198bf8",
            b64.as_str(),
            r#"{"input_tokens":10,"max_tokens":4096,"token_count":3,"is_error":false}"#,
            "the password field is required; see docs for the token format",
            "risk-management and task-ant-colony are words",
        ] {
            assert_eq!(redacted(input), input);
        }
    }

    /// Realistic fake secrets, as they show up in agent streams (env dumps, config files, tool
    /// output, JSON), each with the text that must be gone after redaction.
    const SECRETS: &[(&str, &str)] = &[
        ("DB_PASSWORD=Tr0ub4dor-3xyz", "Tr0ub4dor-3xyz"),
        (
            "OPENAI_API_KEY=not-a-prefix-abc123XYZ789",
            "not-a-prefix-abc123XYZ789",
        ),
        (
            "export GH_TOKEN=a1b2c3d4e5f6g7h8i9j0",
            "a1b2c3d4e5f6g7h8i9j0",
        ),
        ("MY_SECRET=correct-horse-battery", "correct-horse-battery"),
        (
            "client_secret=GOCSPX-abcdefghijklmnop",
            "GOCSPX-abcdefghijklmnop",
        ),
        (r#"{"apiKey": "AbC123dEf456GhI789"}"#, "AbC123dEf456GhI789"),
        (
            r#"{\"apiKey\":\"AbC123dEf456GhI789\"}"#,
            "AbC123dEf456GhI789",
        ),
        ("api_key: 9a8b7c6d5e4f3a2b", "9a8b7c6d5e4f3a2b"),
        ("SLACK_BOT_TOKEN=plain-value-123456", "plain-value-123456"),
        ("refresh_token=1//0gAbCdEfGhIjK", "1//0gAbCdEfGhIjK"),
        (
            "AWS_ACCESS_KEY=ZXCVBNMASDFGHJKL1234",
            "ZXCVBNMASDFGHJKL1234",
        ),
        (
            "secret_key = 'django-insecure-x7k2m9p4'",
            "django-insecure-x7k2m9p4",
        ),
        ("Password: hunter2hunter2", "hunter2hunter2"),
        ("postgres://admin:s3cret@db.internal:5432/app", "s3cret"),
        ("https://user:p4ssw0rd@github.com/org/repo.git", "p4ssw0rd"),
        ("redis://default:Zm9vYmFy@cache:6379", "Zm9vYmFy"),
        (
            "stripe sk_live_51HaBcDeFgHiJkLmNoPqRsTu",
            "sk_live_51HaBcDeFgHiJkLmNoPqRsTu",
        ),
        (
            "rk_live_51HaBcDeFgHiJkLmNoPqRsTu",
            "rk_live_51HaBcDeFgHiJkLmNoPqRsTu",
        ),
        (
            "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
            "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
        ),
        (
            "key=AIzaSyA-1234567890abcdefghijklmnopqrstu",
            "AIzaSyA-1234567890abcdefghijklmnopqrstu",
        ),
        (
            "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789",
            "npm_abcdefghijklmnopqrstuvwxyz0123456789",
        ),
        (
            "HF hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
            "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
        ),
        (
            "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv_wx-yz",
            "AbCdEfGhIjKlMnOpQrStUv",
        ),
        (
            "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx12",
            "AbCdEfGhIjKlMnOpQrStUvWx12",
        ),
        ("AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
        (
            "ghp_0123456789abcdefghijABCDEFGHIJ012345",
            "0123456789abcdefghij",
        ),
        (
            "Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123",
            "abcdefghijklmnopqrstuvwxyz0123",
        ),
    ];

    /// Text that looks like a secret and is not: it must come through unchanged.
    const LOOK_ALIKES: &[&str] = &[
        "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "uuid 8463c716-a2ea-4c14-9efa-87158ebd9f20",
        "commit 0511dee9e6f1d0c598230bf5c61202eee5198bf8",
        r#"{"input_tokens":10,"max_tokens":4096,"output_tokens":123456}"#,
        "tokens_used: 123",
        r#"{"token_count":3,"is_error":false}"#,
        r#""cache_read_input_tokens": 20480"#,
        "the password field is required; see docs for the token format",
        "PWD=/home/agent/project",
        "password: null",
        "TOKEN_LIMIT=8192",
        "secret: true",
        "risk-management and task-ant-colony are words",
        "https://github.com/org/repo.git",
        "git@github.com:org/repo.git",
        "ssh://git@host:22/repo",
        "user@example.com wrote: hello",
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
        "skills_and_tools, sk-short, npm_install, hf_hub",
        "the tokenizer: bpe",
        r#"{"type":"tool_use","name":"Read","input":{"file_path":"/src/secret_handler.rs"}}"#,
    ];

    #[test]
    fn realistic_secrets_are_caught() {
        let missed: Vec<&str> = SECRETS
            .iter()
            .filter(|(input, secret)| {
                let out = redacted(input);
                out.contains(secret) || !out.contains("[REDACTED:")
            })
            .map(|(input, _)| *input)
            .collect();
        assert!(
            missed.is_empty(),
            "missed {} of {}: {missed:?}",
            missed.len(),
            SECRETS.len()
        );
    }

    #[test]
    fn look_alikes_are_left_alone() {
        let flagged: Vec<(&str, String)> = LOOK_ALIKES
            .iter()
            .map(|s| (*s, redacted(s)))
            .filter(|(s, out)| s != out)
            .collect();
        assert!(
            flagged.is_empty(),
            "{} false positives: {flagged:?}",
            flagged.len()
        );
    }

    /// Found by the search of start literals, whose URLs came before the assignments: a name
    /// and a URL over the same bytes are replaced as the assignment, as they always were.
    #[test]
    fn a_url_and_an_assignment_over_the_same_bytes_redact_as_the_assignment() {
        assert_eq!(
            redacted("password://admin:s3cret@"),
            "password:[REDACTED:assignment]"
        );
    }

    #[test]
    fn url_credentials_keep_the_user_and_host() {
        assert_eq!(
            redacted("postgres://admin:s3cret@db:5432/app"),
            "postgres://admin:[REDACTED:url_credentials]@db:5432/app"
        );
    }

    /// The prefix literals of `pattern` as the regex parser extracts them, or `None` when a
    /// match may start with any of too many strings to list.
    fn prefixes(pattern: &str) -> Option<Vec<Vec<u8>>> {
        use regex_syntax::hir::literal::{ExtractKind, Extractor};
        let hir = regex_syntax::ParserBuilder::new()
            .unicode(false)
            .utf8(false)
            .build()
            .parse(pattern)
            .unwrap();
        let seq = Extractor::new().kind(ExtractKind::Prefix).extract(&hir);
        let literals = seq.literals()?;
        Some(literals.iter().map(|l| l.as_bytes().to_vec()).collect())
    }

    fn starts_with_one(literal: &[u8], starts: &[&str]) -> bool {
        starts.iter().any(|s| literal.starts_with(s.as_bytes()))
    }

    #[test]
    fn every_pattern_starts_with_a_token_start() {
        for (kind, pattern) in PATTERNS {
            let literals = prefixes(pattern).unwrap_or_else(|| panic!("{kind}: no prefixes"));
            assert!(!literals.is_empty(), "{kind}");
            for literal in literals {
                assert!(
                    starts_with_one(&literal, TOKEN_STARTS),
                    "{kind}: a match may start with {:?}, which no TOKEN_STARTS begins",
                    String::from_utf8_lossy(&literal)
                );
            }
        }
    }

    #[test]
    fn every_word_starts_with_a_word_start() {
        for word in SECRET_WORDS {
            assert!(
                starts_with_one(word.as_bytes(), WORD_STARTS),
                "the word {word:?} starts with no WORD_STARTS"
            );
        }
    }

    /// The words as they were written before, as one pattern; the list must say the same.
    #[test]
    fn the_words_are_the_ones_the_pattern_had() {
        let old = concat!(
            r"password|passwd|secret[_-]?key|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?|",
            r"PASSWORD|PASSWD|SECRET[_-]?KEY|SECRET|TOKEN|API[_-]?KEY|APIKEY|ACCESS[_-]?KEY|PRIVATE[_-]?KEY|CREDENTIALS?|",
            r"Password|Passwd|Secret[_-]?Key|secretKey|Secret|Token|Api[_-]?Key|apiKey|Access[_-]?Key|accessKey|Private[_-]?Key|privateKey|Credentials?",
        );
        let mut old: Vec<Vec<u8>> = prefixes(old).expect("the words are literals");
        let mut new: Vec<Vec<u8>> = SECRET_WORDS.iter().map(|w| w.as_bytes().to_vec()).collect();
        old.sort();
        old.dedup();
        new.sort();
        assert_eq!(new, old);
    }

    /// The pattern listed `secretKey` after `secret`, which matched first: the name
    /// `secretKey` went on with `Key` and its value was logged.
    #[test]
    fn a_camel_case_secret_key_is_redacted() {
        assert_eq!(
            redacted("secretKey=abcd1234xyz"),
            "secretKey=[REDACTED:assignment]"
        );
    }

    /// The search this one replaced, kept as the oracle: each alternation run over the whole
    /// line, from the end of its last match, and every `://` (the words as one alternation,
    /// the longest first).
    fn reference_hits(line: &[u8]) -> Vec<(usize, usize, usize, usize, &'static str)> {
        static REFERENCE: OnceLock<(Redactor, Regex, Regex)> = OnceLock::new();
        let (r, any, words) = REFERENCE.get_or_init(|| {
            let joined: Vec<String> = PATTERNS.iter().map(|(_, p)| format!("(?:{p})")).collect();
            let mut longest_first = SECRET_WORDS.to_vec();
            longest_first.sort_by_key(|w| std::cmp::Reverse(w.len()));
            let words = ascii(&longest_first.join("|"));
            (Redactor::new(), ascii(&joined.join("|")), words)
        });
        let mut hits: Vec<Hit> = any
            .find_iter(line)
            .map(|m| r.token_hit(line, m.start(), m.end()))
            .collect();
        for m in words.find_iter(line) {
            hits.extend(r.assignment_at(line, m.start(), m.end()));
        }
        for at in memchr::memmem::find_iter(line, b"://") {
            hits.extend(r.url_at(line, at));
        }
        hits.sort_by_key(|h| (h.start, std::cmp::Reverse(h.end)));
        hits.iter()
            .map(|h| (h.start, h.name_end, h.after, h.end, h.kind))
            .collect()
    }

    /// Pieces of text that start, end, hide or imitate secrets, for lines made of them.
    const PIECES: &[&str] = &[
        "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv_wx",
        "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx12",
        "sk-",
        "task-",
        "sk_live_51HaBcDeFgHiJkLmNoPqRsTu",
        "rk_test_",
        "AKIAIOSFODNN7EXAMPLE",
        "ASIA",
        "AIzaSyA-1234567890abcdefghijklmnopqrstu",
        "npm_abcdefghijklmnopqrstuvwxyz0123456789",
        "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
        "ghp_0123456789abcdefghijABCDEFGHIJ012345",
        "github_pat_11ABCDEFG0123456789_abcdefghij",
        "glpat-AbCdEfGhIjKlMnOpQrSt1",
        "xoxb-1234567890-abcdefghij",
        "xox",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
        "eyJ",
        "Bearer ",
        "bearer\t",
        "abcdefghijklmnopqrstuvwxyz0123",
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----END RSA PRIVATE KEY-----",
        "PRIVATE KEY",
        "aws_secret_access_key",
        "AWS_SECRET_ACCESS_KEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "password",
        "PASSWD",
        "Password",
        "secret",
        "secret_key",
        "SECRET-KEY",
        "secretKey",
        "token",
        "tokens",
        "TOKEN",
        "Token",
        "api_key",
        "apikey",
        "apiKey",
        "API-KEY",
        "Api",
        "access_key",
        "accessKey",
        "private-key",
        "privateKey",
        "credentials",
        "Credential",
        "=",
        ": ",
        "\\\"",
        "\"",
        "'",
        " ",
        ",",
        "\n",
        "://",
        "postgres",
        "admin:s3cret@",
        "db:5432/app",
        "hunter22",
        "null",
        "12345",
        "x",
        "_",
        "-",
    ];

    static REDACTOR: OnceLock<Redactor> = OnceLock::new();

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

        /// One search of start literals then anchored matches finds exactly what a search of
        /// each whole alternation found.
        #[test]
        fn the_literal_search_finds_what_the_alternations_found(
            picks in proptest::collection::vec(0..PIECES.len(), 0..24),
        ) {
            let line: Vec<u8> = picks.iter().flat_map(|&i| PIECES[i].bytes()).collect();
            let r = REDACTOR.get_or_init(Redactor::new);
            let got: Vec<_> = r
                .hits(&line)
                .iter()
                .map(|h| (h.start, h.name_end, h.after, h.end, h.kind))
                .collect();
            let want = reference_hits(&line);
            proptest::prop_assert_eq!(&got, &want, "{}", String::from_utf8_lossy(&line));
            let header = memchr::memmem::find(&line, b"PRIVATE KEY").is_some();
            proptest::prop_assert_eq!(r.finds(&line), header || !want.is_empty());
        }
    }
}
