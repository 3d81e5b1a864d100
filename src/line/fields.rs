//! Field rules: which values give up their bytes first and which are kept.
//!
//! Every value takes the class of the nearest enclosing member whose key is named in a rule
//! (its own key first), or `Normal` when none is; two exceptions, each all the way down:
//! everything inside a `Preserved` member is `Preserved`, and everything inside a `Duplicate`
//! member is `Duplicate` (a copy is a copy), except `Preserved` fields. So in
//! `{"content":[{"type":"text","text":"…"}]}` the type is `Preserved` and the text is `CutLast`,
//! in `{"toolUseResult":{"file":{"content":"…"}}}` the content is `Duplicate`, and in
//! `{"error":{"message":"…","content":"…"}}` both are `Preserved`.
//!
//! One rule set serves every agent's stream (Claude Code, Codex, Gemini CLI, opencode, Cursor,
//! Goose): the names come from each tool's published schema. A name two tools use differently
//! (`content` is tool output in Claude's lines and the message text in Gemini's) needs no
//! profile: a class only orders the fields of one line against each other, and in each tool's
//! lines the name keeps its place in that order.

/// How readily a value gives up its bytes. The order is the order of giving up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FieldClass {
    /// Copies of what the model saw (`tool_use_result`, `toolUseResult`, `originalFile`).
    Duplicate = 0,
    /// Tool output and tool inputs.
    CutFirst = 1,
    Normal = 2,
    /// The assistant's own words.
    CutLast = 3,
    /// Cut only when nothing else is left, and then visibly.
    Preserved = 4,
}

impl FieldClass {
    pub const ALL: [FieldClass; 5] = [
        FieldClass::Duplicate,
        FieldClass::CutFirst,
        FieldClass::Normal,
        FieldClass::CutLast,
        FieldClass::Preserved,
    ];

    /// The class of a member whose own rule is `own` (if any) inside a value of class `parent`.
    #[inline]
    pub fn inherit(own: Option<FieldClass>, parent: FieldClass) -> FieldClass {
        match (own, parent) {
            (Some(FieldClass::Preserved), _) | (_, FieldClass::Preserved) => FieldClass::Preserved,
            (_, FieldClass::Duplicate) => FieldClass::Duplicate,
            (Some(c), _) => c,
            (None, p) => p,
        }
    }
}

/// Ids, types, status and errors: what a reader needs to follow the run.
pub const DEFAULT_PRESERVE: &[&str] = &[
    "type",
    "subtype",
    "timestamp",
    "error",
    "is_error",
    "id",
    "uuid",
    "session_id",
    "tool_use_id",
    "parent_tool_use_id",
    // The same ids as Claude Code transcripts spell them.
    "sessionId",
    "parentUuid",
    // What a transcript entry needs to be read as one (claude-code-log requires them).
    "userType",
    "cwd",
    "version",
    "isSidechain",
    // Tools and outcomes, by every agent's names.
    "name",
    "tool_name",
    "tool",
    "server",
    "model",
    "role",
    "status",
    "exit_code",
    "exitCode",
    "path",
    "file_path",
    // Codex (`thread_id`, `call_id`), Gemini CLI (`tool_id`), opencode (`sessionID`,
    // `messageID`, `callID`), Cursor (`call_id`, `model_call_id`, `request_id`).
    "thread_id",
    "turn_id",
    "call_id",
    "tool_id",
    "sessionID",
    "messageID",
    "callID",
    "partID",
    "model_call_id",
    "request_id",
    // Claude Code transcripts: the API request an entry belongs to (usage readers such as
    // ccusage count a message once by its id and this).
    "requestId",
    "timestamp_ms",
    "created",
    // Usage, costs and timings, which cost tools and orchestrators read: Claude's `usage`,
    // `modelUsage`, `total_cost_usd`, `costUSD`, Codex's `model_usage`, Gemini's `stats`.
    "usage",
    "modelUsage",
    "model_usage",
    "total_cost_usd",
    "cost_usd",
    "costUSD",
    "duration_ms",
    "duration_api_ms",
    "num_turns",
    "stats",
];

