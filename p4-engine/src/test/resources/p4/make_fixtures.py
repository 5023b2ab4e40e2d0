#!/usr/bin/env python3
"""Builds the input frames of the P4 test programs and, independently of the engine, the frames each
program must send: worked by hand from what the program's tables and actions do (see the comments).
Run it in this directory to regenerate the *.pcap and *.ports fixtures."""
import struct

def mac(s): return bytes(int(x, 16) for x in s.split(":"))
def ip(s): return bytes(int(x) for x in s.split("."))

def csum(b):
    """RFC 1071 Internet checksum."""
    if len(b) % 2: b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff

def ipv4(src, dst, proto, ttl=64, payload=b"", bad_checksum=False):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 0x1234, 0x4000, ttl, proto, 0, ip(src), ip(dst))
    c = csum(h) ^ (0xffff if bad_checksum else 0)
    return h[:10] + struct.pack("!H", c) + h[12:] + payload

def eth(dst, src, etype, body): return mac(dst) + mac(src) + struct.pack("!H", etype) + body

def pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1700000000 + i, 0, len(fr), len(fr)))
            f.write(fr)

def write(name, cases):
    pcap(name + ".in.pcap", [c[0] for c in cases])
    pcap(name + ".out.pcap", [c[2] for c in cases if c[1] != "drop"])
    with open(name + ".ports", "w") as f:
        f.write("".join("%s\n" % c[1] for c in cases))

PAYLOAD = bytes(range(26))
A, B, BC = "00:00:00:00:00:01", "00:00:00:00:00:02", "ff:ff:ff:ff:ff:ff"

# L2 switch: dmac 00..02 -> port 1, 00..01 -> port 0 (l2_switch.entries); anything else is dropped.
# Frames leave unchanged.
l2 = []
for dst, port in [(B, 1), (A, 0), (BC, "drop"), (B, 1)]:
    f = eth(dst, "00:00:00:00:00:09", 0x88b5, PAYLOAD)
    l2.append((f, port, f))
write("l2_switch", l2)

# IPv4 router (ipv4_router.entries): 10/8 -> dmac 00:00:00:00:0a:01 port 1; 10.1/16 -> 0a:02 port 0;
# 10.1.2/24 -> drop; miss -> drop; not IPv4 -> drop; bad checksum -> drop. A forwarded frame gets
# smac = its old dmac, the entry's dmac, ttl - 1 (mod 256) and a recomputed header checksum.
def routed(dst_ip, new_dmac, ttl, proto=17):
    old_dmac, smac = "00:00:00:00:00:fe", "00:00:00:00:00:33"
    fin = eth(old_dmac, smac, 0x0800, ipv4("192.0.2.1", dst_ip, proto, ttl, PAYLOAD))
    fout = eth(new_dmac, old_dmac, 0x0800, ipv4("192.0.2.1", dst_ip, proto, (ttl - 1) % 256, PAYLOAD))
    return fin, fout
r = []
i, o = routed("10.9.9.9", "00:00:00:00:0a:01", 64); r.append((i, 1, o))
i, o = routed("10.1.7.7", "00:00:00:00:0a:02", 64); r.append((i, 0, o))
i, o = routed("10.1.2.3", "00:00:00:00:0a:02", 64); r.append((i, "drop", None))
i, o = routed("192.168.1.1", "00:00:00:00:0a:02", 64); r.append((i, "drop", None))
arp = eth(BC, "00:00:00:00:00:33", 0x0806, bytes(28)); r.append((arp, "drop", None))
bad = eth("00:00:00:00:00:fe", "00:00:00:00:00:33", 0x0800, ipv4("192.0.2.1", "10.1.7.7", 17, 64, PAYLOAD, True))
r.append((bad, "drop", None))
i, o = routed("10.9.9.9", "00:00:00:00:0a:01", 0); r.append((i, 1, o))
write("ipv4_router", r)

# Ternary ACL (const entries in acl.json), frames entering on port 0:
# prio 1: src 10/8 and UDP -> deny; prio 2: src 10/8 -> allow to port 1; prio 3: TCP -> deny;
# otherwise (and for non-IPv4) to_other_side: egress_spec = 1 - ingress_port = 1. Frames leave unchanged.
acl = []
for src, proto, port in [("10.0.0.1", 17, "drop"), ("10.0.0.1", 6, 1), ("192.168.0.1", 6, "drop"),
                         ("192.168.0.1", 17, 1)]:
    f = eth(B, A, 0x0800, ipv4(src, "10.0.0.2", proto, 64, PAYLOAD))
    acl.append((f, port, f))
acl.append((arp, 1, arp))
write("acl", acl)
