#!/usr/bin/env python3
"""Opens HTML reports in headless Chromium over the DevTools protocol and checks each one.

Usage: report_cdp.py CHROMIUM DIR. DIR holds NAME.html pages and NAME.count files (the log's
event count as `--view --format jsonl` gives it). For each page: no console error, no exception,
no request but the page itself, no dialog (a hostile log's `alert` would open one), exactly one
script element, the page's script ran (`data-ready` on <html>), the event count shown equals
the log's and the rows shown plus those left out make it, and the filters work (the search
hides every row for a string no row holds; "errors only" leaves only error rows; every row's
type is offered by the type filter, `__proto__` too). Then again with scripts off: every row
shows, and "errors only" (CSS) still works.

Standard library only: a minimal WebSocket client (RFC 6455, client frames masked) and one
browser connection with a session per page (Target.attachToTarget, flatten). Every wait has a
timeout; the browser is killed on the way out.
"""

import base64
import json
import os
import pathlib
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

TIMEOUT = 30.0
# The exit status when the browser cannot start: the caller skips, saying so.
NO_BROWSER = 3


class WebSocket:
    def __init__(self, port, path):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise RuntimeError("the browser closed the connection during the handshake")
            head += chunk
        status = head.split(b"\r\n", 1)[0]
        if b" 101 " not in status:
            raise RuntimeError(f"handshake refused: {status!r}")
        self.buf = head.split(b"\r\n\r\n", 1)[1]

    def send(self, text):
        data = text.encode()
        header = bytes([0x81])
        n = len(data)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(header + mask + masked)

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise RuntimeError("the browser closed the connection")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self):
        message = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(n)
            opcode = b0 & 0x0F
            if opcode == 0x8:
                raise RuntimeError("the browser closed the WebSocket")
            if opcode in (0x9, 0xA):
                continue  # ping / pong
            message += payload
            if b0 & 0x80:
                return json.loads(message)