/// Tool output and tool inputs, by every agent's names.
pub const DEFAULT_TRUNCATE_FIRST: &[&str] = &[
    "data",
    "tool_result",
    "content",
    "input",
    "tool_input",
    "output",
    "aggregated_output",
    "stdout",
    "stderr",
    "arguments",
    "parameters",
    "diff",
    "patch",
    "toolResult",
    "resultDisplay",
];

/// Copies that give way even before tool output: Claude Code's `tool_use_result` (and its
/// transcript spelling), opencode's `filediff` (the diff again), Cursor's whole files around an
/// edit. With `--plain` they are plain cut-first fields.
pub const DEFAULT_DUPLICATE: &[&str] = &[
    "tool_use_result",
    "toolUseResult",
    "originalFile",
    "filediff",
    "afterFullFileContent",
    "beforeFullFileContent",
];

/// The assistant's own words.
pub const DEFAULT_CUT_LAST: &[&str] = &["text", "result", "summary"];

/// Copies by the event they are in: `(type, name)`, a member named `name` anywhere in a line
/// whose `type` is `type` (written before it, as pi writes it) repeats what the log already
/// holds. pi's `turn_end.message` and `.toolResults` and `agent_end.messages` repeat the
/// messages their `message_end` events logged; before pi streamed deltas, each
/// `message_update` repeated the whole message so far (`message`, and again in
/// `assistantMessageEvent.partial`), its delta being the news.
pub const DEFAULT_COPIES_BY_TYPE: &[(&str, &str)] = &[
    ("turn_end", "message"),
    ("turn_end", "toolResults"),
    ("agent_end", "messages"),
    ("message_update", "message"),
    ("message_update", "partial"),
];

/// The types whose copies are snapshots that grow at their end (pi's old `message_update`):
/// a string of such a copy, cut, keeps its tail (the newest text), not its head.
pub const DEFAULT_SNAPSHOT_TYPES: &[&str] = &["message_update"];

/// The field rules in force, matched against the keys' text: a key written with escapes
/// (`"\u0074ype"`) is the key it spells (`type`). Looked up by key length first, so a lookup
/// compares a key with the few names of its length, however many rules there are.
#[derive(Clone, Debug, Default)]
pub struct FieldClasses {
    /// `by_len[n]`: the names of `n` bytes and their classes.
    by_len: Vec<Vec<(Box<[u8]>, FieldClass)>>,
    /// Copies by the event they are in ([`DEFAULT_COPIES_BY_TYPE`]), and their class
    /// (`Duplicate`, or `CutFirst` with `--plain`).
    copies: &'static [(&'static str, &'static str)],
    copies_class: Option<FieldClass>,
}

impl FieldClasses {
    /// The documented defaults.
    pub fn defaults() -> Self {
        let mut f = FieldClasses::default();
        f.extend(DEFAULT_PRESERVE, FieldClass::Preserved);
        f.extend(DEFAULT_DUPLICATE, FieldClass::Duplicate);
        f.extend(DEFAULT_TRUNCATE_FIRST, FieldClass::CutFirst);
        f.extend(DEFAULT_CUT_LAST, FieldClass::CutLast);
        f.copies = DEFAULT_COPIES_BY_TYPE;
        f.copies_class = Some(FieldClass::Duplicate);
        f
    }

    /// Whether a copy rule names the type whose raw content is `kind`.
    #[inline]
    pub fn has_copies(&self, kind: &[u8]) -> bool {
        self.copies_class.is_some() && self.copies.iter().any(|(t, _)| key_is(kind, t.as_bytes()))
    }

    /// The class of a member whose key's raw content is `key`, in a line whose `type` is
    /// `kind` (raw content too), when it is a copy there; and whether the copy is a snapshot
    /// that grows at its end ([`DEFAULT_SNAPSHOT_TYPES`]).
    #[inline]
    pub fn copy_in(&self, kind: &[u8], key: &[u8]) -> Option<(FieldClass, bool)> {
        let class = self.copies_class?;
        let copy = self
            .copies
            .iter()
            .any(|(t, n)| key_is(kind, t.as_bytes()) && key_is(key, n.as_bytes()));
        let snapshot = DEFAULT_SNAPSHOT_TYPES
            .iter()
            .any(|t| key_is(kind, t.as_bytes()));
        copy.then_some((class, snapshot))
    }

