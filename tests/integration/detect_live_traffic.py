#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""detect_live_traffic.py - traffic and ground truth for tests/integration/detect_live.sh.

Subcommands (nothing is taken from the daemon but the answers judged):

  send -i IFACE --dst-mac MAC --seed S --out FILE [--ordinary N]
       [--spread N] [--heavy-hosts H] [--heavy-share Q]
      IPv4/UDP frames of 60 bytes (AF_PACKET), one shuffled sequence of
          ordinary   N flows of one packet each, random 10.0.0.0/8 sources
                     and destinations, random ports;
          scanner    SCANNER to N distinct (destination, port) pairs in
                     172.16.0.0/12, one packet each;
          victim     N distinct spoofed sources in 100.64.0.0/10 to
                     VICTIM:80, one packet each;
          heavy /24  H hosts of HEAVY_NET (.1 to .H) to HEAVY_DST:443, Q of
                     all the packets together, spread evenly over them
                     (with Q = 0.25 and H = 200 each host sends some 0.1 %:
                     none is a heavy flow, their /24 is).
      No ordinary address falls in a planted range.  A full queue
      (ENOBUFS) is waited out and the frame sent again, so FILE holds
      exactly what the kernel accepted: totals, the distinct five-tuples,
      sources and destinations, the true spread of the planted keys and
      the sum F of all keys' spreads per side, the true packets of every
      source /24, and the sources and destinations themselves.

  judge --truth FILE --z Z --prefix-depth D --prefix-log2w L --prefix-skip T
        --spread-depth D --spread-log2w L --spread-shift S --spread-regs M
        --prefixes FILE --spread-src FILE --spread-dst FILE [--phi PHI]
      The daemon's answers against the truth, with bounds computed here
      from the parameters (prefix.h and spread.h, "Error"); the answers'
      own error_bound, packets_low, distinct_low and error are never read.
      The answers' lower ends (packets_low, distinct_low) are checked, as
      claims, against the truth: never above it.  Prints one JSON object:
      per check a list of violations (empty: it holds) and the figures the
      TAP lines show.
