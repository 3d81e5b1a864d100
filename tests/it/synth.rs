//! The stream generator of the benches and examples (`benches/support/synth.rs`): its lines
//! are JSON, deterministic for a seed, and giant lines have the size asked.

#[path = "../../benches/support/synth.rs"]
#[allow(dead_code)]
mod generator;

use generator::{GIANT_KINDS, write_giant_line, write_stream, write_tiny_lines};

#[test]
fn generated_lines_are_json_and_deterministic() {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    write_stream(&mut a, 3 << 20, 7).unwrap();
    write_stream(&mut b, 3 << 20, 7).unwrap();
    assert_eq!(a, b);
    let mut stack = Vec::new();
    for line in a.split(|&c| c == b'\n').filter(|l| !l.is_empty()) {
        assert!(std::str::from_utf8(line).is_ok());
        assert!(
            smart_tee::line::scan::is_valid(line, &mut stack),
            "{}",
            String::from_utf8_lossy(&line[..200.min(line.len())])
        );
    }
}

#[test]
fn giant_lines_are_json_of_the_size_asked() {
    let mut stack = Vec::new();
    for kind in GIANT_KINDS {
        let mut line = Vec::new();
        write_giant_line(&mut line, kind, 3 << 20).unwrap();
        assert!(
            line.len().abs_diff(3 << 20) < 8192,
            "{kind}: {}",
            line.len()
        );
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
        assert!(smart_tee::line::scan::is_valid(&line, &mut stack), "{kind}");
    }
    let mut tiny = Vec::new();
    write_tiny_lines(&mut tiny, 10).unwrap();
    let lens: Vec<usize> = tiny.split(|&b| b == b'\n').map(<[u8]>::len).collect();
    assert_eq!(lens.len(), 11, "ten lines and a final newline");
    assert!(lens[..10].iter().all(|&n| n == 299), "{lens:?}");
}

/// Giant arrays of integers (past 8 MiB, reduced while read; their middles read sixty-four
/// bytes at a time) are logged with their true element count in the array's marker and the
/// elements kept from each end exactly as they are in the input, whatever the pieces.
#[test]
fn giant_arrays_of_integers_log_their_count_and_their_ends() {
    use serde_json::Value;
    for (kind, field) in [("integers", "tokens"), ("deltas", "deltas")] {
        let mut line = Vec::new();
        write_giant_line(&mut line, kind, 9 << 20).unwrap();
        let input: Value = serde_json::from_slice(&line).unwrap();
        let all = input[field].as_array().unwrap();
        for chunk in [0, 64 << 10, 1 << 20] {
            let log = crate::common::log_of(&line, &crate::common::config(5120), chunk);
            assert!(log.len() <= 5121, "{kind} {chunk}: {}", log.len());
            let logged: Value = serde_json::from_slice(&log).unwrap();
            assert_eq!(logged["uuid"], input["uuid"], "{kind} {chunk}");
            let kept = logged[field].as_array().unwrap();
            let marker = kept.iter().position(Value::is_string).expect("a marker");
            assert_eq!(
                kept[marker],
                format!("[TRUNCATED: {} → {} items]", all.len(), kept.len() - 1),
                "{kind} {chunk}"
            );
            assert_eq!(kept[..marker], all[..marker], "{kind} {chunk}");
            let tail = kept.len() - marker - 1;
            assert_eq!(
                kept[marker + 1..],
                all[all.len() - tail..],
                "{kind} {chunk}"
            );
        }
    }
}
