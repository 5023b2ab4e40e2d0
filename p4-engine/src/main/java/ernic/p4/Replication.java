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
 * instance_type. Digests hand a learn list's values to the listener.
 */
final class Replication {
    static final int NORMAL = 0;
    static final int INGRESS_CLONE = 1;
    static final int EGRESS_CLONE = 2;
    static final int RECIRCULATE = 4;
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
     * A clone waiting to go through egress: the bytes it starts from, where its parse ended (-1: parse them again,
     * an ingress clone), its headers (an egress clone) and the field list it keeps.
     */
    record Job(int instanceType, int port, byte[] bytes, int cursor, Phv headers, long ingressPort, FieldList list,
               FieldList.Values values, long packetLength) {
        /** Puts the clone in the packet; returns the port its egress starts on. */
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
            p.phv.resetMetadata();
            if (list != null) {
                list.apply(p, values);
            }
            StdMeta.set(sm.instanceType(), p, instanceType);
            StdMeta.set(sm.packetLength(), p, packetLength);
            p.lengthRegister = packetLength;
            return port;
        }
    }

    /** The session's port, or -1 (counted) when no mirroring_add made it: then there is no clone, as in bmv2. */
    private int session(Packet p) {
        Integer port = program.mirrorSessions.get(p.cloneSession);
        if (port == null) {
            p.externs.counters.inc(P4Counter.CLONES_NO_SESSION);
            return -1;
        }
        p.externs.counters.inc(P4Counter.CLONES);
        return port;
    }

    void ingressClone(Packet p, ArrayDeque<Job> jobs) {
        int port = session(p);
        if (port >= 0) {
            FieldList l = list(p.cloneFieldList);
            p.need(p.inLen);
            jobs.add(new Job(INGRESS_CLONE, port, Arrays.copyOf(p.in, p.inLen), 0, null,
                    StdMeta.get(program.std.ingressPort(), p), l, l == null ? null : l.capture(p), p.inLen));
        }
        p.cloneSession = -1;
    }

    void egressClone(Packet p, ArrayDeque<Job> jobs) {
        int port = session(p);
        if (port >= 0) {
            FieldList l = list(p.cloneFieldList);
            p.need(p.inLen);
            Phv headers = new Phv(p.phv.layout);
            headers.copyFrom(p.phv);
            jobs.add(new Job(EGRESS_CLONE, port, Arrays.copyOf(p.in, p.inLen), p.cursor, headers, 0, l,
                    l == null ? null : l.capture(p), p.lengthRegister));
        }
        p.cloneSession = -1;
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
