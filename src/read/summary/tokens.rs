//! Tokens, one definition on every surface (#48): `input_tokens` (uncached input),
//! `cache_read_input_tokens`, `cache_creation_input_tokens` and `output_tokens`, as Anthropic's
//! API names them, per conversation, per model and in the total; a count the format does not
//! give is unknown (`None`: `null` in JSON, `–` in text), never 0.
//!
//! Where each agent's figure comes from (docs/health.md says the same):
//! - Claude Code: a `result`'s `modelUsage` (every model, sub-agents included); without one,
//!   assistant messages' usage counted once per message (`message.id` + `requestId`), the copy
//!   with the most output kept, and no field below the `result`'s `usage`.
//! - Codex: the last `turn.completed.usage` (exec; Codex fills it from the thread's running
//!   total) or the last `token_count.info.total_token_usage` (rollouts). OpenAI's input counts
//!   the cached input, taken out here; its output counts the reasoning.
//! - Gemini CLI: the result's `stats` (`input_tokens` counts `cached`), per model when
//!   `stats.models` says. opencode: each `step_finish`'s `tokens`, summed. Goose: the
//!   `complete` event's `input_tokens`, `output_tokens`, `total_tokens`. Cursor: none.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::{MODEL_CAP, SESSION_CAP, STRING_CAP, Summary, clip, plus, s};

/// Messages told apart at most to count each once; past it the copies seen are let go (a later
/// copy of a message let go counts again).
const MESSAGE_CAP: usize = 100_000;

/// Token counts; `None` where the format does not give one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Input not read from the cache (Anthropic's `input_tokens`).
    pub input: Option<u64>,
    pub cache_read: Option<u64>,
    pub cache_write: Option<u64>,
    /// Output, reasoning included.
    pub output: Option<u64>,
    /// All input, where the format gives only that (Goose, Gemini without `cached`).
    pub input_whole: Option<u64>,
    /// Input and output together, where the format gives only that (Goose before 1.9).
    pub total_given: Option<u64>,
}

impl Tokens {
    /// All input: the three kinds, added (and input given whole).
    pub fn all_input(&self) -> Option<u64> {
        plus(
            plus(plus(self.input, self.cache_read), self.cache_write),
            self.input_whole,
        )
    }

    /// Input and output.
    pub fn total(&self) -> Option<u64> {
        plus(plus(self.all_input(), self.output), self.total_given)
    }

    pub fn is_known(&self) -> bool {
        self.total().is_some()
    }

    /// Adds `o`, field by field: unknown only when both are.
    pub fn add(&mut self, o: &Tokens) {
        self.input = plus(self.input, o.input);
        self.cache_read = plus(self.cache_read, o.cache_read);
        self.cache_write = plus(self.cache_write, o.cache_write);
        self.output = plus(self.output, o.output);
        self.input_whole = plus(self.input_whole, o.input_whole);
        self.total_given = plus(self.total_given, o.total_given);
    }

