//! `--redact` on a line over the budget: whether its log line may show a secret, and the
//! redaction of a long line that does.

use std::mem::take;

use super::{LineEngine, Outcome};
use crate::cut::emit;
use crate::cut::plan::{DESCRIPTOR, State, WHOLE};
use crate::line::scan::Kind;
use crate::reduce::Reducer;

impl LineEngine {
    /// Whether the log line `logged`, cut from `json` by the plan just made, may show a secret:
    /// searched are the log line itself and, for each cut string, the run of text around each
    /// of its two cut points (where a secret cut in two would show its first or last part).
    #[cold]
    pub(super) fn logs_a_secret(&mut self, json: &[u8], logged: &[u8]) -> bool {
        let Some(redactor) = &self.redactor else {
            return false;
        };
        let mut text = take(&mut self.redacted);
        text.clear();
        text.extend_from_slice(logged);
        let (state, kept) = (&self.planner.state, &self.planner.kept);
        let nodes = &self.nodes;
        let mut whole = false;
        let mut i = 0;
        while i < nodes.len() {
            let nd = &nodes[i];
            if matches!(state[i], State::Dropped | State::Collapsed) {
                i = nd.next as usize;
                continue;
            }
            if nd.kind == Kind::String && kept[i] != WHOLE && kept[i] != DESCRIPTOR {
                let from = nd.start as usize + 1;
                let content = &json[from..nd.end as usize - 1];
                let ratio = if nd.tail_only {
                    0.0
                } else {
                    self.config.head_ratio
                };
                let (head, tail) = emit::cut_points(content, kept[i] as usize, ratio);
                for at in [from + head, from + tail] {
                    match redactor.around_cut(json, at) {
                        Some(run) => {
                            text.push(b'\n');
                            text.extend_from_slice(&json[run]);
                        }
                        // A run too long to take apart: the whole line is redacted.
                        None => whole = true,
                    }
                }
            }
            i += 1;
        }
        let found = whole || redactor.finds(&text);
        self.redacted = text;
        found
    }

    /// `--redact` on a long line held whole whose log line showed a secret: the line is
    /// redacted in parts ([`Redactor::redact_in_parts`]) fed to a reduction, and the reduced
    /// copy is planned, so that no redacted copy of the whole line sits beside it (an 8 MiB
    /// line of escapes hiding a token took 35 MiB with `--archive`, #49). `None` when the line
    /// does not reduce; it is then redacted whole.
    #[cold]
    pub(super) fn process_redacted_in_parts(
        &mut self,
        line: &[u8],
        out: &mut Vec<u8>,
    ) -> Option<Outcome> {
        let r = self.redactor.as_ref()?;
        let mut reducer = Reducer::for_budget(self.config.max_line_bytes);
        let mut redacted = take(&mut self.redacted);
        r.redact_in_parts(line, &mut redacted, |part| reducer.feed(part));
        self.redacted = redacted;
        let reduced = reducer.finish().ok()??;
        // A reduction that left out members or elements (past an object's 256 members, an
        // array's 128 at each end) would lose ids, errors and times the whole line's cut keeps
        // (#49's audit): that line is redacted whole.
        if reduced.elided.iter().any(|(_, e)| e.children > 0) {
            return None;
        }
        // Redacted before it was reduced: no secret is cut at a marker, so none of its bytes
        // are trimmed there (as [`LineEngine::process_reduced`] must). A reduction that only
        // shortened strings is searched again where it joined their ends; one that left
        // nothing out is the line compacted, redacted already (searched again, it came back
        // here, without end: #49's audit).
        self.reduction = reduced.elided;
        let outcome = if self.reduction.is_empty() {
            self.stamp_and_process(&reduced.doc, out)
        } else {
            self.process_rewritten(&reduced.doc, out)
        };
        self.reduction.clear();
        Some(outcome)
    }
}
