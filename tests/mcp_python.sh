#!/usr/bin/env bash
# `smart-tee mcp` against the official Python MCP SDK (PyPI `mcp`), in a virtual environment this
# script creates under target/. Run by .ci/run. Needs python3 with venv, and PyPI.
# Usage: tests/mcp_python.sh [SMART_TEE]
set -euo pipefail
cd "$(dirname "$0")/.."
st="$(realpath "${1:-target/release/smart-tee}")"
venv="target/mcp-venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import mcp' 2> /dev/null; then
  if ! "$venv/bin/pip" install --quiet --disable-pip-version-check 'mcp>=1.10'; then
    echo "NOTE: could not install the Python MCP SDK from PyPI: the Python client check was NOT run" >&2
    exit 0
  fi
fi
root="$(mktemp -d)"; trap 'rm -rf "$root"' EXIT
mkdir -p "$root/logs"
cp tests/data/real/*.jsonl "$root/logs/"
echo '{"type":"secret"}' > "$root/outside.jsonl"
timeout 300 "$venv/bin/python" tests/mcp/client.py "$st" "$root/logs"
