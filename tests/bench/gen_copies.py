#!/usr/bin/env python3
# gen_copies.py SRC DST COPIES SHIFT - writes COPIES copies of the classic pcap
# SRC into DST, copy i with its IPv4 (or IPv6) addresses' last bytes moved by
# i (IPv4 header checksums fixed: libnids checks them) and its times SHIFT*i
# seconds later, records in time order. SHIFT longer than SRC lasts: copies
# one after the other; shorter: copies overlapping, a denser load.
import struct, sys

src, dst, copies, shift = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
data = open(src, "rb").read()
hdr, body = data[:24], data[24:]
unit = 1000000000 if struct.unpack("<I", hdr[:4])[0] == 0xa1b23c4d else 1000000
recs, o = [], 0
while o + 16 <= len(body):
    sec, frac, incl, orig = struct.unpack("<IIII", body[o:o + 16])
    recs.append((sec * unit + frac, orig, body[o + 16:o + 16 + incl]))
    o += 16 + incl


def csum(h):
    s = sum(struct.unpack("!%dH" % (len(h) // 2), h))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


out = []
for i in range(copies):
    d = int(round(i * shift * unit))
    for t, orig, p in recs:
        q = bytearray(p)
        if len(q) >= 34 and q[12:14] == b"\x08\x00":
            ihl = (q[14] & 15) * 4
            q[14 + 13] = (q[14 + 13] + i) & 255
            q[14 + 17] = (q[14 + 17] + i) & 255
            q[24:26] = b"\0\0"
            q[24:26] = struct.pack("!H", csum(bytes(q[14:14 + ihl])))
        elif len(q) >= 54 and q[12:14] == b"\x86\xdd":
            q[14 + 8 + 13] = (q[14 + 8 + 13] + i) & 255
            q[14 + 24 + 13] = (q[14 + 24 + 13] + i) & 255
        out.append((t + d, i, orig, bytes(q)))
out.sort(key=lambda r: (r[0], r[1]))
with open(dst, "wb") as f:
    f.write(hdr)
    for t, _, orig, q in out:
        f.write(struct.pack("<IIII", t // unit, t % unit, len(q), orig))
        f.write(q)
