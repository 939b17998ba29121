#!/usr/bin/python3
# bbcap_tokens_check.py - checks the tok= and ctx= of a trace bbcap made from
# the traffic of tests/fixtures/tokens/make_tokens.sh: the records that carry
# user 42's identifiers share a token that user 77's records lack (and the
# other way round), across HTTP/1.1, h2c, redis, memcached, PostgreSQL and
# MariaDB; a key like session:42 is shared whole; every request that carried
# a context header has the same ctx= at the front and at the backend, one per
# request, and none without one; equal DNS names share their token.
# Usage: bbcap_tokens_check.py TRACE. Prints what it checked; exit 1 on a failure.
import re
import sys
from urllib.parse import unquote

HEX = re.compile(r"^[0-9a-f]{16}$")
fails = []


def no(msg):
    fails.append(msg)
    print("FAIL " + msg)


recs = []
meta = []
with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
    for line in f:
        line = line.rstrip("\n")
        if line.startswith("#"):
            meta.append(line)
            continue
        if not line.strip():
            continue
        fl = line.split("\t")
        a = dict(x.split("=", 1) for x in fl[5:])
        toks = a.get("tok", "").split(",") if a.get("tok") else []
        recs.append({"op": fl[1], "proto": a.get("proto", "-"), "req": unquote(a.get("req", "")),
                     "tok": toks, "ctx": a.get("ctx", ""), "line": line})

if "#tokens salt=given" not in meta:
    no("no '#tokens salt=given' line")
for r in recs:
    if len(r["tok"]) > 8 or len(set(r["tok"])) != len(r["tok"]) or not all(HEX.match(t) for t in r["tok"]):
        no("bad tok= in " + r["line"])
    if r["ctx"] and not HEX.match(r["ctx"]):
        no("bad ctx= in " + r["line"])
    if r["op"] == "RET" and r["proto"] in ("http", "http2", "redis", "memcache") and r["tok"]:
        no("a reply with tokens: " + r["line"])


def calls(proto, pred=lambda r: True):
    return [r for r in recs if r["op"] == "CALL" and r["proto"] == proto and pred(r)]


def pick(lst, idx, what):
    if len(lst) <= max(idx):
        no("%s: %d calls, expected more than %d" % (what, len(lst), max(idx)))
        return []
    return [lst[i] for i in idx]


http_all = calls("http") + calls("http2")
sql = lambda r: r["req"].startswith("SELECT")
redis, mc = calls("redis"), calls("memcache")
pg, my = calls("pgsql", sql), calls("mysql", sql)
# user 42 and user 77, in the order make_tokens.sh sends them
u42 = {
    "http": [r for r in http_all if "uid=42" in r["req"]],
    "redis": pick(redis, [0, 1], "redis"),
    "memcache": pick(mc, [0, 1, 3], "memcache"),
    "pgsql": pick(pg, [0, 2], "pgsql"),
    "mysql": pick(my, [0, 1], "mysql"),
}
u77 = {
    "http": [r for r in http_all if "uid=77" in r["req"]],
    "redis": pick(redis, [2], "redis"),
    "memcache": pick(mc, [2], "memcache"),
    "pgsql": pick(pg, [1], "pgsql"),
    "mysql": pick(my, [2], "mysql"),
}


def shared(groups):
    common = None
    n = 0
    for lst in groups.values():
        for r in lst:
            n += 1
            common = set(r["tok"]) if common is None else common & set(r["tok"])
    return common or set(), n


s42, n42 = shared(u42)
s77, n77 = shared(u77)
if len(u42["http"]) != 6:
    no("%d HTTP calls with uid=42 (expected 6: h1 and h2c front, their backend calls)" % len(u42["http"]))
if len(u77["http"]) != 6:
    no("%d HTTP calls with uid=77 (expected 6)" % len(u77["http"]))
if not s42:
    no("the %d calls of user 42 share no token" % n42)
if not s77:
    no("the %d calls of user 77 share no token" % n77)
if s42 & s77:
    no("users 42 and 77 share a token")
for lst in u77.values():
    for r in lst:
        if s42 & set(r["tok"]):
            no("a call of user 77 has user 42's token: " + r["line"])
print("user 42: %d calls (http, http2, redis, memcache, pgsql, mysql) share %d token(s); "
      "user 77: %d calls share %d; none in common" % (n42, len(s42), n77, len(s77)))
# session:42 whole (and its parts): redis key, SQL literal, bind parameter
k, nk = shared({"redis": u42["redis"][:1], "pgsql": u42["pgsql"][:1], "mysql": u42["mysql"]})
if len(k) < 3:
    no("redis SET session:42, the SQL literal 'session:42' and the MariaDB parameter share %d "
       "tokens (expected 42, session:42, session)" % len(k))
else:
    print("session:42: %d calls (redis, pgsql literal, mysql literal and parameter) share %d tokens"
          % (nk, len(k)))

# context: per request (req=), the front and the backend call
groups = {}
for r in http_all:
    groups.setdefault(r["req"].split("?")[0].replace("/h2/cart", "/h2/profile"), []).append(r)
want_ctx = ["GET /profile", "GET /ctx/b3", "GET /ctx/x-b3", "GET /ctx/uber", "GET /ctx/request-id",
            "GET /ctx/correlation-id", "GET /h2/profile"]
seen = {}
for g in want_ctx:
    lst = groups.get(g, [])
    cs = set(r["ctx"] for r in lst)
    if len(lst) < 2 or len(cs) != 1 or "" in cs:
        no("%s: %d calls with ctx %s (expected the front and the backend call with one ctx)"
           % (g, len(lst), sorted(cs)))
        continue
    c = cs.pop()
    if c in seen:
        no("%s and %s have the same ctx" % (g, seen[c]))
    seen[c] = g
for r in recs:
    if r["ctx"] and r["proto"] not in ("http", "http2"):
        no("ctx= on a %s record" % r["proto"])
for r in groups.get("GET /plain", []):
    if r["ctx"]:
        no("ctx= on a request without context headers: " + r["line"])
if not groups.get("GET /plain"):
    no("no /plain request")
print("context: %d requests (traceparent, b3, X-B3-TraceId, uber-trace-id, X-Request-ID, "
      "X-Correlation-ID, h2c traceparent), each one ctx= at the front and the backend"
      % len(seen))

# DNS: the whole name, one token
dns = calls("dns")
names = {}
for r in dns:
    if len(r["tok"]) != 1:
        no("a DNS query with %d tokens: %s" % (len(r["tok"]), r["line"]))
        continue
    names.setdefault(r["req"].split(" ")[0], set()).add(r["tok"][0])
if len(names) != 2 or any(len(v) != 1 for v in names.values()) or len(set().union(*names.values())) != 2:
    no("DNS names and tokens: %s" % names)
else:
    print("dns: %d queries, one token per name, %d names" % (len(dns), len(names)))

sys.exit(1 if fails else 0)
