//! `smart-tee mcp` driven by a real MCP client (rmcp's own): initialize, list the tools, call
//! each on the real corpus, check every result is valid and within its token budget, and try
//! every escape from the roots.

use std::path::Path;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::common;

const STEP: Duration = Duration::from_secs(60);

type Client = RunningService<RoleClient, ()>;

/// The runtime of one test's MCP client.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A client of the server `cmd` starts (`smart-tee mcp ...`), initialized within [`STEP`].
pub async fn connect(cmd: tokio::process::Command) -> Client {
    let transport = TokioChildProcess::new(cmd).unwrap();
    tokio::time::timeout(STEP, ().serve(transport))
        .await
        .expect("initialized in time")
        .expect("initialized")
}

/// Calls `tool` with `args`; returns the text and whether it is an error result.
async fn call(client: &Client, tool: &'static str, args: Value) -> (String, bool) {
    let params = CallToolRequestParams::new(tool)
        .with_arguments(args.as_object().cloned().unwrap_or_default());
    let result = tokio::time::timeout(STEP, client.call_tool(params))
        .await
        .expect("the server answers in time")
        .expect("a tool result");
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("");
    (text, result.is_error == Some(true))
}

fn setup(root: &Path) -> std::path::PathBuf {
    let logs = root.join("logs");
    std::fs::create_dir_all(logs.join("agents")).unwrap();
    for f in common::corpus_files().iter().take(6) {
        std::fs::copy(f, logs.join("agents").join(f.file_name().unwrap())).unwrap();
    }
    // Things that must not be read.
    std::fs::write(root.join("outside.jsonl"), "{\"type\":\"secret\"}\n").unwrap();
    std::os::unix::fs::symlink(root.join("outside.jsonl"), logs.join("link-out.jsonl")).unwrap();
    std::fs::write(logs.join("notes.txt"), "shopping list\nmilk\n").unwrap();
    std::fs::write(logs.join("blob.bin"), [0u8, 1, 2, 3, 0, 0]).unwrap();
    std::fs::write(logs.join("blob.jsonl"), [0u8, 1, 2, 3, 0, 0]).unwrap();
    let fifo = logs.join("pipe.jsonl");
    common::mkfifo(&fifo);
    logs
}

