//! The four tools: `list_logs`, `read_log` (the `--view` engine), `log_summary` and
//! `wait_for_log`. Arguments are checked first (a wrong one is a JSON-RPC invalid-params
//! error); a log that cannot be served is a tool error result saying why. Every answer fits
//! its budget: `max_tokens` (default 25,000, at least 100, at most [`MAX_TOKENS`]) × 3 bytes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use std::os::unix::fs::MetadataExt;

use super::logs::{OpenedLog, Roots, reopen};
use crate::read::log::STALL_AFTER;
use crate::read::log::{DecompressLimit, Format, ViewOptions};
use crate::read::summary::{Health, State, Summary};

/// The token budget of a response when the caller gives none: MCP tool results are capped at
/// 25,000 tokens by common clients.
pub const DEFAULT_MAX_TOKENS: u64 = 25_000;
/// The least and the most budget a caller may ask for, in tokens.
pub const MIN_TOKENS: u64 = 100;
pub const MAX_TOKENS: u64 = 1_000_000;
/// The most bytes decompressed from a compressed log by one request.
pub const MAX_DECOMPRESSED: u64 = 256 << 20;
/// Room kept in a budget for a note on what a bound cut.
const NOTE_ROOM: usize = 200;
/// The longest `wait_for_log` may wait.
pub const MAX_WAIT: Duration = Duration::from_secs(300);
/// How often `wait_for_log` looks at the log.
const POLL: Duration = Duration::from_millis(200);

/// A tool's answer: text blocks, or a tool error.
pub type Answer = Result<Vec<String>, String>;

/// Arguments that break the tool's schema: answered with JSON-RPC's invalid-params error.
#[derive(Debug)]
pub struct InvalidParams(pub String);

/// What the tools share.
pub struct Context {
    pub roots: Roots,
    /// Set when the server is stopping: waits end.
    pub stopping: Arc<AtomicBool>,
    /// The longest a wait may be.
    pub max_wait: Duration,
}

