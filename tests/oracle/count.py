#!/usr/bin/env python3
"""An independent count of what a run of an AI agent did, from the formats' documentation
(Claude Code's stream-json and transcripts, Codex's `exec --json` and rollout files, Gemini
CLI's and Cursor's stream-json, opencode's and Goose's JSON events; pi's `--mode json`, Amp's
and Qwen Code's Claude-shaped stream-json, droid's, Copilot CLI's, Kimi CLI's and Antigravity's
JSON streams), never from smart-tee's code: per conversation, its tokens (the four counts as Anthropic names them), tool calls,
failed calls and ending. tests/oracle/compare.py holds smart-tee's `--summary --format json`
to it.

Usage: tests/oracle/count.py FILE...   (prints one JSON object: {"conversations": [...]})

The rules, as the formats document them:
- A file is a run or several. A conversation starts with each file, with Claude Code's
  `conversation_reset`, and with a run's start (`system/init`, Codex's `thread.started` or
  `session_meta`, Gemini CLI's `init`) after a final event or for another session.
- Lines that are not JSON objects, and smart-tee's own records (`non_json`, `torn`), are no
  events. Heartbeats after a final event do not reopen a run.
- Final events: `result` (Claude Code, Cursor, Gemini CLI: ok when `is_error` is not true, its
  subtype or status is success, and `terminal_reason`, when given, is `completed`),
  `turn.completed` (ok) and `turn.failed` (Codex exec), Goose's `complete`, a rollout's
  `event_msg` `task_complete` (ok) or `turn_aborted` (failed). A run whose last event is not
  final has ended without one (the files here have no writer).
- The newer agents (see `other_agent` and `other_event` below): pi ends a run with `agent_end`
  (unless `willRetry`) or `agent_settled`, failed when its last assistant message stopped with
  `error` or `aborted`; droid with `completion` (ok) or `turn.failed`; Copilot CLI with
  `result` (ok when `exitCode` is 0); Antigravity with `event: result` (ok when `status` is
  SUCCESS). Kimi CLI has no final event: its runs are "exited; the format has no final event".
  Runs start with pi's `session`, Copilot's `session.start`, Antigravity's `init` and Qwen
  Code's `system/session_start` too.
- Tokens: see the functions below; None where the format gives no count. pi: each assistant
  `message_end`'s `usage` (input uncached, cacheRead, cacheWrite, output) and `cost.total`,
  added; Copilot CLI: each `assistant.message`'s `outputTokens`, added (no input count);
  droid: the `completion`'s usage; Antigravity: the result's usage, whose `input_tokens`
  count `cache_read_tokens`; Kimi CLI: none.
- Cost: the last `total_cost_usd` per session, added over the processes a session restarts in
  (an init whose next report is below the last: a resumed process counts from nothing), and
  opencode's steps' costs; where a run
  reports none, an estimate from smart-tee's price table (src/read/summary/prices.json, read
  here as data): each model's tokens at its prices per million, input given whole at the
  input price, a cache price not given being the input price; a model is found by its name,
  then without a date suffix, then without a provider prefix, then without both. A run with a
  model not in the table is not priced.
"""
import json
import os
import re
import sys

PRICES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "read",
                      "summary", "prices.json")

HEARTBEATS = {"tool_progress", "keep_alive", "keepalive", "heartbeat", "ping"}


def num(d, *keys):
    """The first key of `d` holding an integer."""
    if not isinstance(d, dict):
        return None
    for k in keys:
        v = d.get(k)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return None


def add(a, b):
    if a is None and b is None:
        return None
    return (a or 0) + (b or 0)


def tokens(input=None, cache_read=None, cache_write=None, output=None, whole=None):
    return {"input": input, "cache_read": cache_read, "cache_write": cache_write,
            "output": output, "whole": whole}


def add_tokens(a, b):
    return {k: add(a[k], b[k]) for k in a}


