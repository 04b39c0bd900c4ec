#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# metrics_check.py - the checks of metrics.sh on flowsketchd's /metrics,
# each a subcommand; exit 0 when it holds, 1 with "# ..." lines saying
# what did not (printed to stdout, for TAP).
#
#   families FILE                  Prometheus's own parser reads FILE
#                                  (prometheus_client.parser) and every
#                                  family has # HELP and # TYPE
#   values FILE STATUS --iface NAME [--truth-in T]... [--truth-out T]...
#                                  every counter and gauge that status
#                                  --json also shows is equal to it; the
#                                  packets and bytes series are NAME's
#                                  alone, per direction (no "unknown"),
#                                  and they, status's .interfaces[] counts
#                                  and the window totals are the
#                                  generators' truth (everything sent on
#                                  NAME since the datapath was loaded)
#   window FILE TOP FLOWS_IN FLOWS_OUT
#                                  top talkers and distinct counts are the
#                                  CLI's (top -n N, flows --direction) for
#                                  the same last window
#   finished FILE                  print the windows finished, per frontend
#   monotonic BEFORE AFTER         no counter of BEFORE is lower in AFTER
#   prom URL STATUS                the Prometheus server at URL holds the
#                                  expected series, valued as in STATUS
#                                  (the packets and bytes series: one per
#                                  interface and direction, as its
#                                  .interfaces[] counts)
#   get FILE NAME [LABEL=VALUE]... print the value of that one sample, as
#                                  an integer (nothing, exit 1: none)
#   bigheader HOST PORT BYTES      a GET with a header of BYTES: prints
#                                  the HTTP status, or "closed"
#   slow HOST PORT N SECONDS READY connect N clients that send nothing,
#                                  write READY, hold them SECONDS
import json
import socket
import sys
import time
import urllib.parse
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

MALFORMED = ["trunc_eth", "trunc_vlan", "vlan_depth", "trunc_ipv4", "bad_ihl",
             "bad_ipv4_len", "trunc_ipv6", "trunc_ipv6_ext", "ipv6_ext_chain",
             "trunc_l4", "bad_tcp_doff", "skb_nonlinear"]

# Every page has these (the parser's names: counters without _total).
REQUIRED = ["flowsketch_packets", "flowsketch_bytes",
            "flowsketch_malformed_packets", "flowsketch_reports",
            "flowsketch_reports_dropped", "flowsketch_windows_finished",
            "flowsketch_windows_lost", "flowsketch_recursion_misses",
            "flowsketch_distinct_flows", "flowsketch_distinct_sources",
            "flowsketch_distinct_destinations",
            "flowsketch_connections_opened",
            "flowsketch_connections_established", "flowsketch_top_packets"]

bad = []


def fail(msg):
    bad.append(msg)


def done():
    for b in bad:
        print("# " + b)
    sys.exit(1 if bad else 0)


def samples(path):
    """{(name, frozenset(labels)): value} of every sample in the file."""
    out = {}
    for fam in text_string_to_metric_families(open(path).read()):
        for s in fam.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def value(sm, name, **labels):
    return sm.get((name, frozenset(labels.items())))


def expect(sm, name, want, at_most=False, **labels):
    got = value(sm, name, **labels)
    if got is None:
        fail("%s%s: missing, want %s" % (name, labels or "", want))
    elif got != want and not (at_most and got < want):
        fail("%s%s = %s, want %s%s" % (name, labels or "", got,
                                       "at most " if at_most else "", want))


def cmd_families(path):
    text = open(path).read()
    helps, types = set(), set()
    for line in text.splitlines():
        if line.startswith("# HELP "):
            helps.add(line.split()[2])
        elif line.startswith("# TYPE "):
            types.add(line.split()[2])
    n = 0
    seen = set()
    for fam in text_string_to_metric_families(text):
        n += 1
        seen.add(fam.name)
        # The parser strips _total from a counter's family name.
        names = {fam.name, fam.name + "_total"}
        if not names & helps or not fam.documentation:
            fail("%s has no # HELP" % fam.name)
        typed = names & types
        if not typed or fam.type not in ("counter", "gauge"):
            fail("%s has no # TYPE counter or gauge (%s)" % (fam.name, fam.type))
        for s in fam.samples:
            if not s.name.startswith("flowsketch_"):
                fail("%s: not a flowsketch_ name" % s.name)
            if fam.type == "counter" and not s.name.endswith("_total"):
                fail("counter %s does not end in _total" % s.name)
    for f in REQUIRED:
        if f not in seen:
            fail("no family %s" % f)
    print("# %d families, each with HELP and TYPE" % n)
    done()


