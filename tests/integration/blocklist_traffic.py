#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""blocklist_traffic.py - traffic and ground truth for tests/integration/blocklist.sh.

Subcommands (each prints JSON or writes it to a file; nothing is taken from
the daemon):

  send -i IFACE --dst-mac MAC --src4/--src6 ADDR,... --dst4 A --dst6 B
       --port P --phase N (--count K | --duration S) [--rate PPS] [--stamps]
       [--started FILE] [--scan N] --out FILE
      UDP datagrams in raw Ethernet frames (AF_PACKET), round robin over
      the source addresses, so every source gets its share.  --scan N
      makes each source a scanner: its k-th datagram goes to port
      P + 1 + (k mod N), never P, so N distinct (destination, port)
      pairs a source that the receiver never counts (the end marker
      still goes to P).  Each payload
      carries the phase, the source's sequence number and the send time
      (CLOCK_REALTIME, taken right before send()).  FILE gets, per source,
      what the kernel accepted: datagrams, frame bytes and (--stamps) for
      every datagram the time before send() and the time it returned.
      A full queue (ENOBUFS) is waited out and retried, never counted.
      --started FILE appears once every source has sent STARTED_ROUNDS.
      Last, the phase's end marker goes out from MARKER_SRC.

  recv --port P --dir DIR [--ready FILE]
      One dual-stack UDP socket on [::]:P (IPv4 arrives as ::ffff:a.b.c.d),
      so every datagram of every family lands in one queue, in the order
      the veth delivered it.  Counts datagrams per source address and
      phase; on a phase's end marker it writes DIR/recv-N.json (atomically)
      and forgets the phase: the marker was sent after the phase's last
      datagram, so every datagram of it that got through is counted.

  verdict --sent FILE --recv FILE [CIDR...]
      With CIDR... the list the test believes the daemon holds: a source
      any CIDR covers must have received nothing, every other one all it
      was sent.  JSON summary; the violations name the sources.

  churn --sent FILE --recv FILE --events FILE [--slack S] [CIDR...]
      The same under a list that changed while traffic flowed.  CIDR...
      is the list at the start; FILE holds one change a line,
      "add|del T_CALLED T_RETURNED CIDR...".  A datagram whose send()
      was called at t and returned at u met the XDP program somewhere in
      [t, u + S], S the time a frame may stay queued after send().  It
      must have been dropped when an entry covering its source was added
      (add returned) before t and not deleted (del called) before u + S;
      it must have arrived when every covering entry was surely absent
      over [t, u + S] (never added, or deleted with del returned before t,
      and not added again before u + S).  Anything else is a transition
      and may go either way.  S only widens the transitions at their far
      end: a change that takes effect late is still caught right after
      its request returned.

  counters --sent FILE --recv FILE --list-json FILE
      The per-entry counters of `block list --json` against the phase's
      truth: an entry that overlaps no other must have counted exactly the
      datagrams its sources lost (and their frame bytes, Ethernet header
      included, as XDP sees them); all entries together, every datagram
      lost.  Who counts a source two entries cover is left open (shown).

  same --list-json FILE | --list-file FILE  [CIDR...]
      Whether the entries of `block list --json` (or the lines of a list
      file, '#' comments and blanks skipped) are exactly CIDR..., as sets
      of networks (the text may be spelt differently), each once.
