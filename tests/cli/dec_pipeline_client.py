#!/usr/bin/python3
# dec_pipeline_client.py - pipelined clients of real servers, for dec_pipeline_live.sh:
# on one connection per depth, D calls written back to back before any reply
# is read, for nginx (HTTP/1.1 GETs), redis (RESP), memcached (text),
# PostgreSQL (extended protocol: Parse/Bind/Execute/Sync per query, as libpq's
# pipeline mode) and MariaDB (COM_QUERY and COM_PING).
#
# To make the depth real on the wire, the server (its process: nginx's
# worker, redis-server, memcached, mariadbd, the PostgreSQL backend of the
# connection) is stopped (SIGSTOP) while the calls are written, as a server
# stalled by a pause would be; the kernel's buffers then hold what it has not
# read, and it is continued (SIGCONT) before the replies are read.
#
# First, a memcached connection is opened and used before the capture starts;
# the script prints READY and waits for a line on stdin, then sends a miss
# (answered by a bare END) and a hit on it: the capture picks that connection
# up mid-stream.
#
# usage: dec_pipeline_client.py SERVER_IP NGINX_PID REDIS_PID MEMCACHED_PID MARIADBD_PID DEPTH...
import os
import signal
import socket
import struct
import sys
import time

srv = sys.argv[1]
pid_http, pid_redis, pid_mc, pid_my = (int(x) for x in sys.argv[2:6])
depths = [int(x) for x in sys.argv[6:]]


