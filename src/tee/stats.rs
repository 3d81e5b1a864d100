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
            ("panics", stats.panics),
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

/// The one line stderr gets at the end of a run in which the engine caught panics (bugs), with
/// or without `--stats`; the exit status does not change. `first` is the first panic's message
/// and place ([`crate::cut::engine::first_caught_panic`]).
pub fn panic_notice(stats: &Stats, first: Option<&str>) -> Option<String> {
    (stats.panics > 0).then(|| {
        format!(
            "smart-tee: {} line(s) hit a bug in smart-tee (a caught panic) and were logged as \
             truncated records of their text; please report it{}",
            stats.panics,
            first.map_or(String::new(), |f| format!(
                " (first: {})",
                f.replace('\n', " ")
            ))
        )
    })
}

/// Says [`panic_notice`] on stderr, if there is anything to say.
pub fn say_panics(stats: &Stats) {
    if let Some(notice) = panic_notice(stats, crate::cut::engine::first_caught_panic()) {
        crate::say!("{notice}");
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cut::engine::tests::PANICS;
    use crate::cut::engine::{EngineConfig, LineEngine, caught_panics};
    use crate::tee::log::LogWriter;
    use crate::tee::sink::LogSink;

    /// #47.5: a panic in a line's processing (provoked here by the test-only line `PANICS`,
    /// which only a `cfg(test)` build knows) is counted by `--stats-json` and said once, in
    /// one line naming the count and the first panic; the other lines are logged as usual.
    #[test]
    fn caught_panics_are_counted_and_said_once() {
        let before = caught_panics();
        let sink = LogSink::new("test.log".as_ref(), Box::new(std::io::sink()));
        let mut log = LogWriter::new(LineEngine::new(EngineConfig::default()), vec![sink]);
        let mut input = PANICS.to_vec();
        input.extend_from_slice(b"\n{\"a\":1}\n");
        input.extend_from_slice(PANICS);
        input.push(b'\n');
        assert!(log.feed(&input).is_empty());
        assert!(log.finish().is_empty());
        let stats = log.stats();
        assert_eq!((stats.panics, stats.lines_unplanned), (2, 2));
        assert_eq!(stats.lines_verbatim, 1);
        assert!(caught_panics() >= before + 2);

        let notice =
            panic_notice(&stats, crate::cut::engine::first_caught_panic()).expect("stderr says so");
        assert_eq!(notice.lines().count(), 1, "{notice}");
        assert!(
            notice.starts_with("smart-tee: 2 line(s) hit a bug"),
            "{notice}"
        );
        assert!(notice.contains("provoked by a test"), "{notice}");
        assert_eq!(panic_notice(&Stats::default(), None), None);

        let dir = std::env::temp_dir().join(format!("smart-tee-panics-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("stats.json");
        let to = StatsReport {
            human: false,
            json: Some(path.clone()),
        };
        report(&stats, &HashMap::new(), None, &to).unwrap();
        let json = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(json.contains("\"panics\":2,"), "{json}");
    }
}
