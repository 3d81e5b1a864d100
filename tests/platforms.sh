#!/usr/bin/env bash
# Checks that smart-tee (the library and the binary) builds for the platforms it is expected to
# build on but that CI cannot run: macOS on Apple silicon and on Intel. `cargo check` compiles
# every Rust line for the target; nothing is linked, so zstd's C sources, which need the macOS
# SDK, are "compiled" by tests/platforms/fake-cc into empty objects (that C library is the one
# part left out of the check). Needs `rustup target add` to work (the Rust registry); says so
# and passes when it cannot.
set -euo pipefail
cd "$(dirname "$0")/.."
fake="$PWD/tests/platforms/fake-cc"
for target in aarch64-apple-darwin x86_64-apple-darwin; do
  if ! rustup target list --installed 2>/dev/null | grep -qx "$target" \
      && ! rustup target add "$target" >/dev/null 2>&1; then
    echo "platforms.sh: SKIPPED $target: rustup cannot add its standard library here" >&2
    continue
  fi
  var="${target//-/_}"
  echo "== cargo check --target $target"
  env "CC_$var=$fake" "AR_$var=ar" RUSTFLAGS="-D warnings" \
    cargo check --quiet --target "$target" --lib --bins
done
