package ernic.model.rdma;

import ernic.model.IonicDriverModel;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.function.Consumer;

import static ernic.model.rdma.Fw.*;

/**
 * Below the verbs: what a test of a device sends that a verbs user cannot ask for. Admin commands with the
 * caller's ids and lengths, read back as the {@link AdminCqe} the device wrote; EQEs one by one; CQ, SQ and RQ
 * doorbells with any value. Same admin queue, same EQs as the {@link RdmaVerbs} it comes from (so verbs objects
 * and raw ones can be mixed as long as their ids do not meet). Offsets are ionic_fw.h's ({@link Fw}).
 */
public final class RdmaRaw {
    /** rsq_depth for max_dest_rd_atomic 16: ionic's order_base_2(16 + 1). */
    public static final int RSQ_DEPTH_16 = 5;

    /** The admin CQ's and the admin queue's ids, as {@link RdmaVerbs#open} created them. */
    public final int adminCqId, adminQueueId;

    private final RdmaVerbs verbs;
    private final IonicDriverModel drv;
    private final RdmaAdminQueue admin;
    private final Events events;
    private final long sqDb, rqDb, cqDb;

    RdmaRaw(RdmaVerbs verbs, RdmaAdminQueue admin, Events events, int acqId, long sqDb, long rqDb, long cqDb) {
        this.verbs = verbs;
        this.drv = verbs.driver();
        this.admin = admin;
        this.events = events;
        this.adminCqId = acqId;
        this.adminQueueId = admin.id();
        this.sqDb = sqDb;
        this.rqDb = rqDb;
        this.cqDb = cqDb;
    }

    /**
     * Posts admin command {@code op} of {@code len} bytes; {@code fill} writes its bytes (offsets within cmd) into
     * a zeroed buffer of 256. The slots hold 0x5a before, so bytes past {@code len} are stale, as the driver
     * leaves them.
     */
    public AdminCqe admin(int op, int len, Consumer<MemorySegment> fill) throws IOException {
        fill.accept(admin.cmd());
        return admin.submit(op, len, true);
    }

    /** CREATE_CQ of a kernel CQ: map_count 1, the ring's direct address, stride 32. */
    public AdminCqe createCq(int id, int eqId, long ring, int depthLog2) throws IOException {
        return createCq(id, eqId, ring, depthLog2, 0);
    }

    /** CREATE_CQ rung on doorbell page {@code dbid} (a user context's; 0 is the kernel's). */
    public AdminCqe createCq(int id, int eqId, long ring, int depthLog2, int dbid) throws IOException {
        return admin(OP_CREATE_CQ, LEN_CREATE_CQ, c -> AdminCommands.createCq(c, id, eqId, depthLog2, ring, dbid));
    }

    /** CREATE_QP with direct rings of 64-byte WQEs, both on {@code cq}; {@code type} RC 0, UD 3. */
    public AdminCqe createQp(int id, int type, int privFlags, int cq, long sq, int sqDepthLog2, long rq,
                             int rqDepthLog2) throws IOException {
        return createQp(id, type, privFlags, cq, sq, sqDepthLog2, rq, rqDepthLog2, 0);
    }

    /** CREATE_QP whose SQ and RQ are rung on doorbell page {@code dbid} (a user context's; 0 is the kernel's). */
    public AdminCqe createQp(int id, int type, int privFlags, int cq, long sq, int sqDepthLog2, long rq,
                             int rqDepthLog2, int dbid) throws IOException {
        return createQp(id, type, privFlags, cq, cq, sq, sqDepthLog2, rq, rqDepthLog2, dbid);
    }

    /** CREATE_QP whose SQ completes on {@code sqCq} and RQ on {@code rqCq}, rung on doorbell page {@code dbid}. */
    public AdminCqe createQp(int id, int type, int privFlags, int sqCq, int rqCq, long sq, int sqDepthLog2, long rq,
                             int rqDepthLog2, int dbid) throws IOException {
        return createQp(id, type, privFlags, sqCq, rqCq, sq, sqDepthLog2, rq, rqDepthLog2, 6, dbid);
    }

