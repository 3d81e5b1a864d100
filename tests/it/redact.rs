//! `--redact` by value, end to end: secrets in smart-tee's environment, inside tool output, as
//! written and JSON-escaped, split across reads and inside lines past the 8 MiB memory cap,
//! reach no file smart-tee writes (logs, `--stats-json`), no message, and no MCP or `--view`
//! answer; standard output still gets every byte.

use std::path::Path;

use smart_tee::cut::engine::EngineConfig;

use crate::common::{self, lines, strict_parse};

/// Secret-named variables and their values: one with a quote, a slash and a backslash (JSON
/// escapes it), one with spaces, one plain, one shaped like an Anthropic key.
const ENV: &[(&str, &str)] = &[
    ("MY_SERVICE_API_KEY", r#"Zq8"Lm/Np3\Rt5Vw7"#),
    ("DB_PASSWORD", "open sesame 4242 zz"),
    ("DEPLOY_TOKEN", "Tr1cky-Deploy-2026-q9"),
    (
        "ANTHROPIC_API_KEY",
        "sk-ant-api03-Fake0Key1For2Tests3Only4xyzAB",
    ),
];

/// The text each secret must not show as: its value, and its forms JSON-escaped once and twice.
fn forbidden() -> Vec<String> {
    let mut v = Vec::new();
    for (_, value) in ENV {
        v.push(value.to_string());
        let once = esc(value);
        v.push(esc(&once));
        v.push(once);
    }
    // Parts long enough to be told apart from ordinary text.
    v.push("Fake0Key1For2Tests3Only".into());
    v.push("Tr1cky-Deploy".into());
    v
}

fn assert_clean(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for secret in forbidden() {
        assert!(
            !text.contains(&secret),
            "{what} shows a secret ({} bytes in)",
            text.find(&secret).unwrap()
        );
    }
}

/// JSON-escapes `s` (without the quotes).
fn esc(s: &str) -> String {
    let q = serde_json::to_string(s).unwrap();
    q[1..q.len() - 1].to_string()
}

/// Lines of tool output holding the secrets in every way the issue names.
fn input() -> Vec<u8> {
    let [(_, api), (_, db), (_, deploy), (_, ant)] = ENV else {
        unreachable!()
    };
    let mut input = Vec::new();
    // Tool output in a JSON line that fits: the values JSON-escaped.
    input.extend_from_slice(
        format!(
            "{{\"type\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"content\":\"$ env\\nMY_SERVICE_API_KEY={}\\nDB_PASSWORD={}\"}}]}}\n",
            esc(api),
            esc(db)
        )
        .as_bytes(),
    );
    // A JSON string inside a JSON string: escaped twice.
    let inner = format!("{{\"token\":\"{}\"}}", esc(api));
    input.extend_from_slice(
        format!("{{\"type\":\"result\",\"result\":\"{}\"}}\n", esc(&inner)).as_bytes(),
    );
    // Not JSON: as written.
    input.extend_from_slice(format!("curl -u admin:{api} -H 'X: {db}' {deploy}\n").as_bytes());
    // Over the budget, the secret every 97 bytes so that one spans each cut point, and one as
    // a key (counted in --stats-json).
    let mut long = String::new();
    while long.len() < 40_000 {
        long.push_str(&format!("{} {} ", "word".repeat(15), esc(deploy)));
    }
    input.extend_from_slice(
        format!(
            "{{\"type\":\"assistant\",\"{}\":\"{long}\",\"n\":1}}\n",
            esc(deploy)
        )
        .as_bytes(),
    );
    // Past the 8 MiB memory cap, not JSON: an excerpt.
    let mut big = format!("export ANTHROPIC_API_KEY={ant} ");
    big.push_str(&"z".repeat(9 << 20));
    big.push_str(&format!(" {deploy} end\n"));
    input.extend_from_slice(big.as_bytes());
    // Past the cap, JSON nested 200,000 deep: too deep to cut.
    let mut deep = format!(
        "{{\"key\":\"{ant}\",\"pad\":\"{}\",\"deep\":",
        "y".repeat(9 << 20)
    );
    deep.push_str(&"[".repeat(200_000));
    deep.push_str(&"]".repeat(200_000));
    deep.push_str(&format!(",\"k2\":\"{}\"}}\n", esc(api)));
    input.extend_from_slice(deep.as_bytes());
    input
}

fn env_config(budget: usize) -> EngineConfig {
    EngineConfig {
        max_line_bytes: budget,
        redact: true,
        secrets: smart_tee::cut::redact::secrets_of(ENV.iter().copied()),
        ..EngineConfig::default()
    }
}

/// The log side, fed in chunks of 1, 7 and 64 KiB bytes and at once: a secret split across
/// reads is found as a whole.
#[test]
fn secrets_split_across_reads_are_redacted() {
    let input = input();
    // The small lines byte by byte; the whole input in larger chunks.
    let small: Vec<u8> = input
        .split_inclusive(|&b| b == b'\n')
        .take(4)
        .flatten()
        .copied()
        .collect();
    for (bytes, chunk) in [(&small, 1), (&small, 7), (&input, 64 * 1024), (&input, 0)] {
        let log = common::log_of(bytes, &env_config(5120), chunk);
        assert_clean(&format!("the log fed in chunks of {chunk}"), &log);
        for l in lines(&log) {
            strict_parse(l).unwrap();
            assert!(l.len() <= 5120);
        }
    }
}

/// The log of `input` fed in chunks of `chunk` bytes, each looked at first by `--redact`'s
/// filters as the reading thread does while the log worker is behind (`Redactor::scout`), or,
/// with `paused`, searched for private keys' headers alone, as while the look pauses
/// (`Redactor::headers`).
fn log_scouted(input: &[u8], config: &EngineConfig, chunk: usize, paused: bool) -> Vec<u8> {
    use smart_tee::tee::sink::LogSink;
    use smart_tee::{LineEngine, LogWriter};
    let buf = common::SharedBuffer::default();
    let sink = LogSink::new("test.log".as_ref(), Box::new(buf.clone()));
    let mut log = LogWriter::new(LineEngine::new(config.clone()), vec![sink]);
    let mut looks = log.looks();
    let redactor = looks.scout.clone().expect("--redact");
    for c in input.chunks(chunk) {
        // All the reader's looks (the lines checked, the runs of text written), with the
        // filters' look made at every chunk, or paused.
        looks
            .text_seen
            .store(true, std::sync::atomic::Ordering::Relaxed);
        let mut ahead = looks.look(c, true);
        ahead.scouted = Some(if paused {
            redactor.headers(c)
        } else {
            redactor.scout(c)
        });
        assert!(log.feed_ahead(c, &ahead).is_empty());
    }
    assert!(log.finish().is_empty());
    buf.contents()
}

/// The lines the reading thread rules out are not looked at again by the log worker, and runs
/// of plain text go on through them (and stop before a line it did not): the log is the one
/// the worker writes alone, byte for byte, and holds no secret, wherever the chunks are cut
/// (through a secret, a line, a CRLF, a run of text).
#[test]
fn chunks_looked_at_by_the_reader_log_what_the_worker_logs_alone() {
    let mut input: Vec<u8> = input()
        .split_inclusive(|&b| b == b'\n')
        .take(4)
        .flatten()
        .copied()
        .collect();
    for i in 0..400 {
        let [(_, api), (_, db), (_, deploy), (_, ant)] = ENV else {
            unreachable!()
        };
        let line = match i % 13 {
            0 => {
                format!("{{\"type\":\"assistant\",\"uuid\":\"{i:08}\",\"text\":\"all good\"}}\r\n")
            }
            1 => format!("{{\"type\":\"user\",\"content\":\"{}\"}}\n", esc(api)),
            2 => format!("plain text {i} with ghp_0123456789abcdefghijABCDEFGHIJ012345 in it\n"),
            3 => format!("{{\"k\":\"{}\"}}\n", "x".repeat(i * 37 % 9000) + deploy),
            4 => "\n".to_string(),
            // Lines of text, in runs, with secrets of each kind among them.
            5 | 8 | 11 => format!("   Compiling crate-{i} v0.1.{i} (build step {i})\n"),
            6 => format!("export DEPLOY_TOKEN={deploy} # {i}\n"),
            7 => format!("the build is green: {i} passed, 0 failed\n"),
            9 => format!("connecting with {db} and {}\n", "y".repeat(i % 300)),
            10 => format!("warning: key {ant} found in line {i}\n"),
            // A key's block opened by a JSON line, its body and footer lines of text.
            12 if i % 2 == 0 => format!(
                "{{\"k\":\"cat id_rsa\\n{KEY_HEADER}\"}}\n{KEY_BODY}{i:04}\n{KEY_BODY}\n{KEY_FOOTER}\n"
            ),
            _ => format!("\u{1b}[32m   ok\u{1b}[0m {api} {i}\n"),
        };
        input.extend_from_slice(line.as_bytes());
    }
    for budget in [512, 5120] {
        let config = env_config(budget);
        let alone = common::log_of(&input, &config, 0);
        assert_clean("the worker's log", &alone);
        assert!(!String::from_utf8_lossy(&alone).contains(KEY_BODY));
        for chunk in [1, 7, 64, 333, 4096, 65536] {
            for paused in [false, true] {
                let log = log_scouted(&input, &config, chunk, paused);
                let what = format!("the log of chunks of {chunk} looked at (paused: {paused})");
                assert_clean(&what, &log);
                assert!(!String::from_utf8_lossy(&log).contains(KEY_BODY), "{what}");
                assert!(log == alone, "{what}, budget {budget}");
            }
        }
    }
}

/// The body of a key written over lines of text after a JSON line that opens it: the reading
/// thread rules its lines out (no secret starts in base64), and a run of text lines was written
/// past the engine, body and all, while the engine alone replaced them.
#[test]
fn a_keys_body_in_lines_of_text_is_redacted_when_the_reader_looked_ahead() {
    let input = format!(
        "{{\"k\":\"{KEY_HEADER}\"}}\n{KEY_BODY}1\n{KEY_BODY}2\n{KEY_BODY}3\n{KEY_FOOTER}\nafter\n"
    );
    let config = env_config(5120);
    let alone = common::log_of(input.as_bytes(), &config, 0);
    for paused in [false, true] {
        let log = log_scouted(input.as_bytes(), &config, 1 << 16, paused);
        let text = String::from_utf8_lossy(&log);
        assert!(!text.contains(KEY_BODY), "paused: {paused}: {text}");
        assert!(text.contains("after"));
        assert_eq!(log, alone);
    }
}

const KEY_HEADER: &str = "-----BEGIN RSA PRIVATE KEY-----";
const KEY_BODY: &str = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun";
const KEY_FOOTER: &str = "-----END RSA PRIVATE KEY-----";

fn run_with_env(args: &[&str], input: &[u8]) -> std::process::Output {
    let mut cmd = common::bin();
    for (name, value) in ENV {
        cmd.env(name, value);
    }
    common::run_cmd(cmd.args(args), input)
}

/// #32: the binary, its secrets in its environment: no output file, no message and no
/// answer shows one.
#[test]
fn secrets_in_the_environment_reach_no_file_nor_answer() {
    let dir = common::tempdir("redact-env");
    let (log, stats) = (dir.join("a.jsonl"), dir.join("stats.json"));
    let input = input();
    let out = run_with_env(
        &[
            "--redact",
            "--stats",
            "--stats-json",
            stats.to_str().unwrap(),
            log.to_str().unwrap(),
        ],
        &input,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout == input, "stdout keeps every byte");
    assert_clean("stderr", &out.stderr);
    let logged = std::fs::read(&log).unwrap();
    assert_clean("the log", &logged);
    assert_eq!(lines(&logged).len(), 6);
    for l in lines(&logged) {
        strict_parse(l).unwrap();
    }
    let text = String::from_utf8_lossy(&logged);
    for name in [
        "MY_SERVICE_API_KEY",
        "DB_PASSWORD",
        "DEPLOY_TOKEN",
        "ANTHROPIC_API_KEY",
    ] {
        assert!(text.contains(&format!("[REDACTED:env:{name}]")), "{name}");
    }
    // Without --redact, every one of these lines logs a secret: the check above can fail.
    let plain = dir.join("plain.jsonl");
    let out = run_with_env(&[plain.to_str().unwrap()], &input);
    assert!(out.status.success());
    let plain = std::fs::read(&plain).unwrap();
    let shows = |l: &[u8]| {
        let l = String::from_utf8_lossy(l);
        forbidden().iter().any(|s| l.contains(s.as_str()))
    };
    assert_eq!(lines(&plain).iter().filter(|l| shows(l)).count(), 6);
    std::fs::remove_file(dir.join("plain.jsonl")).unwrap();
    let stats = std::fs::read(&stats).unwrap();
    assert_clean("--stats-json", &stats);
    assert!(String::from_utf8_lossy(&stats).contains("[REDACTED:env:DEPLOY_TOKEN]"));

    // The read side, on a raw stream that was never redacted.
    let raw = dir.join("raw.jsonl");
    let small: Vec<u8> = input
        .split_inclusive(|&b| b == b'\n')
        .take(4)
        .flatten()
        .copied()
        .collect();
    std::fs::write(&raw, &small).unwrap();
    for format in ["text", "jsonl", "json"] {
        let view = run_with_env(
            &[
                "--view",
                "--redact",
                "--format",
                format,
                raw.to_str().unwrap(),
            ],
            b"",
        );
        assert!(view.status.success());
        assert!(!view.stdout.is_empty());
        assert_clean(&format!("--view --format {format}"), &view.stdout);
    }
    #[cfg(feature = "mcp")]
    mcp_answers_are_clean(&dir);
}

#[cfg(feature = "mcp")]
fn mcp_answers_are_clean(root: &Path) {
    use rmcp::model::CallToolRequestParams;
    use serde_json::json;
    let step = std::time::Duration::from_secs(60);
    let rt = crate::mcp::runtime();
    rt.block_on(async {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_smart-tee"));
        cmd.arg("mcp").arg("--redact").arg("--root").arg(root);
        for (name, value) in ENV {
            cmd.env(name, value);
        }
        let client = crate::mcp::connect(cmd).await;
        for (tool, args) in [
            ("read_log", json!({"path": "raw.jsonl", "format": "jsonl"})),
            ("read_log", json!({"path": "raw.jsonl", "format": "text"})),
            ("read_log", json!({"path": "a.jsonl", "format": "json"})),
            ("log_summary", json!({"path": "raw.jsonl"})),
            ("list_logs", json!({})),
        ] {
            let params = CallToolRequestParams::new(tool)
                .with_arguments(args.as_object().cloned().unwrap_or_default());
            let result = tokio::time::timeout(step, client.call_tool(params))
                .await
                .unwrap()
                .unwrap();
            let text: String = result
                .content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                .collect();
            assert!(!text.is_empty(), "{tool}");
            assert_clean(&format!("the MCP answer of {tool} {args}"), text.as_bytes());
        }
        let _ = client.cancel().await;
    });
}

/// `--redact-values FILE`: the values of a dotenv file, by the environment's rules; an
/// unreadable or malformed file is refused naming the file and the line, never a value.
#[test]
fn redact_values_reads_a_dotenv_file() {
    let dir = common::tempdir("redact-values");
    let (env, log) = (dir.join(".env"), dir.join("a.jsonl"));
    std::fs::write(
        &env,
        "# app\nexport STRIPE_SECRET=\"Value-From-Dotenv-77\"\nNODE_ENV=production\n",
    )
    .unwrap();
    let input = b"{\"type\":\"user\",\"content\":\"Value-From-Dotenv-77 in production\"}\n";
    let out = common::run_fed(&["--redact-values", env.to_str().unwrap()], &log, input);
    assert!(out.status.success());
    let logged = String::from_utf8(std::fs::read(&log).unwrap()).unwrap();
    assert!(
        logged.contains("[REDACTED:env:STRIPE_SECRET] in production"),
        "{logged}"
    );
    std::fs::write(&env, "GOOD_TOKEN=Hidden-Value-123\nthis line is no pair\n").unwrap();
    let out = common::run_fed(&["--redact-values", env.to_str().unwrap()], &log, b"x\n");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(".env") && err.contains("line 2"), "{err}");
    assert!(!err.contains("Hidden-Value"), "{err}");
    assert_eq!(out.stdout, b"x\n", "the stream is still copied");
}

