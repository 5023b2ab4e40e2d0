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


# The worked examples of make_programs.py, one a v1model feature. Each writes NAME.in.pcap, NAME.out.pcap and
# NAME.expected: what `./ernic p4 run NAME.json [--entries NAME.entries] --in NAME.in.pcap --out ...` prints, worked
# by hand from the program (its comment in make_programs.py), the entries file and simple_switch's documented
# behaviour. Every frame enters on port 0 (the TAP). A frame's events, in the order p4 run prints them:
#   ("log", text)  ("digest", name, [(field, value)])  ("out", port, frame, again)  ("drop", why, again)
#   ("clone", "ingress" or "egress", port, frame); again: "" or ", resubmitted 1x" or ", recirculated 3x";
#   ("multicast", group, copies): the frame went to a multicast group, then one ("copy", kind, rid, port or why
#   dropped, frame) per copy: kind "multicast copy" or "ingress clone" (a clone to a group), in the order made.
WHERE = {0: "port 0 (TAP)", 1: "port 1 (guest)"}

def example(name, frames, tables):
    """frames: (time in seconds from T0, frame in, [events]); tables: (name, hits, misses) in the program's order."""
    pcap(name + ".in.pcap", [f[1] for f in frames], [at(f[0]) for f in frames])
    outs, times, lines = [], [], []
    sent = dropped = made = cloned = mc = replicas = replicas_out = 0
    for n, (t, fin, events) in enumerate(frames, 1):
        head = "frame %d: " % n
        for ev in events:
            if ev[0] == "log":
                lines.append(head + "log_msg " + ev[1])
            elif ev[0] == "digest":
                lines.append(head + "digest %s {%s}" % (ev[1], ", ".join("%s=0x%x" % fv for fv in ev[2])))
            elif ev[0] == "out":
                lines.append(head + "%d bytes in on port 0%s -> %s, %d bytes" % (len(fin), ev[3], WHERE[ev[1]], len(ev[2])))
                outs.append(ev[2]); times.append(at(t)); sent += 1
            elif ev[0] == "drop":
                lines.append(head + "%d bytes in on port 0%s -> dropped (%s)" % (len(fin), ev[2], ev[1]))
                dropped += 1
            elif ev[0] == "multicast":
                lines.append(head + "%d bytes in on port 0 -> multicast group %d, %d copies" % (len(fin), ev[1], ev[2]))
                mc += 1
            elif ev[0] == "copy":
                replica = ev[1] == "multicast copy"
                made += 0 if replica else 1
                replicas += 1 if replica else 0
                if isinstance(ev[3], int):
                    lines.append(head + "%s rid %d -> %s, %d bytes" % (ev[1], ev[2], WHERE[ev[3]], len(ev[4])))
                    outs.append(ev[4]); times.append(at(t))
                    replicas_out += 1 if replica else 0
                    cloned += 0 if replica else 1
                else:
                    lines.append(head + "%s rid %d -> dropped (%s)" % (ev[1], ev[2], ev[3]))
            else:
                lines.append(head + "%s clone -> %s, %d bytes" % (ev[1], WHERE[ev[2]], len(ev[3])))
                outs.append(ev[3]); times.append(at(t)); made += 1; cloned += 1
    lines += ["table %s: %d hits, %d misses" % tbl for tbl in tables]
    lines.append("frames: %d in, %d out, %d dropped%s%s%s" % (
        len(frames), sent, dropped, ", %d multicast" % mc if mc else "",
        "; clones: %d made, %d out" % (made, cloned) if made else "",
        "; multicast copies: %d made, %d out" % (replicas, replicas_out) if replicas else ""))
    pcap(name + ".out.pcap", outs, times)
    with open(name + ".expected", "w") as f:
        f.write("".join(l + "\n" for l in lines))

def macv(s): return int(s.replace(":", ""), 16)
E, F = "00:00:00:00:00:0b", "00:00:00:00:00:0f"

# meters: flows A (direct meter of packets: 1 packet/s burst 1, 2 packets/s burst 2; byte meter cell 0) and B
# (its direct meter has no rates: GREEN; byte meter cell 1). The byte meter's cells: 100 B/s burst 400, 200 B/s
# burst 600 (meters.entries). Colours go into the colors header (pkt_color, byte_color): 0 GREEN, 1 YELLOW, 2 RED.
class TrTcm:
    """simple_switch's marker (bmv2 meters): one bucket per rate, tokens counted from the time origin; the peak bucket
    is looked at first: short -> RED, nothing taken; else taken, and the committed one short -> YELLOW; else GREEN."""
    def __init__(self, rates):
        self.rates = rates  # [(units per microsecond, burst)] committed then peak
        self.tokens = [b for _, b in rates]
        self.last = [0] * len(rates)
    def execute(self, micros, units):
        for i in reversed(range(len(self.rates))):
            rate, burst = self.rates[i]
            since = int(micros * rate)
            self.tokens[i] = min(self.tokens[i] + max(0, since - self.last[i]), burst)
            self.last[i] = max(self.last[i], since)
            if self.tokens[i] < units:
                return i + 1
            self.tokens[i] -= units
        return 0
