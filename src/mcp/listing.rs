//! `list_logs`: every log under the roots, each described by the fields of its summary that
//! tell where its run stands, within the answer's budget.

use std::sync::atomic::Ordering;

use serde_json::{Value, json};

use super::logs::{MAX_LISTED, OpenedLog};
use super::tools::{Context, MAX_DECOMPRESSED};
use crate::read::log::STALL_AFTER;
use crate::read::log::{DecompressLimit, inert_json};
use crate::read::summary::TOKEN_FIELDS;

/// What `list_logs` says of one log: the fields of its summary (the same code as
/// `log_summary`) that tell where the run stands.
fn describe(log: OpenedLog) -> Value {
    let modified = log
        .file
        .metadata()
        .ok()
        .and_then(|m| m.modified().ok())
        .map(crate::cut::stamp::rfc3339_millis);
    let limit = DecompressLimit {
        bytes: Some(MAX_DECOMPRESSED),
        ..DecompressLimit::default()
    };
    let first = log.file.try_clone().ok().and_then(|f| {
        let mut first = None;
        let _ = crate::read::log::for_each_line_in(f, &limit, |l| {
            first = crate::read::events::parse(l);
            false
        });
        first
    });
    let (summary, lines) =
        crate::read::summary::of_log(&log.file, &limit, STALL_AFTER, |_| true).unwrap_or_default();
    let s = summary.to_json();
    let mut d = json!({
        "path": log.rel.to_string_lossy(),
        "size": log.size,
        "lines": lines,
        "first_event": s["first_event"],
        "last_event": s["last_event"],
        "format": first.as_ref().map(|v| format!("{:?}", crate::read::gist::format_of(v))),
        "state": s["state"],
        "ok": s["ok"],
        "finished": s["state"] == "finished",
        "last_write": modified,
    });
    // The tokens as every surface defines them (#48).
    for k in TOKEN_FIELDS {
        d[k] = s[k].clone();
    }
    // The columns of `--summary --by-run`: who ran, for how long, what it did and cost.
    for k in [
        "session_id",
        "agent",
        "agent_version",
        "model",
        "duration_ms",
        "turns",
        "tool_calls",
        "tool_failures",
        "cost_usd",
        "cost_estimated",
    ] {
        d[k] = s[k].clone();
    }
    d["conversations"] = s.get("conversation_count").cloned().unwrap_or(json!(1));
    if let Some(runs) = s.get("runs") {
        d["runs"] = runs.clone();
    }
    if limit.hit.load(Ordering::Relaxed) {
        d["cut"] = json!(format!(
            "read the first {} MiB decompressed only",
            MAX_DECOMPRESSED >> 20
        ));
    }
    d
}

/// One JSON value as inert text.
fn json_text(v: &Value) -> String {
    let s = v.to_string();
    String::from_utf8_lossy(&inert_json(s.as_bytes())).into_owned()
}

pub(super) fn list_logs(cx: &Context, budget: usize) -> String {
    let (candidates, more) = cx.roots.candidates();
    let mut logs: Vec<Value> = Vec::new();
    let mut used = 80;
    let mut left_out = 0;
    let mut full = false;
    for (i, rel) in &candidates {
        if full {
            left_out += 1;
            continue;
        }
        let Some(log) = cx.roots.open_candidate(*i, rel) else {
            continue; // not plainly a log
        };
        let d = describe(log);
        let len = json_text(&d).len() + 1;
        if used + len > budget {
            // The budget is spent: the rest are counted, not read.
            full = true;
            left_out += 1;
            continue;
        }
        used += len;
        logs.push(d);
    }
    if logs.is_empty() && left_out > 0 {
        // Not one fits the budget: still the newest log's path, so the answer is never empty.
        let newest = candidates
            .iter()
            .filter_map(|(i, rel)| {
                let log = cx.roots.open_candidate(*i, rel)?;
                let modified = log.file.metadata().ok()?.modified().ok()?;
                Some((modified, rel))
            })
            .max();
        if let Some((modified, rel)) = newest {
            logs.push(json!({
                "path": rel.to_string_lossy(),
                "modified": crate::cut::stamp::rfc3339_millis(modified),
            }));
            left_out -= 1;
        }
    }
    let mut answer = json!({"logs": logs, "left_out": left_out});
    if more {
        answer["more_not_looked_at"] = json!(format!(
            "the listing stops at {MAX_LISTED} logs or 100000 directory entries"
        ));
    }
    json_text(&answer)
}