def openai(u):
    """OpenAI's usage: input_tokens include cached_input_tokens; output includes reasoning."""
    i, c, w = num(u, "input_tokens"), num(u, "cached_input_tokens"), num(u, "cache_write_input_tokens")
    if c is None:
        return tokens(output=num(u, "output_tokens"), whole=i)
    return tokens(input=None if i is None else max(0, i - c - (w or 0)), cache_read=c,
                  cache_write=w, output=num(u, "output_tokens"))


def anthropic(u):
    return tokens(num(u, "input_tokens", "inputTokens"),
                  num(u, "cache_read_input_tokens", "cacheReadInputTokens"),
                  num(u, "cache_creation_input_tokens", "cacheCreationInputTokens"),
                  num(u, "output_tokens", "outputTokens"))


def gemini(s):
    """Gemini CLI's stats: input_tokens (prompt) include `cached`; `input` is the rest."""
    t = s.get("tokens") if isinstance(s.get("tokens"), dict) else s
    prompt, cached = num(t, "input_tokens", "prompt"), num(t, "cached")
    out = num(t, "output_tokens", "candidates")
    if cached is None:
        return tokens(output=out, whole=prompt)
    rest = num(t, "input")
    if rest is None and prompt is not None:
        rest = prompt - cached
    return tokens(input=rest, cache_read=cached, output=out)


class Conversation:
    def __init__(self, file):
        self.file = file
        self.events = 0
        self.session = None
        self.final = None  # (ok) of the last final event, or None
        self.after_final = False
        self.calls = set()
        self.failed = set()
        self.anon_calls = 0
        self.anon_failed = 0
        # tokens
        self.model_usage = {}  # (session, model) -> tokens, last result per session
        self.claude_model_usage = {}  # (session, model) -> Claude Code's modelUsage entry
        self.result_usage = {}  # session -> tokens (usage without models)
        self.messages = {}  # (message id, request id) -> tokens, the most output kept
        self.anon_messages = []
        self.running = None  # Codex: the last running total
        self.steps = None  # opencode
        self.costs = {}  # session -> the last total_cost_usd (Claude Code's is per process)
        self.closed_cost = 0.0  # the costs of a session's processes before its last
        self.restarted = set()  # sessions with an init since their last cost
        self.step_cost = None  # opencode: each step's cost
        self.declared_model = None  # the model a run's start names
        self.message_models = {}  # model -> assistant messages naming it
        self.message_model = {}  # (message id, request id) -> its model
        self.anon_models = []  # the models of messages without an id
        self.no_final_format = False  # Kimi CLI: the format has no final event
        self.pi_stop = None  # pi: the last assistant message's stopReason

    def call(self, cid):
        if cid:
            self.calls.add(cid)
        else:
            self.anon_calls += 1

    def fail(self, cid):
        if cid:
            self.failed.add(cid)
        else:
            self.anon_failed += 1

    def tokens(self):
        if self.model_usage:
            t = tokens()
            for u in self.model_usage.values():
                t = add_tokens(t, u)
            return t
        if self.running is not None:
            return self.running
        if self.steps is not None:
            return self.steps
        t = tokens()
        for u in list(self.messages.values()) + self.anon_messages:
            t = add_tokens(t, u)
        # No count below what the final results say (Claude Code's result.usage).
        r = tokens()
        for u in self.result_usage.values():
            r = add_tokens(r, u)
        return {k: (t[k] if r[k] is None else r[k] if t[k] is None else max(t[k], r[k])) for k in t}

    def model(self):
        """The run's model: the one its start names, else the one most messages name."""
        if self.declared_model:
            return self.declared_model
        named = sorted(self.message_models.items(), key=lambda kv: (-kv[1], kv[0]))
        return named[0][0] if named else "unknown"

    def tokens_by_model(self):
        """Each model's tokens where the format tells them apart; else the run's model with
        the run's tokens."""
        by = {}
        if self.model_usage:
            for (_, m), u in self.model_usage.items():
                by[m] = add_tokens(by.get(m, tokens()), u)
        elif self.running is None and self.steps is None:
            named = [(self.message_model.get(k) or "", u) for k, u in self.messages.items()]
            for m, u in named + list(zip(self.anon_models, self.anon_messages)):
                by[m] = add_tokens(by.get(m, tokens()), u)
            by.pop("", None)
            if len(by) == 1:
                by = {m: self.tokens() for m in by}
        by = {m: u for m, u in by.items() if sum(x or 0 for x in u.values()) > 0}
        return by or {self.model(): self.tokens()}

    def estimate(self, prices):
        """(USD, models with no price) at `prices`; USD None when a model has none."""
        usd, unpriced = 0.0, []
        for m, t in self.tokens_by_model().items():
            p = price_of(prices, m)
            if p is None or all(t[k] is None for k in ("input", "cache_read", "cache_write", "whole", "output")):
                unpriced.append(m)
                continue
            i = p["input"]
            usd += ((t["input"] or 0) * i + (t["whole"] or 0) * i
                    + (t["cache_read"] or 0) * p.get("cache_read", i)
                    + (t["cache_write"] or 0) * p.get("cache_write", i)
                    + (t["output"] or 0) * p["output"]) / 1e6
        return (None if unpriced else usd), unpriced

    def report(self):
        t = self.tokens()
        total_input = add(add(add(t["input"], t["cache_read"]), t["cache_write"]), t["whole"])
        finished = self.final is not None and not self.after_final
        cost, estimated = None, False
        if self.costs or self.step_cost is not None:
            cost = sum(self.costs.values()) + self.closed_cost + (self.step_cost or 0.0)
        elif any(x is not None for x in t.values()):
            cost, _ = self.estimate(load_prices())
            estimated = cost is not None
        return {
            "cost_usd": cost,
            "cost_estimated": estimated,
            "model_usage": bool(self.model_usage),
            "file": self.file,
            "events": self.events,
            "input_tokens": t["input"],
            "cache_read_input_tokens": t["cache_read"],
            "cache_creation_input_tokens": t["cache_write"],
            "output_tokens": t["output"],
            "total_input_tokens": total_input,
            "tool_calls": len(self.calls) + self.anon_calls,
            "tool_failures": len(self.failed) + self.anon_failed,
            "state": "finished" if finished else (
                "exited; the format has no final event" if self.no_final_format else "ended without a final event"),
            "ok": self.final if finished else None,
        }


