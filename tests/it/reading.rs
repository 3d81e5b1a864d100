//! Reading logs back under hostile logs, file systems and clients (#28): `smart-tee mcp`
//! driven line by line as a raw JSON-RPC client, and `--view` / `--summary` on the same logs.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{self, bin, strict_parse, tempdir, wait_timeout};

/// How long a test waits for an answer before it fails (a guard, not an outcome).
const ANSWER: Duration = Duration::from_secs(120);

/// `smart-tee mcp` and its answers.
struct Mcp {
    child: Child,
    stdin: Option<ChildStdin>,
    answers: Receiver<String>,
    early: HashMap<String, Value>,
}

impl Mcp {
    fn start(root: &Path, flags: &[&str]) -> Mcp {
        let mut child = bin()
            .arg("mcp")
            .arg("--root")
            .arg(root)
            .args(flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, answers) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in out.lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut m = Mcp {
            child,
            stdin,
            answers,
            early: HashMap::new(),
        };
        let init = m.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "smart-tee");
        m.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        m
    }

    fn send(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request with a fresh id; returns the id.
    fn post(&mut self, method: &str, params: Value) -> String {
        let id = format!("r{}", self.early.len() + rand_id());
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(line.to_string().as_bytes());
        id
    }

    /// The answer to request `id`: every answer line must be one valid JSON-RPC message.
    fn answer(&mut self, id: &str) -> Value {
        if let Some(v) = self.early.remove(id) {
            return v;
        }
        loop {
            let line = match self.answers.recv_timeout(ANSWER) {
                Ok(l) => l,
                Err(RecvTimeoutError::Timeout) => panic!("no answer to {id} in {ANSWER:?}"),
                Err(RecvTimeoutError::Disconnected) => panic!("the server ended before {id}"),
            };
            let v = strict_parse(line.as_bytes()).expect("an answer is JSON");
            assert!(
                !line.chars().any(smart_tee::read::log::is_unsafe_char),
                "{line}"
            );
            let got = match &v["id"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            if got == id {
                return v;
            }
            self.early.insert(got, v);
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.post(method, params);
        self.answer(&id)
    }

    /// A tool's text (blocks joined) and whether it is an error result.
    fn call(&mut self, tool: &str, args: Value) -> (String, bool) {
        let v = self.request("tools/call", json!({"name": tool, "arguments": args}));
        tool_text(&v)
    }

    /// Closes stdin and waits for the server to exit.
    fn close(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        wait_timeout(&mut self.child)
    }
}

fn rand_id() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

fn tool_text(v: &Value) -> (String, bool) {
    let result = &v["result"];
    assert!(result.is_object(), "not a result: {v}");
    let text = result["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["text"].as_str().unwrap().to_string())
        .collect::<Vec<_>>()
        .join("\n");
    (text, result["isError"] == true)
}

fn write(path: &Path, content: impl AsRef<[u8]>) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
    path.to_owned()
}

/// #28.5: a huge max_tokens wrapped to a 2-byte budget, head 0 showed one event, a
/// non-object `arguments` got "method not found", a missing path a '..' message, and a 100 MB
/// request line no answer.
#[test]
fn mcp_answers_keep_their_contract() {
    let root = tempdir("reading-contract");
    let lines: Vec<String> = (0..50)
        .map(|i| json!({"type": "user", "n": i, "text": "word ".repeat(100)}).to_string() + "\n")
        .collect();
    write(&root.join("a.jsonl"), lines.concat());
    let mut m = Mcp::start(&root, &[]);
    let (text, error) = m.call(
        "read_log",
        json!({"path": "a.jsonl", "max_tokens": 6148914691236517206u64, "format": "jsonl"}),
    );
    assert!(!error, "{text}");
    assert_eq!(text.lines().count(), 50, "the whole log fits a huge budget");
    // Nothing shown says why (#50).
    let (text, error) = m.call("read_log", json!({"path": "a.jsonl", "head": 0}));
    assert!(
        !error && text == "0 of 50 events shown (head 0)\n",
        "{text}"
    );
    let (text, _) = m.call("read_log", json!({"path": "a.jsonl", "tail": 0}));
    assert_eq!(text, "0 of 50 events shown (tail 0)\n");
    for (params, want) in [
        (
            json!({"name": "read_log", "arguments": "a.jsonl"}),
            "arguments",
        ),
        (json!({"name": "read_log", "arguments": [1]}), "arguments"),
        (json!({"name": "read_log", "arguments": {}}), "path"),
        (
            json!({"name": "read_log", "arguments": {"path": 7}}),
            "path",
        ),
        (
            json!({"name": "read_log", "arguments": {"path": "a.jsonl", "tail": "x"}}),
            "tail",
        ),
        (
            json!({"name": "read_log", "arguments": {"path": "a.jsonl", "tail": -1}}),
            "tail",
        ),
        (
            json!({"name": "read_log", "arguments": {"path": "a.jsonl", "grep": "("}}),
            "grep",
        ),
        (
            json!({"name": "read_log", "arguments": {"path": "a.jsonl", "format": "xml"}}),
            "format",
        ),
        (
            json!({"name": "list_logs", "arguments": {"max_tokens": "many"}}),
            "max_tokens",
        ),
        (
            json!({"name": "wait_for_log", "arguments": {"path": "a.jsonl", "timeout_seconds": -1}}),
            "timeout",
        ),
        (
            json!({"name": "no_such_tool", "arguments": {}}),
            "unknown tool",
        ),
        (json!({"arguments": {}}), "name"),
    ] {
        let v = m.request("tools/call", params.clone());
        assert_eq!(v["error"]["code"], -32602, "{params}: {v}");
        assert!(
            v["error"]["message"].as_str().unwrap().contains(want),
            "{params}: {v}"
        );
    }
    let v = m.request("no/such/method", json!({}));
    assert_eq!(v["error"]["code"], -32601);
    // Lines that are not requests are answered with id null; a long one is skipped whole.
    let mut long =
        b"{\"jsonrpc\":\"2.0\",\"id\":\"long\",\"method\":\"ping\",\"params\":{\"pad\":\"".to_vec();
    long.resize(3 << 20, b'x');
    long.extend_from_slice(b"\"}}");
    for (line, code) in [
        (long, -32600),
        (b"not json".to_vec(), -32700),
        (b"[1,2]".to_vec(), -32600),
    ] {
        m.send(&line);
        let v = m.answer("null");
        assert_eq!(v["error"]["code"], code, "{v}");
    }
    assert_eq!(m.request("ping", json!({}))["result"], json!({}));
    assert!(m.close().success());
}

/// The hostile strings: terminal escapes, C1, bidi overrides and isolates, separators,
/// zero-width characters, and newlines that would forge a line.
const HOSTILE: &str = "\u{1b}[2J\u{1b}]0;t\u{7}\r\u{9b}31m safe \u{202e}gnp.exe\u{2066}x\u{2069}\u{2028}\u{2029}\u{200b}\u{200f}\u{feff}\nerrors    0\nFAKE";

fn hostile_log(dir: &Path) -> PathBuf {
    let lines = [
        json!({"type": "system", "subtype": "init", "session_id": HOSTILE, "model": HOSTILE, "timestamp": "2026-11-20T10:00:00Z"}),
        json!({"type": "assistant", "message": {"model": HOSTILE, "content": [
            {"type": "text", "text": HOSTILE},
            {"type": "tool_use", "name": HOSTILE, "input": {"command": HOSTILE}},
            {"type": "tool_use", "name": "Write", "input": {"file_path": HOSTILE}}]}}),
        json!({"type": "user", "message": {"content": [{"type": "tool_result", "is_error": true, "content": HOSTILE}]}}),
        json!({"type": "result", "subtype": "success", "result": HOSTILE, "session_id": HOSTILE, "total_cost_usd": 0.5}),
    ];
    let text: String = lines.iter().map(|l| l.to_string() + "\n").collect();
    write(&dir.join("h.jsonl"), text)
}

/// No character of the unsafe set, raw, in `text` (newlines allowed where `lines` says).
fn assert_inert(what: &str, text: &str, newlines: bool) {
    for c in text.chars() {
        if newlines && c == '\n' {
            continue;
        }
        assert!(
            !smart_tee::read::log::is_unsafe_char(c),
            "{what}: raw U+{:04X} in {text:?}",
            c as u32
        );
    }
}

/// #28.6: bidi overrides, isolates, separators and zero-width characters passed raw, and a
/// tool name with newlines forged an `errors 0` line in the summary. Every format of the view
/// and every tool is checked for raw control, bidi and zero-width characters and for JSON.
#[test]
fn hostile_strings_are_inert_in_every_format_and_every_tool() {
    let dir = tempdir("reading-hostile");
    let log = hostile_log(&dir);
    let path = log.to_str().unwrap();
    for format in ["text", "jsonl", "json"] {
        for summary in [false, true] {
            let mut args = vec!["--view", "--color", "never", "--format", format, path];
            if summary {
                args.push("--summary");
            }
            let out = common::run_cmd(bin().args(&args), b"");
            assert!(out.status.success(), "{args:?}");
            let text = String::from_utf8(out.stdout).unwrap();
            assert_inert(&format!("{args:?}"), &text, true);
            match (format, summary) {
                ("text", true) => {
                    let errors: Vec<&str> =
                        text.lines().filter(|l| l.starts_with("errors")).collect();
                    assert_eq!(errors, ["errors    1"], "{text}");
                    assert!(!text.lines().any(|l| l.starts_with("FAKE")), "{text}");
                }
                ("text", false) => assert_eq!(text.lines().count(), 4, "{text}"),
                ("jsonl", false) => {
                    for l in text.lines() {
                        strict_parse(l.as_bytes()).unwrap();
                    }
                }
                _ => {
                    strict_parse(text.trim_end().as_bytes()).unwrap();
                }
            }
        }
    }
    // A file name is a string from the log's folder, too.
    std::fs::copy(&log, dir.join("\u{202e}lmsj.jsonl")).unwrap();
    let mut m = Mcp::start(&dir, &[]);
    let (listed, error) = m.call("list_logs", json!({}));
    assert!(!error);
    assert_inert("list_logs", &listed, false);
    assert_eq!(
        strict_parse(listed.as_bytes()).unwrap()["logs"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    for format in ["text", "jsonl", "json"] {
        for tokens in [100, 1000, 25_000] {
            let (text, error) = m.call(
                "read_log",
                json!({"path": "h.jsonl", "format": format, "max_tokens": tokens}),
            );
            assert!(!error, "{text}");
            assert!(
                text.len() <= tokens * 3,
                "{format} {tokens}: {}",
                text.len()
            );
            assert_inert(&format!("read_log {format}"), &text, true);
            if format == "json" {
                strict_parse(text.trim_end().as_bytes()).unwrap();
            }
        }
    }
    for tokens in [100, 1000, 25_000] {
        let (text, error) = m.call(
            "log_summary",
            json!({"path": "h.jsonl", "max_tokens": tokens}),
        );
        assert!(!error, "{text}");
        assert!(text.len() <= tokens * 3, "{tokens}: {}", text.len());
        assert_inert("log_summary", &text, true);
        assert_eq!(
            strict_parse(text.trim_end().as_bytes()).unwrap()["type"],
            "summary"
        );
    }
    let (text, error) = m.call("read_log", json!({"path": "\u{202e}lmsj.jsonl"}));
    assert!(!error, "{text}");
    let (text, error) = m.call("read_log", json!({"path": "\u{202e}\u{1b}[2J.txt"}));
    assert!(error);
    assert_inert("an error naming a hostile path", &text, false);
    assert!(m.close().success());
}

/// #28.5: a model name of 1,200 U+009B came back in 7,454 bytes for a 1,000-token budget, in
/// Rust's debug escapes; a 5,000-character session id came back as "(cut to fit)", not JSON.
#[test]
fn log_summary_of_long_hostile_strings_is_json_within_its_budget() {
    let dir = tempdir("reading-summary-budget");
    let lines = [
        json!({"type": "system", "model": "\u{9b}".repeat(1200), "session_id": "s".repeat(5000)}),
        json!({"type": "result", "subtype": "success", "result": "\u{202e}".repeat(5000)}),
    ];
    write(
        &dir.join("s.jsonl"),
        lines
            .iter()
            .map(|l| l.to_string() + "\n")
            .collect::<String>(),
    );
    let mut m = Mcp::start(&dir, &[]);
    for tokens in [100, 1000, 25_000] {
        let (text, error) = m.call(
            "log_summary",
            json!({"path": "s.jsonl", "max_tokens": tokens}),
        );
        assert!(!error, "{text}");
        assert!(text.len() <= tokens * 3, "{tokens}: {}", text.len());
        let v = strict_parse(text.trim_end().as_bytes()).unwrap();
        assert_eq!(v["type"], "summary");
        assert_inert("log_summary", &text, true);
    }
    assert!(m.close().success());
}

/// #28.1 and #28.2: only plain logs under the root are served. FIFOs, devices, directories,
/// hard links, hidden folders, credentials and symlinks that lead out are refused, and an
/// outside path that exists is refused in the same words as one that does not.
#[test]
fn only_plain_logs_under_the_root_are_served() {
    let base = tempdir("reading-served");
    let root = base.join("root");
    let log = r#"{"type":"system","session_id":"inside"}"#.to_string() + "\n";
    write(&root.join("d/x.jsonl"), &log);
    write(&root.join("rotated.jsonl.3"), &log);
    write(
        &root.join(".config/gcloud/application_default_credentials.json"),
        "{\n  \"client_secret\": \"s3cret\"\n}\n",
    );
    write(&root.join(".hidden/h.jsonl"), &log);
    write(&root.join("pretty.jsonl"), "{\n  \"a\": 1\n}\n");
    write(
        &base.join("outside/secret.jsonl"),
        "{\"secret\":\"s3cret\"}\n",
    );
    write(&base.join("linked.jsonl"), &log);
    std::fs::hard_link(base.join("linked.jsonl"), root.join("hard.jsonl")).unwrap();
    let link = |target: &Path, name: &str| {
        std::os::unix::fs::symlink(target, root.join(name)).unwrap();
    };
    link(&base.join("outside/secret.jsonl"), "out-exists.jsonl");
    link(&base.join("outside/missing.jsonl"), "out-missing.jsonl");
    link(&base.join("outside"), "out-dir");
    link(Path::new("d/x.jsonl"), "inside.jsonl");
    std::fs::create_dir_all(root.join("dir.jsonl")).unwrap();
    common::mkfifo(&root.join("pipe.jsonl"));
    // A device needs privileges: checked where the test may make one.
    let device = common::run_cmd(
        std::process::Command::new("mknod")
            .arg(root.join("null.jsonl"))
            .args(["c", "1", "3"]),
        b"",
    )
    .status
    .success();

    let mut m = Mcp::start(&root, &[]);
    let (listed, _) = m.call("list_logs", json!({}));
    let listed = strict_parse(listed.as_bytes()).unwrap();
    let mut paths: Vec<&str> = listed["logs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["path"].as_str().unwrap())
        .collect();
    paths.sort_unstable();
    assert_eq!(paths, ["d/x.jsonl", "inside.jsonl", "rotated.jsonl.3"]);
    let (text, error) = m.call("read_log", json!({"path": "inside.jsonl"}));
    assert!(
        !error && text.contains("system"),
        "a symlink inside the root: {text}"
    );
    let outside = base.join("outside/secret.jsonl");
    let missing = base.join("outside/missing.jsonl");
    let mut cases = vec![
        ("pipe.jsonl", "not a regular file"),
        ("dir.jsonl", "not a regular file"),
        ("hard.jsonl", "hard links"),
        (".hidden/h.jsonl", "hidden"),
        (
            ".config/gcloud/application_default_credentials.json",
            "hidden",
        ),
        ("pretty.jsonl", "not a JSON object"),
        ("out-exists.jsonl", "outside the roots"),
        ("out-missing.jsonl", "outside the roots"),
        ("out-dir/secret.jsonl", "outside the roots"),
        ("out-dir/missing.jsonl", "outside the roots"),
        (outside.to_str().unwrap(), "outside the roots"),
        (missing.to_str().unwrap(), "outside the roots"),
        ("../outside/secret.jsonl", "'..'"),
    ];
    if device {
        cases.push(("null.jsonl", "not a regular file"));
    }
    let mut said = HashMap::new();
    for (path, why) in cases {
        let (text, error) = m.call("read_log", json!({"path": path}));
        assert!(error, "{path} was served: {text}");
        assert!(text.contains(why), "{path}: {text}");
        assert!(!text.contains("s3cret"));
        said.insert(path.to_string(), text.replace(path, "PATH"));
    }
    for (a, b) in [
        ("out-exists.jsonl", "out-missing.jsonl"),
        ("out-dir/secret.jsonl", "out-dir/missing.jsonl"),
        (outside.to_str().unwrap(), missing.to_str().unwrap()),
    ] {
        assert_eq!(said[a], said[b], "exists and missing told apart");
    }
    assert!(m.close().success());
    // Asked for: hidden folders and hard links.
    let mut m = Mcp::start(&root, &["--hidden", "--hard-links"]);
    for path in [".hidden/h.jsonl", "hard.jsonl"] {
        let (text, error) = m.call("read_log", json!({"path": path}));
        assert!(!error, "{path}: {text}");
    }
    let (text, error) = m.call(
        "read_log",
        json!({"path": ".config/gcloud/application_default_credentials.json"}),
    );
    assert!(error && text.contains("not a log name"), "{text}");
    assert!(m.close().success());
}

/// A gzip log that expands far past the per-request bound: 1 MiB lines, one gzip member
/// repeated (a multi-member gzip is one stream).
fn gzip_bomb(path: &Path, mib: usize) {
    use flate2::{Compression, write::GzEncoder};
    let line = format!(
        "{{\"type\":\"user\",\"pad\":\"{}\"}}\n",
        "z".repeat((1 << 20) - 30)
    );
    let mut e = GzEncoder::new(Vec::new(), Compression::best());
    e.write_all(line.as_bytes()).unwrap();
    let member = e.finish().unwrap();
    let mut f = std::fs::File::create(path).unwrap();
    for _ in 0..mib {
        f.write_all(&member).unwrap();
    }
}

/// #28.3 and #28.7: `wait_for_log` on a log a FIFO was renamed over froze the server (no
/// `ping`, no exit when stdin closed); a 60 MB last line and a gzip bomb held it for minutes.
/// Every worker is kept busy on purpose (waits that cannot end while the test runs, reads of
/// the long line and of the bomb), and `ping` is still answered; the bomb's answer says the
/// bound cut it; closing stdin ends the server and its waits.
#[test]
fn ping_is_answered_while_the_tools_work_on_a_fifo_a_long_line_and_a_gzip_bomb() {
    let root = tempdir("reading-busy");
    write(&root.join("waited.jsonl"), "{\"type\":\"system\"}\n");
    let mut long = b"{\"type\":\"user\"}\n{\"type\":\"user\",\"pad\":\"".to_vec();
    long.resize(60 << 20, b'p');
    long.extend_from_slice(b"\"}\n");
    write(&root.join("long.jsonl"), &long);
    drop(long);
    let bomb_mib = (smart_tee::mcp::MAX_DECOMPRESSED >> 20) as usize + 16;
    gzip_bomb(&root.join("bomb.jsonl.gz"), bomb_mib);
    let mut m = Mcp::start(&root, &[]);
    write(&root.join("swapped.jsonl"), "{\"type\":\"system\"}\n");
    // Every waiter waits: three on a log that does not change, one on a log a FIFO is then
    // renamed over (refused if its wait opens it after the swap, else waited on unchanged).
    let waits: Vec<String> = [
        "waited.jsonl",
        "waited.jsonl",
        "waited.jsonl",
        "swapped.jsonl",
    ]
    .iter()
    .map(|path| {
        m.post(
            "tools/call",
            json!({"name": "wait_for_log", "arguments": {"path": path, "timeout_seconds": 300}}),
        )
    })
    .collect();
    let fifo = root.join("fifo.tmp");
    common::mkfifo(&fifo);
    std::fs::rename(&fifo, root.join("swapped.jsonl")).unwrap();
    let tail = m.post(
        "tools/call",
        json!({"name": "read_log", "arguments": {"path": "long.jsonl", "tail": 1}}),
    );
    let bomb = m.post(
        "tools/call",
        json!({"name": "read_log", "arguments": {"path": "bomb.jsonl.gz", "max_tokens": 100}}),
    );
    let listed = m.post(
        "tools/call",
        json!({"name": "list_logs", "arguments": {"max_tokens": 100}}),
    );
    let fifo_read = m.post(
        "tools/call",
        json!({"name": "read_log", "arguments": {"path": "swapped.jsonl"}}),
    );
    assert_eq!(m.request("ping", json!({}))["result"], json!({}));
    let (text, error) = tool_text(&m.answer(&tail));
    assert!(
        !error && text.contains("user"),
        "{}",
        &text[..text.len().min(200)]
    );
    let (text, error) = tool_text(&m.answer(&bomb));
    assert!(!error, "{text}");
    assert!(text.contains("note: only the first"), "{text}");
    assert!(text.len() <= 300, "{}", text.len());
    let (text, _) = tool_text(&m.answer(&listed));
    assert!(text.len() <= 300, "{text}");
    strict_parse(text.as_bytes()).unwrap();
    let (text, error) = tool_text(&m.answer(&fifo_read));
    assert!(error && text.contains("not a regular file"), "{text}");
    // Stdin closes: the waits end and are answered, and the server exits.
    drop(m.stdin.take());
    for (k, id) in waits.iter().enumerate() {
        let (text, error) = tool_text(&m.answer(id));
        if k == 3 && error {
            assert!(text.contains("not a regular file"), "{text}");
            continue;
        }
        assert!(!error, "{text}");
        assert_eq!(strict_parse(text.as_bytes()).unwrap()["grew"], false);
    }
    assert!(wait_timeout(&mut m.child).success());
}

/// #28.8: one event whose timestamp is not ASCII made `--since 2020` panic (status 101), and
/// `--since banana` printed nothing with status 0.
#[test]
fn since_and_until_take_instants_and_refuse_what_is_not_a_time() {
    let dir = tempdir("reading-since");
    let log = write(
        &dir.join("t.jsonl"),
        [
            r#"{"type":"x","timestamp":"ééééééééééé"}"#,
            r#"{"type":"a","timestamp":"2026-11-20T11:59:59+02:00"}"#,
            r#"{"type":"b","timestamp":"2026-11-20T10:00:00.5Z"}"#,
            r#"{"type":"c","timestamp":"2026-11-20T12:30:00+02:00"}"#,
            r#"{"type":"d","timestamp":1795183200000}"#,
        ]
        .join("\n")
            + "\n",
    );
    let log = log.to_str().unwrap();
    let types = |args: &[&str]| {
        let out = common::run_cmd(
            bin()
                .args(["--view", "--format", "jsonl"])
                .args(args)
                .arg(log),
            b"",
        );
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        common::lines(&out.stdout)
            .iter()
            .map(|l| {
                strict_parse(l).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(types(&["--since", "2026-11-20T10:00:00Z"]), ["b", "c", "d"]);
    assert_eq!(types(&["--since", "2026-11-20 10:00:00.6"]), ["c", "d"]);
    assert_eq!(types(&["--until", "2026-11-20T12:00+02:00"]), ["a"]);
    assert_eq!(types(&["--since", "2020-01-01"]), ["a", "b", "c", "d"]);
    assert!(
        types(&["--since", "1d"]).is_empty(),
        "all of them are older"
    );
    for bad in ["banana", "yesterday", "2026-2-11", "2020"] {
        let out = common::run_cmd(bin().args(["--view", "--since", bad, log]), b"");
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("RFC 3339") && err.contains("90s"),
            "{bad}: {err}"
        );
    }
}

/// #28.7: `--summary` kept every distinct tool name (500,000 names took 583 MB) and its cut
/// text dropped the errors and ended lines.
#[test]
fn summary_caps_what_it_keeps_per_tool_and_keeps_its_last_lines_when_cut() {
    let dir = tempdir("reading-summary-caps");
    let mut text = String::new();
    for i in 0..5000 {
        let line = json!({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "name": format!("tool-{i}-{}", "n".repeat(300)), "input": {}}]}});
        text.push_str(&line.to_string());
        text.push('\n');
    }
    text.push_str(
        "{\"type\":\"error\",\"error\":\"boom\"}\n{\"type\":\"result\",\"subtype\":\"success\"}\n",
    );
    let log = write(&dir.join("many.jsonl"), text);
    for format in ["text", "json"] {
        let out = common::run_cmd(
            bin()
                .args([
                    "--view",
                    "--summary",
                    "--max-tokens",
                    "400",
                    "--format",
                    format,
                ])
                .arg(&log),
            b"",
        );
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.len() <= 1200, "{format}: {}", text.len());
        if format == "text" {
            assert!(text.contains("\nerrors    1\n"), "{text}");
            assert!(text.contains("\nended     success"), "{text}");
        } else {
            let v = strict_parse(text.trim_end().as_bytes()).unwrap();
            assert_eq!(v["tools_used"], 501, "{v}");
            assert_eq!(v["errors"], 1);
        }
    }
}

/// #28.4: a long last line was read back in time growing as its square. `--tail 1` on a log
/// whose last line is 60 MB returns that line (cut to its budget) and the event before it.
#[test]
fn tail_reads_a_60_megabyte_last_line() {
    let dir = tempdir("reading-tail");
    let mut long = b"{\"type\":\"first\"}\n{\"type\":\"user\",\"pad\":\"".to_vec();
    long.resize(60 << 20, b'q');
    long.extend_from_slice(b"\"}\n");
    let log = write(&dir.join("long.jsonl"), &long);
    drop(long);
    let out = common::run_cmd(
        bin()
            .args([
                "--view",
                "--format",
                "jsonl",
                "--tail",
                "2",
                "--max-tokens",
                "1000",
            ])
            .arg(&log),
        b"",
    );
    let lines = common::lines(&out.stdout);
    assert_eq!(lines.len(), 2);
    assert_eq!(strict_parse(lines[0]).unwrap()["type"], "first");
    assert_eq!(strict_parse(lines[1]).unwrap()["type"], "user");
}

/// `--summary --format json` of `log`, parsed, with `flags`.
fn summary_json(log: &Path, flags: &[&str]) -> Value {
    let out = common::run_cmd(
        bin()
            .args(["--view", "--summary", "--format", "json"])
            .args(flags)
            .arg(log),
        b"",
    );
    assert!(out.status.success(), "{out:?}");
    strict_parse(out.stdout.trim_ascii_end()).unwrap()
}

/// Found by a new user (#49): a transcript appended to its log again (`-a`, a log named twice)
/// repeats its calls, which `--summary` counted each time while it counted their failures and
/// tokens once (99 calls, 8 failed, for 33 and 8). A call counts once by its id. The
/// reference: the calls' ids in the transcript, counted here.
#[test]
fn a_log_appended_to_itself_counts_each_call_once() {
    let dir = tempdir("reading-appended-to-itself");
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/agent-stream.jsonl");
    let text = std::fs::read_to_string(&sample).unwrap();
    let ids: std::collections::HashSet<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .flat_map(|v| {
            v["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|b| b["type"] == "tool_use")
        .filter_map(|b| b["id"].as_str().map(String::from))
        .collect();
    assert!(ids.len() > 10);
    let log = dir.join("thrice.jsonl");
    std::fs::write(&log, text.repeat(3)).unwrap();
    let once = summary_json(&sample, &[]);
    let thrice = summary_json(&log, &[]);
    assert_eq!(thrice["tool_calls"].as_u64(), Some(ids.len() as u64));
    for field in [
        "tool_calls",
        "tool_failures",
        "tools",
        "total_tokens",
        "errors",
    ] {
        assert_eq!(thrice[field], once[field], "{field}");
    }
}

/// An error event a log repeats (the same `uuid`: a transcript appended to itself) counted
/// each time, while its call and failure counted once (24 errors for 8 above). An error event
/// counts once by its `uuid`; one without a `uuid` counts each time it comes (a rate limit
/// said twice is two).
#[test]
fn a_repeated_error_event_counts_once_by_its_uuid() {
    let dir = tempdir("reading-repeated-errors");
    let error = |uuid: &str, id: &str| {
        format!(
            r#"{{"type":"user","uuid":"{uuid}","session_id":"S","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","is_error":true,"content":"boom"}}]}}}}"#
        )
    };
    let lines = [
        r#"{"type":"system","subtype":"init","session_id":"S","model":"claude-sonnet-4-5"}"#
            .to_string(),
        error("u1", "t1"),
        error("u1", "t1"),
        error("u2", "t2"),
        r#"{"type":"error","message":"rate limited"}"#.to_string(),
        r#"{"type":"error","message":"rate limited"}"#.to_string(),
    ];
    let log = dir.join("errors.jsonl");
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let s = summary_json(&log, &[]);
    assert_eq!(s["errors"].as_u64(), Some(4), "{s}");
    assert_eq!(s["tool_failures"].as_u64(), Some(2), "{s}");
}

/// Found by a new user (#49): a transcript's retries, `system/api_error` events with a
/// `retryAttempt`, were errors but no retries (`api_retries` 0 for 9). The reference: the
/// transcript's events with a `retryAttempt`, counted here.
#[test]
fn a_transcripts_api_errors_that_retry_are_retries() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/real/moredip__session-share__0ccf1a04-1b4c-43b6-8aa5-79e41db43a68.jsonl");
    let retries = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["subtype"] == "api_error" && v.get("retryAttempt").is_some())
        .count();
    assert!(retries > 0);
    assert_eq!(
        summary_json(&file, &[])["api_retries"].as_u64(),
        Some(retries as u64)
    );
}

/// Found by a new user (#49): `--view --line 999` of a log of 144 lines printed nothing and
/// exited 0, as if line 999 were a line with no event, where `--original --line 999` says so
/// and fails. A line that is there but filtered out still exits 0.
#[test]
fn a_line_past_the_end_of_the_log_is_said_and_fails() {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/agent-stream.jsonl");
    let n = std::fs::read_to_string(&sample).unwrap().lines().count();
    for format in ["text", "jsonl", "json"] {
        let out = common::run_cmd(
            bin()
                .args(["--view", "--format", format, "--line", "999"])
                .arg(&sample),
            b"",
        );
        assert_eq!(out.status.code(), Some(1), "{format}");
        let said = common::stderr(&out);
        assert!(
            said.contains("--line 999: past the end") && said.contains(&format!("has {n} lines")),
            "{said}"
        );
    }
    let out = common::run_cmd(
        bin()
            .args(["--view", "--line", "5", "--type", "result"])
            .arg(&sample),
        b"",
    );
    assert!(out.status.success() && out.stdout.is_empty(), "{out:?}");
}

/// Found by a new user (#49): the text summary said `errors 31` and listed 20, with no word
/// of the rest. It says how many more there were.
#[test]
fn a_summary_says_how_many_errors_it_does_not_list() {
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/real");
    let mut files: Vec<_> = std::fs::read_dir(&real)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let out = common::run_cmd(bin().args(["--view", "--summary"]).args(&files), b"");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    // The total's (the last) errors row.
    let at = text.rfind("\nerrors    ").unwrap() + 1;
    let mut rows = text[at..].lines();
    let count: u64 = rows.next().unwrap()["errors    ".len()..].parse().unwrap();
    let listed: Vec<&str> = rows.take_while(|l| l.starts_with("  ")).collect();
    let more = format!("  … {} more", count - (listed.len() as u64 - 1));
    assert!(count > listed.len() as u64, "{text}");
    assert_eq!(listed.last(), Some(&more.as_str()), "{text}");
}

/// #31.3: a run whose agent died before its final event looked like one still running:
/// `wait_for_log` waited out its timeout and `--summary` said "still running, or stopped".
/// A real writer holds the log while it runs; once it is killed, every surface says the run
/// ended without a final event, and the same first and last event times.
#[test]
fn a_log_whose_writer_was_killed_before_its_final_event_reads_ended_without_a_final_event() {
    let dir = tempdir("reading-killed-writer");
    let log = dir.join("run.jsonl");
    let mut writer = bin()
        .arg(&log)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let events = concat!(
        r#"{"type":"system","subtype":"init","session_id":"s1","model":"m1","timestamp":"2026-02-11T21:41:40Z"}"#,
        "\n",
        r#"{"type":"assistant","message":{"model":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]},"timestamp":"2026-02-11T21:41:41Z"}"#,
        "\n",
        r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"no"}]},"timestamp":"2026-02-11T21:41:42Z"}"#,
        "\n",
        r#"{"type":"tool_progress","tool_name":"Bash","elapsed_time_seconds":5}"#,
        "\n",
    );
    let mut stdin = writer.stdin.take().unwrap();
    stdin.write_all(events.as_bytes()).unwrap();
    stdin.flush().unwrap();
    // The writer's lines reach the log (a guard, not an outcome).
    let start = std::time::Instant::now();
    while std::fs::read(&log).map_or(0, |l| l.iter().filter(|&&b| b == b'\n').count()) < 4 {
        assert!(start.elapsed() < ANSWER, "the writer did not log its lines");
        std::thread::sleep(Duration::from_millis(10));
    }
    // Alive, its events dated months ago but arriving now (#50: a replayed log): running.
    let s = summary_json(&log, &["--stall-after", "60"]);
    assert_eq!(s["state"], "running", "{s}");
    // No event for ten minutes (the log last written then): stalled; the heartbeat, dated
    // after the last event, does not count as one.
    let ago = std::time::SystemTime::now() - Duration::from_secs(600);
    std::fs::File::options()
        .append(true)
        .open(&log)
        .unwrap()
        .set_modified(ago)
        .unwrap();
    let s = summary_json(&log, &["--stall-after", "60"]);
    assert_eq!(s["state"], "stalled", "{s}");
    assert_eq!(s["tool_calls"], 1, "{s}");
    assert_eq!(s["tool_failures"], 1, "{s}");
    let mut m = Mcp::start(&dir, &[]);
    let (text, _) = m.call("list_logs", json!({}));
    let listed = &strict_parse(text.as_bytes()).unwrap()["logs"][0];
    assert_eq!(listed["state"], "stalled", "{listed}");
    let id = m.post(
        "tools/call",
        json!({"name": "wait_for_log", "arguments": {"path": "run.jsonl", "timeout_seconds": 100}}),
    );
    writer.kill().unwrap();
    wait_timeout(&mut writer);
    let (text, error) = tool_text(&m.answer(&id));
    assert!(!error, "{text}");
    let waited = strict_parse(text.as_bytes()).unwrap();
    assert_eq!(waited["state"], "ended without a final event", "{waited}");
    assert_eq!(waited["timed_out"], false, "{waited}");
    assert_eq!(waited["finished"], false, "{waited}");
    let s = summary_json(&log, &[]);
    assert_eq!(s["state"], "ended without a final event", "{s}");
    let (text, error) = m.call("log_summary", json!({"path": "run.jsonl"}));
    assert!(!error, "{text}");
    let mcp = strict_parse(text.trim_end().as_bytes()).unwrap();
    assert_eq!(mcp["state"], s["state"]);
    let (text, _) = m.call("list_logs", json!({}));
    let listed = &strict_parse(text.as_bytes()).unwrap()["logs"][0];
    for key in ["state", "first_event", "last_event"] {
        assert_eq!(listed[key], s[key], "{key}: {listed} {s}");
    }
    assert_eq!(s["last_event"], "2026-02-11 21:41:42", "{s}");
    let out = common::run_cmd(bin().args(["--view", "--summary"]).arg(&log), b"");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("state     ended without a final event (last event 2026-02-11 21:41:42)"),
        "{text}"
    );
    assert!(text.contains("calls     1, failed 1 (100%)"), "{text}");
    m.close();
}

