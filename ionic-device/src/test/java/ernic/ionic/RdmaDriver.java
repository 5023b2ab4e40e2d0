package ernic.ionic;

import ernic.ionic.base.RdmaIdentity;
import ernic.ionic.layout.Le;
import ernic.ionic.layout.Ring;
import ernic.ionic.regs.Bar0;
import ernic.ionic.regs.Opcode;
import ernic.ionic.layout.Be;
import ernic.ionic.rdma.AdminWqe;
import ernic.ionic.rdma.V1;

import java.lang.foreign.MemorySegment;
import java.util.function.Consumer;

/**
 * A small stand-in for ionic_rdma.ko on top of {@link Driver}: the bootstrap devcmds over the Ethernet
 * adminq (4 EQs, one admin CQ, one AQ), admin commands with their CQEs, kernel CQs and QPs.
 */
final class RdmaDriver {
    static final int EQS = 4, EQ_LOG2 = 10, ACQ_ID = 0, AQ_ID = 0, AQ_LOG2 = 4, ACQ_LOG2 = 4;
    final Driver drv;
    final FakeGuest guest;
    long[] eqRing = new long[EQS];
    int[] eqCons = new int[EQS];
    boolean[] eqColor = {true, true, true, true};
    long aqRing, acqRing;
    int aqProd, acqCons;
    boolean acqColor = true;

    RdmaDriver(Driver drv) {
        this.drv = drv;
        this.guest = drv.guest;
    }

    /** Ethernet bring-up, then RESET_LIF, CREATE_EQ x4 (interrupt i+1), CREATE_CQ, CREATE_ADMINQ; returns the statuses' OR. */
    int bootstrap() {
        drv.probeToAdminq();
        drv.probeAdminqCommands();
        int st = devcmd(s -> Le.put8(s, 0, Opcode.RDMA_RESET_LIF));
        for (int i = 0; i < EQS; i++) {
            eqRing[i] = guest.alloc(4L << EQ_LOG2);
            int eq = i;
            st |= devcmd(s -> new V1.QueueCmd().wrap(s, 0).opcode(Opcode.RDMA_CREATE_EQ).qid(eq).cid(eq + 1)
                    .depthStride(EQ_LOG2, 2).dmaAddr(eqRing[eq]));
            drv.write32(Bar0.INTR_CTRL + 32L * (i + 1) + Bar0.INTR_MASK_ASSERT, 1);
            drv.write32(Bar0.INTR_CTRL + 32L * (i + 1) + Bar0.INTR_MASK, 0);
        }
        acqRing = guest.alloc(32L << ACQ_LOG2);
        st |= devcmd(s -> new V1.QueueCmd().wrap(s, 0).opcode(Opcode.RDMA_CREATE_CQ).qid(ACQ_ID).cid(2)
                .depthStride(ACQ_LOG2, 5).dmaAddr(acqRing));
        aqRing = guest.alloc(64L << AQ_LOG2);
        st |= devcmd(s -> new V1.QueueCmd().wrap(s, 0).opcode(Opcode.RDMA_CREATE_ADMINQ).qid(AQ_ID).cid(ACQ_ID)
                .depthStride(AQ_LOG2, 6).dmaAddr(aqRing));
        return st;
    }

    int devcmd(Consumer<MemorySegment> fill) {
        return Driver.status(drv.adminq(fill));
    }

    /** Result of one admin command. */
    record Admin(int cmdIdx, int status, boolean error, int qid, int type) {}

    /**
     * Posts an admin command of {@code len} bytes ({@code fill} writes cmd offsets 0..len-1 into a
     * zeroed buffer), rings the AQ doorbell, and reads its CQE.
     */
    Admin admin(int op, int len, Consumer<MemorySegment> fill) {
        MemorySegment cmd = drv.arena.allocate(256);
        fill.accept(cmd);
        int slots = (len + 4 + 63) / 64;
        int first = aqProd;
        for (int s = 0; s < slots; s++) {
            MemorySegment slot = guest.at(aqRing + 64L * ((first + s) & ((1 << AQ_LOG2) - 1)), 64);
            slot.fill((byte) 0x5a); // stale bytes the device must not read as command bytes
            if (s == 0) {
                Le.put8(slot, 0, op);
                Le.put8(slot, 1, 0);
                Le.put16(slot, 2, len);
                MemorySegment.copy(cmd, 0, slot, 4, Math.min(60, len));
            } else {
                long from = 60 + 64L * (s - 1);
                MemorySegment.copy(cmd, from, slot, 0, Math.min(64, len - from));
            }
        }
        aqProd = (first + slots) & ((1 << AQ_LOG2) - 1);
        drv.doorbell(0, RdmaIdentity.AQ_QTYPE, Ring.Doorbell.encode(AQ_ID, 0, aqProd));
        MemorySegment c = guest.at(acqRing + 32L * acqCons, 32);
        V1.Cqe cqe = new V1.Cqe().wrap(c, 0);
        if (cqe.color() != acqColor) {
            throw new AssertionError("no admin CQE at " + acqCons);
        }
        acqCons = (acqCons + 1) & ((1 << ACQ_LOG2) - 1);
        if (acqCons == 0) {
            acqColor = !acqColor;
        }
        return new Admin(cqe.cmdIdx(), cqe.statusLength(), cqe.error(), cqe.qid(), cqe.type());
    }