"""
import argparse
import ipaddress
import json
import math
import random
import socket
import struct
import sys
import time

SCANNER = "192.0.2.7"
VICTIM = "203.0.113.9"
HEAVY_NET = "198.51.100.0/24"
HEAVY_DST = "203.0.113.80"
ORDINARY = ipaddress.ip_network("10.0.0.0/8")
SCAN_TARGETS = ipaddress.ip_network("172.16.0.0/12")
SPOOFED = ipaddress.ip_network("100.64.0.0/10")
SCAN_PORTS = (21, 22, 23, 80, 443, 445, 3389, 8080)
PAYLOAD = 18		# 14 + 20 + 8 + 18 = 60 bytes, Ethernet's minimum
FRAME_LEN = 14 + 20 + 8 + PAYLOAD
ETH_P_IP = 0x0800


def u32(a):
    return int(ipaddress.IPv4Address(a))


def dotted(x):
    return str(ipaddress.IPv4Address(x))


def random_in(rng, net, taken):
    """A random address of net not in taken (then in it)."""
    base, span = int(net.network_address), net.num_addresses
    while True:
        a = base + rng.randrange(span)
        if a not in taken:
            taken.add(a)
            return a


def packets(a):
    """The planted and ordinary packets, as (src, dst, sport, dport)
    tuples of integers, in one shuffled order."""
    rng = random.Random(a.seed)
    bits = rng.getrandbits
    out = []
    five = set()
    # Ordinary: distinct five-tuples (a repeat is drawn again), addresses
    # in 10/8, which no planted range touches.
    lo = int(ORDINARY.network_address)
    while len(out) < a.ordinary:
        x, y = bits(48), bits(32)
        t = (lo | x >> 24, lo | (x & 0xFFFFFF), 1024 + (y >> 16) % 64512, 1 + (y & 0xFFFF) % 65535)
        if t not in five:
            five.add(t)
            out.append(t)
    scanner, victim = u32(SCANNER), u32(VICTIM)
    pairs = set()
    while len(pairs) < a.spread:
        pairs.add((int(SCAN_TARGETS.network_address) + rng.randrange(SCAN_TARGETS.num_addresses),
                   rng.choice(SCAN_PORTS)))
    out += [(scanner, d, 54321, p) for d, p in sorted(pairs)]
    spoofed = set()
    for _ in range(a.spread):
        out.append((random_in(rng, SPOOFED, spoofed), victim, rng.randrange(1024, 65536), 80))
    # The heavy /24: Q of the total, so H = Q / (1 - Q) times the rest.
    heavy = round(a.heavy_share / (1 - a.heavy_share) * len(out))
    net = int(ipaddress.ip_network(HEAVY_NET).network_address)
    dst = u32(HEAVY_DST)
    for i in range(heavy):
        host = 1 + i % a.heavy_hosts
        out.append((net + host, dst, 30000 + (i // a.heavy_hosts) % 16, 443))
    rng.shuffle(out)
    return out


def frames(a, pkts, src_mac):
    """Every frame, built before the first is sent (so that sending is
    one send() after another, the traffic as dense in time as Python
    makes it): 60 bytes each in one buffer, as memoryview slices."""
    n = len(pkts)
    eth = bytes.fromhex(a.dst_mac.replace(":", "")) + src_mac + struct.pack("!H", ETH_P_IP)
    buf = bytearray((eth + bytes(FRAME_LEN - len(eth))) * n)
    hdr = struct.Struct("!BBHHHBBHIIHHHH")
    tot = FRAME_LEN - len(eth)
    # The IPv4 header's 16-bit words but id and addresses, summed once;
    # each frame adds its own and folds twice (ones' complement sum).
    base = 0x4500 + tot + 0x4000 + (64 << 8 | 17)
    for i, (src, dst, sport, dport) in enumerate(pkts):
        ipid = i & 0xFFFF
        c = base + ipid + (src >> 16) + (src & 0xFFFF) + (dst >> 16) + (dst & 0xFFFF)
        c = (c & 0xFFFF) + (c >> 16)
        c = (c & 0xFFFF) + (c >> 16)
        hdr.pack_into(buf, i * FRAME_LEN + len(eth), 0x45, 0, tot, ipid, 0x4000, 64, 17,
                      ~c & 0xFFFF, src, dst, sport, dport, 8 + PAYLOAD, 0)
    mv = memoryview(buf)
    return [mv[i:i + FRAME_LEN] for i in range(0, n * FRAME_LEN, FRAME_LEN)]


def send_all(s, fr):
    """Each frame until the kernel takes it; the retries."""
    send = s.send
    retries = 0
    for f in fr:
        while True:
            try:
                send(f)
                break
            except OSError as e:
                if e.errno not in (105, 11, 4):	# ENOBUFS, EAGAIN, EINTR
                    raise
                retries += 1
                if retries > 2000000:
                    raise SystemExit("detect_live_traffic.py: the interface stays full")
                time.sleep(0.0001)
    return retries


def cmd_send(a):
    t0 = time.monotonic()
    pkts = packets(a)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((a.i, 0))
    fr = frames(a, pkts, s.getsockname()[4])
    t1 = time.monotonic()
    retries = send_all(s, fr)
    t2 = time.monotonic()
    sent = len(fr)
    scanner, victim = u32(SCANNER), u32(VICTIM)
    src_elems = {(s, d, dp) for s, d, _, dp in pkts}	# side SRC: (dst, dport)
    dst_elems = {(d, s) for s, d, _, _ in pkts}		# side DST: source
    spread_src, spread_dst = {}, {}
    for s, _, _ in src_elems:
        spread_src[s] = spread_src.get(s, 0) + 1
    for d, _ in dst_elems:
        spread_dst[d] = spread_dst.get(d, 0) + 1
    by24 = {}
    for s, _, _, _ in pkts:
        by24[s & 0xFFFFFF00] = by24.get(s & 0xFFFFFF00, 0) + 1
    heavy = ipaddress.ip_network(HEAVY_NET)
    lo, hi = int(heavy.network_address), int(heavy.broadcast_address)
    hosts = {}
    for s, _, _, _ in pkts:
        if lo <= s <= hi:
            hosts[s] = hosts.get(s, 0) + 1
    truth = {
        "seed": a.seed,
        "total_packets": sent,
        "total_bytes": sent * FRAME_LEN,
        "frame_len": FRAME_LEN,
        "retries": retries,
        "build_seconds": round(t1 - t0, 3),
        "send_seconds": round(t2 - t1, 3),
        "distinct_flows": len(set(pkts)),
        "distinct_sources": len(spread_src),
        "distinct_destinations": len(spread_dst),
        "spread": {
            "src": {"planted": SCANNER, "n": spread_src[scanner], "F": len(src_elems),
                    "max_other": max(v for k, v in spread_src.items() if k != scanner)},
            "dst": {"planted": VICTIM, "n": spread_dst[victim], "F": len(dst_elems),
                    "max_other": max(v for k, v in spread_dst.items() if k != victim)},
        },
        "heavy": {"prefix": HEAVY_NET, "hosts": len(hosts), "packets": by24[lo],
                  "max_host": max(hosts.values())},
        "src24": {dotted(k) + "/24": v for k, v in by24.items()},
        "spread_of": {"src": {dotted(k): v for k, v in spread_src.items()},
                      "dst": {dotted(k): v for k, v in spread_dst.items()}},
    }
    with open(a.out, "w") as f:
        json.dump(truth, f)


# ---------------------------------------------------------------- judge
def load(path):
    with open(path) as f:
        return json.load(f)


def prefix_bounds(a, truth_x, total):
    """prefix.h, "Error": with V = 8 x 2^t, the estimate E of a prefix of
    N_x packets in a span of N lies in
        [N_x - z sqrt((V - 1) N_x),  N_x + 4 e N / w + z sqrt((V - 1) N_x)]
    (collisions one-sided, Markov over d rows: 1 - e^-d; sampling
    two-sided, z standard deviations of V Bin(N_x, 1/V))."""
    V = 8 << a.prefix_skip
    w = 1 << a.prefix_log2w
    samp = a.z * math.sqrt((V - 1) * truth_x)
    coll = 4 * math.e * total / w
    return truth_x - samp, truth_x + coll + samp


def spread_bounds(a, n, F):
    """spread.h, "Error": with R = 2^s, m registers, w = 2^L buckets a row,
        sigma(n) = sqrt(1.04^2 / m + (R - 1) / n),
        n (1 - z sigma) <= S <= (n + e F / w) (1 + z sigma),
    F the sum of all keys' spreads on the side.  sigma is taken at the
    key's own n, which is at least the bucket's sigma(n_r), n_r >= n:
    both ends only widen."""
    R = 1 << a.spread_shift
    w = 1 << a.spread_log2w
    sigma = math.sqrt(1.04 ** 2 / a.spread_regs + (R - 1) / n)
    share = math.e * F / w
    return n * (1 - a.z * sigma), (n + share) * (1 + a.z * sigma), sigma, share


def judge_prefixes(a, truth, ans, out):
    src24 = truth["src24"]
    total = truth["total_packets"]
    lst = ans.get("prefixes")
    p = out["prefixes"] = {"listed": [], "bad_answer": [], "unknown": [],
                           "heavy": [], "above_phi": [], "order": [], "total": [], "low": []}
    if not isinstance(lst, list) or not lst:
        # Every check of the answer fails, none holds by having nothing
        # to look at.
        for k in p:
            p[k].append("no entries to judge")
        p["bad_answer"] = ["no \"prefixes\" entries: %s" % json.dumps(ans)[:300]]
        return
    if ans.get("total_packets") != total:
        p["total"].append("total_packets %s, sent %d" % (ans.get("total_packets"), total))
    for e in lst:
        pre, est = e.get("prefix"), e.get("packets")
        if not isinstance(pre, str) or not isinstance(est, (int, float)):
            p["bad_answer"].append("entry without prefix and packets: %s" % json.dumps(e))
            continue
        p["listed"].append("%s %d (true %d)" % (pre, est, src24.get(pre, 0)))
        try:
            net = ipaddress.ip_network(pre)
        except ValueError:
            p["bad_answer"].append("%s is not a prefix" % pre)
            continue
        if net.version != 4 or net.prefixlen != 24:
            p["bad_answer"].append("%s is not an IPv4 /24" % pre)
        elif pre not in src24:
            # A candidate is a prefix some packet carried: never made up.
            p["unknown"].append("%s: no source of the traffic is in it" % pre)
        elif not isinstance(e.get("packets_low"), (int, float)) or e["packets_low"] > src24[pre]:
            # The lower end a mitigation rule acts on: never above the truth.
            p["low"].append("%s: packets_low %s, true %d" % (pre, e.get("packets_low"), src24[pre]))
    ests = {e["prefix"]: e["packets"] for e in lst
            if isinstance(e, dict) and "prefix" in e and "packets" in e}
    heavy = truth["heavy"]["prefix"]
    # Every /24 above phi of the span: listed, within its bound.
    for pre, n in sorted(src24.items(), key=lambda kv: -kv[1]):
        if n < a.phi * total:
            break
        lo, hi = prefix_bounds(a, n, total)
        what = "heavy" if pre == heavy else "above_phi"
        p.setdefault(what + "_figures", []).append(
            "%s: %s packets, true %d, bound [%.0f, %.0f]" % (pre, ests.get(pre), n, lo, hi))
        if pre not in ests:
            p[what].append("%s (%d packets, %.1f %%) is not listed" % (pre, n, 100.0 * n / total))
        elif not lo <= ests[pre] <= hi:
            p[what].append("%s: %d packets, true %d, outside [%.0f, %.0f]" % (pre, ests[pre], n, lo, hi))
    # No light /24 listed above the heavy one.
    if lst and lst[0].get("prefix") != heavy:
        p["order"].append("first listed is %s, not %s" % (lst[0].get("prefix"), heavy))
    for e in lst:
        if e.get("prefix") != heavy and heavy in ests and e.get("packets", 0) > ests[heavy]:
            p["order"].append("%s (%s packets) above %s (%s)" % (e["prefix"], e["packets"], heavy, ests[heavy]))


def judge_spread(a, truth, side, ans, out):
    t = truth["spread"][side]
    known = truth["spread_of"][side]
    lst = ans.get("spreaders")
    s = out["spread_" + side] = {"listed": [], "bad_answer": [], "unknown": [],
                                 "top": [], "bound": [], "above": [], "low": []}
    if not isinstance(lst, list) or not lst:
        for k in s:
            s[k].append("no entries to judge")
        s["bad_answer"] = ["no \"spreaders\" entries: %s" % json.dumps(ans)[:300]]
        return
    for e in lst:
        k, x = e.get(side), e.get("distinct")
        if not isinstance(k, str) or not isinstance(x, (int, float)):
            s["bad_answer"].append("entry without %s and distinct: %s" % (side, json.dumps(e)))
            continue
        s["listed"].append("%s %s" % (k, x))
        if k not in known:
            # A candidate is a key some packet carried.
            s["unknown"].append("%s is no %s of the traffic" % (k, "source" if side == "src" else "destination"))
        elif not isinstance(e.get("distinct_low"), (int, float)) or e["distinct_low"] > known[k]:
            # The lower end a mitigation rule acts on: never above the truth.
            s["low"].append("%s: distinct_low %s, true spread %d" % (k, e.get("distinct_low"), known[k]))
    planted, n = t["planted"], t["n"]
    lo, hi, sigma, share = spread_bounds(a, n, t["F"])
    s["figures"] = ("true %d of F = %d; sigma(n) %.4f, e F / w %.0f: bound [%.0f, %.0f]"
                    % (n, t["F"], sigma, share, lo, hi))
    top = lst[0].get(side)
    if top != planted:
        s["top"].append("first listed is %s, not %s" % (top, planted))
    mine = [e for e in lst if e.get(side) == planted]
    if not mine:
        s["bound"].append("%s is not listed" % planted)
        return
    x = mine[0].get("distinct")
    s["estimate"] = x
    if not isinstance(x, (int, float)) or not lo <= x <= hi:
        s["bound"].append("%s: distinct %s, true %d, outside [%.0f, %.0f]" % (planted, x, n, lo, hi))
    for e in lst:
        if e.get(side) != planted and isinstance(e.get("distinct"), (int, float)) and e["distinct"] > x:
            s["above"].append("%s (distinct %s) above %s (%s)" % (e.get(side), e["distinct"], planted, x))


def cmd_judge(a):
    truth = load(a.truth)
    out = {}
    judge_prefixes(a, truth, load(a.prefixes), out)
    judge_spread(a, truth, "src", load(a.spread_src), out)
    judge_spread(a, truth, "dst", load(a.spread_dst), out)
    json.dump(out, sys.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("send")
    s.add_argument("-i", required=True)
    s.add_argument("--dst-mac", required=True)
    s.add_argument("--seed", type=int, required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--ordinary", type=int, default=100000)
    s.add_argument("--spread", type=int, default=5000)
    s.add_argument("--heavy-hosts", type=int, default=200)
    s.add_argument("--heavy-share", type=float, default=0.25)
    j = sub.add_parser("judge")
    j.add_argument("--truth", required=True)
    j.add_argument("--prefixes", required=True)
    j.add_argument("--spread-src", required=True)
    j.add_argument("--spread-dst", required=True)
    j.add_argument("--z", type=float, required=True)
    j.add_argument("--phi", type=float, default=0.03)
    for k in ("prefix-depth", "prefix-log2w", "prefix-skip", "spread-depth",
              "spread-log2w", "spread-shift", "spread-regs"):
        j.add_argument("--" + k, type=int, required=True)
    a = ap.parse_args()
    if a.cmd == "send":
        if not (1 <= a.heavy_hosts <= 254 and 0 < a.heavy_share < 1 and
                a.spread <= 100000 and a.ordinary >= 1):
            sys.exit("detect_live_traffic.py: --heavy-hosts 1..254, --heavy-share in (0, 1), --spread <= 100000")
        cmd_send(a)
    else:
        cmd_judge(a)


main()