    /// The rules of `--plain`: duplicates are ordinary cut-first fields.
    pub fn without_duplicates(mut self) -> Self {
        for (_, c) in self.by_len.iter_mut().flatten() {
            if *c == FieldClass::Duplicate {
                *c = FieldClass::CutFirst;
            }
        }
        if self.copies_class.is_some() {
            self.copies_class = Some(FieldClass::CutFirst);
        }
        self
    }

    /// Adds rules. A name already ruled keeps the stronger rule (`Preserved` beats the others).
    pub fn extend<S: AsRef<str>>(&mut self, names: &[S], class: FieldClass) {
        for name in names {
            let name = name.as_ref().as_bytes();
            if self.by_len.len() <= name.len() {
                self.by_len.resize(name.len() + 1, Vec::new());
            }
            let bucket = &mut self.by_len[name.len()];
            match bucket.iter_mut().find(|(n, _)| &**n == name) {
                Some((_, c)) => {
                    if *c != FieldClass::Preserved {
                        *c = class;
                    }
                }
                None => bucket.push((name.into(), class)),
            }
        }
    }

    /// The rule for the key whose raw content (between its quotes, escapes as written) is
    /// `key`.
    #[inline]
    pub fn class_of(&self, key: &[u8]) -> Option<FieldClass> {
        // A name matched byte for byte is the key's text unless the key has escapes, and a
        // name with a backslash is matched only by its escaped spelling (below).
        match self.lookup(key) {
            Some((name, c)) if !name.contains(&b'\\') => Some(c),
            _ if key.contains(&b'\\') => self.class_of_escaped(key),
            _ => None,
        }
    }

    /// The rule named `text` byte for byte, with its name. The first and last bytes are
    /// compared before the rest: most keys differ there from the names of their length.
    #[inline]
    fn lookup(&self, text: &[u8]) -> Option<(&[u8], FieldClass)> {
        let ends = |t: &[u8]| (t.first().copied(), t.last().copied());
        let want = ends(text);
        self.by_len
            .get(text.len())?
            .iter()
            .find(|(n, _)| ends(n) == want && **n == *text)
            .map(|(n, c)| (&**n, *c))
    }

    #[cold]
    fn class_of_escaped(&self, key: &[u8]) -> Option<FieldClass> {
        let mut text = Vec::with_capacity(key.len());
        crate::line::strings::unescape_into(key, &mut text);
        self.lookup(&text).map(|(_, c)| c)
    }
}

/// True when the raw content of a key (between its quotes, escapes as written) spells `name`:
/// `\u0074imestamp` is `timestamp`.
#[inline]
pub fn key_is(key: &[u8], name: &[u8]) -> bool {
    if key.len() <= name.len() {
        // An escape spells one character in two bytes or more: only a longer key can.
        return key == name;
    }
    key.contains(&b'\\') && key_is_escaped(key, name)
}

#[cold]
fn key_is_escaped(key: &[u8], name: &[u8]) -> bool {
    let mut text = Vec::with_capacity(key.len());
    crate::line::strings::unescape_into(key, &mut text);
    text == name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preserve_wins_over_later_rules() {
        let mut f = FieldClasses::defaults();
        f.extend(&["type", "stdout"], FieldClass::CutFirst);
        assert_eq!(f.class_of(b"type"), Some(FieldClass::Preserved));
        assert_eq!(f.class_of(b"stdout"), Some(FieldClass::CutFirst));
        assert_eq!(f.class_of(b"text"), Some(FieldClass::CutLast));
        assert_eq!(f.class_of(b"gitBranch"), None);
    }

    #[test]
    fn escaped_keys_are_the_keys_they_spell() {
        let f = FieldClasses::defaults();
        assert_eq!(f.class_of(br"\u0074ype"), Some(FieldClass::Preserved));
        assert_eq!(f.class_of(br"t\u0065xt"), Some(FieldClass::CutLast));
        assert_eq!(f.class_of(br"\u0067itBranch"), None);
        assert!(key_is(br"\u0074imestamp", b"timestamp"));
        assert!(key_is(b"timestamp", b"timestamp"));
        assert!(!key_is(br"\u0074imestam", b"timestamp"));
        assert!(key_is(br"\ud83d\ude00\n", "😀\n".as_bytes()));
    }
}
