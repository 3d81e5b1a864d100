#!/usr/bin/env bash
# Stress, not a test (it depends on timing by design):
# 1. stop signals on a slow stdout: smart-tee logs `{"i":N}` lines while its stdout (a pipe, a
#    socket, or a pipe behind --stdout-max-line-bytes) is read slowly, and is sent SIGTERM,
#    SIGINT, SIGHUP or SIGQUIT at a random moment: every complete line stdout got must be in the
#    log, in order, and the status must be 128 + the signal;
# 2. kill -9 smart-tee at random moments while it logs a generated stream, then open the log
#    again with `-a` (which keeps a torn last line as a `torn` record) and check that every line
#    of it is whole, valid JSON;
# 3. the same with three writers on one log.
# Half the runs of 1 and 2 also write an archive (--archive): after a stop signal it decodes
# (`zstd -dc`) to at least every complete line stdout got; after kill -9 and `-a`, `zstd -t`
# passes, it decodes to a prefix of the input, and a sampled log line reads back its input line
# or says it has no original (benches/stress_archive.sh kills runs appended to one pair).
# The test suite provokes the same states on purpose (tests/it/writing.rs:
# a_stop_signal_on_a_slow_stdout_loses_no_line_stdout_got; tests/it/faults.rs:
# a_torn_last_line_becomes_a_record_when_appending,
# a_running_writer_does_not_glue_its_line_onto_one_torn_meanwhile and the rest).
# Usage: benches/stress_kill.sh [TRIES]     (default 40; ST=path/to/smart-tee to try another build)
set -euo pipefail
cd "$(dirname "$0")/.."
tries="${1:-40}"
work="${TMPDIR:-/tmp}/smart-tee-stress"; mkdir -p "$work"
cargo build --release -q --bin smart-tee --examples
st="${ST:-$PWD/target/release/smart-tee}"
input="$work/input.jsonl"
[ -s "$input" ] || target/release/examples/gen_corpus 18M 7 > "$input"
command -v python3 > /dev/null || { echo "python3 is needed"; exit 1; }

python3 - "$st" "$work" "$tries" <<'PY'
import os, random, shutil, signal, socket, subprocess, sys, time
st, work, tries = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = b"".join(b'{"i":%d}\n' % i for i in range(2_000_000))
runs = lines_checked = archived = 0
zstd = shutil.which("zstd")
for t in range(tries):
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        kind = random.choice(["pipe", "socket", "capped pipe"])
        log = os.path.join(work, "sig.log")
        if os.path.exists(log):
            os.remove(log)
        if kind == "socket":
            ours, theirs = socket.socketpair()
            ours_fd, theirs_fd = ours.detach(), theirs.detach()
        else:
            ours_fd, theirs_fd = os.pipe()
        archive = os.path.join(work, "sig.orig.zst") if zstd and random.random() < 0.5 else None
        if archive and os.path.exists(archive):
            os.remove(archive)
        args = [st] + (["--stdout-max-line-bytes", "100000"] if kind == "capped pipe" else []) \
            + (["--archive", archive] if archive else []) + [log]
        child = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=theirs_fd,
                                 stderr=subprocess.DEVNULL, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        os.close(theirs_fd)
        # Input arrives in pieces, as from an agent; stdout is read slowly, 4 KiB a millisecond.
        import threading
        def feed():
            try:
                for at in range(0, len(data), 65536):
                    child.stdin.write(data[at:at + 65536]); child.stdin.flush()
            except (BrokenPipeError, ValueError):
                pass
        feeder = threading.Thread(target=feed, daemon=True); feeder.start()
        got = bytearray()
        deadline = time.monotonic() + random.uniform(0.05, 1.0)
        while time.monotonic() < deadline:
            got += os.read(ours_fd, 4096)
            time.sleep(0.001)
        child.send_signal(sig)
        while True:
            chunk = os.read(ours_fd, 1 << 20)
            if not chunk:
                break
            got += chunk
        os.close(ours_fd)
        status = child.wait(timeout=120)
        try:
            child.stdin.close()
        except BrokenPipeError:
            pass
        assert status == 128 + sig, f"{sig.name} on a {kind}: status {status}"
        complete = bytes(got[:got.rfind(b"\n") + 1]).split(b"\n")[:-1]
        logged = open(log, "rb").read().split(b"\n")
        assert logged[:len(complete)] == complete, (
            f"{sig.name} on a {kind}: stdout got {len(complete)} lines, the log holds "
            f"{sum(1 for _ in zip(logged, complete))} of them")
        if archive:
            whole = bytes(got[:got.rfind(b"\n") + 1])
            kept = subprocess.run(["zstd", "-dcq", archive], capture_output=True, check=True).stdout
            assert kept[:len(whole)] == whole, (
                f"{sig.name} on a {kind}: the archive lacks lines stdout got")
            archived += 1
        runs += 1
        lines_checked += len(complete)
