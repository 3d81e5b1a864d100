"""Compares what typed readers get from smart-tee's logs with what they get from the originals.

Usage: typed_readers.py [--readers-report-only] ORIGINAL LOG [LOG ...]

Each LOG is smart-tee's log of ORIGINAL (same lines, same order). Checked, line by line:
- the type rule: every value the log keeps has the JSON type it had (an object stays an object,
  an array an array; a marker element of an array of objects is an object);
- usage and cost: every member named in USAGE (and everything in it) is in the log exactly,
  also where a member or element that held one was left out (with --readers-report-only, the
  documented limit at 1024 is counted apart: the copies of a sub-agent's usage in a progress
  line's `data.message.message` and a Task result's `toolUseResult`);
- the Agent SDK's message parser (claude_agent_sdk, when installed): every line it parses from
  the original it parses from the log, to the same class, with the same ids, usage and cost;
- claude-code-log (when installed): the same counts of entries by type, messages, tool-use
  nodes, sessions and tokens.
Prints one summary line per LOG; exits 1 if a LOG differs (with --readers-report-only, only the
type rule and usage fail it: the readers' differences are printed).
"""

import json
import sys
from pathlib import Path

USAGE = {
    "usage", "cache_creation", "server_tool_use", "modelUsage", "model_usage",
    "total_cost_usd", "costUSD", "cost_usd", "duration_ms", "duration_api_ms", "num_turns",
    "total_token_usage", "last_token_usage",
}
MARK = "[TRUNCATED: "


def is_marker_element(v):
    if isinstance(v, str):
        return v.startswith(MARK) and v.endswith(" items]")
    if isinstance(v, dict) and len(v) in (1, 2):
        s = v.get("_truncated") if len(v) == 1 else (v.get("type") == "text" and v.get("text"))
        return isinstance(s, str) and s.startswith(MARK) and s.endswith(" items]")
    return False


def kind(v):
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    return type(v).__name__


def type_changes(a, b, path, out):
    """Appends to `out` the paths where `b` (the log's value) has another type than `a`."""
    if kind(a) != kind(b):
        out.append(f"{path}: {kind(a)} became {kind(b)}")
        return
    if isinstance(a, dict):
        for k, v in b.items():
            if k in a:
                type_changes(a[k], v, f"{path}.{k}", out)
            elif not k.startswith("_truncated"):
                out.append(f"{path}: unknown key {k}")
    elif isinstance(a, list):
        marks = [i for i, v in enumerate(b) if is_marker_element(v) and len(b) <= len(a)]
        m = marks[0] if marks and len(b) < len(a) + 1 else None
        if m is None:
            pairs = list(zip(a, b))
        else:
            tail = len(b) - m - 1
            pairs = list(zip(a[:m], b[:m])) + list(zip(a[len(a) - tail:], b[m + 1:]))
            first = a[0] if a else None
            if isinstance(first, dict) and not isinstance(b[m], dict):
                out.append(f"{path}[{m}]: marker element of an array of objects is not an object")
        for i, (x, y) in enumerate(pairs):
            type_changes(x, y, f"{path}[{i}]", out)


def holds_usage(v):
    """Whether `v` has a member named in USAGE, at any depth."""
    if isinstance(v, dict):
        return any(k in USAGE or holds_usage(x) for k, x in v.items())
    if isinstance(v, list):
        return any(holds_usage(x) for x in v)
    return False


def usage_losses(a, b, path, out):
    """Appends the usage members of `a` that `b` does not keep exactly, including those inside
    a member or an element `b` left out."""
    if isinstance(a, dict):
        if not isinstance(b, dict):
            if holds_usage(a):
                out.append(path)
            return
        for k, v in a.items():
            if k in USAGE:
                if b.get(k) != v:
                    out.append(f"{path}.{k}")
            elif k in b:
                usage_losses(v, b[k], f"{path}.{k}", out)
            elif holds_usage(v):
                out.append(f"{path}.{k}")
    elif isinstance(a, list):
        if not isinstance(b, list):
            if holds_usage(a):
                out.append(path)
            return
        marks = [i for i, v in enumerate(b) if is_marker_element(v)]
        if len(a) == len(b) or not marks:
            pairs = list(enumerate(zip(a, b)))
        else:
            m, tail = marks[0], len(b) - marks[0] - 1
            kept = list(range(m)) + list(range(len(a) - tail, len(a)))
            pairs = [(i, (a[i], y)) for i, y in zip(kept, b[:m] + b[m + 1:])]
            for i in set(range(len(a))) - set(kept):
                if holds_usage(a[i]):
                    out.append(f"{path}[{i}]")
        for i, (x, y) in pairs:
            usage_losses(x, y, f"{path}[{i}]", out)