/// #32: `--help` says what is redacted by value, by name and by pattern.
#[test]
fn help_says_what_redact_replaces() {
    let out = common::run_cmd(common::bin().arg("--help"), b"");
    let help = String::from_utf8_lossy(&out.stdout).replace(['\n', ' '], "");
    for said in [
        "Byvalue,as[REDACTED:env:NAME]",
        "PASSWORD,PASSWD,SECRET,TOKENorCREDENTIALorendsinKEY",
        "8bytesormore",
        "JSON-escaped",
        "Byname,as[REDACTED:assignment]",
        "Bypattern,as[REDACTED:kind]",
        "OpenRouter",
        "whsec_",
        "Supabase",
        "Tavily",
        "Telegram",
        "Twilio",
        "AccountKey=",
        "sig=",
        "Discord",
        "SendGrid",
        "Databricks",
        "DigitalOcean",
        "Linear",
        "Notion",
        "Shopify",
        "PyPI",
        "Doppler",
        "Vercel",
        "Groq",
        "xAI",
        "Replicate",
        "PEMprivatekeys",
        "--redact-values<FILE>",
    ] {
        assert!(help.contains(said), "--help does not say {said:?}");
    }
}

/// Found by attacking `--redact`: a token right after a colour code (`\x1b[31mghp_…`, coloured
/// build output) was logged in clear, as text and inside JSON.
#[test]
fn a_token_in_coloured_output_is_not_logged() {
    let dir = common::tempdir("redact-colour");
    let log = dir.join("a.jsonl");
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let url = "https://user:p4ssw0rd@example.com/x";
    let mut input = Vec::new();
    for _ in 0..3 {
        input.extend_from_slice(format!("\x1b[31m{token}\x1b[0m\n\x1b[1m{url}\n").as_bytes());
        let json = serde_json::json!({"type": "user", "text": format!("\x1b[32m{token}")});
        input.extend_from_slice(format!("{json}\n").as_bytes());
    }
    let out = run_with_env(&["--redact", log.to_str().unwrap()], &input);
    assert!(out.status.success());
    assert_eq!(out.stdout, input, "stdout is never touched");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert_eq!(logged.lines().count(), 9);
    assert!(
        !logged.contains(token) && !logged.contains("p4ssw0rd"),
        "{logged}"
    );
    assert_eq!(logged.matches("[REDACTED:github_token]").count(), 6);
}