    /** The same with WQEs of 2^{@code strideLog2} bytes on both rings. */
    public AdminCqe createQp(int id, int type, int privFlags, int sqCq, int rqCq, long sq, int sqDepthLog2, long rq,
                             int rqDepthLog2, int strideLog2, int dbid) throws IOException {
        return admin(OP_CREATE_QP, LEN_CREATE_QP, c -> {
            le16(c, CQP_DBID_FLAGS, dbid);
            be32(c, CQP_PRIV_FLAGS_BE, privFlags);
            AdminCommands.createQpRing(c, 0, sqCq, sqDepthLog2, strideLog2, sq);
            AdminCommands.createQpRing(c, AdminCommands.QP_RQ, rqCq, rqDepthLog2, strideLog2, rq);
            le32(c, CQP_ID_VER, id);
            u8(c, CQP_TYPE_STATE, type);
        });
    }

    /** MODIFY_QP to {@code to} from {@code from} (type_state), pmtu 2^10, with qkey_dest_qpn. */
    public AdminCqe modifyQp(int id, int attrMask, int to, int from, int qkeyOrDestQpn) throws IOException {
        return modifyQp(id, attrMask, to, from, qkeyOrDestQpn, 0);
    }

    /** The same with the QP's remote access flags (IB_QP_ACCESS_FLAGS: remote write 1, read 2, atomic 4). */
    public AdminCqe modifyQp(int id, int attrMask, int to, int from, int qkeyOrDestQpn, int access) throws IOException {
        return admin(OP_MODIFY_QP, LEN_MODIFY_QP, c -> {
            be32(c, MQP_ATTR_MASK_BE, attrMask);
            be16(c, MQP_ACCESS_FLAGS_BE, access);
            le32(c, MQP_QKEY_DEST_QPN, qkeyOrDestQpn);
            u8(c, MQP_PMTU, 10);
            u8(c, MQP_TYPE_STATE, to | from << 4);
            le32(c, MQP_ID_VER, id);
        });
    }

    /**
     * MODIFY_QP with an address vector: the header template at {@code hdr} of {@code hdrLen} bytes, a dest QPN. To RTR
     * it also gives max_dest_rd_atomic 16 as rdma-core's tools do (ionic's rsq_depth order_base_2(16 + 1)): a
     * responder without it takes no READ or atomic.
     */
    public AdminCqe modifyQpAv(int id, int to, int from, int destQpn, long hdr, int hdrLen) throws IOException {
        return modifyQpAv(id, to, from, destQpn, hdr, hdrLen, RSQ_DEPTH_16);
    }

    /** {@link #modifyQpAv} with the rsq_depth it gives to RTR: 0 for a guest asking max_dest_rd_atomic 0. */
    public AdminCqe modifyQpAv(int id, int to, int from, int destQpn, long hdr, int hdrLen, int rsqDepth)
            throws IOException {
        return admin(OP_MODIFY_QP, LEN_MODIFY_QP, c -> modifyQpAv(c, id, to, from, destQpn, hdr, hdrLen, rsqDepth));
    }

    private static void modifyQpAv(MemorySegment c, int id, int to, int from, int destQpn, long hdr, int hdrLen,
                                   int rsqDepth) {
        boolean rtr = to == RdmaVerbs.RTR;
        be32(c, MQP_ATTR_MASK_BE, IB_QP_STATE | IB_QP_AV | IB_QP_DEST_QPN | (rtr ? IB_QP_MAX_DEST_RD_ATOMIC : 0));
        u8(c, MQP_RSQ_DEPTH, rtr ? rsqDepth : 0);
        le32(c, MQP_QKEY_DEST_QPN, destQpn);
        u8(c, MQP_PMTU, 10);
        u8(c, MQP_TYPE_STATE, to | from << 4);
        le32(c, MQP_ID_VER, id);
        le32(c, MQP_AH_ID_LEN, hdrLen << 24);
        le64(c, MQP_DMA_ADDR, hdr);
    }

    /**
     * {@link #modifyQpAv} posted without waiting for its completion, which {@link #adminCompletion} reads when the
     * device has written it (a device may hold a MODIFY_QP to RTR while the mesh learns who owns its destination).
     */
    public void postModifyQpAv(int id, int to, int from, int destQpn, long hdr, int hdrLen) throws IOException {
        modifyQpAv(admin.cmd(), id, to, from, destQpn, hdr, hdrLen, RSQ_DEPTH_16);
        admin.write(OP_MODIFY_QP, LEN_MODIFY_QP, true);
    }