    /// The larger of each field.
    fn max(&mut self, o: &Tokens) {
        let m = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => a.or(b),
        };
        self.input = m(self.input, o.input);
        self.cache_read = m(self.cache_read, o.cache_read);
        self.cache_write = m(self.cache_write, o.cache_write);
        self.output = m(self.output, o.output);
        self.input_whole = m(self.input_whole, o.input_whole);
        self.total_given = m(self.total_given, o.total_given);
    }

    /// Anthropic's usage object (`input_tokens`, `cache_read_input_tokens`,
    /// `cache_creation_input_tokens`, `output_tokens`), or Claude Code's `modelUsage` entry
    /// (camelCase).
    pub(super) fn anthropic(u: &Value) -> Tokens {
        let n = |keys: &[&str]| keys.iter().find_map(|k| u.get(*k).and_then(Value::as_u64));
        Tokens {
            input: n(&["input_tokens", "inputTokens"]),
            cache_read: n(&["cache_read_input_tokens", "cacheReadInputTokens"]),
            cache_write: n(&["cache_creation_input_tokens", "cacheCreationInputTokens"]),
            output: n(&["output_tokens", "outputTokens"]),
            ..Tokens::default()
        }
    }

    /// OpenAI's usage (Codex): `input_tokens` counts `cached_input_tokens` (and
    /// `cache_write_input_tokens`, where given), `output_tokens` counts the reasoning.
    pub(super) fn openai(u: &Value) -> Tokens {
        let n = |k: &str| u.get(k).and_then(Value::as_u64);
        let (input, cached, written) = (
            n("input_tokens"),
            n("cached_input_tokens"),
            n("cache_write_input_tokens"),
        );
        if cached.is_none() {
            // The cached part not given: the input is known whole only.
            return Tokens {
                input_whole: input,
                output: n("output_tokens"),
                ..Tokens::default()
            };
        }
        Tokens {
            input: input.map(|i| {
                i.saturating_sub(cached.unwrap_or(0))
                    .saturating_sub(written.unwrap_or(0))
            }),
            cache_read: cached,
            cache_write: written,
            output: n("output_tokens"),
            ..Tokens::default()
        }
    }

    /// Gemini CLI's stats, or one model's: `input_tokens` (or `tokens.prompt`) counts
    /// `cached`; `input` is the rest. Without `cached`, the input is known whole only.
    pub(super) fn gemini(s: &Value) -> Tokens {
        let n = |keys: &[&str]| {
            keys.iter()
                .find_map(|k| s.pointer(k).and_then(Value::as_u64))
        };
        let prompt = n(&["/input_tokens", "/tokens/prompt"]);
        let cached = n(&["/cached", "/tokens/cached"]);
        let output = n(&["/output_tokens", "/tokens/candidates"]);
        match cached {
            Some(c) => Tokens {
                input: n(&["/input", "/tokens/input"]).or(prompt.map(|p| p.saturating_sub(c))),
                cache_read: Some(c),
                output,
                ..Tokens::default()
            },
            None => Tokens {
                input_whole: prompt,
                output,
                ..Tokens::default()
            },
        }
    }

    /// opencode's `step_finish` part: `tokens.input` is the uncached input, `cache.read` and
    /// `cache.write` apart; `reasoning` is apart from `output` (opencode bills it as output).
    pub(super) fn opencode(t: &Value) -> Tokens {
        let n = |p: &str| t.pointer(p).and_then(Value::as_u64);
        Tokens {
            input: n("/input"),
            cache_read: n("/cache/read"),
            cache_write: n("/cache/write"),
            output: plus(n("/output"), n("/reasoning")),
            ..Tokens::default()
        }
    }

    /// Goose's `complete` event: input (cache included, as its providers count it), output and
    /// their total.
    pub(super) fn goose(v: &Value) -> Tokens {
        let n = |k: &str| v.get(k).and_then(Value::as_u64);
        let (input, output) = (n("input_tokens"), n("output_tokens"));
        Tokens {
            input_whole: input,
            output,
            total_given: n("total_tokens").filter(|_| input.is_none() && output.is_none()),
            ..Tokens::default()
        }
    }

    /// The members of a JSON summary (or of one model's entry).
    pub(super) fn json_members(&self, into: &mut serde_json::Map<String, Value>) {
        into.insert("input_tokens".into(), self.input.into());
        into.insert("cache_read_input_tokens".into(), self.cache_read.into());
        into.insert(
            "cache_creation_input_tokens".into(),
            self.cache_write.into(),
        );
        into.insert("output_tokens".into(), self.output.into());
        into.insert("total_input_tokens".into(), self.all_input().into());
        into.insert("total_tokens".into(), self.total().into());
    }

    /// The counts a JSON summary gives (as [`Tokens::json_members`] writes them).
    pub fn from_json(s: &Value) -> Tokens {
        let n = |k: &str| s.get(k).and_then(Value::as_u64);
        let mut t = Tokens {
            input: n("input_tokens"),
            cache_read: n("cache_read_input_tokens"),
            cache_write: n("cache_creation_input_tokens"),
            output: n("output_tokens"),
            ..Tokens::default()
        };
        if t.input.is_none() && t.cache_read.is_none() && t.cache_write.is_none() {
            t.input_whole = n("total_input_tokens");
        }
        if t.all_input().is_none() && t.output.is_none() {
            t.total_given = n("total_tokens");
        }
        t
    }

    /// `in 1,769,237 (uncached 10,552, cache read 1,660,076, write 98,609) out 12,944`: "in"
    /// is all input; a count not given reads `–`.
    pub fn text(&self) -> String {
        let parts =
            if self.input.is_some() || self.cache_read.is_some() || self.cache_write.is_some() {
                format!(
                    " (uncached {}, cache read {}, write {})",
                    grouped(self.input),
                    grouped(self.cache_read),
                    grouped(self.cache_write)
                )
            } else {
                String::new()
            };
        let total = match (self.all_input(), self.output, self.total_given) {
            (None, None, Some(t)) => format!(" (total {})", grouped(Some(t))),
            _ => String::new(),
        };
        format!(
            "in {}{parts} out {}{total}",
            grouped(self.all_input()),
            grouped(self.output)
        )
    }
}

