#!/usr/bin/env python3
"""A fake agent for `smart-tee run`'s tests: prints Claude Code stream-json events as a mode
says, then ends as the mode says. Usage: fake_agent.py MODE; with
$FAKE_AGENT_PIDS set, the pids of its processes are written there

  ok        init, a message, a successful result; exits 0
  failed    init, a message, a result with is_error: true; exits 0
  nofinal   init, a message; exits 3 without a final event
  stall     init, a message; then sleeps
  heartbeat init, a message; then a keep_alive event every 0.1 s, forever
  heartbeat_pieces
            init, a message; then a keep_alive event every 0.1 s, each written in two pieces
  stubborn  init; starts a child that ignores SIGTERM, ignores SIGTERM itself; a message;
            then sleeps
  spend     init, then assistant messages of 1000 output tokens each, forever
  partial   init; then one long line written a piece at a time, 0.1 s apart, then a result
  linger    init, a message, a successful result; then sleeps
  crash     init, a message, a successful result; then kills itself with SIGKILL
  escape    init, a message, a successful result; starts a child that leaves the group
            (setsid) and keeps stdout open for 300 s (its pid in $FAKE_AGENT_PIDS-escaped);
            exits 0
  kimi_ok   Kimi CLI's stream-json (no init, no final event): a tool call, its result and a
            message; exits 0
  kimi_exit2
            the same; exits 2
  tty       init, a message saying whether its group is the foreground group of the terminal
            on its stdin, a successful result; exits 0
"""
import json, os, signal, sys, time

def say(event):
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()

INIT = {"type": "system", "subtype": "init", "session_id": "fake-1", "model": "claude-sonnet-4-5"}

def message(n, output=10):
    return {"type": "assistant", "session_id": "fake-1", "message": {
        "id": f"msg_{n}", "model": "claude-sonnet-4-5", "role": "assistant",
        "content": [{"type": "text", "text": f"step {n}"}],
        "usage": {"input_tokens": 100, "output_tokens": output}}}

def result(is_error):
    return {"type": "result", "subtype": "success", "is_error": is_error, "session_id": "fake-1",
            "num_turns": 1, "total_cost_usd": 0.01, "result": "done"}

def note_pids(*pids):
    """Writes the pids of the agent's processes to $FAKE_AGENT_PIDS, for the test to check."""
    path = os.environ.get("FAKE_AGENT_PIDS")
    if path:
        # Whole or not at all, whenever the agent is stopped: written aside, then renamed.
        with open(path + ".tmp", "w") as f:
            f.write(" ".join(str(p) for p in pids) + "\n")
        os.replace(path + ".tmp", path)

def sleep_forever():
    while True:
        time.sleep(60)

mode = sys.argv[1]
if mode != "stubborn":
    note_pids(os.getpid())
if not mode.startswith("kimi"):
    say(INIT)
if mode in ("ok", "failed", "nofinal", "stall", "heartbeat", "heartbeat_pieces", "linger",
            "crash"):
    say(message(1))
if mode in ("ok", "linger", "crash"):
    say(result(False))
if mode == "linger":
    sleep_forever()
elif mode == "crash":
    os.kill(os.getpid(), signal.SIGKILL)
elif mode == "ok":
    pass
elif mode == "failed":
    say(result(True))
elif mode == "nofinal":
    sys.exit(3)
elif mode in ("kimi_ok", "kimi_exit2"):
    call = {"type": "function", "id": "tc_0",
            "function": {"name": "Shell", "arguments": json.dumps({"command": "ls"})}}
    say({"role": "assistant", "content": "Listing the files.", "tool_calls": [call]})
    say({"role": "tool", "tool_call_id": "tc_0", "content": "a.txt"})
    say({"role": "assistant", "content": "Done."})
    sys.exit(0 if mode == "kimi_ok" else 2)
elif mode == "stall":
    sleep_forever()
elif mode == "heartbeat":
    while True:
        say({"type": "keep_alive"})
        time.sleep(0.1)
elif mode == "heartbeat_pieces":
    while True:
        sys.stdout.write('{"type":"keep')
        sys.stdout.flush()
        time.sleep(0.05)
        sys.stdout.write('_alive"}\n')
        sys.stdout.flush()
        time.sleep(0.05)
elif mode == "stubborn":
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        sleep_forever()
    note_pids(os.getpid(), pid)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    say(message(1))
    sleep_forever()
elif mode == "spend":
    n = 0
    while True:
        n += 1
        say(message(n, output=1000))
        time.sleep(0.02)
elif mode == "escape":
    say(message(1))
    say(result(False))
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        with open(os.environ["FAKE_AGENT_PIDS"] + "-escaped", "w") as f:
            f.write(f"{os.getpid()}\n")
        os.write(ready_w, b"x")
        time.sleep(300)
        os._exit(0)
    # Out of the group before the agent exits (and smart-tee stops what is left of it).
    os.read(ready_r, 1)
elif mode == "tty":
    try:
        foreground = os.tcgetpgrp(0) == os.getpgrp()
    except OSError:
        foreground = None
    say({"type": "assistant", "session_id": "fake-1", "foreground": foreground,
         "message": {"id": "msg_1", "role": "assistant", "content": []}})
    say(result(False))
elif mode == "partial":
    sys.stdout.write('{"type":"user","text":"')
    for _ in range(20):
        sys.stdout.write("x" * 100)
        sys.stdout.flush()
        time.sleep(0.1)
    sys.stdout.write('"}\n')
    say(result(False))
