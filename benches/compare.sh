#!/usr/bin/env bash
# Whole-binary comparison, all in one run, alternating the commands:
#   smart-tee LOG < corpus | cat > /dev/null
#   tee LOG < corpus | cat > /dev/null
#   cat corpus | cat > /dev/null            (the pipe floor)
# and the same with stdin a pipe (`cat corpus | smart-tee LOG | cat`, floor `cat | cat | cat`),
#   tee FIFO < corpus | cat, jq truncation recipe < FIFO > LOG   (where jq is installed; timed
#                                            until jq has finished)
#   smart-tee --progress LOG < corpus 2> FILE | cat > /dev/null
#   smart-tee --redact LOG < corpus | cat > /dev/null
#   the same with a hundred secret-named variables in the environment (redacted by value)
#   smart-tee --archive LOG.orig.zst LOG < INPUT | cat > /dev/null   (every set, and the 256 MiB
#                                            string line; with the archive's size)
# on a generated 200 MB stream-json corpus; then one million 300-byte lines, giant lines of
# every shape synth.rs writes (256 MiB and 1 GiB; smart-tee and tee alternating, REPS runs
# each), and the latency of a line when input pauses (smart-tee's, then tee's). Prints median
# wall time and peak RSS of each.
# Every run writes a new log, after a `sync` (what the runs before wrote goes to disk then, not
# during this run): the last run's log is removed before the clock starts, since
# overwriting a 287 MB log costs any tool file system work the pipe floor never does (0.03-0.06 s
# to truncate it and, on ext4, a flush at close of 0.09 s: see the README's Performance).
# Then input that is not JSON, 100 MiB each: text lines with ANSI colour codes and accents (a
# build or an agent run without its JSON flag), and random bytes (a stray binary dump).
# Usage: benches/compare.sh [REPS] [SIZE]     (defaults: 5, 200M)
# GIANT=0 leaves out the giant lines and the latency.
# BIN=path/to/smart-tee measures another build (a worktree's, for a before/after pair);
# BASE=path/to/smart-tee adds that build's --archive row, in the same alternation.
# ONLY=non-json runs the not-JSON rows alone. ONLY=archive runs the --archive rows alone (smart-tee
# with and without --archive beside tee and the pipe floor, on the corpus and the million short
# lines; the 256 MiB string line; the latency with and without --archive). ONLY=progress runs
# smart-tee with and without --progress (on stderr, into a file), alternating, on the corpus alone.
# ONLY=run runs `smart-tee run LOG -- cat INPUT | cat` (and with --stall-after and --max-cost, which
# read every log line as --summary does) beside the pipe form `cat INPUT | smart-tee LOG | cat`,
# alternating, on the corpus and the million short lines.
# ONLY=redact runs --redact, with 100 secrets, and --archive --redact beside the plain runs (corpus, short lines).
# ONLY=filters weighs each of --redact's filters in front of aho-corasick (#49): --redact with
# 100 secrets, with all filters and with each switched off (SMART_TEE_REDACT_SKIP=trigrams,
# grams, scout, and all three), alternating, beside the run without --redact, on the corpus,
# ANSI text and the short lines; each over all filters (above 1: the filter buys that much).
# SIMD=avx2 (portable, sse2, avx2, avx512) runs every smart-tee of the script on that SIMD path
# (SMART_TEE_SIMD, capped at what the CPU has). ONLY=simd runs each path side by side instead,
# alternating, with tee, on text, random bytes, the 256 MiB escapes line and the corpus
# (SIMDS="default portable sse2 avx2 avx512" by default; "default" is the dispatch's own choice).
# BIN=path with target/release/examples/gen_corpus already built skips the release build.
set -euo pipefail
cd "$(dirname "$0")/.."
reps="${1:-5}"; size="${2:-200M}"
work="${TMPDIR:-/tmp}/smart-tee-compare"; mkdir -p "$work"
if [ -z "${BIN:-}" ] || [ ! -x target/release/examples/gen_corpus ]; then
  cargo build --release -q --bin smart-tee --examples
