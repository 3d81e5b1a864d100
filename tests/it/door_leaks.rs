//! The leaks a second attack on the door found (#46), each named after what leaked. Every test
//! fails on the build before its fix (run them against another build with `SMART_TEE_TEST_BIN`).

use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::{self, lines};
use crate::door::{Case, ENV_NAME, Rng, assert_clean, body_windows, run, unarchive};

/// A GitHub token whose body must never show, 9 bytes at a time.
const BODY: &str = "0123456789abcdefghijABCDEFGHIJ012345";

/// `smart-tee --redact --archive LOG.orig.zst LOG` on `line`, stdin the regular file it is
/// written to (the same reads, and so the same parts of a long line, on every run). Returns the
/// paths of the log and the archive.
fn redact_and_archive_from_a_file(case: &Case, line: &str) -> (String, String) {
    let input = case.path("input.jsonl");
    std::fs::write(&input, line).unwrap();
    let (log, archive) = (case.path("a.jsonl"), case.path("a.jsonl.orig.zst"));
    let out = crate::door::bin(&case.secrets)
        .args(["--redact", "--archive", &archive, &log])
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map(common::output_timeout)
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (log, archive)
}

/// A secret written with `\uXXXX` escapes (as Go, .NET or a hostile writer may) was left whole in
/// the log, the archive, every view and `--original`.
#[test]
fn a_secret_written_with_unicode_escapes_is_redacted_on_every_surface() {
    let case = Case::new("leak-escapes", 0x1eac_0001, 0, 5);
    let env = &case.secrets.env_value;
    let escaped_env: String = env
        .chars()
        .map(|c| format!("\\u{:04X}", c as u32))
        .collect();
    let long = "filler ".repeat(2000);
    let input = format!(
        "{{\"type\":\"user\",\"text\":\"push gh\\u0070_{BODY} and {escaped_env} {long} \
         url postgres:\\\\\\/\\\\\\/admin:Q7kS3cretPassw0rd@db end\"}}\n"
    );
    let log = case.path("a.jsonl");
    let archive = format!("{log}.orig.zst");
    let out = run(
        &case.secrets,
        &["--redact", "-b", "2048", "--archive", &archive, &log],
        input.as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout == input.as_bytes(), "stdout is untouched");
    let w = body_windows(&[BODY, env.as_str(), "Q7kS3cretPassw0rd"]);
    let logged = std::fs::read(&log).unwrap();
    assert_clean("the log", &logged, &w);
    assert!(String::from_utf8_lossy(&logged).contains(&format!("[REDACTED:env:{ENV_NAME}]")));
    assert_clean("the archive", &unarchive(&archive), &w);
    // The same stream logged without --redact, read back with it.
    let raw = case.path("raw.jsonl");
    let raw_archive = format!("{raw}.orig.zst");
    run(
        &case.secrets,
        &["-b", "2048", "--archive", &raw_archive, &raw],
        input.as_bytes(),
    );
    for args in [
        vec!["--view", "--format", "jsonl", &raw],
        vec!["--view", "--format", "json", &raw],
        vec!["--view", &raw],
        vec!["--view", "--original", "--line", "1", &raw],
        vec!["--summary", &raw],
    ] {
        let out = case.read(&args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_clean(&format!("{args:?}"), &out.stdout, &w);
    }
}

/// A last line the input ended inside (`kill` mid-line) kept the part of a token before the
/// end: no pattern matches a part, so the log, the archive and `--progress` showed it.
#[test]
fn a_last_line_cut_by_the_end_of_input_keeps_no_part_of_a_secret() {
    let case = Case::new("leak-eof", 0x1eac_0002, 0, 5);
    let log = case.path("a.jsonl");
    let (archive, progress) = (format!("{log}.orig.zst"), case.path("progress.txt"));
    let input = format!("{{\"a\":1}}\n{{\"a\":\"key ghp_{}", &BODY[..24]);
    let out = run(
        &case.secrets,
        &[
            "--redact",
            "--archive",
            &archive,
            &format!("--progress={progress}"),
            &log,
        ],
        input.as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let w = body_windows(&[&BODY[..24]]);
    let logged = std::fs::read(&log).unwrap();
    assert_eq!(lines(&logged).len(), 2, "one log line a line");
    assert_clean("the log", &logged, &w);
    assert_clean("the archive", &unarchive(&archive), &w);
    assert_clean("--progress", &std::fs::read(&progress).unwrap(), &w);
    // A complete JSON last line without its newline is whole: nothing is taken from it.
    let whole = case.path("whole.jsonl");
    run(
        &case.secrets,
        &["--redact", &whole],
        b"{\"a\":\"last words\"}",
    );
    assert_eq!(std::fs::read(&whole).unwrap(), b"{\"a\":\"last words\"}\n");
}

/// `-a --redact` cut the torn line's end (by the longest secret value) before redacting it, so
/// a whole token near the end lost its tail and was no longer one: its head was kept.
#[test]
fn a_torn_record_is_redacted_before_its_end_is_left_out() {
    let case = Case::new("leak-torn-order", 0x1eac_0003, 0, 5);
    let log = case.path("a.jsonl");
    // A token, then fewer bytes than the environment value is long (23), then the tear.
    std::fs::write(
        &log,
        format!("{{\"a\":1}}\n{{\"b\":\"x ghp_{BODY} and then"),
    )
    .unwrap();
    let out = run(&case.secrets, &["-a", "--redact", &log], b"{\"c\":3}\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read(&log).unwrap();
    assert!(String::from_utf8_lossy(&text).contains("\"type\":\"torn\""));
    let w = body_windows(&[BODY]);
    assert_clean("the torn record", &text, &w);
    assert_eq!(lines(&text).len(), 3);
}

/// `--view --redact -` copied standard input raw into `$TMPDIR/smart-tee-stdin-PID`, which a
/// `kill -9` left behind. The copy now has no name from the start, and holds redacted lines.
#[test]
fn view_of_standard_input_leaves_no_copy_behind_a_kill() {
    let case = Case::new("leak-spool", 0x1eac_0004, 0, 5);
    let tmp = case.dir.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mut child = crate::door::bin(&case.secrets)
        .args(["--view", "--redact", "-"])
        .env("TMPDIR", &tmp)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(format!("{{\"a\":\"ghp_{BODY}\"}}\n").as_bytes())
        .unwrap();
    // Wait (bounded) until the copy is open: its descriptor shows under /proc.
    let fds = format!("/proc/{}/fd", child.id());
    let until = Instant::now() + common::CHILD_TIMEOUT;
    let spool = loop {
        let found = std::fs::read_dir(&fds).ok().and_then(|d| {
            d.flatten()
                .filter_map(|e| std::fs::read_link(e.path()).ok())
                .find(|t| t.starts_with(&tmp))
        });
        if let Some(found) = found {
            break found;
        }
        assert!(Instant::now() < until, "the copy of stdin never opened");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        spool.display().to_string().ends_with("(deleted)"),
        "{spool:?}"
    );
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "no name in TMPDIR"
    );
    child.kill().unwrap();
    common::wait_timeout(&mut child);
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "nothing left after kill -9"
    );
    // And the view of a piped stdin still reads it, redacted.
    let out = case.read(&["--view", "--format", "jsonl", "-"]);
    assert!(out.status.success());
    let piped = common::run_cmd(
        crate::door::bin(&case.secrets)
            .args(["--view", "--redact", "--format", "jsonl", "-"])
            .env("TMPDIR", &tmp),
        format!("{{\"a\":\"ghp_{BODY}\"}}\n{{\"b\":2}}\n").as_bytes(),
    );
    let shown = String::from_utf8_lossy(&piped.stdout);
    assert!(shown.contains("[REDACTED:github_token]"), "{shown}");
    assert!(shown.contains("\"b\":2"), "{shown}");
}

/// `smart-tee mcp --redact` printed clap's refusal of a flag (which quotes its value) past the
/// door: a secret given as a value came out.
#[test]
fn a_secret_in_a_refused_mcp_flag_is_redacted() {
    let case = Case::new("leak-mcp-flag", 0x1eac_0005, 0, 5);
    let out = run(
        &case.secrets,
        &["mcp", "--redact", &case.secrets.env_value],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("[REDACTED:env:{ENV_NAME}]")), "{err}");
    assert!(!err.contains(&case.secrets.env_value), "{err}");
}

