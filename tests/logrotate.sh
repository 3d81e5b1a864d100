#!/usr/bin/env bash
# Checks contrib/logrotate.conf with the real logrotate, in its create mode and in copytruncate
# mode, with and without an archive: a running smart-tee logs lines, the pair is rotated
# (renamed and SIGUSR1 sent by the config's postrotate, or copied and truncated), the next lines
# land in the new log, the first ones stay in the rotated one, and with an archive every line of
# both logs gives back its original (`--view --original`, the archive found by its name). Every
# wait is bounded.
# Needs logrotate and pkill (Debian: logrotate, procps). Usage: tests/logrotate.sh [SMART_TEE]
set -euo pipefail
cd "$(dirname "$0")/.."
st="$(realpath "${1:-target/release/smart-tee}")"
root="$(mktemp -d)"; trap 'exec 3>&- 2>/dev/null || true; rm -rf "$root"' EXIT
wait_for() { for _ in $(seq 1000); do eval "$1" && return 0; sleep 0.01; done; echo "timed out: $1" >&2; exit 1; }
fail() { echo "logrotate ($mode, archive: $archive): $*" >&2; exit 1; }

# The original of line $2 of log $1, or a failure.
original_is() {
  local got
  got="$("$st" --view --original --line "$2" "$1" 2>&1)" || fail "line $2 of $1: $got"
  [ "$got" = "$3" ] || fail "line $2 of $1 is $got, not $3"
}

# check MODE ARCHIVE: MODE is create (the shipped config) or copytruncate; ARCHIVE yes or no.
check() {
  mode="$1"; archive="$2"
  local dir="$root/$mode-$archive"
  mkdir "$dir"
  sed "s|/var/log/agents/|$dir/|; s|pkill -USR1 -x smart-tee|pkill -USR1 -f '^$st '|" \
    contrib/logrotate.conf > "$dir/logrotate.conf"
  if [ "$mode" = copytruncate ]; then
    # As the config's comment says: copytruncate instead of create/nocreate, no postrotate.
    sed -i 's/^ *\(create 0600\|nocreate\)$/    copytruncate/; /sharedscripts/,/endscript/d' \
      "$dir/logrotate.conf"
    grep -q copytruncate "$dir/logrotate.conf" || fail "no copytruncate in the config"
  fi
  mkfifo "$dir/in"
  if [ "$archive" = yes ]; then
    SMART_TEE_ARCHIVE=1 "$st" -a "$dir/agent.jsonl" < "$dir/in" > /dev/null 2> "$dir/stderr" &
  else
    "$st" -a "$dir/agent.jsonl" < "$dir/in" > /dev/null 2> "$dir/stderr" &
  fi
  local pid=$!
  exec 3> "$dir/in"
  printf '{"n":1}\n{"n":2}\n' >&3
  wait_for '[ "$(wc -l 2>/dev/null < "$dir/agent.jsonl")" = 2 ]'
  if [ "$mode" = copytruncate ] && [ "$archive" = yes ]; then
    # The archive writes its frame once the input pauses (a second): copied after that, the
    # pair holds both lines. (Lines smart-tee writes between logrotate's copy and its
    # truncation would be lost: logrotate's own warning.)
    wait_for '[ -s "$dir/agent.jsonl.orig.zst" ]'
  fi
  logrotate -f -s "$dir/state" "$dir/logrotate.conf"
  [ -f "$dir/agent.jsonl.1" ] || fail "the log was not rotated"
  if [ "$archive" = yes ]; then
    [ -f "$dir/agent.jsonl.orig.zst.1" ] || fail "the archive was not rotated"
  fi
  if [ "$mode" = create ]; then
    # Reopened: the process holds the new files, and no longer the rotated ones.
    wait_for '! ls -l /proc/$pid/fd | grep -q "\.1\$" && ls -l /proc/$pid/fd | grep -q "agent.jsonl\$"'
    if [ "$archive" = yes ]; then
      wait_for 'ls -l /proc/$pid/fd | grep -q "agent.jsonl.orig.zst\$"'
    fi
  fi
  printf '{"n":3}\n' >&3
  exec 3>&-
  for _ in $(seq 1000); do kill -0 "$pid" 2>/dev/null || break; sleep 0.01; done
  wait "$pid" || fail "smart-tee exited with $?: $(cat "$dir/stderr")"
  [ "$(cat "$dir/agent.jsonl.1")" = $'{"n":1}\n{"n":2}' ] || fail "rotated log: $(cat "$dir/agent.jsonl.1")"
  [ "$(cat "$dir/agent.jsonl")" = '{"n":3}' ] || fail "new log: $(cat "$dir/agent.jsonl")"
  if [ "$archive" = yes ]; then
    original_is "$dir/agent.jsonl.1" 1 '{"n":1}'
    original_is "$dir/agent.jsonl.1" 2 '{"n":2}'
    original_is "$dir/agent.jsonl" 1 '{"n":3}'
  fi
  if [ "$mode" = copytruncate ]; then
    # smart-tee says it saw the log truncated when it numbers the archive by it.
    if [ "$archive" = yes ]; then
      grep -q "was truncated" "$dir/stderr" || fail "stderr: $(cat "$dir/stderr")"
    fi
  else
    [ ! -s "$dir/stderr" ] || fail "stderr: $(cat "$dir/stderr")"
  fi
  echo "logrotate ($mode, archive: $archive): ok"
}

check create no
check create yes
check copytruncate no
check copytruncate yes
echo "logrotate: ok (create and copytruncate, with and without an archive: lines and originals of both logs)"