fi
st="${BIN:-$PWD/target/release/smart-tee}"
if [ -n "${SIMD:-}" ]; then export SMART_TEE_SIMD="$SIMD"; echo "SMART_TEE_SIMD=$SIMD"; fi
corpus="$work/corpus-$size.jsonl"
[ -s "$corpus" ] || target/release/examples/gen_corpus "$size" 42 > "$corpus"
tiny="$work/tiny.jsonl"
[ -s "$tiny" ] || target/release/examples/gen_corpus tiny 1000000 > "$tiny"

# Runs "$2" (a shell pipeline) once; appends "wall_seconds peak_rss_kb" to $work/$1.times.
# Wall time is the whole pipeline's; the RSS is the first command's, measured by GNU time.
measure() {
  local name="$1" cmd="$2" t0 t1
  local log
  for log in st.log tee.log jq.log st.zst; do
    case "$cmd" in *"$work/$log"*) rm -f "$work/$log" ;; esac
  done
  # The last runs' logs written back now, not by the kernel's flusher during this run.
  sync
  t0=$(date +%s.%N)
  bash -c "$cmd"
  t1=$(date +%s.%N)
  echo "$(echo "$t1 - $t0" | bc) $(cat "$work/rss")" >> "$work/$name.times"
}
# The median of the numbers in file $1 (the first field of each line).
median() { sort -n "$1" | awk '{t[NR]=$1} END {print t[int((NR+1)/2)]}'; }
T="/usr/bin/time -f %M -o $work/rss"
# A hundred secret-named variables, values of 16 to 64 bytes, for --redact by value.
secrets="$work/secrets.env"
[ -s "$secrets" ] || for i in $(seq 1 100); do
  echo "BENCH_${i}_API_KEY=$(head -c 48 /dev/urandom | base64 | tr -d '/+=\n' | head -c $((16 + i % 49)))"
done > "$secrets"
jq_prog='walk(if type == "string" and (.|utf8bytelength) > 2000 then .[:1000] + "[TRUNCATED]" + .[-1000:] else . end)'

