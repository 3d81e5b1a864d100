//! What `--redact` looks for by pattern: tokens by their shape, the names secrets are
//! assigned to, and the literals every one of them starts with (searched first, see `mod.rs`).

/// `(kind, pattern)`. A pattern's first capture group, when it has one, is kept: it is the name
/// in front of the secret. Its second group, when it matches, is kept too: what follows the
/// secret (the `@host` of a URL). Where two patterns match the same text, the first one listed
/// names it (`openrouter_key` before `openai_key`).
pub const PATTERNS: &[(&str, &str)] = &[
    (
        "private_key",
        r"-----BEGIN[A-Z ]*PRIVATE KEY-----.*?-----END[A-Z ]*PRIVATE KEY-----",
    ),
    ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    ("openrouter_key", r"\bsk-or-v1-[A-Za-z0-9]{32,}"),
    (
        "openai_key",
        r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
    ),
    ("stripe_key", r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("stripe_webhook_secret", r"\bwhsec_[A-Za-z0-9+/=]{24,}"),
    ("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}\b"),
    ("aws_access_key_id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    (
        "aws_secret_key",
        // The key may end in `/` or `+`: then what follows is no word boundary, and is kept.
        r#"((?:aws_secret_access_key|AWS_SECRET_ACCESS_KEY)(?:\\*["'])?\s*[:=]\s*(?:\\*["'])?)[A-Za-z0-9/+]{40}(?:\b|([^A-Za-z0-9/+])|$)"#,
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
        "supabase_token",
        r"\b(?:sbp_[0-9a-f]{40}|sb_secret_[A-Za-z0-9_-]{20,})",
    ),
    ("tavily_key", r"\btvly-(?:dev-|prod-)?[A-Za-z0-9]{24,}"),
    // An account or API key SID is an id, a secret only beside a Twilio name.
    (
        "twilio_key",
        r#"((?:twilio|Twilio|TWILIO)[A-Za-z0-9_.-]{0,32}(?:\\*["'])?\s*[:=]\s*(?:\\*["'])?)(?:SK|AC)[0-9a-fA-F]{32}\b"#,
    ),
    // A storage account key (88 base64 characters) in a connection string, a config file or
    // JSON, its name in any of the cases tools write it, a `/` maybe escaped as `\/`.
    (
        "azure_storage_key",
        r#"(\b(?:AccountKey|accountKey|accountkey|ACCOUNTKEY|account_key|ACCOUNT_KEY)(?:\\*["'])?\s*[:=]\s*(?:\\*["'])?)(?:[A-Za-z0-9+]|\\?/){40,}={0,2}"#,
    ),
    (
        "azure_sas_signature",
        r"(\bsig=)[A-Za-z0-9%+/]{30,}(?:%3D|%3d|=){0,2}",
    ),
    (
        "discord_bot_token",
        r"(\bBot )[A-Za-z0-9_-]{23,28}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}",
    ),
    (
        "sendgrid_key",
        r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,50}",
    ),
    ("databricks_token", r"\bdapi[0-9a-f]{32}(?:-[0-9])?\b"),
    ("digitalocean_token", r"\bdo[opr]_v1_[0-9a-f]{64}\b"),
    ("linear_key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{32,}"),
    (
        "notion_token",
        r"\b(?:ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43}\b)",
    ),
    ("shopify_token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    ("pypi_token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}"),
    (
        "doppler_token",
        r"\bdp\.(?:st|sa|ct|pt|scim|audit)\.[A-Za-z0-9_.-]{40,}",
    ),
    (
        "vercel_token",
        r"\bvercel_blob_rw_[A-Za-z0-9]{16}_[A-Za-z0-9]{30}",
    ),
    ("groq_key", r"\bgsk_[A-Za-z0-9]{48,}"),
    ("xai_key", r"\bxai-[A-Za-z0-9]{60,}"),
    ("replicate_token", r"\br8_[A-Za-z0-9]{37}\b"),
];

/// A Telegram bot token: the bot's id (8 to 10 digits), `:`, then 35 characters starting with
/// `AA`. Found at each `:AA` (the digits before it give no literal to search for). Where it
/// ends is checked after the match: a token may end in `-`, after which `\b` would fail.
pub const TELEGRAM: &str = r"^AA[A-Za-z0-9_-]{33}";
/// The literal a [`TELEGRAM`] token is found by.
pub const TELEGRAM_AT: &str = ":AA";
/// The starts searched beside [`TOKEN_STARTS`], each checked by code of its own, in this order
/// (their indexes follow `TOKEN_STARTS`'s): `://`, [`TELEGRAM_AT`], [`URL_ESCAPED`].
pub(super) const OTHER_STARTS: &[&str] = &["://", TELEGRAM_AT, URL_ESCAPED];

