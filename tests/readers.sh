#!/usr/bin/env bash
# Every log line reads with common readers at their default limits: Python's json and jq (1.6
# stops at depth 256, Python near 1,000; serde_json's 128 is checked by the cargo tests). The
# hostile lines here are the deep and wide ones; the log is written by the binary at several
# budgets, with -b 0 too. Needs python3; jq is checked when installed (said when not).
# Usage: tests/readers.sh [SMART_TEE]
set -euo pipefail
cd "$(dirname "$0")/.."
st="$(realpath "${1:-target/release/smart-tee}")"
dir="$(mktemp -d)"; trap 'rm -rf "$dir"' EXIT
python3 - "$dir/hostile.jsonl" <<'PY'
import json, sys
deep = lambda n: "[" * n + "]" * n
deep_obj = lambda n: '{"a":' * n + "1" + "}" * n
with open(sys.argv[1], "w") as f:
    for line in [
        deep(1_000_000), deep(2_544), deep(65), deep(64), deep_obj(300),
        '{"type":"user","uuid":"u-1","content":' + deep_obj(500) + '}',
        '{"type":"user","content":"' + "x" * 200_000 + '"}',
        "[" + ",".join(["0"] * 300_000) + "]",
        '{"type":"assistant","text":"\\ud83d\\ude00 \\u0000 \\" \\\\"}',
        "not json at all \x01\x02",
    ]:
        f.write(line + "\n")
PY
for budget in 0 128 5120 1M; do
  log="$dir/log-$budget.jsonl"
  "$st" -b "$budget" "$log" < "$dir/hostile.jsonl" > /dev/null
  python3 - "$log" <<'PY'
import json, sys
n = 0
for i, line in enumerate(open(sys.argv[1], encoding="utf-8")):
    json.loads(line)  # RecursionError or ValueError fails the script
    n += 1
assert n == 10, n
PY
  if command -v jq > /dev/null; then
    jq -c . "$log" > /dev/null
  fi
done
command -v jq > /dev/null || echo "NOTE: jq is not installed: only Python's json was checked"
echo "readers: every log line read by python3 json$(command -v jq > /dev/null && echo ' and jq') at budgets 0, 128, 5120 and 1M"
