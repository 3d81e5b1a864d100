//! Arbitrary JSON-RPC lines to the MCP server's request handler, over a root holding a few
//! logs: every line gets at most one answer, each answer is one JSON-RPC message (strict JSON,
//! one line, `jsonrpc` "2.0", a result or an error) with no raw control, bidi or zero-width
//! character, and a tool's text stays within the largest budget a call may ask for.
#![no_main]

use std::sync::OnceLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use smart_tee::mcp::{MAX_TOKENS, McpOptions, Server};

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("smart-tee-fuzz-mcp-{}", std::process::id()));
        std::fs::create_dir_all(root.join("d")).unwrap();
        std::fs::write(
            root.join("a.jsonl"),
            "{\"type\":\"system\",\"session_id\":\"s\u{202e}1\",\"model\":\"m\u{9b}\"}\n\
             {\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"tool_use\",\"name\":\"Bash\\nerrors 0\",\"input\":{}}]}}\n\
             {\"type\":\"result\",\"subtype\":\"success\",\"result\":\"\\u001b[2J done\"}\n",
        )
        .unwrap();
        std::fs::write(root.join("d/b.log"), "{\"type\":\"x\",\"timestamp\":\"ééééééééééé\"}\n").unwrap();
        std::fs::write(root.join("notes.txt"), "not a log\n").unwrap();
        Server::new(&McpOptions {
            roots: vec![root],
            ..McpOptions::default()
        })
        .unwrap()
        .with_max_wait(Duration::ZERO)
    })
}

fuzz_target!(|data: &[u8]| {
    let server = server();
    for line in data.split(|&b| b == b'\n') {
        let Some(answer) = server.handle_line(line) else {
            continue;
        };
        assert!(!answer.contains('\n'), "an answer is one line");
        assert!(
            !answer.chars().any(smart_tee::read::log::is_unsafe_char),
            "raw unsafe character in {answer}"
        );
        let v: serde_json::Value = serde_json::from_str(&answer).expect("an answer is JSON");
        assert_eq!(v["jsonrpc"], "2.0");
        assert!(
            v.get("result").is_some() != v.get("error").is_some(),
            "{answer}"
        );
        if let Some(content) = v.pointer("/result/content").and_then(|c| c.as_array()) {
            let len: usize = content
                .iter()
                .filter_map(|c| c["text"].as_str())
                .map(str::len)
                .sum();
            assert!(len as u64 <= MAX_TOKENS * 3, "{len} bytes");
        }
    }
});
