//! `smart-tee mcp`: the logs served to agents over MCP (stdio), read-only, built on the official
//! Rust SDK (`rmcp`). Four tools: `list_logs`, `read_log` (the `--view` engine), `log_summary`
//! and `wait_for_log`. Every response fits its token budget (default 25,000 tokens, counted as
//! bytes / 3 like `--view`).
//!
//! Only files under the roots can be read: a path is taken relative to a root (or absolute
//! inside one), `..` is refused, the canonical path (symlinks resolved) must stay inside a root,
//! and only regular files that look like logs are opened (no devices, FIFOs, binaries).
//!
//! The async runtime exists only here: the tee path starts none.

use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

use crate::view::{Format, ViewOptions};

/// The token budget of a response when the caller gives none: MCP tool results are capped at
/// 25,000 tokens by common clients.
pub const DEFAULT_MAX_TOKENS: usize = 25_000;
/// The longest `wait_for_log` may wait.
const MAX_WAIT: Duration = Duration::from_secs(300);

/// Runs the server on stdin/stdout until the client goes away.
pub fn run(roots: Vec<PathBuf>) -> ExitCode {
    let roots: Vec<PathBuf> = if roots.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        roots
    };
    let mut canonical = Vec::new();
    for r in &roots {
        match std::fs::canonicalize(r) {
            Ok(c) if c.is_dir() => canonical.push(c),
            Ok(_) => {
                eprintln!("smart-tee: mcp --root {}: not a directory", r.display());
                return ExitCode::from(2);
            }
            Err(e) => {
                eprintln!("smart-tee: mcp --root {}: {e}", r.display());
                return ExitCode::from(2);
            }
        }
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("smart-tee: mcp: starting the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let server = LogServer {
        roots: Arc::new(canonical),
    };
    let result = runtime.block_on(async move {
        let service = server.serve(rmcp::transport::stdio()).await?;
        service.waiting().await?;
        Ok::<(), Box<dyn std::error::Error>>(())
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("smart-tee: mcp: {e}");
            ExitCode::from(1)
        }
    }
}

/// The server: the roots it may read under.
#[derive(Clone)]
pub struct LogServer {
    roots: Arc<Vec<PathBuf>>,
}

fn schema(v: Value) -> Arc<JsonObject> {
    Arc::new(v.as_object().cloned().unwrap_or_default())
}

