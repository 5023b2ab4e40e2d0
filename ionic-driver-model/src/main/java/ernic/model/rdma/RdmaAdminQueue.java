package ernic.model.rdma;

import ernic.model.IonicDriverModel;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static ernic.model.rdma.Fw.*;

/**
 * The RDMA admin queue as ionic_rdma drives it: 64-byte slots, a command spilling into the next slots, a
 * round-trip doorbell, then the admin CQE read by its color; it must name this AQ and the command's first slot.
 */
final class RdmaAdminQueue {
    static final int DEPTH_LOG2 = 9, CQ_DEPTH_LOG2 = 8;
    /** The admin CQ's slots go back to the device every so many commands, as the driver does. */
    private static final int CQ_CREDIT_BATCH = 64;
    /** ionic_rdma's IONIC_ADMIN_TIMEOUT: an admin command not completed by then fails the admin queue. */
    private static final long ADMIN_TIMEOUT_NANOS = 2_000_000_000L;

    private final IonicDriverModel drv;
    private final MemorySegment ram;
    private final MemorySegment cmd = Arena.ofAuto().allocate(256, 8);
    private final int aqId, acqId;
    private final long ring, cqRing, doorbell, cqDoorbell;
    private int prod, cqCons, cqCredit;
    private boolean cqColor = true;
    private long commands;

    /** An admin queue {@code aqId} on ring {@code ring}, completing on {@code acqId}; both already created. */
    RdmaAdminQueue(IonicDriverModel drv, int aqId, long ring, long doorbell, int acqId, long cqRing,
                   long cqDoorbell) {
        this.drv = drv;
        this.ram = drv.ram();
        this.aqId = aqId;
        this.ring = ring;
        this.doorbell = doorbell;
        this.acqId = acqId;
        this.cqRing = cqRing;
        this.cqDoorbell = cqDoorbell;
    }

    /** Admin commands posted so far. */
    long commands() {
        return commands;
    }

    /** The zeroed command buffer for the next admin command. */
    MemorySegment cmd() {
        cmd.fill((byte) 0);
        return cmd;
    }

    /**
     * Posts the command in {@link #cmd} ({@code len} bytes) as ionic_admin_post does: first slot {op, 0, len,
     * cmd[0..60)}, later slots the rest; rings the AQ doorbell and reads the admin CQE. Returns the admin status.
     */
    int post(int op, int len) throws IOException {
        int first = prod;
        AdminCqe c = submit(op, len, false);
        if (c.type() != CQE_TYPE_ADMIN || c.qid() != aqId || c.cmdIdx() != first) {
            throw new IOException("admin CQE for op " + op + " names type " + c.type() + " aq " + c.qid() + " slot "
                    + c.cmdIdx() + ", expected slot " + first);
        }
        return c.error() ? c.status() : RdmaVerbs.ASTS_OK;
    }

    /**
     * {@link #post} that returns the CQE as it is, whatever it names. With {@code staleFill} the slots are first
     * filled with 0x5a: the bytes after a command in its last slot are not cleared by the driver, and a device
     * must not read them as command bytes.
     */
    AdminCqe submit(int op, int len, boolean staleFill) throws IOException {
        write(op, len, staleFill);
        long deadline = 0;
        AdminCqe c;
        for (int tries = 0; (c = poll()) == null; tries++) {
            if (tries >= 200) {
                // A device on its own thread may take its time, as a MODIFY_QP waiting for the mesh does: the
                // driver gives up after IONIC_ADMIN_TIMEOUT (2 s). In process nothing moves unless driven.
                if (!drv.device().runsOnItsOwn()) {
                    throw new IOException("admin command " + op + ": no completion");
                }
                if (deadline == 0) {
                    deadline = System.nanoTime() + ADMIN_TIMEOUT_NANOS;
                } else if (System.nanoTime() - deadline > 0) {
                    throw new IOException("admin command " + op + ": no completion in 2 s");
                }
            }
            drv.sync();
        }
        return c;
    }

    /** Writes the command in {@link #cmd} into its slots (0x5a before, with {@code staleFill}) and rings the AQ. */
    void write(int op, int len, boolean staleFill) throws IOException {
        int slots = (len + AWQE_CMD + AQ_STRIDE - 1) / AQ_STRIDE;
        int mask = (1 << DEPTH_LOG2) - 1;
        int first = prod;
        for (int s = 0; s < slots; s++) {
            long slot = off(ring + (long) AQ_STRIDE * ((first + s) & mask));
            if (staleFill) {
                ram.asSlice(slot, AQ_STRIDE).fill((byte) 0x5a);
            }
            if (s == 0) {
                u8(ram, slot + AWQE_OP, op);
                u8(ram, slot + 1, 0);
                le16(ram, slot + AWQE_LEN, len);
                MemorySegment.copy(cmd, 0, ram, slot + AWQE_CMD, Math.min(AQ_STRIDE - AWQE_CMD, len));
            } else {
                long from = AQ_STRIDE - AWQE_CMD + (long) AQ_STRIDE * (s - 1);
                MemorySegment.copy(cmd, from, ram, slot, Math.min(AQ_STRIDE, len - from));
            }
        }
        prod = (first + slots) & mask;
        drv.doorbell(doorbell, doorbell(aqId, 0, prod));
        commands++;
    }

    /** The next admin CQE, consumed, or null when the device has not written it yet. */
    AdminCqe poll() {
        long cqe = off(cqRing + (long) CQE_SIZE * cqCons);
        if (!colorIs(cqe, cqColor)) {
            return null;
        }
        int qtf = be32(ram, cqe + CQE_QID_TYPE_FLAGS_BE);
        AdminCqe c = new AdminCqe(be16(ram, cqe + CQE_ADMIN_CMD_IDX_BE), be32(ram, cqe + CQE_STATUS_LENGTH_BE),
                (qtf & CQE_ERROR) != 0, qtf >>> CQE_QID_SHIFT, qtf >>> CQE_TYPE_SHIFT & 7);
        cqCons = (cqCons + 1) & ((1 << CQ_DEPTH_LOG2) - 1);
        if (cqCons == 0) {
            cqColor = !cqColor;
        }
        if (++cqCredit == CQ_CREDIT_BATCH) {
            cqCredit = 0;
            drv.doorbellPosted(cqDoorbell, doorbell(acqId, 0, cqCons));
        }
        return c;
    }

    /** The admin CQ's consumer index: the slot of the next CQE. */
    int cqConsumer() {
        return cqCons;
    }

    int id() {
        return aqId;
    }

    /** {@link #post}, refused with an {@link AdminException} unless the status is OK. */
    void ok(int op, int len, String what) throws IOException {
        int st = post(op, len);
        if (st != RdmaVerbs.ASTS_OK) {
            throw new AdminException(what, st);
        }
    }

    /** A DESTROY_* command: just the object's id. */
    void destroy(int op, int id, String what) throws IOException {
        le32(cmd(), 0, id);
        ok(op, LEN_DESTROY, what);
    }

    private boolean colorIs(long cqe, boolean color) {
        return ((be32(ram, cqe + CQE_QID_TYPE_FLAGS_BE) & CQE_COLOR) != 0) == color;
    }

    private long off(long iova) {
        return iova - drv.ramIova();
    }
}
