//! Which agent wrote a line, in which version, and whether smart-tee's readers know its kind of
//! event: the one place that knows the event kinds of every agent's stream, for `--summary`,
//! the gists, and the tee's `--stats` (format drift: the agents change their formats under
//! their readers).
//!
//! An event is looked at through its [`Head`]: its `type`, `subtype`, the type of its `item`
//! or `payload`, its version fields and which telling keys it has. A head is taken from a
//! parsed value ([`Head::of_value`], for the readers) or from a log line by one scan with no
//! allocation ([`Head::of_line`], for the tee path).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::line::scan::{Kind, Visitor};

mod kinds;

pub use kinds::ROLLOUT_ITEMS;
use kinds::{KNOWN_EVENTS, KNOWN_SUBTYPES, KNOWN_TYPES, PI_TYPES};

/// The stream an event comes from, told by its shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Claude,
    CodexExec,
    CodexSession,
    Gemini,
    OpenCode,
    Cursor,
    Goose,
    /// pi (`pi --mode json`): `session`, `agent_*`, `turn_*`, `message_*`, `tool_execution_*`.
    Pi,
    /// Amp (`amp -x --stream-json`): Claude Code's shape, its threads' ids `T-…`.
    Amp,
    /// Factory droid (`droid exec -o stream-json`).
    Droid,
    /// GitHub Copilot CLI (`copilot -p --output-format json`): `{type, data, id, parentId}`.
    Copilot,
    /// Qwen Code (`qwen -p --output-format stream-json`): Claude Code's shape.
    Qwen,
    /// Kimi CLI (`kimi --print --output-format=stream-json`): OpenAI-style messages, no `type`.
    Kimi,
    /// Google Antigravity (`agy -p --output-format stream-json`): told by `event`, not `type`.
    Antigravity,
}

impl Format {
    /// The agent's name, as `--summary` and `--stats` give it.
    pub fn agent(self) -> &'static str {
        match self {
            Format::Claude => "claude-code",
            Format::CodexExec => "codex-exec",
            Format::CodexSession => "codex-rollout",
            Format::Gemini => "gemini-cli",
            Format::OpenCode => "opencode",
            Format::Cursor => "cursor",
            Format::Goose => "goose",
            Format::Pi => "pi",
            Format::Amp => "amp",
            Format::Droid => "droid",
            Format::Copilot => "copilot-cli",
            Format::Qwen => "qwen-code",
            Format::Kimi => "kimi-cli",
            Format::Antigravity => "antigravity",
        }
    }
}

/// What tells an event's kind and agent: borrowed strings (as written: a type never needs its
/// escapes undone) and the presence of telling keys.
#[derive(Clone, Copy, Debug, Default)]
pub struct Head<'a> {
    pub kind: Option<&'a str>,
    pub subtype: Option<&'a str>,
    /// `item.type` (Codex `exec --json`).
    pub item: Option<&'a str>,
    /// `payload.type` and `payload.item.type` (Codex rollout files).
    pub payload: Option<&'a str>,
    pub payload_item: Option<&'a str>,
    /// `event` (Antigravity's discriminator, where `type` is absent).
    pub event: Option<&'a str>,
    /// `session_id` (Amp's threads are `T-…`).
    pub session: Option<&'a str>,
    /// The first of `claude_code_version`, `qwen_code_version`, `payload.cli_version`,
    /// `cli_version`, `data.copilotVersion`, `version`.
    pub version: Option<&'a str>,
    version_rank: u8,
    keys: u16,
}

// The telling keys, as bits of `Head::keys`.
const PAYLOAD: u16 = 1;
const PART: u16 = 2;
const SESSION_ID_CAMEL: u16 = 4;
const TIMESTAMP_MS: u16 = 8;
const MESSAGE_OBJECT: u16 = 16;
const ROLE: u16 = 32;
const STATS: u16 = 64;
const TOOL_NAME: u16 = 128;
const IS_ERROR_CAMEL: u16 = 256;
const TEXT: u16 = 512;
const PARENT_ID: u16 = 1024;
const EXIT_CODE_CAMEL: u16 = 2048;
const QWEN_VERSION: u16 = 4096;

fn key_bit(key: &str) -> u16 {
    match key {
        "payload" => PAYLOAD,
        "part" => PART,
        "sessionID" => SESSION_ID_CAMEL,
        "timestamp_ms" => TIMESTAMP_MS,
        "role" => ROLE,
        "stats" => STATS,
        "toolName" => TOOL_NAME,
        "isError" => IS_ERROR_CAMEL,
        "text" => TEXT,
        "parentId" | "ephemeral" => PARENT_ID,
        "exitCode" => EXIT_CODE_CAMEL,
        "qwen_code_version" => QWEN_VERSION,
        _ => 0,
    }
}