def frontend(st, name):
    for f in st["frontends"]:
        if f["name"] == name:
            return f
    return None


def interface(st, name):
    for f in st["interfaces"]:
        if f["name"] == name:
            return f
    return None


def series_of(sm, name, direction):
    """{interface label: value} of name's samples of direction."""
    out = {}
    for (n, labels), v in sm.items():
        lb = dict(labels)
        if n == name and lb.get("direction") == direction:
            out[lb.get("interface")] = v
    return out


def cmd_values(path, status, args):
    sm = samples(path)
    st = json.load(open(status))
    truth = {"in": [], "out": []}
    iface = None
    i = 0
    while i < len(args):
        if args[i] == "--iface":
            iface = args[i + 1]
        else:
            truth[args[i][len("--truth-"):]].append(json.load(open(args[i + 1])))
        i += 2
    if iface is None:
        sys.exit("values: --iface NAME")
    c = st["counters"]
    fin = st["frontends"][0]["name"]
    eg, conn = frontend(st, "egress"), frontend(st, "conn")
    itf = interface(st, iface)
    if itf is None or len(st["interfaces"]) != 1:
        fail("status interfaces %s, want %s alone" %
             ([f["name"] for f in st["interfaces"]], iface))
        done()
    # The page's per-interface series, status's .interfaces[] (both since
    # load) and the window totals (the finished windows the daemon has)
    # against one another and against what was sent on iface.
    win = {"in": st["totals"], "out": eg["totals"]}
    for d in ("in", "out"):
        un = st.get("unattributed", {}).get(d)
        if un is None or un["packets"] != 0 or un["bytes"] != 0:
            fail("status .unattributed.%s = %s, want 0 packets, 0 bytes" % (d, un))
        for k in ("packets", "bytes"):
            name = "flowsketch_%s_total" % k
            got = series_of(sm, name, d)
            if set(got) != {iface}:
                fail("%s{direction=%s}: interfaces %s, want %s alone "
                     "(no \"unknown\")" % (name, d, sorted(map(str, got)), iface))
            if d not in itf:
                fail("status .interfaces[%s] has no %s" % (iface, d))
                continue
            expect(sm, name, itf[d][k], interface=iface, direction=d)
            t = truth[d]
            if not t:
                continue
            want = sum(x["total_" + k] for x in t)
            expect(sm, name, want, interface=iface, direction=d)
            if itf[d][k] != want:
                fail("status .interfaces[%s].%s.%s = %s, sent %s" %
                     (iface, d, k, itf[d][k], want))
            if win[d][k] != want:
                fail("status %s totals.%s = %s, sent %s" % (d, k, win[d][k], want))
    for r in MALFORMED:
        expect(sm, "flowsketch_malformed_packets_total", c["malformed"][r],
               direction="in", reason=r)
        expect(sm, "flowsketch_malformed_packets_total", eg["malformed"][r],
               direction="out", reason=r)
    # The datapath's counters of the connection frontend move with every
    # TCP connection in the namespace, this test's HTTP requests too: the
    # page (as of the last rotation) may be behind status (live).
    for name, f, src in ((fin, None, c), ("egress", eg, eg), ("conn", conn, conn)):
        live = name == "conn"
        expect(sm, "flowsketch_reports_total", src["reports"], at_most=live,
               frontend=name)
        expect(sm, "flowsketch_reports_dropped_total", src["reports_dropped"],
               at_most=live, frontend=name)
        expect(sm, "flowsketch_windows_lost_total", src["windows_lost"],
               frontend=name)
        expect(sm, "flowsketch_windows_finished_total", src["windows_finished"],
               frontend=name)
        if f is not None:
            expect(sm, "flowsketch_recursion_misses_total",
                   f["recursion_misses"], frontend=name)
    expect(sm, "flowsketch_connections_opened_total", conn["totals"]["connections"])
    expect(sm, "flowsketch_connections_established_total",
           conn["totals"]["established"])
    bl = st.get("blocklist")
    if bl:
        expect(sm, "flowsketch_blocklist_entries", bl["entries"])
        expect(sm, "flowsketch_blocklist_dropped_packets_total",
               bl["dropped_packets"])
        expect(sm, "flowsketch_blocklist_dropped_bytes_total", bl["dropped_bytes"])
        expect(sm, "flowsketch_blocklist_cached_packets_total", bl["cached"])
        got = value(sm, "flowsketch_blocklist_false_positive_ratio")
        if got is None or abs(got - bl["measured_fpr"]) > 1e-12:
            fail("false positive ratio %s, status %s" % (got, bl["measured_fpr"]))
    elif value(sm, "flowsketch_blocklist_entries") is not None:
        fail("blocklist metrics without a blocklist")
    print("# %s packets in %s, out %s" % (
        iface, value(sm, "flowsketch_packets_total", interface=iface, direction="in"),
        value(sm, "flowsketch_packets_total", interface=iface, direction="out")))
    done()