def connect(port):
    s = socket.create_connection((srv, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def recv_until(s, counter, want):
    buf = b""
    while counter(buf) < want:
        d = s.recv(1 << 16)
        if not d:
            raise RuntimeError("connection closed after %d of %d replies" % (counter(buf), want))
        buf += d
    return buf


SIOCOUTQNSD = 0x894B


def unsent(s):
    import fcntl
    return struct.unpack("i", fcntl.ioctl(s.fileno(), SIOCOUTQNSD, b"\0\0\0\0"))[0]


def pipeline(s, data, pid, counter, want):
    """Writes data with the server stopped until the buffers are full, lets it
    run, then writes the rest while reading the want replies."""
    os.kill(pid, signal.SIGSTOP)
    try:
        s.setblocking(False)
        off = 0
        while off < len(data):
            try:
                off += s.send(data[off:off + (1 << 16)])
            except BlockingIOError:
                break
        # Let what the buffers took reach the wire (the stopped server's
        # kernel still acknowledges into its receive buffer).
        last, same = -1, 0
        for _ in range(200):
            u = unsent(s)
            if u == 0 or same >= 5:
                break
            same = same + 1 if u == last else 0
            last = u
            time.sleep(0.01)
    finally:
        os.kill(pid, signal.SIGCONT)
    s.setblocking(True)
    buf = b""
    import select
    while counter(buf) < want:
        w = [s] if off < len(data) else []
        r, w, _ = select.select([s], w, [])
        if w:
            try:
                s.setblocking(False)
                off += s.send(data[off:off + (1 << 16)])
            except BlockingIOError:
                pass
            finally:
                s.setblocking(True)
        if r:
            d = s.recv(1 << 16)
            if not d:
                raise RuntimeError("connection closed after %d of %d replies" % (counter(buf), want))
            buf += d
    return buf


# ---- HTTP/1.1 to nginx: GET /k<i>, each answered 204
def http(d):
    s = connect(80)
    data = b"".join(b"GET /k%d HTTP/1.1\r\nHost: s\r\n\r\n" % i for i in range(1, d + 1))
    pipeline(s, data, pid_http, lambda b: b.count(b"HTTP/1.1 204"), d)
    s.close()


# ---- redis: INCR, TYPE and EXISTS in turn (a shifted pairing shows in req=)
def redis(d):
    s = connect(6379)
    cmds = (b"INCR", b"TYPE", b"EXISTS")
    data = b""
    for i in range(1, d + 1):
        c, k = cmds[i % 3], b"k%d" % i
        data += b"*2\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(c), c, len(k), k)
    pipeline(s, data, pid_redis, lambda b: b.count(b"\r\n"), d)
    s.close()


# ---- memcached text: get (a miss: END), incr (NOT_FOUND) and version in turn
def memcache(d):
    s = connect(11211)
    data = b""
    for i in range(1, d + 1):
        data += (b"get k%d\r\n" % i, b"incr n%d 1\r\n" % i, b"version\r\n")[i % 3]
    pipeline(s, data, pid_mc, lambda b: b.count(b"\r\n"), d)
    s.close()


# ---- PostgreSQL: startup (trust), then one Parse/Bind/Execute/Sync per query
def pg_msg(t, body):
    return t + struct.pack("!I", 4 + len(body)) + body


def pg_count(b, ztype=b"Z"):
    n, off = 0, 0
    while off + 5 <= len(b):
        t = b[off:off + 1]
        ln = struct.unpack("!I", b[off + 1:off + 5])[0]
        if off + 1 + ln > len(b):
            break
        n += t == ztype
        off += 1 + ln
    return n


def pgsql(d):
    s = connect(5432)
    body = struct.pack("!I", 196608) + b"user\0postgres\0database\0postgres\0\0"
    s.sendall(struct.pack("!I", 4 + len(body)) + body)
    buf = recv_until(s, pg_count, 1)
    off, pid = 0, None
    while off < len(buf):  # BackendKeyData: the backend's process id
        ln = struct.unpack("!I", buf[off + 1:off + 5])[0]
        if buf[off:off + 1] == b"K":
            pid = struct.unpack("!I", buf[off + 5:off + 9])[0]
        off += 1 + ln
    sqls = (b"SELECT relname FROM pg_class LIMIT 1", b"SELECT typname FROM pg_type LIMIT 1",
            b"SELECT 1")
    data = b""
    for i in range(1, d + 1):
        data += pg_msg(b"P", b"\0" + sqls[i % 3] + b"\0" + struct.pack("!H", 0))
        data += pg_msg(b"B", b"\0\0" + struct.pack("!HHH", 0, 0, 0))
        data += pg_msg(b"E", b"\0" + struct.pack("!I", 0))
        data += pg_msg(b"S", b"")
    pipeline(s, data, pid, pg_count, d)
    s.sendall(pg_msg(b"X", b""))
    s.close()


# ---- MariaDB: user bb without password, then COM_QUERY DO / SET and COM_PING
def my_pkt(seq, payload):
    return struct.pack("<I", len(payload))[:3] + bytes([seq]) + payload


def my_count(b):
    n, off = 0, 0
    while off + 4 <= len(b):
        ln = struct.unpack("<I", b[off:off + 3] + b"\0")[0]
        if off + 4 + ln > len(b):
            break
        n += 1
        off += 4 + ln
    return n


def mysql(d):
    s = connect(3306)
    recv_until(s, my_count, 1)  # the greeting
    caps = 0x1 | 0x200 | 0x8000 | 0x80000  # LONG_PASSWORD, PROTOCOL_41, SECURE_CONNECTION, PLUGIN_AUTH
    resp = struct.pack("<IIB", caps, 1 << 24, 33) + b"\0" * 23 + b"bb\0" + b"\0" + b"mysql_native_password\0"
    s.sendall(my_pkt(1, resp))
    ok = recv_until(s, my_count, 1)
    if ok[4] != 0:
        raise RuntimeError("mariadb login: %r" % ok)
    data = b""
    for i in range(1, d + 1):
        data += (my_pkt(0, b"\x03DO %d" % i), my_pkt(0, b"\x03SET @v = %d" % i), my_pkt(0, b"\x0e"))[i % 3]
    pipeline(s, data, pid_my, my_count, d)
    s.close()


# ---- the mid-stream memcached connection
mid = connect(11211)
mid.sendall(b"version\r\n")
recv_until(mid, lambda b: b.count(b"\r\n"), 1)
print("READY", flush=True)
sys.stdin.readline()
mid.sendall(b"get user:nosuch\r\n")
recv_until(mid, lambda b: b.count(b"END\r\n"), 1)
mid.sendall(b"set user:1 0 0 3\r\nann\r\n")
recv_until(mid, lambda b: b.count(b"\r\n"), 1)
mid.sendall(b"get user:1\r\n")
recv_until(mid, lambda b: b.count(b"END\r\n"), 1)
mid.close()

for f in (http, redis, memcache, pgsql, mysql):
    for d in depths:
        f(d)
print("DONE", flush=True)
