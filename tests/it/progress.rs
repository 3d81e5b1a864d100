//! `--progress[=FILE]`: the text view's line of each event as it is logged, on standard error
//! or in FILE, while standard output stays the input and the stream never waits for it.

use crate::common;

use std::path::Path;

fn golden_input(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/golden")
            .join(name)
            .join("input.jsonl"),
    )
    .unwrap()
}

/// `--progress LOG` names a log (the value only with `=`), and standard error gets exactly
/// what `--view` prints of that log, line for line, save the mark of a retracted message,
/// which a live view cannot know before the refusal that follows it.
#[test]
fn progress_shows_the_view_line_of_each_event_on_stderr() {
    let dir = common::tempdir("progress-stderr");
    let log = dir.join("run.jsonl");
    let input = golden_input("format-claude-2026-events");
    let out = common::run_cmd(
        common::bin().args(["-b", "1024", "--progress"]).arg(&log),
        &input,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout == input, "stdout is the input, byte for byte");
    let view = common::run_cmd(common::bin().arg("--view").arg(&log), b"");
    assert!(!view.stdout.is_empty());
    let view = String::from_utf8_lossy(&view.stdout);
    assert!(view.contains("[RETRACTED] "));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        view.replace("[RETRACTED] ", "")
    );
}

/// `--progress=FILE` appends the lines to FILE; standard error stays quiet; with no log at
/// all the events are still shown.
#[test]
fn progress_to_a_file_without_a_log() {
    let dir = common::tempdir("progress-file");
    let shown = dir.join("progress.txt");
    let input = golden_input("format-codex-2026");
    let out = common::run_cmd(
        common::bin().arg(format!("--progress={}", shown.display())),
        &input,
    );
    assert!(out.status.success());
    assert!(out.stdout == input);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&shown).unwrap();
    assert_eq!(text.lines().count(), common::lines(&input).len());
    assert!(text.starts_with("#1 "), "{text}");
    assert!(!text.contains('\u{1b}'), "a file is no terminal: no colour");
}

/// A destination that never reads (a FIFO without a reader: opening it blocks) costs the
/// stream nothing: stdout and the log get everything and smart-tee exits.
#[test]
fn a_progress_fifo_nobody_reads_never_blocks_the_stream() {
    let dir = common::tempdir("progress-fifo");
    let fifo = dir.join("progress.fifo");
    common::mkfifo(&fifo);
    let log = dir.join("run.jsonl");
    let line = format!(
        "{{\"type\":\"assistant\",\"text\":\"{}\"}}\n",
        "x".repeat(200)
    );
    let input = line.repeat(50_000).into_bytes();
    let out = common::run_cmd(
        common::bin()
            .arg(format!("--progress={}", fifo.display()))
            .arg(&log),
        &input,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout == input);
    assert_eq!(std::fs::read(&log).unwrap(), input);
}

/// A destination that cannot be opened is said once; the stream and the log go on.
#[test]
fn a_progress_file_that_cannot_be_opened_is_said() {
    let dir = common::tempdir("progress-bad");
    let log = dir.join("run.jsonl");
    let input = golden_input("format-gemini");
    let out = common::run_cmd(
        common::bin()
            .arg(format!(
                "--progress={}",
                dir.join("no/such/dir/p.txt").display()
            ))
            .arg(&log),
        &input,
    );
    assert!(out.stdout == input);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--progress=") && err.contains("no/such/dir"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&log).unwrap().len(),
        std::fs::read(&log).unwrap().len()
    );
    assert!(!std::fs::read(&log).unwrap().is_empty());
}

/// On a terminal the line is coloured as `--view --color always` colours it.
#[test]
fn the_progress_line_is_coloured_when_asked() {
    let mut render = smart_tee::read::view::progress_renderer(true, None);
    let line = render(br#"{"type":"result","subtype":"error","is_error":true}"#, 7);
    let text = String::from_utf8_lossy(&line);
    assert!(text.contains("\u{1b}[31m"), "{text:?}");
    let mut plain = smart_tee::read::view::progress_renderer(false, None);
    let line = plain(br#"{"type":"result","subtype":"success"}"#, 7);
    assert_eq!(String::from_utf8_lossy(&line), "#7 result/success");
}

/// `--progress` is a flag of the tee: with `--view` it is refused.
#[test]
fn progress_is_refused_with_view() {
    let out = common::run_cmd(common::bin().args(["--view", "--progress", "x.jsonl"]), b"");
    assert_eq!(out.status.code(), Some(2));
}
