//! The heap a line costs the engine, counted by the allocator: a test binary of its own, since
//! it replaces the global allocator. Counts are per thread, so each test sees only its own work,
//! and they are of the bytes asked for (capacity), which is what a copy of a line costs at
//! least.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use smart_tee::{EngineConfig, LineEngine, Outcome};

struct Counting;

thread_local! {
    static NOW: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    // `try_with`: a thread's last frees come after its counters are gone.
    let _ = NOW.try_with(|now| {
        now.set(now.get() + delta);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now.get())));
    });
}

// SAFETY: every call goes to `System` unchanged; only the sizes are counted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        count(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, layout, size) };
        if !q.is_null() {
            count(size as isize - layout.size() as isize);
        }
        q
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The most this thread's heap grew over what it held when `f` started.
fn peak_growth(f: impl FnOnce()) -> usize {
    let start = NOW.with(Cell::get);
    PEAK.with(|p| p.set(start));
    f();
    (PEAK.with(Cell::get) - start) as usize
}

fn redacting(budget: usize) -> EngineConfig {
    EngineConfig {
        max_line_bytes: budget,
        redact: true,
        ..EngineConfig::default()
    }
}

/// #49: with `--redact`, a line held whole (up to 8 MiB) whose log line showed a secret was
/// redacted whole, a copy beside it: an 8 MiB line of `\u0041` escapes around a token took
/// 35 MiB of RSS with `--archive`. It is now redacted in parts fed to a reduction: its cost
/// is a part's, not the line's, and its log line is what the copy gave.
#[test]
fn a_long_line_whose_log_line_shows_a_secret_is_redacted_without_a_copy_of_itself() {
    let escapes = "\\u0041".repeat(600_000);
    let token = format!("ghp_{}", "a".repeat(36));
    // Each a line whose log line, cut as written, may show the token, and whether the log
    // line shows the label that replaced it.
    let shapes = [
        // The token in the middle, the escapes (letters) running on from it: one run of text
        // too long to take apart around the cut points, so the line is redacted.
        (
            format!(r#"{{"type":"user","text":"{escapes}{token}{escapes}"}}"#),
            false,
        ),
        // The token at the start of the string, the escapes after it.
        (
            format!(r#"{{"type":"user","text":"{token} {escapes} {escapes}"}}"#),
            true,
        ),
        // Plain text, the token at its end.
        (
            format!(
                r#"{{"type":"user","id":"u1","text":"{} {token}"}}"#,
                "x".repeat(7_000_000)
            ),
            true,
        ),
    ];
    let mut engine = LineEngine::new(redacting(5120));
    let mut warm = Vec::new();
    engine.process(br#"{"type":"user","text":"warm up"}"#, &mut warm);
    for (line, labelled) in &shapes {
        let mut out = Vec::new();
        let grew = peak_growth(|| {
            assert_eq!(engine.process(line.as_bytes(), &mut out), Outcome::Cut);
        });
        let log = std::str::from_utf8(&out).unwrap();
        assert!(out.len() <= 5121, "{}", out.len());
        assert!(!log.contains("ghp_"), "{log}");
        assert_eq!(log.contains("[REDACTED:github_token]"), *labelled, "{log}");
        let v: serde_json::Value = serde_json::from_str(log).unwrap();
        assert_eq!(v["type"], "user");
        assert!(
            grew < line.len() / 2,
            "the line ({} bytes) cost {grew} bytes of heap",
            line.len()
        );
    }
}

/// #49: a line nested past the reduction's depth (100,000 levels) holds an open container for
/// each level until it fails; at 64 bytes a level, with `--stdout-max-line-bytes` beside the
/// log (two reductions), a 256 MiB line of `[[[…` took 34–40 MiB of RSS. Now 32 bytes a level.
#[test]
fn a_line_nested_as_deep_as_the_reduction_goes_costs_at_most_32_bytes_a_level() {
    use smart_tee::reduce::{Failure, MAX_DEPTH, Reducer};
    let deep = "[".repeat(MAX_DEPTH + 10);
    let mut reducer = Reducer::for_budget(5120);
    let grew = peak_growth(|| reducer.feed(deep.as_bytes()));
    assert_eq!(reducer.failure(), Some(Failure::TooBig));
    // The frames, and the reduced copy of the brackets (its capacity up to twice its length).
    assert!(
        grew <= 32 * MAX_DEPTH + 2 * deep.len(),
        "{MAX_DEPTH} levels cost {grew} bytes"
    );
}
