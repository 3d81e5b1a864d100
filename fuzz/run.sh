#!/usr/bin/env bash
# Runs every fuzz target for N seconds each (default 60), seeded from the test fixtures, the
# sample stream and the real corpus, and ends with a table of each target's runs and runs a
# second. Usage: fuzz/run.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-60}"; shift || true
table=()
targets=("$@"); [ ${#targets[@]} -gt 0 ] || targets=(engine_line validity stream reduce mcp_request redact_surfaces readers)
corpus_src="${SMART_TEE_CORPUS:-../tests/data/real}"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t"
  # Seeds: lines of the real corpus and the sample (each cut to 16 KiB), and a few hostile ones.
  n=0
  for f in "$corpus_src"/*.jsonl ../samples/*.jsonl; do
    [ -f "$f" ] || continue
    while IFS= read -r line && [ $n -lt 400 ]; do
      printf '\x00\x10%s' "${line:0:16384}" > "corpus/$t/seed-$n"; n=$((n+1))
    done < "$f"
  done
  printf '\x00\x00[[[[[[[[[[{"a":"\\ud83d\\ude00\\n"}]]]]]]]]]]' > "corpus/$t/seed-deep"
  printf '\x00\x00\xef\xbb\xbf{"x":1e400,"y":-0}\r\n\xff\xfe NaN\n' > "corpus/$t/seed-odd"
  # Giant arrays of integers, read sixty-four bytes at a time past the first 128 elements.
  { printf '\xff\x00{"ids":['; seq -s, -50 400 | tr -d '\n'; printf '],"d":[0'
    seq -f ', %g' -300 300 | tr -d '\n'; printf ']}'; } > "corpus/$t/seed-integers"
  # Giant arrays of small containers, read a run at a time past the first 128 elements.
  { printf '\xff\x00{"items":[{}'; for i in $(seq 300); do printf ',{"n":%d,"t":[%d, "x"]}' "$i" "$i"; done
    printf '],"u":[[]'; for i in $(seq 200); do printf ', [ %d ]' "$i"; done; printf ']}'; } \
    > "corpus/$t/seed-containers"
  if [ "$t" = mcp_request ]; then
    # JSON-RPC requests for each tool (the target's root holds a.jsonl, d/b.log, notes.txt).
    rpc='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":'
    printf '%s"read_log","arguments":{"path":"a.jsonl","format":"json","max_tokens":100,"tail":2}}}\n' "$rpc" > "corpus/$t/seed-read"
    printf '%s"log_summary","arguments":{"path":"d/b.log"}}}\n%s"list_logs","arguments":{}}}\n' "$rpc" "$rpc" > "corpus/$t/seed-summary"
    printf '%s"wait_for_log","arguments":{"path":"a.jsonl","timeout_seconds":1}}}\n{"jsonrpc":"2.0","id":"p","method":"ping"}\n' "$rpc" > "corpus/$t/seed-wait"
  fi
  if [ "$t" = readers ]; then
    # Whole logs (the first lines of each file, up to 16 KiB): plain in text, jsonl and json;
    # compressed by the target (gzip: encoding 4, zstd: 5) with --summary; gzip and zstd files.
    # The first byte is the encoding, the second the view (see fuzz_targets/readers.rs).
    k=0
    for f in "$corpus_src"/*.jsonl ../samples/*.jsonl; do
      [ -f "$f" ] || continue
      { head -n 40 "$f" | head -c 16000 > "corpus/$t/.log"; } || true  # head -c ends the pipe early
      for p in '\x00\x00' '\x00\x11' '\x00\x02' '\x04\x04' '\x05\x06' '\x24\x40' '\x0f\x80'; do
        { printf "$p"; cat "corpus/$t/.log"; } > "corpus/$t/log-$k"; k=$((k+1))
      done
      if command -v gzip >/dev/null; then
        { printf '\x00\x00'; gzip -c "corpus/$t/.log"; } > "corpus/$t/log-$k"; k=$((k+1))
      fi
      if command -v zstd >/dev/null; then
        { printf '\x00\x04'; zstd -qc "corpus/$t/.log"; } > "corpus/$t/log-$k"; k=$((k+1))
      fi
    done
    rm -f "corpus/$t/.log"
  fi
  echo "== $t for ${secs}s"
  # A finding stops only its own target; the others still run. Findings land in artifacts/$t.
  # With GNU time, the CPU seconds too: on a shared machine, runs a CPU second say more than
  # runs a second.
  timer=(); rm -f "corpus/$t.cpu"
  [ -x /usr/bin/time ] && timer=(/usr/bin/time -f '%U %S' -o "corpus/$t.cpu")
  if "${timer[@]}" cargo +nightly fuzz run "$t" "corpus/$t" -- -max_total_time="$secs" -max_len=16384 \
    -timeout=10 -rss_limit_mb=4096 > "corpus/$t.log" 2>&1; then
    grep -E '^Done' "corpus/$t.log"
    result="ok"
  else
    echo "!! $t failed: see fuzz/corpus/$t.log and fuzz/artifacts/$t"; status=1
    result="FAILED"
  fi
  # libFuzzer's last words: `Done N runs in S second(s)`; after a finding, its last status line
  # (`#N ... exec/s: R`).
  done_line=$(grep -E '^Done [0-9]+ runs in [0-9]+ second' "corpus/$t.log" | tail -n 1 || true)
  if [ -n "$done_line" ]; then
    runs=$(echo "$done_line" | awk '{print $2}'); took=$(echo "$done_line" | awk '{print $5}')
    rate=$(( runs / (took > 0 ? took : 1) ))
  else
    last=$(grep -E '^#[0-9]+.*exec/s: [0-9]+' "corpus/$t.log" | tail -n 1 || true)
    runs=$(echo "$last" | sed -nE 's/^#([0-9]+).*/\1/p'); took="?"
    rate=$(echo "$last" | sed -nE 's/.*exec\/s: ([0-9]+).*/\1/p')
  fi
  cpu_rate="?"
  if [ -s "corpus/$t.cpu" ] && [ -n "${runs:-}" ]; then
    cpu_rate=$(awk -v r="$runs" 'END { c = $1 + $2; if (c > 0) printf "%d", r / c; else print "?" }' \
      "corpus/$t.cpu")
  fi
  table+=("$(printf '%-16s %12s %8s %10s %12s  %s' "$t" "${runs:-?}" "$took" "${rate:-?}" \
    "$cpu_rate" "$result")")
done
echo
printf '%-16s %12s %8s %10s %12s  %s\n' target runs seconds 'runs/s' 'runs/CPU-s' result
printf '%s\n' "${table[@]}"
exit "${status:-0}"