/// `--compact --redact` left a compressed log that needed no cut as it was ("unchanged"),
/// secrets and all; refused a plain one whose labels are longer than its secrets ("would make it
/// larger"); and copied a plain log's unfinished last line raw.
#[test]
fn compact_with_redact_redacts_every_log_it_is_given() {
    let case = Case::new("leak-compact", 0x1eac_0006, 0, 5);
    let short = &case.secrets.env_value;
    let log = format!(
        "{{\"a\":\"{short}\"}}\n{{\"b\":\"ghp_{BODY}\"}}\n{{\"c\":\"key ghp_{}",
        &BODY[..20]
    );
    let plain = case.path("plain.jsonl");
    std::fs::write(&plain, &log).unwrap();
    let zst = case.path("packed.jsonl.zst");
    let whole = log.rsplit_once('\n').unwrap().0.to_string() + "\n";
    std::fs::write(&zst, zstd::stream::encode_all(whole.as_bytes(), 3).unwrap()).unwrap();
    let w = body_windows(&[&BODY[..20], short.as_str()]);
    for (path, n) in [(&plain, 3), (&zst, 2)] {
        let out = case.read(&["--compact", path]);
        assert!(
            out.status.success(),
            "{path}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let after = std::fs::read(path).unwrap();
        let after = if path.ends_with(".zst") {
            zstd::stream::decode_all(&after[..]).unwrap()
        } else {
            after
        };
        assert_eq!(lines(&after).len(), n, "{path}");
        assert_clean(&format!("--compact --redact of {path}"), &after, &w);
    }
}

/// The archive of a line past the memory cap was redacted in parts that ended at a `"`, or,
/// with none in the last MiB, at the end of each piece read: a token across a part's end was
/// split in two that no pattern knows, and both were kept.
#[test]
fn the_archive_of_a_line_past_the_memory_cap_splits_no_secret() {
    let case = Case::new("leak-archive-big", 0x1eac_0007, 0, 5);
    let mut rng = Rng(0x1eac);
    // Tokens back to back, one space between: every end of a part falls in one, or on a space.
    let mut line = String::from("{\"a\":\"");
    while line.len() < 9 << 20 {
        line.push_str(&format!("ghp_{} ", rng.alnum(36)));
    }
    line.push_str("\"}\n");
    let (_, archive) = redact_and_archive_from_a_file(&case, &line);
    let archived = String::from_utf8(unarchive(&archive)).unwrap();
    assert_eq!(archived.matches('\n').count(), 1);
    // Any token body's tail: what a split leaves after the part's end.
    let leaked = archived
        .split([' ', '"', ':', '\n'])
        .filter(|w| !w.is_empty() && !w.starts_with("[REDACTED") && !w.starts_with('{'))
        .filter(|w| !w.starts_with("github_token]") && *w != "a" && *w != "}")
        .take(3)
        .collect::<Vec<_>>();
    assert!(
        leaked.is_empty(),
        "parts of tokens in the archive: {leaked:?}"
    );
}

/// A base64url run of `n` characters from `rng`.
fn b64url(rng: &mut Rng, n: usize) -> String {
    let set = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    (0..n).map(|_| set[rng.below(set.len())] as char).collect()
}

/// A PEM private key of `lines` body lines of 64 characters, and its body.
fn pem(rng: &mut Rng, lines: usize) -> (String, String) {
    let body: Vec<String> = (0..lines)
        .map(|_| b64url(rng, 64).replace(['-', '_'], "+"))
        .collect();
    let key = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        body.join("\n")
    );
    (key, body.concat())
}

