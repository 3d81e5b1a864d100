#!/usr/bin/env bash
# Stress, not a test (it depends on timing by design): `smart-tee run` with the fake agents of
# tests/fake_agent.py, many times, each with the limits set close to what the agent does:
# 1. a long line arriving a piece at a time, 0.1 s apart, for 2 s, under --stall-after 1s: the
#    pieces are activity, so the run ends ok (status 0) with every line logged;
# 2. a stalling agent under --stall-after 0.3s --kill-after 0.2s, and one whose group ignores
#    SIGTERM: status 5, no process of the group left, the log's two lines;
# 3. SIGTERM to smart-tee at a random moment of an agent that spends: status 143, the log one
#    valid JSON line per line of stdout, no process of the group left.
# tests/it/run.rs holds the same cases with margins wide enough not to depend on timing.
# Usage: benches/stress_run.sh [TRIES]     (default 20; ST=path/to/smart-tee to try another build)
set -euo pipefail
cd "$(dirname "$0")/.."
tries="${1:-20}"
work="${TMPDIR:-/tmp}/smart-tee-stress-run"; rm -rf "$work"; mkdir -p "$work"
[ -n "${ST:-}" ] || cargo build --release -q --bin smart-tee
st="${ST:-$PWD/target/release/smart-tee}"
agent="$PWD/tests/fake_agent.py"
fail=0
# group_left PIDFILE: says which processes of the agent's group are left.
group_left() {
  local pgid; pgid=$(cut -d' ' -f1 "$1")
  ps -eo pgid=,pid=,stat=,args= | awk -v g="$pgid" '$1 == g'
}
check() { # NAME WANT_STATUS GOT_STATUS
  if [ "$2" != "$3" ]; then echo "$1: status $3, want $2"; fail=1; fi
  local left; left=$(group_left "$work/pids")
  if [ -n "$left" ]; then echo "$1: left of the group: $left"; fail=1; fi
  if ! python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$work/a.jsonl"; then
    echo "$1: a log line is not JSON"; fail=1
  fi
}
export FAKE_AGENT_PIDS="$work/pids"
for ((i = 0; i < tries; i++)); do
  s=0; "$st" run --stall-after 1s "$work/a.jsonl" -- "$agent" partial > "$work/out" 2> /dev/null || s=$?
  check partial 0 "$s"
  [ "$(wc -l < "$work/a.jsonl")" = 3 ] || { echo "partial: $(wc -l < "$work/a.jsonl") lines"; fail=1; }
  for mode in stall stubborn; do
    s=0; "$st" run --stall-after 0.3s --kill-after 0.2s "$work/a.jsonl" -- "$agent" $mode > /dev/null 2>&1 || s=$?
    check "$mode" 5 "$s"
  done
  "$st" run "$work/a.jsonl" -- "$agent" spend > "$work/out" 2> /dev/null &
  pid=$!
  sleep "0.$((RANDOM % 9 + 1))"
  kill -TERM "$pid"
  s=0; wait "$pid" || s=$?
  check signal 143 "$s"
  [ "$(wc -l < "$work/a.jsonl")" = "$(wc -l < "$work/out")" ] || { echo "signal: log and stdout differ"; fail=1; }
done
[ "$fail" = 0 ] && echo "stress_run: $tries tries, all ok"
exit "$fail"
