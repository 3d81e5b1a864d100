#!/usr/bin/env bash
# Checks contrib/logrotate.conf with the real logrotate: a running smart-tee logs a line, the
# log is rotated (renamed, created anew, SIGUSR1 sent by the config's postrotate), the next line
# lands in the new file and the first stays in the rotated one. Every wait is bounded.
# Needs logrotate and pkill (Debian: logrotate, procps). Usage: tests/logrotate.sh [SMART_TEE]
set -euo pipefail
cd "$(dirname "$0")/.."
st="$(realpath "${1:-target/release/smart-tee}")"
dir="$(mktemp -d)"; trap 'exec 3>&- 2>/dev/null || true; rm -rf "$dir"' EXIT
sed "s|/var/log/agents/\*.jsonl|$dir/*.jsonl|; s|pkill -USR1 -x smart-tee|pkill -USR1 -f '^$st '|" \
  contrib/logrotate.conf > "$dir/logrotate.conf"
mkfifo "$dir/in"
"$st" -a "$dir/agent.jsonl" < "$dir/in" > /dev/null &
pid=$!
exec 3> "$dir/in"
wait_for() { for _ in $(seq 1000); do eval "$1" && return 0; sleep 0.01; done; echo "timed out: $1" >&2; exit 1; }
echo '{"n":1}' >&3
wait_for '[ "$(cat "$dir/agent.jsonl" 2>/dev/null)" = "{\"n\":1}" ]'
logrotate -f -s "$dir/state" "$dir/logrotate.conf"
wait_for '[ -f "$dir/agent.jsonl.1" ] && [ -f "$dir/agent.jsonl" ]'
# Reopened: the process holds the new file, and no longer the rotated one.
wait_for '! ls -l /proc/$pid/fd | grep -q "agent.jsonl.1\$" && ls -l /proc/$pid/fd | grep -q "agent.jsonl\$"'
echo '{"n":2}' >&3
exec 3>&-
for _ in $(seq 1000); do kill -0 "$pid" 2>/dev/null || break; sleep 0.01; done
wait "$pid"
[ "$(cat "$dir/agent.jsonl.1")" = '{"n":1}' ] || { echo "rotated file: $(cat "$dir/agent.jsonl.1")" >&2; exit 1; }
[ "$(cat "$dir/agent.jsonl")" = '{"n":2}' ] || { echo "new file: $(cat "$dir/agent.jsonl")" >&2; exit 1; }
echo "logrotate: ok (rotated file holds line 1, the new file line 2)"