/// A count with thousands separated by commas, or `–` when unknown.
pub fn grouped(n: Option<u64>) -> String {
    let Some(n) = n else {
        return "–".into();
    };
    let mut out = Vec::new();
    crate::line::marker::push_grouped(&mut out, usize::try_from(n).unwrap_or(usize::MAX));
    String::from_utf8(out).unwrap_or_default()
}

/// One model's use: its tokens and the cost reported for it.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ModelUse {
    pub tokens: Tokens,
    pub cost: Option<f64>,
    /// Of a sum (a total of runs) with a reported cost: the tokens of the parts that reported
    /// none, whose cost is estimated ([`ModelUse::usd`]).
    pub unreported: Tokens,
    /// A run that reported its cost as a whole used this model and others: its part of the
    /// cost is not known, and not estimated ([`Summary::usage_in_total`]).
    pub in_priced_run: bool,
}

/// A run's tokens, in all and per model.
#[derive(Clone, Debug, Default)]
pub(super) struct Usage {
    pub tokens: Tokens,
    pub models: BTreeMap<String, ModelUse>,
}

impl Usage {
    pub fn add(&mut self, o: &Usage) {
        self.tokens.add(&o.tokens);
        for (m, u) in &o.models {
            if !self.models.contains_key(m) && self.models.len() >= MODEL_CAP {
                continue;
            }
            self.models.entry(m.clone()).or_default().add(u);
        }
    }

    /// The usage of `models`, the run's figure being their sum.
    pub fn of_models(models: BTreeMap<String, ModelUse>) -> Usage {
        let mut tokens = Tokens::default();
        for u in models.values() {
            tokens.add(&u.tokens);
        }
        Usage { tokens, models }
    }
}

/// Counts as plain numbers, each with whether any message gave it.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    n: [u64; 4],
    given: [bool; 4],
}

impl Counts {
    fn of(t: &Tokens) -> Counts {
        let f = [t.input, t.cache_read, t.cache_write, t.output];
        Counts {
            n: f.map(|x| x.unwrap_or(0)),
            given: f.map(|x| x.is_some()),
        }
    }
    fn add(&mut self, o: &Counts, sign_add: bool) {
        for k in 0..4 {
            self.n[k] = if sign_add {
                self.n[k].saturating_add(o.n[k])
            } else {
                self.n[k].saturating_sub(o.n[k])
            };
            self.given[k] |= o.given[k];
        }
    }
    fn tokens(&self) -> Tokens {
        let f = |k: usize| self.given[k].then_some(self.n[k]);
        Tokens {
            input: f(0),
            cache_read: f(1),
            cache_write: f(2),
            output: f(3),
            ..Tokens::default()
        }
    }
}

