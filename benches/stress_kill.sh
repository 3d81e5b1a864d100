#!/usr/bin/env bash
# Stress, not a test (it depends on timing by design): kill -9 smart-tee at random moments while
# it logs a generated stream, then open the log again with `-a` (which repairs a torn last line)
# and check that every line of it is whole, valid JSON. The test suite provokes the same states
# on purpose (tests/it/faults.rs: a_torn_last_line_is_cut_back_when_appending and the rest).
# Usage: benches/stress_kill.sh [TRIES]     (default 40)
set -euo pipefail
cd "$(dirname "$0")/.."
tries="${1:-40}"
work="${TMPDIR:-/tmp}/smart-tee-stress"; mkdir -p "$work"
cargo build --release -q --bin smart-tee --examples
st="$PWD/target/release/smart-tee"
input="$work/input.jsonl"
[ -s "$input" ] || target/release/examples/gen_corpus 18M 7 > "$input"
torn=0
for i in $(seq "$tries"); do
  log="$work/k.log"; rm -f "$log"
  "$st" "$log" < "$input" > /dev/null &
  pid=$!
  sleep "0.0$((RANDOM % 9 + 1))"
  kill -9 "$pid" 2> /dev/null || true
  wait "$pid" 2> /dev/null || true
  [ -s "$log" ] && [ "$(tail -c 1 "$log" | od -An -c | tr -d ' ')" != '\n' ] && torn=$((torn + 1))
  "$st" -a "$log" < /dev/null
  if [ -s "$log" ] && [ "$(tail -c 1 "$log" | od -An -c | tr -d ' ')" != '\n' ]; then
    echo "try $i: the log still ends mid-line after -a" >&2; exit 1
  fi
  # Every line must be JSON: at budget 0, a line that is not JSON would become a non_json record.
  if "$st" -b 0 "$work/check.log" < "$log" > /dev/null && grep -q '"type":"non_json"' "$work/check.log"; then
    echo "try $i: a line of the log is not JSON" >&2; exit 1
  fi
done
echo "$tries kills: $torn left a torn last line, every one repaired by the next -a; no invalid line"
