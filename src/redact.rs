//! `--redact`: secrets in the log become `[REDACTED:kind]` before the line is cut. Standard
//! output is never touched.
//!
//! The patterns run on the line as written, so inside JSON strings quotes appear as `\"`; no
//! pattern's secret part matches `"` or `\`, so a replacement never breaks a string or an
//! escape. Where a pattern names the secret (`password=…`, `Bearer …`), the name is kept and only
//! the value replaced.

use regex::bytes::Regex;

/// `(kind, pattern)`. A pattern's first capture group, when it has one, is kept: it is the name
/// in front of the secret.
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
    (
        "assignment",
        r#"(\b(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?token|auth[_-]?token|PASSWORD|PASSWD|SECRET|TOKEN|API[_-]?KEY|ACCESS[_-]?TOKEN|AUTH[_-]?TOKEN|Password|Secret|Token)(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?)[^\s"'\\&,;]{4,}"#,
    ),
];

/// Compiles a built-in pattern without Unicode: `\\b` and the classes are ASCII, which keeps the
/// matcher on its fast DFA over any input (a Unicode `\\b` makes it fall back to a slow engine
/// at the first non-ASCII byte).
fn ascii(pattern: &str) -> Regex {
    Regex::new(&format!("(?-u){pattern}"))
        .unwrap_or_else(|e| panic!("bad built-in pattern {pattern}: {e}"))
}

/// The compiled patterns.
pub struct Redactor {
    /// All patterns as one alternation, for one pass over the line.
    any: Regex,
    each: Vec<Regex>,
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor::new()
    }
}

impl Redactor {
    pub fn new() -> Redactor {
        let each: Vec<Regex> = PATTERNS.iter().map(|(_, p)| ascii(p)).collect();
        let joined: Vec<String> = PATTERNS.iter().map(|(_, p)| format!("(?:{p})")).collect();
        let any = ascii(&joined.join("|"));
        Redactor { any, each }
    }

    /// Writes `line` with its secrets replaced into `out` and returns true, or returns false
    /// (leaving `out` alone) when there is nothing to redact.
    pub fn redact(&self, line: &[u8], out: &mut Vec<u8>) -> bool {
        let mut last = 0;
        let mut any = false;
        for m in self.any.find_iter(line) {
            if !any {
                out.clear();
                any = true;
            }
            out.extend_from_slice(&line[last..m.start()]);
            let found = &line[m.start()..m.end()];
            // Which pattern matched, and where its kept name ends.
            let (kind, name_end) = self
                .each
                .iter()
                .zip(PATTERNS)
                .find_map(|(re, (kind, _))| {
                    re.captures(found)
                        .map(|c| (*kind, c.get(1).map_or(0, |g| g.end())))
                })
                .unwrap_or(("secret", 0));
            out.extend_from_slice(&found[..name_end]);
            out.extend_from_slice(b"[REDACTED:");
            out.extend_from_slice(kind.as_bytes());
            out.push(b']');
            last = m.end();
        }
        if any {
            out.extend_from_slice(&line[last..]);
        }
        any
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
}
