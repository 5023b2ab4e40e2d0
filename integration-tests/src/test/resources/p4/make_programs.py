#!/usr/bin/env python3
"""Writes the P4 test programs for the real-guest tests, in bmv2 JSON as p4c-bm2-ss emits it for v1model
(p4c is not packaged for Debian, so they are written by hand; see docs/p4.md). Run: python3 make_programs.py

l2_fwd.json            table dmac on the destination MAC: forward(port), to_other_side, rewrite_dmac(mac, port),
                       drop (the default).
rdma_drop_write.json   table wqe_acl on the WQE header (docs/p4.md, "The WQE header"): deny drops the WQE.
rdma_fp8.json          table wqe_extern: fp8_accumulate / format_convert select an extern for an RDMA WRITE.
Every program passes frames it has no entry for as its entries say; the RDMA programs send every frame to
the other side (their tables only match a valid WQE header)."""
import json

STD = {"name": "standard_metadata", "id": 0, "fields": [
    ["ingress_port", 9, False], ["egress_spec", 9, False], ["egress_port", 9, False],
    ["instance_type", 32, False], ["packet_length", 32, False], ["enq_timestamp", 32, False],
    ["enq_qdepth", 19, False], ["deq_timedelta", 32, False], ["deq_qdepth", 19, False],
    ["ingress_global_timestamp", 48, False], ["egress_global_timestamp", 48, False],
    ["mcast_grp", 16, False], ["egress_rid", 16, False], ["checksum_error", 1, False],
    ["parser_error", 32, False], ["priority", 3, False], ["_padding", 3, False]]}
ERRORS = [["NoError", 0], ["PacketTooShort", 1], ["NoMatch", 2], ["StackOutOfBounds", 3], ["HeaderTooShort", 4],
          ["ParserTimeout", 5], ["ParserInvalidArgument", 6]]
ETHERNET_T = {"name": "ethernet_t", "id": 1, "fields": [["dstAddr", 48, False], ["srcAddr", 48, False],
                                                        ["etherType", 16, False]]}
# The WQE header of docs/p4.md: 48 bytes, big-endian.
WQE_T = {"name": "ernic_wqe_t", "id": 1, "fields": [
    ["opcode", 8, False], ["qp_type", 8, False], ["flags", 16, False], ["qpn", 32, False], ["dest_qpn", 32, False],
    ["length", 32, False], ["lkey", 32, False], ["rkey", 32, False], ["remote_va", 64, False],
    ["imm_data", 32, False], ["dest_local", 8, False], ["extern", 8, False], ["src_format", 8, False],
    ["dst_format", 8, False], ["extern_flags", 8, False], ["rsvd", 56, False]]}


def field(h, f):
    return {"type": "field", "value": [h, f]}


def hexstr(v):
    return {"type": "hexstr", "value": v}


def assign(dst, src):
    return {"op": "assign", "parameters": [dst, src]}


def runtime(i):
    return {"type": "runtime_data", "value": i}


TO_OTHER_SIDE = [assign(field("standard_metadata", "egress_spec"),
                        {"type": "expression", "value": {"op": "^", "left": field("standard_metadata", "ingress_port"),
                                                         "right": hexstr("0x0001")}})]
DROP = [{"op": "mark_to_drop", "parameters": [{"type": "header", "value": "standard_metadata"}]}]


def action(name, i, params, prims):
    return {"name": name, "id": i, "runtime_data": [{"name": n, "bitwidth": w} for n, w in params],
            "primitives": prims}


def table(name, keys, actions, default_id):
    return {"name": name, "id": 0, "source_info": {}, "key": [
        {"match_type": kind, "name": ".".join(t), "target": list(t), "mask": None} for kind, t in keys],
        "match_type": "ternary" if any(k == "ternary" for k, _ in keys) else "exact", "type": "simple",
        "max_size": 1024, "with_counters": False, "support_timeout": False, "direct_meters": None,
        "action_ids": [a["id"] for a in actions], "actions": [a["name"] for a in actions],
        "base_default_next": None, "next_tables": {a["name"]: None for a in actions},
        "default_entry": {"action_id": default_id, "action_const": False, "action_data": [],
                          "action_entry_const": False}}


