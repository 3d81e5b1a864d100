//! `--view --format html`: every golden and real log renders a page of checked structure
//! (balanced tags of a known set, the policy, one script, no fetch, no handler, no controls),
//! whose event count is `--view`'s; a hostile log's payloads are shown escaped, never active;
//! the page's byte bound holds on a large log and says what it left out; a cut event offers its
//! original from the archive.

use std::path::{Path, PathBuf};

use crate::common::{self, bin, corpus_files, run_cmd};

/// Elements the page may hold.
const ELEMENTS: &[&str] = &[
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "header",
    "h1",
    "small",
    "dl",
    "dt",
    "dd",
    "ul",
    "li",
    "div",
    "figure",
    "figcaption",
    "svg",
    "line",
    "polyline",
    "text",
    "rect",
    "nav",
    "label",
    "input",
    "span",
    "select",
    "option",
    "output",
    "main",
    "a",
    "time",
    "b",
    "details",
    "summary",
    "pre",
    "p",
    "code",
    "script",
    // A message's Markdown (html_md.rs).
    "h4",
    "h5",
    "h6",
    "ol",
    "em",
    "strong",
    "del",
    "u",
    "blockquote",
    "table",
    "thead",
    "tr",
    "th",
    "td",
    "hr",
    "br",
];
/// Elements without an end tag.
const VOID: &[&str] = &["meta", "input", "hr", "br"];

fn html(args: &[&str], log: &Path) -> String {
    let out = run_cmd(
        bin()
            .args(["--view", "--format", "html"])
            .args(args)
            .arg(log),
        b"",
    );
    assert!(
        out.status.success(),
        "{}: {}",
        log.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("the page is UTF-8")
}

/// Events as `--view` counts them: the lines `--view --format jsonl` prints.
fn view_count(args: &[&str], log: &Path) -> u64 {
    let out = run_cmd(
        bin()
            .args(["--view", "--format", "jsonl"])
            .args(args)
            .arg(log),
        b"",
    );
    assert!(out.status.success());
    out.stdout.iter().filter(|&&b| b == b'\n').count() as u64
}

/// The value of `attr="…"` on the first tag that has it.
fn attr(page: &str, name: &str) -> Option<String> {
    let at = page.find(&format!(" {name}=\""))? + name.len() + 3;
    Some(page[at..at + page[at..].find('"')?].to_string())
}

/// What the structure check found.
struct Page {
    events: u64,
    rows: u64,
    script: String,
}

/// Checks a page's structure and safety; returns its counts and its script's text.
fn check(page: &str, what: &str) -> Page {
    assert!(page.starts_with("<!DOCTYPE html>\n"), "{what}");
    let csp = page
        .find("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; ")
        .unwrap_or_else(|| panic!("{what}: no policy"));
    assert!(csp < page.find("<style>").unwrap(), "{what}: policy first");
    let policy = attr(page, "content").unwrap();
    assert!(
        policy.contains("script-src 'sha256-") && policy.contains("style-src 'sha256-"),
        "{what}: {policy}"
    );
    assert!(!policy.contains("unsafe"), "{what}: {policy}");
    assert_eq!(
        page.to_ascii_lowercase().matches("<script").count(),
        1,
        "{what}"
    );
    // No control, C1, bidi or zero-width character: log text shows them as escapes.
    if let Some(c) = page.chars().find(|&c| {
        (c.is_control() && c != '\n') || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200b}'..='\u{200f}')
    }) {
        panic!("{what}: raw character {c:?} in the page");
    }
    let mut stack: Vec<&str> = Vec::new();
    let mut script = String::new();
    let mut rest = page;
    while let Some(lt) = rest.find('<') {
        rest = &rest[lt + 1..];
        if let Some(r) = rest.strip_prefix("!DOCTYPE html>") {
            rest = r;
            continue;
        }
        let gt = rest
            .find('>')
            .unwrap_or_else(|| panic!("{what}: unclosed tag"));
        let tag = &rest[..gt];
        rest = &rest[gt + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack.pop();
            assert_eq!(open, Some(name), "{what}: </{name}> closes {open:?}");
            continue;
        }
        let self_closing = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let (name, attrs) = tag.split_once(' ').unwrap_or((tag, ""));
        assert!(ELEMENTS.contains(&name), "{what}: element <{name}>");
        check_attrs(attrs, what);
        if name == "script" || name == "style" {
            let end = rest
                .find(&format!("</{name}>"))
                .unwrap_or_else(|| panic!("{what}: <{name}> not closed"));
            if name == "script" {
                script = rest[..end].to_string();
            }
            rest = &rest[end + name.len() + 3..];
            continue;
        }
        if !self_closing && !VOID.contains(&name) {
            stack.push(name);
        }
    }
    assert!(stack.is_empty(), "{what}: unclosed {stack:?}");
    let events: u64 = attr(page, "data-events").unwrap().parse().unwrap();
    let shown: u64 = attr(page, "data-shown").unwrap().parse().unwrap();
    let rows = page.matches("<div class=\"ev ").count() as u64;
    assert_eq!(rows, shown, "{what}");
    match attr(page, "data-omitted") {
        Some(n) => assert_eq!(n.parse::<u64>().unwrap(), events - rows, "{what}"),
        None => assert_eq!(rows, events, "{what}: rows left out without a word"),
    }
    assert!(page.contains(&format!("<dd id=\"events\">{events}, {rows} shown</dd>")));
    Page {
        events,
        rows,
        script,
    }
}

