use super::*;

/// The line that makes [`LineEngine::process`] panic in unit tests, standing for a bug.
pub(crate) const PANICS: &[u8] = b"{\"panic\":\"provoked by a test\"}";

/// #27.6: a panic anywhere in a line's processing (here provoked on purpose) costs that
/// line its detail: it is logged as a record of its text, and the next line is processed
/// as usual. Only the over-budget cut used to be guarded.
#[test]
fn a_panic_in_a_line_becomes_a_record() {
    let mut engine = LineEngine::new(EngineConfig::default());
    let mut out = b"before\n".to_vec();
    assert_eq!(engine.process(PANICS, &mut out), Outcome::Unplanned);
    assert_eq!(engine.process(b"{\"a\":1}", &mut out), Outcome::Verbatim);
    let text = String::from_utf8(out).unwrap();
    assert_eq!(
        text,
        "before\n{\"type\":\"truncated\",\"text\":\"{\\\"panic\\\":\\\"provoked by a test\\\"}\"}\n{\"a\":1}\n"
    );
}
