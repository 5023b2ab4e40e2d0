package ernic.it.fuzz;

import ernic.ionic.IonicDevice;
import ernic.ionic.fault.FaultPlan;
import ernic.ionic.profile.ProfileLoader;
import ernic.model.rdma.AdminCqe;
import ernic.model.rdma.RawCqe;
import ernic.model.rdma.RdmaVerbs;
import ernic.roce.IbOpcode;
import ernic.roce.RoceParser;
import ernic.roce.TransportHeader;
import ernic.roce.rc.Psn;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static ernic.model.rdma.Fw.*;

/**
 * The roce target: one {@link IonicDevice} with the wire end on ({@code --roce}), driven in process as the ionic
 * target drives its device ({@link FuzzGuest}, a mock clock the fuzzer moves). Its guest, the driver model, makes
 * a CQ, MRs (one with every remote right, one with none, one in another protection domain), RC QPs on the wire
 * toward a peer that is the fuzzer (three in RTS, one over IPv6, one with its PSNs about to wrap, one left in RTR),
 * a UC QP on the wire, a UD QP and an address handle. Each input is one frame from the segment
 * ({@link RocePackets}): a request to a QP's responder, a response to its requester, a datagram or random bytes; or
 * the guest's own work: a send WQE
 * (so the requester has requests out that the fuzzer ACKs, NAKs and answers), receives, timer ticks (so the
 * retransmission timer runs), QPs through RESET back to RTS with new PSNs, and now and then the guest going away.
 * What the device sends is read as the peer would read it, to learn the PSN its responder expects and the
 * requests its requester has out.
 *
 * <p>The probe: a second device with {@code --roce} on a cable the fuzzer holds; a fresh QP pair between the
 * two guests passes a SEND each way, data checked. An exception out of the device is a crash.
 */
final class RoceFuzz implements FuzzTarget {
    static final long RAM = 8L << 20;
    static final int CQ = 8, PROBE_CQ = 9, CQ_LOG2 = 8, Q_LOG2 = 5, DEPTH = 1 << Q_LOG2, STRIDE = 64;
    static final int UD_QP = 6, PROBE_QP = 30, AH = 1, QKEY = 0x1234;
    static final long DEVICE_MAC = 0x02_00_00_00_00_01L, PEER_MAC = 0x02_00_00_00_00_02L,
            PROBE_MAC = 0x02_00_00_00_00_03L;
    static final int DEVICE_IP = 0x0a00_0001, PEER_IP = 0x0a00_0002, PROBE_IP = 0x0a00_0003;
    static final byte[] DEVICE_GID = gid(1), PEER_GID = gid(2);
    static final int KEY = 1 << 8 | 0x11, NO_ACCESS_KEY = 2 << 8 | 0x22, OTHER_PD_KEY = 3 << 8 | 0x33,
            PROBE_KEY = 4 << 8 | 0x44, BINDABLE_KEY = 5 << 8 | 0x55, WINDOW = 6 << 8 | 0x66, WINDOW_KEY = 6 << 8 | 0x67;
    static final long VA = 0x7f00_0000_0000L, VA_NO_ACCESS = 0x6000_0000L, VA_OTHER_PD = 0x6100_0000L,
            VA_PROBE = 0x6200_0000L, VA_WINDOW = 0x6300_0000L;
    /** The QP a type 2 window is bound on: its rkey is another QP's key to every other QP. */
    static final int WINDOW_QP = 3;
    static final int MR_BYTES = 4 * 4096;
    static final int REMOTE_ALL = RdmaVerbs.ACCESS_LOCAL_WRITE | RdmaVerbs.ACCESS_REMOTE_WRITE
            | RdmaVerbs.ACCESS_REMOTE_READ | RdmaVerbs.ACCESS_REMOTE_ATOMIC;
    /** Frames the cable carries before it must be quiet: more is a storm (a wedge). */
    static final int QUIET_AFTER = 100_000;

