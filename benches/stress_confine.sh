#!/usr/bin/env bash
# Stress, not a test (it depends on timing by design): race `smart-tee mcp` with a process that
# swaps, with renameat2(RENAME_EXCHANGE) in a tight loop, a folder under the root with a
# symlink to an outside folder, and a log under the root with a symlink to an outside file,
# while a client keeps calling read_log on both paths. Counts the answers that held the outside
# file's marker: it must be 0. The test suite shows the same by construction
# (confine.rs and mcp/tools.rs: a_folder_swapped_for_a_symlink_out_after_the_open_is_not_read).
# Usage: benches/stress_confine.sh [SECONDS]   (default 60; ST=path/to/smart-tee for another build)
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
cargo build --release -q --bin smart-tee
st="${ST:-$PWD/target/release/smart-tee}"
work="$(mktemp -d "${TMPDIR:-/tmp}/smart-tee-confine.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root/d" "$work/outside"
printf '{"type":"inside"}\n' > "$work/root/d/x.jsonl"
printf '{"type":"inside"}\n' > "$work/root/f.jsonl"
printf '{"type":"SECRET_OUTSIDE"}\n' > "$work/outside/x.jsonl"
printf '{"type":"SECRET_OUTSIDE"}\n' > "$work/outside/f.jsonl"
ln -s "$work/outside" "$work/root/dswap"
ln -s "$work/outside/f.jsonl" "$work/root/fswap"
python3 - "$st" "$work" "$secs" <<'PY'
import ctypes, json, os, subprocess, sys, threading, time
st, work, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
def exchange(a, b):
    r = libc.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), RENAME_EXCHANGE)
    if r != 0:
        raise OSError(ctypes.get_errno(), "renameat2")
stop = threading.Event()
swaps = [0]
def racer():
    root = os.path.join(work, "root")
    pairs = [(os.path.join(root, "d"), os.path.join(root, "dswap")),
             (os.path.join(root, "f.jsonl"), os.path.join(root, "fswap"))]
    while not stop.is_set():
        for a, b in pairs:
            exchange(a, b)
            swaps[0] += 1
threading.Thread(target=racer, daemon=True).start()
p = subprocess.Popen([st, "mcp", "--root", os.path.join(work, "root")],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                          "params": {"protocolVersion": "2025-06-18"}}) + "\n")
p.stdout.readline()
answers = leaks = served = 0
n = 0
end = time.time() + secs
while time.time() < end:
    for path in ("d/x.jsonl", "f.jsonl"):
        n += 1
        p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call",
            "params": {"name": "read_log", "arguments": {"path": path, "format": "jsonl"}}}) + "\n")
        line = p.stdout.readline()
        answers += 1
        result = json.loads(line)["result"]
        text = "".join(c["text"] for c in result["content"])
        if "SECRET_OUTSIDE" in text:
            leaks += 1
        if not result["isError"]:
            served += 1
stop.set()
p.stdin.close()
p.wait(timeout=30)
print(f"{answers} answers in {secs:.0f} s ({served} served from inside, the rest refused), "
      f"{swaps[0]} swaps, {leaks} leaks")
sys.exit(1 if leaks else 0)
PY
