//! A generator of realistic Claude Code stream-json, for benchmarks, fuzz seeds and load tests.
//!
//! Shaped after the real corpus: mostly small assistant and tool_use lines; Read results of
//! 1–60 KB with `N→` line-number prefixes; Bash output up to 30 KB; Write inputs; arrays of text
//! blocks; base64 screenshots of 20–600 KB; `tool_use_result` repeating `tool_result`; thinking
//! blocks with long signatures; non-ASCII text and escapes. Deterministic for a given seed.

use std::io::{self, Write};

/// A small, fast, deterministic PRNG (SplitMix64).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..hi` (`lo` when the range is empty).
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        if hi <= lo {
            lo
        } else {
            lo + (self.next_u64() % (hi - lo) as u64) as usize
        }
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }
}

const WORDS: &[&str] = &[
    "the",
    "session",
    "file",
    "test",
    "error",
    "result",
    "agent",
    "value",
    "line",
    "config",
    "return",
    "function",
    "é",
    "naïve",
    "→",
    "données",
    "日本語",
    "🙂",
    "\\\"quoted\\\"",
    "path\\\\to",
    "tab\\there",
    "\\u001b[32mok\\u001b[0m",
    "fn",
    "let",
    "match",
    "Ok(())",
    "{",
    "}",
    "=>",
];

const TOOLS: &[&str] = &["Read", "Bash", "Edit", "Write", "Grep", "Glob", "Task"];

/// Writes JSON-escaped prose of about `len` bytes (escapes included).
fn prose(rng: &mut Rng, len: usize, out: &mut Vec<u8>) {
    let start = out.len();
    while out.len() - start < len {
        let w = WORDS[rng.range(0, WORDS.len())];
        out.extend_from_slice(w.as_bytes());
        out.extend_from_slice(if rng.chance(8) { b"\\n" } else { b" " });
    }
}

