package ernic.it.fuzz;

import ernic.common.InternetChecksum;
import ernic.roce.IbOpcode;
import ernic.roce.Icrc;
import ernic.roce.RoceFrame;
import ernic.roce.RoceParser;
import ernic.roce.TransportHeader;
import ernic.roce.rc.Psn;

import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;

import static ernic.common.Endian.BE;

/**
 * The frames of the roce target "from the segment" ({@link RoceFuzz}): mostly RoCEv2 packets to one of the
 * device's QPs, built with the roce module's own builder (valid headers and ICRC) from what the fuzzer knows of
 * that QP (its expected PSN, the device's requests seen on the wire), with one or more fields hostile: every
 * BTH opcode, PSNs in and out of window and across the wrap, P_Key, destination QP, RETH and AtomicETH keys,
 * addresses and lengths, DETH Q_Key, AETH syndromes and MSNs, payload lengths, the outer addresses; and then,
 * now and then, damaged as bytes: cut at every layer (with the IP and UDP lengths and the ICRC made to agree,
 * or not), bytes flipped, a wrong ICRC, UDP port and length lies, IP length and header lies, Ethernet padding.
 * Also frames of random bytes. One frame at a time in {@link #buf}, {@link #length} bytes; {@link #what} says
 * what it is, for the reproducer.
 */
final class RocePackets {
    /** The largest frame made: a 4 KiB payload past the largest path MTU, and room for padding. */
    static final int MAX_FRAME = 4096 + 512;
    /** The path MTU the device's QPs are given (MODIFY_QP pmtu 10). */
    static final int PMTU = 1024;
    static final long OTHER_MAC = 0x02_00_00_00_00_99L, BROADCAST = 0xffff_ffff_ffffL;

    /** What the fuzzer knows of one of the device's QPs, as the peer at the other end of the wire. */
    static final class Qp {
        final int id, peerQpn;
        final boolean ipv6, ud;
        /** A UC QP: the requests the fuzzer sends it are the UC forms of the RC opcodes (where there is one). */
        final boolean uc;
        /** The QP has a requester (RTS), not only a responder (RTR). */
        final boolean rts;
        /** The PSN the device's responder expects next (learned from its ACKs and NAKs). */
        int reqPsn;
        /** The message the peer has begun at reqPsn: none, a SEND or a WRITE (for a plausible next opcode). */
        int inMessage;
        /** The device's requester as seen on the wire: the oldest and newest request PSNs not yet answered. */
        int sentFirst = -1, sentLast = -1;
        /** Its last READ request: first PSN and response packets; its last atomic's PSN (-1: none). */
        int readPsn = -1, readPackets, readLength, atomicPsn = -1;
        /** The MSN the peer's responder reports (messages it completed); the last the device's reported (-1: none). */
        int msn, msnSeen = -1;
        /** The QP failed (an error completion, a fatal NAK): it takes nothing until it goes through RESET. */
        boolean failed;
        /** The last READ or atomic sent in order (its headers), for a duplicate of it; opcode -1: none. */
        final TransportHeader last = new TransportHeader();

        Qp(int id, boolean ipv6, boolean ud, boolean rts) {
            this(id, ipv6, ud, false, rts);
        }

        Qp(int id, boolean ipv6, boolean ud, boolean uc, boolean rts) {
            this.id = id;
            this.peerQpn = 0x100 + id;
            this.ipv6 = ipv6;
            this.ud = ud;
            this.uc = uc;
            this.rts = rts;
            last.opcode = -1;
        }

        /** A fresh start at {@code rqPsn} and {@code sqPsn} (the QP went through RESET). */
        void reset(int rqPsn) {
            reqPsn = rqPsn;
            inMessage = 0;
            sentFirst = sentLast = readPsn = atomicPsn = -1;
            msn = 0;
            msnSeen = -1;
            failed = false;
            last.opcode = -1;
        }
    }

    static final int IN_NONE = 0, IN_SEND = 1, IN_WRITE = 2;