/// The tools' descriptions, as `tools/list` gives them.
pub fn list() -> Value {
    let path = json!({"type": "string", "description": "The log's path, relative to a root (as list_logs gives it)."});
    let max_tokens = json!({"type": "integer", "minimum": MIN_TOKENS, "maximum": MAX_TOKENS, "description": "The response's budget in tokens (bytes / 3); default 25000."});
    let stall = json!({"type": "integer", "minimum": 0, "description": "Seconds without an event (heartbeats aside) after which a run whose writer is alive reads stalled; default 120."});
    // Every schema is closed: an argument it does not name is refused (Call::new), so that a
    // misspelt filter (`errors` for `errors_only`) is never taken for no filter.
    let tool = |name: &str, description: &str, mut input: Value| {
        input["additionalProperties"] = Value::Bool(false);
        json!({"name": name, "description": description, "inputSchema": input})
    };
    json!([
        tool(
            "list_logs",
            "List the agent logs under the server's roots: path, size, lines, first and last \
             event time, which agent's format, the run's state (running, stalled, finished with \
             ok true or false, or ended without a final event: no writer holds the log any \
             more), as log_summary gives them, and when the log was last written. Only files named like \
             logs (.jsonl, .ndjson, .log, and their rotated .N/.gz/.zst forms) whose first line \
             is a JSON object; hidden folders are skipped.",
            json!({"type": "object", "properties": {"max_tokens": max_tokens}}),
        ),
        tool(
            "read_log",
            "Read events of one log, newest kept first, within a token budget (default 25000): \
             long fields are cut head + marker + tail, images become descriptors, and a first \
             line says how many earlier events were left out. Filter with tail/head (event \
             counts), grep (a regular expression), type / exclude_type (event types) and \
             errors_only. format: text (one readable line per event, the default), jsonl or json.",
            json!({
                "type": "object",
                "properties": {
                    "path": path,
                    "tail": {"type": "integer", "minimum": 0, "description": "Only the last N events (not with head)."},
                    "head": {"type": "integer", "minimum": 0, "description": "Only the first N events (not with tail)."},
                    "grep": {"type": "string", "description": "Only events matching this regular expression."},
                    "type": {"type": "array", "items": {"type": "string"}, "description": "Only events of these types."},
                    "exclude_type": {"type": "array", "items": {"type": "string"}, "description": "Leave out events of these types (e.g. progress)."},
                    "errors_only": {"type": "boolean", "description": "Only events that report a failure."},
                    "format": {"type": "string", "enum": ["text", "jsonl", "json"]},
                    "max_tokens": max_tokens
                },
                "required": ["path"]
            }),
        ),
        tool(
            "read_original",
            "The original bytes of one log line, from the archive smart-tee wrote beside the \
             log (LOG.orig.zst, with --archive or SMART_TEE_ARCHIVE=1): what a cut event held \
             before it was cut. line is the event's #N in read_log's text view. A long line comes \
             a page at a time: the first line of the response gives the bytes shown and the \
             offset of the next page.",
            json!({
                "type": "object",
                "properties": {
                    "path": path,
                    "line": {"type": "integer", "minimum": 1, "description": "The log line's number (#N in read_log)."},
                    "offset": {"type": "integer", "minimum": 0, "description": "The first byte of the line to show; default 0."},
                    "limit": {"type": "integer", "minimum": 1, "description": "At most this many bytes; default: what the budget holds."},
                    "max_tokens": max_tokens
                },
                "required": ["path", "line"]
            }),
        ),
        tool(
            "log_summary",
            "One screen about a run: its state (running; stalled: a writer holds the log and no \
             event came for stall_after_seconds, heartbeats aside; finished, with ok; ended \
             without a final event: the agent or its pipeline died), session id, model, time, \
             turns, cost, tokens per model, tool calls and failed ones, API retries with the \
             last status, refusals, permission denials, hook failures, startup errors, errors \
             with their first line, files written, and how the run ended. As JSON.",
            json!({
                "type": "object",
                "properties": {"path": path, "max_tokens": max_tokens, "stall_after_seconds": stall},
                "required": ["path"]
            }),
        ),
        tool(
            "wait_for_log",
            "Wait until a log grows past a size (default: its size now) or its run changes \
             state (finished, ended without a final event, stalled, running again), or until \
             the timeout (seconds, default 30, at most 300); a run already over is answered at \
             once. Returns the new size, the state, and what changed: call read_log with a \
             tail next.",
            json!({
                "type": "object",
                "properties": {
                    "path": path,
                    "after_bytes": {"type": "integer", "minimum": 0, "description": "Return once the log is larger than this."},
                    "timeout_seconds": {"type": "number", "minimum": 0, "maximum": 300},
                    "stall_after_seconds": stall
                },
                "required": ["path"]
            }),
        ),
    ])
}

/// True for a tool this server has.
pub fn exists(name: &str) -> bool {
    matches!(
        name,
        "list_logs" | "read_log" | "log_summary" | "wait_for_log" | "read_original"
    )
}

/// A tool's checked arguments.
pub struct Args<'a>(&'a Map<String, Value>);

impl<'a> Args<'a> {
    fn bad(key: &str, want: &str) -> InvalidParams {
        InvalidParams(format!("argument {key:?}: {want}"))
    }

