package ernic.it.fuzz;

import ernic.ionic.IonicDevice;
import ernic.ionic.fault.FaultPlan;
import ernic.ionic.profile.ProfileLoader;
import ernic.model.DeviceBinding;
import ernic.model.IonicDriverModel;
import ernic.model.rdma.AdminCqe;
import ernic.model.rdma.RawCqe;
import ernic.model.rdma.RawWqe;
import ernic.model.rdma.RdmaRaw;
import ernic.model.rdma.RdmaVerbs;
import ernic.vfiouser.server.InProcessContext;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;

import static ernic.model.rdma.Fw.*;

/**
 * The ionic target: one {@link IonicDevice} driven through the driver model's in-process binding
 * ({@link FuzzGuest}). An epoch is one guest: bring-up and the RDMA bootstrap by the model (valid), a CQ, two
 * connected RC QPs and two MRs; then random programming: WQEs with random opcodes, SGE counts, keys, addresses and
 * lengths, rung by doorbells; admin-queue commands, random or well formed with random fields; device commands;
 * register, doorbell and config-space writes anywhere; frames from the host side; timer ticks; resets. When the
 * guest has broken its own admin queue (no completion: a hostile guest may do that), a new epoch starts with a new
 * guest. An exception thrown by the device (a frame of {@code ernic.ionic} or of the vfio-user server's DMA
 * space on top) is a crash.
 */
final class IonicFuzz implements FuzzTarget {
    static final long RAM = 8L << 20;
    static final int CQ = 8, CQ_LOG2 = 8, Q_LOG2 = 5, DEPTH = 1 << Q_LOG2, STRIDE_LOG2 = 7, STRIDE = 1 << STRIDE_LOG2;
    static final int[] QP = {2, 3};
    static final int KEY1 = 1 << 8 | 0x11, KEY2 = 2 << 8 | 0x22;
    static final long VA1 = 0x7f00_0000_0000L, VA2 = 0x5000_0000L;
    private static final int[] KNOWN_DEVCMDS = {0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 16, 17, 18, 20, 21, 22, 23, 24,
            25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 40, 41, 42, 50, 51, 52, 53, 70, 71, 72};

    private final IonicDevice dev = new IonicDevice(ProfileLoader.load(ProfileLoader.DEFAULT), FaultPlan.none());
    private final Recorder recorder = new Recorder();
    private final RawWqe wqe = new RawWqe();
    private final byte[] copy = new byte[256];
    private FuzzGuest guest;
    private IonicDriverModel drv;
    private RdmaRaw raw;
    private RawCqe.Ring cq;
    private final long[] sq = new long[2], rq = new long[2];
    private final int[] sqProd = new int[2], rqProd = new int[2];
    private long mrPage, mrTable;
    private long now;
    private long epochs, guestBroke, wqes, cqes, errorCqes, adminCmds, adminErrors, devcmds;

    @Override
    public String name() {
        return "ionic";
    }

    @Override
    public void start() {
    }

    /** A new guest: bring-up, the RDMA bootstrap, a CQ, two connected RC QPs and two MRs, all valid. */
    private void epoch() throws Exception {
        epochs++;
        guest = new FuzzGuest(dev, RAM);
        drv = guest.drv;
        raw = RdmaVerbs.open(drv).raw();
        long cqRing = drv.alloc(32L << CQ_LOG2);
        ok(raw.createCq(CQ, 2, cqRing, CQ_LOG2), "CREATE_CQ");
        cq = raw.cqRing(cqRing, CQ_LOG2);
        mrPage = drv.alloc(4096);
        ok(raw.createMr(KEY1, VA1, 4096, RdmaVerbs.ACCESS_LOCAL_WRITE | RdmaVerbs.ACCESS_REMOTE_WRITE
                | RdmaVerbs.ACCESS_REMOTE_READ | RdmaVerbs.ACCESS_REMOTE_ATOMIC, 1, mrPage, 12), "CREATE_MR 1");
        mrTable = drv.alloc(4096);
        for (int i = 0; i < 4; i++) {
            le64(drv.mem(mrTable, 32), 8L * i, drv.alloc(4096));
        }
        ok(raw.createMr(KEY2, VA2, 4 * 4096 - 0x100, RdmaVerbs.ACCESS_LOCAL_WRITE | RdmaVerbs.ACCESS_REMOTE_READ, 4,
                mrTable, 12), "CREATE_MR 2");
        for (int i = 0; i < 2; i++) {
            sq[i] = drv.alloc((long) STRIDE * DEPTH);
            rq[i] = drv.alloc((long) STRIDE * DEPTH);
            sqProd[i] = 0;
            rqProd[i] = 0;
            ok(raw.createQp(QP[i], RdmaVerbs.RC, 0, CQ, CQ, sq[i], Q_LOG2, rq[i], Q_LOG2, STRIDE_LOG2, 0),
                    "CREATE_QP");
        }
        for (int i = 0; i < 2; i++) {
            ok(raw.modifyQp(QP[i], IB_QP_STATE | IB_QP_ACCESS_FLAGS, RdmaVerbs.INIT, 0, 0,
                    RdmaVerbs.QP_REMOTE_WRITE | RdmaVerbs.QP_REMOTE_READ | RdmaVerbs.QP_REMOTE_ATOMIC), "INIT");
            ok(raw.modifyQp(QP[i], IB_QP_STATE | IB_QP_DEST_QPN, RdmaVerbs.RTR, 0, QP[1 - i]), "RTR");
            ok(raw.modifyQp(QP[i], IB_QP_STATE, RdmaVerbs.RTS, 0, 0), "RTS");
        }
    }

