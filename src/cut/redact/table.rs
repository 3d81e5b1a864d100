//! The table test: realistic fake secrets as they show up in agent streams (env dumps, config
//! files, tool output, JSON), all caught, and text that looks like a secret and is not, all
//! left alone.

use super::tests::redacted;
use super::*;

/// Each input with the text that must be gone after redaction.
const SECRETS: &[(&str, &str)] = &[
    // By name: assignments in env dumps, config files and JSON.
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
    (
        "VERCEL_TOKEN=Zx8kQ2mN5pR7tV9wY1aB3cD4",
        "Zx8kQ2mN5pR7tV9wY1aB3cD4",
    ),
    (
        "DISCORD_BOT_TOKEN=MTE4NjQ0NjcyNjQ0NzM2MjEyMA.iDxkrn.4MbV7tYEbR722K9CQd6c3F2BfNYd6pnQLL6Xbi",
        "4MbV7tYEbR722K9CQd6c3F2BfNYd6pnQLL6Xbi",
    ),
    // Connection strings.
    ("postgres://admin:s3cret@db.internal:5432/app", "s3cret"),
    ("https://user:p4ssw0rd@github.com/org/repo.git", "p4ssw0rd"),
    ("redis://default:Zm9vYmFy@cache:6379", "Zm9vYmFy"),
    (
        "mongodb+srv://app:Qw3rty-Mongo-26@cluster0.ab1cd.mongodb.net/prod",
        "Qw3rty-Mongo-26",
    ),
    (
        "Server=tcp:prod-sql.database.windows.net,1433;Initial Catalog=app;User ID=sqladmin;Password=Pa55w0rd!2026;Encrypt=True",
        "Pa55w0rd!2026",
    ),
    (
        r#"{"ConnectionStrings":{"Default":"Host=db;Username=app;Password=Xk9#mQ2$vL;Database=app"}}"#,
        "Xk9#mQ2$vL",
    ),
    // Tokens by their shape.
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
    // The families that leak in 2026.
    (
        "OPENROUTER_KEY: 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",
        "26497f013aa1fb040f696e2a3135e0d11b75e9f5921979a27c9d2f05e5214819",
    ),
    (
        r#"{"type":"tool_result","content":"curl -H \"Authorization: Bearer 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\" https://openrouter.ai/api/v1/chat"}"#,
        "dc760d0ada87377e90a20471617649815036f3c1e937bd8a3205abbe75b64756",
    ),
    (
        "stripe listen: Ready! Your webhook signing secret is whsec_jydmLcFaG8HSu8xFE973pNuHKGooyyLU",
        "whsec_jydmLcFaG8HSu8xFE973pNuHKGooyyLU",
    ),
    (
        "supabase login --token sbp_b64bb470f0305ad7ec2ad5b92648fbc215016ac7",
        "sbp_b64bb470f0305ad7ec2ad5b92648fbc215016ac7",
    ),
    (
        r#"{\"access_token\":\"sbp_dbc2b37309373ef92e3c4d56eb0c28f869c61f67\"}"#,
        "sbp_dbc2b37309373ef92e3c4d56eb0c28f869c61f67",
    ),
    (
        "const supabase = createClient(url, 'sb_secret_oZOytD4h5da7GciqSkpCRjNxDimxccF')",
        "sb_secret_oZOytD4h5da7GciqSkpCRjNxDimxccF",
    ),
    (
        "TavilyClient(api_key=\"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\")",
        "uxTPGwlNaNSxabJGbW8lgfRUO6oyKEdO",
    ),
    (
        "client = TavilyClient(\"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\")",
        "PH4iCrTn3mtfQzWo12cuC9JZ4rPj1KnE",
    ),
    (
        "curl https://api.telegram.org/bot7012345678:AAMpdV4rGMLEa5ttgD1FkajKqMW_U8c-YGs/getMe",
        "AAMpdV4rGMLEa5ttgD1FkajKqMW_U8c-YGs",
    ),
    (
        r#"{"bot_token": "7012345678:AAMpdV4rGMLEa5ttgD1FkajKqMW_U8c-YGs"}"#,
        "AAMpdV4rGMLEa5ttgD1FkajKqMW_U8c-YGs",
    ),
    (
        "TWILIO_ACCOUNT_SID=ACbb3bc630b08827e9d03cb120bd65325c",
        "ACbb3bc630b08827e9d03cb120bd65325c",
    ),
    (
        "twilio_api_key_sid: SK25554dec5594e0358a34bf4d2bd374e7",
        "SK25554dec5594e0358a34bf4d2bd374e7",
    ),
    (
        r#"{"twilioAccountSid":"ACbb3bc630b08827e9d03cb120bd65325c"}"#,
        "ACbb3bc630b08827e9d03cb120bd65325c",
    ),
    (
        "TWILIO_AUTH_TOKEN=9f2c4e6a8b0d1f3e5a7c9b1d3f5e7a9c",
        "9f2c4e6a8b0d1f3e5a7c9b1d3f5e7a9c",
    ),
    (
        "DefaultEndpointsProtocol=https;AccountName=stprod;AccountKey=7pzK7AREGfD0Pk7k5yldJT0m2Bi8fW51fzNuP6r+5IUkMfHh/tlZABfMg5Sjaihyy9jiIlvXyD5VAb6Nc3MPAy==;EndpointSuffix=core.windows.net",
        "7pzK7AREGfD0Pk7k5yldJT0m2Bi8fW51fzNuP6r+5IUkMfHh",
    ),
    // An Azure storage key as JSON, config files and JSON encoders write it (#46).
    (
        r#"{"accountKey":"Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="}"#,
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq",
    ),
    (
        r#"{"conn":"AccountKey=Eby8vdM02xNOcqFlqUwJPLlm\/tlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq\/K1SZFPTOtr\/KBHBeksoGMGw=="}"#,
        "KBHBeksoGMGw",
    ),
    (
        "account_key = Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
        "Eby8vdM02xNOcqFlqUwJPLlm",
    ),
    (
        "AZURE_STORAGE_KEY=7pzK7AREGfD0Pk7k5yldJT0m2Bi8fW51fzNuP6r+5IUkMfHh/tlZABfMg5Sjaihyy9jiIlvXyD5VAb6Nc3MPAy==",
        "7pzK7AREGfD0Pk7k5yldJT0m2Bi8fW51fzNuP6r",
    ),
    (
        "https://stprod.blob.core.windows.net/logs/a.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-12-01T00:00:00Z&sig=WCBAR8CmISUUtQONQcej%2BlH1Mc95YlnMjtX%2FLaZ6Kf%3D",
        "WCBAR8CmISUUtQONQcej",
    ),
    (
        r#"{"type": "service_account", "project_id": "demo-prod", "private_key_id": "4e87e7a728b1ad736d6591451dfd1daf", "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCfL2riQHlzqBhMgOrSrIlJ6PkZlDLWd4hzIvAEJT8\n-----END PRIVATE KEY-----\n", "client_email": "ci@demo-prod.iam.gserviceaccount.com"}"#,
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
    ),
    (
        r#"{\"private_key\":\"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSj\\n-----END PRIVATE KEY-----\\n\"}"#,
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
    ),
    (
        "Authorization: Bot MTE4NjQ0NjcyNjQ0NzM2MjEyMA.iDxkrn.4MbV7tYEbR722K9CQd6c3F2BfNYd6pnQLL6Xbi",
        "4MbV7tYEbR722K9CQd6c3F2BfNYd6pnQLL6Xbi",
    ),
    (
        "sg.send(key='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')",
        "wz0yeXzhUMW_LJ6K-brp2FPYlQh6GTR8sYAVDJtg-6p",
    ),
    (
        "databricks configure: host=https://adb-1.azuredatabricks.net token dapi4e87e7a728b1ad736d6591451dfd1daf",
        "dapi4e87e7a728b1ad736d6591451dfd1daf",
    ),
    (
        "doctl auth init -t dop_v1_8e606719c76f7b4a30cdc032727107fd1110967b19a66344db3637a487dbdc68",
        "8e606719c76f7b4a30cdc032727107fd1110967b19a66344db3637a487dbdc68",
    ),
    (
        "new LinearClient({ apiKey: process.env.X ?? 'lin_api_fIXH35UMoSWC5tIFUimhPPXZKd6BGwkcxnuVGgyq' })",
        "fIXH35UMoSWC5tIFUimhPPXZKd6BGwkcxnuVGgyq",
    ),
    (
        "notion = Client(auth=\"ntn_1lO4ZyMueDlThxTGxG045c2JQvpmfAFaZv48evdAQMnuoS\")",
        "1lO4ZyMueDlThxTGxG045c2JQvpmfAFaZv48evdAQMnuoS",
    ),
    (
        "Authorization: secret_tW41I7HlL8SeIMdXhNrjRfBfgldiMsihjtqCI5f0vDs",
        "tW41I7HlL8SeIMdXhNrjRfBfgldiMsihjtqCI5f0vDs",
    ),
    (
        "X-Shopify-Access-Token: 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",
        "8ce4fa7419a59963d00c67f5856391d1",
    ),
    (
        "shopify app secret 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",
        "58d30cd76de9baa2e4402c7aca38b56b",
    ),
    (
        "twine upload -u __token__ -p pypi-AgEIcHlwaS5vcmcpIErQN2P7a4oUNXBwHyfYaA_GXXFxnRyFT6dbb4rb6SRuAL_L_QWEUTkAyMc dist/*",
        "pIErQN2P7a4oUNXBwHyfYaA_GXXFxnRyFT6dbb4rb6SRuAL_L_QWEUTkAyMc",
    ),
    (
        "doppler run --token dp.st.ynR06LCmPdfzTJGMisXC1kIBbo0pJnY4w26nZURvZZE -- npm start",
        "ynR06LCmPdfzTJGMisXC1kIBbo0pJnY4w26nZURvZZE",
    ),
    (
        "DOPPLER: dp.pt.4As0CPHEwqhe64wehQBPhbz3nvN0G29l8Ht1Lzimk2l",
        "4As0CPHEwqhe64wehQBPhbz3nvN0G29l8Ht1Lzimk2l",
    ),
    (
        "put(blob, { token: 'vercel_blob_rw_t4NoNYMY2KNjpFxm_rwHWBrFLu2Z0CgEkC4G2wlE9bjGrnK' })",
        "rwHWBrFLu2Z0CgEkC4G2wlE9bjGrnK",
    ),
    (
        "Groq(api_key=\"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\")",
        "zThFfAxUNeaa6VmLuuqY8B3Y9aVlXpgirx58CFk1zMDoRJRLFkor",
    ),
    (
        "curl https://api.x.ai/v1/chat -H \"Authorization: xai-LQ1x7bDkfhyaHsveXnTC7UCY8omiax9DWmZeaJ19obqR4xFE9vSC47NU9mOBy2sJqpB75VXe2PNLwh8n\"",
        "LQ1x7bDkfhyaHsveXnTC7UCY8omiax9DWmZeaJ19obqR4xFE9vSC47NU9mOBy2sJqpB75VXe2PNLwh8n",
    ),
    (
        "replicate.Client(api_token=\"r8_LEih2cGQKXe8kUJ6Ws5qBETazfFvkM844DUMT\")",
        "LEih2cGQKXe8kUJ6Ws5qBETazfFvkM844DUMT",
    ),
    (
        "echo r8_LEih2cGQKXe8kUJ6Ws5qBETazfFvkM844DUMT | replicate login",
        "LEih2cGQKXe8kUJ6Ws5qBETazfFvkM844DUMT",
    ),
];

