#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""vlan_frames.py - send UDP datagrams behind stacked VLAN tags.

    vlan_frames.py IFACE DST_MAC SRC DST COUNT TAGS...

Writes COUNT frames per tag stack on IFACE's AF_PACKET socket, from SRC to
DST (both IPv4 or both IPv6; UDP 4000 -> 9), each frame behind the VLAN
tags TAGS describe, outermost first.  A tag is TPID:VID, TPID q (0x8100)
or ad (0x88a8), e.g. "q:0,ad:0,q:100"; "-" is no tag at all.  Several TAGS
send COUNT frames of each stack in turn.  The IPv4 header checksum is
computed (the receiving stack checks it); UDP's is 0 for IPv4 (none) and
computed for IPv6, where it is mandatory.  Prints the frames sent.
"""
import socket
import struct
import sys

TPID = {"q": 0x8100, "ad": 0x88a8}


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def ip_packet(src, dst):
    payload = b"vlan-stack-test!"
    if ":" in src:
        s, d = socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst)
        ulen = 8 + len(payload)
        pseudo = s + d + struct.pack("!IxxxB", ulen, 17)
        udp = struct.pack("!HHHH", 4000, 9, ulen, 0) + payload
        c = csum(pseudo + udp) or 0xffff
        udp = udp[:6] + struct.pack("!H", c) + udp[8:]
        hdr = struct.pack("!IHBB", 6 << 28, len(udp), 17, 64) + s + d
        return 0x86dd, hdr + udp
    s, d = socket.inet_aton(src), socket.inet_aton(dst)
    udp = struct.pack("!HHHH", 4000, 9, 8 + len(payload), 0) + payload
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0, s, d)
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return 0x0800, hdr + udp


def frame(dst_mac, src_mac, tags, ethertype, packet):
    types = [TPID[t] for t, _ in tags] + [ethertype]
    out = dst_mac + src_mac + struct.pack("!H", types[0])
    for i, (_, vid) in enumerate(tags):
        out += struct.pack("!HH", vid, types[i + 1])
    return out + packet


def parse_tags(spec):
    if spec == "-":
        return []
    tags = []
    for t in spec.split(","):
        tpid, vid = t.split(":")
        if tpid not in TPID or not 0 <= int(vid) < 4096:
            sys.exit("vlan_frames.py: bad tag %r" % t)
        tags.append((tpid, int(vid)))
    return tags


def main():
    if len(sys.argv) < 7:
        sys.exit(__doc__)
    iface, dst_mac, src, dst, count = sys.argv[1:6]
    dst_mac = bytes.fromhex(dst_mac.replace(":", ""))
    ethertype, packet = ip_packet(src, dst)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    src_mac = s.getsockname()[4]
    sent = 0
    for spec in sys.argv[6:]:
        f = frame(dst_mac, src_mac, parse_tags(spec), ethertype, packet)
        for _ in range(int(count)):
            while True:
                try:
                    s.send(f)
                    break
                except OSError:	# ENOBUFS: the qdisc is full, try again
                    pass
            sent += 1
    print(sent)


main()
