#!/usr/bin/env bash
# Stress, not a test (it depends on timing by design): kill -9 smart-tee --archive at random
# moments while it writes a log and an archive, appending run after run to the same pair
# (each run is a different part of the input, so a wrong original would show). After each
# kill: `-a` repairs the pair (the log's torn line, the archive's torn record), `zstd -t`
# passes when zstd is installed, and sampled log lines read back, through --view --original,
# either their exact input line or a clear "no original" (a line the kill kept out of the
# archive): never another line. The test suite provokes each state on purpose
# (tests/it/archive.rs: a_torn_last_record_is_cut_back_on_append and the rest).
# Usage: benches/stress_archive.sh [TRIES]     (default 20; ST=path/to/smart-tee for another build)
set -euo pipefail
cd "$(dirname "$0")/.."
tries="${1:-20}"
work="${TMPDIR:-/tmp}/smart-tee-stress-archive"; mkdir -p "$work"
cargo build --release -q --bin smart-tee --examples
st="${ST:-$PWD/target/release/smart-tee}"
input="$work/input.jsonl"
[ -s "$input" ] || target/release/examples/gen_corpus 18M 11 > "$input"
log="$work/k.log"; archive="$work/k.log.orig.zst"; rm -f "$log" "$archive"
lost=0; checked=0
for i in $(seq "$tries"); do
  # Run i gets its own marker on every line, so that each log line says which input line it is.
  sed "s/^{/{\"run\":$i,\"at\":\"stress\",/" "$input" > "$work/run.jsonl"
  SMART_TEE_ARCHIVE=1 "$st" -a -b 1024 "$log" < "$work/run.jsonl" > /dev/null &
  pid=$!
  sleep "0.0$((RANDOM % 9 + 1))"
  kill -9 "$pid" 2> /dev/null || true
  wait "$pid" 2> /dev/null || true
  SMART_TEE_ARCHIVE=1 "$st" -a "$log" < /dev/null
  if command -v zstd > /dev/null; then
    zstd -q -t "$archive" || { echo "try $i: zstd -t fails after -a" >&2; exit 1; }
  fi
  total=$(wc -l < "$log")
  [ "$total" -gt 0 ] || continue
  for _ in 1 2 3 4 5; do
    n=$(( (RANDOM * 32768 + RANDOM) % total + 1 ))
    if "$st" --view --original --line "$n" "$log" > "$work/orig" 2> "$work/err"; then
      # The original must be an input line of the run its log line came from, at that place.
      head -c 200 "$work/orig" | grep -q '^{"run":[0-9]*,"at":"stress",' \
        || { echo "try $i: line $n: not an input line" >&2; exit 1; }
      run=$(head -c 40 "$work/orig" | sed 's/^{"run":\([0-9]*\),.*/\1/')
      sed -n "${n}p" "$log" | head -c 40 | grep -q "^{\"run\":$run," \
        || { echo "try $i: line $n: the original is from another run than the log line" >&2; exit 1; }
      grep -qxF -f "$work/orig" "$work/run.jsonl" 2> /dev/null || [ "$run" != "$i" ] \
        || { echo "try $i: line $n: the original is not in the input" >&2; exit 1; }
      checked=$((checked + 1))
    elif grep -q "has no original" "$work/err"; then
      lost=$((lost + 1))
    else
      echo "try $i: line $n: $(cat "$work/err")" >&2; exit 1
    fi
  done
done
echo "stress_archive: $tries kills, $checked originals read back right, $lost lines the kills kept out of the archive (said so)"
