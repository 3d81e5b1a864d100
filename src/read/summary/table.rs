//! `--summary --by-run`: one row per run (file, conversation, agent, model, start, duration,
//! state, turns, calls/failed, tokens, cost) and a total row, sorted by start. Text fits one
//! screen's width (the terminal's, else 80 columns) by shortening the file, conversation,
//! agent and model cells; JSON and CSV (RFC 4180) carry the whole values. Under a budget the
//! earliest runs are left out first, and the output says how many.

use serde_json::{Value, json};

use super::health::State;
use super::prices::Cost;
use super::tokens::Tokens;
use super::{STRING_CAP, Summary, clip, grouped};
use crate::read::log::{Format, escape_controls, inert_json};

/// The narrowest a shortened cell gets.
const MIN_CELL: usize = 3;
/// The narrowest the file, conversation, agent and model cells get while 80 columns hold.
const PREFERRED_MIN: [usize; 4] = [8, 4, 6, 8];

/// One run, as the table says it.
struct Row {
    file: Option<String>,
    /// The conversation's number in its file, from 1.
    number: u64,
    session: Option<String>,
    agent: Option<String>,
    agent_version: Option<String>,
    model: Option<String>,
    start: Option<String>,
    start_at: Option<i128>,
    duration_ms: Option<u64>,
    state: Option<State>,
    turns: Option<u64>,
    calls: u64,
    failed: u64,
    tokens: Tokens,
    cost: Cost,
}

impl Row {
    fn of(p: &Summary, number: u64) -> Row {
        let measured = match (p.first_any, p.last_any) {
            (Some(a), Some(b)) => Some(((b.0 - a.0).max(0) / 1_000_000) as u64),
            _ => None,
        };
        Row {
            file: p.file.clone(),
            number,
            session: p.session.clone(),
            agent: p.drift.agent.map(str::to_string),
            agent_version: p.drift.version.clone(),
            model: p.model(),
            start: p.first_time.clone(),
            start_at: p.first_any.map(|i| i.0),
            duration_ms: p.duration_ms.or(measured),
            state: p.state(),
            turns: p.turns,
            calls: p.tool_calls(),
            failed: p.counts.tool_failures,
            tokens: p.tokens(),
            cost: p.cost_figure(),
        }
    }

    fn state_name(&self) -> &'static str {
        match self.state {
            Some(State::Finished(true)) => "ok",
            Some(State::Finished(false)) => "failed",
            Some(State::Ended) => "ended",
            Some(State::Exited) => "exited",
            Some(State::Running) => "running",
            Some(State::Stalled(_)) => "stalled",
            None => "-",
        }
    }

    fn json(&self) -> Value {
        let mut o = serde_json::Map::new();
        o.insert("file".into(), json!(self.file));
        o.insert("conversation".into(), json!(self.number));
        o.insert("session_id".into(), json!(self.session));
        o.insert("agent".into(), json!(self.agent));
        o.insert("agent_version".into(), json!(self.agent_version));
        o.insert("model".into(), json!(self.model));
        o.insert("start".into(), json!(self.start));
        o.insert("duration_ms".into(), json!(self.duration_ms));
        o.insert("state".into(), json!(self.state.as_ref().map(State::name)));
        o.insert(
            "ok".into(),
            json!(match self.state {
                Some(State::Finished(ok)) => Some(ok),
                _ => None,
            }),
        );
        o.insert("turns".into(), json!(self.turns));
        o.insert("tool_calls".into(), json!(self.calls));
        o.insert("tool_failures".into(), json!(self.failed));
        self.tokens.json_members(&mut o);
        o.insert("cost_usd".into(), json!(self.cost.usd()));
        o.insert(
            "cost_estimated".into(),
            json!(self.cost.estimated.is_some()),
        );
        Value::Object(o)
    }
}

