//! Measures how long a finished line takes to reach the log when input pauses: writes one line
//! every 20 ms to a running smart-tee and polls the log's size until the line is there; then
//! the same with `tee` (where it is installed), for the machine's own share of the delay.
//!
//! ```sh
//! cargo build --release && cargo run --release --example latency -- target/release/smart-tee 200
//! ```

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
    report(
        "smart-tee",
        &measure(bin, n).unwrap_or_else(|e| fail(bin, e)),
    );
    match measure("tee", n) {
        Ok(delays) => report("tee", &delays),
        Err(e) => println!("tee: not measured ({e})"),
    }
}

/// The delay of each of `n` lines written to `bin LOG`, sorted.
fn measure(bin: &str, n: usize) -> std::io::Result<Vec<Duration>> {
    let log = std::env::temp_dir().join(format!("smart-tee-latency-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let mut child = Command::new(bin)
        .arg(&log)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()?;
    let mut stdin = child.stdin.take().expect("stdin");
    let line = format!(
        "{{\"type\":\"assistant\",\"text\":\"{}\"}}\n",
        "x".repeat(200)
    );
    let mut delays = Vec::with_capacity(n);
    let mut expected = 0u64;
    for _ in 0..n {
        std::thread::sleep(Duration::from_millis(20));
        let start = Instant::now();
        stdin.write_all(line.as_bytes())?;
        stdin.flush()?;
        expected += line.len() as u64;
        while std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0) < expected {
            if start.elapsed() > Duration::from_secs(5) {
                eprintln!("latency: a line took more than 5 s through {bin}");
                std::process::exit(1);
            }
            std::hint::spin_loop();
        }
        delays.push(start.elapsed());
    }
    drop(stdin);
    let _ = child.wait();
    let _ = std::fs::remove_file(&log);
    delays.sort();
    Ok(delays)
}

fn report(name: &str, delays: &[Duration]) {
    let n = delays.len();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "{name}: latency over {n} lines: median {:.0} µs, p99 {:.0} µs, max {:.0} µs",
        us(delays[n / 2]),
        us(delays[n * 99 / 100]),
        us(delays[n - 1])
    );
}

fn fail(bin: &str, e: std::io::Error) -> ! {
    eprintln!("latency: cannot run {bin}: {e}");
    std::process::exit(1);
}
