#!/usr/bin/env bash
# The archive read by the stock zstd command: the real corpus through `smart-tee --archive`,
# then `zstd -t` (every frame and checksum) and `zstd -dc` (exactly what stdout received).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q --bin smart-tee
st="$PWD/target/release/smart-tee"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cat tests/data/real/*.jsonl > "$work/input"
printf 'no final newline \377\000' >> "$work/input"
for budget in 1024 5120; do
  "$st" -b "$budget" --archive "$work/a.zst" "$work/log" < "$work/input" > "$work/out"
  cmp "$work/input" "$work/out"
  zstd -q -t "$work/a.zst"
  zstd -q -dc "$work/a.zst" | cmp - "$work/out"
  echo "archive_zstd: budget $budget: zstd -dc gives stdout back ($(wc -c < "$work/a.zst") of $(wc -c < "$work/input") bytes)"
done
