//! The one door out (#46): with `--redact`, no surface shows a secret, or more than 8 bytes of
//! a secret's random body: the log, the archive, stderr (paths included), `--stats-json`,
//! `--progress=FILE`, `--view` in every format, `--original` whole and in pages, `--summary`
//! text and JSON, the HTML page and every MCP tool. Each leak once found has a test named after
//! it; one property test puts secrets of every kind at every offset of long strings and runs
//! every surface on the same log and archive (`SMART_TEE_DOOR_CASES` logs, 3 by default; `.ci/run`
//! runs 25). A full, non-blocking stderr costs neither the stream nor a log.

use std::path::Path;
use std::process::{Command, Output};

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::common::{self, lines, strict_parse};

/// A secret in smart-tee's environment (found by value) and one in a `--redact-values` file
/// under a name that says nothing (found by its shape).
pub(crate) const ENV_NAME: &str = "MY_API_TOKEN";
const DOTENV_NAME: &str = "WEIRDLY_NAMED";

/// A small deterministic generator (xorshift), so a failing case is its seed.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// `n` random characters of `set`.
    fn chars(&mut self, set: &[u8], n: usize) -> String {
        (0..n).map(|_| set[self.below(set.len())] as char).collect()
    }

    pub(crate) fn alnum(&mut self, n: usize) -> String {
        let set = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        let mut s = self.chars(set, n);
        // Upper, lower and a digit, so that a dotenv value has a key's shape.
        s.replace_range(0..3, "Q7k");
        s
    }
}

/// One secret as written in the stream, and its random body (what must never show, in any
/// 9-byte window).
#[derive(Clone, Debug)]
pub(crate) struct Planted {
    pub(crate) text: String,
    pub(crate) body: String,
}

/// The secrets of one case: the environment's and the dotenv file's values (fixed for the
/// case's processes) and a generator of every pattern family, by-name and URL credentials.
pub(crate) struct Secrets {
    pub(crate) env_value: String,
    pub(crate) dotenv_value: String,
}

impl Secrets {
    pub(crate) fn new(rng: &mut Rng) -> Secrets {
        Secrets {
            env_value: rng.alnum(23),
            dotenv_value: rng.alnum(16),
        }
    }

    /// A secret of kind `k` (of [`KINDS`]), fresh from `rng`.
    pub(crate) fn plant(&self, k: usize, rng: &mut Rng) -> Planted {
        let b64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let (text, body) = match k {
            0 => (self.env_value.clone(), self.env_value.clone()),
            1 => (self.dotenv_value.clone(), self.dotenv_value.clone()),
            2 => {
                let b = rng.alnum(36);
                (format!("ghp_{b}"), b)
            }
            3 => {
                let b = rng.alnum(40);
                (format!("sk-ant-api03-{b}"), b)
            }
            4 => {
                let b = rng.chars(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16);
                (format!("AKIA{b}"), b)
            }
            5 => {
                let b = format!("{}==", rng.chars(b64, 86));
                (
                    format!("DefaultEndpointsProtocol=https;AccountName=st;AccountKey={b};"),
                    b,
                )
            }
            6 => {
                let b = rng.alnum(20);
                (format!("DB_PASSWORD={b}"), b)
            }
            7 => {
                let b = rng.alnum(18);
                (format!("postgres://admin:{b}@db:5432/app"), b)
            }
            _ => {
                let b = rng.alnum(24);
                (format!("xoxb-{b}"), b)
            }
        };
        Planted { text, body }
    }
}

const KINDS: usize = 9;

/// Every 9-byte window of every body: none may show on any surface.
pub(crate) fn windows(planted: &[Planted]) -> Vec<String> {
    let mut w: Vec<String> = planted
        .iter()
        .flat_map(|p| {
            let b = p.body.as_bytes();
            (0..=b.len().saturating_sub(9))
                .map(move |i| String::from_utf8_lossy(&b[i..(i + 9).min(b.len())]).into_owned())
        })
        .collect();
    w.sort();
    w.dedup();
    w
}

/// Every 9-byte window of each of `bodies`: none may show on any surface.
pub(crate) fn body_windows(bodies: &[impl AsRef<str>]) -> Vec<String> {
    let planted: Vec<Planted> = bodies
        .iter()
        .map(|b| Planted {
            text: String::new(),
            body: b.as_ref().to_string(),
        })
        .collect();
    windows(&planted)
}

