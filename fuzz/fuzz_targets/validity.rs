//! Differential: the engine's verdict on "is this strict JSON" agrees with serde_json's.
//! Documented exceptions: serde_json's depth limit (the engine has none; inputs nested deeper
//! than 100 levels are skipped) and numbers out of f64 range (compared with
//! `arbitrary_precision`, which accepts them as the engine does).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.iter().filter(|&&b| b == b'[' || b == b'{').count() > 100 {
        return;
    }
    let ours = smart_tee::line::scan::is_valid(data, &mut Vec::new());
    let theirs = serde_json::from_slice::<serde_json::Value>(data).is_ok();
    assert_eq!(
        ours,
        theirs,
        "verdicts differ on {:?}",
        String::from_utf8_lossy(data)
    );
});
