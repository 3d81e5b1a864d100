//! `smart-tee mcp`: the logs served to agents over MCP (JSON-RPC 2.0, one message a line on
//! stdio), read-only. Four tools (`tools.rs`): `list_logs`, `read_log` (the `--view` engine),
//! `log_summary` and `wait_for_log`; what is served and how a path is opened once under a root
//! is in `logs.rs` and `confine.rs`.
//!
//! No request can freeze the server or grow it without bound:
//! - the thread that reads requests answers `ping`, `initialize`, `tools/list` and every
//!   protocol error itself, and hands tool calls to fixed pools of worker threads (reads, and
//!   waits apart); a call that finds its pool's queue full is answered "busy" at once;
//! - answers go through a bounded queue to one writer thread: a client that stops reading
//!   stops the server from reading more requests, so memory stays bounded;
//! - a request line is at most [`MAX_REQUEST`] bytes (a longer one is answered with an error
//!   and skipped); files are opened non-blocking and only regular files are read; the bytes
//!   decompressed per request are bounded;
//! - when stdin closes the server stops: waits end, and it exits once the calls in progress
//!   are answered (or after [`DRAIN`]).
//!
//! [`Server::handle_line`] answers one request line in the calling thread (the fuzz target
//! drives it).

mod listing;
mod logs;
mod tools;

use std::io::{self, BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};

pub use logs::{Roots, is_log_name};
use tools::{Call, InvalidParams};
pub use tools::{Context, DEFAULT_MAX_TOKENS, MAX_DECOMPRESSED, MAX_TOKENS};

/// The longest request line read; a longer one is answered with an error and skipped.
pub const MAX_REQUEST: usize = 1 << 20;
/// Threads that run reading tools, and calls that may wait for one.
const READERS: usize = 4;
const READ_QUEUE: usize = 16;
/// Threads that run `wait_for_log`, and calls that may wait for one.
const WAITERS: usize = 4;
const WAIT_QUEUE: usize = 4;
/// Answers queued for the writer.
const ANSWERS: usize = 8;
/// How long the server lets calls in progress finish once stdin has closed.
const DRAIN: Duration = Duration::from_secs(10);

/// The protocol versions this server speaks, newest first.
const VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// JSON-RPC error codes.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const BUSY: i64 = -32000;

/// How `smart-tee mcp` was started.
#[derive(Clone, Debug, Default)]
pub struct McpOptions {
    /// The directories whose logs are served (none: the current directory).
    pub roots: Vec<PathBuf>,
    /// Serve logs in hidden folders.
    pub hidden: bool,
    /// Serve files with other hard links.
    pub hard_links: bool,
}

/// What to do with one request line.
pub enum Dispatch {
    /// Nothing to answer (a notification, or a response).
    Nothing,
    /// This answer, at once.
    Answer(String),
    /// A tool call to run, and the id to answer it with.
    Call(Value, Call),
}

/// The server: its roots and state.
pub struct Server {
    cx: Context,
}

/// A JSON-RPC answer line: redacted but its id ([`crate::door::json_rpc_line`]), and inert
/// (no character from a log can act on a terminal).
fn line(v: Value) -> String {
    let s = crate::door::json_rpc_line(v);
    String::from_utf8_lossy(&crate::read::log::inert_json(s.as_bytes())).into_owned()
}

/// The most bytes of an error's message: within the least budget a call may ask for (what a
/// client sent is repeated no further than this).
const ERROR_CAP: usize = 240;