/// Fails when `bytes` (what `surface` showed) holds a 9-byte window of a secret's body.
pub(crate) fn assert_clean(surface: &str, bytes: &[u8], windows: &[String]) {
    let text = String::from_utf8_lossy(bytes);
    // Unescaped once, for surfaces that JSON-escape (a body has no character JSON escapes, but
    // `/` may be written `\/`).
    let text = text.replace("\\/", "/");
    // And with every `\uXXXX` of a printable character read, at any depth: a secret written
    // with escapes is one (#46).
    let text = format!("{text}\n{}", read_escapes(&text));
    // One pass for every window (a surface of megabytes against thousands of windows).
    let searcher = aho_corasick::AhoCorasick::new(windows).unwrap();
    if let Some(m) = searcher.find(text.as_str()) {
        let (w, at) = (&windows[m.pattern().as_usize()], m.start());
        {
            let from = text[..at]
                .char_indices()
                .rev()
                .nth(60)
                .map_or(0, |(i, _)| i);
            let end = (at + 60).min(text.len());
            let end = (end..=text.len())
                .find(|&e| text.is_char_boundary(e))
                .unwrap();
            panic!(
                "{surface} shows {w:?} of a secret, at byte {at}: …{}…",
                &text[from..end]
            );
        }
    }
}