fn tools() -> Vec<Tool> {
    let path = json!({"type": "string", "description": "The log's path, relative to a root (as list_logs gives it)."});
    let max_tokens = json!({"type": "integer", "minimum": 100, "description": "The response's budget in tokens (bytes / 3); default 25000."});
    vec![
        Tool::new(
            "list_logs",
            "List the agent logs under the server's roots: path, size, lines, first and last \
             event time, which agent's format, whether the run has finished (a final result / \
             turn.completed event) and when the log was last written.",
            schema(json!({"type": "object", "properties": {"max_tokens": max_tokens}})),
        ),
        Tool::new(
            "read_log",
            "Read events of one log, newest kept first, within a token budget (default 25000): \
             long fields are cut head + marker + tail, images become descriptors, and a first \
             line says how many earlier events were left out. Filter with tail/head (event \
             counts), grep (a regular expression), type / exclude_type (event types) and \
             errors_only. format: text (one readable line per event, the default), jsonl or json.",
            schema(json!({
                "type": "object",
                "properties": {
                    "path": path,
                    "tail": {"type": "integer", "minimum": 0, "description": "Only the last N events."},
                    "head": {"type": "integer", "minimum": 0, "description": "Only the first N events."},
                    "grep": {"type": "string", "description": "Only events matching this regular expression."},
                    "type": {"type": "array", "items": {"type": "string"}, "description": "Only events of these types."},
                    "exclude_type": {"type": "array", "items": {"type": "string"}, "description": "Leave out events of these types (e.g. progress)."},
                    "errors_only": {"type": "boolean", "description": "Only events that report a failure."},
                    "format": {"type": "string", "enum": ["text", "jsonl", "json"]},
                    "max_tokens": max_tokens
                },
                "required": ["path"]
            })),
        ),
        // --archive (hook: `archive` module).
        Tool::new(
            "read_original",
            "The original bytes of one log line, from the archive smart-tee wrote beside the \
             log (LOG.orig.zst, with --archive or SMART_TEE_ARCHIVE=1): what a cut event held \
             before it was cut. line is the event's #N in read_log's text view. A long line comes \
             a page at a time: the first line of the response gives the bytes shown and the \
             offset of the next page.",
            schema(json!({
                "type": "object",
                "properties": {
                    "path": path,
                    "line": {"type": "integer", "minimum": 1, "description": "The log line's number (#N in read_log)."},
                    "offset": {"type": "integer", "minimum": 0, "description": "The first byte of the line to show; default 0."},
                    "limit": {"type": "integer", "minimum": 1, "description": "At most this many bytes; default: what the budget holds."},
                    "max_tokens": max_tokens
                },
                "required": ["path", "line"]
            })),
        ),
        Tool::new(
            "log_summary",
            "One screen about a run: session id, model, time, turns, cost, tokens, tools used \
             with counts, errors with their first line, files written, and how the run ended. \
             As JSON.",
            schema(json!({
                "type": "object",
                "properties": {"path": path, "max_tokens": max_tokens},
                "required": ["path"]
            })),
        ),
        Tool::new(
            "wait_for_log",
            "Wait until a log grows past a size (default: its size now) or reaches its final \
             event, or until the timeout (seconds, default 30, at most 300). Returns the new \
             size and whether the run has finished: call read_log with a tail next.",
            schema(json!({
                "type": "object",
                "properties": {
                    "path": path,
                    "after_bytes": {"type": "integer", "minimum": 0, "description": "Return once the log is larger than this."},
                    "timeout_seconds": {"type": "number", "minimum": 0, "maximum": 300}
                },
                "required": ["path"]
            })),
        ),
    ]
}

impl ServerHandler for LogServer {
    fn get_info(&self) -> InitializeResult {
        let mut implementation = Implementation::default();
        implementation.name = "smart-tee".into();
        implementation.version = env!("CARGO_PKG_VERSION").into();
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(implementation)
            .with_instructions(
                "Agent logs written by smart-tee (or raw agent streams). list_logs shows what \
                 there is; read_log reads events within a token budget; log_summary says what \
                 happened; wait_for_log waits for progress.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let roots = Arc::clone(&self.roots);
        let name = request.name.to_string();
        let result = if name == "wait_for_log" {
            wait_for_log(&roots, &args).await
        } else {
            tokio::task::spawn_blocking(move || match name.as_str() {
                "list_logs" => list_logs(&roots, &args),
                "read_log" => read_log(&roots, &args),
                "log_summary" => log_summary(&roots, &args),
                "read_original" => read_original(&roots, &args),
                other => Err(format!("unknown tool {other:?}")),
            })
            .await
            .unwrap_or_else(|e| Err(format!("the tool failed: {e}")))
        };
        Ok(match result {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        }
        .into())
    }
}

/// The budget in bytes of a response.
fn budget(args: &JsonObject) -> usize {
    let tokens = args
        .get("max_tokens")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_MAX_TOKENS, |t| (t as usize).max(100));
    tokens * 3
}

/// Resolves `path` (relative to a root, or absolute inside one) to a log that may be read.
pub fn resolve(roots: &[PathBuf], path: &str) -> Result<PathBuf, String> {
    let p = Path::new(path);
    if path.is_empty() || p.components().any(|c| c == Component::ParentDir) {
        return Err(format!("{path:?}: paths with '..' are refused"));
    }
    let candidates: Vec<PathBuf> = if p.is_absolute() {
        vec![p.to_path_buf()]
    } else {
        roots.iter().map(|r| r.join(p)).collect()
    };
    let mut last = format!("{path:?}: no such log under the roots");
    for c in candidates {
        let Ok(real) = std::fs::canonicalize(&c) else {
            continue;
        };
        if !roots.iter().any(|r| real.starts_with(r)) {
            last = format!("{path:?}: outside the roots (a symlink that leads out is refused)");
            continue;
        }
        let meta = std::fs::metadata(&real).map_err(|e| format!("{path:?}: {e}"))?;
        if !meta.is_file() {
            return Err(format!(
                "{path:?}: not a regular file (devices, FIFOs and directories are refused)"
            ));
        }
        check_is_log(&real).map_err(|why| format!("{path:?}: {why}"))?;
        return Ok(real);
    }
    Err(last)
}

