#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""detect_traffic.py - prefix and spread traffic with its ground truth, for
tests/integration/fleet_detect.sh.

Subcommands (nothing is taken from the daemon):

  send -i IFACE --dst-mac MAC --seed S --out FILE
       [--prefix NET/24,FIRST,COUNT,PACKETS]... [--scanner SRC,FIRST,PEERS]
       [--background FLOWS]
      IPv4 UDP frames (AF_PACKET), in an order shuffled from the seed:
        --prefix    PACKETS spread evenly over the COUNT hosts NET+FIRST ..
                    NET+FIRST+COUNT-1 of a /24 (none of them heavy alone),
                    to one server;
        --scanner   one packet from SRC to each of PEERS distinct
                    (destination, port) pairs, numbered FIRST ..
                    FIRST+PEERS-1 (two hosts given disjoint numbers scan
                    disjoint halves);
        --background FLOWS ordinary flows, 1 to 3 packets each, from
                    sources drawn from 100.64.0.0/10 to a few servers.
      A full queue (ENOBUFS) is waited out and retried, never counted.
      FILE gets what the kernel accepted: packets, frame bytes, packets per
      source /24, every distinct five-tuple and, per source of more than
      10, its distinct (destination, port) peers.

  union FILE...
      The truth of all hosts together: packets summed, /24s summed, the
      distinct five-tuples and each source's peers as unions.  JSON:
      {"packets", "flows", "src24": [[prefix, packets]...] heaviest first,
       "spreaders": [[src, peers]...] widest first}.
"""
import argparse
import ipaddress
import json
import random
import socket
import struct
import sys
import time

SERVER = "10.200.0.1"
ETH_P_IP = 0x0800


def csum(data):
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def frame(eth, src, dst, sport, dport, ipid):
    payload = b"fsdetect" + b"\0" * 24
    ulen = 8 + len(payload)
    # UDP checksum 0: none (RFC 768), which IPv4 allows.
    udp = struct.pack("!HHHH", sport, dport, ulen, 0) + payload
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + ulen, ipid, 0x4000, 64, 17, 0,
                      socket.inet_aton(src), socket.inet_aton(dst))
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return eth + hdr + udp


def send_frame(sock, f):
    for _ in range(200000):  # 20 us apart: 4 s or more of full queues
        try:
            if sock.send(f) != len(f):
                raise SystemExit("short send")
            return True
        except OSError as e:
            if e.errno not in (105, 11, 4):  # ENOBUFS, EAGAIN, EINTR
                raise
            time.sleep(0.00002)
    return False


def plan(a, rng):
    """The (src, dst, sport, dport) of every packet, in sending order."""
    pkts = []
    for spec in a.prefix:
        net, first, count, packets = spec.split(",")
        base = ipaddress.ip_network(net)
        if base.prefixlen != 24:
            raise SystemExit("--prefix wants a /24, not %s" % net)
        hosts = [str(base.network_address + int(first) + i) for i in range(int(count))]
        for i in range(int(packets)):
            h = i % len(hosts)
            pkts.append((hosts[h], SERVER, 20000 + h, 80))
    if a.scanner:
        src, first, peers = a.scanner.split(",")
        for i in range(int(first), int(first) + int(peers)):
            dst = str(ipaddress.ip_address("10.201.0.0") + i // 16)
            pkts.append((src, dst, 33000, 1000 + i % 16))
    for i in range(a.background):
        src = str(ipaddress.ip_address("100.64.0.0") + rng.randrange(1 << 22))
        dst = "10.202.0.%d" % (1 + rng.randrange(64))
        sport = 1024 + rng.randrange(60000)
        for _ in range(1 + rng.randrange(3)):
            pkts.append((src, dst, sport, 443))
    rng.shuffle(pkts)
    return pkts


def cmd_send(a):
    rng = random.Random(a.seed)
    pkts = plan(a, rng)
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    sock.bind((a.interface, 0))
    src_mac = sock.getsockname()[4][:6]
    dst_mac = bytes(int(x, 16) for x in a.dst_mac.split(":"))
    eth = dst_mac + src_mac + struct.pack("!H", ETH_P_IP)
    sent = nbytes = 0
    src24, flows, peers = {}, set(), {}
    for i, (src, dst, sport, dport) in enumerate(pkts):
        f = frame(eth, src, dst, sport, dport, i & 0xFFFF)
        if not send_frame(sock, f):
            raise SystemExit("send: the queue stayed full")
        sent += 1
        nbytes += len(f)
        net = src.rsplit(".", 1)[0] + ".0/24"
        src24[net] = src24.get(net, 0) + 1
        flows.add("%s %s %d %d 17" % (src, dst, sport, dport))
        peers.setdefault(src, set()).add("%s %d" % (dst, dport))
    out = {
        "packets": sent,
        "bytes": nbytes,
        "src24": src24,
        "flows": sorted(flows),
        "peers": {s: sorted(p) for s, p in peers.items() if len(p) > 10},
    }
    with open(a.out, "w") as fh:
        json.dump(out, fh)


def cmd_union(a):
    packets, src24, flows, peers = 0, {}, set(), {}
    for name in a.files:
        t = json.load(open(name))
        packets += t["packets"]
        for k, v in t["src24"].items():
            src24[k] = src24.get(k, 0) + v
        flows.update(t["flows"])
        for s, p in t["peers"].items():
            peers.setdefault(s, set()).update(p)
    json.dump({
        "packets": packets,
        "flows": len(flows),
        "src24": sorted(src24.items(), key=lambda kv: (-kv[1], kv[0])),
        "spreaders": sorted(((s, len(p)) for s, p in peers.items()),
                            key=lambda kv: (-kv[1], kv[0])),
    }, sys.stdout)
    print()


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("send")
    s.add_argument("-i", "--interface", required=True)
    s.add_argument("--dst-mac", required=True)
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--out", required=True)
    s.add_argument("--prefix", action="append", default=[])
    s.add_argument("--scanner")
    s.add_argument("--background", type=int, default=0)
    u = sub.add_parser("union")
    u.add_argument("files", nargs="+")
    a = ap.parse_args()
    {"send": cmd_send, "union": cmd_union}[a.cmd](a)


if __name__ == "__main__":
    main()
