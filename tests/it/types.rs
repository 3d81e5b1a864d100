//! Typed readers (pydantic, zod, serde structs) read a cut line like the line it was cut from
//! (#30): values keep their JSON type, usage and costs stay whole, and the planner's markers
//! never take a key the input has (#27).

use crate::common::naive::keeps_types;
use crate::common::{check_contract, lines, strict_parse};
use serde_json::{Value, json};

fn cut(v: &Value, budget: usize) -> Value {
    let mut input = serde_json::to_vec(v).unwrap();
    input.push(b'\n');
    let log = check_contract(&input, budget);
    let out = strict_parse(lines(&log)[0]).expect("log line is JSON");
    keeps_types(v, &out).unwrap_or_else(|e| panic!("{e}\nout: {out}"));
    out
}

fn long(n: usize) -> String {
    "the quick brown fox jumps over the lazy dog. ".repeat(n / 45 + 1)
}

/// A result line at 1024 dropped `modelUsage.<model>.costUSD` with budget left.
#[test]
fn result_line_keeps_usage_and_cost_at_1024() {
    let model_usage = json!({"claude-opus-4-6": {"inputTokens": 12, "outputTokens": 3401,
        "cacheReadInputTokens": 1081221, "cacheCreationInputTokens": 61433, "webSearchRequests": 0,
        "costUSD": 1.2881, "contextWindow": 200000, "maxOutputTokens": 32000}});
    let usage = json!({"input_tokens": 12, "cache_creation_input_tokens": 61433,
        "cache_read_input_tokens": 1081221, "output_tokens": 3401,
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
        "service_tier": "standard",
        "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 61433}});
    let line = json!({"type": "result", "subtype": "success", "is_error": false,
        "duration_ms": 412345, "duration_api_ms": 398765, "num_turns": 41,
        "result": long(6000), "session_id": "7f0c7d2e-5a4b-4f5e-9d1e-0c8a3b2f6e1d",
        "total_cost_usd": 1.2881, "usage": usage, "modelUsage": model_usage,
        "permission_denials": [{"tool_name": "Bash", "tool_use_id": "toolu_01", "tool_input": {"command": long(900)}},
                               {"tool_name": "Edit", "tool_use_id": "toolu_02", "tool_input": {"file_path": "/a", "old_string": long(900), "new_string": long(900)}}],
        "uuid": "9a1b2c3d-0000-4000-8000-000000000000"});
    for budget in [1024, 2048, 5120] {
        let out = cut(&line, budget);
        for key in [
            "usage",
            "modelUsage",
            "total_cost_usd",
            "duration_ms",
            "num_turns",
        ] {
            assert_eq!(out[key], line[key], "{key} at {budget}");
        }
        if let Some(denials) = out["permission_denials"].as_array() {
            assert!(denials.iter().all(Value::is_object), "{out}");
        }
    }
}

/// `message.usage.server_tool_use` and `cache_creation` became the string
/// `"[TRUNCATED: 48 → 0 bytes]"`; todos became strings.
#[test]
fn nested_usage_and_todos_stay_objects_at_1024() {
    let todos: Vec<Value> = (0..40)
        .map(|i| json!({"content": format!("step {i}: {}", long(80)), "status": "pending", "activeForm": format!("Doing step {i}")}))
        .collect();
    let line = json!({"type": "assistant", "uuid": "u-1", "message": {"id": "msg_1", "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "TodoWrite", "input": {"todos": todos}}],
        "usage": {"input_tokens": 3, "output_tokens": 211,
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "cache_creation": {"ephemeral_1h_input_tokens": 8052, "ephemeral_5m_input_tokens": 0},
            "service_tier": "standard"}}});
    let out = cut(&line, 1024);
    assert_eq!(out["message"]["usage"], line["message"]["usage"]);
    let todos = out["message"]["content"][0]["input"]["todos"]
        .as_array()
        .unwrap();
    assert!(todos.iter().all(Value::is_object), "{out}");
    let marker = todos
        .iter()
        .find(|t| t.get("_truncated").is_some())
        .expect("a marker record");
    assert!(
        marker["_truncated"]
            .as_str()
            .unwrap()
            .starts_with("[TRUNCATED: 40 → ")
    );
}

/// An object too small for its members keeps its type: `{"_truncated":"[…keys]"}` at worst.
#[test]
fn an_object_with_no_room_keeps_its_type() {
    let inner: serde_json::Map<String, Value> = (0..60)
        .map(|i| (format!("k{i}"), Value::from(long(200))))
        .collect();
    let line = json!({"type": "x", "a": inner, "b": [long(3000), long(3000)]});
    let out = cut(&line, 1024);
    assert!(out["a"].is_object() && out["b"].is_array(), "{out}");
}

/// #27: the object marker `"_truncated"` collided with an input key of that name.
#[test]
fn object_marker_key_never_takes_an_input_key() {
    let mut obj = serde_json::Map::new();
    obj.insert("_truncated".into(), "mine".into());
    obj.insert("_truncated_1".into(), "mine too".into());
    for i in 0..40 {
        obj.insert(format!("k{i}"), long(300).into());
    }
    let line = Value::Object(obj);
    let mut input = serde_json::to_vec(&line).unwrap();
    input.push(b'\n');
    let log = check_contract(&input, 1024);
    let text = String::from_utf8_lossy(lines(&log)[0]).into_owned();
    assert_eq!(text.matches("\"_truncated\":").count(), 1, "{text}");
    let out = strict_parse(lines(&log)[0]).unwrap();
    assert_eq!(out["_truncated"], "mine");
    assert_eq!(out["_truncated_1"], "mine too");
    assert!(
        out["_truncated_2"]
            .as_str()
            .unwrap()
            .starts_with("[TRUNCATED: 42 → "),
        "{out}"
    );
}

/// #27: a key spelled with escapes is the same key: `--add-timestamp` added a second one.
#[test]
fn escaped_timestamp_key_gets_no_second_timestamp() {
    let input = b"{\"\\u0074imestamp\":\"2026-01-01T00:00:00Z\",\"a\":1}\n{\"a\":2}\n";
    let dir = crate::common::tempdir("escaped-timestamp");
    let log = dir.join("log.jsonl");
    let out = crate::common::run_fed(&["--add-timestamp"], &log, input);
    assert!(out.status.success());
    let logged = std::fs::read(&log).unwrap();
    let ls = lines(&logged);
    assert_eq!(ls[0], &input[..input.len() - 1 - 8], "kept as written");
    assert!(String::from_utf8_lossy(ls[1]).contains("\"timestamp\":"));
}

/// #27: the planner's preserved-field rules match escaped spellings (`"\u0074ype"`, `"\u0069d"`).
#[test]
fn escaped_preserved_keys_are_preserved() {
    let mut members = vec![
        r#""\u0069d":"toolu_0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghij""#.to_string(),
    ];
    for i in 0..30 {
        members.push(format!("\"k{i}\":\"{}\"", long(200)));
    }
    members.push(r#""\u0074ype":"tool_use""#.to_string());
    let line = format!("{{{}}}\n", members.join(","));
    let log = check_contract(line.as_bytes(), 1024);
    let out = strict_parse(lines(&log)[0]).unwrap();
    assert_eq!(out["type"], "tool_use", "{out}");
    assert_eq!(
        out["id"],
        "toolu_0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghij"
    );
}

/// A result line at 1024 kept 3 of its 12 permission denials (two at the head, one at the tail,
/// each with 156 bytes of its command) and left 9 `tool_use_id`s out: records that carry ids
/// keep their key set and ids, inputs cut, before a record is left out.
#[test]
fn permission_denials_kept_3_of_12_ids_at_1024() {
    let denials: Vec<Value> = (0..12)
        .map(|i| {
            json!({"tool_name": "Bash", "tool_use_id": format!("toolu_01Den{i:02}"),
                "tool_input": {"command": format!("rm -rf build/ && {}", "echo x; ".repeat(60))}})
        })
        .collect();
    let line = json!({"type": "result", "subtype": "success", "is_error": false, "num_turns": 3,
        "total_cost_usd": 0.0412, "session_id": "8463c716-a2ea-4c14-9efa-87158ebd9f20",
        "result": "Done.", "permission_denials": denials});
    let out = cut(&line, 1024);
    let kept = out["permission_denials"].as_array().unwrap();
    let records: Vec<&Value> = kept
        .iter()
        .filter(|d| d.get("_truncated").is_none())
        .collect();
    for d in &records {
        let keys: Vec<&String> = d.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["tool_name", "tool_use_id", "tool_input"], "{out}");
        assert!(d["tool_input"].is_object(), "{out}");
    }
    // Each record at its least form is 106 bytes; the line keeps as many as fit: another
    // would not.
    let least = r#"{"tool_name":"Bash","tool_use_id":"toolu_01Den00","tool_input":{"command":"[TRUNCATED: 497 → 0 bytes]"}},"#;
    let logged = serde_json::to_vec(&out).unwrap().len();
    assert!(records.len() >= 7, "{} of 12 kept: {out}", records.len());
    assert!(
        logged + least.len() > 1024,
        "room for one more record: {out}"
    );
    let ids: Vec<&str> = records
        .iter()
        .map(|d| d["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.first(), Some(&"toolu_01Den00"));
    assert_eq!(ids.last(), Some(&"toolu_01Den11"));
}
