#!/usr/bin/python3
"""Reads a --trace-rdma pcap with scapy (scapy.contrib.roce) and prints one JSON object per frame.

Usage: trace_check.py FILE.pcap. Each line: whether scapy dissected Ether/IP/UDP/BTH, the IPv4 and UDP
fields, the BTH fields, the AETH of an ACKNOWLEDGE, the bytes after the BTH (at most 48), the record's
captured and original lengths, and for a frame kept whole whether its ICRC is the one scapy computes.
"""
import json
import sys

from scapy.all import Ether, IP, UDP, raw
from scapy.contrib.roce import BTH, AETH
from scapy.utils import RawPcapReader

reader = RawPcapReader(sys.argv[1])
if reader.linktype != 1:
    print(json.dumps({"error": "linktype %d" % reader.linktype}))
    sys.exit(1)
for data, meta in reader:
    p = Ether(data)
    out = {
        "layers": [l.__name__ for l in p.layers()],
        "stack": bool(p.haslayer(Ether) and p.haslayer(IP) and p.haslayer(UDP) and p.haslayer(BTH)),
        "caplen": meta.caplen,
        "wirelen": meta.wirelen,
    }
    if out["stack"]:
        ip, udp, bth = p[IP], p[UDP], p[BTH]
        out.update(src=ip.src, dst=ip.dst, ip_len=ip.len, ttl=ip.ttl, sport=udp.sport, dport=udp.dport,
                   udp_len=udp.len, opcode=bth.opcode, se=bth.solicited, pad=bth.padcount, pkey=bth.pkey,
                   dqpn=bth.dqpn, ackreq=bth.ackreq, psn=bth.psn, smac=p.src, dmac=p.dst,
                   after_bth=data[14 + 20 + 8 + 12:14 + 20 + 8 + 12 + 48].hex())
        if p.haslayer(AETH):
            out.update(syndrome=p[AETH].syndrome, msn=p[AETH].msn)
        if meta.caplen == meta.wirelen:
            q = Ether(data)
            q[BTH].icrc = None
            out["icrc_ok"] = raw(q)[-4:] == data[-4:]
            ip_ok = IP(raw(q[IP]))
            del ip_ok.chksum
            out["ip_checksum_ok"] = IP(raw(ip_ok)).chksum == ip.chksum
    print(json.dumps(out))