/// The filters in front of aho-corasick (the start literals' trigrams, the values' grams, the
/// reading thread's look ahead) only save work: with any of them switched off
/// (`SMART_TEE_REDACT_SKIP`, for benches/compare.sh `ONLY=filters`) the log is the same, byte
/// for byte, and holds no secret.
#[test]
fn each_filter_switched_off_finds_the_same() {
    let dir = common::tempdir("redact-skip");
    let mut input = input();
    // Short lines with no secret, between lines with one, for the look ahead to rule out.
    for k in 0..2000 {
        input.extend_from_slice(format!("{{\"type\":\"user\",\"n\":{k}}}\n").as_bytes());
        if k % 97 == 0 {
            input.extend_from_slice(format!("DEPLOY_TOKEN={}\n", ENV[2].1).as_bytes());
        }
    }
    let mut logs = Vec::new();
    for skip in ["", "trigrams", "grams", "scout", "trigrams,grams,scout"] {
        let log = dir.join(format!("skip-{skip}.jsonl"));
        let mut cmd = common::bin();
        cmd.arg("--redact")
            .arg(&log)
            .env("SMART_TEE_REDACT_SKIP", skip);
        for (name, value) in ENV {
            cmd.env(name, value);
        }
        let out = common::run_cmd(&mut cmd, &input);
        assert!(
            out.status.success(),
            "{skip}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let bytes = std::fs::read(&log).unwrap();
        assert_clean(&format!("the log with {skip:?} off"), &bytes);
        logs.push((skip, bytes));
    }
    for (skip, bytes) in &logs[1..] {
        assert!(*bytes == logs[0].1, "{skip} off changed the log");
    }
}

/// #49's attack: a line past 8 MiB is reduced while read, and its long string joins its first
/// and last bytes where the reduction cut it. Redacted, the join moved left (a 108-byte key
/// became a 24-byte label), the log line's cut kept bytes from both sides of it as one text,
/// and a secret there, cut by the reduction or glued to the bytes before it
/// (`ghp_Nghp_yK7Yl…`), reached the log. Replacements in a reduced line now keep its length.
#[test]
fn no_secret_shows_where_a_reduction_joined_a_long_string() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut chars = |n: usize| -> String {
        const AL: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        (0..n)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                char::from(AL[(seed % AL.len() as u64) as usize])
            })
            .collect()
    };
    let mut bodies = Vec::new();
    let mut region = |bodies: &mut Vec<String>| {
        let mut s = "a".repeat(15) + " ";
        while s.len() < 30_000 {
            let (start, body) = if bodies.len() % 3 == 2 {
                ("ghp_", chars(36))
            } else {
                ("sk-ant-api03-", chars(93) + "AA")
            };
            s.push_str(start);
            s.push_str(&body);
            s.push_str([", ", "\\n", " "][bodies.len() % 3]);
            bodies.push(body);
        }
        s
    };
    let head = region(&mut bodies);
    let tail = region(&mut bodies);
    let line = format!(
        r#"{{"type":"big","id":"x1","text":"{head}{}{tail}"}}"#,
        "x".repeat(9_000_000)
    );
    assert!(line.len() > smart_tee::tee::log::STREAM_CAP);
    let input = format!("{line}\n");
    let windows = crate::door::body_windows(&bodies);
    for budget in ["1024", "2048", "5120"] {
        let dir = common::tempdir(&format!("redact-joined-{budget}"));
        let log = dir.join("log");
        let out = common::run_cmd(
            common::bin()
                .env_remove("SMART_TEE_MAX_LINE_BYTES")
                .args(["--redact", "-b", budget])
                .arg(&log),
            input.as_bytes(),
        );
        assert!(out.status.success(), "{}", common::stderr(&out));
        let logged = std::fs::read(&log).unwrap();
        let logged = lines(&logged);
        assert_eq!(logged.len(), 1);
        let v = strict_parse(logged[0]).unwrap();
        assert_eq!(v["id"], "x1", "budget {budget}");
        crate::door::assert_clean(&format!("the log at budget {budget}"), logged[0], &windows);
    }
}

