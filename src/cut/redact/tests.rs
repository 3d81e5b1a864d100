//! Unit tests of the search: one case per kind, and the literal search held against a search
//! of each whole pattern.

use super::patterns::URL_ESCAPED;
use super::*;

pub(super) fn redacted(s: &str) -> String {
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

/// Found by the search of start literals, whose URLs came before the assignments: a name
/// and a URL over the same bytes are replaced as the assignment, as they always were.
/// The filter is what keeps `--redact` cheap: lines of a chat with no literal a secret starts
/// with are ruled out by it, not searched (the `ass` of `assistant` passes the four-bit
/// look-ups, `asia` and `aws_` sharing a first byte, and must not pass the exact check; nor the
/// `passe` of `passed`).
#[test]
fn a_chat_line_without_a_secret_start_is_ruled_out_by_the_filter() {
    let r = Redactor::new();
    for line in [
        r#"{"type":"assistant","uuid":"00000001","message":{"content":[{"type":"text","text":"aaaaaaaaaaaaaaaa"}]}}"#,
        r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"src/main.rs\nsrc/lib.rs"}]}}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"The build is green; the tests ran in 2.1 s."}]}}"#,
        // `passed` starts as `passw` does, for four bytes.
        "test result: ok. 12 passed; 0 failed; finished in 0.52s",
        // `token` goes on as a name: the usage of nearly every line of an agent's stream.
        r#"{"type":"assistant","message":{"usage":{"input_tokens":3,"cache_read_input_tokens":13501,"output_tokens":1,"max_tokens":64000,"TOKENS":2}}}"#,
    ] {
        if cfg!(target_arch = "x86_64") && is_x86_feature_detected!("avx2") {
            assert!(
                r.starts.as_ref().unwrap().rules_out(line.as_bytes()),
                "{line}"
            );
        }
        assert!(
            r.starts.as_ref().unwrap().rules_out_slowly(line.as_bytes()),
            "{line}"
        );
    }
    // And a line with one is not, nor one with a secret word that ends its name.
    for line in [
        &br#"{"type":"user","content":"export GH=ghp_0123456789abcdefghijABCDEFGHIJ012345"}"#[..],
        br#"{"input_tokens":3,"token":"Zq9vX2mK7pL4wR8tY1uB"}"#,
        br#"{"input_tokens":3,"ACCESS_TOKEN=Zq9vX2mK7pL4wR8tY1uB"}"#,
        br#"{"input_tokens":3,"secret_key":"Zq9vX2mK7pL4wR8tY1uB"}"#,
        b"-----BEGIN RSA PRIVATE KEY-----",
    ] {
        assert!(!r.starts.as_ref().unwrap().rules_out(line), "{line:?}");
        assert!(
            !r.starts.as_ref().unwrap().rules_out_slowly(line),
            "{line:?}"
        );
    }
}

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
        r"password|passwd|secret[_-]?key|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?|storage[_-]?key|storagekey|",
        r"PASSWORD|PASSWD|SECRET[_-]?KEY|SECRET|TOKEN|API[_-]?KEY|APIKEY|ACCESS[_-]?KEY|PRIVATE[_-]?KEY|CREDENTIALS?|STORAGE[_-]?KEY|STORAGEKEY|",
        r"Password|Passwd|Secret[_-]?Key|secretKey|Secret|Token|Api[_-]?Key|apiKey|Access[_-]?Key|accessKey|Private[_-]?Key|privateKey|Credentials?|Storage[_-]?Key|storageKey",
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
fn reference_hits(line: &[u8]) -> Vec<(usize, usize, usize, usize, Label)> {
    static REFERENCE: OnceLock<(Redactor, Regex, Regex, Regex)> = OnceLock::new();
    let (r, any, words, telegram) = REFERENCE.get_or_init(|| {
        let joined: Vec<String> = PATTERNS.iter().map(|(_, p)| format!("(?:{p})")).collect();
        let mut longest_first = SECRET_WORDS.to_vec();
        longest_first.sort_by_key(|w| std::cmp::Reverse(w.len()));
        let words = ascii(&longest_first.join("|"));
        // A token ends in `-`, or in a word character that no other follows.
        let telegram = ascii(r"(?:\b|bot)[0-9]{8,10}:AA[A-Za-z0-9_-]{32}(?:-|[A-Za-z0-9_]\b)");
        (Redactor::new(), ascii(&joined.join("|")), words, telegram)
    });
    let mut hits: Vec<Hit> = any
        .find_iter(line)
        .map(|m| r.token_hit(line, m.start(), m.end()))
        .collect();
    for m in words.find_iter(line) {
        hits.extend(r.assignment_at(line, m.start(), m.end()));
    }
    for sep in ["://", URL_ESCAPED] {
        for at in memchr::memmem::find_iter(line, sep.as_bytes()) {
            hits.extend(r.url_at(line, at, sep.len()));
        }
    }
    for m in telegram.find_iter(line) {
        let colon = m.start() + memchr::memchr(b':', m.as_bytes()).unwrap_or(0);
        hits.extend(r.telegram_at(line, colon));
    }
    // Parts of keys are a rule over the hits, not a search: the same on both sides.
    if memchr::memmem::find(line, b"PRIVATE KEY").is_some() {
        let parts = r.key_parts(line, &hits);
        hits.extend(parts);
    }
    hits.sort_by_key(|h| (h.start, std::cmp::Reverse(h.end)));
    hits.iter()
        .map(|h| (h.start, h.name_end, h.after, h.end, h.label))
        .collect()
}