pkt_meter = TrTcm([(0.000001, 1), (0.000002, 2)])
byte_cells = [TrTcm([(0.0001, 400), (0.0002, 600)]) for _ in range(2)]
frames = []
for t, src, size in [(0.0, A, 64), (0.05, E, 300), (0.1, A, 64), (0.15, E, 300), (0.2, A, 64), (0.25, E, 300),
                     (1.25, A, 64), (3.0, E, 300)]:
    body = bytes(size - 16)
    fin = eth(B, src, 0x88b5, b"\0\0" + body)
    micros = round(t * 1e6)
    pc = pkt_meter.execute(micros, 1) if src == A else 0
    bc = byte_cells[0 if src == A else 1].execute(micros, size)
    frames.append((t, fin, [("out", 1, eth(B, src, 0x88b5, bytes([pc, bc]) + body), "")]))
example("meters", frames, [("MyIngress.flows", 8, 0), ("tbl_record", 0, 8)])

# clones: e1 mirrors I2E to session 5 (port 0) with tag 0x11, e3 to session 7 (never added: no clone); egress
# mirrors e2 E2E to session 6 (port 0) with tag 0x22. trace = (itype, tag, mark) as egress's stamp writes them:
# instance_type, meta.tag (kept by the field lists, with its value at the end of the pipeline that cloned), meta.mark
# (not in a list: 0 in a clone).
def traced(dst, tr): return eth(dst, A, 0x88b5, bytes(tr) + PAYLOAD)
E1, E2, E3 = "00:00:00:00:00:e1", "00:00:00:00:00:e2", "00:00:00:00:00:e3"
example("clones", [
    (0.0, traced(E1, [0, 0, 0]), [("out", 1, traced(E1, [0, 0x11, 0x99]), ""),
                                  ("clone", "ingress", 0, traced(E1, [1, 0x11, 0]))]),
    (0.1, traced(E2, [0, 0, 0]), [("out", 1, traced(E2, [0, 0, 0x99]), ""),
                                  ("clone", "egress", 0, traced(E2, [2, 0x22, 0]))]),
    (0.2, traced(E3, [0, 0, 0]), [("out", 1, traced(E3, [0, 0x33, 0x99]), "")]),
    (0.3, traced(BC, [0, 0, 0]), [("out", 1, traced(BC, [0, 0, 0x99]), "")]),
], [("MyIngress.mirror", 2, 2), ("tbl_stamp", 0, 6), ("MyEgress.e2e", 1, 5)])

# resubmit_recirculate: loop = (kind, count, limit, itype, carried). Kind 1 is resubmitted once: the frame as it
# entered (count back to 0) with meta.saved 0x5a, instance_type 6. Kind 2 recirculates, count + 1 and meta.saved + 1
# each pass, until count reaches limit: instance_type 4. Limit 255 loops: the engine stops it after 16
# recirculations (bmv2 would loop for ever). Else record(): itype, carried, to port 1.
def looped(tr): return eth(B, A, 0x88b5, bytes(tr) + PAYLOAD)
example("resubmit_recirculate", [
    (0.0, looped([1, 0, 0, 0, 0]), [("out", 1, looped([1, 0, 0, 6, 0x5a]), ", resubmitted 1x")]),
    (0.1, looped([2, 0, 3, 0, 0]), [("out", 1, looped([2, 3, 3, 4, 3]), ", recirculated 3x")]),
    (0.2, looped([2, 0, 255, 0, 0]), [("drop", "resubmitted or recirculated too many times", ", recirculated 16x")]),
    (0.3, looped([0, 0, 0, 0, 0]), [("out", 1, looped([0, 0, 0, 0, 0]), "")]),
], [("tbl_do_resubmit", 0, 1), ("tbl_do_recirculate", 0, 3 + 17), ("tbl_record", 0, 3)])