/// The lines #49's audit broke when a long line whose log line showed a secret was first
/// redacted in parts fed to a reduction (1 MiB parts, `Redactor::redact_in_parts`): the log
/// and the archive (decompressed here) of `line` under `--redact ARGS`.
fn logged_and_archived(name: &str, line: &str, args: &[&str]) -> (Vec<u8>, Vec<u8>) {
    let dir = common::tempdir(name);
    let (log, archive) = (dir.join("log.jsonl"), dir.join("a.zst"));
    let input = format!("{line}\n");
    // No secret values from the environment: where parts end depends on the longest.
    let out = common::run_cmd(
        common::bin()
            .env_clear()
            .arg("--redact")
            .args(args)
            .arg("--archive")
            .arg(&archive)
            .arg(&log),
        input.as_bytes(),
    );
    common::assert_copied(name, &out, input.as_bytes());
    let logged = std::fs::read(&log).unwrap();
    assert_eq!(lines(&logged).len(), 1, "{name}");
    strict_parse(lines(&logged)[0]).unwrap();
    let archived = zstd::stream::decode_all(std::fs::File::open(&archive).unwrap()).unwrap();
    (logged, archived)
}

/// A line of long strings with no secret whose log line's cut points fall in runs too long to
/// take apart (so the line is redacted whole) reduced to itself, and its reduction was sent
/// back to be redacted in parts, without end: the log worker grew to gigabytes and ignored
/// SIGTERM.
#[test]
fn a_long_line_of_long_runs_and_no_secret_is_logged_once() {
    let line = format!(
        r#"{{"type":"user","id":"r2","parts":[{}]}}"#,
        vec![format!("\"{}\"", "a".repeat(6000)); 200].join(",")
    );
    for budget in ["5120", "1M"] {
        let (log, _) = logged_and_archived("long-runs", &line, &["-b", budget]);
        assert!(log.len() <= 1 << 20, "{budget}: {}", log.len());
    }
}