/// #31.3: a final event says how the run ended, ok or failed, on every surface, and a wait on
/// a finished run returns at once.
#[test]
fn a_finished_run_reads_finished_with_ok_from_its_final_event() {
    let dir = tempdir("reading-finished");
    let ok = write(
        &dir.join("ok.jsonl"),
        concat!(
            r#"{"type":"system","subtype":"init","session_id":"s1","mcp_servers":[{"name":"a","status":"failed"}],"plugin_errors":[{"plugin":"p"}]}"#,
            "\n",
            r#"{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"error_status":529,"error":"overloaded"}"#,
            "\n",
            r#"{"type":"system","subtype":"hook_response","hook_name":"h","exit_code":2,"stderr":"x"}"#,
            "\n",
            r#"{"type":"system","subtype":"model_refusal_fallback","retracted_message_uuids":["u1"]}"#,
            "\n",
            r#"{"type":"result","subtype":"success","is_error":false,"session_id":"s1","total_cost_usd":0.5,"permission_denials":[{"tool_name":"Bash"}],"modelUsage":{"m1":{"inputTokens":10,"outputTokens":3,"costUSD":0.4},"m2":{"inputTokens":5,"outputTokens":1,"costUSD":0.1}}}"#,
            "\n"
        ),
    );
    let failed = write(
        &dir.join("failed.jsonl"),
        r#"{"type":"result","subtype":"error_during_execution","is_error":true,"terminal_reason":"api_error","api_error_status":500}
"#,
    );
    let s = summary_json(&ok, &[]);
    assert_eq!(
        (&s["state"], &s["ok"]),
        (&json!("finished"), &json!(true)),
        "{s}"
    );
    assert_eq!(s["api_retries"], 1);
    assert_eq!(s["last_retry_status"], 529);
    assert_eq!(s["hook_failures"], 1);
    assert_eq!(s["refusals"], 1);
    assert_eq!(s["retracted_messages"], 1);
    assert_eq!(s["permission_denials"], 1);
    assert_eq!(s["startup_errors"], 2);
    assert_eq!(s["models"]["m1"]["input_tokens"], 10);
    assert_eq!(s["models"]["m2"]["cost_usd"], 0.1);
    let s = summary_json(&failed, &[]);
    assert_eq!(
        (&s["state"], &s["ok"]),
        (&json!("finished"), &json!(false)),
        "{s}"
    );
    let mut m = Mcp::start(&dir, &[]);
    let (text, _) = m.call(
        "wait_for_log",
        json!({"path": "failed.jsonl", "timeout_seconds": 100}),
    );
    let waited = strict_parse(text.as_bytes()).unwrap();
    assert_eq!(waited["state"], "finished", "{waited}");
    assert_eq!(waited["ok"], false, "{waited}");
    assert_eq!(waited["timed_out"], false, "{waited}");
    let out = common::run_cmd(bin().args(["--view", "--summary"]).arg(&ok), b"");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("state     finished, ok\n"), "{text}");
    assert!(
        text.contains("issues    API retries 1 (last status 529), refusals 1, messages retracted 1, permission denials 1, hook failures 1, startup errors 2\n"),
        "{text}"
    );
    assert!(
        text.contains("models    m1 in 10 out 3 $0.4000; m2 in 5 out 1 $0.1000\n"),
        "{text}"
    );
    m.close();
}

