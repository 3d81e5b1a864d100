#!/usr/bin/env bash
# The oracle (#48): smart-tee's --summary --format json against an independent count written in
# Python from the formats' documentation (tests/oracle/count.py), per conversation: the four token
# counts and their total, cost, tool calls, failed calls, state and ok; on every real log
# (tests/data/real, copied with their licence from the shared corpus) and every agent fixture of
# tests/golden, each as it is and as smart-tee logged it, all of a set in one call too, and each
# conversation whose result has Claude Code's modelUsage against its models' counts. Prints the
# table of files, fields, truth and smart-tee; fails on any difference. (ccusage's per-session
# input counts are compared in tests/typed_readers.sh, which installs it.)
# Usage: tests/oracle.sh [SMART_TEE]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${1:-}" ] && [ ! -x target/release/smart-tee ]; then
  cargo build --release
fi
st="$(realpath "${1:-target/release/smart-tee}")"
python3 tests/oracle/compare.py "$st" tests/data/real/*.jsonl
# The agent fixtures (written from each tool's published schema), and the three files of
# format-three-files in one call.
python3 tests/oracle/compare.py "$st" tests/golden/format-*/input.jsonl
python3 tests/oracle/compare.py "$st" tests/golden/format-three-files/input.jsonl tests/golden/format-three-files/also-*.jsonl
# Runs appended to one file (#49's new user): a transcript after a stream's result, and one
# run twice (a log appended to itself: one process, billed once).
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cat samples/two-conversations.jsonl samples/agent-stream.jsonl > "$tmp/appended.jsonl"
basic=tests/data/real/charlieyou__claude-agent-sdk-gleam__basic_query.jsonl
cat "$basic" "$basic" > "$tmp/twice.jsonl"
python3 tests/oracle/compare.py "$st" "$tmp/appended.jsonl" "$tmp/twice.jsonl"
echo "oracle: smart-tee's summaries equal the independent count on every file"