_PRICES = None


def load_prices():
    global _PRICES
    if _PRICES is None:
        _PRICES = json.load(open(PRICES))["models"]
    return _PRICES


def price_of(prices, model):
    """By the name, then without a date suffix (-YYYYMMDD, -YYYY-MM-DD, @YYYYMMDD), then without
    what comes before the last `/` (a provider), then without both."""
    undated = lambda m: re.sub(r"[-@](\d{8}|\d{4}-\d{2}-\d{2})$", "", m)
    bare = model.split("/")[-1]
    for m in (model, undated(model), bare, undated(bare)):
        if m in prices:
            return prices[m]
    return None


def rollout_failed(p):
    """A Codex call output that says the call failed: a non-zero exit code (JSON metadata, or
    `Exit code: N` first in a freeform output), success false, or Codex's refusal as the
    whole output."""
    out = p.get("output")
    if isinstance(out, dict):
        if out.get("success") is False:
            return True
        out = out.get("content") if isinstance(out.get("content"), str) else json.dumps(out)
    if not isinstance(out, str):
        return False
    try:
        parsed = json.loads(out)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        code = (parsed.get("metadata") or {}).get("exit_code")
        if isinstance(code, int) and code != 0:
            return True
        if parsed.get("success") is False:
            return True
        text = parsed.get("output") if isinstance(parsed.get("output"), str) else out
    else:
        text = out
        first = out.split("\n", 1)[0]
        if first.startswith("Exit code: "):
            try:
                if int(first[len("Exit code: "):].strip()) != 0:
                    return True
            except ValueError:
                pass
    text = text.strip()
    return text in ("exec command rejected by user", "patch rejected by user") or text.startswith(
        "This action was rejected due to unacceptable risk")