/// Pieces of text that start, end, hide or imitate secrets, for lines made of them.
const PIECES: &[&str] = &[
    "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv_wx",
    "123456789",
    ":AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1",
    ":AA",
    "sk-or-v1-",
    "whsec_",
    "AccountKey=",
    "sig=",
    "Bot ",
    "twilio_sid=",
    "SK0123456789abcdef0123456789abcdef",
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
            .map(|h| (h.start, h.name_end, h.after, h.end, h.label))
            .collect();
        let want = reference_hits(&line);
        proptest::prop_assert_eq!(&got, &want, "{}", String::from_utf8_lossy(&line));
        let header = memchr::memmem::find(&line, b"PRIVATE KEY").is_some();
        proptest::prop_assert_eq!(r.finds(&line), header || !want.is_empty());
    }
}

/// Found by attacking `--redact`: a pattern's `\b` saw the letter of a JSON escape before a
/// token (`\nghp_…`, the first line of a file in tool output) and matched nothing.
#[test]
fn a_token_after_a_json_escape_is_redacted() {
    for (input, want) in [
        (
            r#"{"a":"x\nghp_0123456789abcdefghijABCDEFGHIJ012345"}"#,
            r#"{"a":"x\n[REDACTED:github_token]"}"#,
        ),
        (
            r#"{"a":"key:\tsk-proj-AbCdEfGhIjKlMnOpQrStUvWx12"}"#,
            r#"{"a":"key:\t[REDACTED:openai_key]"}"#,
        ),
        (
            r#"{"a":"\u00e9sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv_wxyz1234"}"#,
            r#"{"a":"\u00e9[REDACTED:anthropic_key]"}"#,
        ),
        (
            r#"{"a":"out\r\nAKIAIOSFODNN7EXAMPLE\n"}"#,
            r#"{"a":"out\r\n[REDACTED:aws_access_key_id]\n"}"#,
        ),
        (
            r#"{"a":"ok\n7012345678:AAMpdV4rGMLEa5ttgD1FkajKqMW_U8c-YGs"}"#,
            r#"{"a":"ok\n[REDACTED:telegram_bot_token]"}"#,
        ),
    ] {
        assert_eq!(redacted(input), want);
    }
    // An escaped backslash, then a letter: a word goes on, as in plain text (`xnghp_…`).
    let word = r#"{"a":"x\\nghp_0123456789abcdefghijABCDEFGHIJ012345"}"#;
    assert_eq!(redacted(word), word);
}

/// Found by attacking `--redact`: in coloured output (`\x1b[31mghp_…`), the `m` that ends the
/// colour code stood before the token, and a pattern's `\b` matched nothing; a URL's scheme
/// took the colour's last bytes in, and did not start with a letter.
#[test]
fn a_token_right_after_a_colour_code_is_redacted() {
    let tokens = [
        (
            "ghp_0123456789abcdefghijABCDEFGHIJ012345",
            "[REDACTED:github_token]",
        ),
        ("AKIAIOSFODNN7EXAMPLE", "[REDACTED:aws_access_key_id]"),
        (
            "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv_wxyz1234",
            "[REDACTED:anthropic_key]",
        ),
        (
            "7012345678:AAMpdV4rGMLEa5ttgD1FkajKqMW_U8c-YGs",
            "[REDACTED:telegram_bot_token]",
        ),
        (
            "https://user:p4ssw0rd@example.com/x",
            "https://user:[REDACTED:url_credentials]@example.com/x",
        ),
        (
            "postgres://me:s3cretpw@db/x",
            "postgres://me:[REDACTED:url_credentials]@db/x",
        ),
    ];
    let long = format!("\x1b[{}m", "1;".repeat(40));
    let sequences = [
        "\x1b[31m",
        "\x1b[1;32m",
        "\x1b[m",
        "\x1b[0m\x1b[K",
        "\x1b[38;2;255;255;255;48;2;0;0;0m",
        &long,
        // Not colours: a progress bar's save and restore, a character set, SS3, 8-bit CSI.
        "\x1b7",
        "\x1b8",
        "\x1b(B",
        "\x1bOA",
        "\u{9b}31m",
    ];
    for colour in sequences {
        for (token, want) in tokens {
            let line = format!("{colour}{token}\x1b[0m done");
            assert_eq!(redacted(&line), format!("{colour}{want}\x1b[0m done"));
            // The same in JSON, where ESC is `\u001b`.
            let json = serde_json::to_string(&line).unwrap();
            let want_json = serde_json::to_string(&format!("{colour}{want}\x1b[0m done")).unwrap();
            assert!(json.contains("\\u001b"));
            assert_eq!(redacted(&json), want_json, "{json}");
        }
    }
    // A word that only ends like a colour code goes on: `xm` + a token's start is no token.
    let word = "[31xmghp_0123456789abcdefghijABCDEFGHIJ012345";
    assert_eq!(redacted(word), word);
    // A colour code after a secret's name is no value.
    let prompt = "\x1b[1mpassword:\x1b[0m (hidden)";
    assert_eq!(redacted(prompt), prompt);
    assert_eq!(
        redacted("\x1b[1mpassword=hunter22\x1b[0m"),
        "\x1b[1mpassword=[REDACTED:assignment]\x1b[0m"
    );
}

