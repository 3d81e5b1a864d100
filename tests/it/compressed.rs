//! Compressed logs, read by every reader through one decoder (`src/tee/decompress.rs`): every
//! frame of a multi-frame zstd log (`cat a.zst b.zst`, pzstd), a leading skippable frame, every
//! member of a gzip log; a truncated stream told apart from a damaged one; and `--compact`,
//! which never shortens a log (issue 47.1).

use std::io::{Read, Write};
use std::path::Path;

use proptest::prelude::*;

use crate::common::{self, bin, tempdir};

fn zst(data: &[u8]) -> Vec<u8> {
    zstd::stream::encode_all(data, 3).unwrap()
}

fn gz(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// A zstd skippable frame (magic 0x184D2A50 + `n`), as pzstd writes first.
fn skippable(n: u8, payload: &[u8]) -> Vec<u8> {
    let mut v = vec![0x50 | (n & 0xf), 0x2a, 0x4d, 0x18];
    v.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    v.extend_from_slice(payload);
    v
}

/// Decompresses with the reference crates (every frame, every member).
fn decoded(bytes: &[u8]) -> Vec<u8> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(bytes)
            .read_to_end(&mut out)
            .unwrap();
        out
    } else if bytes.len() >= 4
        && (bytes[..4] == [0x28, 0xb5, 0x2f, 0xfd] || bytes[1..4] == [0x2a, 0x4d, 0x18])
    {
        zstd::stream::decode_all(bytes).unwrap()
    } else {
        bytes.to_vec()
    }
}

/// A line that compacts (long output) and a short one, numbered `n`, `n + 1`.
fn two_lines(n: u32) -> Vec<u8> {
    format!(
        "{{\"type\":\"user\",\"n\":{n},\"output\":\"{}\"}}\n{{\"type\":\"assistant\",\"n\":{}}}\n",
        "x".repeat(20_000),
        n + 1
    )
    .into_bytes()
}

/// The `n` of each line of a log.
fn numbers(log: &[u8]) -> Vec<u64> {
    common::lines(log)
        .iter()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_slice(l).unwrap();
            v["n"].as_u64().unwrap()
        })
        .collect()
}

fn run(args: &[&str], file: &Path) -> std::process::Output {
    common::run_cmd(bin().args(args).arg(file), b"")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Issue 47.1: two 2-line zstd frames joined with `cat` hold 4 lines; `--compact` reported 2
/// and left 2.
#[test]
fn compact_keeps_every_frame_of_a_multi_frame_zstd_log() {
    let dir = tempdir("compressed-compact-frames");
    let log = dir.join("agent.jsonl.1.zst");
    std::fs::write(&log, [zst(&two_lines(1)), zst(&two_lines(3))].concat()).unwrap();
    let out = run(&["--compact"], &log);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("4 lines"),
        "{}",
        text(&out.stdout)
    );
    let after = decoded(&std::fs::read(&log).unwrap());
    assert_eq!(numbers(&after), [1, 2, 3, 4]);
    assert!(after.len() < 40_000, "compacted: {} bytes", after.len());
}

/// Issue 47.1: `--view` and `--summary` saw only the first frame; the second frame's final
/// result went unseen.
#[test]
fn view_and_summary_read_every_frame() {
    let dir = tempdir("compressed-view-frames");
    let first =
        b"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\",\"model\":\"m\"}\n\
                  {\"type\":\"assistant\",\"n\":2}\n";
    let second = b"{\"type\":\"assistant\",\"n\":3}\n\
                   {\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"done\",\"num_turns\":3}\n";
    let plain = dir.join("l.jsonl");
    std::fs::write(&plain, [&first[..], &second[..]].concat()).unwrap();
    let frames = dir.join("l.jsonl.zst");
    std::fs::write(&frames, [zst(first), zst(second)].concat()).unwrap();
    let members = dir.join("l.jsonl.gz");
    std::fs::write(&members, [gz(first), gz(second)].concat()).unwrap();
    for args in [&["--view", "--format", "jsonl"][..], &["--summary"][..]] {
        let want = run(args, &plain);
        assert!(want.status.success(), "{}", text(&want.stderr));
        for file in [&frames, &members] {
            let got = run(args, file);
            assert!(
                got.status.success(),
                "{args:?} {file:?}: {}",
                text(&got.stderr)
            );
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            assert_eq!(
                text(&got.stdout).replace(&name, "l.jsonl"),
                text(&want.stdout),
                "{args:?} of {file:?}"
            );
        }
    }
    let view = run(&["--view", "--format", "jsonl"], &frames);
    assert_eq!(
        common::lines(&view.stdout).len(),
        4,
        "{}",
        text(&view.stdout)
    );
}

