//! Golden examples: `tests/golden/NAME/` holds an `input.jsonl`, optional `args` (flags, one
//! line), and what smart-tee must make of it: `log.jsonl` (the log) and `view.txt` (`--view` of
//! that log). `about.md` says which rule the case shows. One table-driven test runs them all.
//! A case's `also-*.jsonl` files are logged too and summarized with its log in one call.
//!
//! To regenerate the expected files after an intended change, run
//! `SMART_TEE_BLESS=1 cargo test --profile quick golden` and review `git diff tests/golden`.

use crate::common;

use std::path::Path;

fn check(expected: &Path, got: &[u8], bless: bool, failures: &mut Vec<String>) {
    if bless {
        std::fs::write(expected, got).unwrap();
        return;
    }
    match std::fs::read(expected) {
        Ok(want) if want == got => {}
        Ok(want) => failures.push(format!(
            "{}:\n--- expected\n{}\n--- got\n{}",
            expected.display(),
            common::show(&want),
            common::show(got)
        )),
        Err(e) => failures.push(format!(
            "{}: {e} (run with SMART_TEE_BLESS=1 to create it)",
            expected.display()
        )),
    }
}

#[test]
fn golden_cases() {
    let bless = std::env::var_os("SMART_TEE_BLESS").is_some();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut cases: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(cases.len() >= 18, "golden cases missing: {}", cases.len());
    let work = common::tempdir("golden");
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let input = std::fs::read(case.join("input.jsonl")).expect("input.jsonl");
        let args = std::fs::read_to_string(case.join("args")).unwrap_or_default();
        let args: Vec<&str> = args.split_whitespace().collect();
        let log = work.join(format!("{name}.jsonl"));
        let out = common::run_cmd(common::bin().args(&args).arg(&log), &input);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stdout == input,
            "{name}: stdout is the input, byte for byte"
        );
        let logged = std::fs::read(&log).unwrap();
        // Whatever the expected file says, the contract holds.
        for line in common::lines(&logged) {
            common::strict_parse(line).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        check(&case.join("log.jsonl"), &logged, bless, &mut failures);
        let view = common::run_cmd(common::bin().arg("--view").arg(&log), b"");
        assert!(view.status.success(), "{name}: --view failed");
        check(&case.join("view.txt"), &view.stdout, bless, &mut failures);
        if name.starts_with("format-") {
            // #31: what --summary says of each agent's events (the writer has exited).
            let mut also: Vec<_> = std::fs::read_dir(case)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| {
                    p.file_name()
                        .unwrap()
                        .to_string_lossy()
                        .starts_with("also-")
                })
                .collect();
            also.sort();
            let mut logs = vec![log.clone()];
            for (k, input) in also.iter().enumerate() {
                let more = work.join(format!("{name}-also-{k}.jsonl"));
                let out = common::run_cmd(
                    common::bin().args(&args).arg(&more),
                    &std::fs::read(input).unwrap(),
                );
                assert!(out.status.success(), "{name}: {}", input.display());
                logs.push(more);
            }
            let summary =
                common::run_cmd(common::bin().args(["--view", "--summary"]).args(&logs), b"");
            assert!(summary.status.success(), "{name}: --summary failed");
            check(
                &case.join("summary.txt"),
                &summary.stdout,
                bless,
                &mut failures,
            );
            // #13: every agent's events start with a gist, never raw JSON.
            for line in String::from_utf8_lossy(&view.stdout).lines() {
                assert!(
                    !line.contains("{\""),
                    "{name}: raw JSON in the view: {line}"
                );
            }
        }
        assert!(
            case.join("about.md").is_file(),
            "{name}: about.md says what the case shows"
        );
    }
    assert!(
        failures.is_empty(),
        "{} golden files differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// #13: the contract (strict JSON within the budget, verbatim when it fits, the same log for
/// every chunking, idempotence) holds on every golden input, each agent's fixtures included,
/// at budgets 1024, 5120 and 20000.
#[test]
fn every_golden_input_honours_the_contract_at_three_budgets() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut n = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let case = entry.unwrap().path();
        if !case.is_dir() {
            continue;
        }
        let input = std::fs::read(case.join("input.jsonl")).unwrap();
        for budget in [1024, 5120, 20000] {
            common::check_contract(&input, budget);
        }
        n += 1;
    }
    assert!(n >= 25, "{n} cases");
}