/// `text` with each `\uXXXX` of a printable ASCII character (after any number of backslashes)
/// and each `\/` read: how the secret in `gh\u0070_…` shows.
fn read_escapes(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let run = b[i..].iter().take_while(|&&c| c == b'\\').count();
        if run > 0 {
            let after = i + run;
            if b.get(after) == Some(&b'/') {
                out.push(b'/');
                i = after + 1;
                continue;
            }
            let hex = b
                .get(after + 1..after + 5)
                .and_then(|h| std::str::from_utf8(h).ok());
            if b.get(after) == Some(&b'u')
                && let Some(c) = hex.and_then(|h| u8::from_str_radix(h, 16).ok())
                && (0x21..0x7F).contains(&c)
            {
                out.push(c);
                i = after + 5;
                continue;
            }
            out.extend_from_slice(&b[i..after]);
            i = after;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `bytes` with, for about one secret in three, one of its body's characters written as a
/// `\uXXXX` escape (JSON allows any character so; Go and .NET write some so): a search that
/// reads the text as written would not find it.
fn escape_some(bytes: Vec<u8>, planted: &[Planted], rng: &mut Rng) -> Vec<u8> {
    let mut text = String::from_utf8(bytes).unwrap();
    for p in planted {
        if rng.below(3) != 0 {
            continue;
        }
        let Some(k) = p.text.find(&p.body) else {
            continue;
        };
        let i = k + rng.below(p.body.len());
        let c = p.text.as_bytes()[i];
        let escaped = format!("{}\\u{:04x}{}", &p.text[..i], c, &p.text[i + 1..]);
        text = text.replacen(&p.text, &escaped, 1);
    }
    text.into_bytes()
}

/// A string of `n` secrets back to back, one space between: a cut at any point of it falls
/// inside a secret (or on a space), so every surface that cuts strings cuts one.
fn dense(
    secrets: &Secrets,
    kinds: &[usize],
    n: usize,
    rng: &mut Rng,
    planted: &mut Vec<Planted>,
) -> String {
    let mut s = String::new();
    for i in 0..n {
        let p = secrets.plant(kinds[i % kinds.len()], rng);
        s.push_str(&p.text);
        s.push(' ');
        planted.push(p);
    }
    s
}

/// A Claude Code stream of one run whose strings are dense with secrets: the prompt, the
/// assistant's text, a tool call's input, its result (long: cut at every budget, and an
/// original past 64 KiB for the page's excerpt), the final result; `pad` shifts every offset.
/// Then a private key's header and body as lines of text, the last lines of the stream.
fn stream(secrets: &Secrets, rng: &mut Rng, pad: usize, long: usize) -> (Vec<u8>, Vec<Planted>) {
    let mut planted = Vec::new();
    let all: Vec<usize> = (0..KINDS).collect();
    let mut one = |kinds: &[usize], n: usize, rng: &mut Rng| {
        format!(
            "{}{}",
            "p".repeat(pad) + " ",
            dense(secrets, kinds, n, rng, &mut planted)
        )
    };
    let prompt = one(&all, 12, rng);
    let text = one(&all, 30, rng);
    let command = one(&[2, 6, 7], 6, rng);
    let output = one(&all, long, rng);
    let answer = one(&all, 40, rng);
    let events = [
        json!({"type":"system","subtype":"init","session_id":"s-1","model":"claude-sonnet-4-5","cwd":"/w","tools":["Bash"]}),
        json!({"type":"user","message":{"role":"user","content":prompt},"session_id":"s-1"}),
        json!({"type":"assistant","message":{"id":"m1","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":text},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":command}}],"usage":{"input_tokens":10,"output_tokens":20}},"session_id":"s-1"}),
        json!({"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":output,"is_error":true}]},"session_id":"s-1"}),
        json!({"type":"result","subtype":"success","is_error":false,"result":answer,"num_turns":1,"total_cost_usd":0.01,"session_id":"s-1"}),
    ];
    let mut bytes = Vec::new();
    for e in events {
        bytes.extend_from_slice(e.to_string().as_bytes());
        bytes.push(b'\n');
    }
    let mut bytes = escape_some(bytes, &planted, rng);
    // A private key as lines of text after the run (`cat id_rsa`), its last line a body line:
    // each line is a line of its own in the log, which no line alone shows as a key's.
    let b64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    bytes.extend_from_slice(b"$ cat id_rsa\n-----BEGIN RSA PRIVATE KEY-----\n");
    for _ in 0..3 {
        let body = rng.chars(b64, 64);
        bytes.extend_from_slice(body.as_bytes());
        bytes.push(b'\n');
        planted.push(Planted {
            text: body.clone(),
            body,
        });
    }
    (bytes, planted)
}

/// The binary with the case's secrets in its environment.
pub(crate) fn bin(secrets: &Secrets) -> Command {
    let mut c = common::bin();
    c.env(ENV_NAME, &secrets.env_value).env_remove(DOTENV_NAME);
    c
}

pub(crate) fn run(secrets: &Secrets, args: &[&str], input: &[u8]) -> Output {
    common::run_cmd(bin(secrets).args(args), input)
}

/// One case's files: the `--redact-values` file, a log and archive written with `--redact`,
/// and a raw log and archive written without it.
pub(crate) struct Case {
    pub(crate) dir: common::TestDir,
    pub(crate) secrets: Secrets,
    pub(crate) planted: Vec<Planted>,
    pub(crate) input: Vec<u8>,
}

impl Case {
    pub(crate) fn new(name: &str, seed: u64, pad: usize, long: usize) -> Case {
        let mut rng = Rng(seed | 1);
        let secrets = Secrets::new(&mut rng);
        let (input, planted) = stream(&secrets, &mut rng, pad, long);
        let dir = common::tempdir(name);
        std::fs::write(
            dir.join("values.env"),
            format!("PORT=8080\n{DOTENV_NAME}={}\n", secrets.dotenv_value),
        )
        .unwrap();
        Case {
            dir,
            secrets,
            planted,
            input,
        }
    }

    pub(crate) fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    pub(crate) fn values(&self) -> String {
        self.path("values.env")
    }

    /// `smart-tee [--redact-values FILE] -b BUDGET --archive LOG.orig.zst LOG` on the input.
    pub(crate) fn tee(&self, log: &str, budget: usize, redact: bool, extra: &[&str]) -> Output {
        let mut args = vec!["-b".to_string(), budget.to_string()];
        if redact {
            args.extend(["--redact-values".to_string(), self.values()]);
        }
        args.extend([
            "--archive".to_string(),
            format!("{}.orig.zst", self.path(log)),
        ]);
        args.extend(extra.iter().map(|a| a.to_string()));
        args.push(self.path(log));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(&self.secrets, &args, &self.input);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout == self.input, "stdout keeps every byte");
        out
    }

    /// A reading mode with `--redact --redact-values FILE`.
    pub(crate) fn read(&self, args: &[&str]) -> Output {
        let values = self.values();
        let mut all = vec!["--redact", "--redact-values", &values];
        all.extend_from_slice(args);
        run(&self.secrets, &all, b"")
    }

    pub(crate) fn windows(&self) -> Vec<String> {
        windows(&self.planted)
    }
}

