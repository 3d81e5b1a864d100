//! The parts of a text that a cut leaves: what to search around a cut point, and what an
//! excerpt may show. A secret cut in two shows as a part of itself that no pattern or value
//! matches, inside the run of bytes at the cut that holds no space, quote or backslash; an
//! excerpt leaves that run out, after the text is redacted whole.

use super::{Redactor, hidden};

/// The bytes no secret has in it (but a private key, found by its header): ASCII whitespace,
/// quotes and the backslash of JSON escapes. A secret that shows in part around a cut point is
/// inside the run of other bytes there.
pub(super) fn ends_run(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C | b'"' | b'\'' | b'\\'
    )
}

/// [`ends_run`] for the byte at `text[at]`: a backslash that starts an escape of a printable
/// character (`\u0070`, `\/`, see [`hidden`]) is inside a word, not at its end.
fn ends_run_at(text: &[u8], at: usize) -> bool {
    ends_run(text[at]) && !(text[at] == b'\\' && hidden::hides_at(text, at))
}

/// The longest run around a cut point that [`around_cut`] searches; a longer one is not taken
/// apart.
pub(super) const MAX_RUN: usize = 4096;
/// Bytes searched on each side of the run: room for a secret's name (`password = `,
/// `Bearer `), and for a private key's header or footer cut in two.
const NAME_ROOM: usize = 128;

/// What to search for a secret cut in two at position `at` of `text`: the run of bytes that
/// are not [`ends_run`] around it, with [`NAME_ROOM`] bytes on each side. `None` when the run is
/// longer than [`MAX_RUN`] on either side.
pub fn around_cut(text: &[u8], at: usize) -> Option<std::ops::Range<usize>> {
    let before = (at.saturating_sub(MAX_RUN + 1)..at)
        .rev()
        .position(|i| ends_run_at(text, i));
    let after = (at..text.len().min(at + MAX_RUN + 1)).position(|i| ends_run_at(text, i));
    let start = match before {
        Some(k) => at - k,
        None if at <= MAX_RUN => 0,
        None => return None,
    };
    let end = match after {
        Some(k) => at + k,
        None if text.len() - at <= MAX_RUN => text.len(),
        None => return None,
    };
    Some(start.saturating_sub(NAME_ROOM)..(end + NAME_ROOM).min(text.len()))
}

impl Redactor {
    /// Where the part of an excerpt should end (`head`) or start (its tail) to leave out the
    /// run of bytes at its inner end, up to [`MAX_RUN`], and at least the longest secret
    /// value: there a secret cut by the excerpt would show a part of itself.
    pub fn inner_end(&self, part: &[u8], head: bool) -> usize {
        let longest = self.values.as_ref().map_or(0, |v| v.longest);
        let room = MAX_RUN.min(part.len());
        let run = |mut at: Box<dyn Iterator<Item = usize>>| {
            at.position(|i| ends_run_at(part, i)).unwrap_or(room)
        };
        if head {
            let end = part.len();
            let drop = run(Box::new((end - room..end).rev())).max(longest).min(end);
            end - drop
        } else {
            run(Box::new(0..room)).max(longest).min(part.len())
        }
    }

    /// What to search for a secret cut in two at position `at` of `text`: [`around_cut`]'s
    /// run, widened to hold any secret value that spans `at`. `None` when the run is too long.
    pub fn around_cut(&self, text: &[u8], at: usize) -> Option<std::ops::Range<usize>> {
        let run = around_cut(text, at)?;
        Some(match &self.values {
            Some(v) => {
                run.start.min(at.saturating_sub(v.longest))
                    ..run.end.max((at + v.longest).min(text.len()))
            }
            None => run,
        })
    }

    /// `part` of a longer text as an excerpt may show it, into `out`: redacted whole, then
    /// without the run of bytes at each end where the text was cut (`cut_start`, `cut_end`),
    /// and at least the longest secret value there ([`Redactor::inner_end`]). The ends fall on
    /// character boundaries, and outside a `[REDACTED:…]` label: it goes whole or not at all.
    pub fn excerpt(&self, part: &[u8], cut_start: bool, cut_end: bool, out: &mut Vec<u8>) {
        let mut redacted = Vec::new();
        let text = if self.redact(part, &mut redacted) {
            &redacted[..]
        } else {
            part
        };
        let continuation = |at: usize| text.get(at).is_some_and(|&b| b & 0xC0 == 0x80);
        let mut from = 0;
        if cut_start {
            from = self.inner_end(text, false);
            while continuation(from) {
                from += 1;
            }
        }
        let mut to = text.len();
        if cut_end {
            to = self.inner_end(text, true);
            while to > 0 && continuation(to) {
                to -= 1;
            }
        }
        let label = |at: usize| {
            let start = memchr::memmem::rfind(&text[..at], b"[REDACTED:")?;
            let end = start + memchr::memchr(b']', &text[start..])? + 1;
            (end > at).then_some((start, end))
        };
        if let Some((_, end)) = label(from) {
            from = end;
        }
        if let Some((start, _)) = label(to) {
            to = start;
        }
        out.clear();
        if from < to {
            out.extend_from_slice(&text[from..to]);
        }
    }

    /// Where to end the part of a text read so far (`text`, more to come) that can be
    /// redacted now, so that no secret is split between two redactions: [`MAX_RUN`] and the
    /// longest secret value before its end, moved back to the start of any secret found
    /// across that point. What follows it waits for the next bytes.
    pub fn safe_cut(&self, text: &[u8]) -> usize {
        let longest = self.values.as_ref().map_or(0, |v| v.longest);
        let at = text.len().saturating_sub(MAX_RUN + longest);
        let from = at.saturating_sub(MAX_RUN + longest);
        let mut cut = at;
        self.each_hit(&text[from..], |hit| {
            if let Some(h) = hit
                && from + h.start < cut
                && from + h.end > cut
            {
                cut = from + h.start;
            }
            false
        });
        cut
    }
}