    fn uint(&self, key: &str) -> Result<Option<u64>, InvalidParams> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| Self::bad(key, "a non-negative integer")),
        }
    }

    fn string(&self, key: &str) -> Result<Option<&'a str>, InvalidParams> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(Self::bad(key, "a string")),
        }
    }

    fn path(&self) -> Result<&'a str, InvalidParams> {
        match self.string("path")? {
            Some(p) if !p.is_empty() => Ok(p),
            _ => Err(Self::bad(
                "path",
                "required: the log's path, a non-empty string",
            )),
        }
    }

    fn strings(&self, key: &str) -> Result<Vec<String>, InvalidParams> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::String(s)) => Ok(vec![s.clone()]),
            Some(Value::Array(a)) => a
                .iter()
                .map(|x| x.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| Self::bad(key, "a string or an array of strings")),
            Some(_) => Err(Self::bad(key, "a string or an array of strings")),
        }
    }

    /// `stall_after_seconds`: how long a run with a live writer may go without an event
    /// before it reads `stalled` (default 120).
    fn stall_after(&self) -> Result<Duration, InvalidParams> {
        Ok(self
            .uint("stall_after_seconds")?
            .map_or(STALL_AFTER, |s| Duration::from_secs(s.min(1 << 32))))
    }

    fn flag(&self, key: &str) -> Result<bool, InvalidParams> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(Self::bad(key, "a boolean")),
        }
    }

    /// The budget in bytes: `max_tokens` clamped to its bounds, times 3 (no overflow).
    fn budget(&self) -> Result<usize, InvalidParams> {
        let tokens = self
            .uint("max_tokens")?
            .unwrap_or(DEFAULT_MAX_TOKENS)
            .clamp(MIN_TOKENS, MAX_TOKENS);
        Ok(usize::try_from(tokens.saturating_mul(3)).unwrap_or(usize::MAX))
    }
}

/// A tool call checked and ready to run.
pub enum Call {
    List {
        budget: usize,
    },
    Read {
        path: String,
        opts: Box<ViewOptions>,
        budget: usize,
    },
    Summary {
        path: String,
        budget: usize,
        stall_after: Duration,
    },
    Original {
        path: String,
        line: u64,
        offset: u64,
        limit: u64,
        budget: usize,
    },
    Wait {
        path: String,
        after: Option<u64>,
        timeout: Duration,
        stall_after: Duration,
    },
}

/// The arguments tool `name` takes: its schema's properties.
fn known_arguments(name: &str) -> Vec<String> {
    list()
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == name))
        .and_then(|t| t["inputSchema"]["properties"].as_object())
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

impl Call {
    /// The call's budget in bytes (`wait_for_log`, which answers in a line, the default one).
    pub fn budget(&self) -> usize {
        match self {
            Call::List { budget }
            | Call::Read { budget, .. }
            | Call::Summary { budget, .. }
            | Call::Original { budget, .. } => *budget,
            Call::Wait { .. } => (DEFAULT_MAX_TOKENS * 3) as usize,
        }
    }

