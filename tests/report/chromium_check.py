#!/usr/bin/python3
"""chromium_check.py - loads a bbreport page in headless Chromium through the DevTools protocol
and checks it: no console errors or exceptions, no network request but the page itself,
every pattern graph an SVG, the patterns table sorts when a header is clicked.

usage: chromium_check.py CHROMIUM PAGE.html [MIN_GRAPHS]
Prints what it found; exit 0 when all holds, 1 otherwise."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket

chromium, page = sys.argv[1], os.path.abspath(sys.argv[2])
min_graphs = int(sys.argv[3]) if len(sys.argv) > 3 else 1
prof = tempfile.mkdtemp(prefix="bbreport-chromium.")
proc = subprocess.Popen(
    [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
     "--disable-component-update", "--disable-sync", "--no-first-run",
     "--user-data-dir=" + prof, "--remote-debugging-port=0", "about:blank"],
    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


try:
    port_file = os.path.join(prof, "DevToolsActivePort")
    for _ in range(300):
        if os.path.exists(port_file) and os.path.getsize(port_file) > 0:
            break
        time.sleep(0.1)
    port = int(open(port_file).read().split()[0])
    targets = json.load(urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port))
    ws_url = [t for t in targets if t["type"] == "page"][0]["webSocketDebuggerUrl"]
    ws = websocket.create_connection(ws_url, timeout=30)
    seq = [0]
    events = []

    def call(method, **params):
        seq[0] += 1
        ws.send(json.dumps({"id": seq[0], "method": method, "params": params}))
        while True:
            m = json.loads(ws.recv())
            if m.get("id") == seq[0]:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            events.append(m)

    for dom in ("Page", "Runtime", "Log", "Network"):
        call(dom + ".enable")
    url = "file://" + page
    call("Page.navigate", url=url)
    deadline = time.time() + 30
    loaded = False
    while time.time() < deadline and not loaded:
        m = json.loads(ws.recv())
        events.append(m)
        loaded = m.get("method") == "Page.loadEventFired"
    if not loaded:
        fail("the page did not finish loading in 30 s")

    def js(expr):
        r = call("Runtime.evaluate", expression=expr, returnByValue=True)
        if "exceptionDetails" in r:
            raise RuntimeError("%s: %s" % (expr, r["exceptionDetails"]))
        return r["result"].get("value")

    graphs = js("document.querySelectorAll('div.graph[id^=g]').length")
    svgs = js("document.querySelectorAll('div.graph[id^=g] > svg').length")
    print("graphs: %d pattern graphs, %d of them SVG" % (graphs, svgs))
    if graphs < min_graphs or svgs != graphs:
        fail("%d pattern graphs, %d SVG (want at least %d, all SVG)" % (graphs, svgs, min_graphs))
    # sort the patterns table by count (column 1): ascending, then descending
    col = "Array.from(document.querySelectorAll('#patterns tbody tr')).map(r => " \
          "parseFloat(r.cells[1].getAttribute('data-v')))"
    before = js(col)
    js("document.querySelector('#patterns thead th:nth-child(2)').click()")
    asc = js(col)
    js("document.querySelector('#patterns thead th:nth-child(2)').click()")
    desc = js(col)
    print("patterns table: %d rows; by count ascending %s..., descending %s..."
          % (len(before), asc[:4], desc[:4]))
    if asc != sorted(before) or desc != sorted(before, reverse=True):
        fail("the patterns table does not sort by count")
    # the nodes table sorts by name
    names = "Array.from(document.querySelectorAll('#nodes tbody tr')).map(r => r.cells[0].textContent)"
    n0 = js(names)
    js("document.querySelector('#nodes thead th:nth-child(1)').click()")
    n1 = js(names)
    if n1 != sorted(n0, key=lambda s: s) and n1 != js(
            "Array.from(document.querySelectorAll('#nodes tbody tr')).map(r => r.cells[0]"
            ".textContent).slice().sort((a,b)=>a.localeCompare(b))"):
        fail("the nodes table does not sort by name: %s" % n1)
    hist = js("document.querySelectorAll('#nodes svg').length")
    print("nodes table: %d rows, %d latency histograms" % (len(n0), hist))
    if hist < 1:
        fail("no node latency histogram")
    charts = js("document.querySelectorAll('div.chart svg polyline').length")
    if charts < 2:
        fail("%d time charts" % charts)
    verdict = js("(document.getElementById('verdict') || {}).textContent || ''")
    if verdict:
        print("verdict: %s" % verdict)
    time.sleep(0.5)
    ws.settimeout(0.5)
    try:
        while True:
            events.append(json.loads(ws.recv()))
    except Exception:
        pass
    errors, requests = [], []
    for m in events:
        meth, p = m.get("method"), m.get("params", {})
        if meth == "Runtime.exceptionThrown":
            errors.append(p["exceptionDetails"].get("text", "") + " " +
                          json.dumps(p["exceptionDetails"].get("exception", {}).get("description")))
        elif meth == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            errors.append("console.%s: %s" % (p["type"], p.get("args")))
        elif meth == "Log.entryAdded" and p["entry"].get("level") == "error":
            errors.append("log: %s" % p["entry"].get("text"))
        elif meth == "Network.requestWillBeSent":
            requests.append(p["request"]["url"])
    print("console errors: %d; requests: %s" % (len(errors), requests))
    for e in errors:
        fail("console: %s" % e)
    for r in requests:
        if r != url:
            fail("a request beyond the page itself: %s" % r)
    ws.close()
finally:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    shutil.rmtree(prof, ignore_errors=True)
sys.exit(1 if failures else 0)