/// A part ended between an escape's backslash and its letter (`\` | `neyJ…`), where no token
/// starts: a JWT of 6.6 KB after `\n` at the end of a part kept its tail, signature and all, in
/// the log, and a 40-character token there went whole to the archive (which parts long lines
/// the same way).
#[test]
fn a_token_after_an_escape_at_the_end_of_a_part_is_redacted() {
    let part = smart_tee::cut::redact::PART;
    let signature = "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
    let jwt = format!(
        "eyJhbGciOiJIUzI1NiJ9.eyJ{}.{signature}",
        "Z3JvdXBz".repeat(820)
    );
    let github = "ghp_Zq9WkR3mT7vXy2Lp8Nc4Hd6Fb1Gj5Ks0Ua7E";
    let pre = r#"{"type":"user","id":"u1","text":""#;
    for (token, shown) in [(jwt.as_str(), signature), (github, github)] {
        for escape in [r"\n", r"\t", r"\u001b[31m"] {
            // The escape's backslash a little before where a part may end (its length less
            // 4 KiB looked past for a secret across the cut), the token across that point.
            let at = part - 4096 - escape.len() - 20;
            let fill: String = "lorem ipsum ".repeat(at / 12 + 1)[..at - pre.len()].into();
            let line = format!(
                r#"{pre}{fill}{escape}{token}/{}","more":"{}"}}"#,
                "Q".repeat(100),
                "y ".repeat(700_000)
            );
            let (log, archive) = logged_and_archived("escape-at-part-end", &line, &[]);
            for (what, text) in [("log", &log), ("archive", &archive)] {
                assert!(
                    memchr::memmem::find(text, shown.as_bytes()).is_none(),
                    "{escape} {}…: the {what} shows {shown}",
                    &token[..8]
                );
            }
        }
    }
}