/// Attributes: quoted values, no handler, no URL but the page's own anchors.
fn check_attrs(attrs: &str, what: &str) {
    let mut rest = attrs.trim();
    while !rest.is_empty() {
        let end = rest.find(['=', ' ']).unwrap_or(rest.len());
        let name = &rest[..end];
        assert!(!name.starts_with("on"), "{what}: handler attribute {name}");
        assert!(
            !matches!(name, "src" | "srcset" | "action" | "formaction" | "style"),
            "{what}: attribute {name}"
        );
        rest = &rest[end..];
        if let Some(r) = rest.strip_prefix("=\"") {
            let close = r.find('"').expect("a quoted value ends");
            let value = &r[..close];
            assert!(!value.contains('<'), "{what}: < in {name}={value}");
            if name == "href" {
                assert!(value.starts_with('#'), "{what}: href={value}");
            }
            assert!(
                !value.to_ascii_lowercase().contains("javascript:"),
                "{what}: {name}={value}"
            );
            rest = &r[close + 1..];
        } else {
            assert!(!rest.starts_with('='), "{what}: unquoted value of {name}");
        }
        rest = rest.trim_start();
    }
}

fn golden_logs() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut logs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path().join("log.jsonl"))
        .filter(|p| p.is_file())
        .collect();
    logs.sort();
    assert!(logs.len() >= 30, "the golden set: {}", logs.len());
    logs
}

fn hostile() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/report/hostile.jsonl")
}

#[test]
fn every_golden_and_real_log_gives_a_checked_page_with_every_event() {
    let mut scripts = Vec::new();
    for log in golden_logs().into_iter().chain(corpus_files()) {
        let what = log.display().to_string();
        let page = html(&[], &log);
        let p = check(&page, &what);
        assert_eq!(p.events, view_count(&[], &log), "{what}");
        assert_eq!(p.rows, p.events, "{what}: a small log is shown whole");
        scripts.push(p.script);
    }
    // The script holds no log data: it is the same on every page.
    scripts.dedup();
    assert_eq!(scripts.len(), 1);
}

#[test]
fn a_hostile_log_is_shown_escaped_and_stays_inert() {
    let log = hostile();
    let page = html(&[], &log);
    let p = check(&page, "hostile");
    assert_eq!(p.events, view_count(&[], &log));
    // Shown, as text.
    for shown in [
        "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;",
        "&lt;img src=x onerror=alert(10)&gt;",
        "&lt;svg onload=alert(5)",
        "data-kind=\"&quot;&gt;&lt;script&gt;alert(11)&lt;/script&gt;\"",
        "\\e[2J\\e]0;pwned\\x07",
        "\\u{202e}gnp.exe",
        // A colour is a styled span; the C1 control after it stays visible.
        "<span class=\"t31\"> raw ESC \\u{9b} C1",
        "&lt;/style&gt;&lt;style&gt;",
    ] {
        assert!(page.contains(shown), "not shown escaped: {shown}");
    }
    // A hostile file name, in the title, the header and the command of what was left out.
    let dir = common::tempdir("report-hostile-name");
    let named = dir.join("<svg onload=alert(1)> \"'&.jsonl");
    std::fs::copy(&log, &named).unwrap();
    let named_page = html(&["--max-tokens", "100"], &named);
    check(&named_page, "hostile name");
    assert!(
        named_page.contains("<title>&lt;svg onload=alert(1)&gt; &quot;&#39;&amp;.jsonl</title>")
    );
    // Images as descriptors, never their data.
    assert!(!page.contains("iVBORw0KGgoAAAA"), "image data in the page");
    assert!(
        page.contains("[BASE64 OMITTED: 3,011 bytes]"),
        "no image descriptor"
    );
}

