#!/usr/bin/env python3
"""Holds smart-tee's `--summary --format json` to an independent count (tests/oracle/count.py,
written from the formats' documentation), conversation by conversation: the four token
counts and their total, cost (reported, else estimated from smart-tee's price table) and
whether it is estimated, tool calls, failed calls, state and ok. Each file is summarized as it
is and as smart-tee logged it at the default budget (the log must say the same); all the files
are summarized in one call too (each file's runs its own conversations, in order). A file whose
final results carry Claude Code's `modelUsage` is held to it as well: its tokens are the sum
of its models', its cost the sum of its sessions' last `total_cost_usd`.

Prints the table of files, fields, truth and smart-tee; exits 1 on any difference.

Usage: tests/oracle/compare.py SMART_TEE FILE...
       tests/oracle/compare.py --ccusage SESSION_JSON SMART_TEE FILE...
  (with --ccusage: each file's input tokens, its three input counts added, are also held to
   ccusage's `session --json` for the project named after the file, exactly)
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import count  # noqa: E402

FIELDS = ["input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
          "output_tokens", "total_input_tokens", "cost_usd", "cost_estimated", "tool_calls", "tool_failures",
          "state", "ok"]


def summary(st, paths):
    out = subprocess.run([st, "--summary", "--format", "json", *paths],
                         capture_output=True, check=True).stdout
    s = json.loads(out)
    return s.get("conversations") or [s], s


def reported_cost(path):
    """A file's reported cost: each session's last `total_cost_usd` (cumulative per process),
    and, where a session starts again (an init) and its next report is below its last, a new
    process: the last is kept beside it. None for a file of another agent's, or with no cost."""
    last, restarted, closed = {}, set(), 0.0
    for raw in open(path, "rb"):
        try:
            v = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(v, dict):
            continue
        if count.other_agent(v) is not None:
            return None  # another agent's costs: its conversations' are compared
        s = v.get("session_id") if isinstance(v.get("session_id"), str) else ""
        if v.get("type") == "system" and v.get("subtype") == "init":
            restarted.add(s)
        if v.get("type") == "result" and isinstance(v.get("total_cost_usd"), (int, float)):
            c = v["total_cost_usd"]
            if s in restarted:
                restarted.discard(s)
                if s in last and c < last[s]:
                    closed += last.pop(s)
            last[s] = c
    return closed + sum(last.values()) if last else None


def oracle(paths):
    convs = []
    for p in paths:
        count.read(p, convs)
    return [c.report() for c in convs]


def model_usage_truth(path):
    """Per conversation (as the oracle splits them): the tokens its final results'
    `modelUsage` give, the last per session, added over models; None for a conversation
    without one."""
    out, convs = [], []
    count.read(path, convs)
    names = {"input_tokens": "inputTokens", "cache_read_input_tokens": "cacheReadInputTokens",
             "cache_creation_input_tokens": "cacheCreationInputTokens", "output_tokens": "outputTokens"}
    for c in convs:
        if not c.claude_model_usage:
            out.append(None)
            continue
        t = {}
        for field, camel in names.items():
            given = [m[camel] for m in c.claude_model_usage.values() if isinstance(m.get(camel), int)]
            t[field] = sum(given) if given else None
        out.append(t)
    return out


def is_transcript(path):
    """A Claude Code session file: its lines carry `sessionId` and `timestamp`."""
    for raw in open(path, "rb"):
        try:
            v = json.loads(raw)
        except ValueError:
            continue
        if isinstance(v, dict) and "sessionId" in v and "timestamp" in v:
            return True
    return False


def close(a, b):
    if a is None or b is None:
        return a is b
    return abs(a - b) < 1e-9


def main(argv):
    sessions = None
    if argv[0] == "--ccusage":
        doc = json.load(open(argv[1]))
        sessions = {s.get("period") or s.get("sessionId"): s for s in doc.get("session") or doc.get("sessions") or []}
        argv = argv[2:]
    st, files = argv[0], argv[1:]
    rows, bad = [], 0
    work = tempfile.mkdtemp(prefix="oracle-")

    def hold(name, fields_truth, got):
        nonlocal bad
        for f, want in fields_truth.items():
            same = close(got.get(f), want) if f == "cost_usd" else got.get(f) == want
            bad += not same
            rows.append((name, f, want, got.get(f), same))

    logs = []
    for k, path in enumerate(files):
        name = os.path.basename(path) if "golden" not in path else path.split("tests/golden/")[-1]
        truth = oracle([path])
        log = os.path.join(work, f"{k}.jsonl")
        with open(path, "rb") as i, open(os.devnull, "wb") as o:
            subprocess.run([st, log], stdin=i, stdout=o, check=True)
        logs.append(log)
        for label, target in (("", path), (" (log)", log)):
            got, whole = summary(st, [target])
            if len(got) != len(truth):
                bad += 1
                rows.append((name + label, "conversations", len(truth), len(got), False))
                continue
            for n, (t, g) in enumerate(zip(truth, got)):
                conv = f"{name}{label}" + (f" #{n + 1}" if len(truth) > 1 else "")
                hold(conv, {f: t[f] for f in FIELDS}, g)
            # The file's cost, what is billed, where every run reports its own.
            billed = reported_cost(path)
            if len(truth) > 1 and billed is not None and all(
                    t["cost_usd"] is not None and not t["cost_estimated"] for t in truth):
                hold(f"{name}{label} (total)", {"cost_usd": billed}, whole)
        # Each conversation whose result has Claude Code's modelUsage: its tokens are its
        # models' (each model's camelCase counts, here added by hand).
        got, _ = summary(st, [path])
        for n, want in enumerate(model_usage_truth(path)):
            if want is not None and n < len(got):
                conv = f"{name}" + (f" #{n + 1}" if len(got) > 1 else "") + " (modelUsage)"
                hold(conv, want, got[n])
        if sessions is not None and "golden" not in path:
            key = os.path.splitext(os.path.basename(path))[0]
            s = sessions.get(key)
            if s is None and not is_transcript(path):
                print(f"NOTE: {name} is not a transcript (its lines carry no sessionId and "
                      "timestamp): ccusage does not read it")
            elif s is None:
                bad += 1
                rows.append((name + " (ccusage)", "session", "present", None, False))
            else:
                want = s["inputTokens"] + s["cacheReadTokens"] + s["cacheCreationTokens"]
                _, whole = summary(st, [path])
                got = whole.get("total_input_tokens")
                bad += got != want
                rows.append((name + " (ccusage)", "total_input_tokens", want, got, got == want))
    # All the files in one call: each file's conversations, in order (smart-tee lists every
    # one, each with its file).
    truth = oracle(files)
    if len(truth) > 1:
        got, _ = summary(st, files)
        if len(got) != len(truth):
            bad += 1
            rows.append((f"{len(files)} files in one call", "conversations", len(truth), len(got), False))
        else:
            for n, (t, g) in enumerate(zip(truth, got)):
                hold(f"{len(files)} files in one call #{n + 1}", {f: t[f] for f in FIELDS}, g)
    width = max(len(r[0]) for r in rows)
    print(f"{'file':{width}}  {'field':29} {'truth':>14} {'smart-tee':>14}")
    for name, field, want, got, same in rows:
        show = lambda x: "null" if x is None else (f"{x:,}" if isinstance(x, int) and not isinstance(x, bool) else str(x))
        print(f"{name:{width}}  {field:29} {show(want):>14} {show(got):>14}{'' if same else '  DIFFER'}")
    print(f"oracle: {len(rows)} values compared, {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