/// Writes file content of about `len` bytes as Read shows it: `     N→text\n` lines.
fn numbered_lines(rng: &mut Rng, len: usize, out: &mut Vec<u8>) {
    let start = out.len();
    let mut n = 1;
    while out.len() - start < len {
        out.extend_from_slice(format!("{n:>6}→").as_bytes());
        let width = rng.range(0, 90);
        prose(rng, width, out);
        out.extend_from_slice(b"\\n");
        n += 1;
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64(rng: &mut Rng, len: usize, out: &mut Vec<u8>) {
    out.reserve(len);
    let mut left = len;
    while left > 0 {
        let mut r = rng.next_u64();
        for _ in 0..10.min(left) {
            out.push(B64[(r & 63) as usize]);
            r >>= 6;
            left -= 1;
        }
    }
}

fn id(rng: &mut Rng, prefix: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(prefix.as_bytes());
    let r = rng.next_u64();
    out.extend_from_slice(format!("{r:016x}{:08x}", r >> 20).as_bytes());
}

fn uuid(rng: &mut Rng, out: &mut Vec<u8>) {
    let (a, b) = (rng.next_u64(), rng.next_u64());
    out.extend_from_slice(
        format!(
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xffff,
            b >> 48,
            b & 0xffff_ffff_ffff
        )
        .as_bytes(),
    );
}

/// Generates stream-json lines.
pub struct StreamGen {
    rng: Rng,
    session: Vec<u8>,
    started: bool,
}

impl StreamGen {
    pub fn new(seed: u64) -> StreamGen {
        let mut rng = Rng::new(seed);
        let mut session = Vec::new();
        uuid(&mut rng, &mut session);
        StreamGen {
            rng,
            session,
            started: false,
        }
    }

    /// Appends one line, newline included.
    pub fn line(&mut self, out: &mut Vec<u8>) {
        if !self.started {
            self.started = true;
            return self.init(out);
        }
        match self.rng.range(0, 100) {
            0..=24 => self.assistant_text(out),
            25..=44 => self.tool_use(out),
            45..=52 => self.thinking(out),
            53..=67 => self.read_result(out),
            68..=79 => self.bash_result(out),
            80..=84 => self.text_blocks(out),
            85..=87 => self.image_result(out),
            88..=93 => self.small_result(out),
            _ => self.write_input(out),
        }
    }

    /// Appends one line of the given kind (for benches): `fit`, `read`, `bash`, `write`, `image`.
    pub fn line_of(&mut self, kind: &str, out: &mut Vec<u8>) {
        match kind {
            "read" => self.read_result(out),
            "bash" => self.bash_result(out),
            "write" => self.write_input(out),
            "image" => self.image_result(out),
            "blocks" => self.text_blocks(out),
            _ => self.assistant_text(out),
        }
    }

    /// Lines of `kind` (without their newlines) until `bytes` are reached, for benches and
    /// profiling; lines longer than `max_len` are skipped (`fit` lines within a budget).
    pub fn lines_of(&mut self, kind: &str, bytes: usize, max_len: usize) -> Vec<Vec<u8>> {
        let mut lines = Vec::new();
        let mut total = 0;
        while total < bytes {
            let mut line = Vec::new();
            self.line_of(kind, &mut line);
            line.pop();
            if line.len() <= max_len {
                total += line.len();
                lines.push(line);
            }
        }
        lines
    }

    fn tail(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(b",\"session_id\":\"");
        out.extend_from_slice(&self.session);
        out.extend_from_slice(b"\",\"uuid\":\"");
        uuid(&mut self.rng, out);
        out.extend_from_slice(b"\"}\n");
    }

    fn init(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(
            b"{\"type\":\"system\",\"subtype\":\"init\",\"cwd\":\"/home/dev/project\",\"tools\":[",
        );
        for (i, t) in TOOLS.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(format!("\"{t}\"").as_bytes());
        }
        out.extend_from_slice(b"],\"mcp_servers\":[],\"model\":\"claude-opus-4-5-20251101\",\"permissionMode\":\"acceptEdits\",\"claude_code_version\":\"2.1.7\"");
        self.tail(out);
    }

    fn assistant_open(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"type\":\"assistant\",\"message\":{\"model\":\"claude-opus-4-5-20251101\",\"id\":\"");
        id(&mut self.rng, "msg_", out);
        out.extend_from_slice(b"\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[");
    }

    fn assistant_close(&mut self, out: &mut Vec<u8>) {
        let (i, o) = (self.rng.range(1, 50), self.rng.range(1, 900));
        out.extend_from_slice(
            format!(
                "],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{{\"input_tokens\":{i},\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":21570,\"output_tokens\":{o},\"service_tier\":\"standard\"}}}},\"parent_tool_use_id\":null"
            )
            .as_bytes(),
        );
        self.tail(out);
    }

    fn assistant_text(&mut self, out: &mut Vec<u8>) {
        self.assistant_open(out);
        out.extend_from_slice(b"{\"type\":\"text\",\"text\":\"");
        let len = self.rng.range(10, 600);
        prose(&mut self.rng, len, out);
        out.extend_from_slice(b"\"}");
        self.assistant_close(out);
    }

    fn tool_use(&mut self, out: &mut Vec<u8>) {
        self.assistant_open(out);
        let tool = TOOLS[self.rng.range(0, TOOLS.len())];
        out.extend_from_slice(b"{\"type\":\"tool_use\",\"id\":\"");
        id(&mut self.rng, "toolu_", out);
        out.extend_from_slice(
            format!("\",\"name\":\"{tool}\",\"input\":{{\"file_path\":\"/home/dev/project/src/")
                .as_bytes(),
        );
        prose(&mut self.rng, 12, out);
        out.extend_from_slice(b".rs\",\"description\":\"");
        let len = self.rng.range(10, 120);
        prose(&mut self.rng, len, out);
        out.extend_from_slice(b"\"}}");
        self.assistant_close(out);
    }

    fn thinking(&mut self, out: &mut Vec<u8>) {
        self.assistant_open(out);
        out.extend_from_slice(b"{\"type\":\"thinking\",\"thinking\":\"");
        let len = self.rng.range(100, 3000);
        prose(&mut self.rng, len, out);
        out.extend_from_slice(b"\",\"signature\":\"");
        let len = self.rng.range(300, 3000);
        base64(&mut self.rng, len, out);
        out.extend_from_slice(b"\"}");
        self.assistant_close(out);
    }

    fn write_input(&mut self, out: &mut Vec<u8>) {
        self.assistant_open(out);
        out.extend_from_slice(b"{\"type\":\"tool_use\",\"id\":\"");
        id(&mut self.rng, "toolu_", out);
        out.extend_from_slice(b"\",\"name\":\"Write\",\"input\":{\"file_path\":\"/home/dev/project/src/lib.rs\",\"content\":\"");
        let len = self.rng.range(1000, 30_000);
        prose(&mut self.rng, len, out);
        out.extend_from_slice(b"\"}}");
        self.assistant_close(out);
    }

    fn user_open(&mut self, out: &mut Vec<u8>) -> Vec<u8> {
        let mut tid = Vec::new();
        id(&mut self.rng, "toolu_", &mut tid);
        out.extend_from_slice(
            b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"tool_use_id\":\"",
        );
        out.extend_from_slice(&tid);
        out.extend_from_slice(b"\",\"type\":\"tool_result\",\"content\":");
        tid
    }

    fn read_result(&mut self, out: &mut Vec<u8>) {
        self.user_open(out);
        let len = self.rng.range(1000, 60_000);
        let start = out.len() + 1;
        out.push(b'"');
        numbered_lines(&mut self.rng, len, out);
        out.push(b'"');
        let content = out[start..out.len() - 1].to_vec();
        out.extend_from_slice(b"}]},\"parent_tool_use_id\":null,\"tool_use_result\":{\"type\":\"text\",\"file\":{\"filePath\":\"/home/dev/project/src/main.rs\",\"content\":\"");
        out.extend_from_slice(&content);
        out.extend_from_slice(
            format!(
                "\",\"numLines\":{0},\"startLine\":1,\"totalLines\":{0}}}}}",
                len / 40
            )
            .as_bytes(),
        );
        self.tail(out);
    }

    fn bash_result(&mut self, out: &mut Vec<u8>) {
        self.user_open(out);
        let len = self.rng.range(50, 30_000);
        let start = out.len() + 1;
        out.push(b'"');
        prose(&mut self.rng, len, out);
        out.push(b'"');
        let content = out[start..out.len() - 1].to_vec();
        let error = self.rng.chance(10);
        out.extend_from_slice(format!(",\"is_error\":{error}}}]}},\"parent_tool_use_id\":null,\"tool_use_result\":{{\"stdout\":\"").as_bytes());
        out.extend_from_slice(&content);
        out.extend_from_slice(b"\",\"stderr\":\"\",\"interrupted\":false,\"isImage\":false}");
        self.tail(out);
    }

    fn small_result(&mut self, out: &mut Vec<u8>) {
        self.user_open(out);
        out.extend_from_slice(b"\"The file /home/dev/project/src/lib.rs has been updated.\"}]},\"parent_tool_use_id\":null,\"tool_use_result\":{\"filePath\":\"/home/dev/project/src/lib.rs\"}");
        self.tail(out);
    }

    fn text_blocks(&mut self, out: &mut Vec<u8>) {
        let tid = self.user_open(out);
        let _ = tid;
        let n = self.rng.range(2, 60);
        let start = out.len();
        out.push(b'[');
        for i in 0..n {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"type\":\"text\",\"text\":\"");
            let len = self.rng.range(50, 2000);
            prose(&mut self.rng, len, out);
            out.extend_from_slice(b"\"}");
        }
        out.push(b']');
        let blocks = out[start..].to_vec();
        out.extend_from_slice(b"}]},\"parent_tool_use_id\":null,\"tool_use_result\":{\"content\":");
        out.extend_from_slice(&blocks);
        out.extend_from_slice(b",\"totalDurationMs\":51234}");
        self.tail(out);
    }

    fn image_result(&mut self, out: &mut Vec<u8>) {
        self.user_open(out);
        let len = self.rng.range(20_000, 600_000) / 4 * 4;
        let start = out.len();
        out.extend_from_slice(b"[{\"type\":\"text\",\"text\":\"### Result\\n- [Screenshot of viewport](.playwright-mcp/page.png)\"},{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo");
        base64(&mut self.rng, len, out);
        out.extend_from_slice(b"\"}}]");
        let blocks = out[start..].to_vec();
        out.extend_from_slice(b"}]},\"parent_tool_use_id\":null,\"tool_use_result\":");
        out.extend_from_slice(&blocks);
        self.tail(out);
    }
}