#[test]
fn calls_pair_with_results_and_subagents_sit_under_their_call() {
    let page = html(&[], &hostile());
    let row = |n: u32| {
        let at = page.find(&format!("id=\"e0-{n}\"")).unwrap();
        let start = page[..at].rfind("<div").unwrap();
        page[start..start + page[start..].find("</div>").unwrap()].to_string()
    };
    // Line 3 calls toolu_1; line 6 is its failed result; lines 4-5 run under it.
    assert!(
        row(3).contains("href=\"#e0-6\" class=\"bad\">→ result #6"),
        "{}",
        row(3)
    );
    assert!(
        row(3).starts_with("<div class=\"ev k-msg err\""),
        "{}",
        row(3)
    );
    assert!(row(6).contains("href=\"#e0-3\">↳ call #3"), "{}", row(6));
    assert!(
        row(4).starts_with("<div class=\"ev k-msg d1\""),
        "{}",
        row(4)
    );
    assert!(row(5).contains(" d1\""), "{}", row(5));
    assert!(row(5).contains("↳ call #4"), "{}", row(5));
    assert!(!row(2).contains(" d1"), "{}", row(2));
}

#[test]
fn filters_and_head_tail_keep_the_count_of_the_view() {
    let log = hostile();
    for args in [&["--errors"][..], &["--type", "user"], &["--grep", "alert"]] {
        let page = html(args, &log);
        let p = check(&page, &format!("{args:?}"));
        assert_eq!(p.events, view_count(args, &log), "{args:?}");
        assert_eq!(p.rows, p.events);
    }
    let page = html(&["--tail", "3"], &log);
    let p = check(&page, "--tail 3");
    assert_eq!((p.events, p.rows), (view_count(&[], &log), 3));
    assert!(page.contains("(--tail 3)"));
    assert!(page.contains("id=\"e0-10\""), "the last event is shown");
    let page = html(&["--head", "2"], &log);
    let p = check(&page, "--head 2");
    assert_eq!(p.rows, 2);
    assert!(page.contains("id=\"e0-1\""), "the first event is shown");
}

/// A synthetic log of `n` events of about `pad` bytes each.
fn large_log(dir: &Path, n: usize, pad: usize) -> PathBuf {
    use std::io::Write;
    let log = dir.join("large.jsonl");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&log).unwrap());
    for i in 1..=n {
        let kind = if i % 7 == 0 { "user" } else { "assistant" };
        writeln!(
            f,
            r#"{{"type":"{kind}","timestamp":"2026-03-01T10:{:02}:{:02}Z","message":{{"content":[{{"type":"text","text":"event {i} {}"}}],"usage":{{"input_tokens":3,"output_tokens":2}}}}}}"#,
            (i / 60) % 60,
            i % 60,
            "word ".repeat(pad / 5)
        )
        .unwrap();
    }
    f.flush().unwrap();
    log
}

