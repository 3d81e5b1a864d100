//! Field rules: which values give up their bytes first and which are kept.
//!
//! Every value takes the class of the nearest enclosing member whose key is named in a rule
//! (its own key first), or `Normal` when none is. So in `{"tool_use_result":{"stdout":"…"}}`
//! the stdout string is `CutFirst`, and in `{"content":[{"type":"text","text":"…"}]}` the type is
//! `Preserved` and the text is `CutLast`.

/// How readily a value gives up its bytes. The order is the order of giving up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FieldClass {
    CutFirst = 0,
    Normal = 1,
    CutLast = 2,
    /// Cut only when nothing else is left, and then visibly.
    Preserved = 3,
}

impl FieldClass {
    pub const ALL: [FieldClass; 4] = [
        FieldClass::CutFirst,
        FieldClass::Normal,
        FieldClass::CutLast,
        FieldClass::Preserved,
    ];
}

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
];

pub const DEFAULT_TRUNCATE_FIRST: &[&str] = &[
    "tool_use_result",
    "toolUseResult",
    "data",
    "tool_result",
    "content",
    "input",
];

pub const DEFAULT_CUT_LAST: &[&str] = &["text", "result"];

/// The field rules in force, matched against raw key bytes (a key written with escapes matches
/// only its escaped spelling).
#[derive(Clone, Debug, Default)]
pub struct FieldClasses {
    rules: Vec<(Box<[u8]>, FieldClass)>,
}

impl FieldClasses {
    /// The documented defaults.
    pub fn defaults() -> Self {
        let mut f = FieldClasses::default();
        f.extend(DEFAULT_PRESERVE, FieldClass::Preserved);
        f.extend(DEFAULT_TRUNCATE_FIRST, FieldClass::CutFirst);
        f.extend(DEFAULT_CUT_LAST, FieldClass::CutLast);
        f
    }

    /// Adds rules. A name already ruled keeps the stronger rule (`Preserved` beats the others).
    pub fn extend<S: AsRef<str>>(&mut self, names: &[S], class: FieldClass) {
        for name in names {
            let name = name.as_ref().as_bytes();
            match self.rules.iter_mut().find(|(n, _)| &**n == name) {
                Some((_, c)) => {
                    *c = if *c == FieldClass::Preserved {
                        *c
                    } else {
                        class
                    }
                }
                None => self.rules.push((name.into(), class)),
            }
        }
    }

    #[inline]
    pub fn class_of(&self, key: &[u8]) -> Option<FieldClass> {
        self.rules
            .iter()
            .find(|(n, _)| &**n == key)
            .map(|&(_, c)| c)
    }
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
        assert_eq!(f.class_of(b"cwd"), None);
    }
}
