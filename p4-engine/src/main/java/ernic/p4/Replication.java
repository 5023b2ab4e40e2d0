package ernic.p4;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * simple_switch's copies of a frame, with its rules (simple_switch.cpp): an ingress clone is the frame as it
 * entered, parsed again, to egress on the mirror session's port; an egress clone is the frame as egress left it;
 * resubmit starts ingress again on the frame as it entered, recirculate on the frame as the deparser wrote it. Each
 * copy starts with its metadata zeroed, then the field list's values as they were when the copy was made, and its
 * instance_type. A frame whose ingress set mcast_grp goes to the group's ports as multicast copies ({@link Multicast}),
 * and a mirror session may send its clones there too. Digests hand a learn list's values to the listener.
 */
final class Replication {
    static final int NORMAL = 0;
    static final int INGRESS_CLONE = 1;
    static final int EGRESS_CLONE = 2;
    static final int RECIRCULATE = 4;
    static final int REPLICATION = 5;
    static final int RESUBMIT = 6;
    /** Resubmissions plus recirculations one frame may make: a program that loops is cut off, dropped and counted. */
    static final int MAX_PASSES = 16;
    /** Clones one input frame may make, clones of clones included. */
    static final int MAX_COPIES = 16;

    private final Program program;
    Consumer<P4Engine.Digest> digestListener;

    Replication(Program program) {
        this.program = program;
    }

    /**
     * A copy waiting to go through egress: the bytes it starts from, where its parse ended (-1: parse them again,
     * an ingress clone), its headers (an egress clone, a multicast copy), the field list it keeps, and its
     * egress_rid (-1: the copy's own, 0 after its metadata is reset). A multicast copy of the frame keeps the whole
     * PHV, metadata included (simple_switch copies it with the packet).
     */
    record Job(int instanceType, int port, int rid, byte[] bytes, int cursor, Phv headers, boolean keepMetadata,
               long ingressPort, FieldList list, FieldList.Values values, long packetLength) {
        /** The same copy to another port, with a replication id (one of a multicast group's copies). */
        Job to(int port, int rid) {
            return new Job(instanceType, port, rid, bytes, cursor, headers, keepMetadata, ingressPort, list, values,
                    packetLength);
        }

        /** Puts the copy in the packet; returns the port its egress starts on. */
        int restore(Packet p, Program program) {
            StdMeta sm = program.std;
            System.arraycopy(bytes, 0, p.in, 0, bytes.length);
            p.filled(bytes.length);
            p.started(bytes.length);
            p.inIsInput = false;
            if (headers == null) {
                StdMeta.set(sm.ingressPort(), p, ingressPort);
                program.parser.parse(p, new Parser.Run());
            } else {
                p.phv.copyFrom(headers);
                p.cursor = cursor;
            }
            if (!keepMetadata) {
                p.phv.resetMetadata();
                if (list != null) {
                    list.apply(p, values);
                }
            }
            StdMeta.set(sm.instanceType(), p, instanceType);
            if (rid >= 0) {
                StdMeta.set(sm.egressRid(), p, rid);
            }
            StdMeta.set(sm.packetLength(), p, packetLength);
            p.lengthRegister = packetLength;
            return port;
        }
    }

    /** The session, or null (counted) when no mirroring_add made it: then there is no clone, as in bmv2. */
    private Program.Mirror session(Packet p) {
        Program.Mirror m = program.mirrorSessions.get(p.cloneSession);
        p.externs.counters.inc(m == null ? P4Counter.CLONES_NO_SESSION : P4Counter.CLONES);
        return m;
    }

    /** A clone to its session: to the session's multicast group's ports (mirroring_add_mc), or to its port. */
    private void toSession(Job j, Program.Mirror m, ArrayDeque<Job> jobs) {
        if (m.mgid() >= 0) {
            fanOut(j, m.mgid(), jobs);
        } else {
            jobs.add(j);
        }
    }

