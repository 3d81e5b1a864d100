#!/usr/bin/env python3
"""Runs the README's runnable blocks as written and checks the output it shows.

A ```sh block right after a `<!-- runnable -->` line is run with bash (errexit, pipefail) from
the repository's root, with target/release first on PATH (so `smart-tee` is the release build
that `cargo run --release` makes). A ```text block right after an `<!-- output -->` line must
equal the standard output of the runnable block before it, byte for byte. Files the blocks
create are removed at the end. `cargo test --profile quick` inside a block is not run again: .ci/run
runs it just before this script (say SMART_TEE_README_ALL=1 to run it anyway).
SMART_TEE_BLESS=1 writes what the commands printed into the output blocks instead (review the
diff).

Usage: tests/readme.py [README.md]
"""
import os
import re
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
readme = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "README.md")
text = open(readme, encoding="utf-8").read()
# The README is for users: at most 400 lines (depth goes to docs/).
if len(text.splitlines()) > 400:
    sys.exit(f"{readme}: {len(text.splitlines())} lines; the README holds at most 400")

blocks = []  # (kind, body, line number, start of body)
pattern = re.compile(r"<!-- (runnable|output) -->\n```(\w+)\n(.*?)```\n", re.S)
for m in pattern.finditer(text):
    kind, lang, body = m.group(1), m.group(2), m.group(3)
    line = text.count("\n", 0, m.start()) + 1
    want = "sh" if kind == "runnable" else "text"
    if lang != want:
        sys.exit(f"{readme}:{line}: a {kind} block must be ```{want}, not ```{lang}")
    blocks.append((kind, body, line, m.start(3)))
if not any(b[0] == "runnable" for b in blocks):
    sys.exit(f"{readme}: no runnable block found: the markers are gone or malformed")


def untracked():
    out = subprocess.run(
        ["git", "ls-files", "--others", "--directory"],
        cwd=root, capture_output=True, text=True, check=True,
    ).stdout
    return set(out.split())


before = untracked()
env = dict(os.environ)
env["PATH"] = os.path.join(root, "target", "release") + os.pathsep + env["PATH"]
failures = 0
last_out = None
blessed = []  # (start, old body, new body)
try:
    for kind, body, line, start in blocks:
        if kind == "runnable":
            script = body
            if not os.environ.get("SMART_TEE_README_ALL"):
                script = "\n".join(
                    ": skipped, run by .ci/run itself" if l.strip() == "cargo test --profile quick" else l
                    for l in body.split("\n")
                )
            r = subprocess.run(
                ["bash", "-e", "-o", "pipefail", "-c", script],
                cwd=root, env=env, capture_output=True, timeout=900,
            )
            last_out = r.stdout
            if r.returncode != 0:
                failures += 1
                print(f"FAIL {readme}:{line}: exit {r.returncode}\n{body}\nstderr:\n"
                      + r.stderr.decode(errors="replace"))
            else:
                print(f"ok   {readme}:{line}: runnable block")
        else:
            if last_out is None:
                failures += 1
                print(f"FAIL {readme}:{line}: an output block with no runnable block before it")
                continue
            if last_out != body.encode() and os.environ.get("SMART_TEE_BLESS"):
                blessed.append((start, body, last_out.decode()))
                print(f"bless {readme}:{line}: output block rewritten")
            elif last_out != body.encode():
                failures += 1
                print(f"FAIL {readme}:{line}: the README shows\n{body}\nthe command printed\n"
                      + last_out.decode(errors="replace"))
            else:
                print(f"ok   {readme}:{line}: output as shown")
finally:
    for path in sorted(untracked() - before):
        full = os.path.join(root, path)
        if os.path.isfile(full):
            os.remove(full)
if blessed:
    for start, old, new in sorted(blessed, reverse=True):
        text = text[:start] + new + text[start + len(old):]
    open(readme, "w", encoding="utf-8").write(text)
if failures:
    sys.exit(f"{failures} README block(s) failed")
print("README: every runnable block ran, every output block matched")
