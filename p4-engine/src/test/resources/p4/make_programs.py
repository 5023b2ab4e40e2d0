#!/usr/bin/env python3
"""Writes the worked examples of the v1model features, one program a feature, in bmv2 JSON as p4c-bm2-ss emits it
for simple_switch (p4c is not packaged for Debian, so they are written by hand; the field names follow bmv2's
docs/JSON_format.md). The P4 each stands for is in its comment. Run it in this directory: python3 make_programs.py
(make_fixtures.py then builds their frames). The entries files beside them are written by hand.

meters.json              a direct meter of packets on table flows and an indirect meter array of bytes
clones.json              clone I2E and E2E to mirror sessions, with preserved field lists; instance_type
resubmit_recirculate.json  resubmit and recirculate with field lists, and a program that recirculates for ever
digests.json             two learn lists (generate_digest)
action_profiles.json     an action profile (indirect table) and an action selector (indirect_ws)
header_unions.json       a header union stack of options, extracted by lookahead, and a member made valid
parse_vsets.json         a parse value set whose key is two fields (etherType, the next byte)
deparser_primitives.json config_options and an assignment in the deparser
no_deparser.json         a program without a deparser: what the parser extracted does not leave
assert_log.json          log_msg with values, and an assert that fails for some frames
multicast.json           broadcast through a multicast group (mcast_grp), egress_rid, and a clone to a group"""
import json

STD_FIELDS = [
    ["ingress_port", 9, False], ["egress_spec", 9, False], ["egress_port", 9, False],
    ["instance_type", 32, False], ["packet_length", 32, False], ["enq_timestamp", 32, False],
    ["enq_qdepth", 19, False], ["deq_timedelta", 32, False], ["deq_qdepth", 19, False],
    ["ingress_global_timestamp", 48, False], ["egress_global_timestamp", 48, False],
    ["mcast_grp", 16, False], ["egress_rid", 16, False], ["checksum_error", 1, False],
    ["parser_error", 32, False], ["priority", 3, False], ["_padding", 3, False]]
ERRORS = [["NoError", 0], ["PacketTooShort", 1], ["NoMatch", 2], ["StackOutOfBounds", 3], ["HeaderTooShort", 4],
          ["ParserTimeout", 5], ["ParserInvalidArgument", 6]]
ALIASES = [[a, ["standard_metadata", f]] for a, f in [
    ("queueing_metadata.enq_timestamp", "enq_timestamp"), ("queueing_metadata.enq_qdepth", "enq_qdepth"),
    ("queueing_metadata.deq_timedelta", "deq_timedelta"), ("queueing_metadata.deq_qdepth", "deq_qdepth"),
    ("intrinsic_metadata.ingress_global_timestamp", "ingress_global_timestamp"),
    ("intrinsic_metadata.egress_global_timestamp", "egress_global_timestamp"),
    ("intrinsic_metadata.mcast_grp", "mcast_grp"), ("intrinsic_metadata.egress_rid", "egress_rid"),
    ("intrinsic_metadata.priority", "priority")]]
ETHERNET = [("dstAddr", 48), ("srcAddr", 48), ("etherType", 16)]