# digests: an unknown source MAC (known: A) sends mac_learn_t, an unknown etherType (known: 0x88b5) type_seen_t;
# a frame that calls both sends one, the last (simple_switch keeps one learn list id per packet).
def plain(dst, src, et): return eth(dst, src, et, PAYLOAD)
example("digests", [
    (0.0, plain(B, A, 0x88b5), [("out", 1, plain(B, A, 0x88b5), "")]),
    (0.1, plain(B, C, 0x88b5), [("digest", "mac_learn_t", [("ethernet.srcAddr", macv(C)),
                                                          ("standard_metadata.ingress_port", 0)]),
                                ("out", 1, plain(B, C, 0x88b5), "")]),
    (0.2, plain(B, A, 0x88b6), [("digest", "type_seen_t", [("ethernet.etherType", 0x88b6),
                                                          ("ethernet.dstAddr", macv(B))]),
                                ("out", 1, plain(B, A, 0x88b6), "")]),
    (0.3, plain(B, D, 0x88b7), [("digest", "type_seen_t", [("ethernet.etherType", 0x88b7),
                                                          ("ethernet.dstAddr", macv(B))]),
                                ("out", 1, plain(B, D, 0x88b7), "")]),
], [("MyIngress.known", 2, 2), ("MyIngress.types", 2, 2), ("tbl_to_guest", 0, 4)])

# action_profiles (action_profiles.entries): nexthop's entries d1 and d3 share member 0 (dmac 0a:01, port 1), d2 is
# member 1 (0a:02, port 0). Anything else goes to ecmp: etherType 0x88b6 -> the group of members 0, 1, 2 (dmac
# e0:00 port 0, e0:01 port 1, e0:02 port 0); member = crc16(srcAddr) % 3, so every frame of a flow takes one.
NH = {0: ("00:00:00:00:0a:01", 1), 1: ("00:00:00:00:0a:02", 0)}
ECMP = [("00:00:00:00:e0:00", 0), ("00:00:00:00:e0:01", 1), ("00:00:00:00:e0:02", 0)]
ap = []
for i, dst in enumerate(["00:00:00:00:00:d1", "00:00:00:00:00:d2", "00:00:00:00:00:d3"]):
    dmac, port = NH[[0, 1, 0][i]]
    ap.append((0.1 * i, plain(dst, A, 0x88b5), [("out", port, plain(dmac, A, 0x88b5), "")]))
for i, src in enumerate([C, D, M, C, D, M]):
    dmac, port = ECMP[crc16(mac(src)) % 3]
    ap.append((0.3 + 0.1 * i, plain(BC, src, 0x88b6), [("out", port, plain(dmac, src, 0x88b6), "")]))
ap.append((1.0, plain(BC, A, 0x88b5), [("out", 0, plain(BC, A, 0x88b5), "")]))
example("action_profiles", ap, [("MyIngress.nexthop", 3, 7), ("MyIngress.ecmp", 6, 1)])

# header_unions: options a (kind 1, more) and b (kind 2, more, val) in a union stack of 2. opts[0] holding a is
# widened to b (kind 2, its more, val 0xbeef: a made invalid); opts[1] holding a is removed. A third option does
# not fit the stack: StackOutOfBounds, parsing stops there and the frame goes on with what was extracted, the rest
# being payload.
def opt_a(more): return bytes([1, more])
def opt_b(more, val): return bytes([2, more]) + struct.pack("!H", val)
def optf(opts): return eth(B, A, 0x88b5, opts + PAYLOAD)
example("header_unions", [
    (0.0, optf(opt_a(1) + opt_b(0, 0x1234)), [("out", 1, optf(opt_b(1, 0xbeef) + opt_b(0, 0x1234)), "")]),
    (0.1, optf(opt_b(1, 0x1111) + opt_a(0)), [("out", 1, optf(opt_b(1, 0x1111)), "")]),
    (0.2, optf(opt_a(1) + opt_a(1) + opt_a(0)), [("out", 1, optf(opt_b(1, 0xbeef) + opt_a(0)), "")]),
    (0.3, plain(B, A, 0x0800), [("out", 1, plain(B, A, 0x0800), "")]),
], [("tbl_widen", 0, 2), ("tbl_drop_second", 0, 2), ("tbl_to_guest", 0, 4)])

# parse_vsets (parse_vsets.entries): tunnel_vs holds (0x88b5, 1) and (0x88b6, 2), matched against (etherType, the
# byte after Ethernet). A tunnel frame gets tun.mark 0xaa and goes to port 1; any other frame to port 0, unchanged.
def tun(et, kind, mark=0): return eth(B, A, et, bytes([kind, mark]) + PAYLOAD)
example("parse_vsets", [
    (0.0, tun(0x88b5, 1), [("out", 1, tun(0x88b5, 1, 0xaa), "")]),
    (0.1, tun(0x88b5, 2), [("out", 0, tun(0x88b5, 2), "")]),
    (0.2, tun(0x88b6, 2), [("out", 1, tun(0x88b6, 2, 0xaa), "")]),
    (0.3, tun(0x88b6, 1), [("out", 0, tun(0x88b6, 1), "")]),
], [("tbl_tunnel", 0, 2), ("tbl_to_tap", 0, 2)])