fn error(id: &Value, code: i64, message: &str) -> String {
    let message = crate::read::summary::clip(message, ERROR_CAP);
    line(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
}

fn result(id: &Value, result: Value) -> String {
    line(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

impl Server {
    /// A server over `opts`' roots.
    pub fn new(opts: &McpOptions) -> Result<Server, String> {
        let roots = if opts.roots.is_empty() {
            vec![PathBuf::from(".")]
        } else {
            opts.roots.clone()
        };
        Ok(Server {
            cx: Context {
                roots: Roots::open(&roots, opts.hidden, opts.hard_links)?,
                stopping: Arc::new(AtomicBool::new(false)),
                max_wait: tools::MAX_WAIT,
            },
        })
    }

    /// Caps how long `wait_for_log` may wait (the fuzz target waits not at all).
    pub fn with_max_wait(mut self, max: Duration) -> Server {
        self.cx.max_wait = max;
        self
    }

    /// Reads one request line and says what to do.
    pub fn dispatch(&self, request: &[u8]) -> Dispatch {
        let null = Value::Null;
        let v: Value = match serde_json::from_slice(request) {
            Ok(v) => v,
            Err(e) => {
                return Dispatch::Answer(error(&null, PARSE_ERROR, &format!("not JSON: {e}")));
            }
        };
        let Some(msg) = v.as_object() else {
            return Dispatch::Answer(error(
                &null,
                INVALID_REQUEST,
                "a request is a JSON object (batches are not supported)",
            ));
        };
        let id = msg.get("id").cloned();
        let Some(method) = msg.get("method") else {
            return Dispatch::Nothing; // a response to us, or noise: nothing to answer
        };
        let Some(id) = id else {
            return Dispatch::Nothing; // a notification
        };
        if !matches!(id, Value::String(_) | Value::Number(_)) {
            return Dispatch::Answer(error(
                &Value::Null,
                INVALID_REQUEST,
                "a request's id is a string or a number",
            ));
        }
        let Some(method) = method.as_str() else {
            return Dispatch::Answer(error(&id, INVALID_REQUEST, "method is a string"));
        };
        let empty = Map::new();
        let params = match msg.get("params") {
            None | Some(Value::Null) => &empty,
            Some(Value::Object(p)) => p,
            Some(_) => {
                return Dispatch::Answer(error(&id, INVALID_PARAMS, "params is an object"));
            }
        };
        match method {
            "initialize" => {
                let asked = params.get("protocolVersion").and_then(Value::as_str);
                let version = asked
                    .filter(|v| VERSIONS.contains(v))
                    .unwrap_or(VERSIONS[0]);
                Dispatch::Answer(result(
                    &id,
                    json!({
                        "protocolVersion": version,
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "smart-tee", "version": env!("CARGO_PKG_VERSION")},
                        "instructions": "Agent logs written by smart-tee (or raw agent streams). \
                            list_logs shows what there is; read_log reads events within a token \
                            budget; log_summary says what happened; wait_for_log waits for \
                            progress; read_original reads a cut line's original from its archive.",
                    }),
                ))
            }
            "ping" => Dispatch::Answer(result(&id, json!({}))),
            "tools/list" => Dispatch::Answer(result(&id, json!({"tools": tools::list()}))),
            "tools/call" => {
                let Some(name) = params.get("name").and_then(Value::as_str) else {
                    return Dispatch::Answer(error(
                        &id,
                        INVALID_PARAMS,
                        "tools/call needs a tool name (a string)",
                    ));
                };
                let args = match params.get("arguments") {
                    None | Some(Value::Null) => &empty,
                    Some(Value::Object(a)) => a,
                    Some(_) => {
                        return Dispatch::Answer(error(
                            &id,
                            INVALID_PARAMS,
                            "arguments is an object",
                        ));
                    }
                };
                if !tools::exists(name) {
                    let msg = format!("unknown tool {}", logs::quoted(name));
                    return Dispatch::Answer(error(&id, INVALID_PARAMS, &msg));
                }
                match Call::new(name, args) {
                    Ok(call) => Dispatch::Call(id, call),
                    Err(InvalidParams(why)) => Dispatch::Answer(error(
                        &id,
                        INVALID_PARAMS,
                        &crate::read::log::escape_controls(&why),
                    )),
                }
            }
            _ => Dispatch::Answer(error(
                &id,
                METHOD_NOT_FOUND,
                &format!("no method {}", logs::quoted(method)),
            )),
        }
    }

    /// Runs a tool call and writes its answer.
    pub fn run_call(&self, id: &Value, call: Call) -> String {
        // With --redact, every answer passes the same redaction as the logs.
        let cap = call.budget().saturating_sub(ERROR_CAP).max(ERROR_CAP);
        let (content, is_error) = match call.run(&self.cx) {
            Ok(blocks) => (blocks.into_iter().map(crate::door::text).collect(), false),
            // Redacted before it is cut (a cut would keep a part of a secret).
            Err(message) => (
                vec![crate::read::summary::clip(&crate::door::text(message), cap)],
                true,
            ),
        };
        let content: Vec<Value> = content
            .into_iter()
            .map(|text| json!({"type": "text", "text": text}))
            .collect();
        result(id, json!({"content": content, "isError": is_error}))
    }

    /// Answers one request line in this thread (`None`: nothing to answer).
    pub fn handle_line(&self, request: &[u8]) -> Option<String> {
        match self.dispatch(request) {
            Dispatch::Nothing => None,
            Dispatch::Answer(a) => Some(a),
            Dispatch::Call(id, call) => Some(self.run_call(&id, call)),
        }
    }
}

/// One line of stdin, at most [`MAX_REQUEST`] bytes.
enum Request {
    Line(Vec<u8>),
    TooLong,
    End,
}

/// Reads the next request line; a longer one than [`MAX_REQUEST`] is skipped to its end.
fn next_request(input: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<Request> {
    line.clear();
    let mut too_long = false;
    loop {
        let buf = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(match (too_long, line.is_empty()) {
                (true, _) => Request::TooLong,
                (false, true) => Request::End,
                (false, false) => Request::Line(std::mem::take(line)),
            });
        }
        let (take, done) = match memchr::memchr(b'\n', buf) {
            Some(nl) => (nl + 1, true),
            None => (buf.len(), false),
        };
        if !too_long {
            let body = &buf[..if done { take - 1 } else { take }];
            if line.len() + body.len() > MAX_REQUEST {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(body);
            }
        }
        input.consume(take);
        if done {
            return Ok(if too_long {
                Request::TooLong
            } else {
                Request::Line(std::mem::take(line))
            });
        }
    }
}

/// A pool of threads running tool calls from a bounded queue.
fn pool(
    server: &Arc<Server>,
    threads: usize,
    queue: usize,
    answers: &SyncSender<String>,
) -> SyncSender<(Value, Call)> {
    let (tx, rx) = sync_channel::<(Value, Call)>(queue);
    let rx = Arc::new(Mutex::new(rx));
    for _ in 0..threads {
        let (server, rx, answers) = (Arc::clone(server), Arc::clone(&rx), answers.clone());
        std::thread::spawn(move || {
            loop {
                let job = match rx.lock() {
                    Ok(r) => r.recv(),
                    Err(_) => return,
                };
                let Ok((id, call)) = job else { return };
                if answers.send(server.run_call(&id, call)).is_err() {
                    return;
                }
            }
        });
    }
    tx
}

/// Writes answers to stdout, one a line, each redacted already ([`line`]); says when it is
/// done (all senders gone, or stdout gone).
fn writer(answers: Receiver<String>, done: SyncSender<()>) {
    std::thread::spawn(move || {
        let mut out = crate::door::stdout_answered();
        for a in answers {
            let ok = out
                .write_all(a.as_bytes())
                .and_then(|()| out.write_all(b"\n"))
                .and_then(|()| out.flush());
            if ok.is_err() {
                break; // the client is gone
            }
        }
        let _ = done.send(());
    });
}

/// Runs the server on stdin/stdout until stdin closes.
pub fn run(opts: McpOptions) -> ExitCode {
    let server = match Server::new(&opts) {
        Ok(s) => Arc::new(s),
        Err(e) => {
            crate::say!("smart-tee: mcp {e}");
            return ExitCode::from(2);
        }
    };
    let (answers, answered) = sync_channel::<String>(ANSWERS);
    let (done_tx, done) = sync_channel::<()>(1);
    writer(answered, done_tx);
    let reads = pool(&server, READERS, READ_QUEUE, &answers);
    let waits = pool(&server, WAITERS, WAIT_QUEUE, &answers);
    let stdin = io::stdin();
    let mut input = io::BufReader::with_capacity(64 * 1024, stdin.lock());
    let mut buf = Vec::new();
    let status = loop {
        let answer = match next_request(&mut input, &mut buf) {
            Ok(Request::End) => break ExitCode::SUCCESS,
            Err(e) => {
                crate::say!("smart-tee: mcp: reading standard input: {e}");
                break ExitCode::from(1);
            }
            Ok(Request::TooLong) => Some(error(
                &Value::Null,
                INVALID_REQUEST,
                &format!("request line longer than {MAX_REQUEST} bytes: skipped"),
            )),
            Ok(Request::Line(l)) if l.iter().all(u8::is_ascii_whitespace) => None,
            Ok(Request::Line(l)) => match server.dispatch(&l) {
                Dispatch::Nothing => None,
                Dispatch::Answer(a) => Some(a),
                Dispatch::Call(id, call) => {
                    let pool = if call.waits() { &waits } else { &reads };
                    match pool.try_send((id, call)) {
                        Ok(()) => None,
                        Err(TrySendError::Full((id, _)) | TrySendError::Disconnected((id, _))) => {
                            Some(error(
                                &id,
                                BUSY,
                                "busy: too many calls in progress; try again when one has been \
                                 answered",
                            ))
                        }
                    }
                }
            },
        };
        if let Some(a) = answer
            && answers.send(a).is_err()
        {
            break ExitCode::SUCCESS; // stdout is gone
        }
    };
    // Stdin closed: waits end, calls in progress are answered, then the writer ends.
    server.cx.stopping.store(true, Ordering::Relaxed);
    drop((reads, waits, answers));
    let _ = done.recv_timeout(DRAIN);
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_lines_are_bounded_and_skipped_whole() {
        let long = vec![b'x'; MAX_REQUEST + 10];
        let mut input = Vec::new();
        input.extend_from_slice(b"{\"a\":1}\n");
        input.extend_from_slice(&long);
        input.extend_from_slice(b"\n{\"b\":2}\nlast");
        let mut r = io::BufReader::with_capacity(1000, &input[..]);
        let mut buf = Vec::new();
        let mut got = Vec::new();
        loop {
            match next_request(&mut r, &mut buf).unwrap() {
                Request::Line(l) => got.push(String::from_utf8(l).unwrap()),
                Request::TooLong => got.push("(too long)".into()),
                Request::End => break,
            }
        }
        assert_eq!(got, ["{\"a\":1}", "(too long)", "{\"b\":2}", "last"]);
    }
}