    /**
     * One copy of {@code j} per port of group {@code mgid}'s nodes, with the node's rid; how many (counted). A group
     * may have thousands of ports: no more copies wait than a frame may make ({@link #MAX_COPIES}), the rest are not
     * made (counted once as a loop drop), so a large group cannot keep the device thread.
     */
    private int fanOut(Job j, int mgid, ArrayDeque<Job> jobs) {
        boolean[] cut = {false};
        int n = program.multicast.replicate(mgid, (port, rid) -> {
            if (jobs.size() == MAX_COPIES) {
                cut[0] = true;
                return false;
            }
            jobs.add(j.to(port, rid));
            return true;
        });
        if (cut[0]) {
            n--;
            program.externs.counters.inc(P4Counter.DROPS_LOOP);
        }
        program.externs.counters.add(P4Counter.MULTICAST_COPIES, n);
        return n;
    }

    void ingressClone(Packet p, ArrayDeque<Job> jobs) {
        Program.Mirror m = session(p);
        if (m != null) {
            FieldList l = list(p.cloneFieldList);
            p.need(p.inLen);
            toSession(new Job(INGRESS_CLONE, m.port(), -1, Arrays.copyOf(p.in, p.inLen), 0, null, false,
                    StdMeta.get(program.std.ingressPort(), p), l, l == null ? null : l.capture(p), p.inLen), m, jobs);
        }
        p.cloneSession = -1;
    }

    void egressClone(Packet p, ArrayDeque<Job> jobs) {
        Program.Mirror m = session(p);
        if (m != null) {
            FieldList l = list(p.cloneFieldList);
            p.need(p.inLen);
            Phv headers = new Phv(p.phv.layout);
            headers.copyFrom(p.phv);
            toSession(new Job(EGRESS_CLONE, m.port(), -1, Arrays.copyOf(p.in, p.inLen), p.cursor, headers, false, 0,
                    l, l == null ? null : l.capture(p), p.lengthRegister), m, jobs);
        }
        p.cloneSession = -1;
    }

    /**
     * mcast_grp set at the end of ingress: the frame itself goes no further; one copy of it (headers, payload and all
     * its metadata, instance_type REPLICATION) per port of the group's nodes, each with its node's egress_rid. Returns
     * how many; 0 when the group does not exist or has no port.
     */
    int multicast(Packet p, int mgid, ArrayDeque<Job> jobs) {
        p.need(p.inLen);
        Phv headers = new Phv(p.phv.layout);
        headers.copyFrom(p.phv);
        return fanOut(new Job(REPLICATION, -1, -1, Arrays.copyOf(p.in, p.inLen), p.cursor, headers, true, 0, null,
                null, p.lengthRegister), mgid, jobs);
    }

    /** Resubmit: the frame as it entered goes through ingress again with the list's values. */
    void again(Packet p, int listId, int instanceType, long packetLength) {
        FieldList l = list(listId);
        FieldList.Values v = l.capture(p);
        p.started(p.inLen);
        l.apply(p, v);
        StdMeta.set(program.std.instanceType(), p, instanceType);
        StdMeta.set(program.std.packetLength(), p, packetLength);
        p.externs.counters.inc(P4Counter.RESUBMITS);
    }

    /** Recirculate: the frame as the deparser wrote it goes through ingress with the list's values. */
    void recirculate(Packet p) {
        FieldList l = list(p.recirculateList);
        FieldList.Values v = l.capture(p);
        p.completeOutput();
        int n = p.outLen;
        System.arraycopy(p.out, 0, p.in, 0, Math.min(n, p.in.length));
        p.filled(Math.min(n, p.in.length));
        p.inIsInput = false;
        p.started(Math.min(n, p.in.length));
        l.apply(p, v);
        StdMeta.set(program.std.instanceType(), p, RECIRCULATE);
        StdMeta.set(program.std.packetLength(), p, p.inLen);
        p.lengthRegister = p.inLen;
        p.externs.counters.inc(P4Counter.RECIRCULATIONS);
    }

    void digest(Packet p) {
        FieldList l = program.learnLists.get(p.learnList);
        p.learnList = 0;
        p.externs.counters.inc(P4Counter.DIGESTS);
        if (digestListener != null) {
            digestListener.accept(new P4Engine.Digest(l.name, List.of(l.fieldNames), l.numbers(l.capture(p))));
        }
    }

    private FieldList list(int id) {
        return id == 0 ? null : program.fieldLists.get(id);
    }
}
