#!/usr/bin/python3
"""otlp_server.py - a tiny OTLP/HTTP collector on loopback for the tests: saves the body of
each POST to /v1/traces as DIR/N.json and answers STATUS (200 by default).

usage: otlp_server.py DIR PORTFILE [STATUS]   (writes its port to PORTFILE; stop it with
SIGTERM)"""
import http.server
import os
import signal
import sys

out, portfile = sys.argv[1], sys.argv[2]
status = int(sys.argv[3]) if len(sys.argv) > 3 else 200
count = [0]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        ok = self.path == "/v1/traces" and \
            self.headers.get("Content-Type", "").startswith("application/json")
        if ok and status == 200:
            count[0] += 1
            with open(os.path.join(out, "%04d.json" % count[0]), "wb") as f:
                f.write(body)
        code = status if ok else 404
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


srv = http.server.HTTPServer(("127.0.0.1", 0), Handler)
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