/// Text that looks like a secret and is not: it must come through unchanged.
const LOOK_ALIKES: &[&str] = &[
    "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "uuid 8463c716-a2ea-4c14-9efa-87158ebd9f20",
    "commit 0511dee9e6f1d0c598230bf5c61202eee5198bf8",
    "Merge: a94a8fe5ccb19ba61c4c0873d391e987982fbbd3 9fceb02d0ae598e95dc970b74767f19372d61af8",
    r#"{"input_tokens":10,"max_tokens":4096,"output_tokens":123456}"#,
    "tokens_used: 123",
    r#"{"token_count":3,"is_error":false}"#,
    r#""cache_read_input_tokens": 20480"#,
    r#"{"max_output_tokens": 32000, "token_type": "Bearer", "expires_in": 3599}"#,
    "TOKENIZERS_PARALLELISM=false",
    "the password field is required; see docs for the token format",
    "Password: Enter the password for your account",
    "password: (enter it when asked)",
    "password: ********",
    "DB_PASSWORD: ${DB_PASSWORD}",
    "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
    "api_key: <YOUR_API_KEY>",
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
    r#"{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="}}"#,
    r#""integrity": "sha512-EEQM8DnLNGJLbIBgAFDiAfvwMLe/n4qv0psnLOwvWjjjfpttPRsh8EnMc8HINRF/GsC9HsN2suuumfimR7sDKg==""#,
    "skills_and_tools, sk-short, npm_install, hf_hub",
    "the tokenizer: bpe",
    r#"{"type":"tool_use","name":"Read","input":{"file_path":"/src/secret_handler.rs"}}"#,
    "open secret_santa_list.txt and secret_sauce.md",
    "Bot framework v4; Both bots ran",
    "the SAS token goes in ?sig= after signing",
    "set AccountKey= in the connection string",
    "SK0123456789abcdef0123456789abcdef is an id here, as is AC0123456789abcdef0123456789abcdef",
    "Telegram ids look like 123456789:AB and ratios like 12345678:AAb",
    "files: shapes.shp, lin_reg.py, r8_mini.json, gsk_short, xai-sdk, tvly-python, dapi-docs, SG.config, dp.sh",
    "whsec_ prefix, sbp_ prefix, ntn_ prefix, shpat_ prefix, pypi- prefix",
    "the sig=abc query and Bot tokens are described in the docs",
    "OpenRouter keys start with sk-or-v1- and 64 hex digits",
    r#"{"session_token_expiry": 3600, "token_budget": 200000}"#,
    r#""integrity": "sha1-Vfb3dNAsKpFUdnl9AFUiqi7kBnE=""#,
];