    /** The next admin completion, or null when the device has not written one (see {@link #postModifyQpAv}). */
    public AdminCqe adminCompletion() throws IOException {
        drv.sync();
        return admin.poll();
    }

    /** QUERY_QP into {@code sq} and {@code rq} (guest addresses); the state is the high nibble of rq's state_pmtu. */
    public AdminCqe queryQp(int id, long sq, long rq) throws IOException {
        return admin(OP_QUERY_QP, LEN_QUERY_QP, c -> {
            le64(c, QQP_SQ_DMA, sq);
            le64(c, QQP_RQ_DMA, rq);
            le32(c, QQP_ID_VER, id);
        });
    }

    public AdminCqe createAh(int id, long hdr, int hdrLen) throws IOException {
        return admin(OP_CREATE_AH, LEN_CREATE_AH, c -> {
            le64(c, CAH_DMA_ADDR, hdr);
            le32(c, CAH_LENGTH, hdrLen);
            le32(c, CAH_ID_VER, id);
        });
    }

    public AdminCqe createMr(int mrid, long va, long length, int flags, int mapCount, long dma, int pageLog2)
            throws IOException {
        return createMr(mrid, va, length, flags, mapCount, dma, pageLog2, 0);
    }

    /** CREATE_MR in protection domain {@code pd} (0: the one createQp's QPs are in). */
    public AdminCqe createMr(int mrid, long va, long length, int flags, int mapCount, long dma, int pageLog2, int pd)
            throws IOException {
        return admin(OP_CREATE_MR, LEN_CREATE_MR,
                c -> AdminCommands.createMr(c, pd, mrid, va, length, flags, mapCount, dma, pageLog2));
    }

    /** A STATS_* or QP_STATS_* command: {@code length} bytes at {@code dma}, object {@code id}. */
    public AdminCqe stats(int op, long dma, int length, int id) throws IOException {
        return admin(op, LEN_STATS, c -> {
            le64(c, STATS_DMA_ADDR, dma);
            le32(c, STATS_LENGTH, length);
            le32(c, STATS_ID_VER, id);
        });
    }

    /** A DESTROY_* command (op 6, 8, 11, 16): just the id. */
    public AdminCqe destroy(int op, int id) throws IOException {
        return admin(op, LEN_DESTROY, c -> le32(c, 0, id));
    }

    /** The admin CQ's consumer index (its slot for the next CQE). */
    public int adminCqConsumer() {
        return admin.cqConsumer();
    }

    /**
     * The next EQE of EQ {@code eq} (index among the EQs {@link RdmaVerbs#open} created, on MSI-X eq + 1) as its
     * BE32 value, or -1 when the slot does not have the expected color.
     */
    public int nextEqe(int eq) {
        return events.next(eq);
    }

    /** The MSI-X vector of EQ {@code eq}. */
    public int eqVector(int eq) {
        return eq + 1;
    }

    /*
     * The data path's doorbells are posted stores, as a guest's are: a later sync() finds them handled (in
     * process, they are handled when the call returns).
     */

    /** A CQ doorbell: ring 0 returns slots up to {@code index}, ring 1 arms, ring 2 arms for solicited. */
    public void ringCq(int cq, int ring, int index) {
        drv.doorbellPosted(cqDb, doorbell(cq, ring, index));
    }

    /** An SQ doorbell of {@code qp} with producer {@code index}, on doorbell page {@code pid} of the LIF. */
    public void ringSq(int pid, int qp, int index) {
        drv.doorbellPosted(sqDb + (long) pid * RdmaVerbs.PAGE, doorbell(qp, 0, index));
    }

    /** An RQ doorbell of {@code qp} with producer {@code index}, on doorbell page {@code pid} of the LIF. */
    public void ringRq(int pid, int qp, int index) {
        drv.doorbellPosted(rqDb + (long) pid * RdmaVerbs.PAGE, doorbell(qp, 0, index));
    }

    /** A reader of the CQ ring at guest address {@code ring} of 2^depthLog2 CQEs, by color. */
    public RawCqe.Ring cqRing(long ring, int depthLog2) {
        return new RawCqe.Ring(drv.ram(), ring - drv.ramIova(), depthLog2);
    }

    /** The verbs this came from. */
    public RdmaVerbs verbs() {
        return verbs;
    }
}