def is_final(v):
    """(True, ok) for a final event."""
    t = v.get("type")
    if t == "result":
        how = v.get("subtype") or v.get("status") or "success"
        reason = v.get("terminal_reason")
        ok = v.get("is_error") is not True and how == "success" and reason in (None, "completed", "end_turn")
        return True, ok
    if t == "turn.completed":
        return True, True
    if t == "turn.failed":
        return True, False
    if t == "complete":
        return True, not v.get("error")
    if t == "event_msg":
        pt = (v.get("payload") or {}).get("type")
        if pt == "task_complete":
            return True, True
        if pt == "turn_aborted":
            return True, False
    return False, None


def starts_run(v):
    t, sub = v.get("type"), v.get("subtype")
    agent = other_agent(v)
    if agent == "antigravity":
        return v.get("event") == "init"
    return (t == "system" and sub in ("init", "session_start")) or t in ("thread.started", "session_meta") or (
        t == "init" and "session_id" in v) or (agent == "pi" and t == "session") or (
        agent == "copilot" and t == "session.start")


PI_TYPES = {"session", "agent_start", "agent_end", "agent_settled", "turn_start", "turn_end",
            "message_start", "message_update", "message_end", "tool_execution_start",
            "tool_execution_update", "tool_execution_end", "compaction_start", "compaction_end",
            "auto_compaction_start", "auto_compaction_end", "auto_retry_start", "auto_retry_end",
            "queue_update"}


def other_agent(v):
    """The newer agents whose events are not Claude Code's shape, by their documented shapes:
    Antigravity's `event` (no `type`), Kimi's OpenAI-style messages (`role`, no `type`), pi's
    event types, Copilot CLI's `{type, data, id, parentId}` lines and dotted types, droid's
    `completion`, `tool_call.toolName`, `tool_result.isError` and `message.text`."""
    t = v.get("type")
    if t is None:
        if "event" in v:
            return "antigravity"
        if "role" in v:
            return "kimi"
        return None
    if t in PI_TYPES:
        return "pi"
    if "parentId" in v or "ephemeral" in v or (isinstance(t, str) and t.split(".")[0] in (
            "session", "assistant", "tool", "user") and "." in t) or (t == "result" and "exitCode" in v):
        return "copilot"
    if t == "completion" or (t == "tool_call" and "toolName" in v) or (
            t == "tool_result" and "isError" in v) or (t == "message" and "role" in v and "text" in v):
        return "droid"
    return None


