//! The plain reference: parse with `serde_json::Value`, cut, serialize. Obviously correct and
//! slow; the tests hold the engine against it and the benches measure the engine beside it.
#![allow(dead_code)]

use serde_json::Value;

const MARK: &str = "[TRUNCATED: ";

/// Cuts `line` to `budget` bytes the naive way: parse, shorten every long string and array a
/// little more each round, serialize, until it fits.
pub fn naive_cut(line: &[u8], budget: usize) -> Vec<u8> {
    let Ok(value) = serde_json::from_slice::<Value>(line) else {
        let text = String::from_utf8_lossy(line);
        let rec = serde_json::json!({"type": "non_json", "text": text});
        return naive_cut(&serde_json::to_vec(&rec).unwrap_or_default(), budget);
    };
    if line.len() <= budget {
        return line.to_vec();
    }
    let (mut max_str, mut max_items) = (budget, 64usize);
    loop {
        let cut = shrink(&value, max_str, max_items);
        let out = serde_json::to_vec(&cut).unwrap_or_default();
        if out.len() <= budget || max_str == 0 {
            return out;
        }
        max_str = max_str * 3 / 4;
        max_items = (max_items * 3 / 4).max(2);
    }
}

fn shrink(v: &Value, max_str: usize, max_items: usize) -> Value {
    match v {
        Value::String(s) if s.len() > max_str => {
            let head: String = s.chars().take(max_str / 2).collect();
            let tail: String = {
                let t: Vec<char> = s.chars().rev().take(max_str / 2).collect();
                t.into_iter().rev().collect()
            };
            Value::String(format!(
                "{head}[TRUNCATED: {} → {} bytes]{tail}",
                s.len(),
                head.len() + tail.len()
            ))
        }
        Value::Array(a) if a.len() > max_items => {
            let h = max_items / 2;
            let mut out: Vec<Value> = a[..h]
                .iter()
                .map(|x| shrink(x, max_str, max_items))
                .collect();
            out.push(Value::String(format!(
                "[TRUNCATED: {} → {} items]",
                a.len(),
                max_items
            )));
            out.extend(
                a[a.len() - (max_items - h)..]
                    .iter()
                    .map(|x| shrink(x, max_str, max_items)),
            );
            Value::Array(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| shrink(x, max_str, max_items)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), shrink(x, max_str, max_items)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Parses `[TRUNCATED: a → b unit]` at the start of `s`; returns (a, b, unit, rest).
fn parse_marker(s: &str) -> Option<(usize, usize, &str, &str)> {
    let s = s.strip_prefix(MARK)?;
    let (a, s) = s.split_once(" → ")?;
    let (b, s) = s.split_once(' ')?;
    let (unit, rest) = s.split_once(']')?;
    Some((a.parse().ok()?, b.parse().ok()?, unit, rest))
}

/// Is `out` the descriptor of base64 payload `orig`: `[IMAGE OMITTED: image/png, 604,112 bytes
/// base64]`, `[DATA OMITTED: …]` or `[BASE64 OMITTED: 1,234 bytes]`, with the right size?
fn is_descriptor_of(orig: &str, out: &str) -> bool {
    let size = {
        let s = orig.len().to_string();
        let mut g = String::new();
        for (k, c) in s.chars().enumerate() {
            if k > 0 && (s.len() - k).is_multiple_of(3) {
                g.push(',');
            }
            g.push(c);
        }
        g
    };
    let shaped = out.starts_with("[BASE64 OMITTED: ") && out.ends_with(&format!(" {size} bytes]"))
        || (out.starts_with("[IMAGE OMITTED: ") || out.starts_with("[DATA OMITTED: "))
            && out.ends_with(&format!(", {size} bytes base64]"));
    shaped && smart_tee::line::payload::is_base64_payload(orig.as_bytes())
}

/// Is `out` the string `orig` cut to head + marker + tail, or a base64 payload's descriptor?
fn is_cut_of(orig: &str, out: &str) -> bool {
    if orig == out || is_descriptor_of(orig, out) {
        return true;
    }
    out.match_indices(MARK).any(|(p, _)| {
        let head = &out[..p];
        match parse_marker(&out[p..]) {
            Some((original, kept, "bytes", tail)) => {
                kept < original
                    && head.len() + tail.len() <= orig.len()
                    && orig.starts_with(head)
                    && orig.ends_with(tail)
            }
            _ => false,
        }
    })
}

fn is_container_marker(v: &Value, n: usize, kept: usize, unit: &str) -> bool {
    let s = match v {
        Value::String(s) => s.as_str(),
        Value::Object(o) if o.len() == 1 && o.contains_key("_truncated") => {
            match o.get("_truncated") {
                Some(Value::String(s)) => s.as_str(),
                _ => return false,
            }
        }
        Value::Object(o) if o.len() == 2 && o.get("type") == Some(&Value::from("text")) => {
            match o.get("text") {
                Some(Value::String(s)) => s.as_str(),
                _ => return false,
            }
        }
        _ => return false,
    };
    matches!(parse_marker(s), Some((a, b, u, "")) if a == n && b == kept && u == unit)
}

/// Checks that `out` keeps `orig`'s structure: the same keys in the same order (those not
/// dropped behind a marker), scalars exact, strings whole or cut to head + marker + tail,
/// arrays whole or their first and last elements around one marker element, containers
/// replaced only by a marker. Iterative, so deep values do not exhaust the stack.
pub fn agrees(orig: &Value, out: &Value) -> Result<(), String> {
    agrees_with(orig, out, false)
}

/// [`agrees`], and the type rule of budgets from 1024 up: an object stays an object and an
/// array an array (a container never becomes a marker string), and the marker element of an
/// array of objects is an object.
pub fn keeps_types(orig: &Value, out: &Value) -> Result<(), String> {
    agrees_with(orig, out, true)
}

/// The marker key of object `x`: `_truncated`, or the first `_truncated_<k>` it does not have.
fn marker_key(x: &serde_json::Map<String, Value>) -> String {
    if !x.contains_key("_truncated") {
        return "_truncated".into();
    }
    (1..)
        .map(|k| format!("_truncated_{k}"))
        .find(|k| !x.contains_key(k))
        .unwrap()
}

fn agrees_with(orig: &Value, out: &Value, typed: bool) -> Result<(), String> {
    let mut work = vec![(orig, out, String::from("$"))];
    while let Some((a, b, path)) = work.pop() {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                let mut keys = x.keys();
                let mut kept = 0;
                let mk = marker_key(x);
                for (k, v) in y {
                    if *k == mk {
                        if !is_container_marker(v, x.len(), y.len() - 1, "keys") {
                            return Err(format!("{path}: bad object marker {v}"));
                        }
                        continue;
                    }
                    if !keys.any(|ok| ok == k) {
                        return Err(format!("{path}: key {k:?} out of order or unknown"));
                    }
                    kept += 1;
                    work.push((&x[k], v, format!("{path}.{k}")));
                }
                if kept < x.len() && !y.contains_key(&mk) {
                    return Err(format!(
                        "{path}: {} keys dropped without a marker",
                        x.len() - kept
                    ));
                }
            }
            (Value::Array(x), Value::Array(y)) => {
                let kept = y.len().saturating_sub(1);
                let marker =
                    (0..y.len()).find(|&i| is_container_marker(&y[i], x.len(), kept, "items"));
                let Some(m) = marker.filter(|_| y.len() <= x.len()) else {
                    if x.len() != y.len() {
                        return Err(format!(
                            "{path}: array of {} cut to {} without a marker",
                            x.len(),
                            y.len()
                        ));
                    }
                    for (i, (p, q)) in x.iter().zip(y).enumerate() {
                        work.push((p, q, format!("{path}[{i}]")));
                    }
                    continue;
                };
                if typed && x.first().is_some_and(Value::is_object) && !y[m].is_object() {
                    return Err(format!(
                        "{path}[{m}]: the marker of an array of objects is {}",
                        y[m]
                    ));
                }
                for i in 0..m {
                    work.push((&x[i], &y[i], format!("{path}[{i}]")));
                }
                let t = y.len() - m - 1;
                for j in 0..t {
                    let xi = x.len() - t + j;
                    work.push((&x[xi], &y[m + 1 + j], format!("{path}[{xi}]")));
                }
            }
            (Value::String(x), Value::String(y)) => {
                if !is_cut_of(x, y) {
                    return Err(format!("{path}: {y:?} is not a cut of the original"));
                }
            }
            (Value::Object(_) | Value::Array(_), Value::String(y)) if typed => {
                return Err(format!("{path}: {a} became the string {y:?}"));
            }
            (_, Value::String(y)) if !a.is_string() => match parse_marker(y) {
                Some((_, 0, "bytes", "")) => {}
                _ => return Err(format!("{path}: {a} replaced by {y:?}")),
            },
            _ => {
                if a != b {
                    return Err(format!("{path}: {a} became {b}"));
                }
            }
        }
    }
    Ok(())
}

/// Members whose value is usage or cost: kept exactly, wherever they are (#30).
pub const USAGE: [&str; 13] = [
    "usage",
    "cache_creation",
    "server_tool_use",
    "modelUsage",
    "model_usage",
    "total_cost_usd",
    "costUSD",
    "cost_usd",
    "duration_ms",
    "duration_api_ms",
    "num_turns",
    "total_token_usage",
    "last_token_usage",
];

fn holds_usage(v: &Value) -> bool {
    match v {
        Value::Object(o) => o
            .iter()
            .any(|(k, x)| USAGE.contains(&k.as_str()) || holds_usage(x)),
        Value::Array(a) => a.iter().any(holds_usage),
        _ => false,
    }
}

/// The paths of `orig`'s usage members (see [`USAGE`]) that `out`, its cut, does not keep
/// exactly: changed, or left out with a member or element that held them.
pub fn usage_losses(orig: &Value, out: &Value) -> Vec<String> {
    let mut lost = Vec::new();
    let mut work = vec![(orig, out, String::from("$"))];
    while let Some((a, b, path)) = work.pop() {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                for (k, v) in x {
                    match y.get(k) {
                        Some(w) if USAGE.contains(&k.as_str()) && v != w => {
                            lost.push(format!("{path}.{k}"))
                        }
                        Some(_) if USAGE.contains(&k.as_str()) => {}
                        Some(w) => work.push((v, w, format!("{path}.{k}"))),
                        None if USAGE.contains(&k.as_str()) || holds_usage(v) => {
                            lost.push(format!("{path}.{k}"))
                        }
                        None => {}
                    }
                }
            }
            (Value::Array(x), Value::Array(y)) => {
                let kept = y.len().saturating_sub(1);
                let marker = (0..y.len())
                    .find(|&i| is_container_marker(&y[i], x.len(), kept, "items"))
                    .filter(|_| y.len() <= x.len());
                let pairs: Vec<(usize, usize)> = match marker {
                    None => (0..x.len().min(y.len())).map(|i| (i, i)).collect(),
                    Some(m) => {
                        let t = y.len() - m - 1;
                        (0..m)
                            .map(|i| (i, i))
                            .chain((0..t).map(|j| (x.len() - t + j, m + 1 + j)))
                            .collect()
                    }
                };
                for (i, v) in x.iter().enumerate() {
                    if !pairs.iter().any(|&(p, _)| p == i) && holds_usage(v) {
                        lost.push(format!("{path}[{i}]"));
                    }
                }
                for (p, q) in pairs {
                    work.push((&x[p], &y[q], format!("{path}[{p}]")));
                }
            }
            _ if holds_usage(a) => lost.push(path),
            _ => {}
        }
    }
    lost
}
