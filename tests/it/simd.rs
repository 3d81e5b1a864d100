//! Every SIMD path this CPU has, forced with `SMART_TEE_SIMD`: the contract's tests run on each
//! (in a child process per path, each with a share of the property tests' cases;
//! `SMART_TEE_SIMD_FULL=1`, as `.ci/run` sets it, gives each path all of them), and the binary
//! logs the same bytes on each path as on the portable one. A path the CPU lacks is said on
//! stderr, not passed in silence.

use crate::common;
use smart_tee::line::strings::{SIMD_VAR, Simd};

/// Says which paths this CPU lacks (they are not run); returns the ones it has.
fn paths() -> Vec<Simd> {
    let lacking: Vec<&str> = Simd::ALL
        .into_iter()
        .filter(|&p| p > Simd::widest())
        .map(Simd::name)
        .collect();
    if !lacking.is_empty() {
        eprintln!(
            "NOT run: {} (this CPU has up to {})",
            lacking.join(", "),
            Simd::widest().name()
        );
    }
    Simd::offered().collect()
}

#[test]
fn the_contract_holds_on_every_simd_path() {
    let paths = paths();
    let full = std::env::var_os("SMART_TEE_SIMD_FULL").is_some_and(|v| v == "1");
    let share = if full { 1 } else { paths.len() };
    let exe = std::env::current_exe().expect("the test binary");
    for path in paths {
        let mut cmd = std::process::Command::new(&exe);
        cmd.args(["contract::", "--skip", "simd::"])
            .env(SIMD_VAR, path.name())
            .env(common::CASES_SHARE_VAR, share.to_string());
        let out = common::run_cmd(&mut cmd, b"");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let result = stdout
            .lines()
            .find(|l| l.starts_with("test result:"))
            .unwrap_or("no test result");
        eprintln!("{SIMD_VAR}={}: {result}", path.name());
        assert!(
            out.status.success()
                && result.starts_with("test result: ok")
                && !result.contains("ok. 0 passed"),
            "the contract failed on {}:\n{stdout}\n{}",
            path.name(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A small generator of bytes (xorshift), so the input is the same on every run.
struct Bytes(u64);

impl Bytes {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.next() as usize % from.len()]
    }
}

/// Lines of every shape the SIMD paths serve: random bytes, text with colour codes and a stray
/// byte, binary lines, JSON with long strings dense in escapes (`\u` escapes and surrogate
/// pairs across block ends), plain long strings, integer arrays and secrets.
fn mixed_input() -> Vec<u8> {
    let mut r = Bytes(0x9E37_79B9_7F4A_7C15);
    let mut input = Vec::new();
    for k in 0..160 {
        let len = 1 + r.next() as usize % 3000;
        let mut line: Vec<u8> = match k % 8 {
            0 => (0..len)
                .map(|_| r.next() as u8)
                .filter(|&b| b != b'\n')
                .collect(),
            1 | 2 => {
                let words: &[&[u8]] = &[
                    b"\x1b[1;31merror\x1b[0m",
                    "caf\u{e9} ".as_bytes(),
                    "\u{3042}\u{1f600}".as_bytes(),
                    b" a \"quoted\" word\\",
                    b"\t",
                    b"\xff",
                    b"\xe3\x81",
                    b"\x7f",
                    b"plain text ",
                ];
                let mut line = Vec::new();
                while line.len() < len {
                    line.extend_from_slice(r.pick(words));
                }
                line
            }
            3 => (0..len)
                .map(|_| r.pick(b"\x00\x01ab\"\\\t\x80\xc3\xa9\xf0\x9f\x98\x80 "))
                .collect(),
            4 | 5 => {
                let pieces: &[&str] = &[
                    r"\n",
                    r#"\""#,
                    r"\\",
                    r"\u001b[0m",
                    r"\ud83d\ude00",
                    r"\u00e9",
                    "é",
                    "😀",
                    "text ",
                    r"\t",
                    r"\/",
                ];
                let mut s = String::new();
                while s.len() < len * 4 {
                    s.push_str(r.pick(pieces));
                }
                format!(r#"{{"type":"user","content":"{s}","n":[1,-2, 30]}}"#).into_bytes()
            }
            6 => {
                let plain = "a".repeat(len * 3);
                format!(
                    r#"{{"type":"assistant","text":"{plain}","key":"sk-ant-api03-{}","url":"https://u:p@h/x"}}"#,
                    "Z".repeat(40)
                )
                .into_bytes()
            }
            _ => {
                let ids: Vec<String> = (0..len).map(|i| (i * 7919 % 100_003).to_string()).collect();
                format!(r#"{{"type":"user","tokens":[{}]}}"#, ids.join(",")).into_bytes()
            }
        };
        line.retain(|&b| b != b'\n');
        input.extend_from_slice(&line);
        input.push(b'\n');
    }
    input
}

#[test]
fn the_binary_logs_the_same_bytes_on_every_simd_path() {
    let dir = common::tempdir("simd_paths_log_alike");
    let input = mixed_input();
    let paths = paths();
    for args in [
        &["-b", "512"][..],
        &["-b", "5120", "--redact"],
        &["-b", "0"],
    ] {
        let mut first: Option<(Simd, Vec<u8>)> = None;
        for &path in &paths {
            let log = dir.join(format!("{}.jsonl", path.name()));
            let out = common::run_cmd(
                common::bin()
                    .args(args)
                    .arg(&log)
                    .env(SIMD_VAR, path.name()),
                &input,
            );
            assert!(out.status.success(), "{}: {:?}", path.name(), out);
            assert!(out.stdout == input, "{}: stdout differs", path.name());
            let log = std::fs::read(&log).unwrap();
            match &first {
                None => first = Some((path, log)),
                Some((p, want)) => {
                    let at = log.iter().zip(want).position(|(a, b)| a != b);
                    assert!(
                        &log == want,
                        "{args:?}: the log on {} differs from the log on {} (at byte {at:?})",
                        path.name(),
                        p.name()
                    );
                }
            }
        }
        let (_, log) = first.expect("the portable path runs everywhere");
        for line in common::lines(&log) {
            assert!(common::strict_parse(line).is_ok(), "{}", common::show(line));
        }
    }
}

/// A path this CPU lacks, or a name that is no path, is said on stderr and the stream goes on.
#[test]
fn a_path_the_cpu_lacks_or_no_path_is_said() {
    let dir = common::tempdir("simd_path_said");
    let log = dir.join("log.jsonl");
    let out = common::run_cmd(
        common::bin().arg(&log).env(SIMD_VAR, "avx-1024"),
        b"{\"a\":1}\n",
    );
    assert!(out.status.success());
    assert_eq!(out.stdout, b"{\"a\":1}\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("SMART_TEE_SIMD=avx-1024: not one of"), "{err}");
    if Simd::widest() < Simd::Avx512 {
        let out = common::run_cmd(common::bin().arg(&log).env(SIMD_VAR, "avx512"), b"x\n");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("this CPU has no avx512"), "{err}");
    }
}