/// Found by the third attack: in a line past the 8 MiB memory cap, the log line's tail began
/// inside a private key (whose body runs over many `\n`s) or a JWT longer than 4 KiB, and only
/// the run of bytes up to the first `\n` or the first 4 KiB were left out: the rest showed.
#[test]
fn a_long_secret_cut_by_a_giant_lines_excerpt_leaves_no_part() {
    let case = Case::new("leak-giant-excerpt", 0x1eac_0008, 0, 5);
    let mut rng = Rng(0x91a7);
    let (key, key_body) = pem(&mut rng, 20);
    let (sig, payload) = (b64url(&mut rng, 342), b64url(&mut rng, 6000));
    let jwt = format!("eyJhbGciOiJSUzI1NiJ9.eyJ{payload}.{sig}");
    for (k, secret) in [key.clone(), format!("tok={jwt} ")].iter().enumerate() {
        let filler = "x ".repeat(4_400_000);
        let line = serde_json::json!({"type": "user", "text": format!("{filler}{secret}{secret}")});
        let log = case.path(&format!("g{k}.jsonl"));
        let out = run(
            &case.secrets,
            &["--redact", "-b", "2048", &log],
            format!("{line}\n").as_bytes(),
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let logged = std::fs::read(&log).unwrap();
        assert_eq!(lines(&logged).len(), 1);
        let bodies = [
            key_body.clone(),
            sig.clone(),
            payload[payload.len() - 200..].to_string(),
        ];
        assert_clean("the giant line's log line", &logged, &body_windows(&bodies));
    }
}

/// Found by the third attack: the archive of a line past the memory cap was redacted in parts
/// whose ends looked back 4 KiB for a secret across them: a JWT longer than that, across an
/// end, was split in two parts no pattern knows.
#[test]
fn the_archive_of_a_giant_line_splits_no_long_jwt() {
    let case = Case::new("leak-archive-jwt", 0x1eac_0009, 0, 5);
    let mut rng = Rng(0x5eed);
    let mut text = "x ".repeat(4_400_000);
    let mut sigs = Vec::new();
    for _ in 0..200 {
        let sig = b64url(&mut rng, 342);
        text.push_str(&format!(
            " tok=eyJhbGciOiJSUzI1NiJ9.eyJ{}.{sig}",
            b64url(&mut rng, 8000)
        ));
        sigs.push(sig);
    }
    let line = format!("{}\n", serde_json::json!({"type": "user", "text": text}));
    let (_, archive) = redact_and_archive_from_a_file(&case, &line);
    let archived = unarchive(&archive);
    assert_eq!(archived.iter().filter(|&&b| b == b'\n').count(), 1);
    assert_clean("the archive", &archived, &body_windows(&sigs));
}

/// Found by the third attack: a private key written as lines of text (`cat key.pem` in a
/// stream that mixes text and JSON) was logged and archived line by line in clear: no line
/// holds a whole key.
#[test]
fn a_private_key_over_several_lines_of_text_is_redacted() {
    let case = Case::new("leak-pem-lines", 0x1eac_000a, 0, 5);
    let mut rng = Rng(0x7e3);
    let (key, body) = pem(&mut rng, 12);
    let input = format!("build ok\nkey: {key}{{\"a\":1}}\nafter\n");
    let (log, archive) = (case.path("a.jsonl"), case.path("a.jsonl.orig.zst"));
    let out = run(
        &case.secrets,
        &["--redact", "--archive", &archive, &log],
        input.as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let logged = std::fs::read(&log).unwrap();
    assert_eq!(
        lines(&logged).len(),
        input.lines().count(),
        "one log line a line"
    );
    let w = body_windows(&[body]);
    assert_clean("the log", &logged, &w);
    let archived = unarchive(&archive);
    assert_clean("the archive", &archived, &w);
    let text = String::from_utf8_lossy(&logged);
    assert!(text.contains("key: [REDACTED:private_key]"), "{text}");
    assert!(text.contains("{\"a\":1}") && text.contains("after") && text.contains("build ok"));
}

/// Found by the third attack: a secret holding a character past U+FFFF (an emoji) is written as
/// a surrogate pair in JSON (upper-case by .NET, escaped twice in JSON inside JSON); neither half
/// is a character, so the value was left whole.
#[test]
fn a_secret_with_a_surrogate_pair_is_redacted() {
    let case = Case::new("leak-surrogate", 0x1eac_000b, 0, 5);
    let value = "Kx9Qm2\u{1F600}Lp7Wz4Rt8Vb3";
    let input = "{\"a\":\"v=Kx9Qm2\\uD83D\\uDE00Lp7Wz4Rt8Vb3\"}\n\
                 {\"t\":\"{\\\"a\\\":\\\"Kx9Qm2\\\\ud83d\\\\ude00Lp7Wz4Rt8Vb3\\\"}\"}\n";
    let log = case.path("a.jsonl");
    let out = crate::door::bin(&case.secrets)
        .env("MY_DB_PASSWORD", value)
        .args(["--redact", &log])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map(|mut c| {
            c.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
            common::output_timeout(c)
        })
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let logged = String::from_utf8(std::fs::read(&log).unwrap()).unwrap();
    assert_eq!(
        logged.matches("[REDACTED:env:MY_DB_PASSWORD]").count(),
        2,
        "{logged}"
    );
    assert!(!logged.contains("Lp7Wz4Rt8Vb3"), "{logged}");
}

/// Found by the third attack: the MCP server redacted whole answer lines, its `id` too, so a
/// client whose request id was token-shaped could not match the answer to its request.
#[test]
fn an_mcp_answer_keeps_the_id_its_client_sent() {
    let case = Case::new("leak-mcp-id", 0x1eac_000c, 0, 5);
    let id = format!("ghp_{BODY}");
    let request = serde_json::json!({"jsonrpc":"2.0","id":id,"method":"ping"});
    let root = case.dir.display().to_string();
    let out = run(
        &case.secrets,
        &["mcp", "--redact", "--root", &root],
        format!("{request}\n").as_bytes(),
    );
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["id"], serde_json::json!(id));
}

/// Found by the fourth attack: a private key whose block is not whole in its string (`head -4
/// id_rsa`, a key split between two lines, a header in a JSON line and the body as text lines)
/// was shown on every surface: the pattern needs both its header and its footer.
#[test]
fn a_private_key_cut_before_its_footer_or_after_its_header_is_redacted() {
    let case = Case::new("leak-pem-parts", 0x1eac_000d, 0, 5);
    let mut rng = Rng(0xbee);
    let bodies: Vec<String> = (0..8)
        .map(|_| b64url(&mut rng, 64).replace(['-', '_'], "+"))
        .collect();
    let b = &bodies;
    let input = format!(
        "{{\"type\":\"user\",\"content\":\"$ head -4 id_rsa\\n-----BEGIN RSA PRIVATE KEY-----\\n{}\\n{}\\n\"}}\n\
         {{\"private_key\":\"-----BEGIN PRIVATE KEY-----\\n{}\",\"next\":1}}\n\
         {{\"t\":\"key:\\n-----BEGIN OPENSSH PRIVATE KEY-----\\n{}\"}}\n\
         {{\"t\":\"{}\\n-----END OPENSSH PRIVATE KEY-----\\n\",\"u\":1}}\n\
         {{\"type\":\"user\",\"text\":\"-----BEGIN RSA PRIVATE KEY-----\"}}\n{}\n{}\n-----END RSA PRIVATE KEY-----\n",
        b[0], b[1], b[2], b[3], b[4], b[5], b[6]
    );
    let (log, archive) = (case.path("a.jsonl"), case.path("a.jsonl.orig.zst"));
    let out = run(
        &case.secrets,
        &["--redact", "--archive", &archive, &log],
        input.as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let w = body_windows(&bodies[..7]);
    let logged = std::fs::read(&log).unwrap();
    assert_eq!(lines(&logged).len(), input.lines().count());
    assert_clean("the log", &logged, &w);
    assert_clean("the archive", &unarchive(&archive), &w);
    let text = String::from_utf8_lossy(&logged);
    assert!(
        text.contains("\"next\":1") && text.contains("\"u\":1"),
        "{text}"
    );
    // A log written without --redact, read back with it.
    let raw = case.path("raw.jsonl");
    run(&case.secrets, &[&raw], input.as_bytes());
    let out = case.read(&["--view", "--format", "jsonl", &raw]);
    let json_lines: Vec<&str> = input.lines().take(5).collect();
    let w_json = body_windows(&bodies[..5]);
    assert_clean("--view --redact of the JSON lines", &out.stdout, &w_json);
    assert_eq!(json_lines.len(), 5);
}

/// Found by an audit of #49: a private key's header at the end of a line past the 8 MiB memory
/// cap (read in pieces, never whole) opened no block, so the key's body lines after it were
/// logged and archived in clear. The cases: a line of text, a JSON line whose string ends in
/// the header, and a header across where a 256 KiB read would end, read from a file (the unit test
/// `a_line_in_pieces_says_what_the_whole_line_says_of_keys` splits one at every byte).
#[test]
fn a_key_header_at_the_end_of_a_line_past_the_memory_cap_opens_its_block() {
    let case = Case::new("leak-pem-big-line", 0x1eac_0010, 0, 5);
    let mut rng = Rng(0xb16);
    let big = 9 << 20;
    let mut bodies = Vec::new();
    let mut input = String::new();
    let heads = [
        format!("{} -----BEGIN RSA PRIVATE KEY-----", "x".repeat(big)),
        format!(
            "{{\"t\":\"{} -----BEGIN RSA PRIVATE KEY-----\"}}",
            "y".repeat(big)
        ),
        // The line starts at a multiple of 256 KiB, the header 10 bytes before one.
        format!(
            "{}-----BEGIN EC PRIVATE KEY-----",
            "z".repeat(big + (1 << 18) - 10 - 5)
        ),
    ];
    for head in heads {
        let pad = (1 << 18) - input.len() % (1 << 18);
        input.push_str(&"\n".repeat(pad));
        input.push_str(&head);
        input.push('\n');
        for _ in 0..3 {
            let body = b64url(&mut rng, 64).replace(['-', '_'], "+");
            input.push_str(&body);
            input.push('\n');
            bodies.push(body);
        }
        input.push_str("-----END RSA PRIVATE KEY-----\nafter\n");
    }
    let (log, archive) = redact_and_archive_from_a_file(&case, &input);
    let logged = std::fs::read(&log).unwrap();
    let w = body_windows(&bodies);
    assert_clean("the log", &logged, &w);
    assert_clean("the archive", &unarchive(&archive), &w);
    let text = String::from_utf8_lossy(&logged);
    assert_eq!(
        text.matches("\"after\"").count(),
        3,
        "a footer ends each block"
    );
}

/// Found by a review of #49: a private key written as lines of text in a log written without
/// `--redact` was shown by every reader with `--redact`: each line was redacted alone, and a
/// body line alone is no key's. Here the readers the property `no_surface_shows_a_secret` does
/// not run: a log given on standard input, and `--follow` from inside a block (its body comes
/// after the follow began).
#[test]
fn a_key_as_lines_of_text_in_a_log_written_without_redact_is_redacted_on_read() {
    let case = Case::new("leak-pem-read", 0x1eac_0011, 0, 5);
    let mut rng = Rng(0x4ead);
    let (key, body) = pem(&mut rng, 6);
    let (head, rest) = key.split_at(key.find('\n').unwrap() + 1);
    let (log, archive) = (case.path("raw.jsonl"), case.path("raw.jsonl.orig.zst"));
    let input = format!("hello\n{key}after\n");
    run(
        &case.secrets,
        &["--archive", &archive, &log],
        input.as_bytes(),
    );
    let w = body_windows(&[body]);
    let logged = std::fs::read(&log).unwrap();
    let read = run(&case.secrets, &["--redact", "--view", "-"], &logged);
    assert!(read.status.success());
    assert_clean("--view - of the log", &read.stdout, &w);
    assert_eq!(
        lines(&read.stdout).len(),
        10,
        "{}",
        String::from_utf8_lossy(&read.stdout)
    );
    // Each line's original, alone and all together, and MCP's read_original.
    let all = run(
        &case.secrets,
        &["--redact", "--view", "--original", "--line", "1-10", &log],
        b"",
    );
    assert!(
        all.status.success(),
        "{}",
        String::from_utf8_lossy(&all.stderr)
    );
    assert_clean("--original 1-10", &all.stdout, &w);
    let mut calls = Vec::new();
    for n in 1..=10u64 {
        let one = run(
            &case.secrets,
            &[
                "--redact",
                "--view",
                "--original",
                "--line",
                &n.to_string(),
                &log,
            ],
            b"",
        );
        assert!(one.status.success());
        assert_clean(&format!("--original {n}"), &one.stdout, &w);
        calls.push((
            "read_original",
            serde_json::json!({"path": "raw.jsonl", "line": n}),
        ));
    }
    for answer in crate::door::mcp(&case, &calls) {
        assert!(answer.contains("original"), "{answer}");
        assert_clean("MCP read_original", answer.as_bytes(), &w);
    }

    // --follow: the header is the log's last line when it starts.
    let followed = case.path("followed.jsonl");
    run(
        &case.secrets,
        &[&followed],
        format!("hello\n{head}").as_bytes(),
    );
    let mut child = common::Reaped(
        crate::door::bin(&case.secrets)
            .args([
                "--redact", "--view", "--follow", "--format", "jsonl", &followed,
            ])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let rx = crate::view::lines_of(child.0.stdout.take().unwrap());
    let next = || crate::view::next(&rx);
    assert!(next().contains("hello"));
    assert!(next().contains("[REDACTED:private_key]"));
    // The rest of the key comes after the follower read the log's end.
    let more = case.path("more.jsonl");
    run(&case.secrets, &[&more], format!("{rest}after\n").as_bytes());
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&followed)
        .unwrap();
    f.write_all(&std::fs::read(&more).unwrap()).unwrap();
    let mut seen = String::new();
    for _ in 0..8 {
        seen.push_str(&next());
        seen.push('\n');
    }
    child.0.kill().unwrap();
    common::wait_timeout(&mut child.0);
    assert_clean("--follow", seen.as_bytes(), &w);
    assert!(seen.ends_with("\"text\":\"after\"}\n"), "{seen}");
}

/// A private key as lines of text, each line after `prefix`, with 25 body lines.
fn key_lines(prefix: &str) -> (String, Vec<String>) {
    let bodies: Vec<String> = (1..=25)
        .map(|i| format!("BODY{i:02}xQ7vR2mZ9kL4pW8nT3yB6cF1hJ5gD0sA2eU7iO9qX4zV8wY3rN6mK1tP"))
        .collect();
    let mut key = format!("{prefix}-----BEGIN RSA PRIVATE KEY-----\n");
    for b in &bodies {
        key.push_str(&format!("{prefix}{b}\n"));
    }
    key.push_str(&format!("{prefix}-----END RSA PRIVATE KEY-----\n"));
    (key, bodies)
}

/// `--view` with `--redact` and `args` of `file`; fails unless it succeeds.
fn view_redacted(case: &Case, args: &[&str], file: &str) -> Vec<u8> {
    let mut all = vec!["--redact", "--view"];
    all.extend_from_slice(args);
    all.push(file);
    let out = run(&case.secrets, &all, b"");
    assert!(
        out.status.success(),
        "{all:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Found by an audit of the read side's key blocks: lines that start as JSON does but are not
/// (`kubectl logs --prefix` writes `[pod/x] `) were taken for JSON lines by the readers from
/// the end and by the originals, so their body lines showed; blank lines counted in the look
/// back; a JSON line in the block that was not UTF-8 reads as JSON in the log's record and
/// ended the block on every reader; the look back stopped at a certificate's header inside a
/// block (a second audit).
#[test]
fn a_keys_lines_of_text_are_followed_by_the_readers_as_the_writer_follows_them() {
    let case = Case::new("leak-pem-read-kinds", 0x1eac_0012, 0, 5);
    let (pod, pod_bodies) = key_lines("[pod/x] ");
    let (plain, bodies) = key_lines("");
    let w = body_windows(&[&pod_bodies[..], &bodies[..]].concat());
    // Prefixed lines: the log's originals, and a raw file read from its end.
    let input = format!("{{\"type\":\"system\"}}\n{pod}after\n");
    let (log, archive) = (case.path("pod.jsonl"), case.path("pod.jsonl.orig.zst"));
    run(
        &case.secrets,
        &["--archive", &archive, &log],
        input.as_bytes(),
    );
    assert_clean(
        "--original 1-29",
        &view_redacted(&case, &["--original", "--line", "1-29"], &log),
        &w,
    );
    for n in ["3", "4", "27"] {
        assert_clean(
            "--original",
            &view_redacted(&case, &["--original", "--line", n], &log),
            &w,
        );
    }
    let raw = case.path("pod.log");
    std::fs::write(&raw, &input).unwrap();
    for n in ["1", "3", "10", "30"] {
        assert_clean(
            "--tail of a raw file",
            &view_redacted(&case, &["--tail", n], &raw),
            &w,
        );
    }
    // Blank lines inside a block: 200 of them between the header and the body.
    let blank = format!(
        "{{\"type\":\"system\"}}\n{}",
        plain.replacen('\n', &"\n".repeat(201), 1)
    );
    let raw = case.path("blank.log");
    std::fs::write(&raw, &blank).unwrap();
    for n in ["1", "5", "26"] {
        assert_clean(
            "--tail past blank lines",
            &view_redacted(&case, &["--tail", n], &raw),
            &w,
        );
    }
    // A certificate's header and footer inside a block are lines of it: the look back from
    // the end goes past them (it stopped there, and followed from outside a block).
    let cert = plain.replacen(
        &format!("{}\n", bodies[3]),
        &format!(
            "{}\n-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n",
            bodies[3]
        ),
        1,
    );
    let input = format!("{{\"type\":\"system\"}}\n{cert}");
    let (log, archive) = (case.path("cert.jsonl"), case.path("cert.jsonl.orig.zst"));
    run(
        &case.secrets,
        &["--archive", &archive, &log],
        input.as_bytes(),
    );
    for n in ["1", "3", "24"] {
        assert_clean(
            "--tail past a certificate",
            &view_redacted(&case, &["--tail", n], &log),
            &w,
        );
    }
    for n in ["8", "9", "20"] {
        assert_clean(
            "--original past a certificate",
            &view_redacted(&case, &["--original", "--line", n], &log),
            &w,
        );
    }
    // A line that is not UTF-8 but reads as JSON once made so, in the middle of a block.
    let (head, tail) = plain.split_at(plain.match_indices('\n').nth(5).unwrap().0 + 1);
    let mut bytes = b"{\"type\":\"system\"}\n".to_vec();
    bytes.extend_from_slice(head.as_bytes());
    bytes.extend_from_slice(b"{\"a\":\"\xff\"}\n");
    bytes.extend_from_slice(tail.as_bytes());
    let log = case.path("ff.jsonl");
    run(&case.secrets, &[&log], &bytes);
    for args in [&[][..], &["--tail", "5"], &["--format", "jsonl"]] {
        assert_clean(
            "a raw log with a line not UTF-8",
            &view_redacted(&case, args, &log),
            &w,
        );
    }
    let logged = case.path("ff-redacted.jsonl");
    run(&case.secrets, &["--redact", &logged], &bytes);
    assert_clean("the log", &std::fs::read(&logged).unwrap(), &w);
}

/// Found by the same audit: a line past the 8 MiB cap that only starts as JSON does was taken
/// for JSON and ended an open block in the log and the archive; a header at the end of a line
/// past the readers' 64 MiB cap was never seen by them; `--compact --redact` copied a torn
/// last line inside a block as it was.
#[test]
fn a_keys_block_holds_across_long_lines_and_a_torn_last_line() {
    let case = Case::new("leak-pem-long", 0x1eac_0013, 0, 5);
    let (pod, pod_bodies) = key_lines("[pod/a] ");
    let (plain, bodies) = key_lines("");
    let w = body_windows(&[&pod_bodies[..], &bodies[..]].concat());
    let (head, tail) = pod.split_at(pod.match_indices('\n').nth(5).unwrap().0 + 1);
    let input = format!(
        "{{\"type\":\"system\"}}\n{head}[pod/b] {}\n{tail}",
        "z".repeat(9 << 20)
    );
    let (log, archive) = redact_and_archive_from_a_file(&case, &input);
    assert_clean("the log", &std::fs::read(&log).unwrap(), &w);
    assert_clean("the archive", &unarchive(&archive), &w);

    // The header ends a line of 70 MB.
    let raw = case.path("long.log");
    std::fs::write(&raw, format!("{}{plain}after\n", "x".repeat(70_000_000))).unwrap();
    for args in [&[][..], &["--tail", "3"], &["--tail", "27"]] {
        assert_clean("a line past 64 MiB", &view_redacted(&case, args, &raw), &w);
    }
    std::fs::remove_file(&raw).unwrap();
    // Logged whole (-b 0): a line of 40 MB of quotes is a record of 80 MB, past the cap, which
    // --compact passes to its engine.
    let log = case.path("long.jsonl");
    let quotes = format!("{}{plain}after\n", "\"".repeat(40_000_000));
    let out = run(&case.secrets, &["-b", "0", &log], quotes.as_bytes());
    assert!(out.status.success());
    assert!(std::fs::metadata(&log).unwrap().len() > 80_000_000);
    let out = run(
        &case.secrets,
        &["--compact", "--redact", "-b", "5120", &log],
        b"",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_clean(
        "--compact of a record past 64 MiB",
        &std::fs::read(&log).unwrap(),
        &w,
    );
    std::fs::remove_file(&log).unwrap();

    let torn = case.path("torn.jsonl");
    let lines: String = (0..30).map(|_| "{\"type\":\"a\"}\n").collect();
    run(&case.secrets, &[&torn], lines.as_bytes());
    let head: String = plain.lines().take(5).map(|l| format!("{l}\n")).collect();
    run(&case.secrets, &["-a", &torn], head.as_bytes());
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&torn)
        .unwrap();
    write!(f, "{{\"type\":\"non_json\",\"text\":\"{}\"", bodies[10]).unwrap();
    drop(f);
    let out = run(&case.secrets, &["--compact", "--redact", &torn], b"");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_clean("--compact --redact", &std::fs::read(&torn).unwrap(), &w);
}

/// Found by the fourth attack: a file name was shortened before it was redacted (the table of
/// runs keeps its end, the summary's file field and the page's title their start), so the part
/// of a secret in the name that the cut left showed.
#[test]
fn a_secret_in_a_file_name_is_redacted_before_the_name_is_shortened() {
    let case = Case::new("leak-file-names", 0x1eac_000e, 0, 5);
    let token = format!("ghp_{BODY}");
    let one = "{\"type\":\"result\",\"subtype\":\"success\",\"session_id\":\"s\",\"total_cost_usd\":0.1}\n";
    let long = "d".repeat(170);
    std::fs::create_dir(case.dir.join(&long)).unwrap();
    let mut names = Vec::new();
    for i in 0..12 {
        let name = format!("{long}/run-{i}-{token}.jsonl");
        std::fs::write(case.dir.join(&name), one).unwrap();
        names.push(name);
    }
    let w = body_windows(&[BODY]);
    let values = case.values();
    for format in [
        &["--summary", "--by-run"][..],
        &["--summary", "--by-run", "--format", "csv"],
        &["--summary", "--by-run", "--format", "json"],
        &["--summary"],
        &["--summary", "--format", "json"],
        &["--view", "--format", "html"],
    ] {
        // Relative names, as a user in the logs' folder gives them.
        let out = common::run_cmd(
            crate::door::bin(&case.secrets)
                .current_dir(&case.dir)
                .args(["--redact", "--redact-values", &values])
                .args(format)
                .args(&names),
            b"",
        );
        assert!(
            out.status.success(),
            "{format:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_clean(&format!("{format:?}"), &out.stdout, &w);
    }
}

/// Found by the fourth attack: `--compact --redact --archive` archived the log's lines as
/// written, while the compaction rewrote them as the read side reads them: no original matched
/// its log line, and every `--original` was refused.
#[test]
fn compact_with_redact_and_archive_keeps_every_original_readable() {
    let case = Case::new("leak-compact-archive", 0x1eac_000f, 0, 5);
    let text = format!("tok ghp_{BODY} {} ghp_{BODY}", "x".repeat(3000));
    let line = format!("{}\n", serde_json::json!({"type": "user", "text": text}));
    let log = case.path("c.jsonl");
    run(
        &case.secrets,
        &["-b", "1024", &log],
        line.repeat(3).as_bytes(),
    );
    let archive = case.path("c.orig.zst");
    let out = case.read(&["--compact", "--archive", &archive, &log]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for n in ["1", "2", "3"] {
        let out = case.read(&[
            "--view",
            "--original",
            "--line",
            n,
            "--archive",
            &archive,
            &log,
        ]);
        assert!(
            out.status.success(),
            "line {n}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stdout.is_empty());
        let w = body_windows(&[BODY]);
        assert_clean("--original", &out.stdout, &w);
    }
}

/// Found by the read side's attack (#49): the report page's command for the events it left out
/// quoted the log's path for the shell and escaped it for HTML before redaction looked at it,
/// so a secret in the name holding `&`, `'`, `<` or `"` showed whole.
#[test]
fn a_secret_in_a_quoted_file_name_is_redacted_in_the_report_page() {
    let dir = common::tempdir("leak-quoted-name");
    let log = std::fs::read("tests/data/real/marot__spotter__agent-a2898e3.jsonl").unwrap();
    for value in [
        "Zq8xK2m&P9vL4nR7tW3",
        "Zq8x'K2mP9vL4nR7tW3",
        "Zq8x<K2mP9vL4nR7tW3",
        "Zq8x\"K2mP9vL4nR7tW3",
    ] {
        let name = format!("big-{value}.jsonl");
        std::fs::write(dir.join(&name), &log).unwrap();
        let out = common::run_cmd(
            common::bin()
                .current_dir(&dir)
                .env("DEPLOY_TOKEN", value)
                .args(["--view", "--redact", "--format", "html", "--max-tokens"])
                .args(["11000", &name]),
            b"",
        );
        assert!(out.status.success(), "{value}");
        let page = String::from_utf8_lossy(&out.stdout);
        assert!(
            page.contains("read them with"),
            "{value}: no events left out"
        );
        for part in ["Zq8x", "P9vL4nR7tW3"] {
            assert!(!page.contains(part), "{value}: {part} shows");
        }
    }
}
