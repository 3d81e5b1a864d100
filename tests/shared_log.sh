#!/usr/bin/env bash
# A shared log that another user owns and this one may write (mode 0666): smart-tee run as
# nobody opens it, empties or appends to it, and touches an empty one. A log that is empty
# already is touched, not truncated (see sink.rs `empty`); the first version of that touch set
# an explicit time, which only the owner may, and would have failed the open. Needs root (to
# own the file and switch user) and setpriv (util-linux). Usage: tests/shared_log.sh [SMART_TEE]
set -euo pipefail
cd "$(dirname "$0")/.."
st="$(realpath "${1:-target/release/smart-tee}")"
dir="$(mktemp -d)"; trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
cp "$st" "$dir/smart-tee"; chmod 755 "$dir/smart-tee"
nobody=(timeout 10 setpriv --reuid=65534 --regid=65534 --clear-groups "$dir/smart-tee")
fail() { echo "shared log: $*" >&2; exit 1; }
for before in '' '{"old":1}'; do
  for input in '' '{"new":2}'; do
    printf '%s' "$before${before:+$'\n'}" > "$dir/log"
    chmod 666 "$dir/log"; touch -d 2000-01-01 "$dir/log"
    printf '%s' "$input${input:+$'\n'}" | "${nobody[@]}" "$dir/log" > /dev/null ||
      fail "status $? (before ${before:-empty}, input ${input:-none})"
    [ "$(cat "$dir/log")" = "$input" ] || fail "holds '$(cat "$dir/log")', not '$input'"
    [ "$(stat -c %Y "$dir/log")" -gt 946684800 ] || fail "not touched (before ${before:-empty}, input ${input:-none})"
  done
done
printf '{"old":1}\n' > "$dir/log"; chmod 666 "$dir/log"
echo '{"new":2}' | "${nobody[@]}" -a "$dir/log" > /dev/null || fail "-a: status $?"
[ "$(cat "$dir/log")" = $'{"old":1}\n{"new":2}' ] || fail "-a holds '$(cat "$dir/log")'"
echo "shared log: ok (another user's 0666 log emptied, touched and appended to by nobody)"