/// The rank of a version field (lower is preferred), or none.
fn version_rank(path: &[&str]) -> Option<u8> {
    match path {
        ["claude_code_version"] | ["qwen_code_version"] => Some(1),
        ["payload", "cli_version"] => Some(2),
        ["cli_version"] | ["data", "copilotVersion"] => Some(3),
        ["version"] => Some(4),
        _ => None,
    }
}

impl<'a> Head<'a> {
    fn set(&mut self, path: &[&str], text: &'a str) {
        match path {
            ["type"] => self.kind = Some(text),
            ["subtype"] => self.subtype = Some(text),
            ["event"] => self.event = Some(text),
            ["session_id"] => self.session = Some(text),
            ["item", "type"] => self.item = Some(text),
            ["payload", "type"] => self.payload = Some(text),
            ["payload", "item", "type"] => self.payload_item = Some(text),
            _ => {}
        }
        if let Some(rank) = version_rank(path)
            && (self.version.is_none() || rank < self.version_rank)
        {
            self.version = Some(text);
            self.version_rank = rank;
        }
    }

    /// The head of a parsed event.
    pub fn of_value(v: &'a Value) -> Head<'a> {
        let mut head = Head::default();
        let Value::Object(m) = v else { return head };
        for (k, x) in m {
            head.keys |= key_bit(k);
            if k == "message" && x.is_object() {
                head.keys |= MESSAGE_OBJECT;
            }
            if let Some(s) = x.as_str() {
                head.set(&[k.as_str()], s);
            }
        }
        let at = |p: &str| v.pointer(p).and_then(Value::as_str);
        for (path, pointer) in [
            (&["item", "type"][..], "/item/type"),
            (&["payload", "type"], "/payload/type"),
            (&["payload", "item", "type"], "/payload/item/type"),
            (&["payload", "cli_version"], "/payload/cli_version"),
            (&["data", "copilotVersion"], "/data/copilotVersion"),
        ] {
            if let Some(s) = at(pointer) {
                head.set(path, s);
            }
        }
        head
    }

    /// The head of a log line (strict JSON), in one scan that allocates nothing; none for a
    /// line that is not JSON.
    pub fn of_line(line: &'a [u8], stack: &mut Vec<u8>) -> Option<Head<'a>> {
        let text = std::str::from_utf8(line).ok()?;
        let mut v = HeadVisitor {
            text,
            head: Head::default(),
            depth: 0,
            path: [""; 3],
            in_path: 0,
        };
        crate::line::scan::scan(line, &mut v, stack).ok()?;
        Some(v.head)
    }

    /// Which agent's stream the event is from, by its `type` and the keys beside it.
    pub fn format(&self) -> Format {
        let kind = self.kind.unwrap_or("");
        let has = |bit: u16| self.keys & bit != 0;
        if self.kind.is_none() {
            if self.event.is_some() {
                return Format::Antigravity;
            }
            if has(ROLE) {
                return Format::Kimi;
            }
        }
        if PI_TYPES.contains(&kind) {
            return Format::Pi;
        }
        if has(PARENT_ID)
            || ["session.", "assistant.", "tool.", "user."]
                .iter()
                .any(|p| kind.starts_with(p))
            || (kind == "result" && has(EXIT_CODE_CAMEL))
        {
            return Format::Copilot;
        }
        if kind == "completion"
            || (kind == "tool_call" && has(TOOL_NAME))
            || (kind == "tool_result" && has(IS_ERROR_CAMEL))
            || (kind == "message" && has(ROLE) && has(TEXT))
        {
            return Format::Droid;
        }
        if has(QWEN_VERSION) || (kind == "system" && self.subtype == Some("session_start")) {
            return Format::Qwen;
        }
        if self.session.is_some_and(|s| s.starts_with("T-")) {
            return Format::Amp;
        }
        if kind.starts_with("thread.") || kind.starts_with("turn.") || kind.starts_with("item.") {
            return Format::CodexExec;
        }
        if has(PAYLOAD)
            && matches!(
                kind,
                "session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted"
            )
        {
            return Format::CodexSession;
        }
        if has(PART) || (has(SESSION_ID_CAMEL) && matches!(kind, "step_start" | "step_finish")) {
            return Format::OpenCode;
        }
        if kind == "tool_call" || kind == "thinking" || has(TIMESTAMP_MS) {
            return Format::Cursor;
        }
        if matches!(kind, "complete" | "notification") || (kind == "message" && has(MESSAGE_OBJECT))
        {
            return Format::Goose;
        }
        if matches!(kind, "init" | "tool_use" | "tool_result")
            || (kind == "message" && has(ROLE))
            || (kind == "result" && has(STATS))
        {
            return Format::Gemini;
        }
        Format::Claude
    }

    /// The `type` (or `type/subtype`) of an event that smart-tee's rules do not know, if it is
    /// one: a sign that the agent's format moved on and the readers may be stale.
    pub fn unknown_kind(&self) -> Option<String> {
        let Some(kind) = self.kind else {
            let event = self.event?;
            return (!KNOWN_EVENTS.contains(&event)).then(|| format!("event {event}"));
        };
        if !KNOWN_TYPES.contains(&kind) && !PI_TYPES.contains(&kind) {
            return Some(kind.to_string());
        }
        if kind == "event_msg"
            && let Some(p @ ("item_started" | "item_updated" | "item_completed")) = self.payload
        {
            let item = self.payload_item?;
            return (!ROLLOUT_ITEMS.contains(&item)).then(|| format!("{kind}/{p}/{item}"));
        }
        let sub = match kind {
            "system" => self.subtype,
            k if k.starts_with("item.") => self.item,
            _ => None,
        }?;
        (!KNOWN_SUBTYPES.contains(&sub)).then(|| format!("{kind}/{sub}"))
    }
}

/// Finds the head's strings: the members at depth 1, and `type` / `cli_version` under `item`,
/// `payload` and `payload.item` (and `copilotVersion` under `data`).
struct HeadVisitor<'a> {
    text: &'a str,
    head: Head<'a>,
    depth: usize,
    /// The keys leading to the current value, at depths 1 to 3.
    path: [&'a str; 3],
    /// The depth of the deepest container whose members are looked at (the root object, then
    /// `item`, `payload`, `payload.item`).
    in_path: usize,
}

impl<'a> Visitor for HeadVisitor<'a> {
    fn key(&mut self, start: usize, end: usize) {
        if (1..=3).contains(&self.depth) && self.in_path == self.depth {
            let key = self.text.get(start + 1..end - 1).unwrap_or("");
            self.path[self.depth - 1] = key;
            if self.depth == 1 {
                self.head.keys |= key_bit(key);
            }
        }
    }

    fn scalar(&mut self, kind: Kind, start: usize, end: usize) {
        if kind == Kind::String && (1..=3).contains(&self.depth) && self.in_path == self.depth {
            let path = self.path;
            if let Some(text) = self.text.get(start + 1..end - 1) {
                self.head.set(&path[..self.depth], text);
            }
        }
    }

    fn open(&mut self, kind: Kind, _: usize) {
        let parent_on_path = self.in_path == self.depth;
        if parent_on_path && self.depth == 1 && kind == Kind::Object && self.path[0] == "message" {
            self.head.keys |= MESSAGE_OBJECT;
        }
        // The root object, and objects under `item`, `payload` and `payload.item`, are on the
        // path: their members are looked at.
        let on_path = kind == Kind::Object
            && parent_on_path
            && match self.depth {
                0 => true,
                1 => matches!(self.path[0], "item" | "payload" | "data"),
                2 => self.path[0] == "payload" && self.path[1] == "item",
                _ => false,
            };
        self.depth += 1;
        if on_path {
            self.in_path = self.depth;
        }
    }

    fn close(&mut self, _: usize) {
        if self.in_path == self.depth {
            self.in_path -= 1;
        }
        self.depth = self.depth.saturating_sub(1);
    }
}

/// Unknown kinds told apart at most.
const UNKNOWN_CAP: usize = 50;
/// The most bytes of a kind's name or a version kept.
const NAME_CAP: usize = 100;

/// What a log says of its format: the agent (from its first event), its version (when an event
/// says), and the event kinds no rule knows, each with how many and the line of the first.
#[derive(Clone, Debug, Default)]
pub struct Drift {
    pub agent: Option<&'static str>,
    pub version: Option<String>,
    pub unknown: BTreeMap<String, (u64, u64)>,
    /// A `result` came while the agent read as Claude Code: its run was Claude Code's, whose
    /// shape Cursor's and droid's streams open with (a later event of theirs names their
    /// agent only before it).
    claude_result: bool,
}

impl Drift {
    /// Takes the event on line `line_no` (from 1).
    pub fn add(&mut self, head: &Head, line_no: u64) {
        // Cursor's and droid's first events have Claude Code's shape; their later ones tell.
        // After a Claude Code run's result, a Cursor or droid run appended to the log names
        // its own conversation only, not the log.
        let format = head.format();
        // An event without a type is no Claude Code event: `Format::Claude` is what the other
        // shapes fall back to, and a file of `{"a":1}` is no agent's.
        let untyped = matches!(format, Format::Claude) && head.kind.is_none();
        if (self.agent.is_none() && !untyped)
            || (self.agent == Some("claude-code")
                && !self.claude_result
                && matches!(format, Format::Cursor | Format::Droid))
        {
            self.agent = Some(format.agent());
        }
        self.claude_result |= self.agent == Some("claude-code") && head.kind == Some("result");
        if self.version.is_none()
            && let Some(v) = head.version
        {
            self.version = Some(clip(v.trim(), 40));
        }
        if let Some(k) = head.unknown_kind() {
            let k = clip(&k, NAME_CAP);
            if self.unknown.contains_key(&k) || self.unknown.len() < UNKNOWN_CAP {
                self.unknown.entry(k).or_insert((0, line_no)).0 += 1;
            }
        }
    }

    /// One line for a person: the agent, its version, and the kinds no rule knows.
    pub fn text(&self) -> Option<String> {
        let agent = self.agent?;
        let mut t = agent.to_string();
        if let Some(v) = &self.version {
            t.push(' ');
            t.push_str(v);
        }
        if !self.unknown.is_empty() {
            let kinds: Vec<String> = self
                .unknown
                .iter()
                .take(10)
                .map(|(k, (n, at))| format!("{k} {n} (line {at})"))
                .collect();
            t.push_str(&format!(
                "; event kinds smart-tee's readers do not know: {}{}",
                kinds.join(", "),
                if self.unknown.len() > 10 {
                    format!(", … {} more", self.unknown.len() - 10)
                } else {
                    String::new()
                }
            ));
        }
        Some(t)
    }
}

/// `s` cut to at most `max` bytes on a character boundary, control characters dropped.
fn clip(s: &str, max: usize) -> String {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].chars().filter(|c| !c.is_control()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The head taken by the scan is the head taken from the value, for every shape the
    /// readers tell apart.
    #[test]
    fn the_scan_and_the_value_agree() {
        let lines = [
            r#"{"type":"system","subtype":"init","claude_code_version":"2.1.3","message":"x"}"#,
            r#"{"type":"item.completed","item":{"id":"i","type":"collab_tool_call","x":{"type":"no"}}}"#,
            r#"{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"AgentMessage","content":[{"type":"Text"}]}}}"#,
            r#"{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"Brand"}}}"#,
            r#"{"type":"session_meta","payload":{"id":"s","cli_version":"0.145.0"}}"#,
            r#"{"type":"message","message":{"role":"user"},"created":1}"#,
            r#"{"type":"message","role":"user","content":"x"}"#,
            r#"{"type":"text","part":{"type":"text"},"sessionID":"s"}"#,
            r#"{"type":"result","stats":{},"version":"1"}"#,
            r#"{"type":"tool_call","subtype":"started","timestamp_ms":1}"#,
            r#"{"type":"brand_new","data":{"type":"x","item":{"type":"y"}}}"#,
            r#"{"type":"message_update","assistantMessageEvent":{"type":"text_delta"}}"#,
            r#"{"type":"system","subtype":"init","session_id":"T-1","tools":[]}"#,
            r#"{"type":"system","subtype":"session_start","qwen_code_version":"0.2.3"}"#,
            r#"{"type":"tool_call","id":"c","toolName":"Read","parameters":{}}"#,
            r#"{"type":"session.start","data":{"copilotVersion":"0.0.361","x":{"copilotVersion":"no"}},"parentId":null}"#,
            r#"{"role":"tool","tool_call_id":"tc_1","content":"x"}"#,
            r#"{"event":"step_update","status":"DONE","version":"1.1.8"}"#,
            r#"{"version":"9","payload":{"cli_version":"0.1"},"type":"event_msg"}"#,
            r#"[1,2]"#,
        ];
        let mut stack = Vec::new();
        for line in lines {
            let v: Value = serde_json::from_str(line).unwrap();
            let a = Head::of_value(&v);
            let b = Head::of_line(line.as_bytes(), &mut stack).unwrap();
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{line}");
        }
    }

    #[test]
    fn unknown_kinds_are_named() {
        let kind = |line: &str| {
            let v: Value = serde_json::from_str(line).unwrap();
            Head::of_value(&v).unknown_kind()
        };
        assert_eq!(
            kind(r#"{"type":"brand_new"}"#).as_deref(),
            Some("brand_new")
        );
        assert_eq!(
            kind(r#"{"type":"system","subtype":"fresh"}"#).as_deref(),
            Some("system/fresh")
        );
        assert_eq!(
            kind(r#"{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"Brand"}}}"#)
                .as_deref(),
            Some("event_msg/item_completed/Brand")
        );
        assert_eq!(
            kind(
                r#"{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"CommandExecution"}}}"#
            ),
            None
        );
        assert_eq!(kind(r#"{"type":"truncated"}"#), None);
        assert_eq!(kind(r#"{"type":"agent_settled"}"#), None);
        assert_eq!(kind(r#"{"event":"step_update"}"#), None);
        assert_eq!(
            kind(r#"{"event":"brand_new"}"#).as_deref(),
            Some("event brand_new")
        );
        assert_eq!(kind(r#"{"role":"assistant","content":"x"}"#), None);
    }

    #[test]
    fn each_agent_is_told_by_its_shape() {
        let format = |line: &str| {
            let v: Value = serde_json::from_str(line).unwrap();
            Head::of_value(&v).format()
        };
        for (line, f) in [
            (r#"{"type":"session","version":3,"id":"s"}"#, Format::Pi),
            (r#"{"type":"turn_end","message":{}}"#, Format::Pi),
            (
                r#"{"type":"assistant","session_id":"T-9","message":{}}"#,
                Format::Amp,
            ),
            (r#"{"type":"completion","finalText":"x"}"#, Format::Droid),
            (
                r#"{"type":"message","role":"user","text":"x"}"#,
                Format::Droid,
            ),
            (
                r#"{"type":"tool_result","id":"c","isError":false}"#,
                Format::Droid,
            ),
            (r#"{"type":"assistant.message","data":{}}"#, Format::Copilot),
            (
                r#"{"type":"result","exitCode":0,"usage":{}}"#,
                Format::Copilot,
            ),
            (
                r#"{"type":"system","subtype":"session_start"}"#,
                Format::Qwen,
            ),
            (r#"{"role":"assistant","content":"x"}"#, Format::Kimi),
            (r#"{"event":"init","model":"m"}"#, Format::Antigravity),
            // The agents told apart before keep their shapes.
            (
                r#"{"type":"message","role":"user","content":"x"}"#,
                Format::Gemini,
            ),
            (
                r#"{"type":"tool_call","subtype":"started","call_id":"c"}"#,
                Format::Cursor,
            ),
            (r#"{"type":"turn.failed","error":{}}"#, Format::CodexExec),
            (r#"{"type":"result","subtype":"success"}"#, Format::Claude),
        ] {
            assert_eq!(format(line), f, "{line}");
        }
    }

    /// A droid run appended after a Claude Code run's result named the whole log droid (a
    /// Cursor run, Cursor): only a stream that opens with their `system/init` is theirs.
    #[test]
    fn a_droid_or_cursor_run_after_a_claude_result_names_no_more_than_itself() {
        let drift_of = |lines: &[&str]| {
            let mut d = Drift::default();
            for (k, l) in lines.iter().enumerate() {
                d.add(
                    &Head::of_value(&serde_json::from_str(l).unwrap()),
                    k as u64 + 1,
                );
            }
            d.agent
        };
        let init = r#"{"type":"system","subtype":"init","session_id":"s","model":"m"}"#;
        let claude = [
            init,
            r#"{"type":"assistant","message":{"content":[]},"session_id":"s"}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"session_id":"s"}"#,
        ];
        let droid = r#"{"type":"message","role":"user","id":"m","text":"x"}"#;
        let cursor = r#"{"type":"tool_call","subtype":"started","timestamp_ms":1}"#;
        for later in [droid, cursor] {
            let mut lines = claude.to_vec();
            lines.extend([init, later]);
            assert_eq!(drift_of(&lines), Some("claude-code"), "{later}");
        }
        // Their own streams, which open with Claude Code's init, are still theirs.
        assert_eq!(drift_of(&[init, droid]), Some("droid"));
        assert_eq!(drift_of(&[init, claude[1], cursor]), Some("cursor"));
    }
}
