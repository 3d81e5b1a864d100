//! Messages Claude Code retracted after a model refusal (`system/model_refusal_fallback` and
//! `model_refusal_no_fallback` list them in `retracted_message_uuids`): the text view marks the
//! retracted message's own line `[RETRACTED]`, not only the refusal.
//!
//! The refusal comes after the messages it retracts, so the view looks ahead: before printing
//! a file forward it makes one more pass over it that only searches each line for
//! `"retracted_message_uuids"` (a substring search; the few lines that have it are parsed),
//! and for the last events (`--tail`) it looks at the events selected. At most
//! [`RETRACTED_CAP`] ids are kept. A view that prints events as they are written (`--follow`,
//! the tee's `--progress`) cannot look ahead: there the refusal's own line says how many
//! messages it retracted.

use std::collections::HashSet;

use serde_json::Value;

use super::ViewOptions;

/// Retracted message ids kept at most.
pub const RETRACTED_CAP: usize = 10_000;

/// The ids of the messages retracted so far.
#[derive(Clone, Debug, Default)]
pub struct Retracted(HashSet<String>);

impl Retracted {
    /// Notes the ids a log line retracts, if it retracts any.
    pub fn note(&mut self, line: &[u8]) {
        if memchr::memmem::find(line, b"\"retracted_message_uuids\"").is_none() {
            return;
        }
        let Some(v) = crate::read::events::parse(line) else {
            return;
        };
        let ids = v.get("retracted_message_uuids").and_then(Value::as_array);
        for id in ids.into_iter().flatten().filter_map(Value::as_str) {
            if self.0.len() >= RETRACTED_CAP {
                return;
            }
            self.0.insert(id.to_string());
        }
    }

    /// The ids retracted anywhere in the view's files (a file that cannot be read is left to
    /// the pass that prints, which says so).
    pub fn of_files(opts: &ViewOptions) -> Retracted {
        let mut found = Retracted::default();
        for k in 0..opts.files.len() {
            let _ = opts.for_each_line(k, |line| {
                found.note(line);
                true
            });
        }
        found
    }

    /// True when `v` is a message retracted (by its `uuid`).
    pub fn contains(&self, v: &Value) -> bool {
        !self.0.is_empty()
            && v.get("uuid")
                .and_then(Value::as_str)
                .is_some_and(|id| self.0.contains(id))
    }
}