/// Issue 47.1: a zstd file that starts with a skippable frame (pzstd's output) was printed as
/// a `non_json` record of binary.
#[test]
fn a_leading_skippable_frame_is_zstd() {
    let dir = tempdir("compressed-skippable");
    let log = dir.join("l.jsonl.zst");
    let lines = [two_lines(1), two_lines(3)].concat();
    std::fs::write(
        &log,
        [
            skippable(0, &[0u8; 4]),
            zst(&two_lines(1)),
            skippable(7, b"x"),
            zst(&two_lines(3)),
        ]
        .concat(),
    )
    .unwrap();
    let view = run(&["--view", "--format", "jsonl"], &log);
    assert!(view.status.success(), "{}", text(&view.stderr));
    assert_eq!(
        common::lines(&view.stdout).len(),
        4,
        "{}",
        text(&view.stdout)
    );
    assert!(
        !text(&view.stdout).contains("non_json"),
        "{}",
        text(&view.stdout)
    );
    let out = run(&["--compact"], &log);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        numbers(&decoded(&std::fs::read(&log).unwrap())),
        numbers(&lines)
    );
}

/// Varied text, so that the compressed stream is long enough to cut in half.
fn varied_log() -> Vec<u8> {
    (0..3000u32)
        .map(|i| format!("{{\"n\":{i},\"h\":{}}}\n", i.wrapping_mul(2_654_435_761)))
        .collect::<String>()
        .into_bytes()
}

/// A stream cut short and a damaged one give different errors that name the file, from
/// `--view`, `--summary` and `--compact`, which leaves the file as it was.
#[test]
fn truncated_and_damaged_streams_are_told_apart() {
    let dir = tempdir("compressed-broken");
    let data = varied_log();
    for (ext, whole) in [("zst", zst(&data)), ("gz", gz(&data))] {
        let cut = whole[..whole.len() / 2].to_vec();
        let mut bad = whole.clone();
        for b in &mut bad[20..60] {
            *b ^= 0x5a;
        }
        for (kind, bytes) in [("truncated", cut), ("damaged", bad)] {
            let file = dir.join(format!("{kind}.jsonl.{ext}"));
            std::fs::write(&file, &bytes).unwrap();
            for args in [&["--view"][..], &["--summary"][..], &["--compact"][..]] {
                let out = run(args, &file);
                let err = text(&out.stderr);
                assert!(!out.status.success(), "{args:?} {file:?}: {err}");
                let name = format!("{kind}.jsonl.{ext}");
                let other = if kind == "truncated" {
                    "damaged"
                } else {
                    "truncated"
                };
                let said = format!(
                    "{} stream is {kind}",
                    if ext == "zst" { "zstd" } else { "gzip" }
                );
                assert!(
                    err.contains(&name) && err.contains(&said),
                    "{args:?}: {err}"
                );
                assert!(!err.contains(other), "{args:?}: {err}");
            }
            assert_eq!(std::fs::read(&file).unwrap(), bytes, "left as it was");
        }
    }
}

/// The compressed forms a rotated log comes in.
fn forms(log: &[u8], cut: &[usize]) -> Vec<(&'static str, Vec<u8>)> {
    // The log in pieces at whole lines (`cut` gives line counts), for frames and members.
    let lines: Vec<&[u8]> = log.split_inclusive(|&b| b == b'\n').collect();
    let mut pieces: Vec<Vec<u8>> = Vec::new();
    let mut at = 0;
    for &k in cut {
        let end = (at + k).min(lines.len());
        pieces.push(lines[at..end].concat());
        at = end;
    }
    pieces.push(lines[at..].concat());
    let each = |f: fn(&[u8]) -> Vec<u8>| pieces.iter().flat_map(|p| f(p)).collect::<Vec<u8>>();
    vec![
        ("plain", log.to_vec()),
        ("gzip", gz(log)),
        ("gzip members", each(gz)),
        ("zstd", zst(log)),
        ("zstd frames", each(zst)),
        (
            "zstd skippable",
            [skippable(3, b"pzstd"), each(zst)].concat(),
        ),
    ]
}