/// The CSV columns, as the JSON rows name them.
const CSV_COLUMNS: [&str; 21] = [
    "file",
    "conversation",
    "session_id",
    "agent",
    "agent_version",
    "model",
    "start",
    "duration_ms",
    "state",
    "ok",
    "turns",
    "tool_calls",
    "tool_failures",
    "input_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "output_tokens",
    "total_input_tokens",
    "total_tokens",
    "cost_usd",
    "cost_estimated",
];

/// One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break, its
/// quotes doubled.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A JSON value as a CSV cell: a string as itself, null as empty, anything else as JSON.
fn csv_cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => csv_field(&escape_controls(s)),
        other => csv_field(&other.to_string()),
    }
}

/// A duration as a cell: `42s`, `12m05s`, `3h02m`.
fn duration_cell(ms: Option<u64>) -> String {
    let Some(ms) = ms else {
        return "-".into();
    };
    let s = ms / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s / 60 % 60),
    }
}

/// A token count in at most 6 columns: `950`, `9,999`, `717k`, `1.8M`.
fn tokens_cell(n: Option<u64>) -> String {
    match n {
        None => "-".into(),
        Some(n) if n < 10_000 => grouped(Some(n)),
        Some(n) if n < 1_000_000 => format!("{}k", (n + 500) / 1000),
        Some(n) if n < 10_000_000 => format!("{:.1}M", n as f64 / 1e6),
        Some(n) => format!("{}M", (n + 500_000) / 1_000_000),
    }
}

/// A cost as its cell: `$0.123`, `~$0.123` where estimated (in part), `-` when unknown.
fn cost_cell(c: &Cost) -> String {
    let mark = if c.estimated.is_some() { "~" } else { "" };
    match c.usd() {
        None => "-".into(),
        Some(c) if c < 10.0 => format!("{mark}${c:.3}"),
        Some(c) if c < 1000.0 => format!("{mark}${c:.2}"),
        Some(c) => format!("{mark}${c:.0}"),
    }
}

/// `2026-02-12 16:02:48` as `02-12 16:02`.
fn start_cell(t: Option<&str>) -> String {
    t.and_then(|t| t.get(5..16))
        .map_or("-".into(), str::to_string)
}

/// A file as its cell: its name, without the directory and a `.jsonl` ending.
fn file_cell(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    [".jsonl.gz", ".jsonl.zst", ".jsonl"]
        .iter()
        .find_map(|x| name.strip_suffix(x))
        .filter(|n| !n.is_empty())
        .unwrap_or(name)
}

/// A model as its cell: without `claude-` (the agent column says it) and a date suffix.
fn model_cell(model: &str) -> &str {
    let m = model.strip_prefix("claude-").unwrap_or(model);
    match m.rsplit_once('-') {
        Some((head, date)) if date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()) => head,
        _ => m,
    }
}

/// `s` in at most `w` columns: its start and `…`, or for a file its end.
fn fit(s: &str, w: usize, keep_end: bool) -> String {
    let n = s.chars().count();
    if n <= w {
        return s.to_string();
    }
    let keep = w.saturating_sub(1);
    if keep_end {
        format!("…{}", s.chars().skip(n - keep).collect::<String>())
    } else {
        format!("{}…", s.chars().take(keep).collect::<String>())
    }
}

impl Summary {
    /// The runs, sorted by start (runs whose events carry no time last, in log order).
    fn rows(&self) -> Vec<Row> {
        let mut number_in_file = 0;
        let mut file: Option<&Option<String>> = None;
        let mut rows: Vec<Row> = Vec::new();
        let parts: Vec<&Summary> = if self.parts.is_empty() {
            vec![self]
        } else {
            self.parts.iter().collect()
        };
        for p in parts {
            if file != Some(&p.file) {
                file = Some(&p.file);
                number_in_file = 0;
            }
            number_in_file += 1;
            rows.push(Row::of(p, number_in_file));
        }
        rows.sort_by_key(|r| (r.start_at.is_none(), r.start_at));
        rows
    }