def program(name, htype, hname, states, actions, tbl):
    return {
        "__meta__": {"version": [2, 23], "compiler": "written by hand in the form of https://github.com/p4lang/p4c"},
        "program": name,
        "header_types": [STD, htype],
        "headers": [{"name": "standard_metadata", "id": 0, "header_type": "standard_metadata", "metadata": True,
                     "pi_omit": True},
                    {"name": hname, "id": 1, "header_type": htype["name"], "metadata": False, "pi_omit": True}],
        "header_stacks": [], "header_union_types": [], "header_unions": [], "header_union_stacks": [],
        "field_lists": [], "errors": ERRORS, "enums": [], "parse_vsets": [], "meter_arrays": [],
        "counter_arrays": [], "register_arrays": [], "calculations": [], "learn_lists": [],
        "parsers": [{"name": "parser", "id": 0, "init_state": "start", "parse_states": states}],
        "deparsers": [{"name": "deparser", "id": 0, "source_info": {}, "order": [hname], "primitives": []}],
        "actions": actions,
        "pipelines": [{"name": "ingress", "id": 0, "source_info": {}, "init_table": tbl["name"], "action_profiles": [],
                       "conditionals": [], "tables": [tbl]},
                      {"name": "egress", "id": 1, "source_info": {}, "init_table": None, "tables": [],
                       "action_profiles": [], "conditionals": []}],
        "checksums": [], "force_arith": [], "extern_instances": [], "field_aliases": []}


def state(name, i, extract, key, transitions):
    return {"name": name, "id": i,
            "parser_ops": [{"op": "extract", "parameters": [{"type": "regular", "value": extract}]}] if extract else [],
            "transition_key": key, "transitions": transitions}


DEFAULT = {"type": "default", "value": None, "mask": None, "next_state": None}

# --- L2: forward or drop by destination MAC --------------------------------------------------------------
l2_actions = [action("NoAction", 0, [], []),
              action("MyIngress.drop", 1, [], DROP),
              action("MyIngress.forward", 2, [["port", 9]],
                     [assign(field("standard_metadata", "egress_spec"), runtime(0))]),
              action("MyIngress.to_other_side", 3, [], TO_OTHER_SIDE),
              action("MyIngress.rewrite_dmac", 4, [["mac", 48], ["port", 9]],
                     [assign(field("ethernet", "dstAddr"), runtime(0)),
                      assign(field("standard_metadata", "egress_spec"), runtime(1))])]
l2 = program("l2_fwd", ETHERNET_T, "ethernet", [state("start", 0, "ethernet", [], [DEFAULT])],
             l2_actions, table("MyIngress.dmac", [("exact", ("ethernet", "dstAddr"))], l2_actions[1:], 1))

# --- RDMA: the WQE header on port 2, frames on 0 and 1 pass ---------------------------------------------
wqe_states = [state("start", 0, None, [field("standard_metadata", "ingress_port")],
                    [{"type": "hexstr", "value": "0x0002", "mask": None, "next_state": "parse_wqe"}, DEFAULT]),
              state("parse_wqe", 1, "wqe", [], [DEFAULT])]
WQE_KEYS = [("exact", ("wqe", "$valid$")), ("ternary", ("wqe", "opcode")), ("ternary", ("wqe", "rkey")),
            ("ternary", ("wqe", "remote_va"))]
drop_actions = [action("MyIngress.to_other_side", 0, [], TO_OTHER_SIDE),
                action("MyIngress.deny", 1, [], DROP)]
drop = program("rdma_drop_write", WQE_T, "wqe", wqe_states, drop_actions,
               table("MyIngress.wqe_acl", WQE_KEYS, drop_actions, 0))


def select(extern):
    return [assign(field("wqe", "extern"), hexstr(extern)),
            assign(field("wqe", "src_format"), runtime(0)),
            assign(field("wqe", "dst_format"), runtime(1)),
            assign(field("wqe", "extern_flags"), runtime(2))]


fp8_actions = [action("MyIngress.to_other_side", 0, [], TO_OTHER_SIDE),
               action("MyIngress.fp8_accumulate", 1, [["src_format", 8], ["dst_format", 8], ["flags", 8]],
                      select("0x01")),
               action("MyIngress.format_convert", 2, [["src_format", 8], ["dst_format", 8], ["flags", 8]],
                      select("0x02")),
               action("MyIngress.deny", 3, [], DROP)]
fp8 = program("rdma_fp8", WQE_T, "wqe", wqe_states, fp8_actions, table("MyIngress.wqe_extern", WQE_KEYS, fp8_actions, 0))

for name, prog in [("l2_fwd", l2), ("rdma_drop_write", drop), ("rdma_fp8", fp8)]:
    with open(name + ".json", "w") as f:
        json.dump(prog, f, indent=1)
        f.write("\n")