#[test]
fn mcp_server_serves_logs_to_a_real_client_and_refuses_escapes() {
    let root = common::tempdir("mcp");
    let logs = setup(&root);
    let rt = runtime();
    rt.block_on(async {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_smart-tee"));
        cmd.arg("mcp").arg("--root").arg(&logs);
        let client = connect(cmd).await;
        let info = client.peer_info().expect("server info");
        assert_eq!(info.server_info.as_ref().unwrap().name, "smart-tee");

        let tools = tokio::time::timeout(STEP, client.list_all_tools())
            .await
            .unwrap()
            .unwrap();
        let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
        names.sort();
        assert_eq!(
            names,
            [
                "list_logs",
                "log_summary",
                "read_log",
                "read_original",
                "wait_for_log"
            ]
        );
        for t in &tools {
            assert!(
                t.description.as_ref().is_some_and(|d| d.len() > 80),
                "{}",
                t.name
            );
            assert_eq!(t.input_schema.get("type"), Some(&json!("object")));
        }

        let (text, error) = call(&client, "list_logs", json!({})).await;
        assert!(!error, "{text}");
        let listed: Value = serde_json::from_str(&text).unwrap();
        let paths: Vec<&str> = listed["logs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["path"].as_str().unwrap())
            .collect();
        assert_eq!(
            paths.len(),
            6,
            "the corpus, and nothing that is not a log: {paths:?}"
        );
        assert!(paths.iter().all(|p| p.starts_with("agents/")));
        let basic = listed["logs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["path"].as_str().unwrap().contains("basic_query"))
            .unwrap();
        assert_eq!(basic["finished"], true);
        assert_eq!(basic["lines"], 3);

        for path in &paths {
            for (format, tokens) in [("text", 25_000), ("jsonl", 25_000), ("json", 2_000)] {
                let (text, error) = call(
                    &client,
                    "read_log",
                    json!({"path": path, "format": format, "max_tokens": tokens}),
                )
                .await;
                assert!(!error, "{path}: {text}");
                assert!(
                    text.len() <= tokens * 3,
                    "{path} {format}: {} bytes",
                    text.len()
                );
                assert!(!text.is_empty());
                match format {
                    "jsonl" => {
                        for line in text.lines() {
                            common::strict_parse(line.as_bytes()).unwrap();
                        }
                    }
                    "json" => {
                        serde_json::from_str::<Value>(&text).unwrap();
                    }
                    _ => {}
                }
            }
            let (text, error) = call(&client, "log_summary", json!({"path": path})).await;
            assert!(!error, "{text}");
            let summary: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(summary["type"], "summary");
        }
        let (text, _) = call(
            &client,
            "read_log",
            json!({"path": "agents/marot__spotter__8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl",
                   "tail": 3, "exclude_type": ["progress"], "errors_only": true}),
        )
        .await;
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(text.lines().all(|l| l.contains("ERROR")), "{text}");

        let (text, error) = call(
            &client,
            "wait_for_log",
            json!({"path": paths[0], "timeout_seconds": 0.3}),
        )
        .await;
        assert!(!error);
        let waited: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(waited["grew"], false);

        // Every way out of the roots is refused, with a reason.
        let outside = root.join("outside.jsonl");
        for (path, why) in [
            ("../outside.jsonl", "'..'"),
            ("agents/../../outside.jsonl", "'..'"),
            (outside.to_str().unwrap(), "outside the roots"),
            ("/etc/passwd", "outside the roots"),
            ("link-out.jsonl", "outside the roots"),
            ("pipe.jsonl", "not a regular file"),
            ("notes.txt", "not a log"),
            ("blob.bin", "not a log name"),
            ("blob.jsonl", "binary"),
            ("missing.jsonl", "no such log"),
        ] {
            let (text, error) = call(&client, "read_log", json!({"path": path})).await;
            assert!(error, "{path} was read: {text}");
            assert!(text.contains(why), "{path}: {text}");
            assert!(!text.contains("secret"));
        }
        tokio::time::timeout(STEP, client.cancel())
            .await
            .unwrap()
            .unwrap();
    });
}

/// `read_original`: a cut event's original, a page at a time within the budget, the pages
/// concatenating to it; `read_log` says how to get it; a log without an archive is told so.
#[test]
fn read_original_pages_through_a_cut_event() {
    let root = common::tempdir("mcp-original");
    let logs = root.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let long = format!(
        "{{\"type\":\"user\",\"content\":\"{}é\"}}",
        "0123456789".repeat(2000)
    );
    let input = format!("{{\"type\":\"system\"}}\n{long}\n");
    let out = common::run_cmd(
        common::bin()
            .env("SMART_TEE_ARCHIVE", "1")
            .args(["-b", "1024"])
            .arg(logs.join("a.jsonl")),
        input.as_bytes(),
    );
    assert!(out.status.success());
    std::fs::write(logs.join("plain.jsonl"), "{\"type\":\"x\"}\n").unwrap();
    let rt = runtime();
    rt.block_on(async {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_smart-tee"));
        cmd.arg("mcp").arg("--root").arg(&logs);
        let client = connect(cmd).await;
        let (text, error) = call(&client, "read_log", json!({"path": "a.jsonl"})).await;
        assert!(!error, "{text}");
        assert!(text.contains("#2 "), "{text}");
        assert!(text.contains("read_original"), "{text}");
        let mut got = String::new();
        let mut offset = 0u64;
        for _ in 0..100 {
            let (text, error) = call(
                &client,
                "read_original",
                json!({"path": "a.jsonl", "line": 2, "offset": offset, "max_tokens": 1000}),
            )
            .await;
            assert!(!error, "{text}");
            assert!(text.len() <= 3000, "{} bytes", text.len());
            let (head, page) = text.split_once('\n').unwrap();
            got.push_str(page);
            offset += page.len() as u64;
            if head.ends_with("end of line") {
                break;
            }
            assert!(head.ends_with(&format!("offset {offset}")), "{head}");
        }
        assert_eq!(got, long);
        let (text, error) = call(
            &client,
            "read_original",
            json!({"path": "plain.jsonl", "line": 1}),
        )
        .await;
        assert!(error);
        assert!(text.contains("has no archive"), "{text}");
        client.cancel().await.unwrap();
    });
}

/// `read_log` of each newer agent's stream: one gist per event, none of them raw JSON, the
/// tool calls named.
#[test]
fn read_log_gives_each_agents_events_as_gists() {
    let root = common::tempdir("mcp-agents");
    let logs = root.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    for (name, _, _) in crate::agent_streams::AGENTS {
        std::fs::copy(
            crate::agent_streams::fixture(name),
            logs.join(format!("{name}.jsonl")),
        )
        .unwrap();
    }
    let rt = runtime();
    rt.block_on(async {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_smart-tee"));
        cmd.arg("mcp").arg("--root").arg(&logs);
        let client = connect(cmd).await;
        for (name, agent, _) in crate::agent_streams::AGENTS {
            let path = format!("{name}.jsonl");
            let (text, error) = call(&client, "read_log", json!({"path": path, "head": 200})).await;
            assert!(!error, "{name}: {text}");
            let gists: Vec<&str> = text.lines().filter(|l| l.starts_with('#')).collect();
            assert!(gists.len() >= 50, "{name}: {} gists\n{text}", gists.len());
            assert!(
                gists
                    .iter()
                    .all(|l| !l.contains("\":") && !l.contains("{\"")),
                "{name}: raw JSON in\n{text}"
            );
            assert!(text.contains("python -m pytest -q"), "{name}: {text}");
            let (text, error) = call(&client, "log_summary", json!({"path": path})).await;
            assert!(!error, "{name}: {text}");
            let summary: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(summary["agent"], agent, "{name}");
        }
        tokio::time::timeout(STEP, client.cancel())
            .await
            .unwrap()
            .unwrap();
    });
}

/// Found by the read side's attack (#49): answers repeated what the client sent without a
/// bound (a 200 KB path, 300 type names, a 300 KB tool, method or argument name), over the
/// budget every response fits (`max_tokens` 100: 300 bytes). Each answer's text or error
/// message now fits it.
#[test]
fn an_answer_repeats_no_more_of_a_request_than_its_budget_holds() {
    let root = common::tempdir("mcp-echo");
    std::fs::write(root.join("x.jsonl"), "{\"type\":\"user\"}\n").unwrap();
    let long = |c: &str, n: usize| c.repeat(n);
    let calls = [
        json!({"name": "read_log", "arguments": {"path": long("a", 200_000) + ".jsonl", "max_tokens": 100}}),
        json!({"name": "log_summary", "arguments": {"path": long("b", 200_000) + ".jsonl", "max_tokens": 100}}),
        json!({"name": "read_log", "arguments": {"path": "x.jsonl", "type": vec![long("x", 1000); 300], "max_tokens": 100}}),
        json!({"name": "read_log", "arguments": {"path": "x.jsonl", "exclude_type": vec![long("y", 1000); 300], "type": ["z"], "max_tokens": 100}}),
        json!({"name": long("t", 300_000), "arguments": {}}),
        json!({"name": "read_log", "arguments": {long("k", 300_000): 1, "path": "x.jsonl", "max_tokens": 100}}),
    ];
    let mut input = String::new();
    for (i, params) in calls.iter().enumerate() {
        let call = json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": params});
        input.push_str(&format!("{call}\n"));
    }
    let method = json!({"jsonrpc": "2.0", "id": 99, "method": long("m", 300_000)});
    input.push_str(&format!("{method}\n"));
    let out = common::run_cmd(
        common::bin().arg("mcp").arg("--root").arg(&root),
        input.as_bytes(),
    );
    let answers = common::lines(&out.stdout);
    assert_eq!(answers.len(), calls.len() + 1, "one answer per request");
    for line in answers {
        let v: Value = serde_json::from_slice(line).unwrap();
        let text = match (&v["result"]["content"], &v["error"]["message"]) {
            (Value::Array(blocks), _) => blocks
                .iter()
                .map(|b| b["text"].as_str().unwrap().len())
                .sum::<usize>(),
            (_, Value::String(m)) => m.len(),
            _ => panic!("neither a result nor an error: {v}"),
        };
        assert!(text <= 300, "id {}: {text} bytes", v["id"]);
    }
}

/// Found by the read side's attack (#49): `read_log` took `head` and `tail` together, which the
/// command line refuses (the first and the last N are different questions); it said nothing
/// of the one it ignored. It refuses them together, naming both.
#[test]
fn read_log_refuses_head_and_tail_together() {
    let root = common::tempdir("mcp-head-tail");
    std::fs::write(root.join("x.jsonl"), "{\"type\":\"user\"}\n").unwrap();
    let call = |args: Value| {
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "read_log", "arguments": args}});
        let out = common::run_cmd(
            common::bin().arg("mcp").arg("--root").arg(&root),
            format!("{call}\n").as_bytes(),
        );
        let v: Value = serde_json::from_slice(common::lines(&out.stdout)[0]).unwrap();
        v
    };
    let both = call(json!({"path": "x.jsonl", "head": 1, "tail": 1}));
    let said = both["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
        + both["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
    assert!(
        said.contains("\"head\"") && said.contains("\"tail\"") && said.contains("not both"),
        "{both}"
    );
    let one = call(json!({"path": "x.jsonl", "tail": 1}));
    assert!(
        one["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("user"),
        "{one}"
    );
}