    private static final int[] RC_REQUESTS = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
            0x0b, 0x0c, 0x13, 0x14, 0x16, 0x17};
    private static final int[] RC_RESPONSES = {0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12};
    /** Opcodes the device does not take: reserved RC codes, RD, XRC, CNP, manufacturer specific. */
    private static final int[] UNKNOWN = {0x15, 0x18, 0x1f, 0x40, 0x44, 0x4c, 0x81, 0xa0, 0xa4, 0xc0, 0xff};

    final byte[] buf = new byte[MAX_FRAME];
    final MemorySegment seg = MemorySegment.ofArray(buf);
    final RoceFrame f = new RoceFrame();
    int length;
    String what;
    /** How many frames of each kind were made, and how many were damaged as bytes. */
    long requests, responses, datagrams, randoms, cnps, cut, flipped, badIcrc, lies, padded;

    private final Addresses at;
    private final byte[] payload = new byte[MAX_FRAME];

    /** The addresses on the segment: the device's and the fuzzing peer's (MAC, IPv4, IPv6). */
    record Addresses(long deviceMac, long peerMac, int deviceIp, int peerIp, byte[] deviceGid, byte[] peerGid) {}

    /**
     * The device's MR the fuzz aims at (VA, length, rkey); the key and VA of a page without remote access, of one in
     * another protection domain, and of a type 2 window bound on QP {@code windowQp} (sent only to the others).
     */
    record Keys(long va, int length, int rkey, int noAccessKey, long noAccessVa, int otherPdKey, long otherPdVa,
                int windowKey, long windowVa, int windowQp) {}

    private final Keys keys;

    RocePackets(Addresses at, Keys keys) {
        this.at = at;
        this.keys = keys;
    }

    // ---------------------------------------------------------------------------------------------
    // Requests to the device's responder

    /**
     * A request packet to {@code q} (its responder): one in three as a requester would send it (so that messages
     * complete and the QP lives on); the rest with one field hostile, everything else right (so that the check of
     * that field is reached), or one in eight with several at once and the outer headers too. Advances its PSN when
     * in order.
     */
    void request(Qp q, SplittableRandom r) {
        requests++;
        boolean clean = r.nextInt(3) == 0;
        int aim = clean ? -1 : r.nextInt(8); // the hostile field: rkey, VA, DMA length, alignment, length, PSN, ...
        boolean many = aim == 7;
        outer(q, r, !many);
        TransportHeader h = f.bth;
        h.opcode = !many || r.nextInt(5) < 3 ? nextOpcode(q, r) : opcode(r, RC_REQUESTS);
        if (q.uc) {
            IbOpcode asRc = IbOpcode.of(h.opcode), asUc = asRc == null ? null : asRc.on(IbOpcode.UC);
            h.opcode = asUc != null ? asUc.code : h.opcode; // a READ or an atomic stays RC: the wrong transport
        }
        IbOpcode o = IbOpcode.of(h.opcode);
        flags(h, r, !many && aim != 6);
        h.destQp = many || aim == 6 ? destQp(q, r) : q.id;
        h.psn = many || aim == 5 ? psn(q.reqPsn, r) : q.reqPsn;
        int len = payloadLength(o, r);
        h.va = keys.va + (r.nextInt(8) == 0 ? r.nextInt(keys.length) : (r.nextInt(keys.length / 8) * 8L));
        h.rkey = keys.rkey;
        h.dmaLength = o != null && o.position == IbOpcode.Position.FIRST ? PMTU * r.nextInt(1, 4) + r.nextInt(1, PMTU)
                : o == IbOpcode.RC_RDMA_READ_REQUEST ? r.nextInt(1, 2 * PMTU + 1) : len;
        if (h.dmaLength > 0 && h.va + h.dmaLength > keys.va + keys.length) {
            h.va = keys.va + keys.length - h.dmaLength;
        }
        if (h.va < keys.va) {
            h.va = keys.va;
        }
        h.swapAdd = r.nextLong();
        h.compare = r.nextLong();
        h.imm = r.nextInt();
        h.invRkey = switch (r.nextInt(16)) {
            case 0 -> keys.rkey;
            case 1, 2, 3 -> keys.noAccessKey;
            case 4, 5 -> keys.otherPdKey; // (not the window's: a SEND with invalidate from any QP may free it, as in rxe)
            default -> r.nextInt();
        };
        if (aim == 0 || many && r.nextInt(4) == 0) {
            h.rkey = key(r);
            if (h.rkey == keys.windowKey && q.id == keys.windowQp) {
                h.rkey = keys.noAccessKey; // the window's own QP may use it: not a hostile key there
            }
            if (r.nextInt(4) != 0 && (h.rkey == keys.noAccessKey || h.rkey == keys.otherPdKey
                    || h.rkey == keys.windowKey)) {
                // inside that key's own region: only its rights, its protection domain or its QP refuse it
                h.va = (h.rkey == keys.noAccessKey ? keys.noAccessVa : h.rkey == keys.otherPdKey ? keys.otherPdVa
                        : keys.windowVa) + r.nextInt(0, 4096 / 8) * 8L;
                h.dmaLength = Math.min(Math.max(0, h.dmaLength), 4096 - (int) (h.va & 4095));
                len = Math.min(len, h.dmaLength);
            }
        }
        if (aim == 1 || many && r.nextInt(6) == 0) {
            h.va = va(r, h.dmaLength);
        }
        if (aim == 2 || many && r.nextInt(6) == 0) {
            h.dmaLength = hugeOrOdd(r);
        }
        if (aim == 3 || many && r.nextInt(8) == 0) {
            h.va |= r.nextInt(1, 8); // an atomic must be 8-byte aligned
        }
        if (aim == 4 || many && r.nextInt(12) == 0) {
            len = r.nextInt(4) == 0 ? r.nextInt(0, MAX_FRAME - 200) : PMTU + r.nextInt(1, 9);
        }
        if ((aim == 5 || many) && q.last.opcode >= 0 && r.nextInt(3) == 0) {
            h.set(q.last); // the same READ or atomic again: answered from memory or from its replay record
            h.ackReq = r.nextBoolean();
            len = 0;
        } else if (h.psn == q.reqPsn && (o == IbOpcode.RC_RDMA_READ_REQUEST || o == IbOpcode.RC_CMP_SWAP
                || o == IbOpcode.RC_FETCH_ADD)) {
            q.last.set(h);
        }
        if (h.psn == q.reqPsn && (clean || r.nextInt(4) != 0)) {
            // As the responder should take it: the next PSN, and the message it begins or ends.
            q.reqPsn = Psn.add(q.reqPsn, 1);
            q.inMessage = o == null || o.last() ? IN_NONE : o.rdmaWrite() ? IN_WRITE : IN_SEND;
        }
        finish(len, r, clean);
        what = (clean ? "clean " : many ? "hostile " : "aim " + aim + " ") + "request " + opName(h.opcode) + " to QP "
                + h.destQp + " psn 0x" + Integer.toHexString(h.psn) + " (expected 0x" + Integer.toHexString(q.reqPsn)
                + "), rkey 0x" + Integer.toHexString(h.rkey) + " va 0x" + Long.toHexString(h.va) + " dma "
                + h.dmaLength + ", " + len + " bytes";
    }

    /** An opcode that continues (or begins) the peer's message as a requester would. */
    private static int nextOpcode(Qp q, SplittableRandom r) {
        return switch (q.inMessage) {
            case IN_SEND -> r.nextInt(3) == 0 ? 0x01 : new int[] {0x02, 0x03, 0x16}[r.nextInt(3)];
            case IN_WRITE -> r.nextInt(3) == 0 ? 0x07 : r.nextBoolean() ? 0x08 : 0x09;
            default -> new int[] {0x00, 0x04, 0x05, 0x06, 0x0a, 0x0b, 0x0c, 0x13, 0x14, 0x17}[r.nextInt(10)];
        };
    }

    /** The payload an opcode carries: a full path MTU before the last packet, 1 to PMTU in it, none for the rest. */
    private static int payloadLength(IbOpcode o, SplittableRandom r) {
        if (o == null || !o.payload) {
            return r.nextInt(10) == 0 ? r.nextInt(1, 64) : 0;
        }
        if (o.position == IbOpcode.Position.FIRST || o.position == IbOpcode.Position.MIDDLE) {
            return PMTU;
        }
        return r.nextInt(4) == 0 ? r.nextInt(0, 4) : r.nextInt(1, PMTU + 1);
    }

    // ---------------------------------------------------------------------------------------------
    // Responses to the device's requester

    /**
     * A response to {@code q}'s requester: ACK, NAK, READ response or atomic ACK; one in three as a responder
     * would send it, the rest with one or more fields hostile.
     */
    void response(Qp q, SplittableRandom r) {
        responses++;
        boolean clean = r.nextInt(3) == 0;
        outer(q, r, clean);
        TransportHeader h = f.bth;
        boolean read = q.readPsn >= 0 && r.nextInt(3) == 0, atomic = q.atomicPsn >= 0 && r.nextInt(4) == 0;
        int len = 0;
        if (read) {
            int k = r.nextInt(0, Math.max(1, q.readPackets));
            h.opcode = q.readPackets <= 1 ? 0x10 : k == 0 ? 0x0d : k == q.readPackets - 1 ? 0x0f : 0x0e;
            h.psn = Psn.add(q.readPsn, k);
            len = k < q.readPackets - 1 ? PMTU : Math.max(0, q.readLength - PMTU * (q.readPackets - 1));
        } else if (atomic) {
            h.opcode = 0x12;
            h.psn = q.atomicPsn;
        } else {
            h.opcode = r.nextInt(6) == 0 ? opcode(r, RC_RESPONSES) : 0x11;
            if (q.sentLast < 0) {
                h.psn = r.nextInt(1 << 24); // nothing sent: no PSN is in the window
            } else {
                int first = q.sentFirst >= 0 ? q.sentFirst : q.sentLast;
                int span = Math.max(1, Psn.diff(q.sentLast, first) + 1);
                h.psn = clean && r.nextBoolean() ? q.sentLast : Psn.add(first, r.nextInt(span));
            }
            if (h.opcode >= 0x0d && h.opcode <= 0x10) {
                len = payloadLength(IbOpcode.of(h.opcode), r);
            }
        }
        if (!clean && r.nextInt(5) == 0) {
            h.psn = psn(h.psn, r);
        }
        if (!clean && r.nextInt(8) == 0) {
            h.opcode = r.nextInt(3) == 0 ? r.nextInt(256) : opcode(r, RC_REQUESTS);
        }
        flags(h, r, clean);
        h.destQp = clean ? q.id : destQp(q, r);
        h.syndrome = clean ? TransportHeader.AETH_ACK : syndrome(r);
        q.msn = r.nextInt(4) == 0 ? q.msn : q.msn + 1 & Psn.MASK;
        h.msn = !clean && r.nextInt(6) == 0 ? r.nextInt(1 << 24) : q.msn;
        h.origData = r.nextLong();
        if (!clean && r.nextInt(12) == 0) {
            len = r.nextInt(0, MAX_FRAME - 200);
        }
        if (h.opcode == 0x11 && h.syndrome < 0x20 && q.sentLast >= 0 && Psn.le(h.psn, q.sentLast) && r.nextInt(3) == 0) {
            q.sentFirst = Psn.add(h.psn, 1); // answered up to here: later ACKs aim past it
        }
        finish(len, r, clean);
        what = (clean ? "clean " : "") + "response " + opName(h.opcode) + " to QP " + h.destQp + " psn 0x" + Integer.toHexString(h.psn)
                + " syndrome 0x" + Integer.toHexString(h.syndrome) + " msn " + h.msn + ", " + len + " bytes";
    }

    /** An AETH syndrome: mostly an ACK, else RNR NAKs with their timer, the NAK codes, reserved ones. */
    private static int syndrome(SplittableRandom r) {
        return switch (r.nextInt(10)) {
            case 0, 1, 2, 3 -> TransportHeader.AETH_ACK;
            case 4 -> r.nextInt(0, 0x20); // an ACK with a credit count
            case 5 -> TransportHeader.AETH_RNR_NAK | r.nextInt(0x20);
            case 6, 7 -> 0x60 + r.nextInt(0, 5); // PSN sequence, invalid request, remote access, operational, RD
            default -> r.nextInt(256);
        };
    }

    // ---------------------------------------------------------------------------------------------
    // Datagrams and random frames

    /** A UD SEND to {@code q} (a UD QP): its Q_Key or another, a source QP, a payload up to past a datagram. */
    void datagram(Qp q, int qkey, SplittableRandom r) {
        datagrams++;
        outer(q, r, false);
        TransportHeader h = f.bth;
        h.opcode = r.nextInt(6) == 0 ? r.nextInt(256) : r.nextBoolean() ? 0x64 : 0x65;
        flags(h, r, false);
        h.destQp = r.nextInt(6) == 0 ? destQp(q, r) : q.id;
        h.psn = r.nextInt(1 << 24);
        h.qkey = switch (r.nextInt(6)) {
            case 0 -> r.nextInt();
            case 1 -> qkey ^ 1 << r.nextInt(32);
            default -> qkey;
        };
        h.srcQp = r.nextInt(1 << 24);
        h.imm = r.nextInt();
        int len = r.nextInt(8) == 0 ? r.nextInt(0, MAX_FRAME - 200) : r.nextInt(0, 1025);
        finish(len, r, false);
        what = "datagram " + opName(h.opcode) + " to QP " + h.destQp + " qkey 0x" + Integer.toHexString(h.qkey) + ", "
                + len + " bytes";
    }

    /**
     * A congestion notification packet to {@code q} (annex A17.9.2: BTH opcode 0x81, BECN set, 16 reserved bytes),
     * which the device counts and drops: it does no congestion control.
     */
    void cnp(Qp q, SplittableRandom r) {
        cnps++;
        outer(q, r, false);
        TransportHeader h = f.bth;
        flags(h, r, true);
        h.opcode = RoceParser.CNP_OPCODE;
        h.becn = true;
        h.destQp = q.id;
        h.psn = 0;
        for (int i = 0; i < 16; i++) {
            payload[i] = 0;
        }
        int hdr = f.headers(buf, 0, 16);
        System.arraycopy(payload, 0, buf, hdr, 16);
        length = hdr + 16 + f.trailer(buf, 0, 16);
        what = "CNP to QP " + q.id;
    }

    /** Random bytes, half of them behind a plausible Ethernet, IPv4 and UDP header to port 4791 of the device. */
    void random(SplittableRandom r) {
        randoms++;
        length = r.nextInt(8) == 0 ? r.nextInt(0, 64) : r.nextInt(0, 1600);
        for (int i = 0; i < length; i++) {
            buf[i] = (byte) r.nextInt();
        }
        if (length >= 42 && r.nextBoolean()) {
            BE.put16(seg, 0, (int) (at.deviceMac >>> 32));
            BE.put32(seg, 2, (int) at.deviceMac);
            BE.put16(seg, 12, 0x0800);
            BE.put8(seg, 14, 0x45);
            BE.put16(seg, 14 + 6, 0);
            BE.put8(seg, 14 + 9, 17);
            BE.put32(seg, 14 + 16, at.deviceIp);
            BE.put16(seg, 14 + 20 + 2, RoceFrame.ROCE_V2_PORT);
            if (r.nextBoolean()) {
                BE.put16(seg, 14 + 2, length - 14);
                BE.put16(seg, 14 + 20 + 4, length - 34);
            }
            ipv4Checksum(14);
        }
        what = "random bytes, " + length;
    }

    // ---------------------------------------------------------------------------------------------
    // The parts

    /** The outer headers as the peer sends them; unless {@code clean}, now and then a wrong MAC, address, tag. */
    private void outer(Qp q, SplittableRandom r, boolean clean) {
        boolean hostile = !clean && r.nextInt(4) == 0;
        f.dmac = hostile && r.nextInt(10) == 0 ? (r.nextBoolean() ? OTHER_MAC : BROADCAST) : at.deviceMac;
        f.smac = at.peerMac;
        f.vlan = hostile && r.nextInt(6) == 0 ? r.nextInt(0x10000) : RoceFrame.NO_VLAN;
        f.ipv6 = q.ipv6 ^ (hostile && r.nextInt(10) == 0);
        if (f.ipv6) {
            System.arraycopy(at.peerGid, 0, f.srcGid, 0, 16);
            System.arraycopy(at.deviceGid, 0, f.dstGid, 0, 16);
            if (hostile && r.nextInt(8) == 0) {
                f.srcGid[15] ^= (byte) r.nextInt(1, 256);
            }
            if (hostile && r.nextInt(10) == 0) {
                f.dstGid[15] ^= (byte) r.nextInt(1, 256);
            }
        } else {
            f.srcIp = hostile && r.nextInt(8) == 0 ? r.nextInt() : at.peerIp;
            f.dstIp = hostile && r.nextInt(10) == 0 ? r.nextInt() : at.deviceIp;
        }
        f.tos = hostile ? r.nextInt(256) : 0;
        f.ecn = hostile && r.nextInt(5) == 0 ? RoceFrame.ECN_CE : -1;
        f.ttl = clean ? 64 : r.nextInt(1, 256);
        f.flowLabel = clean ? 0 : r.nextInt(1 << 20);
        f.srcPort = hostile && r.nextInt(5) == 0 ? r.nextInt(0x10000) : 0xc000 | q.id;
    }

    /** The BTH flags and P_Key; unless {@code clean}, some set at random and now and then a P_Key not the default. */
    private static void flags(TransportHeader h, SplittableRandom r, boolean clean) {
        h.solicited = !clean && r.nextInt(8) == 0;
        h.migReq = !clean && r.nextInt(16) == 0;
        h.ackReq = clean || r.nextInt(3) == 0;
        h.fecn = !clean && r.nextInt(30) == 0;
        h.becn = !clean && r.nextInt(30) == 0;
        h.pkey = !clean && r.nextInt(20) == 0 ? r.nextInt(0x10000) : TransportHeader.DEFAULT_PKEY;
    }

    /** Mostly the QP's own number; else another QP of the device, one that does not exist, 0, 1, 2^24 - 1. */
    private static int destQp(Qp q, SplittableRandom r) {
        return switch (r.nextInt(24)) {
            case 0 -> r.nextInt(1 << 24);
            case 1 -> r.nextInt(0, 2);
            case 2 -> 0xff_ffff;
            case 3 -> r.nextInt(2, 40);
            default -> q.id;
        };
    }

    /** Around {@code expected}: in order, behind (duplicates), ahead, at the window's edges, anywhere. */
    private static int psn(int expected, SplittableRandom r) {
        return switch (r.nextInt(12)) {
            case 0 -> Psn.add(expected, -r.nextInt(1, 8));
            case 1 -> Psn.add(expected, r.nextInt(1, 8));
            case 2 -> Psn.add(expected, Psn.WINDOW + r.nextInt(-2, 3));
            case 3 -> Psn.add(expected, -Psn.WINDOW + r.nextInt(-2, 3));
            case 4 -> r.nextInt(1 << 24);
            default -> expected;
        };
    }

    /** An rkey: 0, unknown, one bit off, without remote access, of another protection domain, another QP's. */
    private int key(SplittableRandom r) {
        return switch (r.nextInt(7)) {
            case 0 -> 0;
            case 1 -> r.nextInt();
            case 2 -> keys.rkey ^ 1 << r.nextInt(32);
            case 3 -> keys.noAccessKey;
            case 4 -> keys.otherPdKey;
            case 5 -> keys.windowKey;
            default -> keys.rkey & ~0xff | r.nextInt(256); // the right index, another key byte
        };
    }

    /** A hostile address: past or before the MR, where VA + length overflows, near 2^64, anywhere. */
    private long va(SplittableRandom r, int dmaLength) {
        return switch (r.nextInt(6)) {
            case 0 -> keys.va + keys.length - r.nextInt(0, 64);
            case 1 -> keys.va - r.nextInt(1, 4096);
            case 2 -> -1L - r.nextInt(0, 64);
            case 3 -> -(long) Integer.toUnsignedLong(dmaLength) + r.nextInt(0, 8);
            case 4 -> Long.MAX_VALUE - r.nextInt(0, 64);
            default -> r.nextLong();
        };
    }

    private static int hugeOrOdd(SplittableRandom r) {
        return switch (r.nextInt(6)) {
            case 0 -> 0;
            case 1 -> -1;
            case 2 -> Integer.MAX_VALUE;
            case 3 -> Integer.MIN_VALUE;
            case 4 -> 1 << 31 - r.nextInt(1, 12);
            default -> r.nextInt();
        };
    }

    private static int opcode(SplittableRandom r, int[] known) {
        return switch (r.nextInt(10)) {
            case 0 -> r.nextInt(256);
            case 1 -> UNKNOWN[r.nextInt(UNKNOWN.length)];
            case 2 -> 0x20 | r.nextInt(0x0c); // UC
            case 3 -> 0x60 | r.nextInt(0x20); // UD, valid or not
            default -> known[r.nextInt(known.length)];
        };
    }

    static String opName(int code) {
        IbOpcode o = IbOpcode.of(code);
        return (o == null ? "opcode" : o.name()) + " 0x" + Integer.toHexString(code);
    }

    /** Writes the frame with {@code len} payload bytes (valid ICRC); unless clean, damages it one time in four. */
    private void finish(int len, SplittableRandom r, boolean clean) {
        for (int i = 0; i < len; i++) {
            payload[i] = (byte) r.nextInt();
        }
        int hdr = f.headers(buf, 0, len);
        System.arraycopy(payload, 0, buf, hdr, len);
        length = hdr + len + f.trailer(buf, 0, len);
        if (!clean && r.nextInt(4) == 0) {
            damage(r);
        }
    }

    /** One byte-level damage to the frame just built: a cut, flipped bytes, a wrong ICRC, a lie, padding. */
    private void damage(SplittableRandom r) {
        int eth = f.ethernetLength(), ip = eth, udp = ip + f.ipHeaderLength(), bth = udp + RoceFrame.UDP_HLEN;
        int ext = bth + RoceFrame.BTH_LEN, pay = f.headerLength(), icrcAt = length - Icrc.LENGTH;
        switch (r.nextInt(9)) {
            case 0, 1 -> {
                cut++;
                int[] bounds = {0, ip, udp, bth, ext, pay, icrcAt, length};
                int layer = r.nextInt(bounds.length - 1);
                int to = bounds[layer] + r.nextInt(Math.max(1, bounds[layer + 1] - bounds[layer]));
                length = Math.max(0, to);
                if (r.nextBoolean() && length >= udp + RoceFrame.UDP_HLEN) {
                    lengths(ip, udp);
                    if (r.nextBoolean() && length - Icrc.LENGTH >= ext) {
                        icrc();
                    }
                }
            }
            case 2 -> {
                flipped++;
                for (int n = r.nextInt(1, 4); n > 0 && length > 0; n--) {
                    buf[r.nextInt(length)] ^= (byte) r.nextInt(1, 256);
                }
                if (r.nextInt(3) == 0 && length >= ext + Icrc.LENGTH) {
                    if (!f.ipv6) {
                        ipv4Checksum(ip);
                    }
                    icrc(); // the damage reaches the transport: a TVer, PadCnt or reserved bit, a header field
                }
            }
            case 3 -> {
                badIcrc++;
                buf[icrcAt + r.nextInt(Icrc.LENGTH)] ^= (byte) r.nextInt(1, 256);
            }
            case 4 -> {
                lies++;
                BE.put16(seg, udp + 2, r.nextBoolean() ? RoceFrame.ROCE_V2_PORT + r.nextInt(-2, 3) : r.nextInt(0x10000));
            }
            case 5 -> {
                lies++;
                int l = BE.u16(seg, udp + 4);
                BE.put16(seg, udp + 4, r.nextBoolean() ? l + r.nextInt(-8, 9) : r.nextInt(0x10000));
            }
            case 6 -> {
                lies++;
                if (f.ipv6) {
                    BE.put16(seg, ip + 4, BE.u16(seg, ip + 4) + r.nextInt(-64, 65) & 0xffff);
                } else {
                    switch (r.nextInt(5)) {
                        case 0 -> BE.put8(seg, ip, 0x40 | r.nextInt(16)); // IHL: options, or less than a header
                        case 1 -> BE.put16(seg, ip + 6, r.nextInt(0x10000)); // fragment flags and offset
                        case 2 -> BE.put8(seg, ip + 9, r.nextInt(256)); // protocol
                        case 3 -> BE.put8(seg, ip, r.nextInt(256)); // version
                        default -> BE.put16(seg, ip + 2, BE.u16(seg, ip + 2) + r.nextInt(-64, 65) & 0xffff);
                    }
                    if (r.nextInt(3) != 0) {
                        ipv4Checksum(ip);
                    }
                }
            }
            case 7 -> {
                padded++;
                int extra = Math.min(MAX_FRAME - length, r.nextInt(1, 61));
                for (int i = 0; i < extra; i++) {
                    buf[length + i] = (byte) (r.nextBoolean() ? 0 : r.nextInt());
                }
                length += extra;
            }
            default -> {
                lies++;
                BE.put16(seg, 12, r.nextBoolean() ? r.nextInt(0x10000) : RoceFrame.ETH_P_8021Q);
            }
        }
    }

    /** The IP and UDP lengths (and the IPv4 checksum) made to agree with a frame cut at {@link #length}. */
    private void lengths(int ip, int udp) {
        if (f.ipv6) {
            BE.put16(seg, ip + 4, length - udp);
        } else {
            BE.put16(seg, ip + 2, length - ip);
            ipv4Checksum(ip);
        }
        BE.put16(seg, udp + 4, length - udp);
    }

    private void ipv4Checksum(int ip) {
        if (length >= ip + 20) {
            BE.put16(seg, ip + 10, 0);
            BE.put16(seg, ip + 10, InternetChecksum.of(seg, ip, 20));
        }
    }

    /** The ICRC of the frame as it now is (its last 4 bytes). */
    private void icrc() {
        Icrc.put(seg, length - Icrc.LENGTH, f.icrc(buf, 0, length - Icrc.LENGTH));
    }
}