def other_event(c, v, agent, session):
    """Counts an event of one of the newer agents; (final, ok) when it ends a run."""
    t = v.get("type")
    if agent == "pi":
        msg = v.get("message") if isinstance(v.get("message"), dict) else {}
        if t == "tool_execution_start":
            c.call(v.get("toolCallId"))
        if t == "tool_execution_end" and v.get("isError") is True:
            c.fail(v.get("toolCallId"))
        if t == "message_end" and msg.get("role") == "assistant":
            c.pi_stop = msg.get("stopReason")
            u = msg.get("usage") if isinstance(msg.get("usage"), dict) else {}
            if u:
                step = tokens(num(u, "input"), num(u, "cacheRead"), num(u, "cacheWrite"), num(u, "output"))
                c.steps = step if c.steps is None else add_tokens(c.steps, step)
            cost = (u.get("cost") or {}).get("total") if isinstance(u.get("cost"), dict) else None
            if isinstance(cost, (int, float)):
                c.step_cost = (c.step_cost or 0.0) + cost
        if t == "agent_settled" or (t == "agent_end" and v.get("willRetry") is not True):
            return True, c.pi_stop not in ("error", "aborted")
        return False, None
    if agent == "droid":
        if t == "tool_call":
            c.call(v.get("id"))
        if t == "tool_result" and v.get("isError") is True:
            c.fail(v.get("id"))
        if t == "completion":
            u = v.get("usage")
            if isinstance(u, dict):
                c.result_usage[session] = anthropic(u)
            return True, True
        return False, None
    if agent == "copilot":
        d = v.get("data") if isinstance(v.get("data"), dict) else {}
        if t == "tool.execution_start":
            c.call(d.get("toolCallId"))
        if t == "tool.execution_complete" and d.get("success") is False:
            c.fail(d.get("toolCallId"))
        if t == "assistant.message" and num(d, "outputTokens") is not None:
            step = tokens(output=num(d, "outputTokens"))
            c.steps = step if c.steps is None else add_tokens(c.steps, step)
        if t == "result":
            return True, v.get("exitCode", 0) == 0
        return False, None
    if agent == "kimi":
        c.no_final_format = True
        for call in v.get("tool_calls") or []:
            if isinstance(call, dict):
                c.call(call.get("id"))
        # kimi-cli (kimi_cli/soul/message.py, tool_result_to_message) writes a ToolError's result
        # with a first text part "<system>ERROR: ...</system>": a failed call.
        if v.get("role") == "tool":
            body = v.get("content")
            if isinstance(body, list) and body and isinstance(body[0], dict):
                body = body[0].get("text")
            if isinstance(body, str) and body.startswith("<system>ERROR"):
                c.fail(v.get("tool_call_id"))
        return False, None
    if agent == "antigravity":
        e = v.get("event")
        if e == "init" and c.declared_model is None and isinstance(v.get("model"), str):
            c.declared_model = v["model"]
        # A tool step is a call from its first update on (issue #51: step_update carries a tool
        # call's tool_info and status, RUNNING then DONE/ERROR); a run that dies with a step
        # running made that call. Each step counts once, by step_id.
        if e == "step_update" and isinstance(v.get("tool_info"), dict):
            done = v.get("status") in ("DONE", "ERROR")
            if v.get("step_id") is not None or done:
                c.call(v.get("step_id"))
            if v.get("status") == "ERROR":
                c.fail(v.get("step_id"))
        if e == "result":
            u = v.get("usage")
            if isinstance(u, dict):
                prompt, cached = num(u, "input_tokens"), num(u, "cache_read_tokens")
                if cached is None:
                    c.result_usage[session] = tokens(output=num(u, "output_tokens"), whole=prompt)
                else:
                    c.result_usage[session] = tokens(
                        input=None if prompt is None else prompt - cached, cache_read=cached,
                        output=num(u, "output_tokens"))
            return True, v.get("status") == "SUCCESS"
        return False, None
    return False, None


def session_of(v):
    for k in ("session_id", "thread_id"):
        if isinstance(v.get(k), str):
            return v[k]
    p = v.get("payload")
    if isinstance(p, dict) and isinstance(p.get("id"), str) and v.get("type") == "session_meta":
        return p["id"]
    return None


def read(path, convs):
    current = None
    with open(path, "rb") as f:
        for raw in f:
            try:
                v = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(v, dict) or v.get("type") in ("non_json", "torn"):
                continue
            t = v.get("type")
            if current is None:
                current = Conversation(path)
                convs.append(current)
            elif current.events > 0:
                reset = t == "conversation_reset" or (t == "system" and v.get("subtype") == "conversation_reset")
                other = session_of(v)
                # After a final event, an event naming another session is another run (one with
                # no start event: a transcript appended after a stream-json run).
                # (a transcript's line: `sessionId`, no `session_id`).
                named = None if "session_id" in v else next(
                    (v[k] for k in ("sessionId", "sessionID") if isinstance(v.get(k), str)), None)
                if reset or (starts_run(v) and (current.final is not None or (
                        other and current.session and other != current.session))) or (
                        not starts_run(v) and current.final is not None and named and current.session
                        and named != current.session):
                    current = Conversation(path)
                    convs.append(current)
            event(current, v)


