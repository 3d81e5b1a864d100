//! Messages Claude Code retracted after a model refusal: marked on their own line in every
//! way the text view reads a log.

use crate::common::{self, bin, lines};
use smart_tee::read::log::ViewOptions;
use smart_tee::read::view::render_events;

/// #31.4: a message Claude Code retracted after a refusal read as a normal answer; its own
/// line is marked, whether the view reads forward, from the end, within a budget, or is given
/// the events (MCP `read_log`).
#[test]
fn a_retracted_message_is_marked_on_its_own_line() {
    let dir = common::tempdir("view-retracted");
    let log = dir.join("run.jsonl");
    std::fs::write(
        &log,
        concat!(
            r#"{"type":"assistant","uuid":"a-1","message":{"content":[{"type":"text","text":"kept"}]}}"#,
            "\n",
            r#"{"type":"assistant","uuid":"a-2","message":{"content":[{"type":"text","text":"taken back"}]}}"#,
            "\n",
            r#"{"type":"system","subtype":"model_refusal_fallback","retracted_message_uuids":["a-2"],"fallback_model":"m"}"#,
            "\n",
        ),
    )
    .unwrap();
    let marked = |out: &[u8]| {
        let text = String::from_utf8_lossy(out).into_owned();
        assert!(text.contains("[RETRACTED] taken back"), "{text}");
        assert!(!text.contains("[RETRACTED] kept"), "{text}");
    };
    for args in [
        &["--view"][..],
        &["--view", "--tail", "2"],
        &["--view", "--max-tokens", "1000"],
        &["--view", "--head", "2"],
    ] {
        let out = common::run_cmd(bin().args(args).arg(&log), b"");
        assert!(out.status.success());
        marked(&out.stdout);
    }
    let events: Vec<Vec<u8>> = lines(&std::fs::read(&log).unwrap())
        .iter()
        .map(|l| l.to_vec())
        .collect();
    let mut out = Vec::new();
    render_events(&events, &ViewOptions::new(vec![log.clone()]), &mut out);
    marked(&out);
}