/// The archive's lines, decompressed as `zstd -dc` would.
pub(crate) fn unarchive(path: &str) -> Vec<u8> {
    zstd::stream::decode_all(std::fs::File::open(path).unwrap()).unwrap()
}

/// The log lines whose number `--original` can be asked for: the cut ones.
fn cut_lines(log: &str) -> Vec<usize> {
    let bytes = std::fs::read(log).unwrap();
    lines(&bytes)
        .iter()
        .enumerate()
        .filter(|(_, l)| String::from_utf8_lossy(l).contains("TRUNCATED"))
        .map(|(i, _)| i + 1)
        .collect()
}

/// JSON-RPC calls to `smart-tee mcp --redact --root DIR`, over its stdin; the answers' text.
pub(crate) fn mcp(case: &Case, calls: &[(&str, Value)]) -> Vec<String> {
    let mut input = String::new();
    for (i, (tool, args)) in calls.iter().enumerate() {
        let req = json!({"jsonrpc":"2.0","id":i + 1,"method":"tools/call","params":{"name":tool,"arguments":args}});
        input.push_str(&req.to_string());
        input.push('\n');
    }
    let values = case.values();
    let root = case.dir.display().to_string();
    let out = run(
        &case.secrets,
        &["mcp", "--redact-values", &values, "--root", &root],
        input.as_bytes(),
    );
    let answers: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(answers.len(), calls.len(), "one answer a call: {answers:?}");
    answers
}

/// Every surface on one case: the log and archive with `--redact`, and every reading surface
/// on the raw log and archive (written without it). Returns how many outputs were checked.
fn every_surface(case: &Case, budget: usize, page: usize) -> usize {
    let w = case.windows();
    let mut checked = 0;
    let mut clean = |surface: &str, bytes: &[u8]| {
        assert_clean(surface, bytes, &w);
        checked += 1;
    };
    // The writing side.
    let (stats, progress) = (case.path("stats.json"), case.path("progress.txt"));
    let out = case.tee(
        "red.jsonl",
        budget,
        true,
        &[
            "--stats",
            "--stats-json",
            &stats,
            &format!("--progress={progress}"),
        ],
    );
    clean("stderr of the tee", &out.stderr);
    let log = std::fs::read(case.path("red.jsonl")).unwrap();
    assert_eq!(lines(&log).len(), lines(&case.input).len());
    for l in lines(&log) {
        strict_parse(l).unwrap();
    }
    clean("the log", &log);
    clean("the archive", &unarchive(&case.path("red.jsonl.orig.zst")));
    clean("--stats-json", &std::fs::read(&stats).unwrap());
    clean(
        "--progress=FILE",
        &std::fs::read(&progress).unwrap_or_default(),
    );

    // The reading side, on a log and archive that were never redacted.
    case.tee("raw.jsonl", budget, false, &[]);
    let raw = case.path("raw.jsonl");
    assert!(
        windows(&case.planted)
            .iter()
            .any(|w| String::from_utf8_lossy(&std::fs::read(&raw).unwrap()).contains(w.as_str())),
        "the raw log holds the secrets: the checks below can fail"
    );
    for args in [
        vec!["--view", raw.as_str()],
        vec!["--view", "--format", "jsonl", raw.as_str()],
        vec!["--view", "--format", "json", raw.as_str()],
        vec!["--view", "--format", "html", raw.as_str()],
        vec!["--view", "--grep", "p", raw.as_str()],
        vec!["--view", "--errors", raw.as_str()],
        vec!["--view", "--tail", "2", raw.as_str()],
        vec!["--summary", raw.as_str()],
        vec!["--summary", "--format", "json", raw.as_str()],
    ] {
        let out = case.read(&args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stdout.is_empty(), "{args:?}");
        clean(&format!("{args:?}"), &out.stdout);
        clean(&format!("stderr of {args:?}"), &out.stderr);
    }
    let cut = cut_lines(&raw);
    assert!(!cut.is_empty(), "a line was cut at -b {budget}");
    for n in &cut {
        let n = n.to_string();
        let out = case.read(&["--view", "--original", "--line", &n, &raw]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        clean("--original", &out.stdout);
        let (mut offset, mut pages) = (0usize, 0);
        loop {
            let (o, l) = (offset.to_string(), page.to_string());
            let out = case.read(&[
                "--view",
                "--original",
                "--line",
                &n,
                "--offset",
                &o,
                "--limit",
                &l,
                &raw,
            ]);
            assert!(out.status.success());
            clean("an --original page", &out.stdout);
            clean("an --original page's note", &out.stderr);
            offset += out.stdout.len();
            pages += 1;
            let note = String::from_utf8_lossy(&out.stderr);
            assert!(note.contains("offsets count redacted bytes"), "{note}");
            if note.contains("end of line") || out.stdout.is_empty() || pages > 40 {
                break;
            }
        }
    }
    // MCP, every tool.
    let n = cut[0] as u64;
    let answers = mcp(
        case,
        &[
            ("read_log", json!({"path":"raw.jsonl"})),
            ("read_log", json!({"path":"raw.jsonl","format":"jsonl"})),
            ("read_log", json!({"path":"raw.jsonl","grep":"p"})),
            ("read_log", json!({"path":"raw.jsonl","errors_only":true})),
            ("log_summary", json!({"path":"raw.jsonl"})),
            ("list_logs", json!({})),
            (
                "wait_for_log",
                json!({"path":"raw.jsonl","timeout_seconds":0}),
            ),
            (
                "read_original",
                json!({"path":"raw.jsonl","line":n,"limit":page}),
            ),
            (
                "read_original",
                json!({"path":"raw.jsonl","line":n,"offset":page,"limit":page}),
            ),
            ("read_original", json!({"path":"raw.jsonl","line":n})),
        ],
    );
    for a in &answers {
        clean("an MCP answer", a.as_bytes());
    }
    checked
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("SMART_TEE_DOOR_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(3),
        ..ProptestConfig::default()
    })]

    /// Secrets of every kind at every offset of long strings: no surface shows one.
    #[test]
    fn no_surface_shows_a_secret(
        seed in any::<u64>(),
        pad in 0usize..64,
        budget in prop::sample::select(vec![1024usize, 2048, 5120]),
        long in 150usize..2000,
        page in 7usize..300,
    ) {
        let case = Case::new(&format!("door-prop-{seed:x}"), seed, pad, long);
        let checked = every_surface(&case, budget, page);
        prop_assert!(checked > 20);
    }
}