#[test]
fn the_table_is_as_large_as_promised() {
    assert!(SECRETS.len() >= 60, "{} secrets", SECRETS.len());
    assert!(LOOK_ALIKES.len() >= 40, "{} look-alikes", LOOK_ALIKES.len());
    // The README gives both counts.
    let readme = include_str!("../../../README.md").replace('\n', " ");
    let counts = format!(
        "{} realistic fake secrets (all caught), {} look-alikes (none touched)",
        SECRETS.len(),
        LOOK_ALIKES.len()
    );
    assert!(
        readme.contains(&counts),
        "the README does not say: {counts}"
    );
}

#[test]
fn realistic_secrets_are_caught() {
    let missed: Vec<(&str, String)> = SECRETS
        .iter()
        .map(|(input, secret)| (*input, secret, redacted(input)))
        .filter(|(_, secret, out)| out.contains(*secret) || !out.contains("[REDACTED:"))
        .map(|(input, _, out)| (input, out))
        .collect();
    assert!(
        missed.is_empty(),
        "missed {} of {}: {missed:#?}",
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
        "{} false positives: {flagged:#?}",
        flagged.len()
    );
}

/// A redactor with these secrets in its environment.
fn with_env(vars: &[(&str, &str)]) -> Redactor {
    Redactor::with_secrets(&secrets_of(vars.iter().copied()))
}