/// Assistant messages' usage, each message counted once: Claude Code repeats a message's usage
/// on each of its content blocks' events (the first copies' output counts are partial), so the
/// copy with the most output is kept. Running sums, so that the HTML chart reads them at each
/// event.
#[derive(Debug, Default)]
pub(super) struct Messages {
    seen: HashMap<String, (String, Counts)>,
    sum: Counts,
    models: BTreeMap<String, Counts>,
}

impl Messages {
    /// Takes an assistant event's `message.usage`.
    pub fn add(&mut self, v: &Value) {
        let Some(usage) = v.pointer("/message/usage").filter(|u| u.is_object()) else {
            return;
        };
        let new = Counts::of(&Tokens::anthropic(usage));
        let model = v
            .pointer("/message/model")
            .and_then(Value::as_str)
            .map(|m| clip(m, STRING_CAP / 2))
            .unwrap_or_default();
        let key = v.pointer("/message/id").and_then(Value::as_str).map(|id| {
            let request = ["/requestId", "/request_id"]
                .iter()
                .find_map(|p| v.pointer(p).and_then(Value::as_str))
                .unwrap_or("");
            format!("{id}\u{0}{request}")
        });
        if let Some(key) = &key
            && let Some((old_model, old)) = self.seen.get(key).cloned()
        {
            if new.n[3] <= old.n[3] {
                return;
            }
            self.sum.add(&old, false);
            if let Some(m) = self.models.get_mut(&old_model) {
                m.add(&old, false);
            }
        }
        self.sum.add(&new, true);
        if self.models.contains_key(&model) || self.models.len() < MODEL_CAP {
            self.models
                .entry(model.clone())
                .or_default()
                .add(&new, true);
        }
        if let Some(key) = key {
            if self.seen.len() >= MESSAGE_CAP {
                self.seen.clear();
            }
            self.seen.insert(key, (model, new));
        }
    }

    pub fn tokens(&self) -> Tokens {
        self.sum.tokens()
    }

    /// Lets go of the messages told apart: no copy of them comes after their run closed.
    pub fn close(&mut self) {
        self.seen = HashMap::new();
    }

    /// Tokens per model (Claude Code's `<synthetic>` placeholder, which has none, left out).
    pub fn models(&self) -> BTreeMap<String, ModelUse> {
        self.models
            .iter()
            .filter(|(m, c)| !(m.is_empty() || m.as_str() == "<synthetic>" && c.n == [0; 4]))
            .map(|(m, c)| {
                (
                    m.clone(),
                    ModelUse {
                        tokens: c.tokens(),
                        ..ModelUse::default()
                    },
                )
            })
            .collect()
    }
}

impl Summary {
    /// Takes an event's tokens (a conversation's; a total adds its conversations').
    pub(super) fn add_tokens(&mut self, v: &Value, kind: &str) {
        let session = || {
            s(v, "/session_id")
                .or_else(|| self.session.clone())
                .unwrap_or_default()
        };
        match kind {
            "assistant" => self.messages.add(v),
            "result" => {
                let session = session();
                let model_usage = v.get("modelUsage").and_then(Value::as_object);
                let per_model =
                    model_usage.or_else(|| v.pointer("/stats/models").and_then(Value::as_object));
                for (model, m) in per_model.into_iter().flatten() {
                    let key = (session.clone(), clip(model, STRING_CAP / 2));
                    if !self.result_models.contains_key(&key)
                        && self.result_models.len() >= MODEL_CAP
                    {
                        continue;
                    }
                    let tokens = if model_usage.is_some() {
                        Tokens::anthropic(m)
                    } else {
                        Tokens::gemini(m)
                    };
                    let cost = ["costUSD", "cost_usd"]
                        .iter()
                        .find_map(|k| m.get(*k).and_then(Value::as_f64));
                    self.result_models.insert(
                        key,
                        ModelUse {
                            tokens,
                            cost,
                            ..ModelUse::default()
                        },
                    );
                }
                let whole = match (v.get("stats"), v.get("usage")) {
                    (Some(stats), _) => Tokens::gemini(stats),
                    (None, Some(u)) if u.is_object() => Tokens::anthropic(u),
                    _ => Tokens::default(),
                };
                self.result_tokens(session, whole);
            }
            "complete" => self.result_tokens(session(), Tokens::goose(v)),
            "turn.completed" => {
                if let Some(u) = v.get("usage") {
                    self.running_total = Some(Tokens::openai(u));
                }
            }
            "event_msg" => {
                if let Some(u) = v.pointer("/payload/info/total_token_usage")
                    && s(v, "/payload/type").as_deref() == Some("token_count")
                {
                    self.running_total = Some(Tokens::openai(u));
                }
            }
            "step_finish" => {
                if let Some(t) = v.pointer("/part/tokens") {
                    self.steps
                        .get_or_insert_with(Tokens::default)
                        .add(&Tokens::opencode(t));
                }
            }
            _ => {}
        }
    }