/// #46.1: the archive was redacted by pattern and name only: an environment value and a
/// `--redact-values` value were kept in it, and `--view --original` gave them back.
#[test]
fn the_archive_holds_no_environment_or_dotenv_value() {
    let case = Case::new("door-archive-values", 0x5eed_0001, 0, 30);
    case.tee("a.jsonl", 1024, true, &[]);
    let archive = unarchive(&case.path("a.jsonl.orig.zst"));
    let text = String::from_utf8_lossy(&archive);
    assert!(!text.contains(&case.secrets.env_value));
    assert!(!text.contains(&case.secrets.dotenv_value));
    assert!(text.contains(&format!("[REDACTED:env:{ENV_NAME}]")));
    assert!(text.contains(&format!("[REDACTED:env:{DOTENV_NAME}]")));
    assert_clean("the archive", &archive, &case.windows());
}

/// #46.2: `--view --redact --original --line N` printed the original as archived, unredacted.
#[test]
fn view_original_with_redact_redacts_the_original() {
    let case = Case::new("door-original", 0x5eed_0002, 3, 30);
    case.tee("raw.jsonl", 1024, false, &[]);
    let raw = case.path("raw.jsonl");
    let n = cut_lines(&raw)[0].to_string();
    let plain = run(
        &case.secrets,
        &["--view", "--original", "--line", &n, &raw],
        b"",
    );
    assert!(
        String::from_utf8_lossy(&plain.stdout).contains("ghp_"),
        "without --redact the original holds its tokens"
    );
    let out = case.read(&["--view", "--original", "--line", &n, &raw]);
    assert!(out.status.success());
    assert_clean("--view --redact --original", &out.stdout, &case.windows());
    assert!(String::from_utf8_lossy(&out.stdout).contains("[REDACTED:github_token]"));
}

