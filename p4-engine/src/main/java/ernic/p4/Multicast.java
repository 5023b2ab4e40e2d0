package ernic.p4;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * simple_switch's packet replication engine (bmv2's simple_pre): multicast groups, each a list of nodes in the order
 * they were associated; a node is a replication id (egress_rid) and a set of ports. A frame sent to a group makes one
 * copy per port of each of its nodes: the nodes in association order, each node's ports in ascending order. Node
 * handles are the lowest free handle, from 0, as bmv2's handle manager gives them; a group's handle is its id.
 * Bounded as simple_switch's defaults are (4096 groups, 4096 nodes), since a guest may send these commands.
 */
final class Multicast {
    static final int MAX_GROUPS = 4096;
    static final int MAX_NODES = 4096;
    /** Ports 0 to 511, as bmv2's port map. */
    static final int PORTS = 512;

    private static final class Node {
        final int rid;
        BitSet ports;
        /** The group it is associated with, or -1. */
        int group = -1;

        Node(int rid, BitSet ports) {
            this.rid = rid;
            this.ports = ports;
        }
    }

    /** Group id to its nodes' handles, in association order. */
    private final Map<Integer, List<Integer>> groups = new LinkedHashMap<>();
    /** Nodes by handle; null where a handle is free. */
    private final List<Node> nodes = new ArrayList<>();

    /** Where {@link #replicate} puts each copy: its egress port and replication id; false: make no more. */
    interface Copies {
        boolean copy(int port, int rid);
    }

    void createGroup(int mgid) {
        if (groups.containsKey(mgid)) {
            throw new IllegalArgumentException("multicast group " + mgid + " exists already");
        }
        if (groups.size() == MAX_GROUPS) {
            throw new IllegalArgumentException("mc_mgrp_create: " + MAX_GROUPS + " multicast groups exist already");
        }
        groups.put(mgid, new ArrayList<>());
    }

    /** Destroys a group; its nodes stay, associated with none (bmv2 leaves them pointing at a group that is gone). */
    void destroyGroup(int mgid) {
        for (int h : group(mgid)) {
            nodes.get(h).group = -1;
        }
        groups.remove(mgid);
    }

    /** Creates a node; returns its handle. */
    int createNode(int rid, BitSet ports) {
        int h = nodes.indexOf(null);
        if (h < 0) {
            if (nodes.size() == MAX_NODES) {
                throw new IllegalArgumentException("mc_node_create: " + MAX_NODES + " multicast nodes exist already");
            }
            h = nodes.size();
            nodes.add(null);
        }
        nodes.set(h, new Node(rid, ports));
        return h;
    }

    void updateNode(int handle, BitSet ports) {
        node(handle).ports = ports;
    }

    void associate(int mgid, int handle) {
        List<Integer> g = group(mgid);
        Node n = node(handle);
        if (n.group >= 0) {
            throw new IllegalArgumentException("multicast node " + handle + " is associated with group " + n.group
                    + " already");
        }
        g.add(handle);
        n.group = mgid;
    }

    void dissociate(int mgid, int handle) {
        List<Integer> g = group(mgid);
        Node n = node(handle);
        if (n.group != mgid) {
            throw new IllegalArgumentException("multicast node " + handle + " is not associated with group " + mgid);
        }
        g.remove(Integer.valueOf(handle));
        n.group = -1;
    }

    /** Destroys a node, dissociating it first when it is in a group (as bmv2 lets one). */
    void destroyNode(int handle) {
        Node n = node(handle);
        if (n.group >= 0) {
            groups.get(n.group).remove(Integer.valueOf(handle));
        }
        nodes.set(handle, null);
    }

    /**
     * The copies a frame sent to {@code mgid} makes, until {@code out} wants no more; none when the group does not
     * exist or has no port. Returns how many were made.
     */
    int replicate(int mgid, Copies out) {
        List<Integer> g = groups.get(mgid);
        if (g == null) {
            return 0;
        }
        int n = 0;
        for (int h : g) {
            Node node = nodes.get(h);
            for (int port = node.ports.nextSetBit(0); port >= 0; port = node.ports.nextSetBit(port + 1)) {
                n++;
                if (!out.copy(port, node.rid)) {
                    return n;
                }
            }
        }
        return n;
    }

    /**
     * simple_switch_CLI's multicast commands: {@code mc_mgrp_create MGID}, {@code mc_mgrp_destroy MGID},
     * {@code mc_node_create RID PORT...}, {@code mc_node_update HANDLE PORT...}, {@code mc_node_associate MGID HANDLE},
     * {@code mc_node_dissociate MGID HANDLE}, {@code mc_node_destroy HANDLE}. False when {@code w[0]} is none of them.
     */
    boolean command(String[] w) {
        switch (w[0]) {
            case "mc_mgrp_create" -> createGroup(mgid(w, 1, 2));
            case "mc_mgrp_destroy" -> destroyGroup(mgid(w, 1, 2));
            case "mc_node_create" -> createNode(number(w, 1, 16, "rid"), ports(w));
            case "mc_node_update" -> updateNode(number(w, 1, 31, "node handle"), ports(w));
            case "mc_node_associate" -> associate(mgid(w, 1, 3), number(w, 2, 31, "node handle"));
            case "mc_node_dissociate" -> dissociate(mgid(w, 1, 3), number(w, 2, 31, "node handle"));
            case "mc_node_destroy" -> {
                arguments(w, 2);
                destroyNode(number(w, 1, 31, "node handle"));
            }
            default -> {
                return false;
            }
        }
        return true;
    }

    /** A group id (mcast_grp is 16 bits) at word {@code i} of a command of {@code words} words. */
    static int mgid(String[] w, int i, int words) {
        arguments(w, words);
        return number(w, i, 16, "multicast group id");
    }

    private static void arguments(String[] w, int words) {
        if (w.length != words) {
            throw new IllegalArgumentException(w[0] + " takes " + (words - 1) + " argument" + (words == 2 ? "" : "s")
                    + ", got " + (w.length - 1));
        }
    }

    private static int number(String[] w, int i, int bits, String what) {
        if (i >= w.length) {
            throw new IllegalArgumentException(w[0] + ": missing the " + what);
        }
        return (int) RuntimeCommands.parseNumber(w[i], bits).longValue();
    }

    /**
     * The ports from word 2 on, each 0 to 511 and once; a {@code |} may end them with nothing after it (the list of
     * LAGs simple_switch's PRE also takes; LAGs are not supported: a NIC has no link aggregation here).
     */
    private static BitSet ports(String[] w) {
        if (w.length < 2) {
            throw new IllegalArgumentException(w[0] + ": missing arguments");
        }
        BitSet ports = new BitSet(PORTS);
        for (int i = 2; i < w.length; i++) {
            if (w[i].equals("|")) {
                if (i + 1 < w.length) {
                    throw new IllegalArgumentException(w[0] + ": LAGs are not supported (the list after '|')");
                }
                break;
            }
            int port = number(w, i, 9, "port");
            if (ports.get(port)) {
                throw new IllegalArgumentException(w[0] + ": port " + port + " twice");
            }
            ports.set(port);
        }
        return ports;
    }

    private List<Integer> group(int mgid) {
        List<Integer> g = groups.get(mgid);
        if (g == null) {
            throw new IllegalArgumentException("no multicast group " + mgid);
        }
        return g;
    }

    private Node node(int handle) {
        Node n = handle >= 0 && handle < nodes.size() ? nodes.get(handle) : null;
        if (n == null) {
            throw new IllegalArgumentException("no multicast node " + handle);
        }
        return n;
    }
}