#[test]
fn the_page_bound_holds_on_a_large_log_and_says_what_it_left_out() {
    let dir = common::tempdir("report-large");
    let n = 20_000;
    let log = large_log(&dir, n, 400);
    let page = html(&["--max-tokens", "20000"], &log);
    assert!(page.len() <= 60_000, "{} bytes", page.len());
    let p = check(&page, "--max-tokens 20000");
    assert_eq!(p.events, n as u64);
    assert!(p.rows > 5 && p.rows < p.events, "{} rows", p.rows);
    // The first and the last events are shown, the middle is counted.
    assert!(page.contains("id=\"e0-1\"") && page.contains(&format!("id=\"e0-{n}\"")));
    let left = p.events - p.rows;
    assert!(
        page.contains(&format!(
            "… {left} events left out here to keep the page within"
        )),
        "no word of what was left out"
    );
    assert!(page.contains("smart-tee --view --line "));
    // Without --max-tokens, the default bound: 8 MiB.
    let log = large_log(&dir, 6_000, 3000);
    let page = html(&[], &log);
    assert!(page.len() <= 8 << 20, "{} bytes", page.len());
    let p = check(&page, "default bound");
    assert!(p.rows < p.events && p.events == 6_000);
    assert!(page.contains("(the default bound)"));
}