/// #46.3 and #46.4: summaries, gists and grep snippets cut a string, then redacted it: a cut
/// token no longer matched, and 30 of its 40 characters were printed.
#[test]
fn summaries_gists_and_snippets_redact_before_they_cut() {
    for pad in [0, 1, 5, 17, 33] {
        let case = Case::new(
            &format!("door-cut-{pad}"),
            0x5eed_0003 + pad as u64,
            pad,
            40,
        );
        case.tee("raw.jsonl", 5120, false, &[]);
        let raw = case.path("raw.jsonl");
        for args in [
            vec!["--summary", raw.as_str()],
            vec!["--summary", "--format", "json", raw.as_str()],
            vec!["--view", raw.as_str()],
            vec!["--view", "--grep", "ghp", raw.as_str()],
            vec!["--view", "--format", "html", raw.as_str()],
        ] {
            let out = case.read(&args);
            assert!(out.status.success());
            assert_clean(
                &format!("{args:?} (pad {pad})"),
                &out.stdout,
                &case.windows(),
            );
        }
        for a in mcp(
            &case,
            &[
                ("log_summary", json!({"path":"raw.jsonl"})),
                ("read_log", json!({"path":"raw.jsonl","grep":"ghp"})),
            ],
        ) {
            assert_clean(
                "MCP log_summary / read_log grep",
                a.as_bytes(),
                &case.windows(),
            );
        }
    }
}

/// #46.5: MCP `read_original` redacted each page on its own: a token across a page boundary
/// came out whole in pieces (three clean parts at `limit: 15`). Pages now come from the
/// redacted whole, and their offsets say so.
#[test]
fn read_original_pages_come_from_the_redacted_whole() {
    let case = Case::new("door-pages", 0x5eed_0005, 0, 30);
    case.tee("raw.jsonl", 1024, false, &[]);
    let n = cut_lines(&case.path("raw.jsonl"))[0] as u64;
    let mut joined = String::new();
    let mut offset = 0u64;
    for _ in 0..400 {
        let a = mcp(
            &case,
            &[(
                "read_original",
                json!({"path":"raw.jsonl","line":n,"offset":offset,"limit":15}),
            )],
        );
        let v: Value = serde_json::from_str(&a[0]).unwrap();
        let text = v["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(text.contains("offsets count redacted bytes"), "{text}");
        let (head, page) = text.split_once('\n').unwrap();
        joined.push_str(page);
        offset += page.len() as u64;
        if head.contains("end of line") {
            break;
        }
    }
    assert!(joined.contains("[REDACTED:github_token]"));
    assert_clean(
        "read_original's pages joined",
        joined.as_bytes(),
        &case.windows(),
    );
}

/// #46.6: the HTML page cut an archived original at 64 KiB, then redacted it: 38 of a token's
/// 40 characters showed where the token straddled byte 65,536.
#[test]
fn the_pages_excerpt_of_an_original_is_cut_after_redaction() {
    for pad in [0, 7, 23] {
        let case = Case::new(
            &format!("door-html-{pad}"),
            0x5eed_0006 + pad as u64,
            pad,
            2000,
        );
        case.tee("raw.jsonl", 2048, false, &[]);
        let raw = case.path("raw.jsonl");
        let out = case.read(&["--view", "--format", "html", &raw]);
        assert!(out.status.success());
        let page = String::from_utf8_lossy(&out.stdout);
        assert!(
            page.contains("original from the archive"),
            "an original is embedded"
        );
        assert_clean("the HTML page", &out.stdout, &case.windows());
    }
}

/// #46.7: `-a --redact` wrote its `{"type":"torn"}` repair record unredacted.
#[test]
fn the_torn_record_of_append_is_redacted() {
    let case = Case::new("door-torn", 0x5eed_0007, 0, 5);
    let log = case.path("a.jsonl");
    let mut rng = Rng(77);
    let token = case.secrets.plant(2, &mut rng);
    let env = case.secrets.plant(0, &mut rng);
    std::fs::write(
        &log,
        format!(
            "{{\"a\":1}}\n{{\"b\":\"{} and {} then",
            token.text, env.text
        ),
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
    assert_clean("the torn record", &text, &windows(&[token, env]));
    assert_eq!(lines(&text).len(), 3);
}

/// #46.8: a secret in a log's, `--stats-json`'s or `--progress=`'s path was printed verbatim
/// in the error. The path is named, with the secret redacted in place.
#[test]
fn a_secret_in_a_path_is_redacted_in_the_error() {
    let case = Case::new("door-paths", 0x5eed_0008, 0, 5);
    let bad = format!("/nonexistent-{}/x.jsonl", case.secrets.env_value);
    let good = case.path("good.jsonl");
    let stats = format!(
        "--stats-json=/nonexistent-{}/s.json",
        case.secrets.env_value
    );
    let progress = format!("--progress=/nonexistent-{}/p.txt", case.secrets.env_value);
    let out = run(
        &case.secrets,
        &["--redact", &stats, &progress, &bad, &good],
        &case.input,
    );
    assert!(out.stdout == case.input);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("/nonexistent-[REDACTED:env:{ENV_NAME}]/x.jsonl")),
        "{err}"
    );
    assert!(!err.contains(&case.secrets.env_value), "{err}");
    assert_eq!(
        lines(&std::fs::read(&good).unwrap()).len(),
        lines(&case.input).len()
    );
}

