#!/usr/bin/env python3
# gen_longflows.py OUT [CONNS] [SECONDS] - writes a deterministic pcap of an
# HTTP/1.1 load with many flows and long responses: CONNS keep-alive
# connections (default 1000) from 250 clients to 4 servers, each asking in
# turn, after a pause of up to 100 ms, for a file: 80% small (256 B-4 KB),
# 20% large (8-128 KB), sizes log-uniform; a response goes out in 1448-byte
# segments at 50 KB/s-1 MB/s per connection (log-uniform: slow clients), so
# hundreds of responses are in flight at once, lasting up to 2.6 s, far
# longer than the gaps between other flows' messages. Every 2nd data segment
# is ACKed. The same arguments give the same bytes.
import heapq, random, struct, sys

out = sys.argv[1]
conns = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
secs = float(sys.argv[3]) if len(sys.argv) > 3 else 2.0
rnd = random.Random(16)
MSS = 1448
T0 = 1700000000.0


def frame(src, dst, sp, dp, seq, ack, flags, payload):
    tcp = struct.pack("!HHIIBBHHH", sp, dp, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, 5 << 4, flags, 65535, 0, 0)
    tot = 20 + len(tcp) + len(payload)
    # IPv4 header checksum left 0: bbcap's own reassembly checks none.
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, tot, 0, 0x4000, 64, 6, 0, src, dst)
    eth = b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01" + b"\x08\x00"
    return eth + ip + tcp + payload


events = []  # (time, order, frame)
order = 0


def emit(t, f):
    global order
    order += 1
    events.append((t, order, f))


body_cache = {}
for i in range(conns):
    cli = bytes([10, 1, (i // 250) % 250, 1 + i % 250])
    srv = bytes([10, 2, 0, 1 + i % 4])
    cp, sp = 20000 + i % 40000, 80
    cs, ss = rnd.randrange(1 << 32), rnd.randrange(1 << 32)
    t = rnd.uniform(0, 0.3)
    rtt = rnd.uniform(0.0001, 0.002)
    emit(t, frame(cli, srv, cp, sp, cs, 0, 0x02, b""))
    emit(t + rtt / 2, frame(srv, cli, sp, cp, ss, cs + 1, 0x12, b""))
    t += rtt
    emit(t, frame(cli, srv, cp, sp, cs + 1, ss + 1, 0x10, b""))
    cs += 1
    ss += 1
    n = 0
    while t < secs:
        size = int(2 ** (rnd.uniform(8, 12) if rnd.random() < 0.8 else rnd.uniform(13, 17)))
        req = ("GET /f/%d/%d HTTP/1.1\r\nHost: s%d\r\nUser-Agent: gen\r\n\r\n" % (i, n, i % 4)).encode()
        emit(t, frame(cli, srv, cp, sp, cs, ss, 0x18, req))
        cs += len(req)
        t += rnd.uniform(0.0002, 0.003)  # server think time
        hdr = ("HTTP/1.1 200 OK\r\nServer: gen\r\nContent-Length: %d\r\n\r\n" % size).encode()
        body = hdr + b"x" * size
        rate = 2 ** rnd.uniform(15.6, 20)
        k = 0
        for off in range(0, len(body), MSS):
            seg = body[off:off + MSS]
            emit(t, frame(srv, cli, sp, cp, ss + off, cs, 0x18 if off + MSS >= len(body) else 0x10, seg))
            k += 1
            if k % 2 == 0:
                emit(t + rtt / 2, frame(cli, srv, cp, sp, cs, ss + off + len(seg), 0x10, b""))
            t += len(seg) / rate
        ss += len(body)
        emit(t + rtt / 2, frame(cli, srv, cp, sp, cs, ss, 0x10, b""))
        t += rtt + rnd.uniform(0, 0.1)  # client pause before the next request
        n += 1
    emit(t, frame(cli, srv, cp, sp, cs, ss, 0x11, b""))
    emit(t + rtt / 2, frame(srv, cli, sp, cp, ss, cs + 1, 0x11, b""))
    emit(t + rtt, frame(cli, srv, cp, sp, cs + 1, ss + 1, 0x10, b""))

events.sort()
with open(out, "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 262144, 1))
    for t, _, fr in events:
        ns = int(round((T0 + t) * 1e9))
        f.write(struct.pack("<IIII", ns // 1000000000, ns % 1000000000, len(fr), len(fr)))
        f.write(fr)
print("%s: %d packets" % (out, len(events)), file=sys.stderr)
