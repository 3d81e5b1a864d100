#!/usr/bin/env bash
# Peak memory (max RSS) of the read paths on hostile inputs, the figures of docs/reading.md:
#   follow   `--view --follow` on a file that a 100 MB log is then moved onto
#   summary  `--view --summary` of a 121 MB log with 500,000 distinct tool names
#   mcp      `smart-tee mcp` under a client that sends read_log calls for 20 s and never reads
#   ping     the slowest of 20 `ping`s while read_log works on a 60 MB last line and a gzip
#            bomb, and wait_for_log on a log a FIFO was renamed over
# Usage: benches/memory_reading.sh     (ST=path/to/smart-tee to measure another build)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q --bin smart-tee
st="${ST:-$PWD/target/release/smart-tee}"
work="$(mktemp -d "${TMPDIR:-/tmp}/smart-tee-memory.XXXXXX")"
trap 'rm -rf "$work"' EXIT
peak() { awk -F': ' '/Maximum resident/ {printf "%.1f MiB", $2/1024}' "$1"; }

# follow: a 100 MB log of 2 KB events moved onto the followed file.
python3 -c '
import json, sys
pad = "x" * 2000
with open(sys.argv[1], "w") as f:
    for i in range(50_000):
        f.write(json.dumps({"type": "user", "n": i, "text": pad}) + "\n")
' "$work/big.jsonl"
: > "$work/followed.jsonl"
/usr/bin/time -v -o "$work/follow.time" "$st" --view --follow --format jsonl "$work/followed.jsonl" > "$work/follow.out" &
sleep 1
mv "$work/big.jsonl" "$work/followed.jsonl"
for _ in $(seq 600); do
  [ "$(wc -l < "$work/follow.out")" -ge 50000 ] && break; sleep 0.1
done
kill "$(pgrep -P $! smart-tee)" 2>/dev/null || true; wait || true
echo "follow   $(peak "$work/follow.time") ($(wc -l < "$work/follow.out") events printed)"

# summary: 500,000 distinct tool names.
python3 -c '
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(500_000):
        f.write(json.dumps({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "name": "tool-%d-%s" % (i, "n" * 150), "input": {"i": i}}]}}) + "\n")
' "$work/tools.jsonl"
/usr/bin/time -v -o "$work/summary.time" "$st" --view --summary "$work/tools.jsonl" > /dev/null
echo "summary  $(peak "$work/summary.time") ($(du -m "$work/tools.jsonl" | cut -f1) MB log)"

# mcp: read_log calls sent for 20 s by a client that never reads its stdout.
mkdir -p "$work/root"
cp "$work/tools.jsonl" "$work/root/a.jsonl"
python3 - "$st" "$work" <<'PY'
import json, os, subprocess, sys, time, threading
st, work = sys.argv[1], sys.argv[2]
p = subprocess.Popen(["/usr/bin/time", "-v", "-o", work + "/mcp.time", st, "mcp", "--root",
                      work + "/root"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
req = (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
    "name": "read_log", "arguments": {"path": "a.jsonl", "tail": 200}}}) + "\n").encode()
sent = [0]
def send():
    try:
        while True:
            p.stdin.write(req); p.stdin.flush(); sent[0] += 1
    except (BrokenPipeError, ValueError):
        pass
threading.Thread(target=send, daemon=True).start()
time.sleep(20)
pid = int(subprocess.check_output(["pgrep", "-P", str(p.pid), "smart-tee"]).split()[0])
threads = len(os.listdir(f"/proc/{pid}/task"))
os.kill(pid, 15)
p.wait()
print(f"threads {threads}, requests sent {sent[0]}")
PY
echo "mcp      $(peak "$work/mcp.time")"

# ping: answered while the tools work on a 60 MB last line, a gzip bomb and a FIFO.
mkdir -p "$work/busy"
python3 - "$st" "$work/busy" <<'PY'
import gzip, json, os, subprocess, sys, time
st, root = sys.argv[1], sys.argv[2]
with open(root + "/long.jsonl", "w") as f:
    f.write('{"type":"a"}\n{"type":"user","pad":"' + "p" * (60 << 20) + '"}\n')
member = gzip.compress(b'{"type":"user","pad":"' + b"z" * ((1 << 20) - 30) + b'"}\n', 9)
with open(root + "/bomb.jsonl.gz", "wb") as f:
    for _ in range(2048):  # 2 GiB decompressed
        f.write(member)
with open(root + "/waited.jsonl", "w") as f:
    f.write('{"type":"system"}\n')
p = subprocess.Popen([st, "mcp", "--root", root], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     text=True, bufsize=1)
def send(i, method, params):
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
    p.stdin.flush()
def call(i, name, args):
    send(i, "tools/call", {"name": name, "arguments": args})
call(1, "wait_for_log", {"path": "waited.jsonl", "timeout_seconds": 300})
time.sleep(0.5)
os.mkfifo(root + "/fifo")
os.rename(root + "/fifo", root + "/waited.jsonl")
started = time.time()
call(2, "read_log", {"path": "long.jsonl", "tail": 1})
call(3, "read_log", {"path": "bomb.jsonl.gz"})
call(4, "list_logs", {})
call(5, "read_log", {"path": "bomb.jsonl.gz", "tail": 1})
slowest, pending, done = 0.0, {2, 3, 4, 5}, {}
for k in range(20):
    t = time.time()
    send(100 + k, "ping", {})
    while True:
        a = json.loads(p.stdout.readline())
        if a["id"] == 100 + k:
            break
        done[a["id"]] = time.time() - started
    slowest = max(slowest, time.time() - t)
    time.sleep(0.2)
while pending - set(done):
    a = json.loads(p.stdout.readline())
    done[a["id"]] = time.time() - started
p.stdin.close()
p.wait(timeout=30)
print("slowest ping %.1f ms; answers in s: %s" % (slowest * 1000, ", ".join(
    "%s %.1f" % (n, done[i]) for i, n in [(2, "tail-60MB"), (3, "bomb"), (4, "list_logs"), (5, "bomb-tail")])))
PY