def event(c, v):
    t = v.get("type")
    c.events += 1
    if c.session is None:
        for k in ("session_id", "sessionId", "thread_id", "sessionID"):
            if isinstance(v.get(k), str):
                c.session = v[k]
                break
        else:
            if t == "session_meta" and isinstance((v.get("payload") or {}).get("id"), str):
                c.session = v["payload"]["id"]
    agent = other_agent(v)
    session = v.get("session_id") if isinstance(v.get("session_id"), str) else (c.session or "")
    if agent is not None:
        final, ok = other_event(c, v, agent, session)
        if final:
            c.final, c.after_final = ok, False
        elif c.final is not None:
            c.after_final = True
        return
    final, ok = is_final(v)
    heartbeat = t in HEARTBEATS or (t == "system" and v.get("subtype") in ("heartbeat", "keep_alive")) or (
        t == "stream_event" and (v.get("event") or {}).get("type") == "ping")
    if final:
        c.final, c.after_final = ok, False
    elif c.final is not None and not heartbeat:
        c.after_final = True
    session = v.get("session_id") if isinstance(v.get("session_id"), str) else (c.session or "")
    msg = v.get("message") if isinstance(v.get("message"), dict) else {}
    payload_model = (v.get("payload") or {}).get("model") if isinstance(v.get("payload"), dict) else None
    if c.declared_model is None and ((t == "system" and v.get("subtype") == "init") or t == "init"):
        c.declared_model = v.get("model") if isinstance(v.get("model"), str) and v.get("model") != "<synthetic>" else None
    if c.declared_model is None and t == "turn_context" and isinstance(payload_model, str):
        c.declared_model = payload_model
    if t == "assistant" and isinstance(msg.get("model"), str) and msg["model"] != "<synthetic>":
        c.message_models[msg["model"]] = c.message_models.get(msg["model"], 0) + 1
    content = msg.get("content") if isinstance(msg.get("content"), list) else []
    payload = v.get("payload") if isinstance(v.get("payload"), dict) else {}
    # Claude Code (and Cursor's assistant lines): tool_use blocks; results in user lines.
    if t == "assistant":
        for b in content:
            if isinstance(b, dict) and b.get("type") == "tool_use":
                c.call(b.get("id"))
        u = msg.get("usage")
        if isinstance(u, dict):
            key = (msg.get("id"), v.get("requestId") or v.get("request_id") or "")
            new = anthropic(u)
            if msg.get("id") is None:
                c.anon_messages.append(new)
                c.anon_models.append(msg.get("model") if isinstance(msg.get("model"), str) else "")
            elif key not in c.messages or (new["output"] or 0) > (c.messages[key]["output"] or 0):
                c.messages[key] = new
                c.message_model[key] = msg.get("model") if isinstance(msg.get("model"), str) else ""
    if t == "user":
        for b in content:
            if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("is_error") is True:
                c.fail(b.get("tool_use_id"))
    # Goose: toolRequest / toolResponse blocks in its messages.
    if t == "message":
        for b in content:
            if isinstance(b, dict) and b.get("type") == "toolRequest":
                c.call(b.get("id"))
            if isinstance(b, dict) and b.get("type") == "toolResponse" and (b.get("toolResult") or {}).get("status") == "error":
                c.fail(b.get("id"))
    # A session started again (an init): the same process when Claude Code reads stream-json
    # input (an init at each user message, the cost cumulative), or a new one (--resume) whose
    # cost counts from nothing, which its next report being below the last one tells.
    if t == "system" and v.get("subtype") == "init":
        c.restarted.add(session)
    if t == "result":
        if isinstance(v.get("total_cost_usd"), (int, float)):
            if session in c.restarted:
                c.restarted.discard(session)
                if session in c.costs and v["total_cost_usd"] < c.costs[session]:
                    c.closed_cost += c.costs.pop(session)
            c.costs[session] = v["total_cost_usd"]
        mu = v.get("modelUsage")
        stats = v.get("stats") if isinstance(v.get("stats"), dict) else None
        if isinstance(mu, dict):
            for m, u in mu.items():
                c.model_usage[(session, m)] = anthropic(u)
                c.claude_model_usage[(session, m)] = u
        elif stats is not None and isinstance(stats.get("models"), dict):
            for m, u in stats["models"].items():
                c.model_usage[(session, m)] = gemini(u)
        if stats is not None:
            c.result_usage[session] = gemini(stats)
        elif isinstance(v.get("usage"), dict):
            c.result_usage[session] = anthropic(v["usage"])
    if t == "complete":
        i, o = num(v, "input_tokens"), num(v, "output_tokens")
        c.result_usage[session] = tokens(output=o, whole=i if (i is not None or o is not None) else None)
    # Codex exec: items; turn.completed's usage is the thread's running total.
    if t == "item.completed":
        item = v.get("item") or {}
        if item.get("type") in ("command_execution", "mcp_tool_call", "file_change", "web_search", "collab_tool_call"):
            c.call(item.get("id"))
            code = item.get("exit_code")
            if item.get("type") != "file_change" and (item.get("status") in ("failed", "error") or (
                    isinstance(code, int) and code != 0) or item.get("error")):
                c.fail(item.get("id"))
    if t == "turn.completed" and isinstance(v.get("usage"), dict):
        c.running = openai(v["usage"])
    # Codex rollouts: response items for calls and outputs; token_count's running total.
    if t == "response_item":
        pt = payload.get("type")
        if pt in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
            c.call(payload.get("call_id") or payload.get("id"))
        if pt in ("function_call_output", "custom_tool_call_output") and rollout_failed(payload):
            c.fail(payload.get("call_id"))
    if t == "event_msg":
        pt = payload.get("type")
        if pt == "token_count":
            total = (payload.get("info") or {}).get("total_token_usage")
            if isinstance(total, dict):
                c.running = openai(total)
        if pt == "item_completed":
            item = payload.get("item") or {}
            if item.get("type") in ("CommandExecution", "McpToolCall", "DynamicToolCall", "CollabAgentToolCall", "WebSearch") and (
                    item.get("status") in ("failed", "error") or (isinstance(item.get("exitCode"), int) and item["exitCode"] != 0)
                    or item.get("error")):
                c.fail(item.get("id"))
    # Gemini CLI, opencode: tool_use / tool_result events.
    if t == "tool_use":
        part = v.get("part") if isinstance(v.get("part"), dict) else {}
        c.call(v.get("tool_id") or part.get("callID"))
        if ((part.get("state") or {}).get("status")) == "error":
            c.fail(part.get("callID"))
    if t == "tool_result" and v.get("status") == "error":
        c.fail(v.get("tool_id"))
    if t == "step_finish":
        cost = (v.get("part") or {}).get("cost")
        if isinstance(cost, (int, float)):
            c.step_cost = (c.step_cost or 0.0) + cost
        tk = (v.get("part") or {}).get("tokens")
        if isinstance(tk, dict):
            cache = tk.get("cache") or {}
            step = tokens(num(tk, "input"), num(cache, "read"), num(cache, "write"),
                          add(num(tk, "output"), num(tk, "reasoning")))
            c.steps = step if c.steps is None else add_tokens(c.steps, step)
    # Cursor: tool_call events, started and completed.
    if t == "tool_call":
        c.call(v.get("call_id"))
        if v.get("subtype") == "completed":
            body = next(iter((v.get("tool_call") or {}).values()), {}) or {}
            r = body.get("result") or {}
            if "error" in r or "failure" in r:
                c.fail(v.get("call_id"))


def main(paths):
    convs = []
    for p in paths:
        read(p, convs)
    json.dump({"conversations": [c.report() for c in convs]}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