/// A log line of kind `kind` (0..6) numbered `n`, of about `len` bytes of text: short or long,
/// flat or nested, ended by `\n` or `\r\n`; kind 6 is a blank line (`\n` or `\r\n`).
fn line_of(kind: u8, n: usize, len: usize) -> String {
    let text: String = (0..len)
        .map(|i| (b'a' + (i * 7 + n) as u8 % 26) as char)
        .collect();
    let body = match kind % 3 {
        0 => format!("{{\"type\":\"user\",\"n\":{n},\"output\":\"{text}\"}}"),
        1 => format!(
            "{{\"type\":\"user\",\"n\":{n},\"message\":{{\"content\":[{{\"type\":\"tool_result\",\
             \"tool_use_id\":\"t{n}\",\"content\":\"{text}\"}}]}}}}"
        ),
        _ => format!(
            "{{\"type\":\"assistant\",\"n\":{n},\"items\":[{}]}}",
            vec!["1"; len / 2].join(",")
        ),
    };
    match kind {
        0..=2 => format!("{body}\n"),
        3..=5 => format!("{body}\r\n"),
        _ if len.is_multiple_of(2) => "\n".to_string(),
        _ => "\r\n".to_string(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// `--compact` of random logs in every compressed form (plain; gzip in one member and in
    /// several; zstd in one frame, in several, after a skippable frame): every line of the
    /// compacted log is what the engine makes of its input line (the engine's log of the decoded
    /// input), so none is lost and the count is the input's, blank lines left out; the form is
    /// kept. A plain log's unfinished last line is copied as it is; a compressed log's is a line.
    #[test]
    fn compact_keeps_every_line_in_every_form(
        kinds in proptest::collection::vec(
            (0u8..7, prop_oneof![0usize..40, 3_000usize..30_000]), 1..8),
        cut in proptest::collection::vec(0usize..4, 0..4),
        unfinished in any::<bool>(),
    ) {
        let mut log: Vec<u8> = kinds
            .iter()
            .enumerate()
            .map(|(n, &(kind, len))| line_of(kind, n, len))
            .collect::<String>()
            .into_bytes();
        if unfinished && log.ends_with(b"\n") && log.len() > 2 {
            log.pop();
            if log.ends_with(b"\r") {
                log.pop();
            }
        }
        let config = common::config(2048);
        let whole = log.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let dir = tempdir("compressed-prop");
        for (form, bytes) in forms(&log, &cut) {
            let file = dir.join("l.jsonl.1");
            std::fs::write(&file, &bytes).unwrap();
            let out = run(&["--compact", "-b", "2048"], &file);
            prop_assert!(out.status.success(), "{form}: {}", text(&out.stderr));
            let after_bytes = std::fs::read(&file).unwrap();
            if text(&out.stdout).contains(", unchanged") {
                prop_assert_eq!(&after_bytes, &bytes, "{} said unchanged", form);
                continue;
            }
            prop_assert_eq!(
                after_bytes.starts_with(&[0x1f, 0x8b]),
                form.starts_with("gzip"),
                "{} stays in its form", form
            );
            let after = decoded(&after_bytes);
            let want = if form == "plain" {
                [common::log_of(&log[..whole], &config, 0), log[whole..].to_vec()].concat()
            } else {
                common::log_of(&log, &config, 0)
            };
            prop_assert!(after == want, "{}: {} != {}", form, common::show(&after), common::show(&want));
            let (before, got) = (common::input_lines(&log), common::lines(&after));
            prop_assert_eq!(got.len(), before.len(), "{}: line count", form);
        }
    }
}

/// `smart-tee mcp --root root` asked `calls` (tool, arguments) in turn, stdin then closed: the
/// text of each answer (blocks joined) and whether it is an error result.
fn mcp_calls(root: &Path, calls: &[(&str, serde_json::Value)]) -> Vec<(String, bool)> {
    let mut input = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "0"}}})
    .to_string();
    input.push_str("\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    for (i, (tool, args)) in calls.iter().enumerate() {
        let call = serde_json::json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
            "params": {"name": tool, "arguments": args}});
        input.push_str(&format!("{call}\n"));
    }
    let out = common::run_cmd(bin().arg("mcp").arg("--root").arg(root), input.as_bytes());
    let mut answers = vec![(String::new(), true); calls.len()];
    for line in common::lines(&out.stdout) {
        let v: serde_json::Value = serde_json::from_slice(line).unwrap();
        let Some(id) = v["id"].as_u64().filter(|&i| i > 0) else {
            continue;
        };
        let result = &v["result"];
        assert!(result.is_object(), "not a result: {v}");
        let text = result["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["text"].as_str().unwrap())
            .collect::<Vec<_>>()
            .join("\n");
        answers[id as usize - 1] = (text, result["isError"] == true);
    }
    answers
}