    /// Checks `name`'s arguments.
    pub fn new(name: &str, args: &Map<String, Value>) -> Result<Call, InvalidParams> {
        let known = known_arguments(name);
        if let Some(unknown) = args.keys().find(|k| !known.contains(k)) {
            return Err(InvalidParams(format!(
                "unknown argument {unknown:?} for {name}; its arguments are: {}",
                known.join(", ")
            )));
        }
        let a = Args(args);
        Ok(match name {
            "list_logs" => Call::List {
                budget: a.budget()?,
            },
            "read_log" => {
                let grep = match a.string("grep")? {
                    Some(p) => Some(
                        regex::bytes::RegexBuilder::new(p)
                            .size_limit(1 << 20)
                            .build()
                            .map_err(|e| InvalidParams(format!("argument \"grep\": {e}")))?,
                    ),
                    None => None,
                };
                let format = match a.string("format")?.unwrap_or("text") {
                    "text" => Format::Text,
                    "jsonl" => Format::Jsonl,
                    "json" => Format::Json,
                    _ => return Err(Args::bad("format", "text, jsonl or json")),
                };
                let count = |k: &str| -> Result<Option<usize>, InvalidParams> {
                    Ok(a.uint(k)?.map(|n| usize::try_from(n).unwrap_or(usize::MAX)))
                };
                let (head, tail) = (count("head")?, count("tail")?);
                if head.is_some() && tail.is_some() {
                    // As on the command line: the first and the last N are different questions.
                    return Err(InvalidParams(
                        "arguments \"head\" and \"tail\": give one of them, not both".into(),
                    ));
                }
                let opts = ViewOptions {
                    head,
                    tail,
                    grep,
                    types: a.strings("type")?,
                    exclude_types: a.strings("exclude_type")?,
                    errors: a.flag("errors_only")?,
                    format,
                    ..ViewOptions::new(Vec::new())
                };
                Call::Read {
                    path: a.path()?.to_string(),
                    opts: Box::new(opts),
                    budget: a.budget()?,
                }
            }
            "read_original" => Call::Original {
                path: a.path()?.to_string(),
                line: match a.uint("line")? {
                    Some(n) if n >= 1 => n,
                    _ => {
                        return Err(Args::bad(
                            "line",
                            "required: the log line's number (#N), from 1",
                        ));
                    }
                },
                offset: a.uint("offset")?.unwrap_or(0),
                limit: a.uint("limit")?.unwrap_or(u64::MAX).max(1),
                budget: a.budget()?,
            },
            "log_summary" => Call::Summary {
                path: a.path()?.to_string(),
                budget: a.budget()?,
                stall_after: a.stall_after()?,
            },
            "wait_for_log" => {
                let timeout = match args.get("timeout_seconds") {
                    None | Some(Value::Null) => Duration::from_secs(30),
                    Some(v) => match v.as_f64() {
                        Some(s) if s >= 0.0 => Duration::from_secs_f64(s.min(300.0)),
                        _ => return Err(Args::bad("timeout_seconds", "a number from 0 to 300")),
                    },
                };
                Call::Wait {
                    path: a.path()?.to_string(),
                    after: a.uint("after_bytes")?,
                    timeout,
                    stall_after: a.stall_after()?,
                }
            }
            other => return Err(InvalidParams(format!("unknown tool {other:?}"))),
        })
    }

    /// True for a call that may wait long (run apart from the reads).
    pub fn waits(&self) -> bool {
        matches!(self, Call::Wait { .. })
    }

    /// Runs the call.
    pub fn run(self, cx: &Context) -> Answer {
        match self {
            Call::List { budget } => Ok(vec![super::listing::list_logs(cx, budget)]),
            Call::Read { path, opts, budget } => {
                let log = cx.roots.open_log(&path)?;
                let archived = cx.roots.open_archive_of(&log).is_ok();
                // The note's room comes out of the budget, so the answer stays within it.
                let room = if archived { 200 } else { 0 };
                let mut answer = view(log, *opts, budget.saturating_sub(room))?;
                if archived {
                    answer.push(
                        "This log has an archive: a cut event's original is one call away \
                         (read_original with the path and line = the event's #N, paging with \
                         offset/limit)."
                            .into(),
                    );
                }
                Ok(answer)
            }
            Call::Summary {
                path,
                budget,
                stall_after,
            } => {
                let log = cx.roots.open_log(&path)?;
                let opts = ViewOptions {
                    summary: true,
                    format: Format::Json,
                    stall_after,
                    ..ViewOptions::new(Vec::new())
                };
                view(log, opts, budget)
            }
            Call::Original {
                path,
                line,
                offset,
                limit,
                budget,
            } => {
                let log = cx.roots.open_log(&path)?;
                let archive = cx.roots.open_archive_of(&log)?;
                // The two descriptors opened beneath the root are read through their
                // /proc/self/fd links, which name the opened files, not paths.
                let via = |f: &std::fs::File| {
                    std::path::PathBuf::from(format!(
                        "/proc/self/fd/{}",
                        std::os::fd::AsRawFd::as_raw_fd(f)
                    ))
                };
                let (log_fd, archive_fd) = (via(&log.file), via(&archive));
                let page = crate::tee::archive::original::read_page(
                    &log_fd,
                    &archive_fd,
                    line,
                    offset,
                    limit,
                    budget,
                );
                let named = |s: String| {
                    s.replace(&log_fd.to_string_lossy().into_owned(), &path)
                        .replace(&archive_fd.to_string_lossy().into_owned(), "the archive")
                };
                page.map(|p| vec![named(p)]).map_err(named)
            }
            Call::Wait {
                path,
                after,
                timeout,
                stall_after,
            } => {
                let log = cx.roots.open_log(&path)?;
                let timeout = timeout.min(cx.max_wait);
                Ok(vec![wait_for_log(cx, log, after, timeout, stall_after)])
            }
        }
    }
}

