#!/usr/bin/python3
# pcap_seeds.py - decoder fuzz seeds from real captures (tshark extracts the payloads)
# SPDX-License-Identifier: MIT
#
# Usage: pcap_seeds.py PROTOCOLS_DIR OUT_DIR
# For each dns__*, oncrpc__* and http__* capture in PROTOCOLS_DIR (the shared
# protocol corpus), writes fuzz_decoders inputs: byte 0 the transport (and,
# for OUT_DIR/decoders, the decoder: index + 4 for UDP, in registry order dns,
# sunrpc, http, generic), byte 1 a split pattern, then the payload: the first
# 4 KB of each of the first 6 TCP streams per direction, and the first 6 UDP
# payloads. OUT_DIR/dec_dns, dec_sunrpc, dec_http get their protocol's inputs,
# dec_generic the TCP ones of all three, OUT_DIR/decoders all of them.
import collections
import os
import subprocess
import sys

PROTO = {"dns": ("dec_dns", 0), "oncrpc": ("dec_sunrpc", 1), "http": ("dec_http", 2)}
GENERIC = 3


def payloads(path):
    out = subprocess.run(["tshark", "-r", path, "-T", "fields", "-e", "tcp.stream",
                          "-e", "tcp.srcport", "-e", "tcp.payload", "-e", "udp.payload"],
                         capture_output=True, text=True, check=False).stdout
    streams, udp = collections.OrderedDict(), []
    for line in out.splitlines():
        f = line.split("\t")
        if len(f) < 4:
            continue
        if f[2]:
            k = (f[0], f[1])
            streams.setdefault(k, b"")
            if len(streams[k]) < 4096:
                streams[k] += bytes.fromhex(f[2].replace(":", ""))
        elif f[3]:
            udp.append(bytes.fromhex(f[3].replace(":", "")))
    return [v[:4096] for v in list(streams.values())[:6]], udp[:6]


def put(d, name, data):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    src, out = sys.argv[1], sys.argv[2]
    for fn in sorted(os.listdir(src)):
        proto = fn.split("__")[0]
        if proto not in PROTO:
            continue
        target, idx = PROTO[proto]
        base = fn.rsplit(".", 1)[0]
        tcp, udp = payloads(os.path.join(src, fn))
        n = 0
        for v in tcp:
            split = bytes([n * 37 % 256])
            put(os.path.join(out, target), "%s-tcp%d" % (base, n), b"\0" + split + v)
            put(os.path.join(out, "dec_generic"), "%s-tcp%d" % (base, n), b"\0" + split + v)
            put(os.path.join(out, "decoders"), "%s-tcp%d" % (base, n), bytes([idx]) + split + v)
            put(os.path.join(out, "decoders"), "g-%s-tcp%d" % (base, n), bytes([GENERIC]) + split + v)
            n += 1
        for v in udp:
            split = bytes([n * 37 % 256])
            put(os.path.join(out, target), "%s-udp%d" % (base, n), b"\1" + split + v)
            put(os.path.join(out, "decoders"), "%s-udp%d" % (base, n), bytes([idx + 4]) + split + v)
            n += 1


if __name__ == "__main__":
    main()