    /// The total row: the runs' sums, the earliest start.
    fn total_row(&self, rows: &[Row]) -> Row {
        let agents = distinct(rows.iter().map(|r| r.agent.as_deref()), "agents");
        let models = distinct(rows.iter().map(|r| r.model.as_deref()), "models");
        let mut tokens = Tokens::default();
        let (mut calls, mut failed) = (0, 0);
        for r in rows {
            calls += r.calls;
            failed += r.failed;
        }
        if !rows.is_empty() {
            tokens = self.tokens();
        }
        let first = rows
            .iter()
            .filter(|r| r.start_at.is_some())
            .min_by_key(|r| r.start_at);
        Row {
            file: Some("total".into()),
            number: rows.len() as u64,
            session: None,
            agent: agents,
            agent_version: None,
            model: models,
            start: first.and_then(|r| r.start.clone()),
            start_at: first.and_then(|r| r.start_at),
            duration_ms: rows.iter().fold(None, |a, r| super::plus(a, r.duration_ms)),
            state: None,
            turns: rows.iter().fold(None, |a, r| super::plus(a, r.turns)),
            calls,
            failed,
            tokens,
            cost: self.cost_figure(),
        }
    }

    /// The table of runs in `format` (text `width` columns wide), within `budget` bytes.
    pub(super) fn table_within(&self, format: Format, width: usize, budget: usize) -> String {
        let rows = self.rows();
        let total = self.total_row(&rows);
        let render = |shown: &[Row]| match format {
            Format::Csv => self.table_csv(shown, &total, rows.len()),
            Format::Json => self.table_json(shown, &total, rows.len()),
            Format::Jsonl => self.table_jsonl(shown, &total, rows.len()),
            _ => self.table_text(shown, &total, rows.len(), width),
        };
        let all = render(&rows);
        if all.len() <= budget {
            return all;
        }
        // The most recent runs that fit, by bisection on how many are left out.
        let (mut lo, mut hi) = (1, rows.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if render(&rows[mid..]).len() <= budget {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let fewest = render(&rows[lo..]);
        if fewest.len() <= budget {
            return fewest;
        }
        // Not even the total fits (JSON and CSV rows are wide, a small --bytes-per-token):
        // what the runs came to, as briefly as the format allows, then nothing.
        let left_out = rows.len();
        let briefest = match format {
            Format::Csv => {
                let header = CSV_COLUMNS.join(",") + "\r\n";
                vec![header.clone() + &csv_left_out(left_out), header]
            }
            Format::Jsonl => {
                let left = jsonl_line("runs_left_out", json!({"runs_left_out": left_out}));
                let counts = jsonl_line("total", json!({"runs": self.run_counts().json()}));
                vec![left.clone() + &counts, left]
            }
            Format::Json => {
                let v = |total: Value| {
                    let mut v = json!({"type": "runs", "runs": [], "runs_left_out": left_out});
                    if !total.is_null() {
                        v["total"] = total;
                    }
                    serde_json::to_string(&v).unwrap_or_default() + "\n"
                };
                vec![v(json!({"runs": self.run_counts().json()})), v(Value::Null)]
            }
            _ => vec![
                format!("runs {}\n", self.run_counts().text()),
                format!("runs {left_out}\n"),
            ],
        };
        briefest
            .into_iter()
            .find(|b| b.len() <= budget)
            .unwrap_or_default()
    }

    fn table_json(&self, shown: &[Row], total: &Row, all: usize) -> String {
        let v = json!({
            "type": "runs",
            "runs": shown.iter().map(Row::json).collect::<Vec<_>>(),
            "runs_left_out": all - shown.len(),
            "total": self.table_total(total),
        });
        json_line(&v)
    }

    /// The table as JSON lines: a `run` line for each row, a `runs_left_out` line when rows
    /// were left out, then the `total` line.
    fn table_jsonl(&self, shown: &[Row], total: &Row, all: usize) -> String {
        let mut out: String = shown.iter().map(|r| jsonl_line("run", r.json())).collect();
        if shown.len() < all {
            out.push_str(&jsonl_line(
                "runs_left_out",
                json!({"runs_left_out": all - shown.len()}),
            ));
        }
        out + &jsonl_line("total", self.table_total(total))
    }

    /// The total row as JSON, with what only a total has.
    fn table_total(&self, total: &Row) -> Value {
        let mut t = total.json();
        if let Some(o) = t.as_object_mut() {
            o.insert("cost_reported_usd".into(), json!(total.cost.reported));
            let date = total.cost.estimated.and(total.cost.date.as_deref());
            o.insert("prices_date".into(), json!(date));
            o.insert("unpriced_models".into(), json!(total.cost.unpriced));
            o.insert("runs".into(), self.run_counts().json());
        }
        t
    }

    fn table_csv(&self, shown: &[Row], total: &Row, all: usize) -> String {
        let mut out = CSV_COLUMNS.join(",") + "\r\n";
        for r in shown {
            out.push_str(&csv_row(&r.json()));
        }
        if shown.len() < all {
            out.push_str(&csv_left_out(all - shown.len()));
        }
        out.push_str(&csv_row(&total.json()));
        out
    }

    fn table_text(&self, shown: &[Row], total: &Row, all: usize, width: usize) -> String {
        let e = |x: Option<&str>| {
            x.map_or_else(|| "-".into(), |x| escape_controls(&clip(x, STRING_CAP)))
        };
        let cells = |r: &Row, is_total: bool| -> Vec<String> {
            vec![
                e(r.file.as_deref().map(file_cell)),
                if is_total {
                    r.number.to_string()
                } else {
                    r.session.as_deref().map_or_else(
                        || format!("#{}", r.number),
                        |s| escape_controls(&s.chars().take(8).collect::<String>()),
                    )
                },
                e(r.agent
                    .as_deref()
                    .map(|a| a.split(['-', ' ']).next().unwrap_or(a))),
                e(r.model.as_deref().map(model_cell)),
                start_cell(r.start.as_deref()),
                duration_cell(r.duration_ms),
                if is_total {
                    format!("{} ok", self.run_counts().ok)
                } else {
                    r.state_name().into()
                },
                r.turns.map_or("-".into(), |n| n.to_string()),
                format!("{}/{}", r.calls, r.failed),
                tokens_cell(r.tokens.total()),
                cost_cell(&r.cost),
            ]
        };
        const HEAD: [&str; 11] = [
            "file", "conv", "agent", "model", "start", "time", "state", "turns", "calls", "tokens",
            "cost",
        ];
        // Columns 0-3 are shortened to fit; the rest are numbers, right-aligned.
        const FLEX: usize = 4;
        let mut table: Vec<Vec<String>> = vec![HEAD.iter().map(|h| h.to_string()).collect()];
        table.extend(shown.iter().map(|r| cells(r, false)));
        table.push(cells(total, true));
        let mut widths: Vec<usize> = (0..HEAD.len())
            .map(|c| {
                table
                    .iter()
                    .map(|r| r[c].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let used = |w: &[usize]| w.iter().sum::<usize>() + w.len() - 1;
        // The widest shortened first, down to what still tells runs apart (a file's name, a
        // model), then, on a narrower screen, further.
        for least in [PREFERRED_MIN, [MIN_CELL; FLEX]] {
            while used(&widths) > width {
                let Some((c, _)) = widths[..FLEX]
                    .iter()
                    .enumerate()
                    .filter(|(c, w)| **w > least[*c])
                    .max_by_key(|(c, w)| (**w, usize::MAX - c))
                else {
                    break;
                };
                widths[c] -= 1;
            }
        }
        let mut out = String::new();
        if all > shown.len() {
            out.push_str(&fit(
                &format!("({} earlier runs left out to fit)", all - shown.len()),
                width,
                false,
            ));
            out.push('\n');
        }
        for row in &table {
            let line: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(c, cell)| {
                    let cell = fit(cell, widths[c], c == 0);
                    let pad = widths[c].saturating_sub(cell.chars().count());
                    if c < FLEX || c == 6 {
                        format!("{cell}{}", " ".repeat(pad))
                    } else {
                        format!("{}{cell}", " ".repeat(pad))
                    }
                })
                .collect();
            let line = line.join(" ");
            out.push_str(&fit(line.trim_end(), width, false));
            out.push('\n');
        }
        out.push_str(&fit(
            &format!("runs {}", self.run_counts().text()),
            width,
            false,
        ));
        out.push('\n');
        // What `~` means, and the models no cost could be estimated for, each on a line.
        let e = |x: &str| escape_controls(&clip(x, STRING_CAP));
        let priced = Cost {
            unpriced: Vec::new(),
            ..total.cost.clone()
        };
        if priced.estimated.is_some()
            && let Some(note) = priced.text(e)
        {
            out.push_str(&fit(&format!("cost {note}"), width, false));
            out.push('\n');
        }
        if !total.cost.unpriced.is_empty() {
            let note = format!("cost not counted: {}", e(&total.cost.unpriced_text()));
            out.push_str(&fit(&note, width, false));
            out.push('\n');
        }
        out
    }
}

/// The one value all rows share, else how many there are (`3 models`).
fn distinct<'a>(values: impl Iterator<Item = Option<&'a str>>, what: &str) -> Option<String> {
    let mut seen: Vec<&str> = values.flatten().collect();
    seen.sort_unstable();
    seen.dedup();
    match seen.as_slice() {
        [] => None,
        [one] => Some(one.to_string()),
        many => Some(format!("{} {what}", many.len())),
    }
}

/// A row of the CSV table: `v`'s cells in [`CSV_COLUMNS`]' order.
fn csv_row(v: &Value) -> String {
    let cells: Vec<String> = CSV_COLUMNS.iter().map(|k| csv_cell(&v[*k])).collect();
    cells.join(",") + "\r\n"
}

/// The CSV row that says how many of the earliest runs `--max-tokens` left out: `file` is
/// `left out` and `conversation` their number, as the total row's is the number of all runs.
fn csv_left_out(n: usize) -> String {
    csv_row(&json!({"file": "left out", "conversation": n}))
}

/// One line of the table's JSON lines: `{"type":kind,…fields}`.
fn jsonl_line(kind: &str, fields: Value) -> String {
    let mut line = serde_json::Map::new();
    line.insert("type".into(), json!(kind));
    if let Value::Object(o) = fields {
        line.extend(o);
    }
    json_line(&Value::Object(line))
}

/// `v` as one line of JSON, its unsafe characters written as escapes ([`inert_json`]).
fn json_line(v: &Value) -> String {
    let s = serde_json::to_string(v).unwrap_or_default();
    String::from_utf8_lossy(&inert_json(s.as_bytes())).into_owned() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_commas_quotes_and_line_breaks_only() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
    }

    #[test]
    fn cells_stay_narrow() {
        assert_eq!(tokens_cell(Some(717_475)), "717k");
        assert_eq!(tokens_cell(Some(1_769_237)), "1.8M");
        assert_eq!(tokens_cell(Some(9_999)), "9,999");
        assert_eq!(duration_cell(Some(42_000)), "42s");
        assert_eq!(duration_cell(Some(725_000)), "12m05s");
        assert_eq!(duration_cell(Some(10_920_000)), "3h02m");
        assert_eq!(fit("logs/run-a.jsonl", 8, true), "…a.jsonl");
        assert_eq!(fit("claude-sonnet-4-6", 8, false), "claude-…");
    }
}