/// A log is text of JSON lines (or gzip/zstd of it): a NUL byte in its first 64 KiB, or a
/// first line that is not JSON, says it is something else.
fn check_is_log(path: &Path) -> Result<(), String> {
    use std::io::Read;
    let mut head = vec![0u8; 64 * 1024];
    let mut f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) => return Err(e.to_string()),
        }
    }
    let head = &head[..n];
    if head.starts_with(&[0x1f, 0x8b]) || head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        return Ok(()); // compressed: judged when read
    }
    if memchr::memchr(0, head).is_some() {
        return Err("a binary file, not a log".into());
    }
    let first = head
        .split(|&b| b == b'\n')
        .find(|l| !l.trim_ascii().is_empty());
    match first {
        None => Ok(()), // empty: a log not written yet
        Some(line) if line.trim_ascii().starts_with(b"{") => Ok(()),
        Some(_) => Err("not a log: its first line is not a JSON object".into()),
    }
}

fn str_arg<'a>(args: &'a JsonObject, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

fn list_arg(args: &JsonObject, key: &str) -> Vec<String> {
    match args.get(key) {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

fn read_log(roots: &[PathBuf], args: &JsonObject) -> Result<String, String> {
    let path = resolve(roots, str_arg(args, "path").unwrap_or(""))?;
    let grep = match str_arg(args, "grep") {
        Some(p) => Some(regex::bytes::Regex::new(p).map_err(|e| format!("grep {p:?}: {e}"))?),
        None => None,
    };
    let format = match str_arg(args, "format").unwrap_or("text") {
        "text" => Format::Text,
        "jsonl" => Format::Jsonl,
        "json" => Format::Json,
        other => return Err(format!("format {other:?}: use text, jsonl or json")),
    };
    let count = |k: &str| args.get(k).and_then(Value::as_u64).map(|n| n as usize);
    let opts = ViewOptions {
        head: count("head"),
        tail: count("tail"),
        grep,
        types: list_arg(args, "type"),
        exclude_types: list_arg(args, "exclude_type"),
        errors: args.get("errors_only") == Some(&Value::Bool(true)),
        format,
        max_tokens: Some(budget(args) / 3),
        ..ViewOptions::new(vec![path.clone()])
    };
    let mut text = view_text(&opts)?;
    // --archive (hook: `archive` module): how to get a cut event's original.
    if let Some(hint) = crate::archive::original::cut_hint(&path, &text)
        && text.len() + hint.len() <= budget(args)
    {
        text.push_str(&hint);
    }
    Ok(text)
}

/// `read_original` (hook: `archive` module).
fn read_original(roots: &[PathBuf], args: &JsonObject) -> Result<String, String> {
    let path = resolve(roots, str_arg(args, "path").unwrap_or(""))?;
    let num = |k: &str| args.get(k).and_then(Value::as_u64);
    let line = num("line").ok_or("line: give the log line's number (#N), from 1")?;
    let (offset, limit) = (num("offset").unwrap_or(0), num("limit").unwrap_or(u64::MAX));
    crate::archive::original::read_page(roots, &path, line, offset, limit, budget(args))
}

/// The `--view` engine's output for `opts`, or why the log could not be read.
fn view_text(opts: &ViewOptions) -> Result<String, String> {
    let mut out = Vec::new();
    let problems = crate::view::run_to(opts, &mut out).map_err(|e| e.to_string())?;
    match problems.into_iter().next() {
        Some(p) => Err(p),
        None => Ok(String::from_utf8_lossy(&out).into_owned()),
    }
}

fn log_summary(roots: &[PathBuf], args: &JsonObject) -> Result<String, String> {
    let path = resolve(roots, str_arg(args, "path").unwrap_or(""))?;
    let opts = ViewOptions {
        summary: true,
        format: Format::Json,
        max_tokens: Some(budget(args) / 3),
        ..ViewOptions::new(vec![path])
    };
    view_text(&opts)
}

/// True for the type of an event that ends a run, in any agent's stream.
fn is_final(kind: &str) -> bool {
    matches!(
        kind,
        "result" | "turn.completed" | "turn.failed" | "complete"
    )
}

/// What `list_logs` says of one log.
fn describe(root: &Path, path: &Path) -> Value {
    let meta = std::fs::metadata(path).ok();
    let size = meta.as_ref().map_or(0, std::fs::Metadata::len);
    let modified = meta
        .and_then(|m| m.modified().ok())
        .map(crate::stamp::rfc3339_millis);
    let mut first: Option<Value> = None;
    let mut last: Option<Value> = None;
    let mut lines = 0u64;
    let mut finished = false;
    let _ = crate::view::for_each_line(path, |line| {
        lines += 1;
        if let Ok(v) = serde_json::from_slice::<Value>(line) {
            let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
            finished = is_final(kind);
            if first.is_none() {
                first = Some(v.clone());
            }
            last = Some(v);
        }
        true
    });
    let time = |v: &Option<Value>| v.as_ref().and_then(crate::gist::time_of);
    let format = first
        .as_ref()
        .map(|v| format!("{:?}", crate::gist::format_of(v)));
    json!({
        "path": path.strip_prefix(root).unwrap_or(path).to_string_lossy(),
        "size": size,
        "lines": lines,
        "first_event": time(&first),
        "last_event": time(&last),
        "format": format,
        "finished": finished,
        "last_write": modified,
    })
}

fn list_logs(roots: &[PathBuf], args: &JsonObject) -> Result<String, String> {
    let budget = budget(args);
    let mut found = Vec::new();
    for root in roots {
        let mut stack = vec![(root.clone(), 0)];
        while let Some((dir, depth)) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
            entries.sort_by_key(|e| e.file_name());
            for e in entries {
                let Ok(ft) = e.file_type() else { continue };
                let p = e.path();
                if ft.is_dir() && depth < 8 {
                    stack.push((p, depth + 1));
                } else if ft.is_file() && check_is_log(&p).is_ok() && found.len() < 1000 {
                    found.push((root.clone(), p));
                }
            }
        }
    }
    let mut logs: Vec<Value> = Vec::new();
    let mut used = 64;
    let mut left_out = 0;
    for (root, p) in &found {
        let d = describe(root, p);
        let len = d.to_string().len() + 1;
        if used + len > budget {
            left_out += 1;
            continue;
        }
        used += len;
        logs.push(d);
    }
    Ok(json!({"logs": logs, "left_out": left_out}).to_string())
}

/// The log's size and whether its last event is a final one.
fn state(path: &Path) -> (u64, bool) {
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    let finished = crate::view::ReverseLines::open(path)
        .ok()
        .and_then(|mut r| r.prev().ok().flatten())
        .and_then(|l| serde_json::from_slice::<Value>(&l).ok())
        .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_string))
        .is_some_and(|t| is_final(&t));
    (size, finished)
}

async fn wait_for_log(roots: &[PathBuf], args: &JsonObject) -> Result<String, String> {
    let path = resolve(roots, str_arg(args, "path").unwrap_or(""))?;
    let timeout = args
        .get("timeout_seconds")
        .and_then(Value::as_f64)
        .map_or(Duration::from_secs(30), |s| {
            Duration::from_secs_f64(s.clamp(0.0, 300.0))
        })
        .min(MAX_WAIT);
    let (start_size, _) = state(&path);
    let after = args
        .get("after_bytes")
        .and_then(Value::as_u64)
        .unwrap_or(start_size);
    let started = Instant::now();
    loop {
        let (size, finished) = state(&path);
        let grew = size > after;
        if grew || finished || started.elapsed() >= timeout {
            return Ok(json!({
                "size": size,
                "grew": grew,
                "finished": finished,
                "timed_out": !grew && !finished,
                "waited_seconds": started.elapsed().as_secs_f64(),
            })
            .to_string());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