/// `://` as JSON may write it (`\/` for `/`, PHP's default): URL credentials are found after
/// either.
pub const URL_ESCAPED: &str = r":\/\/";

/// The words a secret's name ends in (`DB_PASSWORD`, `OPENAI_API_KEY`, `GH_TOKEN`,
/// `client_secret`, `"apiKey"`): lower case, UPPER case, Capitalized and camelCase, as plain
/// literals (a case-insensitive set ran five times slower); the rest of an assignment is checked
/// around each one found. Where two start at the same byte, the longer is the name's end
/// (`secretKey`, not `secret`).
pub(super) const SECRET_WORDS: &[&str] = &[
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
    "credential",
    "storage_key",
    "storage-key",
    "storagekey", //
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
    "CREDENTIAL",
    "STORAGE_KEY",
    "STORAGE-KEY",
    "STORAGEKEY", //
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
    "Storage_Key",
    "Storage-Key",
    "StorageKey",
    "storageKey",
];

/// What every match of a [`PATTERNS`] pattern starts with (a test checks it against the
/// literals the regex parser extracts from them). One search for these and `://` found them in
/// 30% less time than the alternation's own search for its literals did.
pub(super) const TOKEN_STARTS: &[&str] = &[
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
    "whsec_",
    "sbp_",
    "sb_secret_",
    "tvly-",
    "twilio",
    "Twilio",
    "TWILIO",
    "AccountKey",
    "accountKey",
    "accountkey",
    "ACCOUNTKEY",
    "account_key",
    "ACCOUNT_KEY",
    "sig=",
    "Bot ",
    "SG.",
    "dapi",
    "doo_v1_",
    "dop_v1_",
    "dor_v1_",
    "lin_",
    "ntn_",
    "secret_",
    "shp",
    "pypi-",
    "dp.",
    "vercel_",
    "gsk_",
    "xai-",
    "r8_",
];

/// Whether byte `b` after a secret word makes it part of a longer name (`tokens`,
/// `token_count`), which is no secret's.
pub(super) fn name_goes_on(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The trigram filter's check past five bytes ([`crate::line::strings::Trigrams::with_check`]):
/// whether a secret may start at `at` of `text`. A token's start or another start says yes; a
/// word start only where a whole [`SECRET_WORDS`] word shows that does not go on as a name, or
/// a key's `PRIVATE KEY`: the search passes the others by (`Redactor::assignment_at`). Every
/// `input_tokens` of an agent's usage is one of those, on most lines of a stream.
pub(super) fn may_start_a_secret(text: &[u8], at: usize) -> bool {
    let rest = &text[at..];
    // The first byte first: a call to compare each literal whole cost more than the filter.
    let starts = |l: &&str| rest.first() == l.as_bytes().first() && rest.starts_with(l.as_bytes());
    TOKEN_STARTS.iter().chain(OTHER_STARTS).any(starts)
        || rest.starts_with(b"PRIVATE KEY")
        || SECRET_WORDS
            .iter()
            .any(|w| starts(w) && !rest.get(w.len()).is_some_and(|&b| name_goes_on(b)))
}

/// What every [`SECRET_WORDS`] word starts with, in a set of its own: the literal searcher is
/// at its fastest with at most 32 literals (one set of both ran a third slower than two); four
/// bytes each, not `api`, keep it so. Where one shows, the words that start with it are compared
/// there, the longest first.
pub(super) const WORD_STARTS: &[&str] = &[
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
    "stor",
    "STOR",
    "Stor",
];

/// What may follow a secret's name: a quote, `=` or `:`, a quote, then the value; a quote as JSON
/// escapes it once or more (`\"`, `\\\"` in JSON inside a JSON string), and a `/` in
/// the value maybe as `\/`.
pub(super) const ASSIGNED_VALUE: &str =
    r#"^\s*(?:\\*["'])?\s*[:=]\s*(?:\\*["'])?((?:[^\s"'\\&,;\x1b]|\\/){4,})"#;

/// What follows `://` in a URL with credentials: the user and `:` (kept), the password (the
/// secret), `@`. Checked at each `://`: a pattern starting with the scheme would have no literal
/// to look for.
pub(super) const URL_CREDENTIALS: &str = r#"^[^\s:/@"'\\]+:([^\s:/@"'\\]+)@"#;
