package ernic.it.harness;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Hosts on one Ethernet segment, made of network namespaces: host {@code i} is namespace
 * {@code ernic-meshKIND-PID} with {@code eth0} at {@code 10.99.N.(i+1)/24}, joined by veth pairs to a bridge in a
 * namespace of its own (the switch). This JVM's namespace is on the segment too, at {@code .254}, so that a relay
 * of the test can stand between two hosts. Faults are nftables rules on the hosts' {@code eth0} (ingress and egress
 * hooks of the netdev family): packets vanish on the wire, the sockets see no error, as with a lossy or cut link.
 * Everything goes with the namespaces ({@link #close}, or {@link Leftovers} when this JVM is killed).
 */
public final class MeshLan implements AutoCloseable {
    private static final String TABLE = "ernicfault";

    private final String subnet;
    private final NetNamespace wire;
    private final List<NetNamespace> hosts = new ArrayList<>();
    private final String rootLink;

    private MeshLan(String subnet, NetNamespace wire, String rootLink) {
        this.subnet = subnet;
        this.wire = wire;
        this.rootLink = rootLink;
    }

    /** A segment of {@code count} hosts (at most 8). */
    public static MeshLan create(int count) throws IOException {
        long pid = ProcessHandle.current().pid();
        // One subnet per JVM, so that two runs side by side do not share addresses on this host's segment.
        String subnet = "10.99." + (pid % 200 + 20) + ".";
        String rootLink = "ernm" + pid % 10_000_000;
        NetNamespace wire = NetNamespace.create("ernic-meshwire-" + pid);
        MeshLan lan = new MeshLan(subnet, wire, rootLink);
        try {
            wire.exec("ip", "link", "add", "br0", "type", "bridge");
            wire.exec("ip", "link", "set", "br0", "up");
            for (int i = 0; i < count; i++) {
                NetNamespace h = NetNamespace.create("ernic-mesh" + (char) ('a' + i) + "-" + pid);
                lan.hosts.add(h);
                String port = "p" + i;
                wire.exec("ip", "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", h.name());
                wire.exec("ip", "link", "set", port, "master", "br0", "up");
                h.exec("ip", "addr", "add", lan.address(i) + "/24", "dev", "eth0");
                h.exec("ip", "link", "set", "eth0", "up");
            }
            // This JVM's end: made in the wire namespace and moved out, so it goes when the namespace goes.
            wire.exec("ip", "link", "add", "up0", "type", "veth", "peer", "name", rootLink, "netns",
                    Long.toString(pid));
            wire.exec("ip", "link", "set", "up0", "master", "br0", "up");
            NetNamespace.run(List.of("ip", "addr", "add", lan.rootAddress() + "/24", "dev", rootLink), false);
            NetNamespace.run(List.of("ip", "link", "set", rootLink, "up"), false);
            return lan;
        } catch (IOException | RuntimeException e) {
            lan.close();
            throw e;
        }
    }

    /** Host {@code i}'s namespace. */
    public NetNamespace host(int i) {
        return hosts.get(i);
    }

    /** Host {@code i}'s address on the segment. */
    public String address(int i) {
        return subnet + (i + 1);
    }

    /** This JVM's address on the segment. */
    public String rootAddress() {
        return subnet + "254";
    }

    /** {@code ip netns exec NS}: what runs a command on host {@code i}. */
    public List<String> launcher(int i) {
        return List.of("ip", "netns", "exec", hosts.get(i).name());
    }

    /**
     * Host {@code i}'s TCP sockets get at most {@code bytes} of send and of receive buffer (its namespace's
     * {@code net.ipv4.tcp_wmem} and {@code tcp_rmem}, which the kernel's autotuning stays under): small socket
     * buffers for every connection a server there makes or accepts, without an option of the server's.
     */
    public void socketBuffers(int i, int bytes) throws IOException {
        String v = "4096 " + Math.min(bytes, 16384) + " " + bytes;
        hosts.get(i).exec("sysctl", "-q", "-w", "net.ipv4.tcp_wmem=" + v, "net.ipv4.tcp_rmem=" + v);
    }

    /** Host {@code i} loses {@code percent}% of the packets it sends and of those it receives, at random. */
    public void loss(int i, int percent) throws IOException {
        rules(i, "numgen random mod 100 < " + percent + " counter drop");
    }

    /** Host {@code i} is cut off: every packet in and out is dropped, until {@link #heal}. */
    public void partition(int i) throws IOException {
        rules(i, "counter drop");
    }

    /** Removes host {@code i}'s fault rules. */
    public void heal(int i) throws IOException {
        hosts.get(i).exec("nft", "delete", "table", "netdev", TABLE);
    }

    /** Packets host {@code i}'s rules dropped so far (both directions). */
    public long dropped(int i) throws IOException {
        String out = hosts.get(i).exec("nft", "list", "table", "netdev", TABLE);
        long n = 0;
        var m = java.util.regex.Pattern.compile("counter packets (\\d+)").matcher(out);
        while (m.find()) {
            n += Long.parseLong(m.group(1));
        }
        return n;
    }

    /** Replaces host {@code i}'s fault rules with {@code rule} on both hooks of its eth0, in one transaction. */
    private void rules(int i, String rule) throws IOException {
        String t = "netdev " + TABLE;
        hosts.get(i).exec("nft", "add table " + t + "; delete table " + t + "; add table " + t + "; "
                + "add chain " + t + " in { type filter hook ingress device \"eth0\" priority 0; }; "
                + "add chain " + t + " out { type filter hook egress device \"eth0\" priority 0; }; "
                + "add rule " + t + " in " + rule + "; add rule " + t + " out " + rule);
    }

    @Override
    public void close() throws IOException {
        IOException failed = null;
        for (NetNamespace h : hosts) {
            try {
                h.close();
            } catch (IOException e) {
                failed = e;
            }
        }
        // This JVM's end first, and by name: a namespace's devices go in the kernel's deferred clean-up, so the
        // next segment of this JVM, made at once under the same name, could still find it ("File exists", seen
        // in CI). Deleting one end of a veth pair deletes both, before the command returns.
        NetNamespace.run(List.of("ip", "link", "del", rootLink), true);
        wire.close(); // takes the other veth ends with it
        if (failed != null) {
            throw failed;
        }
    }
}