    private static void ok(AdminCqe c, String what) throws FuzzFailure {
        if (c.status() != 0 || c.error()) {
            throw new FuzzFailure("a valid " + what + " failed on a fresh guest: status " + c.status());
        }
    }

    private void endEpoch() {
        if (guest != null) {
            guest.close();
            guest = null;
        }
    }

    @Override
    public void step(long index, SplittableRandom r) throws Exception {
        if (guest == null) {
            try {
                epoch();
            } catch (FuzzFailure f) {
                throw f;
            } catch (Exception | Error e) {
                throw new FuzzFailure("a fresh guest's valid bring-up failed: " + e, e);
            }
        }
        try {
            act(index, r);
        } catch (InProcessContext.Refused e) {
            // the guest's own access outside a region: refused before the device, as the server refuses it
        } catch (Exception | Error e) {
            if (thrownByDevice(e)) {
                throw new FuzzFailure("the device threw: " + e, e);
            }
            // The guest broke its own admin queue or rings (a hostile guest may): a new guest next time.
            guestBroke++;
            endEpoch();
        }
    }

    /** True when the exception (or a cause) was thrown inside the device, not by the model or the fuzzer. */
    static boolean thrownByDevice(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof IOException) {
                continue;
            }
            for (StackTraceElement f : t.getStackTrace()) {
                String c = f.getClassName();
                if (c.startsWith("ernic.ionic.") || c.startsWith("ernic.vfiouser.server.")
                        || c.startsWith("ernic.vfiouser.pci.")) {
                    return true;
                }
                if (c.startsWith("ernic.model.") || c.startsWith("ernic.it.")) {
                    break;
                }
            }
        }
        return false;
    }

    private void record(long index, String what, MemorySegment bytes) {
        int n = (int) Math.min(bytes.byteSize(), copy.length);
        MemorySegment.copy(bytes, ValueLayout.JAVA_BYTE, 0, copy, 0, n);
        recorder.add(index, what, copy, n);
    }

    private void act(long index, SplittableRandom r) throws Exception {
        int k = r.nextInt(100);
        if (k < 35) {
            sendWqe(index, r);
        } else if (k < 42) {
            recvWqe(index, r);
        } else if (k < 62) {
            admin(index, r);
        } else if (k < 70) {
            devcmd(index, r);
        } else if (k < 80) {
            doorbell(index, r);
        } else if (k < 86) {
            register(index, r);
        } else if (k < 89) {
            config(index, r);
        } else if (k < 94) {
            byte[] frame = new byte[r.nextInt(0, 1600)];
            r.nextBytes(frame);
            recorder.add(index, "frame from the host, " + frame.length + " bytes", frame, frame.length);
            dev.receive(MemorySegment.ofArray(frame));
        } else if (k < 96) {
            reconnect(index);
        } else if (k < 99 || r.nextInt(5) != 0) {
            long by = r.nextInt(3) == 0 ? r.nextLong(1, 40_000_000_000L) : 100_000_000L;
            now += by;
            recorder.add(index, "ticks: +" + by + " ns", new byte[0], 0);
            dev.rdma().tick(now);
            dev.heartbeatTick();
            dev.statisticsTick();
        } else if (r.nextBoolean()) {
            recorder.add(index, "function reset", new byte[0], 0);
            drv.device().reset();
            endEpoch();
        } else {
            recorder.add(index, "guest goes away (detach)", new byte[0], 0);
            endEpoch();
        }
        if (guest != null) {
            drainCq();
        }
    }

    /** Both QPs back through RESET to RTS (their rings from slot 0): a QP an error completion moved to ERROR serves again. */
    private void reconnect(long index) throws IOException {
        recorder.add(index, "QPs through RESET to RTS", new byte[0], 0);
        for (int i = 0; i < 2; i++) {
            raw.modifyQp(QP[i], IB_QP_STATE, RdmaVerbs.RESET, 0, 0);
            sqProd[i] = 0;
            rqProd[i] = 0;
        }
        for (int i = 0; i < 2; i++) {
            raw.modifyQp(QP[i], IB_QP_STATE | IB_QP_ACCESS_FLAGS, RdmaVerbs.INIT, 0, 0,
                    RdmaVerbs.QP_REMOTE_WRITE | RdmaVerbs.QP_REMOTE_READ | RdmaVerbs.QP_REMOTE_ATOMIC);
            raw.modifyQp(QP[i], IB_QP_STATE | IB_QP_DEST_QPN, RdmaVerbs.RTR, 0, QP[1 - i]);
            raw.modifyQp(QP[i], IB_QP_STATE, RdmaVerbs.RTS, 0, 0);
        }
    }

    private int key(SplittableRandom r) {
        return switch (r.nextInt(8)) {
            case 0 -> 0;
            case 1 -> r.nextInt();
            case 2 -> KEY1 ^ 1 << r.nextInt(32);
            case 3, 4 -> KEY2;
            default -> KEY1;
        };
    }

    private long va(SplittableRandom r, long len) {
        return switch (r.nextInt(8)) {
            case 0 -> r.nextLong();
            case 1 -> -1L - r.nextInt(64);
            case 2 -> VA1 + 4096 - len + r.nextInt(-8, 64);
            case 3 -> VA2 + r.nextInt(0, 5 * 4096);
            case 4 -> mrPage + r.nextInt(4096); // a guest physical address, for key 0
            default -> VA1 + r.nextInt(0, 4096);
        };
    }

    private int length(SplittableRandom r) {
        return switch (r.nextInt(6)) {
            case 0 -> r.nextInt();
            case 1 -> 0;
            case 2 -> r.nextInt(0, 20000);
            default -> 1 << r.nextInt(13);
        };
    }

    private void sendWqe(long index, SplittableRandom r) {
        if (r.nextBoolean()) {
            plausibleWqe(index, r);
            return;
        }
        int q = r.nextInt(2);
        MemorySegment slot = drv.mem(sq[q] + (long) (sqProd[q] % DEPTH) * STRIDE, STRIDE);
        int op = r.nextInt(5) == 0 ? r.nextInt(256) : r.nextInt(0, 16);
        int nsge = r.nextInt(8) == 0 ? r.nextInt(256) : r.nextInt(0, 6);
        int flags = r.nextInt(4) == 0 ? r.nextInt(0x10000) : r.nextInt(16);
        wqe.wrap(slot).wqeId(index).op(op).numSgeKey(nsge).flags(flags).immDataKey(r.nextInt(3) == 0 ? key(r) : r.nextInt());
        int len = length(r);
        wqe.rdma(va(r, len), key(r)).length(len);
        if ((flags & WQE_FLAG_INL) != 0) {
            byte[] inline = new byte[STRIDE - WQE_PLD];
            r.nextBytes(inline);
            MemorySegment.copy(inline, 0, slot, ValueLayout.JAVA_BYTE, WQE_PLD, inline.length);
        } else {
            int room = (STRIDE - WQE_PLD) / SGE_SIZE;
            for (int i = 0; i < Math.min(room, Math.max(nsge, r.nextInt(0, room + 1))); i++) {
                int l = length(r);
                wqe.sge(WQE_PLD, i, va(r, l), l, key(r));
            }
        }
        if (op >= 6 && op <= 8 && r.nextBoolean()) { // the atomics: an aligned target
            wqe.rdma(VA1 + (r.nextInt(0, 512) * 8L), KEY1);
        }
        sqProd[q]++;
        int db = r.nextInt(16) == 0 ? r.nextInt(0x10000) : sqProd[q] % DEPTH;
        record(index, "send WQE on QP " + QP[q] + ": op " + op + ", " + nsge + " SGEs, flags 0x"
                + Integer.toHexString(flags) + ", doorbell " + db, slot);
        wqes++;
        raw.ringSq(r.nextInt(20) == 0 ? r.nextInt(0, 4) : 0, QP[q], db);
    }

    /** A WQE libionic could write: a known opcode, SGEs inside MR 1, the rkey of MR 1 or 2; one field now and then wrong. */
    private void plausibleWqe(long index, SplittableRandom r) {
        int q = r.nextInt(2);
        MemorySegment slot = drv.mem(sq[q] + (long) (sqProd[q] % DEPTH) * STRIDE, STRIDE);
        int op = r.nextInt(0, 9);
        int len = r.nextInt(0, 2049);
        int nsge = r.nextInt(0, 3);
        wqe.wrap(slot).wqeId(index).op(op).numSgeKey(nsge).flags(WQE_FLAG_SIG | (r.nextInt(8) == 0 ? WQE_FLAG_FENCE : 0));
        boolean toMr2 = op == RdmaVerbs.READ && r.nextBoolean();
        wqe.rdma(toMr2 ? VA2 + r.nextInt(0, 4096) : VA1 + (r.nextInt(0, 2048) & ~7), toMr2 ? KEY2 : KEY1).length(len);
        for (int i = 0; i < nsge; i++) {
            int l = len / Math.max(1, nsge);
            wqe.sge(WQE_PLD, i, VA1 + r.nextInt(0, 4096 - l + 1), l, KEY1);
        }
        if (r.nextInt(6) == 0) { // one field wrong
            slot.set(ValueLayout.JAVA_BYTE, r.nextInt(8, STRIDE), (byte) r.nextInt());
        }
        sqProd[q]++;
        record(index, "plausible send WQE on QP " + QP[q] + ": op " + op + ", " + nsge + " SGEs, length " + len, slot);
        wqes++;
        raw.ringSq(0, QP[q], sqProd[q] % DEPTH);
    }

    private void recvWqe(long index, SplittableRandom r) {
        int q = r.nextInt(2);
        MemorySegment slot = drv.mem(rq[q] + (long) (rqProd[q] % DEPTH) * STRIDE, STRIDE);
        int nsge = r.nextInt(8) == 0 ? r.nextInt(256) : r.nextInt(0, 6);
        wqe.wrap(slot).wqeId(index).numSgeKey(nsge);
        for (int i = 0; i < Math.min(nsge, (STRIDE - WQE_PLD) / SGE_SIZE); i++) {
            int l = length(r);
            wqe.sge(WQE_PLD, i, va(r, l), l, key(r));
        }
        rqProd[q]++;
        int db = r.nextInt(16) == 0 ? r.nextInt(0x10000) : rqProd[q] % DEPTH;
        record(index, "receive WQE on QP " + QP[q] + ": " + nsge + " SGEs, doorbell " + db, slot);
        wqes++;
        raw.ringRq(0, QP[q], db);
    }

    private void drainCq() {
        RawCqe c;
        int n = 0;
        while ((c = cq.poll()) != null && n++ < 1 << CQ_LOG2) {
            cqes++;
            if (c.error()) {
                errorCqes++;
            }
        }
        if (n > 0) {
            raw.ringCq(CQ, 0, cq.consumer());
        }
    }

    /** An admin command: random bytes with plausible ids, depths and addresses here and there, or a well-formed one. */
    private void admin(long index, SplittableRandom r) throws IOException {
        adminCmds++;
        AdminCqe c;
        if (r.nextInt(3) == 0) {
            c = wellFormed(index, r);
        } else {
            int op = r.nextInt(5) == 0 ? r.nextInt(256) : r.nextInt(0, 19);
            int len = r.nextInt(4) == 0 ? r.nextInt(0, 256) : new int[] {LEN_CREATE_CQ, LEN_CREATE_QP, LEN_CREATE_MR,
                    LEN_MODIFY_QP, LEN_QUERY_QP, LEN_CREATE_AH, LEN_DESTROY, LEN_STATS}[r.nextInt(8)];
            byte[] body = new byte[60];
            r.nextBytes(body);
            ByteBuffer b = ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN);
            for (int at = 0; at + 4 <= 60; at += 4) {
                int p = r.nextInt(10);
                if (p < 3) {
                    b.putInt(at, r.nextInt(0, 16));
                } else if (p < 5 && at % 8 == 0 && at + 8 <= 60) {
                    b.putLong(at, FuzzGuest.RAM_IOVA + (r.nextLong(RAM) & ~63L));
                }
            }
            recorder.add(index, "admin op " + op + " len " + len, body, body.length);
            c = raw.admin(op, len, s -> MemorySegment.copy(body, 0, s, ValueLayout.JAVA_BYTE, 0, body.length));
        }
        if (c.status() != 0) {
            adminErrors++;
        }
    }

    private AdminCqe wellFormed(long index, SplittableRandom r) throws IOException {
        int id = r.nextInt(4) == 0 ? r.nextInt() : r.nextInt(0, 12);
        long addr = r.nextInt(4) == 0 ? r.nextLong() : FuzzGuest.RAM_IOVA + (r.nextLong(RAM) & ~4095L);
        int log2 = r.nextInt(4) == 0 ? r.nextInt(0, 256) : r.nextInt(0, 16);
        int which = r.nextInt(9);
        recorder.add(index, "admin well-formed #" + which + " id " + id + " addr " + Long.toHexString(addr) + " log2 "
                + log2, new byte[0], 0);
        return switch (which) {
            case 0 -> raw.createCq(id, r.nextInt(-1, 6), addr, log2);
            case 1 -> raw.createQp(id, r.nextInt(4) == 0 ? r.nextInt(256) : r.nextBoolean() ? RdmaVerbs.RC : RdmaVerbs.UD,
                    r.nextInt(4) == 0 ? r.nextInt() : 0, r.nextBoolean() ? CQ : r.nextInt(0, 16), addr, log2,
                    FuzzGuest.RAM_IOVA + (r.nextLong(RAM) & ~4095L), r.nextInt(0, 16));
            case 2 -> raw.createMr(id << 8 | r.nextInt(256), r.nextLong(), r.nextInt(4) == 0 ? r.nextLong() : length(r),
                    r.nextInt(0x10000), r.nextInt(4) == 0 ? r.nextInt() : r.nextInt(0, 70), addr, r.nextInt(0, 70));
            case 3 -> raw.modifyQp(r.nextBoolean() ? QP[r.nextInt(2)] : id, r.nextInt(4) == 0 ? r.nextInt() : r.nextInt(1 << 21),
                    r.nextInt(0, 16), r.nextInt(0, 16), r.nextInt(), r.nextInt(8));
            case 4 -> raw.queryQp(r.nextBoolean() ? QP[r.nextInt(2)] : id, addr, addr + r.nextInt(-64, 4096));
            case 5 -> raw.createAh(id, addr, r.nextInt(4) == 0 ? r.nextInt() : r.nextInt(0, 128));
            case 6 -> raw.stats(new int[] {OP_STATS_HDRS, OP_STATS_VALS, OP_QP_STATS_HDRS, OP_QP_STATS_VALS}[r.nextInt(4)],
                    addr, r.nextInt(4) == 0 ? r.nextInt() : r.nextInt(0, 8192), r.nextBoolean() ? QP[r.nextInt(2)] : id);
            case 7 -> raw.modifyQpAv(r.nextBoolean() ? QP[r.nextInt(2)] : id, r.nextInt(0, 8), r.nextInt(0, 8),
                    r.nextInt(), addr, r.nextInt(4) == 0 ? r.nextInt() : r.nextInt(0, 128));
            default -> {
                int op = new int[] {OP_DESTROY_MR, OP_DESTROY_CQ, OP_DESTROY_QP, OP_DESTROY_AH}[r.nextInt(4)];
                // Now and then our own objects, so that the WQEs above meet destroyed ones.
                int victim = r.nextInt(8) == 0 ? (op == OP_DESTROY_QP ? QP[r.nextInt(2)] : op == OP_DESTROY_CQ ? CQ
                        : op == OP_DESTROY_MR ? KEY1 : id) : id;
                yield raw.destroy(op, victim);
            }
        };
    }

    private void devcmd(long index, SplittableRandom r) throws IOException {
        devcmds++;
        byte[] cmd = new byte[64];
        r.nextBytes(cmd);
        cmd[0] = (byte) (r.nextInt(4) == 0 ? r.nextInt(256) : KNOWN_DEVCMDS[r.nextInt(KNOWN_DEVCMDS.length)]);
        ByteBuffer c = ByteBuffer.wrap(cmd).order(ByteOrder.LITTLE_ENDIAN);
        for (int at = 8; at < 64; at += 8) {
            if (r.nextInt(4) == 0) {
                c.putLong(at, FuzzGuest.RAM_IOVA + (r.nextLong(RAM) & ~63L));
            } else if (r.nextInt(4) == 0) {
                c.putLong(at, r.nextInt(0, 32));
            }
        }
        recorder.add(index, "devcmd opcode " + (cmd[0] & 0xff), cmd, 64);
        drv.devcmd(c); // throws IOException when the device never sets done
    }

    private void doorbell(long index, SplittableRandom r) {
        long off = r.nextInt(3) == 0 ? (long) r.nextInt(0, (int) (IonicDevice.BAR2_SIZE / 8)) * 8
                : (long) r.nextInt(0, 8) * IonicDevice.DOORBELL_PAGE + r.nextInt(0, 16) * 8L;
        long value = r.nextInt(3) == 0 ? r.nextLong()
                : IonicDriverModel.doorbellValue(r.nextInt(0, 16), r.nextInt(0, 8), r.nextInt(0x10000));
        recorder.add(index, "BAR2 doorbell @" + Long.toHexString(off) + " = " + Long.toHexString(value), new byte[0], 0);
        drv.device().writePosted(DeviceBinding.BAR2, off, 8, value);
    }

    private void register(long index, SplittableRandom r) throws IOException {
        int width = 1 << r.nextInt(4);
        long off = r.nextInt(3) == 0 ? r.nextInt(0, 0x10000 - width + 1) : 0x2000 + r.nextInt(0, 0x1000 - width + 1);
        long value = r.nextLong();
        boolean write = r.nextInt(4) != 0;
        recorder.add(index, "BAR0 " + (write ? "write" : "read") + " @" + Long.toHexString(off) + "/" + width + " = "
                + Long.toHexString(value), new byte[0], 0);
        if (write) {
            drv.device().writeLong(DeviceBinding.BAR0, off, width, value);
        } else {
            drv.device().readLong(DeviceBinding.BAR0, off, width);
        }
    }

    private void config(long index, SplittableRandom r) throws IOException {
        int width = 1 << r.nextInt(3);
        int off = r.nextInt(0, 256 - width + 1);
        long value = r.nextInt(4) == 0 ? 0x6 : r.nextLong();
        recorder.add(index, "config write @" + off + "/" + width + " = " + Long.toHexString(value), new byte[0], 0);
        drv.device().writeLong(DeviceBinding.CONFIG, off, width, value);
    }

    @Override
    public void quiesce() throws Exception {
        endEpoch();
        // The probe: a new guest's valid bring-up, and a valid RDMA WRITE that completes with success.
        try {
            epoch();
            MemorySegment slot = drv.mem(sq[0], STRIDE);
            drv.mem(mrPage, 64).fill((byte) 0x5a);
            wqe.wrap(slot).wqeId(77).op(RdmaVerbs.WRITE).numSgeKey(1).flags(WQE_FLAG_SIG).rdma(VA1 + 2048, KEY1)
                    .length(64).sge(WQE_PLD, 0, VA1, 64, KEY1);
            sqProd[0] = 1;
            raw.ringSq(0, QP[0], 1);
            RawCqe c = cq.poll();
            if (c == null || c.error()) {
                throw new FuzzFailure("a valid RDMA WRITE on a fresh guest did not complete with success: " + c);
            }
            if (drv.mem(mrPage + 2048, 64).mismatch(drv.mem(mrPage, 64)) != -1) {
                throw new FuzzFailure("a valid RDMA WRITE on a fresh guest completed but did not land");
            }
        } catch (FuzzFailure f) {
            throw f;
        } catch (Exception | Error e) {
            throw new FuzzFailure("a fresh guest's valid bring-up failed: " + e, e);
        } finally {
            endEpoch();
        }
    }

    @Override
    public Recorder recorder() {
        return recorder;
    }

    @Override
    public String stats() {
        return String.format("ionic: %,d guests (%,d broken by their own hand), %,d WQEs, %,d CQEs (%,d errors), "
                + "%,d admin commands (%,d refused), %,d devcmds", epochs, guestBroke, wqes, cqes, errorCqes, adminCmds,
                adminErrors, devcmds);
    }

    @Override
    public void close() {
        endEpoch();
    }
}