/// Issue 47.1: MCP `read_log` and `log_summary` read every zstd frame and gzip member (they
/// went through the one-frame decoder of `--view`).
#[test]
fn mcp_read_log_reads_every_frame_and_member() {
    let dir = tempdir("compressed-mcp-frames");
    let frames = [zst(&two_lines(1)), zst(&two_lines(3))].concat();
    std::fs::write(dir.join("a.jsonl.zst"), &frames).unwrap();
    std::fs::write(
        dir.join("b.jsonl.1.zst"),
        [skippable(0, b"pzstd"), frames.clone()].concat(),
    )
    .unwrap();
    std::fs::write(
        dir.join("c.jsonl.gz"),
        [gz(&two_lines(1)), gz(&two_lines(3))].concat(),
    )
    .unwrap();
    let mut calls = Vec::new();
    for name in ["a.jsonl.zst", "b.jsonl.1.zst", "c.jsonl.gz"] {
        calls.push((
            "read_log",
            serde_json::json!({"path": name, "format": "jsonl"}),
        ));
        calls.push(("read_log", serde_json::json!({"path": name, "tail": 1})));
    }
    let answers = mcp_calls(&dir, &calls);
    for (k, ((text, error), (_, args))) in answers.iter().zip(&calls).enumerate() {
        assert!(!error, "{args}: {text}");
        if k % 2 == 0 {
            let ns: Vec<u64> = text
                .lines()
                .filter(|l| l.starts_with('{'))
                .map(|l| {
                    serde_json::from_str::<serde_json::Value>(l).unwrap()["n"]
                        .as_u64()
                        .unwrap()
                })
                .collect();
            assert_eq!(ns, [1, 2, 3, 4], "{args}: {text}");
        } else {
            assert!(text.starts_with("#4 assistant"), "{args}: {text}");
        }
    }
}

/// A compressed log is finished, and `--compact` takes a last line without a newline as a
/// line; `--view`, `--view --tail`, `--summary` and MCP `read_log` left it out as a line in
/// progress (so compacting a log changed what they showed).
#[test]
fn a_compressed_logs_last_line_without_a_newline_is_read_by_every_reader() {
    let dir = tempdir("compressed-last-line");
    let lines = b"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\",\"model\":\"m\",\"n\":1}\n\
        {\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"done\",\"n\":2}";
    let first = lines.iter().position(|&b| b == b'\n').unwrap() + 1;
    let long = format!(
        "{{\"type\":\"user\",\"n\":1,\"output\":\"{}\"}}",
        "z".repeat(9 << 20)
    );
    let files = [
        ("l.jsonl.zst", zst(lines)),
        ("l.jsonl.gz", gz(lines)),
        (
            "frames.jsonl.zst",
            [zst(&lines[..first]), zst(&lines[first..])].concat(),
        ),
        ("long.jsonl.zst", zst(long.as_bytes())),
    ];
    for (name, bytes) in &files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    for (name, _) in &files[..3] {
        let file = dir.join(name);
        let view = run(&["--view", "--format", "jsonl"], &file);
        assert!(view.status.success(), "{}", text(&view.stderr));
        assert_eq!(
            numbers(&view.stdout),
            [1, 2],
            "{name}: {}",
            text(&view.stdout)
        );
        let tail = run(&["--view", "--tail", "1"], &file);
        assert!(
            text(&tail.stdout).starts_with("#2 result"),
            "{name}: {}",
            text(&tail.stdout)
        );
        let summary = run(&["--summary", "--format", "json"], &file);
        let v: serde_json::Value = serde_json::from_slice(&summary.stdout).unwrap();
        assert_eq!(v["state"], "finished", "{name}: {v}");
    }
    // A last line past the line cap is given as its first bytes, as one in the middle is.
    let view = run(
        &["--view", "--format", "jsonl"],
        &dir.join("long.jsonl.zst"),
    );
    assert_eq!(
        common::lines(&view.stdout).len(),
        1,
        "{}",
        text(&view.stderr)
    );
    let answers = mcp_calls(
        &dir,
        &[(
            "read_log",
            serde_json::json!({"path": "l.jsonl.gz", "tail": 1}),
        )],
    );
    assert!(answers[0].0.starts_with("#2 result"), "{:?}", answers[0]);
}