def cmd_window(path, top, flows_in, flows_out):
    sm = samples(path)
    top = json.load(open(top))
    got = {}
    for (name, labels), v in sm.items():
        if name == "flowsketch_top_packets":
            lb = dict(labels)
            got[(lb["src"], lb["dst"], lb["sport"], lb["dport"], lb["proto"],
                 lb["direction"])] = v
    want = {(f["src"], f["dst"], str(f["sport"]), str(f["dport"]), f["proto"],
             f["direction"]): f["packets"] for f in top["flows"]}
    if not want:
        fail("top answered no flow: no traffic in the last window?")
    if got != want:
        fail("top_packets %s" % sorted(got.items())[:4])
        fail("top -n      %s" % sorted(want.items())[:4])
    for d, path_ in (("in", flows_in), ("out", flows_out)):
        fl = json.load(open(path_))
        for k in ("flows", "sources", "destinations"):
            expect(sm, "flowsketch_distinct_" + k, fl["distinct_" + k],
                   direction=d)
    print("# %d top talkers, distinct flows in %s, out %s" % (
        len(got), value(sm, "flowsketch_distinct_flows", direction="in"),
        value(sm, "flowsketch_distinct_flows", direction="out")))
    done()


def cmd_detect(path, pfx, spr):
    """The page's top prefixes (IPv4 sources' /24s) and destination
    spreaders of direction in are the daemon's answers for the same
    window, and there are some."""
    sm = samples(path)
    pfx = json.load(open(pfx))
    spr = json.load(open(spr))
    got_p, got_s = {}, {}
    for (name, labels), v in sm.items():
        lb = dict(labels)
        if lb.get("direction") != "in":
            continue
        if name == "flowsketch_top_prefix_packets" and lb["side"] == "src" \
                and lb["prefix"].endswith("/24") and ":" not in lb["prefix"]:
            got_p[lb["prefix"]] = v
        elif name == "flowsketch_top_spread" and lb["side"] == "dst":
            got_s[lb["host"]] = v
    want_p = {p["prefix"]: p["packets"] for p in pfx.get("prefixes", [])}
    want_s = {s["dst"]: s["distinct"] for s in spr.get("spreaders", [])}
    if not want_p or not want_s:
        fail("the daemon answered no prefix or no spreader: %s %s" % (pfx, spr))
    if got_p != want_p:
        fail("top_prefix_packets %s, prefixes answered %s" % (
            sorted(got_p.items())[:4], sorted(want_p.items())[:4]))
    if set(got_s) != set(want_s) or \
            any(abs(got_s[k] - want_s[k]) > 1 for k in want_s):
        fail("top_spread %s, spread answered %s" % (
            sorted(got_s.items())[:4], sorted(want_s.items())[:4]))
    print("# %d source /24s, %d destination spreaders" % (len(got_p), len(got_s)))
    done()


def cmd_finished(path):
    sm = samples(path)
    print(" ".join("%s=%d" % (dict(l)["frontend"], v) for (n, l), v in
                   sorted(sm.items(), key=lambda kv: sorted(kv[0][1]))
                   if n == "flowsketch_windows_finished_total"))


def cmd_monotonic(before, after):
    b, a = samples(before), samples(after)
    n = 0
    for (name, labels), v in b.items():
        if not name.endswith("_total"):
            continue
        n += 1
        w = a.get((name, labels))
        if w is None:
            fail("%s%s: gone" % (name, dict(labels)))
        elif w < v:
            fail("%s%s went back: %s -> %s" % (name, dict(labels), v, w))
    print("# %d counters compared" % n)
    done()