def sdk_view(obj):
    """What the Agent SDK's parser makes of a line: class, ids, usage, cost; None if it fails."""
    from claude_agent_sdk._internal.message_parser import parse_message

    try:
        m = parse_message(obj)
    except Exception:
        return None
    if m is None:
        return ("None",)
    fields = ("uuid", "session_id", "parent_tool_use_id", "usage", "total_cost_usd",
              "model_usage", "duration_ms", "num_turns", "subtype", "is_error", "model")
    ids = tuple(repr(getattr(m, f, None)) for f in fields)
    blocks = tuple((type(c).__name__, getattr(c, "id", None), getattr(c, "tool_use_id", None))
                   for c in (getattr(m, "content", None) or []) if not isinstance(c, str))
    return (type(m).__name__, ids, blocks)


def ccl_counts(path):
    """claude-code-log's counts for one transcript file."""
    from claude_code_log.converter import load_transcript

    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        entries = load_transcript(Path(path), silent=True)
    by_type, sessions, tools, tokens = {}, set(), 0, [0, 0, 0, 0]
    for e in entries:
        t = getattr(e, "type", "?")
        by_type[t] = by_type.get(t, 0) + 1
        sid = getattr(e, "sessionId", None)
        if sid:
            sessions.add(sid)
        msg = getattr(e, "message", None)
        for c in (getattr(msg, "content", None) or []):
            if type(c).__name__ == "ToolUseContent":
                tools += 1
        u = getattr(msg, "usage", None)
        if u is not None:
            for i, f in enumerate(("input_tokens", "output_tokens",
                                   "cache_creation_input_tokens", "cache_read_input_tokens")):
                tokens[i] += getattr(u, f, None) or 0
    return {"entries": len(entries), "by_type": by_type, "sessions": len(sessions),
            "tool_uses": tools, "tokens": tokens}


def have(module):
    try:
        __import__(module)
        return True
    except Exception:
        return False


def main():
    args = sys.argv[1:]
    report_only = args[:1] == ["--readers-report-only"]
    if report_only:
        args = args[1:]
    orig_path, logs = args[0], args[1:]
    with open(orig_path, encoding="utf-8") as f:
        originals = [json.loads(l) for l in f if l.strip()]
    sdk, ccl = have("claude_agent_sdk"), have("claude_code_log")
    failed = False
    for log in logs:
        with open(log, encoding="utf-8") as f:
            cut = [json.loads(l) for l in f]
        problems = []
        if len(cut) != len(originals):
            problems.append(f"{len(originals)} lines in, {len(cut)} logged")
        types, usage, sdk_diff, sdk_parsed, echoes = [], [], 0, 0, 0
        for n, (a, b) in enumerate(zip(originals, cut)):
            t, u = [], []
            type_changes(a, b, "$", t)
            usage_losses(a, b, "$", u)
            if report_only:
                # The documented limit at 1024 (docs/cut-policy.md): copies of a sub-agent's
                # usage give way to the line's ids and transcript fields.
                echo = {"progress": "$.data.message.message", "user": "$.toolUseResult"}
                limit = [x for x in u if isinstance(a, dict) and echo.get(a.get("type")) == x]
                echoes += len(limit)
                u = [x for x in u if x not in limit]
            types += [f"line {n + 1}: {x}" for x in t]
            usage += [f"line {n + 1}: {x}" for x in u]
            if sdk and isinstance(a, dict):
                va = sdk_view(a)
                if va is not None:
                    sdk_parsed += 1
                    vb = sdk_view(b)
                    if vb != va:
                        sdk_diff += 1
                        what = (f"{vb[0]} with other ids, blocks or usage" if vb and vb[0] == va[0]
                                else f"{vb[0] if vb else 'nothing'} not {va[0]}")
                        problems.append(f"line {n + 1}: Agent SDK reads {what}")
        problems = types[:10] + usage[:10] + problems
        summary = f"{log}: {len(types)} type changes, {len(usage)} usage losses"
        if echoes:
            summary += f" (and {echoes} copies of a sub-agent's usage, the limit at 1024)"
        if sdk:
            summary += f", Agent SDK: {sdk_parsed - sdk_diff}/{sdk_parsed} lines the same"
        if ccl:
            ca, cb = ccl_counts(orig_path), ccl_counts(log)
            if ca != cb:
                problems.insert(0, f"claude-code-log: {cb} not {ca}")
            summary += f", claude-code-log: {ca['entries']} entries, {ca['tool_uses']} tool uses, " \
                       f"{ca['sessions']} sessions {'the same' if ca == cb else 'DIFFER'}"
        print(summary)
        if types or usage or (problems and not report_only):
            failed = True
        if types or usage or problems:
            for p in problems[:12]:
                print("  " + p)
    if not sdk:
        print("NOTE: claude_agent_sdk is not importable: the Agent SDK's parser was not compared")
    if not ccl:
        print("NOTE: claude_code_log is not importable: claude-code-log was not compared")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