/// #46.9: a `--redact-values` value whose name says nothing was kept; ordinary settings of
/// the same file must stay.
#[test]
fn redact_values_takes_values_with_a_keys_shape_whatever_their_name() {
    let dir = common::tempdir("door-dotenv-shape");
    let values = dir.join("v.env");
    std::fs::write(
        &values,
        "WEIRDLY_NAMED=Vx93kq2LmPz81Rtw\nSTRIPE=sk_live_51HxAbCdEfGhIjKlMn0p\n\
         HEXKEY=0123456789abcdef0123456789abcdef01234567\nPORT=8080\nNODE_ENV=production\n\
         DEBUG=true\nPREFIX=/usr/local/bin\nSITE=https://example.com\n",
    )
    .unwrap();
    let input = "{\"text\":\"Vx93kq2LmPz81Rtw sk_live_51HxAbCdEfGhIjKlMn0p \
                 0123456789abcdef0123456789abcdef01234567 8080 production true /usr/local/bin \
                 https://example.com\"}\n";
    let log = dir.join("a.jsonl");
    let out = common::run_cmd(
        common::bin().arg("--redact-values").arg(&values).arg(&log),
        input.as_bytes(),
    );
    assert!(out.status.success());
    let text = std::fs::read_to_string(&log).unwrap();
    for gone in [
        "Vx93kq2LmPz81Rtw",
        "sk_live_51HxAbCdEfGhIjKlMn0p",
        "0123456789abcdef0123456789abcdef01234567",
    ] {
        assert!(!text.contains(gone), "{gone} kept: {text}");
    }
    for kept in [
        " 8080 ",
        "production",
        " true ",
        "/usr/local/bin",
        "https://example.com",
    ] {
        assert!(text.contains(kept), "{kept} redacted: {text}");
    }
    assert!(text.contains("[REDACTED:env:WEIRDLY_NAMED]"), "{text}");
}

/// A non-blocking stderr, full: the pipe's write end, `O_NONBLOCK`, filled to EAGAIN. Its read
/// end is returned too, kept open and unread until the child is done.
fn full_nonblocking_pipe() -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd) {
    let (r, w) = rustix::pipe::pipe().unwrap();
    rustix::fs::fcntl_setfl(&w, rustix::fs::OFlags::NONBLOCK).unwrap();
    while rustix::io::write(&w, &[b'x'; 4096]).is_ok() {}
    while rustix::io::write(&w, b"x").is_ok() {}
    (r, w)
}

/// Runs the binary with `args`, stdin `input`, stdout piped and stderr the full non-blocking
/// pipe; every wait bounded.
fn run_with_full_stderr(args: &[&str], input: &[u8]) -> Output {
    use std::process::Stdio;
    let (_r, w) = full_nonblocking_pipe();
    let child = common::bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(w))
        .spawn()
        .unwrap();
    let mut child = child;
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || {
        use std::io::Write;
        let _ = stdin.write_all(&input);
    });
    let out = common::output_timeout(child);
    feeder.join().unwrap();
    out
}