class Browser:
    def __init__(self, chromium):
        self.profile = tempfile.mkdtemp(prefix="smart-tee-chromium-")
        self.proc = subprocess.Popen(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-component-update",
                "--remote-debugging-port=0",
                f"--user-data-dir={self.profile}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            port_file = pathlib.Path(self.profile) / "DevToolsActivePort"
            deadline = time.monotonic() + TIMEOUT
            while not (port_file.exists() and len(port_file.read_text().split("\n")) >= 2):
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError("chromium did not open its DevTools port")
                time.sleep(0.1)
            port, path = port_file.read_text().split("\n")[:2]
            self.ws = WebSocket(int(port), path)
        except BaseException:
            self.close()
            raise
        self.next_id = 0
        self.events = []

    def call(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self.ws.send(json.dumps(msg))
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            m = self.ws.recv()
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)
        raise RuntimeError(f"{method}: no answer within {TIMEOUT} s")

    def wait_for(self, method, session, since=0):
        """Waits for an event of the session, among those from index `since` of the events."""
        deadline = time.monotonic() + TIMEOUT
        for m in self.events[since:]:
            if m.get("method") == method and m.get("sessionId") == session:
                return
        while time.monotonic() < deadline:
            m = self.ws.recv()
            self.events.append(m)
            if m.get("method") == method and m.get("sessionId") == session:
                return
        raise RuntimeError(f"no {method} within {TIMEOUT} s")

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        shutil.rmtree(self.profile, ignore_errors=True)


PROBE = """(() => {
  const d = document, main = d.querySelector('main'), rows = d.querySelectorAll('main .ev');
  const om = d.getElementById('omitted');
  const visible = () => [...rows].filter(r => r.offsetParent !== null);
  const out = {
    ready: d.documentElement.getAttribute('data-ready'),
    scripts: d.querySelectorAll('script').length,
    active: d.querySelectorAll('img,iframe,object,embed,frame,link,base,form,svg script,[onerror],[onload],[onclick],[onmouseover]').length,
    events: main ? Number(main.dataset.events) : -1,
    shownAttr: main ? Number(main.dataset.shown) : -1,
    rows: rows.length,
    omitted: om ? Number(om.dataset.omitted) : 0,
    headerEvents: (d.getElementById('events') || {}).textContent,
  };
  const q = d.getElementById('q');
  q.value = 'no row holds this: 9f2c1d77';
  q.dispatchEvent(new Event('input'));
  out.searchHidesAll = visible().length === 0;
  q.value = '';
  q.dispatchEvent(new Event('input'));
  out.searchShowsAll = visible().length === rows.length;
  const offered = [...d.getElementById('type').options].map(o => o.value);
  out.everyTypeOffered = [...rows].every(r => offered.includes(r.getAttribute('data-kind')));
  const e = d.getElementById('only-errors');
  e.click();
  out.errorsOnly = visible().every(r => r.classList.contains('err'))
    && visible().length === d.querySelectorAll('main .ev.err').length;
  e.click();
  return JSON.stringify(out);
})()"""


NO_SCRIPT_PROBE = """(() => {
  const d = document, rows = [...d.querySelectorAll('main .ev')];
  const visible = () => rows.filter(r => r.offsetParent !== null);
  const out = { ran: d.documentElement.hasAttribute('data-ready'), allShown: visible().length === rows.length };
  const e = d.getElementById('only-errors');
  e.checked = true;
  out.errorsOnly = visible().length === d.querySelectorAll('main .ev.err').length
    && visible().every(r => r.classList.contains('err'));
  e.checked = false;
  return JSON.stringify(out);
})()"""


def check_page(browser, page, count):
    problems = []
    url = page.resolve().as_uri()
    target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    first = len(browser.events)
    for domain in ("Page", "Runtime", "Log", "Network"):
        browser.call(f"{domain}.enable", session=session)
    navigated = len(browser.events)
    browser.call("Page.navigate", {"url": url}, session=session)
    browser.wait_for("Page.loadEventFired", session, navigated)
    result = browser.call(
        "Runtime.evaluate", {"expression": PROBE, "returnByValue": True}, session=session
    )
    if "value" not in result.get("result", {}):
        browser.call("Target.closeTarget", {"targetId": target})
        return [f"the probe did not run: {result.get('exceptionDetails', result)}"]
    got = json.loads(result["result"]["value"])
    for m in browser.events[first:]:
        if m.get("sessionId") != session:
            continue
        method, p = m.get("method"), m.get("params", {})
        if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            problems.append(f"console {p.get('type')}: {p.get('args')}")
        elif method == "Runtime.exceptionThrown":
            problems.append(f"exception: {p.get('exceptionDetails', {}).get('text')}")
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            problems.append(f"log error: {p['entry'].get('text')}")
        elif method == "Network.requestWillBeSent" and p.get("request", {}).get("url") != url:
            problems.append(f"network request: {p['request'].get('url')}")
        elif method == "Page.javascriptDialogOpening":
            problems.append(f"a dialog opened: {p.get('message')!r}")
            browser.call("Page.handleJavaScriptDialog", {"accept": False}, session=session)
    if got["scripts"] != 1:
        problems.append(f"{got['scripts']} script elements (one is the page's)")
    if got["active"]:
        problems.append(f"{got['active']} active elements (img, iframe, handler attributes…)")
    if got["ready"] != str(got["rows"]):
        problems.append(f"the page's script did not run (data-ready={got['ready']!r})")
    if got["events"] != count:
        problems.append(f"the page shows {got['events']} events, the log has {count}")
    if got["rows"] + got["omitted"] != got["events"] or got["rows"] != got["shownAttr"]:
        problems.append(f"rows {got['rows']} + left out {got['omitted']} != events {got['events']}")
    if not (got["headerEvents"] or "").startswith(f"{count},"):
        problems.append(f"the header says {got['headerEvents']!r} events")
    for check in ("searchHidesAll", "searchShowsAll", "errorsOnly", "everyTypeOffered"):
        if not got[check]:
            problems.append(f"filter check failed: {check}")
    # With scripts off the page still reads whole, and "errors only" (CSS) still works.
    browser.call("Emulation.setScriptExecutionDisabled", {"value": True}, session=session)
    reload = len(browser.events)
    browser.call("Page.reload", session=session)
    browser.wait_for("Page.loadEventFired", session, reload)
    result = browser.call(
        "Runtime.evaluate", {"expression": NO_SCRIPT_PROBE, "returnByValue": True}, session=session
    )
    if "value" not in result.get("result", {}):
        browser.call("Target.closeTarget", {"targetId": target})
        return [f"the probe did not run: {result.get('exceptionDetails', result)}"]
    got = json.loads(result["result"]["value"])
    if got["ran"]:
        problems.append("scripts off, but the page's script ran")
    if not got["allShown"]:
        problems.append("scripts off: not every row shows")
    if not got["errorsOnly"]:
        problems.append("scripts off: errors only does not leave only error rows")
    browser.call("Target.closeTarget", {"targetId": target})
    return problems


def main():
    chromium, folder = sys.argv[1], pathlib.Path(sys.argv[2])
    pages = sorted(folder.glob("*.html"))
    if not pages:
        sys.exit(f"no pages in {folder}")
    try:
        browser = Browser(chromium)
    except (OSError, RuntimeError) as e:
        print(f"chromium did not start: {e}")
        sys.exit(NO_BROWSER)
    failed = 0
    try:
        for page in pages:
            count = int(page.with_suffix(".count").read_text())
            problems = check_page(browser, page, count)
            if problems:
                failed += 1
                print(f"FAIL {page.name}")
                for p in problems:
                    print(f"  {p}")
            else:
                print(f"ok   {page.name} ({count} events)")
    finally:
        browser.close()
    if failed:
        sys.exit(f"{failed} of {len(pages)} pages failed in Chromium")
    print(f"all {len(pages)} pages passed in Chromium")


if __name__ == "__main__":
    main()