/// Writes at least `bytes` bytes of generated stream-json to `w` (whole lines), ending with a
/// `result` line.
pub fn write_stream(w: &mut impl Write, bytes: u64, seed: u64) -> io::Result<()> {
    let mut g = StreamGen::new(seed);
    let mut buf = Vec::with_capacity(1 << 20);
    let mut written = 0u64;
    while written < bytes {
        g.line(&mut buf);
        if buf.len() >= 1 << 20 {
            w.write_all(&buf)?;
            written += buf.len() as u64;
            buf.clear();
        }
    }
    buf.extend_from_slice(b"{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"num_turns\":42,\"result\":\"Done.\",\"total_cost_usd\":1.25}\n");
    w.write_all(&buf)
}

/// The shapes of giant line [`write_giant_line`] writes.
pub const GIANT_KINDS: [&str; 11] = [
    "string", "escapes", "image", "array", "spaced", "records", "floats", "integers", "deltas",
    "strings", "nested",
];

/// Writes one JSON line of about `bytes` bytes (newline included) of the given kind (see
/// [`GIANT_KINDS`]): a tool result of plain text, a string dense with escapes, a base64
/// screenshot, an array of small objects (compact, or spaced as Python's `json.dumps` writes
/// them), an array of 400-byte records, an array of floats (an embedding, spaced), of integers
/// (token ids), of signed integers spaced as Python writes them (offsets), or of short strings
/// (file paths), or arrays nested too deep to plan.
pub fn write_giant_line(w: &mut impl Write, kind: &str, bytes: u64) -> io::Result<()> {
    let (open, close, unit): (&str, &str, Vec<u8>) = match kind {
        "string" => (
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_giant","content":""#,
            r#"","is_error":false}]},"uuid":"giant-1"}"#,
            r#"     1\tfn main() { println!(\"héllo wörld\"); } // a line of source\n"#
                .repeat(64)
                .into_bytes(),
        ),
        "escapes" => (
            r#"{"type":"user","content":""#,
            r#"","uuid":"giant-2"}"#,
            r#"\\\"\u00e9\n\ud83d\ude00\t"#.repeat(64).into_bytes(),
        ),
        "image" => (
            r#"{"type":"user","message":{"content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":""#,
            r#""}}]},"uuid":"giant-3"}"#,
            b"iVBORw0KGgoAAAANSUhEUgAAB4AAAAQ4CAYAAADo08FDAAAAOXRFWHRTb2Z0d2FyZQBNYXRwbG90bGli"
                .repeat(64),
        ),
        "array" => (
            r#"{"type":"user","items":["#,
            r#"],"uuid":"giant-4"}"#,
            br#"{"type":"text","text":"an item of a very long array","n":12345},"#.repeat(64),
        ),
        "spaced" => (
            r#"{"type": "user", "items": ["#,
            r#"], "uuid": "giant-5"}"#,
            br#"{"type": "text", "text": "an item of a very long array", "n": 12345}, "#.repeat(64),
        ),
        "records" => (
            r#"{"type":"user","records":["#,
            r#"],"uuid":"giant-6"}"#,
            concat!(
                r#"{"type":"tool_use","id":"toolu_01A2b3C4d5E6f7G8h9","name":"Read","#,
                r#""input":{"file_path":"/home/user/project/src/module/file.rs","offset":120,"#,
                r#""limit":200},"tags":[1,2,3,5,8,13,21,34],"ok":true,"note":null,"#,
                r#""text":"a record of a long export, with \"quotes\" and a tab\there, "#,
                r#"then plain words until the record is about four hundred bytes long"},"#,
            )
            .repeat(16)
            .into_bytes(),
        ),
        "floats" => (
            r#"{"type": "user", "embedding": ["#,
            r#"], "uuid": "giant-7"}"#,
            (0..64u32)
                .map(|k| {
                    let sign = if k % 3 == 0 { "-" } else { "" };
                    format!("{sign}0.{:07}, ", k * 7_919_993 % 10_000_000)
                })
                .collect::<String>()
                .into_bytes(),
        ),
        "integers" => (
            r#"{"type":"user","tokens":["#,
            r#"],"uuid":"giant-8"}"#,
            (0..64u32)
                .map(|k| format!("{},", k * 7919 % 100_000))
                .collect::<String>()
                .into_bytes(),
        ),
        "deltas" => (
            r#"{"type": "user", "deltas": ["#,
            r#"], "uuid": "giant-10"}"#,
            (0..64i32)
                .map(|k| format!("{}, ", (k * 7919 % 2001) - 1000))
                .collect::<String>()
                .into_bytes(),
        ),
        "strings" => (
            r#"{"type":"user","files":["#,
            r#"],"uuid":"giant-9"}"#,
            (0..64u32)
                .map(|k| format!(r#""src/module_{}/file_{k}.rs","#, k % 7))
                .collect::<String>()
                .into_bytes(),
        ),
        "nested" => (r#"{"type":"user","deep":"#, r#"}"#, b"[".repeat(4096)),
        other => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("unknown giant line kind {other:?}"),
            ));
        }
    };
    w.write_all(open.as_bytes())?;
    let mut body = bytes.saturating_sub((open.len() + close.len() + 1) as u64);
    if kind == "nested" {
        body /= 2; // as many closers follow
    }
    let mut written = 0u64;
    let mut chunk = Vec::with_capacity(1 << 20);
    while written < body {
        chunk.clear();
        while chunk.len() < 1 << 20 && written + (chunk.len() + unit.len()) as u64 <= body.max(1) {
            chunk.extend_from_slice(&unit);
        }
        if chunk.is_empty() {
            break;
        }
        w.write_all(&chunk)?;
        written += chunk.len() as u64;
    }
    let depth = written as usize;
    match kind {
        // The last element has no comma after it.
        "array" | "records" => w.write_all(br#"{"n":0}"#)?,
        "spaced" => w.write_all(br#"{"n": 0}"#)?,
        "floats" | "integers" | "deltas" => w.write_all(b"0")?,
        "strings" => w.write_all(br#""""#)?,
        "nested" => {
            w.write_all(b"0")?;
            let closers = b"]".repeat(4096);
            let mut left = depth;
            while left > 0 {
                let n = left.min(closers.len());
                w.write_all(&closers[..n])?;
                left -= n;
            }
        }
        _ => {}
    }
    w.write_all(close.as_bytes())?;
    w.write_all(b"\n")
}

/// Writes `n` assistant lines of 300 bytes each, all within the default budget.
pub fn write_tiny_lines(w: &mut impl Write, n: u64) -> io::Result<()> {
    let text = "a".repeat(211);
    let mut buf = Vec::with_capacity(1 << 20);
    for i in 0..n {
        writeln!(
            buf,
            r#"{{"type":"assistant","uuid":"{i:08}","message":{{"content":[{{"type":"text","text":"{text}"}}]}}}}"#
        )?;
        if buf.len() >= 1 << 20 {
            w.write_all(&buf)?;
            buf.clear();
        }
    }
    w.write_all(&buf)
}

/// Words of build and test output: accents, other scripts, punctuation a shell prints.
const TEXT_WORDS: &[&str] = &[
    "the",
    "test",
    "error:",
    "warning:",
    "compiling",
    "finished",
    "passed",
    "failed",
    "file",
    "src/main.rs:42:7",
    "=>",
    "café",
    "naïve",
    "données",
    "über",
    "señor",
    "résumé",
    "→",
    "✓",
    "日本語",
    "🙂",
    "Ok(())",
    "\"quoted\"",
    "C:\\path",
    "let",
    "fn",
    "{",
    "}",
    "(",
    ")",
    "42",
    "0.25s",
    "--release",
    "iteration",
];

/// ANSI colour codes as terminals and build tools print them (`ESC [ … m`).
const COLOURS: &[&str] = &[
    "\x1b[31m",
    "\x1b[32m",
    "\x1b[1;33m",
    "\x1b[34m",
    "\x1b[0;36m",
];

/// Writes about `bytes` bytes of plain-text lines that are not JSON, as a build or an agent run
/// without its JSON flag prints them: 5–40 words a line, some in ANSI colours, with accents,
/// a tab now and then, and `=== Iteration N ===` banners. Deterministic for a seed.
pub fn write_text_lines(w: &mut impl Write, bytes: u64, seed: u64) -> io::Result<()> {
    let mut rng = Rng::new(seed);
    let mut buf = Vec::with_capacity(1 << 20);
    let mut written = 0u64;
    let mut iteration = 0;
    while written < bytes {
        if rng.chance(2) {
            iteration += 1;
            writeln!(buf, "=== Iteration {iteration} ===")?;
        }
        for k in 0..rng.range(5, 41) {
            if k > 0 {
                buf.push(if rng.chance(3) { b'\t' } else { b' ' });
            }
            let word = TEXT_WORDS[rng.range(0, TEXT_WORDS.len())];
            if rng.chance(12) {
                buf.extend_from_slice(COLOURS[rng.range(0, COLOURS.len())].as_bytes());
                buf.extend_from_slice(word.as_bytes());
                buf.extend_from_slice(b"\x1b[0m");
            } else {
                buf.extend_from_slice(word.as_bytes());
            }
        }
        buf.push(b'\n');
        if buf.len() >= 1 << 20 {
            w.write_all(&buf)?;
            written += buf.len() as u64;
            buf.clear();
        }
    }
    w.write_all(&buf)
}

/// Writes `bytes` bytes of noise (a stray binary dump), deterministic for a seed.
pub fn write_random_bytes(w: &mut impl Write, bytes: u64, seed: u64) -> io::Result<()> {
    let mut rng = Rng::new(seed);
    let mut buf = vec![0u8; 1 << 20];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        for word in buf[..n].chunks_mut(8) {
            word.copy_from_slice(&rng.next_u64().to_le_bytes()[..word.len()]);
        }
        w.write_all(&buf[..n])?;
        left -= n as u64;
    }
    Ok(())
}
