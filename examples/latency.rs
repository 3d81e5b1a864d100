//! Measures how long a finished line takes to reach standard output and the log when input
//! pauses: writes one line every 20 ms to each of a running smart-tee, a smart-tee with
//! `--archive`, smart-tee again (the difference between the two plain ones is the noise) and
//! `tee` (where it is installed), in turn, and polls each one's stdout and log until the line
//! is there. Taking turns line by line puts them all under the same load.
//!
//! ```sh
//! cargo build --release && cargo run --release --example latency -- target/release/smart-tee 200
//! ```
#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    reason = "a developer's tool, not a surface of smart-tee: the door is for the binary"
)]

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// One command under measurement.
struct Subject {
    name: String,
    child: Child,
    stdin: ChildStdin,
    /// Bytes its stdout gave so far (counted by a thread of its own).
    out: Arc<AtomicU64>,
    files: Vec<PathBuf>,
    to_stdout: Vec<Duration>,
    to_log: Vec<Duration>,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let bin = args
        .first()
        .map(String::as_str)
        .unwrap_or("target/release/smart-tee");
    let n: usize = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(200)
        .max(1);
    let mut subjects = vec![
        start("smart-tee", bin, false).unwrap_or_else(|e| fail(bin, e)),
        start("smart-tee --archive", bin, true).unwrap_or_else(|e| fail(bin, e)),
    ];
    // smart-tee a second time: the difference between the two is the noise.
    subjects.push(start("smart-tee again", bin, false).unwrap_or_else(|e| fail(bin, e)));
    match start("tee", "tee", false) {
        Ok(s) => subjects.push(s),
        Err(e) => println!("tee: not measured ({e})"),
    }
    let line = format!(
        "{{\"type\":\"assistant\",\"text\":\"{}\"}}\n",
        "x".repeat(200)
    );
    for i in 1..=n as u64 {
        for s in &mut subjects {
            std::thread::sleep(Duration::from_millis(20));
            if let Err(e) = one_line(s, line.as_bytes(), i * line.len() as u64) {
                eprintln!("latency: {}: {e}", s.name);
                std::process::exit(1);
            }
        }
    }
    for mut s in subjects {
        drop(s.stdin);
        let _ = s.child.wait();
        for f in &s.files {
            let _ = std::fs::remove_file(f);
        }
        report(&s.name, "stdout", &mut s.to_stdout);
        report(&s.name, "log", &mut s.to_log);
    }
}

/// Starts `bin LOG` (with `--archive LOG.orig.zst` when `archive`), stdout counted.
fn start(name: &str, bin: &str, archive: bool) -> std::io::Result<Subject> {
    let tag = name.replace([' ', '-'], "_");
    let log = std::env::temp_dir().join(format!(
        "smart-tee-latency-{}-{tag}.jsonl",
        std::process::id()
    ));
    let mut files = vec![log.clone()];
    let mut cmd = Command::new(bin);
    if archive {
        let zst = log.with_extension("jsonl.orig.zst");
        cmd.arg("--archive").arg(&zst);
        files.push(zst);
    }
    for f in &files {
        let _ = std::fs::remove_file(f);
    }
    let mut child = cmd
        .arg(&log)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let stdin = child.stdin.take().expect("stdin");
    let mut stdout = child.stdout.take().expect("stdout");
    let out = Arc::new(AtomicU64::new(0));
    let counted = Arc::clone(&out);
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = stdout.read(&mut buf) {
            counted.fetch_add(n as u64, Ordering::Release);
        }
    });
    Ok(Subject {
        name: name.to_owned(),
        child,
        stdin,
        out,
        files,
        to_stdout: Vec::new(),
        to_log: Vec::new(),
    })
}

/// Writes one line; waits (5 s at most) until stdout and then the log hold `expected` bytes.
fn one_line(s: &mut Subject, line: &[u8], expected: u64) -> std::io::Result<()> {
    let start = Instant::now();
    s.stdin.write_all(line)?;
    s.stdin.flush()?;
    let wait = |done: &dyn Fn() -> bool| -> std::io::Result<Duration> {
        while !done() {
            if start.elapsed() > Duration::from_secs(5) {
                return Err(std::io::Error::other("a line took more than 5 s"));
            }
            std::hint::spin_loop();
        }
        Ok(start.elapsed())
    };
    s.to_stdout
        .push(wait(&|| s.out.load(Ordering::Acquire) >= expected)?);
    let log = &s.files[0];
    s.to_log.push(wait(&|| {
        std::fs::metadata(log).map(|m| m.len()).unwrap_or(0) >= expected
    })?);
    Ok(())
}

fn report(name: &str, to: &str, delays: &mut [Duration]) {
    delays.sort();
    let n = delays.len();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "{name}: latency to {to} over {n} lines: median {:.0} µs, p99 {:.0} µs, max {:.0} µs",
        us(delays[n / 2]),
        us(delays[n * 99 / 100]),
        us(delays[n - 1])
    );
}

fn fail(bin: &str, e: std::io::Error) -> ! {
    eprintln!("latency: cannot run {bin}: {e}");
    std::process::exit(1);
}