    private final MockTicker clock = Ticker.newMockTicker();
    /** The device fuzzed, and the one at the other end of the probe's cable. */
    private final IonicDevice dev, peer;
    /** Frames each device sent, in order, for the fuzzer to read or the cable to deliver. */
    private final ArrayDeque<byte[]> fromDev = new ArrayDeque<>(), fromPeer = new ArrayDeque<>();
    private final RocePackets packets = new RocePackets(
            new RocePackets.Addresses(DEVICE_MAC, PEER_MAC, DEVICE_IP, PEER_IP, DEVICE_GID, PEER_GID),
            new RocePackets.Keys(VA, MR_BYTES, KEY, NO_ACCESS_KEY, VA_NO_ACCESS, OTHER_PD_KEY, VA_OTHER_PD,
                    WINDOW_KEY, VA_WINDOW, WINDOW_QP));
    private final RoceParser seen = new RoceParser();
    private final Recorder recorder = new Recorder();
    /** The device's QPs as the fuzzer knows them: RC 2 to 5 (5 only in RTR), UC 7; UD 6 apart. */
    private final RocePackets.Qp[] qps = {new RocePackets.Qp(2, false, false, true),
            new RocePackets.Qp(3, false, false, true), new RocePackets.Qp(4, true, false, true),
            new RocePackets.Qp(5, false, false, false), new RocePackets.Qp(7, false, false, true, true)};
    private final RocePackets.Qp ud = new RocePackets.Qp(UD_QP, false, true, false);
    /** The fuzzed device's guest (null between two), and the probe's peer's. */
    RoceGuest guest;
    private RoceGuest peerGuest;
    /** Pages of the guest no key gives the wire: one each side of the MR the fuzz aims at. */
    private final long[] guards = new long[2];
    /** What the guest fills the memory no key gives the wire with: {@link #untouched} finds it there, never sent. */
    static final byte MARK = (byte) 0xa5;
    /** A run of this many {@link #MARK} bytes in a payload the device sends is that memory leaking out. */
    static final int MARK_RUN = 16;
    private static final MemorySegment MARKED = MemorySegment.ofArray(new byte[4096]).fill(MARK);
    /** The device's counters of the guests gone (power-on zeroes them), refusal causes aside (they stay). */
    private final Map<String, Long> earlier = new TreeMap<>();
    private long guests, wqes, cqes, errorCqes, reconnects, probes, framesSeen;
    /** What a completion showed wrong, for the step to report. */
    private String finding;
    /** The bytes of every receive the guest posts. */
    static final int RECEIVE_BYTES = 4096;

    RoceFuzz() {
        dev = device(DEVICE_MAC, "ERNICFUZZROCE", fromDev);
        peer = device(PROBE_MAC, "ERNICFUZZPEER", fromPeer);
    }

    private IonicDevice device(long mac, String serial, ArrayDeque<byte[]> out) {
        IonicDevice d = new IonicDevice(ProfileLoader.load(ProfileLoader.DEFAULT), FaultPlan.none(), mac, serial);
        d.rdma().clock(clock);
        d.roce();
        d.lif().sink(frame -> out.add(frame.toArray(ValueLayout.JAVA_BYTE)));
        return d;
    }

    private static byte[] gid(int host) {
        byte[] g = new byte[16];
        g[0] = (byte) 0xfd;
        g[15] = (byte) host;
        return g;
    }

    @Override
    public String name() {
        return "roce";
    }

    @Override
    public void start() throws Exception {
        peerGuest = new RoceGuest(peer);
        peerGuest.mr(PROBE_KEY, VA_PROBE, 4096, RdmaVerbs.ACCESS_LOCAL_WRITE, 0);
        peerGuest.rings(PROBE_QP);
        peerGuest.header[PROBE_QP] = peerGuest.ipv4Template(DEVICE_MAC, PROBE_MAC, PROBE_IP, DEVICE_IP);
    }

    // ---------------------------------------------------------------------------------------------
    // The guest of the device fuzzed

