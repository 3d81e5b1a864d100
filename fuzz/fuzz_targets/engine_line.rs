//! One line through the engine at a budget at or above the floor: no panic, the log line is
//! strict JSON within the budget, and a valid line that fits comes out unchanged (unless
//! redacted), but for its raw CRs.
#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use smart_tee::cut::redact::Redactor;
use smart_tee::{EngineConfig, LineEngine, Outcome};

/// The default configuration and `--redact`'s redactor, built once per process: compiling the
/// redactor took most of each run when every input built its own. Each input still gets a
/// fresh engine (cheap without the redactor), so that no state carries over between inputs and
/// every budget is tried.
fn shared() -> &'static (EngineConfig, Arc<Redactor>) {
    static SHARED: OnceLock<(EngineConfig, Arc<Redactor>)> = OnceLock::new();
    SHARED.get_or_init(|| (EngineConfig::default(), Arc::new(Redactor::new())))
}

fn strict(bytes: &[u8]) -> bool {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    de.disable_recursion_limit();
    <serde_json::Value as serde::Deserialize>::deserialize(&mut de).is_ok() && de.end().is_ok()
}

/// Greatest nesting of brackets outside strings.
fn depth(line: &[u8]) -> usize {
    let (mut d, mut max, mut in_str, mut esc) = (0usize, 0, false, false);
    for &b in line {
        match (in_str, b) {
            (true, _) if esc => esc = false,
            (true, b'\\') => esc = true,
            (true, b'"') => in_str = false,
            (true, _) => {}
            (false, b'"') => in_str = true,
            (false, b'[' | b'{') => {
                d += 1;
                max = max.max(d);
            }
            (false, b']' | b'}') => d = d.saturating_sub(1),
            _ => {}
        }
    }
    max
}

fuzz_target!(|data: &[u8]| {
    let Some((b, rest)) = data.split_first_chunk::<2>() else {
        return;
    };
    let budget = 128 + (u16::from_le_bytes(*b) as usize % 4000);
    let line = rest.split(|&c| c == b'\n').next().unwrap_or_default();
    // One input in sixteen is redacted: secrets found in the log, or around its cut points,
    // are replaced and the line cut again.
    let redact = b[1] >= 0xF0;
    let (config, redactor) = shared();
    let config = EngineConfig {
        max_line_bytes: budget,
        redact,
        ..config.clone()
    };
    let mut engine = LineEngine::with_redactor(config, Some(Arc::clone(redactor)));
    let mut out = Vec::new();
    let outcome = engine.process(line, &mut out);
    // A caught panic is a bug, not a record to write (#47.5).
    assert_eq!(engine.panics(), 0, "{:?}", smart_tee::cut::engine::first_caught_panic());
    if outcome == Outcome::Blank {
        assert!(out.is_empty());
        return;
    }
    assert_ne!(outcome, Outcome::Unplanned, "the planner gave up");
    let logged = out.strip_suffix(b"\n").expect("newline");
    assert!(logged.len() <= budget, "{} > {budget}", logged.len());
    assert!(
        strict(logged),
        "not JSON: {}",
        String::from_utf8_lossy(logged)
    );
    // The line's JSON: without trailing `\r`s, a BOM, and the whitespace around the value.
    let trimmed = &line[..line.iter().rposition(|&c| c != b'\r').map_or(0, |p| p + 1)];
    let json = trimmed
        .strip_prefix("\u{feff}".as_bytes())
        .unwrap_or(trimmed)
        .trim_ascii();
    assert!(
        depth(logged) <= smart_tee::cut::plan::MAX_LOG_DEPTH,
        "too deep"
    );
    let shallow = depth(json) <= smart_tee::cut::plan::MAX_LOG_DEPTH;
    if !redact
        && (outcome == Outcome::Verbatim || (strict(json) && json.len() <= budget && shallow))
    {
        // Without its raw CRs (JSON whitespace that line readers take for line ends).
        let want: Vec<u8> = json.iter().copied().filter(|&c| c != b'\r').collect();
        assert_eq!(logged, &want[..]);
    }
});