/// `echo >> a.jsonl.gz`: a stray byte after the last gzip member was reported as a stream cut
/// short; it is damage, and a stream cut inside a member is still a cut.
#[test]
fn stray_bytes_after_a_gzip_member_are_damage_not_a_truncation() {
    let dir = tempdir("compressed-stray");
    let whole = [gz(&two_lines(1)), gz(&two_lines(3))].concat();
    for (name, bytes, said) in [
        (
            "nl.jsonl.gz",
            [&whole[..], b"\n"].concat(),
            "gzip stream is damaged",
        ),
        (
            "junk.jsonl.gz",
            [&whole[..], b"hello"].concat(),
            "gzip stream is damaged",
        ),
        (
            "cut.jsonl.gz",
            whole[..whole.len() - 3].to_vec(),
            "gzip stream is truncated",
        ),
    ] {
        let file = dir.join(name);
        std::fs::write(&file, &bytes).unwrap();
        for args in [&["--view"][..], &["--summary"][..], &["--compact"][..]] {
            let out = run(args, &file);
            let err = text(&out.stderr);
            assert!(!out.status.success(), "{args:?} {name}");
            assert!(
                err.contains(name) && err.contains(said),
                "{args:?} {name}: {err}"
            );
        }
        assert_eq!(std::fs::read(&file).unwrap(), bytes, "left as it was");
    }
}

/// `--compact` in a directory it may not write to said only "Permission denied"; it says it
/// cannot create the compacted copy there, and leaves the log as it was. (As root, which
/// writes anywhere, the compaction runs as the user nobody.)
#[test]
fn compact_in_a_directory_it_cannot_write_says_why() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let dir = tempdir("compressed-read-only-dir");
    let ro = dir.join("ro");
    std::fs::create_dir(&ro).unwrap();
    for p in [dir.as_path(), &ro] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let log = ro.join("l.jsonl.gz");
    let bytes = gz(&two_lines(1));
    std::fs::write(&log, &bytes).unwrap();
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let mut cmd = bin();
    cmd.arg("--compact").arg(&log);
    use std::os::unix::fs::MetadataExt;
    if std::fs::metadata("/proc/self").unwrap().uid() == 0 {
        cmd.uid(65534).gid(65534);
    }
    let out = common::run_cmd(&mut cmd, b"");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("l.jsonl.gz") && err.contains("cannot create the compacted copy"),
        "{err}"
    );
    assert_eq!(std::fs::read(&log).unwrap(), bytes);
}

/// `--view --follow` of a compressed log read the bytes appended to it (`zstd -c >> l.zst`) as
/// plain text, and printed the frame's compressed bytes as `non_json` records. It reads the new
/// lines decoded, and waits for a frame that is still being written.
#[test]
fn follow_reads_frames_appended_to_a_compressed_log() {
    use crate::view::{follow, next};
    let dir = tempdir("compressed-follow");
    let log = dir.join("l.jsonl.zst");
    std::fs::write(&log, zst(&two_lines(1))).unwrap();
    let (mut child, rx) = follow(&log);
    assert!(next(&rx).contains("\"n\":1"));
    assert!(next(&rx).contains("\"n\":2"));
    let frame = zst(&two_lines(3));
    let append = |bytes: &[u8]| {
        let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        f.write_all(bytes).unwrap();
    };
    // A frame in two writes: its first half is a frame being written, not damage.
    append(&frame[..frame.len() / 2]);
    std::thread::sleep(std::time::Duration::from_millis(500));
    append(&frame[frame.len() / 2..]);
    let (third, fourth) = (next(&rx), next(&rx));
    assert!(third.contains("\"n\":3"), "{third}");
    assert_eq!(fourth, "{\"type\":\"assistant\",\"n\":4}");
    child.kill().unwrap();
    common::wait_timeout(&mut child);
}

/// A zstd log written with a window past 128 MiB (`zstd --long=30` of a stream), which `zstd
/// -d` also refuses without `--long=31`, was called damaged; the refusal says what it needs.
#[test]
fn a_zstd_log_with_a_long_window_is_refused_as_such_not_as_damaged() {
    let dir = tempdir("compressed-long-window");
    let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
    enc.set_parameter(zstd::stream::raw::CParameter::WindowLog(30))
        .unwrap();
    enc.write_all(&two_lines(1)).unwrap();
    let bytes = enc.finish().unwrap();
    let log = dir.join("l.jsonl.zst");
    std::fs::write(&log, &bytes).unwrap();
    for args in [&["--view"][..], &["--summary"][..], &["--compact"][..]] {
        let out = run(args, &log);
        let err = text(&out.stderr);
        assert!(!out.status.success(), "{args:?}: {err}");
        assert!(
            err.contains("l.jsonl.zst") && err.contains("--long=31") && !err.contains("damaged"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(std::fs::read(&log).unwrap(), bytes, "left as it was");
}