    /** A new guest: bring-up, CQs, MRs, the QPs on the wire and the UD QP, all valid. */
    private void epoch() throws Exception {
        guests++;
        guest = new RoceGuest(dev);
        guest.probeCq = guest.cq(PROBE_CQ);
        guards[0] = guest.drv.alloc(4096);
        guest.mr(KEY, VA, MR_BYTES, REMOTE_ALL, 0);
        guards[1] = guest.drv.alloc(4096);
        guest.mr(NO_ACCESS_KEY, VA_NO_ACCESS, 4096, RdmaVerbs.ACCESS_LOCAL_WRITE, 0);
        guest.mr(OTHER_PD_KEY, VA_OTHER_PD, 4096, REMOTE_ALL, 1);
        guest.mr(PROBE_KEY, VA_PROBE, 4096, RdmaVerbs.ACCESS_LOCAL_WRITE, 0);
        guest.mr(BINDABLE_KEY, VA_WINDOW, 4096, RdmaVerbs.ACCESS_LOCAL_WRITE | RdmaVerbs.ACCESS_MW_BIND, 0);
        ok(guest.raw.createMr(WINDOW, 0, 0, MRF_MW_2, 0, 0, 0), "CREATE_MR of a type 2 window");
        for (MemorySegment m : kept()) {
            m.fill(MARK);
        }
        for (RocePackets.Qp q : qps) {
            guest.rings(q.id);
            guest.header[q.id] = q.ipv6 ? guest.template(PEER_MAC, DEVICE_MAC, DEVICE_GID, PEER_GID)
                    : guest.ipv4Template(PEER_MAC, DEVICE_MAC, DEVICE_IP, PEER_IP);
            ok(guest.raw.createQp(q.id, q.uc ? RdmaVerbs.UC : RdmaVerbs.RC, 0, CQ, guest.sq[q.id], Q_LOG2,
                    guest.rq[q.id], Q_LOG2), "CREATE_QP " + q.id);
            connect(q, q.id == 3 ? 0xff_fff8 : 0, q.id == 3 ? 0xff_fffc : 0, q.id == 3 ? 1 : 7);
        }
        guest.rings(UD_QP);
        ok(guest.raw.createQp(UD_QP, RdmaVerbs.UD, RdmaVerbs.QP_PRIVILEGED, CQ, guest.sq[UD_QP], Q_LOG2,
                guest.rq[UD_QP], Q_LOG2), "CREATE_QP UD");
        ok(guest.raw.modifyQp(UD_QP, IB_QP_STATE | IB_QP_QKEY, RdmaVerbs.INIT, 0, QKEY), "UD INIT");
        ok(guest.raw.modifyQp(UD_QP, IB_QP_STATE, RdmaVerbs.RTR, 0, 0), "UD RTR");
        ok(guest.raw.modifyQp(UD_QP, IB_QP_STATE, RdmaVerbs.RTS, 0, 0), "UD RTS");
        ok(guest.raw.createAh(AH, guest.ipv4Template(PEER_MAC, DEVICE_MAC, DEVICE_IP, PEER_IP), RoceGuest.V4_LEN),
                "CREATE_AH");
        guest.rings(PROBE_QP);
        guest.header[PROBE_QP] = guest.ipv4Template(PROBE_MAC, DEVICE_MAC, DEVICE_IP, PROBE_IP);
        // The window opens its page with every remote right, to the peer of QP 3 alone.
        guest.postSend(WINDOW_QP, w -> w.op(RdmaVerbs.BIND_MW).numSgeKey(WINDOW_KEY & 0xff).immDataKey(WINDOW)
                .flags(WQE_FLAG_SIG).bindMw(VA_WINDOW, 4096, BINDABLE_KEY, MRF_REMOTE_WRITE | MRF_REMOTE_READ
                        | MRF_REMOTE_ATOMIC | MRF_BIND_MW_2));
        RawCqe bound = guest.cq.pollWork();
        if (bound == null || bound.error()) {
            throw new FuzzFailure("a valid BIND_MW of a type 2 window on QP " + WINDOW_QP + " failed: " + bound);
        }
        guest.raw.ringCq(CQ, 0, guest.cq.consumer());
        for (int i = 0; i < 4; i++) {
            for (RocePackets.Qp q : qps) {
                guest.postRecv(q.id, VA + 4096L * i, RECEIVE_BYTES, KEY);
            }
            guest.postRecv(UD_QP, VA + 4096L * i, RECEIVE_BYTES, KEY);
        }
    }

    /** {@code q} from RESET through INIT and RTR (toward the fuzzer, expecting {@code rqPsn}) to RTS ({@code sqPsn}). */
    private void connect(RocePackets.Qp q, int rqPsn, int sqPsn, int retry) throws Exception {
        guest.connect(q.id, q.peerQpn, guest.header[q.id], q.ipv6 ? RoceGuest.V6_LEN : RoceGuest.V4_LEN, rqPsn, sqPsn,
                q.rts, retry);
        q.reset(rqPsn);
    }