# deparser_primitives: ingress computes seq + 1 (mod 2^16) into metadata; the deparser writes it into the header.
def seqf(s): return eth(B, A, 0x88b5, struct.pack("!H", s) + PAYLOAD)
example("deparser_primitives", [(0.1 * i, seqf(s), [("out", 1, seqf((s + 1) & 0xffff), "")])
                                for i, s in enumerate([1, 0xffff, 0x1234])], [("tbl_next_seq", 0, 3)])

# no_deparser: an outer header (tunnel_id, inner_len) before an Ethernet frame; tunnel 7 goes to port 1 without it
# (nothing is emitted: what leaves is the payload after what the parser extracted), any other is dropped.
inner = plain(B, A, 0x88b5)
def outer(tid): return struct.pack("!HH", tid, len(inner)) + inner
example("no_deparser", [
    (0.0, outer(7), [("out", 1, inner, "")]),
    (0.1, outer(8), [("drop", "egress_spec 511", "")]),
    (0.2, outer(7), [("out", 1, inner, "")]),
], [("tbl_to_guest", 0, 2), ("tbl_drop", 0, 1)])

# assert_log: ingress logs the etherType and ingress port (decimal, as bmv2's log_msg prints), asserts the frame is
# not IPv4 and sends it to port 1 (0x88b6 to port 0); egress assumes port 1 and logs it. A failed assert or assume
# drops the frame here (bmv2 would stop the switch).
example("assert_log", [
    (0.0, plain(B, A, 0x88b5), [("log", "frame of type 34997 from port 0"), ("log", "out on port 1"),
                                ("out", 1, plain(B, A, 0x88b5), "")]),
    (0.1, plain(B, A, 0x0800), [("log", "frame of type 2048 from port 0"), ("drop", "assert/assume failed", "")]),
    (0.2, plain(B, A, 0x88b6), [("log", "frame of type 34998 from port 0"), ("drop", "assert/assume failed", "")]),
    (0.3, plain(B, A, 0x88b7), [("log", "frame of type 34999 from port 0"), ("log", "out on port 1"),
                                ("out", 1, plain(B, A, 0x88b7), "")]),
], [("tbl_check", 0, 4), ("tbl_to_tap", 0, 1), ("tbl_check_out", 0, 3)])

# multicast: dmac A -> port 1; dmac 0e -> port 1 and an I2E clone to session 3, whose clones go to group 2 (node rid 9,
# port 1); anything else -> broadcast(1): group 1's nodes in association order, ports ascending: rid 1 on ports 0
# and 1, rid 2 on ports 1 and 2. Each copy keeps the frame's metadata (ingress_port 0 among them); egress stamps
# trace = (egress_rid, instance_type: 5 a multicast copy, 1 an ingress clone) and drops a copy to the port the frame
# came in on (0); port 2 does not exist on the NIC. The clone's metadata is reset (its field list is empty), so its
# ingress_port reads 0 and its egress_port is 1: not pruned.
def mc_traced(dst, tr): return eth(dst, C, 0x88b5, bytes(tr) + PAYLOAD)
M0E, MA = "00:00:00:00:00:0e", "00:00:00:00:00:01"
example("multicast", [
    (0.0, mc_traced(MA, [0, 0]), [("out", 1, mc_traced(MA, [0, 0]), "")]),
    (0.1, mc_traced(BC, [0, 0]), [("multicast", 1, 4),
                                  ("copy", "multicast copy", 1, "egress_spec 511", None),
                                  ("copy", "multicast copy", 1, 1, mc_traced(BC, [1, 5])),
                                  ("copy", "multicast copy", 2, 1, mc_traced(BC, [2, 5])),
                                  ("copy", "multicast copy", 2, "egress port does not exist", None)]),
    (0.2, mc_traced(M0E, [0, 0]), [("out", 1, mc_traced(M0E, [0, 0]), ""),
                                   ("copy", "ingress clone", 9, 1, mc_traced(M0E, [9, 1]))]),
], [("MyIngress.dmac", 2, 1), ("tbl_stamp", 0, 7), ("tbl_prune", 0, 1)])
