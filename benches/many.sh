#!/usr/bin/env bash
# Many at once: N smart-tee processes on N streams at the same time, against N tees, as when a
# benchmark or fuzz run starts dozens of agents, each piped through its own smart-tee.
#   cat stream_i | smart-tee log_i | cat > /dev/null     (i = 1..N, all started together)
#   cat stream_i | tee log_i | cat > /dev/null
# Each stream is a generated stream-json corpus (`gen_corpus SIZE SEED`, a different seed each).
# Prints, for each side, the wall time of the whole batch, the CPU seconds (user + system) of
# the N smart-tee or tee processes, and the sum and the largest of their peak RSS. CPU time is
# bash's `time` of each process (getrusage, to the millisecond); the RSS comes from a second
# batch under GNU time, whose `%U %S` round each process to 10 ms: more than a 21 MB stream
# costs either tool.
# Usage: benches/many.sh [N] [SIZE] [REPS]     (defaults: 32, 20M, 3; medians of REPS)
# BIN=path/to/smart-tee measures another build (a worktree's, for a before/after pair).
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-32}"; size="${2:-20M}"; reps="${3:-3}"
work="${TMPDIR:-/tmp}/smart-tee-many"; mkdir -p "$work"
cargo build --release -q --bin smart-tee --examples
st="${BIN:-$PWD/target/release/smart-tee}"
for ((i = 0; i < n; i++)); do
  [ -s "$work/stream-$size-$i.jsonl" ] ||
    target/release/examples/gen_corpus "$size" "$((100 + i))" > "$work/stream-$size-$i.jsonl"
done

# Runs the batch of side $1 (a command taking the log path) twice: once timed by bash's `time`
# (wall, CPU), once under GNU time (peak RSS). Appends "wall cpu rss_sum rss_max" to
# $work/$2.times.
batch() {
  local cmd="$1" name="$2" t0 t1 i
  rm -f "$work"/cpu-* "$work"/rss-* "$work"/log-*
  t0=$(date +%s.%N)
  for ((i = 0; i < n; i++)); do
    bash -c "TIMEFORMAT='%3U %3S'; cat $work/stream-$size-$i.jsonl |
      { time $cmd $work/log-$i 2> /dev/null; } 2> $work/cpu-$i | cat > /dev/null" &
  done
  wait
  t1=$(date +%s.%N)
  rm -f "$work"/log-*
  for ((i = 0; i < n; i++)); do
    bash -c "cat $work/stream-$size-$i.jsonl |
      /usr/bin/time -f '%M' -o $work/rss-$i $cmd $work/log-$i | cat > /dev/null" &
  done
  wait
  local cpu rss
  cpu=$(cat "$work"/cpu-* | awk '{ c += $1 + $2 } END { printf "%.3f", c }')
  rss=$(cat "$work"/rss-* | awk '{ s += $1; if ($1 > m) m = $1 } END { printf "%.0f %.0f", s, m }')
  echo "$(echo "$t1 - $t0" | bc) $cpu $rss" >> "$work/$name.times"
}

rm -f "$work"/*.times
for ((r = 0; r < reps; r++)); do
  batch "$st" smart-tee
  batch tee tee
done
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "== $n streams of $(du -h "$work/stream-$size-0.jsonl" | cut -f1) at once, $reps runs, medians"
for name in smart-tee tee; do
  sort -n -k2 "$work/$name.times" | awk -v name="$name" '{ w[NR]=$1; c[NR]=$2; s[NR]=$3; m[NR]=$4 }
    END { k = int((NR + 1) / 2);
      printf "%-9s wall %.2f s   CPU %.3f s   peak RSS: sum %.0f MiB, largest %.1f MiB\n",
        name, w[k], c[k], s[k] / 1024, m[k] / 1024 }'
done
med() { sort -n -k2 "$work/$1.times" | awk '{ c[NR]=$2 } END { print c[int((NR + 1) / 2)] }'; }
echo "CPU ratio smart-tee/tee: $(echo "scale=2; $(med smart-tee) / $(med tee)" | bc)"
