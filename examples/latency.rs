//! Measures how long a finished line takes to reach the log when input pauses: writes one line
//! every 20 ms to a running smart-tee and polls the log's size until the line is there.
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
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(200);
    let log = std::env::temp_dir().join(format!("smart-tee-latency-{}.jsonl", std::process::id()));
    let mut child = match Command::new(bin)
        .arg(&log)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("latency: cannot run {bin}: {e}");
            std::process::exit(1);
        }
    };
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
        stdin.write_all(line.as_bytes()).expect("write");
        stdin.flush().expect("flush");
        expected += line.len() as u64;
        while std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0) < expected {
            if start.elapsed() > Duration::from_secs(5) {
                eprintln!("latency: a line took more than 5 s");
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
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "latency over {n} lines: median {:.0} µs, p99 {:.0} µs, max {:.0} µs",
        us(delays[n / 2]),
        us(delays[n * 99 / 100]),
        us(delays[n - 1])
    );
}