# Type-value objects and expressions, as p4c writes them.
def field(h, f): return {"type": "field", "value": [h, f]}
def meta(f): return field("scalars", f)
def std(f): return field("standard_metadata", f)
def hexstr(v, width=None):
    digits = max(1, (width or 8) // 4)
    return {"type": "hexstr", "value": "0x%0*x" % (digits, v)}
def rt(i): return {"type": "runtime_data", "value": i}
def header(h): return {"type": "header", "value": h}
def expr(op, left, right): return {"type": "expression", "value": {"op": op, "left": left, "right": right}}
def cast8(e): return expr("&", e, hexstr(0xff))
def valid(h): return {"type": "expression", "value": {"op": "d2b", "left": None, "right": field(h, "$valid$")}}


# Primitives.
def prim(op, *params): return {"op": op, "parameters": list(params)}
def assign(dst, src): return prim("assign", dst, src)
def forward(port): return assign(std("egress_spec"), port)


class Program:
    """One program: its header types and instances, parser, deparser, actions and the two pipelines."""

    def __init__(self, name, scalars):
        self.name = name
        self.types = [{"name": "scalars_0", "id": 0, "fields": [[f, w, False] for f, w in scalars]},
                      {"name": "standard_metadata", "id": 1, "fields": STD_FIELDS}]
        self.headers = [{"name": "scalars", "id": 0, "header_type": "scalars_0", "metadata": True, "pi_omit": True},
                        {"name": "standard_metadata", "id": 1, "header_type": "standard_metadata",
                         "metadata": True, "pi_omit": True}]
        self.actions = [{"name": "NoAction", "id": 0, "runtime_data": [], "primitives": []}]
        self.top = {"header_stacks": [], "header_union_types": [], "header_unions": [], "header_union_stacks": [],
                    "enums": [], "parse_vsets": [], "counter_arrays": [], "register_arrays": [], "checksums": [],
                    "force_arith": [], "extern_instances": [], "field_lists": [], "learn_lists": [],
                    "meter_arrays": [], "calculations": []}
        self.states = []
        self.order = []
        self.deparser_prims = []
        self.pipes = {"ingress": ([], [], []), "egress": ([], [], [])}
        self.ids = {"table": 0, "cond": 0, "state": 0}

    def htype(self, name, fields):
        self.types.append({"name": name, "id": len(self.types), "fields": [[f, w, False] for f, w in fields]})

    def header(self, name, htype):
        self.headers.append({"name": name, "id": len(self.headers), "header_type": htype, "metadata": False,
                             "pi_omit": True})
        return len(self.headers) - 1

    def action(self, name, params, prims):
        self.actions.append({"name": name, "id": len(self.actions),
                             "runtime_data": [{"name": n, "bitwidth": w} for n, w in params], "primitives": prims})
        return name

    def aid(self, name):
        return next(a["id"] for a in self.actions if a["name"] == name)

    def state(self, name, ops, key, transitions):
        """transitions: (type, value, mask, next) with type hexstr, parse_vset or default."""
        self.states.append({"name": name, "id": self.ids["state"], "parser_ops": ops, "transition_key": key,
                            "transitions": [{"type": t, "value": v, "mask": m, "next_state": n}
                                            for t, v, m, n in transitions]})
        self.ids["state"] += 1

    def table(self, pipe, name, keys, actions, nxt, default=None, kind="simple", **extra):
        """keys: (match_type, (header, field)); nxt: one next node for every action, or a dict (next_tables)."""
        t = {"name": name, "id": self.ids["table"],
             "key": [{"match_type": m, "name": ".".join(f), "target": list(f), "mask": None} for m, f in keys],
             "match_type": "exact" if all(m == "exact" for m, _ in keys) else keys[0][0], "type": kind,
             "max_size": 1024, "with_counters": False, "support_timeout": False, "direct_meters": None,
             "action_ids": [self.aid(a) for a in actions], "actions": list(actions),
             "base_default_next": nxt if not isinstance(nxt, dict) else None,
             "next_tables": nxt if isinstance(nxt, dict) else {a: nxt for a in actions}}
        if default is not None:
            action, data, const = default
            t["default_entry"] = {"action_id": self.aid(action), "action_const": const,
                                  "action_data": data, "action_entry_const": const}
        t.update(extra)
        self.ids["table"] += 1
        self.pipes[pipe][0].append(t)

    def call(self, pipe, action, nxt):
        """A direct action call: p4c's keyless table with a const default action."""
        self.table(pipe, "tbl_" + action.split(".")[-1], [], [action], nxt, (action, [], True))

    def cond(self, pipe, name, e, t, f):
        self.pipes[pipe][1].append({"name": name, "id": self.ids["cond"], "expression": e, "true_next": t,
                                    "false_next": f})
        self.ids["cond"] += 1

    def profile(self, pipe, name, selector=None):
        p = {"name": name, "id": sum(len(v[2]) for v in self.pipes.values()), "max_size": 128}
        if selector:
            p["selector"] = selector
        self.pipes[pipe][2].append(p)

    def json(self, ingress_init, egress_init, deparser=True, **top):
        j = {"header_types": self.types, "headers": self.headers}
        j.update(self.top)
        j.update({"errors": ERRORS, "field_aliases": ALIASES, "program": self.name + ".p4",
                  "__meta__": {"version": [2, 23], "compiler": "https://github.com/p4lang/p4c"}})
        j.update(top)
        j["parsers"] = [{"name": "parser", "id": 0, "init_state": "start", "parse_states": self.states}]
        j["deparsers"] = [{"name": "deparser", "id": 0, "source_info": {}, "order": self.order,
                           "primitives": self.deparser_prims}] if deparser else []
        j["actions"] = self.actions
        j["pipelines"] = [{"name": n, "id": i, "init_table": init, "action_profiles": self.pipes[n][2],
                           "tables": self.pipes[n][0], "conditionals": self.pipes[n][1]}
                          for i, (n, init) in enumerate([("ingress", ingress_init), ("egress", egress_init)])]
        with open(self.name + ".json", "w") as f:
            json.dump(j, f, indent=1)
            f.write("\n")


def ethernet_then(p, states_after):
    """start: extract(ethernet); select(etherType) {VALUE: STATE...; default: accept}."""
    p.htype("ethernet_t", ETHERNET)
    p.header("ethernet", "ethernet_t")
    p.order.append("ethernet")
    p.state("start", [prim("extract", {"type": "regular", "value": "ethernet"})], [field("ethernet", "etherType")],
            [("hexstr", "0x%04x" % v, None, s) for v, s in states_after] + [("default", None, None, None)])


def extract_state(p, name, h):
    p.state(name, [prim("extract", {"type": "regular", "value": h})], [], [("default", None, None, None)])


# meters.p4: colors_t { bit<8> pkt_color; bit<8> byte_color; } after Ethernet (etherType 0x88b5).
#   direct_meter<bit<8>>(MeterType.packets) flow_meter;  meter(4, MeterType.bytes) byte_meter;
#   action forward(bit<9> port, bit<32> idx) { standard_metadata.egress_spec = port; meta.idx = idx;
#                                              flow_meter.read(meta.pkt_color); }
#   table flows { key = { hdr.ethernet.srcAddr: exact; } actions = { forward; NoAction; } meters = flow_meter; }
#   action record() { byte_meter.execute_meter(meta.idx, hdr.colors.byte_color); hdr.colors.pkt_color = meta.pkt_color; }
#   apply { flows.apply(); record(); }
def meters():
    p = Program("meters", [("meta.idx", 32), ("meta.pkt_color", 8)])
    ethernet_then(p, [(0x88b5, "parse_colors")])
    p.htype("colors_t", [("pkt_color", 8), ("byte_color", 8)])
    p.header("colors", "colors_t")
    p.order.append("colors")
    extract_state(p, "parse_colors", "colors")
    p.action("MyIngress.forward", [("port", 9), ("idx", 32)], [forward(rt(0)), assign(meta("meta.idx"), rt(1))])
    p.action("MyIngress.record", [], [
        prim("execute_meter", {"type": "meter_array", "value": "MyIngress.byte_meter"}, meta("meta.idx"),
             field("colors", "byte_color")),
        assign(field("colors", "pkt_color"), meta("meta.pkt_color"))])
    p.top["meter_arrays"] = [
        {"name": "MyIngress.flow_meter", "id": 0, "is_direct": True, "rate_count": 2, "type": "packets",
         "size": 1024, "binding": "MyIngress.flows", "result_target": ["scalars", "meta.pkt_color"]},
        {"name": "MyIngress.byte_meter", "id": 1, "is_direct": False, "rate_count": 2, "type": "bytes", "size": 4}]
    p.table("ingress", "MyIngress.flows", [("exact", ("ethernet", "srcAddr"))], ["MyIngress.forward", "NoAction"],
            "tbl_record", ("NoAction", [], False), direct_meters="MyIngress.flow_meter")
    p.call("ingress", "MyIngress.record", None)
    p.json("MyIngress.flows", None)


# clones.p4: trace_t { bit<8> itype; bit<8> tag; bit<8> mark; } after Ethernet (0x88b5).
#   struct metadata { @field_list(1, 2) bit<8> tag; bit<8> mark; }
#   action mirror_i2e(bit<32> session, bit<8> tag) { standard_metadata.egress_spec = 1; meta.mark = 0x99;
#       clone_preserving_field_list(CloneType.I2E, session, 1); meta.tag = tag; }
#   action to_guest() { standard_metadata.egress_spec = 1; meta.mark = 0x99; }
#   table mirror { key = { hdr.ethernet.dstAddr: exact; } actions = { mirror_i2e; to_guest; } default: to_guest; }
#   egress: action stamp() { hdr.trace.itype = (bit<8>) standard_metadata.instance_type; hdr.trace.tag = meta.tag;
#                            hdr.trace.mark = meta.mark; }
#   action mirror_e2e(bit<32> session, bit<8> tag) { clone_preserving_field_list(CloneType.E2E, session, 2);
#                                                    meta.tag = tag; }
#   table e2e { key = { standard_metadata.instance_type: exact; hdr.ethernet.dstAddr: exact; } ... }
#   apply { stamp(); e2e.apply(); }
def clones():
    p = Program("clones", [("meta.tag", 8), ("meta.mark", 8)])
    ethernet_then(p, [(0x88b5, "parse_trace")])
    p.htype("trace_t", [("itype", 8), ("tag", 8), ("mark", 8)])
    p.header("trace", "trace_t")
    p.order.append("trace")
    extract_state(p, "parse_trace", "trace")
    p.top["field_lists"] = [{"id": 1, "name": "fl_i2e", "elements": [meta("meta.tag")]},
                            {"id": 2, "name": "fl_e2e", "elements": [meta("meta.tag")]}]
    p.action("MyIngress.mirror_i2e", [("session", 32), ("tag", 8)], [
        forward(hexstr(1, 16)), assign(meta("meta.mark"), hexstr(0x99)),
        prim("clone_ingress_pkt_to_egress", rt(0), hexstr(1)), assign(meta("meta.tag"), rt(1))])
    p.action("MyIngress.to_guest", [], [forward(hexstr(1, 16)), assign(meta("meta.mark"), hexstr(0x99))])
    p.action("MyEgress.stamp", [], [
        assign(field("trace", "itype"), cast8(std("instance_type"))),
        assign(field("trace", "tag"), meta("meta.tag")), assign(field("trace", "mark"), meta("meta.mark"))])
    p.action("MyEgress.mirror_e2e", [("session", 32), ("tag", 8)], [
        prim("clone_egress_pkt_to_egress", rt(0), hexstr(2)), assign(meta("meta.tag"), rt(1))])
    p.table("ingress", "MyIngress.mirror", [("exact", ("ethernet", "dstAddr"))],
            ["MyIngress.mirror_i2e", "MyIngress.to_guest"], None, ("MyIngress.to_guest", [], False))
    p.call("egress", "MyEgress.stamp", "MyEgress.e2e")
    p.table("egress", "MyEgress.e2e", [("exact", ("standard_metadata", "instance_type")),
                                       ("exact", ("ethernet", "dstAddr"))],
            ["MyEgress.mirror_e2e", "NoAction"], None, ("NoAction", [], False))
    p.json("MyIngress.mirror", "tbl_stamp")


# resubmit_recirculate.p4: loop_t { bit<8> kind; bit<8> count; bit<8> limit; bit<8> itype; bit<8> carried; }
#   struct metadata { @field_list(1, 2) bit<8> saved; }
#   apply {
#     if (hdr.loop.kind == 1 && standard_metadata.instance_type == 0) {            // resubmit once
#         hdr.loop.count = 0x77; resubmit_preserving_field_list(1); meta.saved = 0x5a; }
#     else if (hdr.loop.kind == 2 && hdr.loop.count < hdr.loop.limit) {             // recirculate up to limit
#         hdr.loop.count = hdr.loop.count + 1; meta.saved = meta.saved + 1; standard_metadata.egress_spec = 1;
#         recirculate_preserving_field_list(2); }
#     else { hdr.loop.itype = (bit<8>) standard_metadata.instance_type; hdr.loop.carried = meta.saved;
#            standard_metadata.egress_spec = 1; }
#   }
def resubmit_recirculate():
    p = Program("resubmit_recirculate", [("meta.saved", 8)])
    ethernet_then(p, [(0x88b5, "parse_loop")])
    p.htype("loop_t", [("kind", 8), ("count", 8), ("limit", 8), ("itype", 8), ("carried", 8)])
    p.header("loop", "loop_t")
    p.order.append("loop")
    extract_state(p, "parse_loop", "loop")
    p.top["field_lists"] = [{"id": 1, "name": "fl_resubmit", "elements": [meta("meta.saved")]},
                            {"id": 2, "name": "fl_recirculate", "elements": [meta("meta.saved")]}]
    p.action("MyIngress.do_resubmit", [], [assign(field("loop", "count"), hexstr(0x77)), prim("resubmit", hexstr(1)),
                                           assign(meta("meta.saved"), hexstr(0x5a))])
    p.action("MyIngress.do_recirculate", [], [
        assign(field("loop", "count"), cast8(expr("+", field("loop", "count"), hexstr(1)))),
        assign(meta("meta.saved"), cast8(expr("+", meta("meta.saved"), hexstr(1)))), forward(hexstr(1, 16)),
        prim("recirculate", hexstr(2))])
    p.action("MyIngress.record", [], [
        assign(field("loop", "itype"), cast8(std("instance_type"))),
        assign(field("loop", "carried"), meta("meta.saved")), forward(hexstr(1, 16))])
    p.cond("ingress", "node_2", {"type": "expression", "value": {
        "op": "and", "left": expr("==", field("loop", "kind"), hexstr(1)),
        "right": expr("==", std("instance_type"), hexstr(0, 32))}}, "tbl_do_resubmit", "node_4")
    p.cond("ingress", "node_4", {"type": "expression", "value": {
        "op": "and", "left": expr("==", field("loop", "kind"), hexstr(2)),
        "right": expr("<", field("loop", "count"), field("loop", "limit"))}}, "tbl_do_recirculate", "tbl_record")
    p.call("ingress", "MyIngress.do_resubmit", None)
    p.call("ingress", "MyIngress.do_recirculate", None)
    p.call("ingress", "MyIngress.record", None)
    p.json("node_2", None)


# digests.p4: struct mac_learn_t { bit<48> srcAddr; bit<9> ingress_port; }
#   struct type_seen_t { bit<16> etherType; bit<48> dstAddr; }
#   action learn() { digest<mac_learn_t>(1, { hdr.ethernet.srcAddr, standard_metadata.ingress_port }); }
#   table known { key = { hdr.ethernet.srcAddr: exact; } actions = { NoAction; learn; } default: learn; }
#   action note() { digest<type_seen_t>(1, { hdr.ethernet.etherType, hdr.ethernet.dstAddr }); }
#   table types { key = { hdr.ethernet.etherType: exact; } actions = { NoAction; note; } default: note; }
#   apply { known.apply(); types.apply(); standard_metadata.egress_spec = 1; }
def digests():
    p = Program("digests", [])
    ethernet_then(p, [])
    p.top["learn_lists"] = [
        {"id": 1, "name": "mac_learn_t", "elements": [field("ethernet", "srcAddr"), std("ingress_port")]},
        {"id": 2, "name": "type_seen_t", "elements": [field("ethernet", "etherType"), field("ethernet", "dstAddr")]}]
    p.action("MyIngress.learn", [], [prim("generate_digest", hexstr(1, 32), hexstr(1, 32))])
    p.action("MyIngress.note", [], [prim("generate_digest", hexstr(1, 32), hexstr(2, 32))])
    p.action("MyIngress.to_guest", [], [forward(hexstr(1, 16))])
    p.table("ingress", "MyIngress.known", [("exact", ("ethernet", "srcAddr"))], ["NoAction", "MyIngress.learn"],
            "MyIngress.types", ("MyIngress.learn", [], False))
    p.table("ingress", "MyIngress.types", [("exact", ("ethernet", "etherType"))], ["NoAction", "MyIngress.note"],
            "tbl_to_guest", ("MyIngress.note", [], False))
    p.call("ingress", "MyIngress.to_guest", None)
    p.json("MyIngress.known", None)


# action_profiles.p4:
#   action set_nhop(bit<48> dmac, bit<9> port) { hdr.ethernet.dstAddr = dmac; standard_metadata.egress_spec = port; }
#   table nexthop { key = { hdr.ethernet.dstAddr: exact; } actions = { set_nhop; NoAction; }
#                   implementation = action_profile(128); }
#   table ecmp { key = { hdr.ethernet.etherType: exact; } actions = { set_nhop; NoAction; }
#                implementation = action_selector(HashAlgorithm.crc16, 128, 16); }   // selector key: srcAddr
#   apply { if (!nexthop.apply().hit) { ecmp.apply(); } }
def action_profiles():
    p = Program("action_profiles", [])
    ethernet_then(p, [])
    p.action("MyIngress.set_nhop", [("dmac", 48), ("port", 9)],
             [assign(field("ethernet", "dstAddr"), rt(0)), forward(rt(1))])
    p.profile("ingress", "MyIngress.nh_profile")
    p.profile("ingress", "MyIngress.ecmp_selector", {"algo": "crc16", "input": [field("ethernet", "srcAddr")]})
    p.table("ingress", "MyIngress.nexthop", [("exact", ("ethernet", "dstAddr"))], ["MyIngress.set_nhop", "NoAction"],
            {"__HIT__": None, "__MISS__": "MyIngress.ecmp"}, kind="indirect", action_profile="MyIngress.nh_profile")
    p.table("ingress", "MyIngress.ecmp", [("exact", ("ethernet", "etherType"))], ["MyIngress.set_nhop", "NoAction"],
            None, kind="indirect_ws", action_profile="MyIngress.ecmp_selector")
    p.json("MyIngress.nexthop", None)


# header_unions.p4: opt_a_t { bit<8> kind; bit<8> more; }  opt_b_t { bit<8> kind; bit<8> more; bit<16> val; }
#   header_union opt_u { opt_a_t a; opt_b_t b; }   struct headers { ethernet_t ethernet; opt_u[2] opts; }
#   parser: 0x88b5 -> parse_opt: select(lookahead<bit<8>>()) { 1: parse_a; 2: parse_b; default: accept; }
#     parse_a: extract(hdr.opts.next.a); select(hdr.opts.last.a.more) { 0: accept; default: parse_opt; }
#     parse_b: extract(hdr.opts.next.b); select(hdr.opts.last.b.more) { 0: accept; default: parse_opt; }
#   action widen() { meta.more = hdr.opts[0].a.more; hdr.opts[0].b.setValid(); hdr.opts[0].b.kind = 2;
#                    hdr.opts[0].b.more = meta.more; hdr.opts[0].b.val = 0xbeef; }   // a becomes invalid
#   action drop_second() { hdr.opts[1].a.setInvalid(); }
#   apply { if (hdr.opts[0].isValid() && hdr.opts[0].a.isValid()) widen();
#           if (hdr.opts[1].a.isValid()) drop_second();  standard_metadata.egress_spec = 1; }
def header_unions():
    p = Program("header_unions", [("meta.more", 8)])
    ethernet_then(p, [(0x88b5, "parse_opt")])
    p.htype("opt_a_t", [("kind", 8), ("more", 8)])
    p.htype("opt_b_t", [("kind", 8), ("more", 8), ("val", 16)])
    p.top["header_union_types"] = [{"name": "opt_u", "id": 0, "headers": [["a", "opt_a_t"], ["b", "opt_b_t"]]}]
    unions = []
    for i in range(2):
        ids = [p.header("opts[%d].a" % i, "opt_a_t"), p.header("opts[%d].b" % i, "opt_b_t")]
        p.order += ["opts[%d].a" % i, "opts[%d].b" % i]
        unions.append({"name": "opts[%d]" % i, "id": i, "union_type": "opt_u", "header_ids": ids, "pi_omit": True})
    p.top["header_unions"] = unions
    p.top["header_union_stacks"] = [{"name": "opts", "id": 0, "union_type": "opt_u", "size": 2,
                                     "header_union_ids": [0, 1]}]
    p.state("parse_opt", [], [{"type": "lookahead", "value": [0, 8]}],
            [("hexstr", "0x01", None, "parse_a"), ("hexstr", "0x02", None, "parse_b"), ("default", None, None, None)])
    for m in "ab":
        p.state("parse_" + m, [prim("extract", {"type": "union_stack", "value": ["opts", m]})],
                [{"type": "union_stack_field", "value": ["opts", m, "more"]}],
                [("hexstr", "0x00", None, None), ("default", None, None, "parse_opt")])
    p.action("MyIngress.widen", [], [
        assign(meta("meta.more"), field("opts[0].a", "more")), prim("add_header", header("opts[0].b")),
        assign(field("opts[0].b", "kind"), hexstr(2)), assign(field("opts[0].b", "more"), meta("meta.more")),
        assign(field("opts[0].b", "val"), hexstr(0xbeef, 16))])
    p.action("MyIngress.drop_second", [], [prim("remove_header", header("opts[1].a"))])
    p.action("MyIngress.to_guest", [], [forward(hexstr(1, 16))])
    p.cond("ingress", "node_2", {"type": "expression", "value": {
        "op": "and", "left": {"type": "expression", "value": {"op": "valid_union", "left": None,
                                                              "right": {"type": "header_union", "value": "opts[0]"}}},
        "right": valid("opts[0].a")}}, "tbl_widen", "node_4")
    p.call("ingress", "MyIngress.widen", "node_4")
    p.cond("ingress", "node_4", valid("opts[1].a"), "tbl_drop_second", "tbl_to_guest")
    p.call("ingress", "MyIngress.drop_second", "tbl_to_guest")
    p.call("ingress", "MyIngress.to_guest", None)
    p.json("node_2", None)


# parse_vsets.p4: value_set<tuple<bit<16>, bit<8>>>(4) tunnel_vs;  tun_t { bit<8> kind; bit<8> mark; }
#   start: extract(hdr.ethernet); select(hdr.ethernet.etherType, packet.lookahead<bit<8>>()) {
#              tunnel_vs: parse_tun; default: accept; }
#   apply { if (hdr.tun.isValid()) { hdr.tun.mark = 0xaa; standard_metadata.egress_spec = 1; }
#           else { standard_metadata.egress_spec = 0; } }
def parse_vsets():
    p = Program("parse_vsets", [])
    p.htype("ethernet_t", ETHERNET)
    p.header("ethernet", "ethernet_t")
    p.htype("tun_t", [("kind", 8), ("mark", 8)])
    p.header("tun", "tun_t")
    p.order += ["ethernet", "tun"]
    p.top["parse_vsets"] = [{"name": "MyParser.tunnel_vs", "id": 0, "compressed_bitwidth": 24, "max_size": 4}]
    p.state("start", [prim("extract", {"type": "regular", "value": "ethernet"})],
            [field("ethernet", "etherType"), {"type": "lookahead", "value": [0, 8]}],
            [("parse_vset", "MyParser.tunnel_vs", None, "parse_tun"), ("default", None, None, None)])
    extract_state(p, "parse_tun", "tun")
    p.action("MyIngress.tunnel", [], [assign(field("tun", "mark"), hexstr(0xaa)), forward(hexstr(1, 16))])
    p.action("MyIngress.to_tap", [], [forward(hexstr(0, 16))])
    p.cond("ingress", "node_2", valid("tun"), "tbl_tunnel", "tbl_to_tap")
    p.call("ingress", "MyIngress.tunnel", None)
    p.call("ingress", "MyIngress.to_tap", None)
    p.json("node_2", None)


# deparser_primitives.p4: seq_t { bit<16> seq; } after Ethernet (0x88b5); config_options (a target reads them; bmv2
#   keeps them, p4 check shows them).
#   apply { meta.next = hdr.seq.seq + 1; standard_metadata.egress_spec = 1; }
#   deparser: apply { hdr.seq.seq = meta.next; packet.emit(hdr.ethernet); packet.emit(hdr.seq); }
def deparser_primitives():
    p = Program("deparser_primitives", [("meta.next", 16)])
    ethernet_then(p, [(0x88b5, "parse_seq")])
    p.htype("seq_t", [("seq", 16)])
    p.header("seq", "seq_t")
    p.order.append("seq")
    extract_state(p, "parse_seq", "seq")
    p.deparser_prims = [assign(field("seq", "seq"), meta("meta.next"))]
    p.action("MyIngress.next_seq", [], [
        assign(meta("meta.next"), expr("&", expr("+", field("seq", "seq"), hexstr(1, 16)), hexstr(0xffff, 16))),
        forward(hexstr(1, 16))])
    p.call("ingress", "MyIngress.next_seq", None)
    p.json("tbl_next_seq", None, config_options={"example": "deparser_primitives", "revision": 1})


# no_deparser.p4: outer_t { bit<16> tunnel_id; bit<16> inner_len; } before an Ethernet frame; no deparser, so what
#   the parser extracted (the outer header) does not leave: the program strips it.
#   apply { if (hdr.outer.tunnel_id == 7) standard_metadata.egress_spec = 1; else mark_to_drop(standard_metadata); }
def no_deparser():
    p = Program("no_deparser", [])
    p.htype("outer_t", [("tunnel_id", 16), ("inner_len", 16)])
    p.header("outer", "outer_t")
    extract_state(p, "start", "outer")
    p.action("MyIngress.to_guest", [], [forward(hexstr(1, 16))])
    p.action("MyIngress.drop", [], [prim("mark_to_drop", header("standard_metadata"))])
    p.cond("ingress", "node_2", expr("==", field("outer", "tunnel_id"), hexstr(7, 16)), "tbl_to_guest", "tbl_drop")
    p.call("ingress", "MyIngress.to_guest", None)
    p.call("ingress", "MyIngress.drop", None)
    p.json("node_2", None, deparser=False)


# assert_log.p4:
#   apply { log_msg("frame of type {} from port {}", { hdr.ethernet.etherType, standard_metadata.ingress_port });
#           assert(hdr.ethernet.etherType != 0x0800);   // this switch carries no IPv4
#           standard_metadata.egress_spec = 1;
#           if (hdr.ethernet.etherType == 0x88b6) standard_metadata.egress_spec = 0; }
#   egress: apply { assume(standard_metadata.egress_port == 1);
#                   log_msg("out on port {}", { standard_metadata.egress_port }); }
def assert_log():
    p = Program("assert_log", [])
    ethernet_then(p, [])
    p.action("MyIngress.check", [], [
        prim("log_msg", {"type": "string", "value": "frame of type {} from port {}"},
             {"type": "parameters_vector", "value": [field("ethernet", "etherType"), std("ingress_port")]}),
        prim("assert", expr("!=", field("ethernet", "etherType"), hexstr(0x0800, 16))),
        forward(hexstr(1, 16))])
    p.action("MyEgress.check_out", [], [
        prim("assume", expr("==", std("egress_port"), hexstr(1, 16))),
        prim("log_msg", {"type": "string", "value": "out on port {}"},
             {"type": "parameters_vector", "value": [std("egress_port")]})])
    p.action("MyIngress.to_tap", [], [forward(hexstr(0, 16))])
    p.call("ingress", "MyIngress.check", "node_3")
    p.cond("ingress", "node_3", expr("==", field("ethernet", "etherType"), hexstr(0x88b6, 16)), "tbl_to_tap", None)
    p.call("ingress", "MyIngress.to_tap", None)
    p.call("egress", "MyEgress.check_out", None)
    p.json("tbl_check", "tbl_check_out")


# multicast.p4: trace_t { bit<8> rid; bit<8> itype; } after Ethernet (0x88b5).
#   action forward(bit<9> port) { standard_metadata.egress_spec = port; }
#   action broadcast(bit<16> grp) { standard_metadata.mcast_grp = grp; }
#   action forward_and_mirror(bit<9> port, bit<32> session) { standard_metadata.egress_spec = port;
#       clone(CloneType.I2E, session); }
#   table dmac { key = { hdr.ethernet.dstAddr: exact; } actions = { forward; broadcast; forward_and_mirror; }
#                default_action = broadcast(1); }
#   egress: action stamp() { hdr.trace.rid = (bit<8>) standard_metadata.egress_rid;
#                            hdr.trace.itype = (bit<8>) standard_metadata.instance_type; }
#   action prune() { mark_to_drop(standard_metadata); }        // never back out of the port it came in on
#   apply { stamp(); if (standard_metadata.egress_port == standard_metadata.ingress_port) prune(); }
def multicast():
    p = Program("multicast", [])
    ethernet_then(p, [(0x88b5, "parse_trace")])
    p.htype("trace_t", [("rid", 8), ("itype", 8)])
    p.header("trace", "trace_t")
    p.order.append("trace")
    extract_state(p, "parse_trace", "trace")
    p.top["field_lists"] = [{"id": 1, "name": "fl", "elements": []}]
    p.action("MyIngress.forward", [("port", 9)], [forward(rt(0))])
    p.action("MyIngress.broadcast", [("grp", 16)], [assign(std("mcast_grp"), rt(0))])
    p.action("MyIngress.forward_and_mirror", [("port", 9), ("session", 32)], [
        forward(rt(0)), prim("clone_ingress_pkt_to_egress", rt(1), hexstr(1))])
    p.action("MyEgress.stamp", [], [
        assign(field("trace", "rid"), cast8(std("egress_rid"))),
        assign(field("trace", "itype"), cast8(std("instance_type")))])
    p.action("MyEgress.prune", [], [prim("mark_to_drop", header("standard_metadata"))])
    p.table("ingress", "MyIngress.dmac", [("exact", ("ethernet", "dstAddr"))],
            ["MyIngress.forward", "MyIngress.broadcast", "MyIngress.forward_and_mirror"], None,
            ("MyIngress.broadcast", [hexstr(1, 16)["value"]], False))
    p.call("egress", "MyEgress.stamp", "node_5")
    p.cond("egress", "node_5", expr("==", std("egress_port"), std("ingress_port")), "tbl_prune", None)
    p.call("egress", "MyEgress.prune", None)
    p.json("MyIngress.dmac", "tbl_stamp")


for make in [meters, clones, resubmit_recirculate, digests, action_profiles, header_unions, parse_vsets,
             deparser_primitives, no_deparser, assert_log, multicast]:
    make()