# run_set INPUT LABEL [piped]: with "piped", stdin is a pipe too (`cat INPUT | smart-tee LOG |
# cat`, as behind an agent), and the floor is `cat INPUT | cat | cat`.
run_set() {
  local input="$1" label="$2" feed="" from="< $1" floor="$T cat $1 | cat > /dev/null"
  if [ "${3:-}" = piped ]; then
    feed="cat $input | "; from=""; floor="cat $input | $T cat | cat > /dev/null"
    label="$label, piped in"
  fi
  rm -f "$work"/*.times
  for ((i = 0; i < reps; i++)); do
    measure smart-tee "$feed$T $st $work/st.log $from | cat > /dev/null"
    # --progress on standard error, into a file as in CI.
    [ -z "${ONLY:-}" ] || [ "${ONLY:-}" = progress ] && measure progress "$feed$T $st --progress $work/st.log $from 2> $work/progress.txt | cat > /dev/null"
    [ "${ONLY:-}" = progress ] && continue
    measure tee "$feed$T tee $work/tee.log $from | cat > /dev/null"
    if [ -n "${BASE:-}" ]; then
      measure archive-base "$feed$T $BASE --archive $work/st.zst $work/st.log $from | cat > /dev/null"
    fi
    measure archive "$feed$T $st --archive $work/st.zst $work/st.log $from | cat > /dev/null"
    measure pipe-floor "$floor"
    [ "${ONLY:-}" = archive ] && continue
    measure redact "$feed$T $st --redact $work/st.log $from | cat > /dev/null"
    measure redact-env "$feed$T env $(tr '\n' ' ' < $secrets) $st --redact $work/st.log $from | cat > /dev/null"
    measure archive-redact "$feed$T env $(tr '\n' ' ' < $secrets) $st --redact --archive $work/st.zst $work/st.log $from | cat > /dev/null"
    if [ "$label" = corpus ] && command -v jq > /dev/null && [ "$i" -lt 2 ]; then
      # jq reads a FIFO as a job of its own, waited for: a process substitution
      # (`tee >(jq …)`) is not waited for, and would run on into the next measurement.
      rm -f "$work/jq.fifo"; mkfifo "$work/jq.fifo"
      measure jq "jq -c '$jq_prog' < $work/jq.fifo > $work/jq.log & $T tee $work/jq.fifo < $input | cat > /dev/null; wait"
    fi
  done
  echo "== $label: $(du -h "$input" | cut -f1) input, $(wc -l < "$input") lines, $reps runs (jq: 2)"
  for name in smart-tee progress archive archive-base redact redact-env archive-redact tee pipe-floor jq; do
    [ -f "$work/$name.times" ] || continue
    sort -n "$work/$name.times" | awk -v n="$name" '{t[NR]=$1; r[NR]=$2} END {
      m = t[int((NR+1)/2)]; printf "%-11s median %.3f s   peak RSS %6.1f MiB\n", n, m, r[int((NR+1)/2)]/1024 }'
  done
  med() { median "$work/$1.times"; }
  [ -f "$work/progress.times" ] &&
    echo "--progress/without: $(echo "scale=3; $(med progress) / $(med smart-tee)" | bc)," \
         "$(wc -l < "$work/progress.txt") lines shown of $(wc -l < "$input")"
  [ "${ONLY:-}" = progress ] && return
  echo "ratios: smart-tee/tee $(echo "scale=2; $(med smart-tee) / $(med tee)" | bc)" \
       " smart-tee/pipe-floor $(echo "scale=2; $(med smart-tee) / $(med pipe-floor)" | bc)"
  echo "--archive/tee: $(echo "scale=2; $(med archive) / $(med tee)" | bc)," \
       "archive $(wc -c < "$work/st.zst") bytes, $(echo "scale=3; $(wc -c < "$work/st.zst") / $(wc -c < "$input")" | bc) of the input"
  if [ -f "$work/archive-base.times" ]; then
    echo "--archive/tee with BASE: $(echo "scale=2; $(med archive-base) / $(med tee)" | bc)"
  fi
  if [ -f "$work/redact.times" ]; then
    echo "--redact/without: $(echo "scale=2; $(med redact) / $(med smart-tee)" | bc)" \
         " with 100 secrets in the environment/without: $(echo "scale=2; $(med redact-env) / $(med smart-tee)" | bc)"
    echo "--archive --redact (100 secrets)/--archive: $(echo "scale=2; $(med archive-redact) / $(med archive)" | bc)"
  fi
  if [ "${label%%,*}" = tiny ]; then
    echo "lines per second through smart-tee: $(echo "1000000 / $(med smart-tee)" | bc)"
  fi
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
non_json() {
  local text="$work/text-100M.log" noise="$work/random-100M.bin"
  [ -s "$text" ] || target/release/examples/gen_corpus text 100M > "$text"
  [ -s "$noise" ] || target/release/examples/gen_corpus binary 100M > "$noise"
  run_set "$text" "not JSON: text with ANSI colours and accents"
  echo "log size: $(wc -c < "$work/st.log") bytes for $(wc -c < "$text") of input"
  run_set "$noise" "not JSON: random bytes"
  echo "log size: $(wc -c < "$work/st.log") bytes for $(wc -c < "$noise") of input"
}
if [ "${ONLY:-}" = non-json ]; then non_json; exit; fi
# ONLY=run: the tee path under `smart-tee run` against the pipe form it replaces.
run_mode() {
  local input="$1" label="$2"
  rm -f "$work"/*.times
  for ((i = 0; i < reps; i++)); do
    measure pipe-form "cat $input | $T $st $work/st.log | cat > /dev/null"
    # --agent-status: cat's 0 (the run's own status, 4 for a stream without a final event,
    # would add a line to GNU time's output file); the "died" line goes to /dev/null.
    measure run "$T $st run --agent-status $work/st.log -- cat $input 2> /dev/null | cat > /dev/null"
    measure run-limits "$T $st run --agent-status --stall-after 10m --max-cost 1000 $work/st.log -- cat $input 2> /dev/null | cat > /dev/null"
  done
  echo "== $label under smart-tee run: $(du -h "$input" | cut -f1) input, $(wc -l < "$input") lines, $reps runs"
  for name in pipe-form run run-limits; do
    sort -n "$work/$name.times" | awk -v n="$name" '{t[NR]=$1; r[NR]=$2} END {
      m = t[int((NR+1)/2)]; printf "%-11s median %.3f s   peak RSS %6.1f MiB\n", n, m, r[int((NR+1)/2)]/1024 }'
  done
  echo "ratios: run/pipe-form $(echo "scale=3; $(median "$work/run.times") / $(median "$work/pipe-form.times")" | bc)" \
       " run-limits/pipe-form $(echo "scale=3; $(median "$work/run-limits.times") / $(median "$work/pipe-form.times")" | bc)"
}
if [ "${ONLY:-}" = run ]; then run_mode "$corpus" corpus; run_mode "$tiny" tiny; exit; fi
# ONLY=simd: each SIMD path (SMART_TEE_SIMD) and tee, alternating, on each input that one of the
# paths' families serves; medians, and each path over the next simpler one and over tee.
simd_paths() {
  local simds="${SIMDS:-default portable sse2 avx2 avx512}" input label p prev=""
  echo "flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(sse2|avx2|avx512[a-z_0-9]*)$' | tr '\n' ' ')"
  local text="$work/text-100M.log" noise="$work/random-100M.bin" esc="$work/giant-escapes-256.jsonl"
  [ -s "$text" ] || target/release/examples/gen_corpus text 100M > "$text"
  [ -s "$noise" ] || target/release/examples/gen_corpus binary 100M > "$noise"
  [ -s "$esc" ] || target/release/examples/gen_corpus giant escapes 256M > "$esc"
  for input in "$text" "$noise" "$esc" "$corpus"; do
    cat "$input" > /dev/null
    rm -f "$work"/*.times
    for ((i = 0; i < reps; i++)); do
      for p in $simds; do
        if [ "$p" = default ]; then env=""; else env="SMART_TEE_SIMD=$p"; fi
        measure "simd-$p" "$T env $env $st $work/st.log < $input | cat > /dev/null"
      done
      measure tee "$T tee $work/tee.log < $input | cat > /dev/null"
    done
    echo "== $(basename "$input"): $(du -h "$input" | cut -f1), $reps runs each, alternating (medians)"
    prev=""
    for p in $simds; do
      m=$(median "$work/simd-$p.times")
      line="$(printf '%-9s %.3f s   /tee %.2f' "$p" "$m" "$(echo "$m / $(median "$work/tee.times")" | bc -l)")"
      if [ -n "$prev" ] && [ "$p" != default ] && [ "$prev" != default ]; then
        line="$line   /$prev $(printf '%.2f' "$(echo "$m / $(median "$work/simd-$prev.times")" | bc -l)")"
      fi
      echo "$line"
      prev="$p"
    done
    printf 'tee       %.3f s\n' "$(median "$work/tee.times")"
  done
}
if [ "${ONLY:-}" = simd ]; then simd_paths; exit; fi
# ONLY=filters: see the header.
redact_filters() {
  local text="$work/text-100M.log" input skip env
  [ -s "$text" ] || target/release/examples/gen_corpus text 100M > "$text"
  local skips="${SKIPS:-none trigrams grams scout trigrams,grams,scout}"
  for input in "$corpus" "$text" "$tiny"; do
    cat "$input" > /dev/null
    rm -f "$work"/*.times
    for ((i = 0; i < reps; i++)); do
      measure plain "$T $st $work/st.log < $input | cat > /dev/null"
      for skip in $skips; do
        measure "skip-$skip" "$T env SMART_TEE_REDACT_SKIP=$skip $(tr '\n' ' ' < $secrets) $st --redact $work/st.log < $input | cat > /dev/null"
      done
    done
    echo "== $(basename "$input"): $(du -h "$input" | cut -f1), $reps runs each, alternating (medians)"
    printf '%-24s %.3f s\n' "no --redact" "$(median "$work/plain.times")"
    for skip in $skips; do
      m=$(median "$work/skip-$skip.times")
      printf '%-24s %.3f s   /all filters %.2f   /no --redact %.2f\n' "skip $skip" "$m" \
        "$(echo "$m / $(median "$work/skip-none.times")" | bc -l)" "$(echo "$m / $(median "$work/plain.times")" | bc -l)"
    done
  done
}
if [ "${ONLY:-}" = filters ]; then redact_filters; exit; fi
if [ "${ONLY:-}" = progress ]; then run_set "$corpus" corpus; run_set "$corpus" corpus piped; exit; fi
# ONLY=redact: --redact, with 100 secrets, and with --archive, beside the plain runs (#46's costs).
if [ "${ONLY:-}" = redact ]; then run_set "$corpus" corpus; run_set "$tiny" tiny; exit; fi
if [ "${ONLY:-}" = archive ]; then
  run_set "$corpus" corpus
  run_set "$tiny" tiny
  giants="string:256"
else
  giants="string:1024 string:256 escapes:256 image:256 array:256 spaced:256 records:256 floats:256
    integers:256 deltas:256 strings:256 nested:256"
fi
[ "${ONLY:-}" = archive ] || {
run_set "$corpus" corpus
echo "log sizes: smart-tee $(du -h "$work/st.log" | cut -f1), tee $(du -h "$work/tee.log" | cut -f1)"
run_set "$corpus" corpus piped
run_set "$tiny" tiny
run_set "$tiny" tiny piped
non_json
}

[ "${GIANT:-1}" = 0 ] && exit 0
echo "== giant lines (one JSON line each, read once first; then smart-tee and tee on the same file,"
echo "   alternating, $reps runs each: medians)"
for spec in $giants; do
  kind="${spec%%:*}"; mib="${spec##*:}"
  giant="$work/giant-$kind-$mib.jsonl"
  [ -s "$giant" ] || target/release/examples/gen_corpus giant "$kind" "${mib}M" > "$giant"
  # Read once first, so that smart-tee, timed first, does not read it from disk and tee warm.
  cat "$giant" > /dev/null
  rm -f "$work"/giant-st.times "$work"/giant-tee.times
  for ((i = 0; i < reps; i++)); do
    rm -f "$work/tee.log"
    sync
    t0=$(date +%s.%N)
    /usr/bin/time -f %M -o "$work/rss" "$st" "$work/giant.log" < "$giant" | cat > /dev/null
    t1=$(date +%s.%N)
    tee "$work/tee.log" < "$giant" | cat > /dev/null
    t2=$(date +%s.%N)
    echo "$t1 - $t0" | bc >> "$work/giant-st.times"
    echo "$t2 - $t1" | bc >> "$work/giant-tee.times"
    if [ "$spec" = string:256 ]; then
      rm -f "$work/st.zst"; sync
      t0=$(date +%s.%N)
      /usr/bin/time -f %M -o "$work/rss-archive" "$st" --archive "$work/st.zst" "$work/giant.log" < "$giant" | cat > /dev/null
      t1=$(date +%s.%N)
      echo "$t1 - $t0" | bc >> "$work/giant-archive.times"
    fi
  done
  if [ "$spec" = string:256 ]; then
    printf "  --archive: %.2f s (tee %.2f s: %.2f of tee), peak RSS %3.0f MiB, archive %s bytes\n" \
      "$(median "$work/giant-archive.times")" "$(median "$work/giant-tee.times")" \
      "$(echo "scale=3; $(median "$work/giant-archive.times") / $(median "$work/giant-tee.times")" | bc)" \
      "$(echo "$(cat "$work/rss-archive") / 1024" | bc)" "$(wc -c < "$work/st.zst")"
    rm -f "$work/giant-archive.times"
  fi
  printf "%-8s %5d MiB: smart-tee %.2f s (tee %.2f s), peak RSS %3.0f MiB, log %5s bytes, record type %s\n" \
    "$kind" "$mib" "$(median "$work/giant-st.times")" "$(median "$work/giant-tee.times")" \
    "$(echo "$(cat "$work/rss") / 1024" | bc)" "$(wc -c < "$work/giant.log")" \
    "$(head -c 30 "$work/giant.log" | sed 's/^{"type":"\([a-z_]*\)".*/\1/')"
  rm -f "$work/tee.log"
done

echo "== latency (a line every 20 ms, to stdout and to the log: smart-tee, smart-tee --archive, smart-tee again, tee)"
target/release/examples/latency "$st" 200