def prom_query(url, q):
    u = url + "/api/v1/query?" + urllib.parse.urlencode({"query": q})
    with urllib.request.urlopen(u, timeout=5) as r:
        ans = json.load(r)
    if ans.get("status") != "success":
        raise RuntimeError("%s: %s" % (q, ans))
    return {frozenset((k, v) for k, v in s["metric"].items()
                      if k not in ("__name__", "instance", "job")):
            float(s["value"][1]) for s in ans["data"]["result"]}


def prom_names(url):
    """The flowsketch_ names Prometheus holds series of."""
    u = url + "/api/v1/label/__name__/values"
    with urllib.request.urlopen(u, timeout=5) as r:
        ans = json.load(r)
    return {n for n in ans["data"] if n.startswith("flowsketch_")}


def cmd_prom(url, status):
    st = json.load(open(status))
    try:
        up = prom_query(url, 'up{job="flowsketch"}')
        pk = prom_query(url, "flowsketch_packets_total")
        by = prom_query(url, "flowsketch_bytes_total")
        mal = prom_query(url, "flowsketch_malformed_packets_total")
        rep = prom_query(url, "flowsketch_reports_total")
        fam = prom_names(url)
    except Exception as e:  # not up yet: the caller retries
        fail("query failed: %s" % e)
        done()
    if list(up.values()) != [1.0]:
        fail("up = %s" % up)
    # One series per interface and direction, valued as status's counts
    # (no "unknown": status's .unattributed is 0, values checked that).
    for got, k in ((pk, "packets"), (by, "bytes")):
        want = {frozenset({("interface", f["name"]), ("direction", d)}): f[d][k]
                for f in st["interfaces"] for d in ("in", "out")}
        if got != want:
            fail("flowsketch_%s_total %s, status %s" % (k, got, want))
    if len(mal) != 2 * len(MALFORMED):
        fail("%d malformed series, want %d" % (len(mal), 2 * len(MALFORMED)))
    fin = st["frontends"][0]["name"]
    r = rep.get(frozenset({("frontend", fin)}))
    if r != st["counters"]["reports"]:
        fail("reports_total{frontend=%s} %s, status %s" % (fin, r, st["counters"]["reports"]))
    # Not top_packets: no flow ran in the windows it scraped.
    want = [f for f in REQUIRED if f != "flowsketch_top_packets"]
    if st.get("blocklist"):
        want.append("flowsketch_blocklist_entries")
    for f in want:
        if f not in fam and f + "_total" not in fam:
            fail("Prometheus has no series of %s" % f)
    if not bad:
        print("# Prometheus holds %d flowsketch_ names; packets %s" % (
            len(fam), " ".join("%s %s %d" % (f["name"], d, f[d]["packets"])
                               for f in st["interfaces"] for d in ("in", "out"))))
    done()


def cmd_get(path, name, labels):
    v = value(samples(path), name, **dict(x.split("=", 1) for x in labels))
    if v is None:
        sys.exit(1)
    print(int(v))


def cmd_bigheader(host, port, size):
    s = socket.create_connection((host, int(port)), timeout=5)
    req = ("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + "a" * int(size) +
           "\r\n\r\n").encode()
    try:
        s.sendall(req)
    except OSError:
        pass  # closed while we sent: also a refusal
    try:
        line = s.makefile("rb").readline().decode(errors="replace").split()
    except OSError:
        line = []
    print(line[1] if len(line) > 1 else "closed")


def cmd_slow(host, port, n, seconds, ready):
    socks = [socket.create_connection((host, int(port)), timeout=5)
             for _ in range(int(n))]
    open(ready, "w").write("%d\n" % len(socks))
    time.sleep(float(seconds))
    closed = 0
    for s in socks:
        s.setblocking(False)
        try:
            if s.recv(1) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    print("%d of %d slow clients closed by the daemon" % (closed, len(socks)))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "families":
        cmd_families(*args)
    elif cmd == "values":
        cmd_values(args[0], args[1], args[2:])
    elif cmd == "window":
        cmd_window(*args)
    elif cmd == "detect":
        cmd_detect(*args)
    elif cmd == "finished":
        cmd_finished(*args)
    elif cmd == "monotonic":
        cmd_monotonic(*args)
    elif cmd == "prom":
        cmd_prom(*args)
    elif cmd == "get":
        cmd_get(args[0], args[1], args[2:])
    elif cmd == "bigheader":
        cmd_bigheader(*args)
    elif cmd == "slow":
        cmd_slow(*args)
    else:
        sys.exit("unknown command " + cmd)


main()