/// The `--view` engine on an opened log, within `budget` bytes; a second block says when the
/// bound on decompressed bytes cut the log.
fn view(log: OpenedLog, mut opts: ViewOptions, budget: usize) -> Answer {
    let compressed = crate::read::log::is_compressed(&log.file).unwrap_or(false);
    let budget = if compressed {
        budget.saturating_sub(NOTE_ROOM)
    } else {
        budget
    };
    opts.files = vec![log.rel.clone()];
    opts.opened = vec![Arc::new(log.file)];
    opts.max_tokens = Some(budget / 3);
    opts.decompress = DecompressLimit {
        bytes: Some(MAX_DECOMPRESSED),
        ..DecompressLimit::default()
    };
    let mut out = Vec::new();
    let problems = crate::read::view::run_to(&opts, &mut out).map_err(|e| e.to_string())?;
    if let Some(p) = problems.into_iter().next() {
        return Err(crate::read::log::escape_controls(&p));
    }
    if out.trim_ascii().is_empty() {
        out = nothing_shown(&opts).into_bytes();
    }
    let mut blocks = vec![String::from_utf8_lossy(&out).into_owned()];
    if opts.decompress.hit.load(Ordering::Relaxed) {
        blocks.push(format!(
            "note: only the first {} MiB of the decompressed log were read (a bound per \
             request); events after them are not shown",
            MAX_DECOMPRESSED >> 20
        ));
    }
    Ok(blocks)
}

/// Why an answer holds no event: `0 of 1,204 events matched grep 'x'`.
fn nothing_shown(opts: &ViewOptions) -> String {
    let mut events = 0u64;
    if let Some(f) = opts.opened.first().and_then(|f| f.try_clone().ok()) {
        let _ = crate::read::log::for_each_line_in(f, &opts.decompress, |l| {
            events += u64::from(!l.trim_ascii().is_empty());
            true
        });
    }
    let mut filters = Vec::new();
    if let Some(g) = &opts.grep {
        filters.push(format!("grep {:?}", g.as_str()));
    }
    if !opts.types.is_empty() {
        filters.push(format!("type {}", opts.types.join(", ")));
    }
    if !opts.exclude_types.is_empty() {
        filters.push(format!("not type {}", opts.exclude_types.join(", ")));
    }
    if opts.errors {
        filters.push("errors_only".into());
    }
    let events = crate::read::view::grouped(events);
    if !filters.is_empty() {
        // The filters as the client sent them, no longer than a message repeats.
        let filters = crate::read::summary::clip(&filters.join(" and "), super::logs::ECHO_CAP);
        return format!("0 of {events} events matched {filters}\n");
    }
    let limit = match (opts.head, opts.tail) {
        (Some(n), _) => format!(" (head {n})"),
        (_, Some(n)) => format!(" (tail {n})"),
        _ => String::new(),
    };
    format!("0 of {events} events shown{limit}\n")
}

/// Where the run stands: the log's summary read once, then its health at each look.
pub(super) fn summary_of(log: &OpenedLog, stall_after: Duration) -> Summary {
    let limit = DecompressLimit {
        bytes: Some(MAX_DECOMPRESSED),
        ..DecompressLimit::default()
    };
    crate::read::summary::of_log(&log.file, &limit, stall_after, |_| true)
        .map(|(s, _)| s)
        .unwrap_or_default()
}