/// #47.2: a full, non-blocking stderr made smart-tee panic (exit 101) at its first diagnostic
/// and lose the whole stream: a bad log beside a good one, a mistyped flag, `--stats`.
#[test]
fn a_full_nonblocking_stderr_costs_neither_the_stream_nor_a_log() {
    let dir = common::tempdir("door-full-stderr");
    let input =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/agent-stream.jsonl"))
            .unwrap();
    let good = dir.join("good.jsonl");
    let out = run_with_full_stderr(&["/nonexistent/x.jsonl", good.to_str().unwrap()], &input);
    assert!(
        out.stdout == input,
        "stdout got {} of {} bytes",
        out.stdout.len(),
        input.len()
    );
    assert_eq!(out.status.code(), Some(1), "a log could not be written");
    assert_eq!(
        lines(&std::fs::read(&good).unwrap()).len(),
        lines(&input).len()
    );
    let out = run_with_full_stderr(&["--no-such-flag", good.to_str().unwrap()], &input);
    assert!(out.stdout == input);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let stats = dir.join("stats.json");
    let out = run_with_full_stderr(
        &[
            "--stats",
            "--stats-json",
            stats.to_str().unwrap(),
            good.to_str().unwrap(),
        ],
        &input,
    );
    assert!(out.stdout == input);
    assert_eq!(out.status.code(), Some(0));
    let stats: Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    assert!(
        stats["diagnostics_dropped"].as_u64().unwrap() >= 1,
        "{stats}"
    );
}

/// A refused flag's message quotes its value; under `--redact` a secret there is redacted too
/// (found by looking for paths the door did not cover: clap printed it before the door opened).
#[test]
fn a_secret_in_a_refused_flags_value_is_redacted() {
    let case = Case::new("door-flag-value", 0x5eed_000a, 0, 5);
    let out = run(
        &case.secrets,
        &[
            "--redact",
            "-b",
            &case.secrets.env_value,
            &case.path("a.jsonl"),
        ],
        &case.input,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout == case.input, "the stream is still copied");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("[REDACTED:env:{ENV_NAME}]")), "{err}");
    assert!(!err.contains(&case.secrets.env_value), "{err}");
}

/// Found by an independent attack: `--compact --redact` of a log written without `--redact`
/// at a larger budget kept the parts of secrets its first cut had left beside its markers (no
/// pattern knows a part). Compaction reads each line as every reading surface does.
#[test]
fn compact_with_redact_leaves_no_part_a_raw_logs_cut_left() {
    for pad in [0, 3, 11] {
        let case = Case::new(
            &format!("door-compact-{pad}"),
            0x5eed_000b + pad as u64,
            pad,
            200,
        );
        case.tee("raw.jsonl", 5120, false, &[]);
        let raw = case.path("raw.jsonl");
        let before = std::fs::read(&raw).unwrap();
        assert!(String::from_utf8_lossy(&before).contains("TRUNCATED"));
        let out = case.read(&["--compact", "-b", "1024", &raw]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let after = std::fs::read(&raw).unwrap();
        assert_eq!(lines(&after).len(), lines(&before).len());
        assert_clean("--compact --redact", &after, &case.windows());
    }
}

/// The same for a compressed log whose last line, cut by a raw log's first cut, has no newline:
/// `--compact --redact` read that line as it was, and kept beside its marker the part of a
/// secret every reader leaves out (at the raw log's budget nothing is cut again; a blank line
/// makes the compaction rewrite the log).
#[test]
fn compact_with_redact_reads_a_compressed_logs_last_line_as_every_reader_does() {
    let case = Case::new("door-compact-last", 0x5eed_000b, 0, 200);
    case.tee("raw.jsonl", 5120, false, &[]);
    let before = std::fs::read(case.path("raw.jsonl")).unwrap();
    let all = lines(&before);
    let cut = all
        .iter()
        .filter(|l| String::from_utf8_lossy(l).contains("TRUNCATED"))
        .collect::<Vec<_>>();
    assert!(!cut.is_empty());
    for (k, last) in cut.iter().enumerate() {
        // The log's lines, a blank line, then a cut one without its newline.
        let log = [&before[..], b"\n", last].concat();
        let name = format!("last-{k}.jsonl.zst");
        let bytes = zstd::stream::encode_all(&log[..], 3).unwrap();
        std::fs::write(case.path(&name), bytes).unwrap();
        let out = case.read(&["--compact", "-b", "5120", &case.path(&name)]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let after = std::fs::read(case.path(&name)).unwrap();
        let after = zstd::stream::decode_all(&after[..]).unwrap();
        assert_eq!(lines(&after).len(), all.len() + 1);
        assert_clean(
            "--compact --redact of a compressed log",
            &after,
            &case.windows(),
        );
    }
}
