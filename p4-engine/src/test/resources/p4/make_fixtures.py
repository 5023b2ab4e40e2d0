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

def pcap(path, frames, times=None):
    """times: (seconds, microseconds) per frame; one second apart by default."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            sec, usec = times[i] if times else (1700000000 + i, 0)
            f.write(struct.pack("<IIII", sec, usec, len(fr), len(fr)))
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

# v1model features (v1model_features.json and .entries), every frame entering on port 0 (the TAP):
# - MyIngress.learned: a source MAC other than A (00..0a) sends a digest [srcAddr, ingress_port];
# - MyIngress.police on etherType with a direct meter: 0x88b5 forward(1), metered at CIR 1 packet/s burst 1,
#   PIR 2 packets/s burst 2 (tokens counted from the first frame's time); 0x88b8 and 0x88b7 forward(1);
#   a RED frame is dropped;
# - MyIngress.ecmp, an action selector over crc16(srcAddr): 0x88b6 -> group of forward(0), forward(1), in
#   member order: port = crc16(srcAddr) % 2;
# - MyIngress.mirror: dstAddr 00..0e clones the frame as it entered to session 5 (port 0); the clone's
#   egress (instance_type 1) sets srcAddr 02:00:00:00:c1:0e;
# - MyIngress.again: 0x88b7 becomes 0x88b8 and recirculates; the second pass forwards it to port 1.
def crc16(data):
    """CRC-16/ARC (bmv2's crc16)."""
    c = 0
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ 0xa001 if c & 1 else c >> 1
    return c
A, C, D, M = "00:00:00:00:00:0a", "00:00:00:00:00:0c", "00:00:00:00:00:0d", "00:00:00:00:00:0e"
T0 = 1700000000
def at(s): return (T0 + int(s), round((s - int(s)) * 1e6))
feat = [  # (time, frame, [(port or "drop", frame out, what)], digest or None)
    (0.0, eth(B, C, 0x88b5, PAYLOAD), [(1, None, "green")], (C, 0)),
    (0.1, eth(B, A, 0x88b5, PAYLOAD), [(1, None, "yellow: forwarded")], None),
    (0.2, eth(B, A, 0x88b5, PAYLOAD), [("drop", None, "red")], None),
    (1.25, eth(B, A, 0x88b5, PAYLOAD), [(1, None, "green again")], None),
    (1.3, eth(B, D, 0x88b6, PAYLOAD), [(crc16(mac(D)) % 2, None, "selector")], (D, 0)),
    (1.4, eth(M, A, 0x88b8, PAYLOAD), [(1, None, "original"),
                                       (0, eth(M, "02:00:00:00:c1:0e", 0x88b8, PAYLOAD), "ingress clone")], None),
    (1.5, eth(B, A, 0x88b7, PAYLOAD), [(1, eth(B, A, 0x88b8, PAYLOAD), "recirculated")], None),
]
pcap("v1model_features.in.pcap", [f[1] for f in feat], [at(f[0]) for f in feat])
outs, times, lines = [], [], []
for t, fin, res, dig in feat:
    for port, fout, what in res:
        lines.append("%s %s" % (port, what))
        if port != "drop":
            outs.append(fout or fin)
            times.append(at(t))
    if dig:
        lines.append("digest %s %d" % (dig[0], dig[1]))
pcap("v1model_features.out.pcap", outs, times)
with open("v1model_features.ports", "w") as f:
    f.write("".join(l + "\n" for l in lines))