    private void endEpoch() {
        if (guest != null) {
            for (Map.Entry<String, Long> e : dev.counters().entrySet()) {
                if (!e.getKey().startsWith("refused.")) {
                    earlier.merge(e.getKey(), e.getValue(), Long::sum);
                }
            }
            guest.close();
            guest = null;
            fromDev.clear();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // One input

    @Override
    public void step(long index, SplittableRandom r) throws Exception {
        try {
            if (guest == null) {
                epoch();
            }
            act(index, r);
            deliver();
            if (guest != null) {
                guest.drain(guest.cq, this);
            }
            if (finding != null) {
                throw new FuzzFailure(finding);
            }
        } catch (FuzzFailure f) {
            throw f;
        } catch (Exception | Error e) {
            // The guest here is a valid one: anything that goes wrong under it is the device's.
            throw new FuzzFailure("the device failed a valid guest or threw: " + e, e);
        }
    }

    /**
     * One input: a request (50 in 100), a response (16), a datagram (7), random bytes or a CNP (4); a send WQE (8),
     * receives (4), a tick (8), a QP through RESET (3); one in 2,000 the guest goes away. (The guest posts without
     * waiting for room in its rings, as a careless guest may.)
     */
    private void act(long index, SplittableRandom r) throws Exception {
        int k = r.nextInt(100);
        if (k < 66) {
            RocePackets.Qp q = k < 50 ? qps[r.nextInt(qps.length)] : responded(r);
            if (q.failed && r.nextInt(3) != 0) {
                reconnect(index, q, r); // as an application would, now and then: the fuzz goes on deeper
                return;
            }
            if (k < 50) {
                packets.request(q, r);
            } else {
                packets.response(q, r);
            }
            frame(index);
        } else if (k < 73) {
            packets.datagram(ud, QKEY, r);
            frame(index);
        } else if (k < 77) {
            if (r.nextInt(4) == 0) {
                packets.cnp(qps[r.nextInt(qps.length)], r);
            } else {
                packets.random(r);
            }
            frame(index);
        } else if (k < 85) {
            postSend(index, r);
        } else if (k < 89) {
            int id = r.nextInt(5) == 0 ? UD_QP : qps[r.nextInt(qps.length)].id;
            int n = r.nextInt(1, 5);
            recorder.add(index, n + " receives on QP " + id, new byte[0], 0);
            for (int i = 0; i < n; i++) {
                guest.postRecv(id, VA + 4096L * r.nextInt(4), RECEIVE_BYTES, KEY);
            }
        } else if (k < 96 || k == 99 && r.nextInt(20) != 0) {
            long by = r.nextInt(10) == 0 ? r.nextLong(1_000_000_000L, 40_000_000_000L)
                    : r.nextLong(1_000_000, 100_000_000);
            recorder.add(index, "ticks: +" + by + " ns", new byte[0], 0);
            tick(by);
        } else if (k < 99) {
            RocePackets.Qp q = qps[r.nextInt(qps.length)];
            reconnect(index, q, r);
        } else {
            recorder.add(index, "the guest goes away (detach)", new byte[0], 0);
            endEpoch();
        }
    }

    /** {@code q} through RESET back to RTS with new PSNs and retry count, its rings from slot 0. */
    private void reconnect(long index, RocePackets.Qp q, SplittableRandom r) throws Exception {
        int rq = psnAtReset(r), sq = psnAtReset(r), retry = r.nextInt(8);
        recorder.add(index, "QP " + q.id + " through RESET to RTS, rq_psn 0x" + Integer.toHexString(rq)
                + " sq_psn 0x" + Integer.toHexString(sq) + " retry " + retry, new byte[0], 0);
        reconnects++;
        ok(guest.raw.modifyQp(q.id, IB_QP_STATE, RdmaVerbs.RESET, 0, 0), "MODIFY_QP to RESET");
        guest.sqProd[q.id] = guest.rqProd[q.id] = 0;
        connect(q, rq, sq, retry);
        for (int i = r.nextInt(3); i > 0; i--) {
            guest.postRecv(q.id, VA + 4096L * i, RECEIVE_BYTES, KEY);
        }
    }

    /** The QP a response goes to: mostly one whose requester has requests out, now and then the one in RTR. */
    private RocePackets.Qp responded(SplittableRandom r) {
        if (r.nextInt(8) == 0) {
            return qps[3];
        }
        if (r.nextInt(16) == 0) {
            return qps[4]; // UC: nothing answers its requests, so anything that does is hostile
        }
        RocePackets.Qp q = qps[r.nextInt(3)];
        for (int i = 0; i < 3 && q.sentLast < 0; i++) {
            q = qps[(q.id - 1) % 3];
        }
        return q;
    }

    private static int psnAtReset(SplittableRandom r) {
        return switch (r.nextInt(4)) {
            case 0 -> Psn.MASK - r.nextInt(16);
            case 1 -> r.nextInt(1 << 24);
            default -> 0;
        };
    }

    /** The frame {@link #packets} holds, to the device's port as if from the TAP. */
    private void frame(long index) throws FuzzFailure {
        recorder.add(index, packets.what, packets.buf, packets.length);
        receive(dev, packets.buf, packets.length);
    }

    private static void receive(IonicDevice d, byte[] frame, int length) throws FuzzFailure {
        try {
            d.receive(MemorySegment.ofArray(frame).asSlice(0, length));
        } catch (Exception | Error e) {
            throw new FuzzFailure("the device threw on a frame from the segment: " + e, e);
        }
    }

    /** A send WQE of the guest: SEND, WRITE, READ or an atomic on an RC QP, or a datagram on the UD QP. */
    private void postSend(long index, SplittableRandom r) {
        wqes++;
        if (r.nextInt(6) == 0) {
            int len = r.nextInt(0, 1100);
            recorder.add(index, "UD send of " + len + " bytes", new byte[0], 0);
            guest.postSend(UD_QP, w -> w.op(RdmaVerbs.SEND).numSgeKey(1).flags(WQE_FLAG_SIG).length(len)
                    .ud(AH, r.nextInt(1 << 24), QKEY).sge(WQE_PLD, 0, VA, len, KEY));
            return;
        }
        RocePackets.Qp q = r.nextInt(6) == 0 ? qps[4] : qps[r.nextInt(3)]; // UC too: its READs and atomics fail
        int op = new int[] {RdmaVerbs.SEND, RdmaVerbs.SEND_IMM, RdmaVerbs.WRITE, RdmaVerbs.WRITE_IMM, RdmaVerbs.READ,
                RdmaVerbs.ATOMIC_CS, RdmaVerbs.ATOMIC_FA}[r.nextInt(7)];
        long remote = r.nextInt(4) == 0 ? r.nextLong() : 0x1000_0000L + r.nextInt(1 << 20);
        int rkey = r.nextInt();
        recorder.add(index, "send WQE op " + op + " on QP " + q.id, new byte[0], 0);
        if (op == RdmaVerbs.ATOMIC_CS || op == RdmaVerbs.ATOMIC_FA) {
            long local = VA + 8L * r.nextInt(MR_BYTES / 8);
            guest.postSend(q.id, w -> {
                w.op(op).flags(WQE_FLAG_SIG).rdma(remote & ~7L, rkey);
                MemorySegment s = w.segment();
                be64(s, WQE_ATOMIC_SWAP_ADD_HIGH_BE, 0); // swap/add (high, low) and compare (high, low)
                be32(s, WQE_ATOMIC_SWAP_ADD_LOW_BE, r.nextInt());
                be64(s, WQE_ATOMIC_SGE + SGE_VA_BE, local);
                be32(s, WQE_ATOMIC_SGE + SGE_LEN_BE, 8);
                be32(s, WQE_ATOMIC_SGE + SGE_LKEY_BE, KEY);
            });
            return;
        }
        int len = r.nextInt(4) == 0 ? r.nextInt(0, MR_BYTES + 1) : r.nextInt(1, 3000);
        long local = VA + r.nextInt(0, MR_BYTES - Math.min(len, MR_BYTES) + 1);
        guest.postSend(q.id, w -> w.op(op).numSgeKey(1).flags(WQE_FLAG_SIG).immDataKey(r.nextInt()).rdma(remote, rkey)
                .length(len).sge(WQE_PLD, 0, local, len, KEY));
    }

    /** Time passes by {@code nanos}: both devices' RDMA timers (retransmission, RNR waits) run. */
    private void tick(long nanos) {
        clock.advance(nanos, TimeUnit.NANOSECONDS);
        dev.rdma().tick(clock.nanoTime());
        peer.rdma().tick(clock.nanoTime());
    }

    // ---------------------------------------------------------------------------------------------
    // The wire: what the devices send

    /**
     * Delivers what the devices sent: the device's frames to the probe's address go to the peer device, the rest
     * are read as the fuzzing peer would read them; the peer device's frames go to the device. Until quiet.
     */
    private void deliver() throws FuzzFailure {
        for (int n = 0; !fromDev.isEmpty() || !fromPeer.isEmpty(); n++) {
            if (n == QUIET_AFTER) {
                throw new FuzzFailure("the wire is not quiet after " + QUIET_AFTER + " frames");
            }
            byte[] b = fromDev.poll();
            if (b != null) {
                RoceParser.Refusal why = seen.parse(MemorySegment.ofArray(b));
                if (why != RoceParser.Refusal.NONE) {
                    // The guest sends no Ethernet here: all the device sends is the wire end's RoCEv2.
                    throw new FuzzFailure("the device sent a frame its own parser refuses (" + why + "): "
                            + java.util.HexFormat.of().formatHex(b, 0, Math.min(b.length, 96)));
                }
                if (leaks(b)) {
                    throw new FuzzFailure("the device sent memory no key gives the wire: "
                            + RocePackets.opName(seen.frame.bth.opcode) + " psn 0x"
                            + Integer.toHexString(seen.frame.bth.psn));
                }
                if (!seen.frame.ipv6 && seen.frame.dstIp == PROBE_IP) {
                    receive(peer, b, b.length);
                } else {
                    framesSeen++;
                    learn();
                }
            }
            b = fromPeer.poll();
            if (b != null) {
                if (seen.parse(MemorySegment.ofArray(b)) != RoceParser.Refusal.NONE) {
                    throw new FuzzFailure("the probe's peer device sent a frame its own parser refuses");
                }
                receive(dev, b, b.length);
            }
        }
    }

    /** What the peer learns from a packet of the device (parsed in {@link #seen}): PSNs, requests out. */
    private void learn() throws FuzzFailure {
        TransportHeader h = seen.frame.bth;
        IbOpcode o = IbOpcode.of(h.opcode);
        RocePackets.Qp q = null;
        for (RocePackets.Qp c : qps) {
            if (c.peerQpn == h.destQp) {
                q = c;
            }
        }
        if (o == null || q == null || o.transport != IbOpcode.RC) {
            return;
        }
        if (o.request) { // the device's requester
            if (q.sentFirst < 0) {
                q.sentFirst = h.psn;
            }
            q.sentLast = h.psn;
            if (o == IbOpcode.RC_RDMA_READ_REQUEST) {
                q.readPsn = h.psn;
                q.readLength = h.dmaLength;
                q.readPackets = Math.max(1, (int) ((Integer.toUnsignedLong(h.dmaLength) + RocePackets.PMTU - 1)
                        / RocePackets.PMTU));
                q.sentLast = Psn.add(h.psn, q.readPackets - 1);
            } else if (o == IbOpcode.RC_CMP_SWAP || o == IbOpcode.RC_FETCH_ADD) {
                q.atomicPsn = h.psn;
            }
            return;
        }
        // The device's responder: its MSN never goes back; an ACK says what it took, a NAK what it expects.
        if (o.has(IbOpcode.Header.AETH)) {
            if (q.msnSeen >= 0 && Psn.diff(h.msn, q.msnSeen) < 0) {
                throw new FuzzFailure("QP " + q.id + ": the responder's MSN went back from " + q.msnSeen + " to "
                        + h.msn + " (" + RocePackets.opName(h.opcode) + " psn 0x" + Integer.toHexString(h.psn) + ")");
            }
            q.msnSeen = h.msn;
        }
        if (o == IbOpcode.RC_ACKNOWLEDGE && h.syndrome >= TransportHeader.AETH_RNR_NAK) {
            if (h.syndrome == TransportHeader.AETH_NAK_PSN_SEQUENCE || (h.syndrome & 0xe0) == 0x20) {
                q.reqPsn = h.psn;
            } else {
                q.failed = true; // a fatal NAK: the responder failed the QP
            }
            return;
        }
        int next = Psn.add(h.psn, 1);
        if (Psn.diff(next, q.reqPsn) > 0) {
            q.reqPsn = next;
        }
    }

    // ---------------------------------------------------------------------------------------------
    // The probe

    @Override
    public void quiesce() throws Exception {
        try {
            if (guest == null) {
                epoch();
            }
            deliver();
            guest.drain(guest.cq, this);
            untouched();
            probe();
        } catch (FuzzFailure f) {
            throw f;
        } catch (Exception | Error e) {
            throw new FuzzFailure("the probe failed: " + e, e);
        }
    }

    /**
     * The memory no key gives the wire: the pages each side of the MR the fuzz aims at, the MRs it may not use,
     * and the page of the type 2 window (the fuzz sends its rkey only to the QPs it is not bound on).
     */
    private MemorySegment[] kept() {
        return new MemorySegment[] {guest.drv.mem(guards[0], 4096), guest.drv.mem(guards[1], 4096),
                guest.at(VA_NO_ACCESS, 4096), guest.at(VA_OTHER_PD, 4096), guest.at(VA_WINDOW, 4096)};
    }

    /** What no key gives the wire is as the guest left it (all {@link #MARK}). */
    private void untouched() throws FuzzFailure {
        MemorySegment[] kept = kept();
        String[] names = {"the page before the MR", "the page after the MR", "the MR without remote access",
                "the MR of another protection domain", "a type 2 window's page through a QP it is not bound on"};
        for (int i = 0; i < kept.length; i++) {
            long at = kept[i].mismatch(MARKED);
            if (at >= 0) {
                throw new FuzzFailure("a packet from the wire wrote to " + names[i] + " (byte " + at + ")");
            }
        }
    }

    /** Whether the payload of the frame {@link #seen} read has a run of {@link #MARK_RUN} {@link #MARK} bytes. */
    private boolean leaks(byte[] frame) {
        int run = 0;
        for (long i = seen.payloadOffset, end = i + seen.payloadLength; i < end; i++) {
            run = frame[(int) i] == MARK ? run + 1 : 0;
            if (run == MARK_RUN) {
                return true;
            }
        }
        return false;
    }

    /** A fresh QP pair between the two devices' guests on the wire passes a SEND each way; then it is destroyed. */
    private void probe() throws Exception {
        probes++;
        ok(guest.raw.createQp(PROBE_QP, RdmaVerbs.RC, 0, PROBE_CQ, guest.sq[PROBE_QP], Q_LOG2, guest.rq[PROBE_QP],
                Q_LOG2), "CREATE_QP of the probe");
        ok(peerGuest.raw.createQp(PROBE_QP, RdmaVerbs.RC, 0, CQ, peerGuest.sq[PROBE_QP], Q_LOG2,
                peerGuest.rq[PROBE_QP], Q_LOG2), "CREATE_QP of the probe on the peer");
        guest.sqProd[PROBE_QP] = guest.rqProd[PROBE_QP] = peerGuest.sqProd[PROBE_QP] = peerGuest.rqProd[PROBE_QP] = 0;
        guest.connect(PROBE_QP, PROBE_QP, guest.header[PROBE_QP], RoceGuest.V4_LEN, 0, 0, true, 7);
        peerGuest.connect(PROBE_QP, PROBE_QP, peerGuest.header[PROBE_QP], RoceGuest.V4_LEN, 0, 0, true, 7);
        try {
            byte[] there = pattern(probes), back = pattern(~probes);
            MemorySegment.copy(there, 0, guest.at(VA_PROBE, 64), ValueLayout.JAVA_BYTE, 0, 64);
            MemorySegment.copy(back, 0, peerGuest.at(VA_PROBE, 64), ValueLayout.JAVA_BYTE, 0, 64);
            peerGuest.postRecv(PROBE_QP, VA_PROBE + 2048, 1024, PROBE_KEY);
            guest.postRecv(PROBE_QP, VA_PROBE + 2048, 1024, PROBE_KEY);
            guest.postSend(PROBE_QP, w -> w.op(RdmaVerbs.SEND).numSgeKey(1).flags(WQE_FLAG_SIG).length(64)
                    .sge(WQE_PLD, 0, VA_PROBE, 64, PROBE_KEY));
            peerGuest.postSend(PROBE_QP, w -> w.op(RdmaVerbs.SEND).numSgeKey(1).flags(WQE_FLAG_SIG).length(64)
                    .sge(WQE_PLD, 0, VA_PROBE, 64, PROBE_KEY));
            deliver();
            expectTwo(guest, guest.probeCq, "the device");
            expectTwo(peerGuest, peerGuest.cq, "the peer device");
            if (!Arrays.equals(peerGuest.at(VA_PROBE + 2048, 64).toArray(ValueLayout.JAVA_BYTE), there)
                    || !Arrays.equals(guest.at(VA_PROBE + 2048, 64).toArray(ValueLayout.JAVA_BYTE), back)) {
                throw new FuzzFailure("the probe's SENDs completed but their data did not land");
            }
        } finally {
            ok(guest.raw.destroy(OP_DESTROY_QP, PROBE_QP), "DESTROY_QP of the probe");
            ok(peerGuest.raw.destroy(OP_DESTROY_QP, PROBE_QP), "DESTROY_QP of the probe on the peer");
            deliver();
            guest.drain(guest.probeCq, null);
            peerGuest.drain(peerGuest.cq, null);
        }
    }

    /** A SEND and a receive of 64 bytes completed with success on {@code cq}. */
    private static void expectTwo(RoceGuest g, RawCqe.Ring cq, String who) throws FuzzFailure {
        boolean sent = false, received = false;
        RawCqe c;
        while ((c = cq.pollWork()) != null) {
            if (c.error()) {
                throw new FuzzFailure("the probe's QP pair on the wire: " + who + " completed with an error, status "
                        + c.statusLength());
            }
            sent |= c.type() == CQE_TYPE_SEND_MSN;
            received |= c.type() == CQE_TYPE_RECV && c.statusLength() == 64;
        }
        g.raw.ringCq(cq == g.cq ? CQ : PROBE_CQ, 0, cq.consumer());
        if (!sent || !received) {
            throw new FuzzFailure("the probe's QP pair on the wire: " + who + (sent ? "" : " has no SEND completion")
                    + (received ? "" : " has no 64-byte receive"));
        }
    }

    private static byte[] pattern(long seed) {
        byte[] b = new byte[64];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }

    static void ok(AdminCqe c, String what) throws FuzzFailure {
        if (c.status() != 0 || c.error()) {
            throw new FuzzFailure("a valid " + what + " failed: status " + c.status());
        }
    }

    /** A completion drained from the guest's CQ. */
    void completion(RawCqe c) {
        cqes++;
        if (!c.error() && c.type() == CQE_TYPE_RECV && c.statusLength() > RECEIVE_BYTES && finding == null) {
            finding = "QP " + c.qid() + ": a receive completed with " + c.statusLength() + " bytes in a buffer of "
                    + RECEIVE_BYTES;
        }
        if (c.error()) {
            errorCqes++;
            for (RocePackets.Qp q : qps) {
                q.failed |= q.id == c.qid();
            }
        }
    }

    // ---------------------------------------------------------------------------------------------

    @Override
    public Recorder recorder() {
        return recorder;
    }

    /** The device's counters of this run: of the guests gone and the present one. */
    Map<String, Long> counters() {
        Map<String, Long> m = new TreeMap<>(earlier);
        if (guest != null) {
            dev.counters().forEach((k, v) -> m.merge(k, v, Long::sum));
        } else {
            dev.counters().forEach((k, v) -> {
                if (k.startsWith("refused.")) {
                    m.put(k, v);
                }
            });
        }
        return m;
    }

    /** The device's counters the fuzz is meant to move, by the short name the stats line gives them. */
    static final List<String> SHOWN = List.of("roce.rxFrames", "roce.rxMalformed", "roce.rxBadIcrc", "roce.rxCnp",
            "roce.rxCeMarked", "roce.rxUnknownQp", "roce.rxWrongSource", "roce.rxWrongTransport", "roce.rxNotReady",
            "roce.txFrames",
            "roce.rc.respPackets", "roce.rc.respDuplicates", "roce.rc.respOutOfSequence", "roce.rc.respSeqNaks",
            "roce.rc.respRnrNaks", "roce.rc.respNakAccess", "roce.rc.respNakBadLength",
            "roce.rc.respNakOpcodeSequence", "roce.rc.respNakMisalignedAtomic", "roce.rc.respAtomicReplays",
            "roce.rc.reqAcks", "roce.rc.reqReadResponses", "roce.rc.reqAtomicAcks", "roce.rc.reqFatalNaks",
            "roce.rc.reqRetransmitted", "roce.rc.reqTimeouts", "roce.rc.reqDropPsnOutOfWindow",
            "roce.rc.reqDropUnexpected", "roce.rc.ucMessagesDropped", "roce.rc.ucDropOutOfSequence",
            "roce.rc.ucDropAccess", "roce.rc.ucDropNoReceive", "rdma.ud.dropped");

    @Override
    public String stats() {
        Map<String, Long> c = counters();
        StringBuilder b = new StringBuilder(String.format("roce: %,d frames sent (%,d requests, %,d responses, %,d "
                        + "datagrams, %,d random, %,d CNPs; %,d cut, %,d flipped, %,d bad ICRC, %,d lies, %,d padded), "
                        + "%,d read back, %,d guests, %,d WQEs, %,d CQEs (%,d errors), %,d QP resets, %,d probes; device:",
                packets.requests + packets.responses + packets.datagrams + packets.randoms + packets.cnps,
                packets.requests, packets.responses, packets.datagrams, packets.randoms, packets.cnps, packets.cut, packets.flipped, packets.badIcrc,
                packets.lies, packets.padded, framesSeen, guests, wqes, cqes, errorCqes, reconnects, probes));
        for (String k : SHOWN) {
            b.append(' ').append(k.substring(k.indexOf('.') + 1)).append(' ').append(String.format("%,d",
                    c.getOrDefault(k, 0L)));
        }
        return b.toString();
    }

    @Override
    public void close() {
        endEpoch();
        if (peerGuest != null) {
            peerGuest.close();
            peerGuest = null;
        }
    }
}