    /// A final event's tokens, the last per session.
    pub(super) fn result_tokens(&mut self, session: String, t: Tokens) {
        if t.is_known()
            && (self.result_usage.len() < SESSION_CAP || self.result_usage.contains_key(&session))
        {
            self.result_usage.insert(session, t);
        }
    }

    /// [`Summary::usage`] as a total adds it: a run that reported its cost as a whole (no
    /// cost per model) gives it to its model when it has one; with several, their part of it
    /// is not known, and they are not estimated as runs that reported nothing are.
    pub(super) fn usage_in_total(&self) -> Usage {
        let mut u = self.usage();
        if let Some(c) = self.cost() {
            let one = u.models.len() == 1;
            for m in u.models.values_mut() {
                // The run's cost covers all its tokens: none is left to estimate.
                m.unreported = Tokens::default();
                if m.cost.is_some() {
                    continue;
                }
                if one {
                    m.cost = Some(c);
                } else {
                    m.in_priced_run = true;
                }
            }
        }
        u
    }

    /// The tokens of the run, in all and per model; for a total of several conversations,
    /// the sum of theirs.
    pub(super) fn usage(&self) -> Usage {
        if let (Some(closed), Some(current)) = (&self.closed, self.parts.last()) {
            return closed.usage_with(current);
        }
        if let [only] = self.parts.as_slice() {
            return only.usage();
        }
        if !self.result_models.is_empty() {
            let mut models: BTreeMap<String, ModelUse> = BTreeMap::new();
            for ((_, m), u) in &self.result_models {
                models.entry(m.clone()).or_default().add(u);
            }
            return Usage::of_models(models);
        }
        if let Some(tokens) = self.running_total {
            // One model named through the run: its tokens are the run's.
            let model = self
                .declared_model
                .clone()
                .filter(|d| self.last_model.as_ref() == Some(d));
            let models = model
                .map(|m| {
                    let cost = None;
                    (
                        m,
                        ModelUse {
                            tokens,
                            cost,
                            ..ModelUse::default()
                        },
                    )
                })
                .into_iter()
                .collect();
            return Usage { tokens, models };
        }
        if let Some(tokens) = self.steps {
            return Usage {
                tokens,
                models: BTreeMap::new(),
            };
        }
        // Messages once each, no field below what the final results say (Claude Code's
        // `usage`: the last API call's in older versions, the main model's in newer).
        let mut tokens = self.messages.tokens();
        for t in self.result_usage.values() {
            tokens.max(t);
        }
        let mut models = self.messages.models();
        if models.len() == 1
            && let Some(only) = models.values_mut().next()
        {
            only.tokens = tokens;
        }
        Usage { tokens, models }
    }

    /// The run's tokens, in all.
    pub fn tokens(&self) -> Tokens {
        self.usage().tokens
    }