/// Found by attacking `--redact`: a Telegram token ending in `-` (one in 64) had no `\b` after it.
#[test]
fn a_telegram_token_ending_in_a_dash_is_redacted() {
    assert_eq!(
        redacted("tg 7012345678:AAMpdV4rGMLEa5ttgD1FkajKqMW_U8c-YG- ok"),
        "tg [REDACTED:telegram_bot_token] ok"
    );
    // One that goes on as a word is no token.
    let longer = "tg 7012345678:AAMpdV4rGMLEa5ttgD1FkajKqMW_U8c-YGsXYZ ok";
    assert_eq!(redacted(longer), longer);
}

/// Found by attacking `--redact`: JSON that writes `/` as `\/` (PHP's default) hid the `://` of
/// a URL with credentials.
#[test]
fn url_credentials_with_escaped_slashes_are_redacted() {
    assert_eq!(
        redacted(r#"{"a":"postgres:\/\/admin:s3cretpw@db\/app"}"#),
        r#"{"a":"postgres:\/\/admin:[REDACTED:url_credentials]@db\/app"}"#
    );
}

/// An AWS secret key may end in `/` or `+`, after which `\b` fails before a space.
#[test]
fn an_aws_secret_ending_in_a_slash_or_plus_is_redacted() {
    for end in ["+", "/"] {
        let key = format!("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKE{end}");
        for after in [" end", ""] {
            assert_eq!(
                redacted(&format!("aws_secret_access_key = {key}{after}")),
                format!("aws_secret_access_key = [REDACTED:aws_secret_key]{after}")
            );
        }
    }
}

/// Found by attacking `--redact`: a secret-named key in JSON inside a JSON string inside a JSON
/// string (a tool result of JSON, logged as a string): its quotes are `\\\"`, and the value
/// after them was left.
#[test]
fn a_secret_named_key_in_json_escaped_twice_is_redacted() {
    let line = r#"{"type":"user","text":"{\"tool_result\": \"{\\\"apiKey\\\": \\\"AbC123dEf456GhI789\\\"}\"}"}"#;
    let out = redacted(line);
    assert!(!out.contains("AbC123dEf456GhI789"), "{out}");
    assert!(
        out.contains("apiKey\\\\\\\": \\\\\\\"[REDACTED:assignment]"),
        "{out}"
    );
}

/// Found by attacking `--redact`: a value with `/` written `\/` (as some JSON encoders do) was
/// redacted up to its first `\` only, or not at all when fewer than four bytes came before it.
#[test]
fn an_assigned_value_with_escaped_slashes_is_redacted_whole() {
    assert_eq!(
        redacted(r#"{"a":"aws_secret_access_key=wJalrXUtnFEMI\/K7MDENG\/bPxRfiCYEXAMPLEKEY end"}"#),
        r#"{"a":"aws_secret_access_key=[REDACTED:aws_secret_key] end"}"#
    );
    assert_eq!(
        redacted(r#"{"a":"DB_PASSWORD=abc\/def\/ghi123 x"}"#),
        r#"{"a":"DB_PASSWORD=[REDACTED:assignment] x"}"#
    );
}

/// Found by the read side's attack (#49): a JSON key with spaces after its secret word
/// (`"db_password ":"…"`) left its value whole, the spaces before the closing quote read as no
/// assignment.
#[test]
fn a_key_with_spaces_after_its_secret_word_is_an_assignment() {
    assert_eq!(
        redacted(r#"{"type":"user","db_password ":"hunter2secretvalue"}"#),
        r#"{"type":"user","db_password ":"[REDACTED:assignment]"}"#
    );
    assert_eq!(
        redacted(r#"{"a":"export API_TOKEN  = 'Zq9vX2mK7pL4wR8t'"}"#),
        r#"{"a":"export API_TOKEN  = '[REDACTED:assignment]'"}"#
    );
}

/// #46: a dotenv value whose name says nothing is taken when it has a key's shape; the
/// file's ordinary settings are not.
#[test]
fn a_dotenv_value_with_a_keys_shape_is_taken_whatever_its_name() {
    for key in [
        "Vx93kq2LmPz81Rtw",
        "sk_live_51HxAbCdEfGhIjKlMn0p",
        "0123456789abcdef0123456789abcdef01234567",
        "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B",
    ] {
        assert!(looks_generated(key.as_bytes()), "{key}");
    }
    for setting in [
        "8080",
        "production",
        "true",
        "/usr/local/bin",
        "https://example.com",
        "my-app-production-2024",
        "en_US.UTF-8",
        "Europe/Berlin",
        "postgres://user:pw@db/app",
        "two words Here 42 and more",
    ] {
        assert!(!looks_generated(setting.as_bytes()), "{setting}");
    }
}

/// What `Redactor::with_secrets(secrets)` makes of `s`.
fn redacted_with(secrets: &[Secret], s: &str) -> String {
    let mut out = Vec::new();
    if Redactor::with_secrets(secrets).redact(s.as_bytes(), &mut out) {
        String::from_utf8(out).unwrap()
    } else {
        s.to_string()
    }
}

/// #46, found by attacking the door: a JSON writer may escape any character (Go writes `&` as
/// `\u0026`, .NET `+` as `\u002B`), and JSON in a JSON string doubles the backslash. A token,
/// a value or a URL's password written so was left whole on every surface.
#[test]
fn a_secret_written_with_unicode_escapes_is_redacted() {
    let token = "0123456789abcdefghijABCDEFGHIJ012345";
    let every: String = format!("ghp_{token}")
        .chars()
        .map(|c| format!("\\u{:04x}", c as u32))
        .collect();
    for line in [
        format!(r#"{{"a":"push gh\u0070_{token} x"}}"#),
        format!(r#"{{"a":"push {every} x"}}"#),
        format!(r#"{{"a":"{{\"b\":\"push gh\\u0070_{token} x\"}}"}}"#),
        format!(r#"{{"a":"push ghp_{}\u0033\u0034\u0035 x"}}"#, &token[..33]),
    ] {
        let out = redacted(&line);
        assert!(out.contains("[REDACTED:github_token]"), "{line} -> {out}");
        assert!(!out.contains("abcdefghij"), "{line} -> {out}");
        assert!(
            out.ends_with(r#" x"}"#) || out.ends_with(r#" x\"}"}"#),
            "{out}"
        );
    }
    let secrets = [
        Secret::new("GO_SECRET", b"Xq9&Lm2Pz8Rtw7Vk"),
        Secret::new("NET_KEY", b"a8F3k+Qz9Lm2Pw7Rt5Vx/Yb="),
        Secret::new("ACCENT", "Vx93kq2Lé81Rtw4Ns".as_bytes()),
    ];
    for (line, secret) in [
        (r#"{"a":"v=Xq9\u0026Lm2Pz8Rtw7Vk;"}"#, "GO_SECRET"),
        (r#"{"a":"v=a8F3k\u002BQz9Lm2Pw7Rt5Vx\/Yb=;"}"#, "NET_KEY"),
        (r#"{"a":"v=Vx93kq2L\u00E981Rtw4Ns;"}"#, "ACCENT"),
    ] {
        let out = redacted_with(&secrets, line);
        assert_eq!(out, format!(r#"{{"a":"v=[REDACTED:env:{secret}];"}}"#));
    }
    assert_eq!(
        redacted(r#"{"a":"{\"u\":\"postgres:\\\/\\\/admin:s3cretpw@db\\\/app\"}"}"#),
        r#"{"a":"{\"u\":\"postgres:\\\/\\\/admin:[REDACTED:url_credentials]@db\\\/app\"}"}"#
    );
}

/// #46: a binary line logged without `--redact` keeps its strings, each gap a U+FFFD, so the
/// escape before a colour (`ESC[31m`) became one; read back with `--redact`, the token after
/// the colour was left.
#[test]
fn a_token_after_a_colour_code_whose_escape_became_a_replacement_character_is_redacted() {
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    for line in [
        format!("{{\"text\":\"\u{FFFD} bad \u{FFFD}[31m{token}\u{FFFD}[0m end\"}}"),
        format!(r#"{{"text":"\ufffd bad \uFFFD[31m{token}\ufffd[0m end"}}"#),
    ] {
        let out = redacted(&line);
        assert!(!out.contains(token), "{out}");
        assert!(out.contains("[31m[REDACTED:github_token]"), "{out}");
    }
}