"""
import argparse
import ipaddress
import json
import os
import signal
import socket
import struct
import sys
import time

MAGIC = b"FSBL"
MARK = b"FSBE"
MARKER_SRC = "10.99.0.1"  # never covered by any entry of the test
ETH_P_IP = 0x0800
ETH_P_IPV6 = 0x86DD
SO_RCVBUFFORCE = 33


def csum(data, start=0):
    if len(data) % 2:
        data += b"\0"
    s = start + sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def fold(s):
    return (~s) & 0xFFFF


class Frames:
    """Builds the frames of one source; the headers are fixed, the payload
    (phase, seq, stamp) and so the UDP checksum change per datagram."""

    def __init__(self, src, dst, sport, dport, src_mac, dst_mac):
        self.src = ipaddress.ip_address(src)
        dst = ipaddress.ip_address(dst)
        if self.src.version != dst.version:
            raise SystemExit("source %s and destination %s differ in family" % (src, dst))
        self.v6 = self.src.version == 6
        self.sport, self.dport = sport, dport
        ethertype = ETH_P_IPV6 if self.v6 else ETH_P_IP
        self.eth = dst_mac + src_mac + struct.pack("!H", ethertype)
        self.sb, self.db = self.src.packed, dst.packed
        self.ipid = 0

    def build(self, payload, dport=None):
        ulen = 8 + len(payload)
        dport = self.dport if dport is None else dport
        if self.v6:
            pseudo = self.sb + self.db + struct.pack("!IxxxB", ulen, 17)
        else:
            pseudo = self.sb + self.db + struct.pack("!xBH", 17, ulen)
        udp0 = struct.pack("!HHHH", self.sport, dport, ulen, 0)
        c = fold(csum(udp0 + payload, csum(pseudo))) or 0xFFFF
        udp = struct.pack("!HHHH", self.sport, dport, ulen, c) + payload
        if self.v6:
            ip = struct.pack("!IHBB", 6 << 28, ulen, 17, 64) + self.sb + self.db
        else:
            self.ipid = (self.ipid + 1) & 0xFFFF
            hdr = struct.pack("!BBHHHBBH", 0x45, 0, 20 + ulen, self.ipid, 0x4000, 64, 17, 0)
            hdr += self.sb + self.db
            hc = fold(csum(hdr))
            ip = hdr[:10] + struct.pack("!H", hc) + hdr[12:]
        return self.eth + ip + udp


def send_frame(sock, frame):
    """Send one frame, waiting out a full queue; False if it never went."""
    for _ in range(200000):  # 20 us apart: 4 s or more of full queues
        try:
            if sock.send(frame) != len(frame):
                raise SystemExit("short send")
            return True
        except OSError as e:
            if e.errno not in (105, 11, 4):  # ENOBUFS, EAGAIN, EINTR
                raise
            time.sleep(0.00002)
    return False


def mac_bytes(s):
    b = bytes(int(x, 16) for x in s.split(":"))
    if len(b) != 6:
        raise SystemExit("bad MAC %s" % s)
    return b


def split_list(s):
    return [x for x in (s or "").split(",") if x]


# send --started FILE: FILE appears once every source has sent this many
# datagrams, so that a test waits for traffic rather than for a time.
STARTED_ROUNDS = 4


def cmd_send(a):
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    sock.bind((a.interface, 0))
    src_mac = sock.getsockname()[4][:6]
    dst_mac = mac_bytes(a.dst_mac)
    sources = [(s, a.dst4) for s in split_list(a.src4)] + [(s, a.dst6) for s in split_list(a.src6)]
    if not sources:
        raise SystemExit("no sources")
    gens = [Frames(s, d, 40000 + (i % 20000), a.port, src_mac, dst_mac)
            for i, (s, d) in enumerate(sources)]
    names = [str(g.src) for g in gens]
    sent = [0] * len(gens)
    nbytes = [0] * len(gens)
    stamps = [[] for _ in gens] if a.stamps else None
    frame_len = {}
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    start = time.monotonic()
    total = a.count * len(gens) if a.count else None
    i = 0
    while not stop:
        if total is not None and i >= total:
            break
        now = time.monotonic()
        if a.duration and now - start >= a.duration:
            break
        if a.rate:
            due = start + i / a.rate
            if due > now:
                time.sleep(min(due - now, 0.01))
                continue
        k = i % len(gens)
        stamp = time.time()
        dport = a.port + 1 + sent[k] % a.scan if a.scan else None
        frame = gens[k].build(struct.pack("!4sIId", MAGIC, a.phase, sent[k], stamp), dport)
        if not send_frame(sock, frame):
            raise SystemExit("send: the queue stayed full")
        if stamps is not None:
            stamps[k].append((stamp, time.time()))
        sent[k] += 1
        nbytes[k] += len(frame)
        frame_len[gens[k].src.version] = len(frame)
        i += 1
        if a.started and i == STARTED_ROUNDS * len(gens):
            open(a.started, "w").close()
    marker = Frames(MARKER_SRC, a.dst4, 39999, a.port, src_mac, dst_mac)
    for _ in range(3):  # the receiver takes the first, ignores the rest
        send_frame(sock, marker.build(struct.pack("!4sI", MARK, a.phase)))
        time.sleep(0.01)
    out = {"phase": a.phase, "seconds": time.monotonic() - start,
           "frame_len": {"4": frame_len.get(4, 0), "6": frame_len.get(6, 0)},
           "sources": {}}
    for k, n in enumerate(names):
        e = {"sent": sent[k], "bytes": nbytes[k]}
        if stamps is not None:
            e["stamps"] = [t for t, _ in stamps[k]]
            e["sent_by"] = [t for _, t in stamps[k]]
        out["sources"][n] = e
    write_json(a.out, out)


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.rename(tmp, path)


def cmd_recv(a):
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
    s.bind(("::", a.port))
    phases = {}  # phase -> {src: [seq, ...]}
    done = set()
    late = 0
    stray = 0
    if a.ready:
        open(a.ready, "w").close()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    names = {}  # the socket's address text -> the source's canonical text
    while True:
        data, addr = s.recvfrom(2048)
        src = names.get(addr[0])
        if src is None:
            ip = ipaddress.ip_address(addr[0].split("%")[0])
            if ip.version == 6 and ip.ipv4_mapped:
                ip = ip.ipv4_mapped
            src = names[addr[0]] = str(ip)
        if len(data) == 8 and data[:4] == MARK:
            phase = struct.unpack("!I", data[4:])[0]
            if phase in done:
                continue
            done.add(phase)
            got = phases.pop(phase, {})
            write_json(os.path.join(a.dir, "recv-%d.json" % phase), {
                "phase": phase, "late": late, "stray": stray,
                "sources": {k: {"received": len(v), "seqs": v} for k, v in got.items()}})
            late = stray = 0
            continue
        if len(data) != 20 or data[:4] != MAGIC:
            stray += 1
            continue
        _, phase, seq, _stamp = struct.unpack("!4sIId", data)
        if phase in done:
            late += 1
            continue
        phases.setdefault(phase, {}).setdefault(src, []).append(seq)


def load(path):
    with open(path) as f:
        return json.load(f)


def nets(cidrs):
    return [ipaddress.ip_network(c, strict=True) for c in cidrs]


def covered(src, networks):
    ip = ipaddress.ip_address(src)
    return any(ip.version == n.version and ip in n for n in networks)


def received_of(recv, src):
    return recv["sources"].get(src, {}).get("received", 0)


def cmd_verdict(a):
    sent, recv = load(a.sent), load(a.recv)
    ns = nets(a.cidrs)
    out = {"blocked": {"sources": 0, "sent": 0, "received": 0},
           "open": {"sources": 0, "sent": 0, "received": 0},
           "open_sent_by_family": {"4": 0, "6": 0},
           "dropped_packets": 0, "dropped_bytes": 0,
           "unknown_sources": sorted(set(recv["sources"]) - set(sent["sources"])),
           "late": recv.get("late", 0), "stray": recv.get("stray", 0),
           "violations": []}
    fl = sent["frame_len"]
    for src, e in sent["sources"].items():
        got = received_of(recv, src)
        v = ipaddress.ip_address(src).version
        blocked = covered(src, ns)
        side = out["blocked" if blocked else "open"]
        side["sources"] += 1
        side["sent"] += e["sent"]
        side["received"] += got
        if not blocked:
            out["open_sent_by_family"][str(v)] += e["sent"]
        out["dropped_packets"] += e["sent"] - got
        out["dropped_bytes"] += (e["sent"] - got) * fl[str(v)]
        if blocked and got:
            out["violations"].append("%s is blocked: received %d of %d" % (src, got, e["sent"]))
        if not blocked and got != e["sent"]:
            out["violations"].append("%s is not blocked: received %d of %d" % (src, got, e["sent"]))
        if e["sent"] == 0:
            out["violations"].append("%s: nothing was sent" % src)
    for src in out["unknown_sources"]:
        out["violations"].append("%s: received but never sent" % src)
    json.dump(out, sys.stdout)
    print()


def cmd_counters(a):
    """Per-entry counters of `block list --json` against the truth: the
    entries overlapping no other one must have counted exactly the drops
    of their sources; the sum over all entries, every drop."""
    sent, recv, lst = load(a.sent), load(a.recv), load(a.list_json)
    fl = sent["frame_len"]
    ents = [(ipaddress.ip_network(e["cidr"]), e) for e in lst["entries"]]
    out = {"sum_packets": sum(e["packets"] for _, e in ents), "total_dropped": 0,
           "lone": [], "violations": [], "longest_match": []}
    drops = {}
    for src, e in sent["sources"].items():
        d = e["sent"] - received_of(recv, src)
        drops[src] = d
        out["total_dropped"] += d
    for n, e in ents:
        others = [m for m, _ in ents if m != n and m.version == n.version and m.overlaps(n)]
        mine = [s for s in drops if covered(s, [n])]
        want_p = sum(drops[s] for s in mine)
        want_b = sum(drops[s] * fl[str(n.version)] for s in mine)
        # Attribution under overlap is the implementation's choice; what
        # a longest-prefix match would give is shown, not asserted.
        lm = [s for s in mine if not any(covered(s, [m]) and m.prefixlen > n.prefixlen for m in others)]
        out["longest_match"].append("%s: %d packets (longest match would give %d)"
                                    % (e["cidr"], e["packets"], sum(drops[s] for s in lm)))
        if others:
            continue
        out["lone"].append(e["cidr"])
        if e["packets"] != want_p or e["bytes"] != want_b:
            out["violations"].append("%s: %d packets, %d bytes; its sources lost %d datagrams, %d frame bytes"
                                     % (e["cidr"], e["packets"], e["bytes"], want_p, want_b))
    json.dump(out, sys.stdout)
    print()


def cmd_churn(a):
    sent, recv = load(a.sent), load(a.recv)
    # entry -> list of (kind, t_called, t_returned), in order
    hist = {}
    for n in nets(a.cidrs):
        hist.setdefault(n, []).append(("add", float("-inf"), float("-inf")))
    with open(a.events) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            kind, t0, t1 = w[0], float(w[1]), float(w[2])
            for c in w[3:]:
                hist.setdefault(ipaddress.ip_network(c), []).append((kind, t0, t1))
    slack = a.slack

    def state(n, t, u):
        """'in' if n is surely in the list over [t, u + slack], 'out' if
        surely not, None in a transition."""
        present = False   # surely present at t
        absent = True     # surely absent at t
        for kind, t0, t1 in hist[n]:
            if t1 <= t:   # finished before t
                present, absent = kind == "add", kind == "del"
            elif t0 <= u + slack:  # under way in [t, u + slack]
                present = absent = False
        return "in" if present else "out" if absent else None

    out = {"never_listed": {"sources": 0, "sent": 0, "received": 0},
           "blocked": {"datagrams": 0, "arrived": 0},
           "open": {"datagrams": 0, "missing": 0},
           "transition": 0, "late": recv.get("late", 0), "stray": recv.get("stray", 0),
           "violations": []}
    for src, e in sent["sources"].items():
        ip = ipaddress.ip_address(src)
        mine = [n for n in hist if n.version == ip.version and ip in n]
        got = set(recv["sources"].get(src, {}).get("seqs", []))
        if len(got) != received_of(recv, src):
            out["violations"].append("%s: some datagram arrived twice" % src)
        if not mine:
            nl = out["never_listed"]
            nl["sources"] += 1
            nl["sent"] += e["sent"]
            nl["received"] += len(got)
            if len(got) != e["sent"]:
                out["violations"].append("never-listed %s: received %d of %d"
                                         % (src, len(got), e["sent"]))
            continue
        bad_in, bad_out = [], []
        for seq, (t, u) in enumerate(zip(e["stamps"], e["sent_by"])):
            st = [state(n, t, u) for n in mine]
            if "in" in st:
                out["blocked"]["datagrams"] += 1
                if seq in got:
                    out["blocked"]["arrived"] += 1
                    bad_in.append(seq)
            elif all(s == "out" for s in st):
                out["open"]["datagrams"] += 1
                if seq not in got:
                    out["open"]["missing"] += 1
                    bad_out.append(seq)
            else:
                out["transition"] += 1
        for what, seqs in (("arrived while blocked", bad_in), ("lost while not blocked", bad_out)):
            if seqs:
                out["violations"].append("%s: %d datagrams %s, first sent at %.6f"
                                         % (src, len(seqs), what, e["stamps"][seqs[0]]))
    json.dump(out, sys.stdout)
    print()


def cmd_same(a):
    if a.list_json:
        texts = [e["cidr"] for e in load(a.list_json)["entries"]]
    else:
        with open(a.list_file) as f:
            # The CIDR is a line's first word (blockfile.h: fields follow).
            texts = [l.split("#", 1)[0].split() for l in f]
        texts = [t[0] for t in texts if t]
    try:
        got = [ipaddress.ip_network(t, strict=True) for t in texts]
    except ValueError as e:
        print("not a CIDR: %s" % e)
        sys.exit(1)
    want = nets(a.cidrs)
    problems = []
    if len(set(got)) != len(got):
        problems.append("an entry appears twice")
    if set(got) != set(want):
        problems.append("got [%s], want [%s]" % (" ".join(sorted(map(str, got))),
                                                 " ".join(sorted(map(str, want)))))
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("send")
    s.add_argument("-i", "--interface", required=True)
    s.add_argument("--dst-mac", required=True)
    s.add_argument("--src4", default="")
    s.add_argument("--src6", default="")
    s.add_argument("--dst4", required=True)
    s.add_argument("--dst6", default="::1")
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--phase", type=int, required=True)
    s.add_argument("--count", type=int, default=0)
    s.add_argument("--duration", type=float, default=0)
    s.add_argument("--rate", type=float, default=0)
    s.add_argument("--stamps", action="store_true")
    s.add_argument("--started")
    s.add_argument("--scan", type=int, default=0)
    s.add_argument("--out", required=True)
    r = sub.add_parser("recv")
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--dir", required=True)
    r.add_argument("--ready")
    for name in ("verdict", "churn", "counters"):
        v = sub.add_parser(name)
        v.add_argument("--sent", required=True)
        v.add_argument("--recv", required=True)
        if name == "churn":
            v.add_argument("--events", required=True)
            v.add_argument("--slack", type=float, default=0.02)
        if name == "counters":
            v.add_argument("--list-json", required=True)
        v.add_argument("cidrs", nargs="*")
    m = sub.add_parser("same")
    g = m.add_mutually_exclusive_group(required=True)
    g.add_argument("--list-json")
    g.add_argument("--list-file")
    m.add_argument("cidrs", nargs="*")
    a = p.parse_args()
    if a.cmd == "send" and not (a.count or a.duration):
        p.error("send needs --count or --duration")
    if a.cmd == "send" and not 0 <= a.scan <= 65535 - a.port:
        p.error("--scan N: ports P + 1 .. P + N must be ports")
    {"send": cmd_send, "recv": cmd_recv, "verdict": cmd_verdict, "churn": cmd_churn,
     "counters": cmd_counters, "same": cmd_same}[a.cmd](a)


if __name__ == "__main__":
    main()