    /** Kernel CQ: map_count 1, direct address. */
    Admin createCq(int id, int eq, long ring, int depthLog2) {
        return admin(V1.ADMIN_CREATE_CQ, AdminWqe.CreateCq.LEN, c -> new AdminWqe.CreateCq().wrap(c, 0)
                .eqId(eq).depthStride(depthLog2, 5).idVer(id).tblIndex(-1).mapCount(1).dmaAddr(ring));
    }

    /** Kernel QP with direct rings; type 0 RC, 3 UD. */
    Admin createQp(int id, int type, int flags, int cq, long sq, int sqLog2, long rq, int rqLog2) {
        return admin(V1.ADMIN_CREATE_QP, AdminWqe.CreateQp.LEN, c -> new AdminWqe.CreateQp().wrap(c, 0)
                .privFlags(flags)
                .ring(AdminWqe.CreateQp.Ring.SQ, cq, sqLog2, 6, 1, sq)
                .ring(AdminWqe.CreateQp.Ring.RQ, cq, rqLog2, 6, 1, rq)
                .idVer(id).typeState(type));
    }

    Admin modifyQp(int id, int mask, int to, int from, int qkeyOrDest) {
        return admin(V1.ADMIN_MODIFY_QP, AdminWqe.ModifyQp.LEN, c -> new AdminWqe.ModifyQp().wrap(c, 0)
                .attrMask(mask).qkeyDestQpn(qkeyOrDest).pmtu(10).states(to, from).idVer(id));
    }

    /** MODIFY_QP with an address vector: the header template (at {@code hdr}, {@code hdrLen} bytes) and a dest QPN. */
    Admin modifyQpAv(int id, int to, int from, int destQpn, long hdr, int hdrLen) {
        return admin(V1.ADMIN_MODIFY_QP, AdminWqe.ModifyQp.LEN, c -> new AdminWqe.ModifyQp().wrap(c, 0)
                .attrMask(V1.IB_QP_STATE | V1.IB_QP_AV | V1.IB_QP_DEST_QPN).qkeyDestQpn(destQpn).pmtu(10)
                .states(to, from).idVer(id).ahIdLen(0, hdrLen).dmaAddr(hdr));
    }

    Admin createAh(int id, long hdr, int hdrLen) {
        return admin(V1.ADMIN_CREATE_AH, AdminWqe.CreateAh.LEN, c -> new AdminWqe.CreateAh().wrap(c, 0)
                .dmaAddr(hdr).length(hdrLen).idVer(id));
    }

    /** An Ethernet/IPv4/UDP header template (42 bytes) from {@code src} to {@code dst} at {@code at}. */
    long ipv4Header(long at, int src, int dst) {
        MemorySegment h = guest.at(at, 42);
        h.fill((byte) 0);
        Be.put16(h, 12, 0x0800);
        Le.put8(h, 14, 0x45);
        Le.put8(h, 22, 64);
        Le.put8(h, 23, 17);
        Be.put32(h, 26, src);
        Be.put32(h, 30, dst);
        Be.put16(h, 36, 4791);
        return at;
    }

    Admin createMr(int mrid, long va, long length, int flags, int mapCount, long dma, int pageLog2) {
        return admin(V1.ADMIN_CREATE_MR, AdminWqe.CreateMr.LEN, c -> new AdminWqe.CreateMr().wrap(c, 0)
                .va(va).length(length).mrid(mrid).tblIndex(-1).mapCount(mapCount).dmaAddr(dma).flags(flags)
                .pageSizeLog2(pageLog2));
    }

    Admin destroy(int op, int id) {
        return admin(op, AdminWqe.Destroy.LEN, c -> new AdminWqe.Destroy().wrap(c, 0).id(id));
    }

    /** The next EQE of EQ {@code eq}, or -1 when none has the expected color. */
    int nextEqe(int eq) {
        int evt = Be.u32(guest.at(eqRing[eq] + 4L * eqCons[eq], 4), 0);
        if (((evt & 1) != 0) != eqColor[eq]) {
            return -1;
        }
        eqCons[eq] = (eqCons[eq] + 1) & ((1 << EQ_LOG2) - 1);
        if (eqCons[eq] == 0) {
            eqColor[eq] = !eqColor[eq];
        }
        return evt;
    }

    void cqDoorbell(int cq, int ring, int index) {
        drv.doorbell(0, RdmaIdentity.CQ_QTYPE, Ring.Doorbell.encode(cq, ring, index));
    }
}