print(f"{runs} stop signals on a slow stdout: every one of the {lines_checked} lines stdout got was in the log"
      f" (and in the archive, in {archived} runs with --archive)")
PY

torn=0; archived=0
for i in $(seq "$tries"); do
  log="$work/k.log"; rm -f "$log" "$log.orig.zst"
  # Every other run with an archive beside the log (SMART_TEE_ARCHIVE puts it at LOG.orig.zst).
  export SMART_TEE_ARCHIVE=$((i % 2))
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
  # Every line must be JSON (a torn one kept as a `torn` record): at budget 0, a line that is not
  # JSON would become a non_json record.
  if SMART_TEE_ARCHIVE=0 "$st" -b 0 "$work/check.log" < "$log" > /dev/null && grep -q '"type":"non_json"' "$work/check.log"; then
    echo "try $i: a line of the log is not JSON" >&2; exit 1
  fi
  if [ "$SMART_TEE_ARCHIVE" = 1 ] && [ -s "$log" ]; then
    archived=$((archived + 1))
    if command -v zstd > /dev/null; then
      zstd -q -t "$log.orig.zst" || { echo "try $i: zstd -t fails after -a" >&2; exit 1; }
      kept=$(zstd -dcq "$log.orig.zst" | wc -c)
      cmp -s -n "$kept" <(zstd -dcq "$log.orig.zst") "$input" \
        || { echo "try $i: the archive is not a prefix of the input" >&2; exit 1; }
    fi
    n=$(( (RANDOM % $(wc -l < "$log")) + 1 ))
    if "$st" --view --original --line "$n" "$log" > "$work/orig" 2> "$work/err"; then
      python3 -c 'import sys; line = open(sys.argv[1], "rb").read()[:-1]
sys.exit(b"\n" + line + b"\n" not in b"\n" + open(sys.argv[2], "rb").read())' "$work/orig" "$input" \
        || { echo "try $i: line $n: its original is not an input line" >&2; exit 1; }
    elif ! grep -q "has no original" "$work/err"; then
      echo "try $i: line $n: $(cat "$work/err")" >&2; exit 1
    fi
  fi
done
unset SMART_TEE_ARCHIVE
echo "$tries kills: $torn left a torn last line, every one repaired by the next -a; no invalid line;" \
  "$archived archives after kill -9 and -a pass zstd -t, are a prefix of the input, give input lines back"

# Shared logs: three writers append to one log (`-a`), one of them (logging whole lines, `-b 0`,
# so that its writes are long and a kill often lands inside one) is killed at a random moment,
# the other two go on. The killed one's torn line must be ended by the next write of another,
# never glued onto: the only lines that are not JSON are torn ones (a start of one of the
# victim's lines), and no line is blank.
command -v python3 > /dev/null || { echo "python3 is needed for the shared-log check"; exit 1; }
"$st" -b 0 "$work/whole.log" < "$input" > /dev/null
shared=0
for i in $(seq "$tries"); do
  log="$work/s.log"; rm -f "$log"
  # Five times the stream each, so that the kill lands while all three write.
  five() { for _ in 1 2 3 4 5; do cat "$input"; done; }
  five | "$st" -a "$log" > /dev/null & a=$!
  five | "$st" -a "$log" > /dev/null & b=$!
  five | "$st" -b 0 -a "$log" > /dev/null & c=$!
  sleep "0.$((RANDOM % 3))$((RANDOM % 9 + 1))"
  kill -9 "$c" 2> /dev/null || true
  wait "$a" "$b" 2> /dev/null || true
  wait "$c" 2> /dev/null || true
  "$st" -a "$log" < /dev/null # ends a line torn after the others finished
  torn=$(python3 - "$log" "$work/whole.log" <<'PY'
import json, sys
lines = open(sys.argv[1], "rb").read().split(b"\n")
assert lines[-1] == b"", "the log ends mid-line"
whole = set(open(sys.argv[2], "rb").read().split(b"\n"))
torn = 0
for n, line in enumerate(lines[:-1], 1):
    assert line.strip(), f"line {n} is blank"
    try:
        json.loads(line)
    except ValueError:
        assert any(w.startswith(line) for w in whole), f"line {n} is neither JSON nor torn: {line[:200]!r}"
        torn += 1
print(torn)
PY
) || { echo "shared try $i failed" >&2; exit 1; }
  shared=$((shared + torn))
done
echo "$tries shared logs with a writer killed: no blank line, nothing glued; $shared torn lines ended by the next write"
