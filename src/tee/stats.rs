//! `--stats` and `--stats-json`: what went through, what was logged, what was saved and where.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

use crate::error::Error;
use crate::line::agents::Drift;
use crate::line::marker::{escape_str, push_usize};
use crate::tee::log::Stats;

/// Where the summary goes at exit.
#[derive(Clone, Debug, Default)]
pub struct StatsReport {
    /// A human-readable summary on stderr.
    pub human: bool,
    /// A JSON object, written to this file.
    pub json: Option<PathBuf>,
}

/// A byte count in the largest unit that keeps it at 1 or more (B, KiB, MiB, GiB), one
/// decimal: a small run reads "143.2 KiB saved", not "0.1 MiB".
fn mib(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let (mut value, mut unit) = (bytes as f64, 0);
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Fields by bytes saved, most first.
fn ranked(by_field: &HashMap<Vec<u8>, u64>) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = by_field
        .iter()
        .map(|(k, &n)| (String::from_utf8_lossy(k).into_owned(), n))
        .collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

/// Writes the summary as asked.
pub fn report(
    stats: &Stats,
    by_field: &HashMap<Vec<u8>, u64>,
    drift: Option<&Drift>,
    to: &StatsReport,
) -> Result<(), Error> {
    let saved = stats.bytes_in.saturating_sub(stats.bytes_logged);
    let fields = ranked(by_field);
    if to.human {
        crate::say!(
            "smart-tee: {} lines in: {} logged whole, {} cut, {} not JSON, {} blank; {} in, {} logged, {} saved",
            stats.lines_in(),
            stats.lines_verbatim,
            stats.lines_cut + stats.lines_unplanned,
            stats.lines_non_json,
            stats.lines_blank,
            mib(stats.bytes_in),
            mib(stats.bytes_logged),
            mib(saved),
        );
        if !fields.is_empty() {
            let top: Vec<String> = fields
                .iter()
                .take(10)
                .map(|(k, n)| format!("{k} {}", mib(*n)))
                .collect();
            crate::say!("smart-tee: saved by field: {}", top.join(", "));
        }
        if let Some(text) = drift.and_then(Drift::text) {
            crate::say!("smart-tee: agent {text}");
        }
    }
    if let Some(path) = &to.json {
        let mut out = Vec::new();
        out.extend_from_slice(b"{");
        for (k, (name, n)) in [
            ("lines_in", stats.lines_in()),
            ("lines_verbatim", stats.lines_verbatim),
            ("lines_cut", stats.lines_cut + stats.lines_unplanned),
            ("lines_non_json", stats.lines_non_json),
            ("lines_blank", stats.lines_blank),
            ("bytes_in", stats.bytes_in),
            ("bytes_logged", stats.bytes_logged),
            ("bytes_saved", saved),
            // Diagnostics a full, non-blocking stderr made smart-tee drop (crate::door).
            ("diagnostics_dropped", crate::door::dropped()),
        ]
        .into_iter()
        .enumerate()
        {
            if k > 0 {
                out.push(b',');
            }
            out.extend_from_slice(format!("\"{name}\":{n}").as_bytes());
        }
        out.extend_from_slice(b",\"saved_by_field\":{");
        for (k, (name, n)) in fields.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            out.push(b'"');
            escape_str(name, &mut out);
            out.extend_from_slice(b"\":");
            push_usize(&mut out, *n as usize);
        }
        out.push(b'}');
        if let Some(d) = drift {
            drift_json(d, &mut out);
        }
        out.extend_from_slice(b"}\n");
        #[allow(
            clippy::disallowed_methods,
            reason = "a door (docs/redaction.md): --stats-json, passed through crate::door::bytes"
        )]
        let file = std::fs::File::create(path);
        file.and_then(|mut f| f.write_all(&crate::door::bytes(&out)))
            .map_err(|source| Error::WriteStats {
                path: path.clone(),
                source,
            })?;
    }
    Ok(())
}

/// `"agent"`, `"agent_version"` and `"unknown_events"` (each kind's `count` and `first_line`),
/// as the JSON summary of a log gives them, appended as members.
fn drift_json(d: &Drift, out: &mut Vec<u8>) {
    let string = |s: Option<&str>, out: &mut Vec<u8>| match s {
        Some(s) => {
            out.push(b'"');
            escape_str(s, out);
            out.push(b'"');
        }
        None => out.extend_from_slice(b"null"),
    };
    out.extend_from_slice(b",\"agent\":");
    string(d.agent, out);
    out.extend_from_slice(b",\"agent_version\":");
    string(d.version.as_deref(), out);
    out.extend_from_slice(b",\"unknown_events\":{");
    for (k, (kind, (n, at))) in d.unknown.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        string(Some(kind), out);
        out.extend_from_slice(b":{\"count\":");
        push_usize(out, *n as usize);
        out.extend_from_slice(b",\"first_line\":");
        push_usize(out, *at as usize);
        out.push(b'}');
    }
    out.push(b'}');
}
