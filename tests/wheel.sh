#!/usr/bin/env bash
# The Python wheel (pyproject.toml, maturin, bindings = "bin"): built, installed in a fresh
# virtual environment, and run there on a stream. Needs python3 and PyPI for maturin: without
# them it says so loudly and exits 0 (the Rust build is tested elsewhere).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! python3 -m venv "$work/build" 2> /dev/null; then
  echo "NOTE: python3 cannot make a virtual environment: the wheel was not built (tests/wheel.sh)"
  exit 0
fi
if ! timeout 300 "$work/build/bin/pip" install -q 'maturin>=1.5,<2' > "$work/pip.log" 2>&1; then
  echo "NOTE: maturin could not be installed from PyPI (unreachable?): the wheel was not built"
  tail -3 "$work/pip.log"
  exit 0
fi
timeout 1800 "$work/build/bin/maturin" build --release --quiet -o "$work/wheels"
wheel=$(ls "$work"/wheels/smart_tee-*.whl)

python3 -m venv "$work/use"
"$work/use/bin/pip" install -q --no-index "$wheel"
bin="$work/use/bin/smart-tee"
version=$("$bin" --version)
[ "$version" = "smart-tee $(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)" ] \
  || { echo "FAIL: the wheel's smart-tee says '$version'"; exit 1; }

out=$(printf '{"a":1}\nnot json\n' | "$bin" "$work/w.log")
[ "$out" = $'{"a":1}\nnot json' ] || { echo "FAIL: stdout through the wheel's smart-tee: $out"; exit 1; }
[ "$(cat "$work/w.log")" = $'{"a":1}\n{"type":"non_json","text":"not json"}' ] \
  || { echo "FAIL: the log through the wheel's smart-tee:"; cat "$work/w.log"; exit 1; }
echo "wheel: $(basename "$wheel") installs and runs ($version)"