/// #48: a loop script's `=== Iteration N ===` line after each result (a `non_json` record in
/// smart-tee's log) reopened the finished run, which then read "ended without a final event";
/// and `--summary a b` merged the runs of two files. Each run keeps its own ending, and a file
/// boundary always starts a conversation.
#[test]
fn runs_keep_their_endings_across_text_lines_and_files() {
    let dir = tempdir("reading-run-endings");
    let run = |s: &str, sub: &str, err: bool| {
        format!(
            "{{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"{s}\",\"model\":\"claude-sonnet-4-5\"}}\n\
             {{\"type\":\"result\",\"subtype\":\"{sub}\",\"is_error\":{err},\"num_turns\":1,\"session_id\":\"{s}\"}}\n"
        )
    };
    let stream = format!(
        "{}=== Iteration 2 ===\n{}=== Iteration 3 ===\n{}=== done ===\n",
        run("s1", "success", false),
        run("s2", "error_max_turns", true),
        run("s3", "success", false)
    );
    let log = dir.join("loop.jsonl");
    let out = common::run_cmd(bin().arg(&log), stream.as_bytes());
    assert!(out.status.success());
    let s = summary_json(&log, &[]);
    let states: Vec<String> = s["conversations"]
        .as_array()
        .unwrap_or_else(|| panic!("{s}"))
        .iter()
        .map(|c| c["state"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(states, ["finished", "finished", "finished"], "{s}");
    let oks: Vec<Value> = s["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["ok"].clone())
        .collect();
    assert_eq!(oks, [json!(true), json!(false), json!(true)], "{s}");
    // Two files, the same session id in both: two conversations all the same.
    let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    std::fs::write(&a, run("s", "success", false)).unwrap();
    std::fs::write(
        &b,
        run("s", "error_max_turns", true).replace("\"subtype\":\"init\",", ""),
    )
    .unwrap();
    let out = common::run_cmd(
        bin()
            .args(["--summary", "--format", "json"])
            .arg(&a)
            .arg(&b),
        b"",
    );
    let s: Value = strict_parse(out.stdout.trim_ascii_end()).unwrap();
    assert_eq!(s["conversations"].as_array().map(Vec::len), Some(2), "{s}");
}

/// #48: tokens had two definitions on one screen (the last result's uncached input, and the
/// messages' sum with each message counted once per content block), Codex rollouts read `in 0
/// out 0`, and `list_logs` and `wait_for_log` gave none. Every surface gives the same four
/// counts, here a Codex rollout's last `token_count` (input 45,000 of which 33,000 cached,
/// output 1,100: the fixture's numbers, counted by hand), and the report's header says them in
/// the text summary's words.
#[test]
fn every_surface_gives_the_same_tokens() {
    let dir = tempdir("reading-tokens");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/format-codex-rollout-failures/input.jsonl");
    let log = dir.join("rollout.jsonl");
    std::fs::copy(&fixture, &log).unwrap();
    let want = json!({"input_tokens": 12000, "cache_read_input_tokens": 33000,
        "cache_creation_input_tokens": null, "output_tokens": 1100,
        "total_input_tokens": 45000, "total_tokens": 46100});
    let pick = |v: &Value| -> Value {
        want.as_object()
            .unwrap()
            .keys()
            .map(|k| (k.clone(), v[k].clone()))
            .collect::<serde_json::Map<_, _>>()
            .into()
    };
    assert_eq!(pick(&summary_json(&log, &[])), want);
    let mut m = Mcp::start(&dir, &[]);
    let (text, _) = m.call("log_summary", json!({"path": "rollout.jsonl"}));
    assert_eq!(
        pick(&strict_parse(text.as_bytes()).unwrap()),
        want,
        "{text}"
    );
    let (text, _) = m.call("list_logs", json!({}));
    let listed = strict_parse(text.as_bytes()).unwrap();
    assert_eq!(pick(&listed["logs"][0]), want, "{text}");
    let (text, _) = m.call("wait_for_log", json!({"path": "rollout.jsonl"}));
    assert_eq!(
        pick(&strict_parse(text.as_bytes()).unwrap()),
        want,
        "{text}"
    );
    m.close();
    let text = common::run_cmd(bin().args(["--view", "--summary"]).arg(&log), b"");
    let text = String::from_utf8(text.stdout).unwrap();
    let words = "in 45,000 (uncached 12,000, cache read 33,000, write –) out 1,100";
    assert!(text.contains(&format!("tokens    {words}\n")), "{text}");
    let page = common::run_cmd(bin().args(["--view", "--format", "html"]).arg(&log), b"");
    let page = String::from_utf8(page.stdout).unwrap();
    assert!(page.contains(&format!("<dt>tokens</dt><dd>{words}</dd>")));
}

/// #48: the `model` line read `<synthetic>`, Claude Code's placeholder on its own error
/// messages, where the init's model did the work.
#[test]
fn the_model_is_never_the_synthetic_placeholder() {
    let dir = tempdir("reading-synthetic");
    let log = write(
        &dir.join("a.jsonl"),
        concat!(
            r#"{"type":"system","subtype":"init","session_id":"s1","model":"claude-sonnet-4-5"}"#,
            "\n",
            r#"{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"API Error: 529"}]},"session_id":"s1"}"#,
            "\n"
        ),
    );
    let s = summary_json(&log, &[]);
    assert_eq!(s["model"], "claude-sonnet-4-5", "{s}");
}