/// A reduction keeps an object's first 256 members: a line whose `id`, `error` and
/// `timestamp` came after 300 others lost them, and `--add-timestamp` then wrote the time it
/// was read in place of the line's own.
#[test]
fn a_long_line_redacted_keeps_the_members_a_reduction_would_drop() {
    let filler: Vec<String> = (0..300)
        .map(|i| format!(r#""f{i}":"{}""#, "x".repeat(4000)))
        .collect();
    let line = format!(
        r#"{{"type":"user","msg":"ghp_Zq9WkR3mT7vXy2Lp8Nc4Hd6Fb1Gj5Ks0Ua7E {}",{},"id":"ID-AT-END","error":"ERR-AT-END","timestamp":"2026-01-01T00:00:00Z"}}"#,
        "m".repeat(100),
        filler.join(",")
    );
    for args in [&[][..], &["--add-timestamp"], &["-b", "64K"]] {
        let (log, _) = logged_and_archived("many-members", &line, args);
        let v = strict_parse(lines(&log)[0]).unwrap();
        assert_eq!(v["id"], "ID-AT-END", "{args:?}");
        assert_eq!(v["error"], "ERR-AT-END", "{args:?}");
        assert_eq!(v["timestamp"], "2026-01-01T00:00:00Z", "{args:?}");
        assert!(memchr::memmem::find(&log, b"ghp_").is_none(), "{args:?}");
    }
}

/// #49's audit of keys written over lines of text: what a footer or a header line keeps beside
/// the key was logged as written (a token after a footer, before a header, a whole key after a
/// footer), a key opened right after a footer on the same line was not one, a line of the body
/// that starts as JSON does (`kubectl logs --prefix`) ended the block, and the archive
/// counted the blank lines of a block that the log passes by (so it closed the block early and
/// showed the last lines of a long key). Neither the log nor the archive shows a body line or
/// the token now.
#[test]
fn what_a_keys_footer_or_header_line_keeps_beside_it_is_redacted() {
    let body = |i: usize| format!("{KEY_BODY}{i:04}");
    let token = "ghp_R4nd0mT0kenF0rTest1ngOnlyAbCdEfGh1234";
    let blanks: String = (0..120).map(|i| format!("{}\n\n", body(i))).collect();
    let cases = [
        (
            "footer_then_header",
            format!(
                "{KEY_HEADER}\n{}\n{KEY_FOOTER}{KEY_HEADER}\n{}\n{}\n{KEY_FOOTER}\n",
                body(1),
                body(2),
                body(3)
            ),
        ),
        (
            "token_after_footer",
            format!("{KEY_HEADER}\n{}\n{KEY_FOOTER} token={token}\n", body(1)),
        ),
        (
            "token_before_header",
            format!(
                "token={token} key={KEY_HEADER}\n{}\n{KEY_FOOTER}\n",
                body(1)
            ),
        ),
        (
            "whole_key_after_footer",
            format!(
                "{KEY_HEADER}\n{}\n{KEY_FOOTER} {KEY_HEADER}{}{KEY_FOOTER}\n",
                body(1),
                body(2)
            ),
        ),
        (
            "blank_lines_in_the_body",
            format!("a\n{KEY_HEADER}\n{blanks}{KEY_FOOTER}\nafter\n"),
        ),
        (
            "kubectl_prefixes",
            format!(
                "[pod/a/c] {KEY_HEADER}\n[pod/a/c] {}\n[pod/a/c] {}\n[pod/a/c] {KEY_FOOTER}\n",
                body(1),
                body(2)
            ),
        ),
    ];
    for (name, input) in cases {
        let dir = common::tempdir(name);
        let (log, archive) = (dir.join("log.jsonl"), dir.join("a.zst"));
        let out = common::run_cmd(
            common::bin()
                .env_clear()
                .arg("--redact")
                .arg("--archive")
                .arg(&archive)
                .arg(&log),
            input.as_bytes(),
        );
        common::assert_copied(name, &out, input.as_bytes());
        let logged = String::from_utf8_lossy(&std::fs::read(&log).unwrap()).into_owned();
        let archived = zstd::stream::decode_all(std::fs::File::open(&archive).unwrap()).unwrap();
        let archived = String::from_utf8_lossy(&archived).into_owned();
        for (what, text) in [("log", &logged), ("archive", &archived)] {
            assert!(
                !text.contains(KEY_BODY),
                "{name}: the {what} shows a body line: {text}"
            );
            assert!(
                !text.contains(token),
                "{name}: the {what} shows the token: {text}"
            );
            assert!(text.contains("[REDACTED:private_key]"), "{name}: {what}");
        }
    }
}
