#!/usr/bin/env bash
# The HTML report (--view --format html) in a real browser: the pages of the golden set, the real
# corpus and the hostile log, opened in headless Chromium (Debian package chromium) by
# tests/report_cdp.py over the DevTools protocol: no console error, no network request, no
# dialog and no added script (the hostile payloads stay inert), the page's script runs, and the
# event count shown is the log's. Installs chromium with apt-get when missing (said); skips with a
# NOTE when it cannot (an unreachable package registry is not a failure of this check).
set -euo pipefail
cd "$(dirname "$0")/.."

find_chromium() {
  for c in chromium chromium-browser google-chrome; do
    if command -v "$c" > /dev/null; then
      command -v "$c"
      return 0
    fi
  done
  return 1
}

if ! command -v python3 > /dev/null; then
  echo "NOTE: python3 is not installed: the HTML report was NOT checked in Chromium (tests/report_chromium.sh)"
  exit 0
fi
if ! chromium=$(find_chromium); then
  echo "NOTE: chromium is not installed: installing Debian's chromium with apt-get to check the HTML report"
  (timeout 900 apt-get update -qq && timeout 900 apt-get install -y -qq chromium) > /dev/null 2>&1 || true
  if ! chromium=$(find_chromium); then
    echo "NOTE: chromium could not be installed: the HTML report was NOT checked in a browser (tests/report_chromium.sh)"
    exit 0
  fi
fi
echo "checking the HTML report in $("$chromium" --version 2> /dev/null || echo "$chromium")"

cargo build --release --quiet
bin=target/release/smart-tee
pages=$(mktemp -d)
trap 'rm -rf "$pages"' EXIT
render() { # NAME LOG
  "$bin" --view --format html "$2" > "$pages/$1.html"
  "$bin" --view --format jsonl "$2" | wc -l > "$pages/$1.count"
}
for log in tests/golden/*/log.jsonl; do
  render "golden-$(basename "$(dirname "$log")")" "$log"
done
for log in tests/data/real/*.jsonl; do
  render "real-$(basename "$log" .jsonl)" "$log"
done
render hostile tests/data/report/hostile.jsonl
render kinds tests/data/report/kinds.jsonl
status=0
timeout 600 python3 tests/report_cdp.py "$chromium" "$pages" || status=$?
if [ "$status" = 3 ]; then
  echo "NOTE: $chromium could not start: the HTML report was NOT checked in a browser (tests/report_chromium.sh)"
  exit 0
fi
exit "$status"
