#!/usr/bin/env bash
# Typed readers get the same answers from the log as from the stream (#30). The logs of
# tests/data/real at budgets 1024, 2048 and 5120 are read by the Agent SDK's message parser
# (claude-agent-sdk), claude-code-log and ccusage, installed in a virtual environment and an npm
# prefix this script creates, and compared with the originals (tests/typed_readers.py):
# - at every budget: no value changes its JSON type, no usage or cost number is lost (at 1024
#   the copies of a sub-agent's usage in progress lines and Task results are counted apart: the
#   documented limit, docs/cut-policy.md);
# - at 2048 and 5120: every line the Agent SDK parses from the original it parses from the log
#   to the same class, ids, usage and cost; claude-code-log's entry, tool-use, session and token
#   counts are equal; ccusage's totals are equal to the token and the cent;
# - at 1024 the readers' differences are printed, not failed on (see docs/cut-policy.md);
# - ccusage's `session --json` input tokens per transcript equal smart-tee's --summary (#48).
# A registry that cannot be reached is said loudly and its readers are skipped.
# Usage: tests/typed_readers.sh [SMART_TEE]
set -euo pipefail
cd "$(dirname "$0")/.."
st="$(realpath "${1:-target/release/smart-tee}")"
dir="$(mktemp -d)"; trap 'rm -rf "$dir"' EXIT
py=python3
if python3 -m venv "$dir/venv" > /dev/null 2>&1 \
  && timeout 600 "$dir/venv/bin/pip" install -q claude-agent-sdk claude-code-log > "$dir/pip.log" 2>&1; then
  py="$dir/venv/bin/python"
else
  echo "WARNING: could not install claude-agent-sdk and claude-code-log from PyPI (unreachable?):"
  echo "WARNING: the Agent SDK and claude-code-log are NOT compared (see below: type rule only)"
  tail -3 "$dir/pip.log" 2>/dev/null || true
fi
ccusage=""
if command -v npm > /dev/null \
  && timeout 600 npm install -q --prefix "$dir/npm" ccusage@20.0.24 > "$dir/npm.log" 2>&1 \
  && "$dir/npm/node_modules/.bin/ccusage" --help > /dev/null 2>&1; then
  ccusage="$dir/npm/node_modules/.bin/ccusage"
else
  echo "WARNING: could not install ccusage from npm (unreachable, or npm missing): ccusage is NOT compared"
fi
for f in tests/data/real/*.jsonl; do
  n="$(basename "$f" .jsonl)"
  # Each file alone in its project folder, as the readers find transcripts.
  mkdir -p "$dir/orig/projects/$n"; cp "$f" "$dir/orig/projects/$n/"
  for b in 1024 2048 5120; do
    mkdir -p "$dir/b$b/projects/$n"
    "$st" -b "$b" "$dir/b$b/projects/$n/$n.jsonl" < "$f" > /dev/null
  done
  "$py" tests/typed_readers.py --readers-report-only "$dir/orig/projects/$n/$n.jsonl" "$dir/b1024/projects/$n/$n.jsonl"
  "$py" tests/typed_readers.py "$dir/orig/projects/$n/$n.jsonl" "$dir/b2048/projects/$n/$n.jsonl" "$dir/b5120/projects/$n/$n.jsonl"
done
if [ -n "$ccusage" ]; then
  totals() { CLAUDE_CONFIG_DIR="$1" timeout 300 "$ccusage" claude daily --json --offline; }
  totals "$dir/orig" > "$dir/orig.json"
  for b in 1024 2048 5120; do
    totals "$dir/b$b" > "$dir/b$b.json"
    python3 - "$dir/orig.json" "$dir/b$b.json" "$b" <<'PY'
import json, sys
a, b = (json.load(open(p))["totals"] for p in sys.argv[1:3])
budget = sys.argv[3]
keys = ["inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens", "totalTokens"]
same = all(a[k] == b[k] for k in keys) and round(a["totalCost"], 2) == round(b["totalCost"], 2)
print(f"ccusage at -b {budget}: {b['totalTokens']:,} tokens ${b['totalCost']:.2f} "
      f"(originals: {a['totalTokens']:,} tokens ${a['totalCost']:.2f}) {'the same' if same else 'DIFFER'}")
if not same and budget != "1024":
    sys.exit(1)
PY
  done
fi
if [ -n "$ccusage" ]; then
  # #48: each transcript's input tokens (its three input counts added) equal ccusage's for its
  # session (ccusage keeps a message's first usage copy, whose output count is partial: input only).
  CLAUDE_CONFIG_DIR="$dir/orig" timeout 300 "$ccusage" session --json --offline > "$dir/sessions.json"
  python3 tests/oracle/compare.py --ccusage "$dir/sessions.json" "$st" tests/data/real/*.jsonl
fi
echo "typed readers: the type rule and usage hold at 1024 (but for sub-agent usage echoes), 2048 and 5120; readers agree at 2048 and 5120"