fn redact_with(r: &Redactor, s: &str) -> String {
    let mut out = Vec::new();
    if r.redact(s.as_bytes(), &mut out) {
        String::from_utf8(out).unwrap()
    } else {
        s.to_string()
    }
}

#[test]
fn values_of_secret_variables_are_redacted_by_name() {
    let r = with_env(&[
        ("DB_PASSWORD", "plain words with spaces"),
        ("MY_API_KEY", "q\"uo/te\\d-value"),
        ("HOME", "/home/agent"),
        ("TOKENIZER", "cl100k_base"),
        ("MAX_TOKENS", "40960000"),
    ]);
    assert_eq!(
        redact_with(&r, "echo plain words with spaces | psql"),
        "echo [REDACTED:env:DB_PASSWORD] | psql"
    );
    // As written, JSON-escaped, with `\/`, and escaped twice.
    for shown in [
        r#"q"uo/te\d-value"#,
        r#"q\"uo/te\\d-value"#,
        r#"q\"uo\/te\\d-value"#,
        r#"q\\\"uo/te\\\\d-value"#,
    ] {
        assert_eq!(
            redact_with(&r, &format!("k={shown};")),
            "k=[REDACTED:env:MY_API_KEY];",
            "{shown}"
        );
    }
    for untouched in [
        "cd /home/agent",
        "tokenizer cl100k_base",
        "40960000 bytes",
        "plain words",
    ] {
        assert_eq!(redact_with(&r, untouched), untouched);
    }
}

#[test]
fn a_value_inside_a_longer_match_goes_with_it() {
    // The assignment ends at `;`; the value goes on past it: none of it may stay.
    let r = with_env(&[("DB_PASSWORD", "abc;defghijk")]);
    let out = redact_with(&r, "password=abc;defghijk tail");
    assert!(!out.contains("defghijk"), "{out}");
}