#[test]
fn a_cut_event_offers_its_original_from_the_archive() {
    let dir = common::tempdir("report-archive");
    let log = dir.join("run.jsonl");
    let long = format!(
        "start {} MIDDLE-TOKEN {} end",
        "a".repeat(3000),
        "b".repeat(3000)
    );
    let input = format!(
        "{}\n{}\n",
        r#"{"type":"system","subtype":"init","session_id":"s"}"#,
        serde_json::json!({"type":"assistant","message":{"content":[{"type":"text","text": long}]}})
    );
    let archive = format!("{}.orig.zst", log.display());
    let out = run_cmd(
        bin().args(["-b", "1024", "--archive", &archive]).arg(&log),
        input.as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(!logged.contains("MIDDLE-TOKEN"), "the log line is cut");
    let page = html(&[], &log);
    check(&page, "archived");
    assert_eq!(page.matches("<details class=\"orig\">").count(), 1);
    assert!(page.contains("MIDDLE-TOKEN"), "the original is offered");
    // Without the archive, no original.
    std::fs::remove_file(&archive).unwrap();
    let page = html(&[], &log);
    assert!(!page.contains("MIDDLE-TOKEN") && !page.contains("class=\"orig\""));
}

#[test]
fn html_is_refused_with_summary_and_follow() {
    for extra in ["--summary", "--follow"] {
        let out = run_cmd(
            bin()
                .args(["--view", "--format", "html", extra])
                .arg(hostile()),
            b"",
        );
        assert!(!out.status.success(), "{extra}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("--format html"));
    }
}

/// The least page (32 KiB) holds its frame whatever the summary says: long values of
/// characters that escape to six bytes, many tools, many errors.
#[test]
fn the_least_page_holds_a_summary_of_long_hostile_strings() {
    use std::io::Write;
    let dir = common::tempdir("report-least");
    let log = dir.join(format!("{}.jsonl", "q".repeat(200)));
    let mut f = std::fs::File::create(&log).unwrap();
    let quotes = "\"'<>&".repeat(1000);
    let init = serde_json::json!({"type":"system","subtype":"init","session_id": quotes,
        "model": quotes, "claude_code_version": quotes});
    writeln!(f, "{init}").unwrap();
    for i in 0..600 {
        let call = serde_json::json!({"type":"assistant","timestamp": format!("2026-03-01T10:{:02}:00Z", i % 60),
            "message":{"content":[{"type":"tool_use","id": format!("t{i}"),"name": format!("{i}{quotes}"),"input":{}}],
            "usage":{"input_tokens": 5, "output_tokens": 5}}});
        writeln!(f, "{call}").unwrap();
        let failed = serde_json::json!({"type":"user","message":{"content":[{"type":"tool_result",
            "tool_use_id": format!("t{i}"),"is_error":true,"content": quotes}]}});
        writeln!(f, "{failed}").unwrap();
    }
    let end = serde_json::json!({"type":"result","subtype":"error_during_execution","is_error":true,
        "result": quotes, "session_id": quotes, "total_cost_usd": 1.5});
    writeln!(f, "{end}").unwrap();
    drop(f);
    let page = html(&["--max-tokens", "100"], &log);
    assert!(page.len() <= 32 << 10, "{} bytes", page.len());
    let p = check(&page, "least page");
    assert_eq!(p.events, 1202);
}

/// The command in the line of what was left out wrote the log's path with its controls raw
/// (ESC, U+202E and a newline reached the page), and kept room for 6 bytes a byte of it where
/// a quote takes 16: a path of quotes gave a 69 KB page under a 32 KiB bound. Then it wrote
/// them made visible inside `'…'`, a command naming another file (found by the audit): it is
/// bash's `$'…'` now.
#[test]
fn a_log_path_of_quotes_and_controls_keeps_the_page_inert_and_within_its_bound() {
    let dir = common::tempdir("report-path");
    let hostile = "a\u{1b}[2J\u{202e}b\nc.jsonl";
    let log = dir.join(hostile);
    std::fs::rename(large_log(&dir, 2000, 100), &log).unwrap();
    let page = html(&["--max-tokens", "100"], &log);
    check(&page, "a path of controls");
    assert!(page.len() <= 32 << 10, "{} bytes", page.len());
    // The command names the log: bash reads the word as its path (an earlier page wrote
    // `'a\e[2J…b\nc.jsonl'`, which names another file).
    let command = page
        .split("read them with <code>")
        .nth(1)
        .and_then(|c| c.split("</code>").next())
        .expect("a command for the events left out");
    let word = command
        .rsplit_once(' ')
        .unwrap()
        .1
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    assert!(
        word.starts_with("$'") && word.ends_with("/a\\x1b[2J\\U0000202eb\\x0ac.jsonl'"),
        "{command}"
    );
    let named = common::run_cmd(
        std::process::Command::new("bash").args(["-c", &format!("printf %s {word}")]),
        b"",
    );
    assert_eq!(
        named.stdout,
        log.as_os_str().as_encoded_bytes(),
        "bash reads {word} as another name"
    );
    // A path of quotes: each is `'\''` in the command, 16 bytes escaped.
    let mut deep = dir.clone();
    for _ in 0..14 {
        deep.push("'".repeat(200));
    }
    std::fs::create_dir_all(&deep).unwrap();
    let log = deep.join("run.jsonl");
    std::fs::rename(large_log(&dir, 2000, 100), &log).unwrap();
    let page = html(&["--max-tokens", "100"], &log);
    check(&page, "a path of quotes");
    assert!(page.len() <= 32 << 10, "{} bytes", page.len());
    assert!(
        page.contains("; read them with <code>smart-tee --view --line ")
            && page.contains(" LOG</code>")
    );
}

/// Each original is found by reading the log up to its line, and a look-up that failed did
/// not count: with an archive that no longer matches its log, every cut row read the log (a
/// 63 MB log took 36 s, growing with the square of the log). The first 16 cut rows of the page
/// are looked up, found or not.
#[test]
fn originals_are_looked_up_for_the_first_sixteen_cut_rows_only() {
    let dir = common::tempdir("report-lookups");
    let log = dir.join("run.jsonl");
    let input: String = (1..=40)
        .map(|i| {
            let text = format!("L{i:02} {}", "x".repeat(100_000));
            format!(
                "{}\n",
                serde_json::json!({"type":"assistant","message":{"content":[{"type":"text","text": text}]}})
            )
        })
        .collect();
    let archive = format!("{}.orig.zst", log.display());
    let out = run_cmd(
        bin().args(["-b", "1024", "--archive", &archive]).arg(&log),
        input.as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = html(&[], &log);
    assert_eq!(page.matches("<details class=\"orig\">").count(), 16);
    // Lines 1-20 change in place: the archive's frames that hold them no longer match.
    let mut logged = std::fs::read_to_string(&log).unwrap();
    for i in 1..=20 {
        logged = logged.replacen(&format!("L{i:02} "), &format!("M{i:02} "), 1);
    }
    std::fs::write(&log, logged).unwrap();
    let page = html(&[], &log);
    check(&page, "a stale archive");
    assert_eq!(
        page.matches("class=\"orig\"").count(),
        0,
        "more than 16 look-ups"
    );
    // The rows shown are those looked up: the last ones still match.
    let page = html(&["--line", "23-40"], &log);
    assert!(page.matches("<details class=\"orig\">").count() >= 1);
}

/// A message that answers several calls marked every one of them failed when one result was:
/// each call's link and row follow its own result.
#[test]
fn a_failed_result_marks_only_its_own_call_in_a_message_of_several() {
    let dir = common::tempdir("report-several-results");
    let log = dir.join("run.jsonl");
    let lines = [
        serde_json::json!({"type":"assistant","message":{"content":[
            {"type":"tool_use","id":"A","name":"Read","input":{}}]}}),
        serde_json::json!({"type":"assistant","message":{"content":[
            {"type":"tool_use","id":"B","name":"Bash","input":{}}]}}),
        serde_json::json!({"type":"user","message":{"content":[
            {"type":"tool_result","tool_use_id":"A","content":"fine"},
            {"type":"tool_result","tool_use_id":"B","is_error":true,"content":"boom"}]}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&log, text).unwrap();
    let page = html(&[], &log);
    check(&page, "several results");
    let row = |n: u32| {
        let at = page.find(&format!("id=\"e0-{n}\"")).unwrap();
        let start = page[..at].rfind("<div").unwrap();
        page[start..start + page[start..].find("</div>").unwrap()].to_string()
    };
    assert!(row(1).starts_with("<div class=\"ev k-msg\""), "{}", row(1));
    assert!(
        row(1).contains("<a href=\"#e0-3\">→ result #3</a>"),
        "{}",
        row(1)
    );
    assert!(
        row(2).starts_with("<div class=\"ev k-msg err\""),
        "{}",
        row(2)
    );
    assert!(
        row(2).contains("<a href=\"#e0-3\" class=\"bad\">→ result #3</a>"),
        "{}",
        row(2)
    );
}

/// A piped standard input (`-`) is copied into a temporary file that is removed after: the
/// page was titled with that file's name and told to read the events left out from it, and
/// would look for an archive beside it. It is "standard input", and the command reads `-`.
#[test]
fn standard_input_is_named_so_and_its_command_reads_standard_input() {
    let dir = common::tempdir("report-stdin");
    let log = large_log(&dir, 2000, 100);
    let out = run_cmd(
        bin().args(["--view", "--format", "html", "--max-tokens", "100", "-"]),
        &std::fs::read(&log).unwrap(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = String::from_utf8(out.stdout).unwrap();
    let p = check(&page, "standard input");
    assert_eq!(p.events, 2000);
    assert!(page.contains("<title>standard input</title>"), "the title");
    assert!(
        !page.contains("smart-tee-stdin-"),
        "the temporary file is named"
    );
    assert!(
        page.contains(" -</code>"),
        "the command reads standard input"
    );
}

/// Calls were found in the event as cut for its gist (5 KB): in a message of 30 calls with
/// large inputs only the first 6 were paired. And a row that answers several calls of one row
/// is linked from it once.
#[test]
fn every_call_of_a_large_message_pairs_with_its_result() {
    let dir = common::tempdir("report-large-message");
    let text = serde_json::json!({"type":"text","text": "x".repeat(20_000)});
    let calls: Vec<_> = std::iter::once(text)
        .chain((0..30).map(|i| {
            serde_json::json!({"type":"tool_use","id": format!("toolu_{i:02}"),"name":"Write",
            "input":{"content": "y".repeat(30_000)}})
        }))
        .collect();
    let call = serde_json::json!({"type":"assistant","message":{"content": calls}});
    let result = |i: usize| {
        serde_json::json!({"type":"tool_result","tool_use_id": format!("toolu_{i:02}"),
            "content": "z".repeat(10_000)})
    };
    // One result event per call: 30 links.
    let log = dir.join("separate.jsonl");
    let mut text = format!("{call}\n");
    for i in 0..30 {
        text.push_str(&format!(
            "{}\n",
            serde_json::json!({"type":"user","message":{"content":[result(i)]}})
        ));
    }
    std::fs::write(&log, text).unwrap();
    let page = html(&[], &log);
    check(&page, "separate results");
    for n in 2..=31 {
        assert!(
            page.contains(&format!("<a href=\"#e0-{n}\">→ result #{n}</a>")),
            "#{n}"
        );
        assert!(page.contains(&format!(
            "id=\"e0-{n}\" data-kind=\"user\"><a class=\"n\" href=\"#e0-{n}\">#{n}</a>"
        )));
    }
    assert_eq!(page.matches("↳ call #1</a>").count(), 30);
    // One event answering all 30: one link.
    let log = dir.join("together.jsonl");
    let all: Vec<_> = (0..30).map(result).collect();
    let text = format!(
        "{call}\n{}\n",
        serde_json::json!({"type":"user","message":{"content": all}})
    );
    std::fs::write(&log, text).unwrap();
    let page = html(&[], &log);
    check(&page, "results together");
    assert_eq!(page.matches("→ result #2</a>").count(), 1);
    assert_eq!(page.matches("↳ call #1</a>").count(), 1);
}

/// Counts from the log were added unchecked: tokens of 2^63 panicked a debug build and wrapped
/// to 0 in a release one (the header said "in 0 · out 0"), and so did a turn after
/// `num_turns` of 2^64 - 1. They saturate.
#[test]
fn huge_counts_saturate_instead_of_overflowing() {
    let dir = common::tempdir("report-tokens");
    let log = dir.join("run.jsonl");
    let half = 1u64 << 63;
    let lines = [
        serde_json::json!({"type":"assistant","message":{"content":[],
            "usage":{"input_tokens": half, "cache_read_input_tokens": half, "output_tokens": half}}}),
        serde_json::json!({"type":"assistant","message":{"content":[],
            "usage":{"input_tokens": half, "output_tokens": half}}}),
        serde_json::json!({"type":"result","subtype":"success",
            "usage":{"input_tokens": half, "output_tokens": half}}),
        serde_json::json!({"type":"result","subtype":"success","num_turns": u64::MAX,
            "usage":{"input_tokens": half, "output_tokens": half}}),
        serde_json::json!({"type":"turn.completed"}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&log, text).unwrap();
    let page = html(&[], &log);
    check(&page, "huge tokens");
    let max = "18,446,744,073,709,551,615";
    assert!(
        page.contains(&format!(
            "<dd>in {max} (uncached {max}, cache read 9,223,372,036,854,775,808, write –) out {max}</dd>"
        )),
        "the totals saturate"
    );
    assert!(page.contains("<dt>turns</dt><dd>18446744073709551615</dd>"));
    let out = run_cmd(bin().args(["--view", "--summary"]).arg(&log), b"");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// #50: assistant text read like a table of JSON, and Claude repeats a message's usage on each
/// of its content blocks' events. A message is its text as Markdown, and its tokens show once.
#[test]
fn a_message_reads_as_markdown_with_its_tokens_once() {
    let dir = common::tempdir("report-markdown");
    let log = dir.join("a.jsonl");
    let usage = r#""usage":{"input_tokens":3,"cache_read_input_tokens":1200,"cache_creation_input_tokens":34,"output_tokens":56}"#;
    std::fs::write(
        &log,
        format!(
            "{{\"type\":\"assistant\",\"message\":{{\"id\":\"m1\",\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"## Plan\\n\\n- **read** the `log`\\n- [link](https://example.com)\"}}],{usage}}}}}\n\
             {{\"type\":\"assistant\",\"message\":{{\"id\":\"m1\",\"role\":\"assistant\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Read\",\"input\":{{}}}}],{usage}}}}}\n"
        ),
    )
    .unwrap();
    let page = html(&[], &log);
    check(&page, "markdown");
    assert!(page.contains("<h4>Plan</h4>"), "{page}");
    assert!(page.contains("<li><strong>read</strong> the <code>log</code></li>"));
    assert!(page.contains("<u>link</u>") && !page.contains("example.com\""));
    assert_eq!(page.matches("class=\"tok\"").count(), 1);
    assert!(page.contains("in 1,237 · out 56 tokens"));
}

/// #48: a transcript reports no cost; the page's header marks the estimate as one, with the
/// date of its prices, as `--summary` does.
#[test]
fn an_estimated_cost_is_marked_in_the_header() {
    let log = common::corpus_dir().join("marot__spotter__agent-a2898e3.jsonl");
    let page = html(&[], &log);
    let summary = run_cmd(bin().args(["--summary", log.to_str().unwrap()]), b"");
    let text = String::from_utf8_lossy(&summary.stdout);
    let cost = text.lines().find(|l| l.starts_with("cost")).unwrap();
    assert!(cost.contains("(estimated, prices of "), "{cost}");
    let figure = cost.split_whitespace().nth(1).unwrap();
    assert!(figure.starts_with("~$"), "{cost}");
    assert!(
        page.contains(&format!("{figure} (estimated, prices of ")),
        "{cost}"
    );
}