/// Waits until the log grows past `after` or its run changes state (finished, ended without
/// a final event, stalled, running again), or the timeout. A run already over is answered at
/// once.
fn wait_for_log(
    cx: &Context,
    log: OpenedLog,
    after: Option<u64>,
    timeout: Duration,
    stall_after: Duration,
) -> String {
    let started = Instant::now();
    let mut summary = summary_of(&log, stall_after);
    let was = summary.state();
    let over =
        |s: &Option<State>| matches!(s, Some(State::Finished(_) | State::Ended | State::Exited));
    let mut size = log.size;
    let after = after.unwrap_or(size);
    let mut seen = log;
    loop {
        let grew = size > after;
        let now = summary.state();
        let changed = now != was;
        let stopping = cx.stopping.load(Ordering::Relaxed);
        if grew || changed || over(&now) || stopping || started.elapsed() >= timeout {
            let s = summary.to_json();
            let change = if changed {
                s["state"].clone()
            } else if grew {
                json!("grew")
            } else {
                Value::Null
            };
            let mut answer = json!({
                "size": size,
                "grew": grew,
                "state": s["state"],
                "ok": s["ok"],
                "changed": change,
                "last_event": s["last_event"],
                "finished": s["state"] == "finished",
                "timed_out": !grew && !changed && !over(&now),
                "waited_seconds": started.elapsed().as_secs_f64(),
            });
            for k in crate::read::summary::TOKEN_FIELDS {
                answer[k] = s[k].clone();
            }
            return answer.to_string();
        }
        std::thread::sleep(POLL.min(timeout.saturating_sub(started.elapsed())));
        // The path again: the log may have been rotated, or swapped for what is not a log
        // (then its last state stands).
        if let Some(now) = reopen(&cx.roots, &seen) {
            if now.size != seen.size
                || now.file.metadata().ok().map(|m| m.ino())
                    != seen.file.metadata().ok().map(|m| m.ino())
            {
                summary = summary_of(&now, stall_after);
                size = now.size;
            } else {
                summary.set_health(Health::of(&now.file, stall_after));
            }
            seen = now;
        }
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, reason = "test fixtures, not a surface")]
mod tests {
    use super::*;

    /// #28.1: the path was checked, then opened again, so a folder swapped for a symlink out
    /// between the two served the outside file. By construction there is one resolution: the
    /// log is opened once, and the view reads that descriptor. Here the swap happens right
    /// after the open, where a second resolution would have read the outside file.
    #[test]
    fn a_folder_swapped_for_a_symlink_out_after_the_open_is_not_read() {
        let base = std::env::temp_dir().join(format!("smart-tee-swap-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let root = base.join("root");
        std::fs::create_dir_all(root.join("d")).unwrap();
        std::fs::create_dir_all(base.join("out")).unwrap();
        std::fs::write(root.join("d/x.jsonl"), "{\"type\":\"inside\"}\n").unwrap();
        std::fs::write(base.join("out/x.jsonl"), "{\"type\":\"secret\"}\n").unwrap();
        let roots = Roots::open(std::slice::from_ref(&root), false, false).unwrap();
        let log = roots.open_log("d/x.jsonl").unwrap();
        std::fs::rename(root.join("d"), base.join("was-d")).unwrap();
        std::os::unix::fs::symlink(base.join("out"), root.join("d")).unwrap();
        let opts = ViewOptions {
            format: Format::Jsonl,
            ..ViewOptions::new(Vec::new())
        };
        let text = view(log, opts, 75_000).unwrap().join("\n");
        assert_eq!(text, "{\"type\":\"inside\"}\n");
        let refused = roots.open_log("d/x.jsonl").unwrap_err();
        assert!(refused.contains("outside the roots"), "{refused}");
        std::fs::remove_dir_all(&base).unwrap();
    }
}