    /// The session whose running total the run's tokens are (Codex), if they are one.
    pub(super) fn running_session(&self) -> Option<String> {
        self.running_total.and(self.session.clone())
    }

    /// The models an event names: a run's start declares one; assistant messages are counted
    /// per model (Claude Code's `<synthetic>` placeholder aside).
    pub(super) fn models_named(&mut self, v: &Value, kind: &str) {
        let sub = v.get("subtype").and_then(Value::as_str).unwrap_or("");
        let named = ["/model", "/message/model", "/payload/model"]
            .iter()
            .find_map(|p| s(v, p))
            .filter(|m| m != "<synthetic>");
        let Some(model) = named else {
            return;
        };
        if (kind == "system" && sub == "init") || kind == "init" || kind == "turn_context" {
            self.declared_model.get_or_insert_with(|| model.clone());
        }
        if kind == "assistant"
            && (self.model_uses.len() < MODEL_CAP || self.model_uses.contains_key(&model))
        {
            *self.model_uses.entry(model.clone()).or_default() += 1;
        }
        self.last_model = Some(model);
    }

    /// The model that did the work: the one the run's start names, else the one most messages
    /// came from, else the last one named; for a total of several conversations, the one most
    /// of them had (the latest of equals).
    pub fn model(&self) -> Option<String> {
        if self.parts.len() > 1 || self.parts_dropped > 0 {
            let mut count: BTreeMap<String, (usize, usize)> = BTreeMap::new();
            for (k, p) in self.parts.iter().enumerate() {
                if let Some(m) = p.model() {
                    let e = count.entry(m).or_default();
                    *e = (e.0 + 1, k);
                }
            }
            return count.into_iter().max_by_key(|(_, n)| *n).map(|(m, _)| m);
        }
        if let [only] = self.parts.as_slice() {
            return only.model();
        }
        let most_used = self
            .model_uses
            .iter()
            .max_by_key(|(_, n)| **n)
            .map(|(m, _)| m.clone());
        self.declared_model
            .clone()
            .or(most_used)
            .or_else(|| self.last_model.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// #48: Claude Code repeats a message's usage on every content block's event, the first
    /// copies with a partial output count: counted once, the copy with the most output kept.
    #[test]
    fn a_message_repeated_on_each_block_counts_once_with_its_last_output() {
        let mut m = Messages::default();
        let copy = |out: u64| {
            json!({"type":"assistant","requestId":"req_1","message":{"id":"msg_1","model":"claude-opus-4-6",
                "usage":{"input_tokens":3,"cache_read_input_tokens":100,"cache_creation_input_tokens":20,"output_tokens":out}}})
        };
        for out in [1, 7, 3] {
            m.add(&copy(out));
        }
        let t = m.tokens();
        assert_eq!(
            (t.input, t.cache_read, t.cache_write, t.output),
            (Some(3), Some(100), Some(20), Some(7))
        );
        assert_eq!(m.models()["claude-opus-4-6"].tokens, t);
    }

    /// OpenAI's input counts the cached input; reasoning is in the output already.
    #[test]
    fn openai_input_is_split_and_reasoning_not_added() {
        let t = Tokens::openai(&json!({"input_tokens":18200,"cached_input_tokens":9100,
            "output_tokens":640,"reasoning_output_tokens":210}));
        assert_eq!(
            (t.input, t.cache_read, t.cache_write, t.output),
            (Some(9100), Some(9100), None, Some(640))
        );
        assert_eq!(
            t.text(),
            "in 18,200 (uncached 9,100, cache read 9,100, write –) out 640"
        );
    }

    #[test]
    fn unknown_counts_read_as_a_dash_never_zero() {
        assert_eq!(Tokens::default().text(), "in – out –");
        let goose = Tokens::goose(&json!({"type":"complete","total_tokens":26000}));
        assert_eq!(goose.text(), "in – out – (total 26,000)");
        assert_eq!(grouped(Some(1_769_237)), "1,769,237");
        assert_eq!(grouped(Some(999)), "999");
    }
}
