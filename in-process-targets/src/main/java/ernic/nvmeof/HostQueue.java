package ernic.nvmeof;

import ernic.attach.HostMemory;
import ernic.nvmeof.NvmeofCounters.Traffic;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.RejectedExecutionException;

import static ernic.nvmeof.AdminPages.le16;
import static ernic.nvmeof.AdminPages.le32;
import static ernic.nvmeof.AdminPages.le64;

/**
 * One NVMe queue over one RC connection: command capsules in ({@link #capsule}), response capsules out
 * through the {@link HostConnection}. Before its Fabrics Connect it belongs to no controller. Data moves only
 * through {@link HostMemory} by the keyed SGL of the command, or from the in-capsule data.
 *
 * <p>A transfer that the host's key refuses is handled as nvmet-rdma handles a failed RDMA READ or WRITE
 * (drivers/nvme/target/rdma.c, nvmet_rdma_{read,write}_data_done and send_done): no response for the
 * command, and a fatal controller error ({@code nvmet_ctrl_fatal_error}: CSTS.CFS and every queue of the
 * controller disconnected), or only this queue's disconnect when no controller exists yet. The host's
 * error recovery then reconnects. A key 0 with a non-zero length is refused before any transfer with Data
 * Transfer Error: it would reach all of guest memory, and no transfer is attempted.
 */
public final class HostQueue {
    /** A handler's answer when the response comes later (file I/O, a held AER), or never (fatal). */
    static final int LATER = -2, FATAL = -1;
    /** An I/O executor operation threw; the operation's {@link IoOp#failure} status is sent. */
    private static final int IO_FAILED = -3;

    private final NvmeofTarget t;
    private final int qid;
    private final HostMemory host;
    private final HostConnection responder;
    private final CommandSlot[] slots;
    private final int[] free;
    private int freeTop;
    private final CommandSlot overflow;
    private int sqHead;
    Controller ctrl;
    private boolean closed;

    HostQueue(NvmeofTarget t, int qid, int depth, HostMemory host, HostConnection responder) {
        this.t = t;
        this.qid = qid;
        this.host = host;
        this.responder = responder;
        this.slots = new CommandSlot[depth];
        this.free = new int[depth];
        for (int i = 0; i < depth; i++) {
            slots[i] = new CommandSlot(this, i);
            free[freeTop++] = depth - 1 - i;
        }
        this.overflow = new CommandSlot(this, -1);
    }

    /** The queue id the host asked for in its CM REQ (0: admin). */
    public int qid() {
        return qid;
    }

    /** The controller id once Fabrics Connect succeeded, or -1. */
    public int controllerId() {
        return ctrl == null ? -1 : ctrl.cntlid;
    }

    public boolean closed() {
        return closed;
    }

    /**
     * A command capsule arrived (a SEND on the bound QP): the 64-byte SQE, then any in-capsule data. The
     * segment is read only during the call. The response may be sent before this returns or later.
     */
    public void capsule(MemorySegment capsule) {
        if (closed) {
            t.counters.traffic.inc(Traffic.CAPSULES_DROPPED);
            return;
        }
        try {
            handle(capsule);
        } catch (RuntimeException e) {
            // A bug of ours must not stop the device loop: treat it like nvmet treats a broken capsule.
            t.refuse("internal error", e.toString());
            fatal();
        }
    }

    /** The QP went away (DREQ, destroy): frees the queue; closing the admin queue ends its controller. */
    public void close() {
        Controller c = ctrl;
        teardown(false);
        if (c != null) {
            if (qid == 0) {
                c.adminQueueClosed();
            } else if (qid < c.queues.length && c.queues[qid] == this) {
                c.queues[qid] = null;
            }
        }
    }

    /** Stops the queue: no more responses; commands in flight are dropped when they come back. */
    void teardown(boolean disconnect) {
        if (closed) {
            return;
        }
        closed = true;
        t.counters.traffic.inc(Traffic.QUEUES_CLOSED);
        for (CommandSlot c : slots) {
            c.generation++;
        }
        if (disconnect) {
            responder.disconnect();
        }
    }

    private void fatal() {
        if (ctrl != null) {
            ctrl.fail();
        } else {
            t.counters.traffic.inc(Traffic.FATAL);
            teardown(true);
        }
    }

    private void handle(MemorySegment cap) {
        if (cap.byteSize() < Nvme.SQE_SIZE) {
            t.refuse("short capsule", cap.byteSize() + " bytes, less than a 64-byte SQE");
            fatal();
            return;
        }
        CommandSlot c = take();
        if (c == null) {
            // More commands than the queue size the host connected with.
            t.counters.traffic.inc(Traffic.QUEUE_OVERFLOW);
            t.refuse("queue overflow", "more than " + slots.length + " commands outstanding on queue " + qid);
            overflow.cid = le16(cap, Nvme.SQE_CID);
            overflow.sglKind = CommandSlot.SGL_NONE;
            overflow.invalidate = false;
            overflow.result = 0;
            respond(overflow, Nvme.SC_INTERNAL | Nvme.STATUS_DNR);
            return;
        }
        c.cid = le16(cap, Nvme.SQE_CID);
        c.opcode = Byte.toUnsignedInt(cap.get(ValueLayout.JAVA_BYTE, Nvme.SQE_OPCODE));
        c.result = 0;
        c.sglKind = CommandSlot.SGL_NONE;
        c.invalidate = false;
        sqHead = (sqHead + 1) % slots.length;
        if (ctrl != null) {
            ctrl.heard();
        }
        int st = execute(c, cap);
        if (st >= 0) {
            complete(c, st);
        } else if (st == FATAL) {
            fatal();
        }
    }

    private int execute(CommandSlot c, MemorySegment cap) {
        int flags = Byte.toUnsignedInt(cap.get(ValueLayout.JAVA_BYTE, Nvme.SQE_FLAGS));
        if ((flags & Nvme.FLAGS_PSDT_MASK) != Nvme.FLAGS_PSDT_SGL || (flags & Nvme.FLAGS_FUSE_MASK) != 0) {
            return refuse(Nvme.SC_INVALID_FIELD, "command flags", "flags 0x" + Integer.toHexString(flags)
                    + " (fabrics commands use SGLs and are not fused)");
        }
        if (c.opcode == Nvme.FABRICS) {
            int fctype = Byte.toUnsignedInt(cap.get(ValueLayout.JAVA_BYTE, Nvme.SQE_FCTYPE));
            NvmeofCounters.Command kind = NvmeofCounters.Command.of(NvmeofCounters.Command.Set.FABRICS, fctype);
            t.counters.commands.inc(kind);
            boolean allowed = kind == NvmeofCounters.Command.CONNECT ? ctrl == null
                    : kind != NvmeofCounters.Command.UNSUPPORTED && ctrl != null && qid == 0;
            if (!allowed) {
                return refuse(Nvme.SC_INVALID_OPCODE, "fabrics command", "fctype 0x" + Integer.toHexString(fctype)
                        + " on queue " + qid + (ctrl == null ? " before Connect" : ""));
            }
            int st = mapSgl(c, cap);
            if (st != Nvme.SC_SUCCESS) {
                return st;
            }
            return switch (kind) {
                case CONNECT -> connect(c, cap);
                case PROPERTY_GET -> ctrl.propertyGet(c, cap);
                default -> ctrl.propertySet(c, cap);
            };
        }
        if (ctrl == null) {
            t.counters.commands.inc(NvmeofCounters.Command.UNSUPPORTED);
            return refuse(Nvme.SC_INVALID_OPCODE, "command before connect",
                    "opcode 0x" + Integer.toHexString(c.opcode) + " on an unconnected queue");
        }
        if (!ctrl.ready()) {
            t.counters.commands.inc(NvmeofCounters.Command.UNSUPPORTED);
            return refuse(Nvme.SC_CMD_SEQ_ERROR, "controller not ready", "a command while CC.EN or CSTS.RDY is 0");
        }
        return qid == 0 ? ctrl.admin(c, cap) : IoCommands.execute(t, this, c, cap);
    }

    // ---- SGL and data movement ----

    /**
     * Reads the SGL descriptor of {@code c}: a keyed data block (with or without invalidation), or an
     * offset into the in-capsule data for a command that sends data. The checks and statuses are nvmet-rdma's
     * (nvmet_rdma_map_sgl).
     */
    int mapSgl(CommandSlot c, MemorySegment cap) {
        MemorySegment d = cap.asSlice(Nvme.SQE_DPTR, 16);
        int type = Byte.toUnsignedInt(d.get(ValueLayout.JAVA_BYTE, Nvme.SGL_TYPE));
        long addr = le64(d, Nvme.SGL_ADDR);
        if (type >>> 4 == Nvme.SGL_FMT_KEYED_DATA_DESC) {
            int sub = type & 0xf;
            if (sub != Nvme.SGL_SUBTYPE_ADDRESS && sub != Nvme.SGL_SUBTYPE_INVALIDATE) {
                return refuse(Nvme.SC_INVALID_FIELD, "sgl subtype", "keyed SGL type 0x" + Integer.toHexString(type));
            }
            int length = le16(d, Nvme.SGL_LENGTH) | Byte.toUnsignedInt(d.get(ValueLayout.JAVA_BYTE, Nvme.SGL_LENGTH + 2)) << 16;
            int key = le32(d, Nvme.SGL_KEY);
            if (length == 0) {
                return Nvme.SC_SUCCESS;  // no data (nvme-rdma's null SGL)
            }
            if (key == 0) {
                t.counters.traffic.inc(Traffic.TRANSFERS_REFUSED);
                return refuse(Nvme.SC_DATA_XFER_ERROR, "key 0", "a keyed SGL with key 0 and " + length
                        + " bytes (key 0 would reach all of guest memory)");
            }
            c.sglKind = CommandSlot.SGL_KEYED;
            c.sglAddr = addr;
            c.sglLength = length;
            c.sglKey = key;
            c.invalidate = sub == Nvme.SGL_SUBTYPE_INVALIDATE;
            return Nvme.SC_SUCCESS;
        }
        if (type >>> 4 == Nvme.SGL_FMT_DATA_DESC) {
            if ((type & 0xf) != Nvme.SGL_SUBTYPE_OFFSET) {
                return refuse(Nvme.SC_INVALID_FIELD, "sgl subtype", "data block SGL type 0x" + Integer.toHexString(type));
            }
            boolean write = c.opcode == Nvme.FABRICS
                    ? (cap.get(ValueLayout.JAVA_BYTE, Nvme.SQE_FCTYPE) & 1) != 0 : (c.opcode & 1) != 0;
            if (!write) {
                return refuse(Nvme.SC_INVALID_FIELD, "in-capsule read", "in-capsule data for opcode 0x"
                        + Integer.toHexString(c.opcode) + ", which sends none");
            }
            long length = Integer.toUnsignedLong(le32(d, Nvme.SGL_LENGTH));
            if (addr < 0 || addr + length > NvmeofTarget.IN_CAPSULE_DATA) {
                return refuse(Nvme.SC_SGL_INVALID_OFFSET, "in-capsule offset", "offset " + Long.toUnsignedString(addr)
                        + " + " + length + " is past the " + NvmeofTarget.IN_CAPSULE_DATA + "-byte in-capsule data");
            }
            if (Nvme.SQE_SIZE + addr + length > cap.byteSize()) {
                return refuse(Nvme.SC_SGL_INVALID_DATA, "in-capsule length", (addr + length) + " bytes named, "
                        + (cap.byteSize() - Nvme.SQE_SIZE) + " in the capsule");
            }
            if (length == 0) {
                return Nvme.SC_SUCCESS;
            }
            c.sglKind = CommandSlot.SGL_INLINE;
            c.sglAddr = Nvme.SQE_SIZE + addr;
            c.sglLength = (int) length;
            return Nvme.SC_SUCCESS;
        }
        return refuse(Nvme.SC_SGL_INVALID_TYPE, "sgl type", "SGL type 0x" + Integer.toHexString(type));
    }

    /** The command's data length must be exactly {@code len} (nvmet_check_transfer_len). */
    int expectLength(CommandSlot c, long len) {
        long have = c.sglKind == CommandSlot.SGL_NONE ? 0 : c.sglLength;
        return have == len ? Nvme.SC_SUCCESS : refuse(Nvme.SC_SGL_INVALID_DATA, "data length",
                have + " bytes in the SGL, the command moves " + len);
    }

    /**
     * The SGL carries at least {@code len} bytes (nvmet's {@code nvmet_check_data_len_lte}): for Dataset
     * Management, whose Linux host always maps a buffer of the 256 ranges NVMe allows, whatever NR says.
     */
    int expectAtLeast(CommandSlot c, long len) {
        long have = c.sglKind == CommandSlot.SGL_NONE ? 0 : c.sglLength;
        return have >= len ? Nvme.SC_SUCCESS : refuse(Nvme.SC_SGL_INVALID_DATA, "data length",
                have + " bytes in the SGL, the command needs " + len);
    }

    /** Host to controller: the command's data into {@code dst} (its size). A status, or {@link #FATAL}. */
    int fromHost(CommandSlot c, MemorySegment cap, MemorySegment dst) {
        if (c.sglKind == CommandSlot.SGL_INLINE) {
            MemorySegment.copy(cap, c.sglAddr, dst, 0, dst.byteSize());
            t.counters.traffic.inc(Traffic.IN_CAPSULE_WRITES);
            return Nvme.SC_SUCCESS;
        }
        if (c.sglKind == CommandSlot.SGL_NONE) {
            return dst.byteSize() == 0 ? Nvme.SC_SUCCESS : Nvme.SC_INTERNAL;
        }
        if (host.fromHost(c.sglKey, c.sglAddr, dst)) {
            return Nvme.SC_SUCCESS;
        }
        return transferRefused(c, "RDMA READ");
    }

    /** Controller to host: {@code src} to the command's keyed data block. A status, or {@link #FATAL}. */
    int toHost(CommandSlot c, MemorySegment src) {
        if (c.sglKind != CommandSlot.SGL_KEYED) {
            return src.byteSize() == 0 ? Nvme.SC_SUCCESS : Nvme.SC_INTERNAL;
        }
        return host.toHost(c.sglKey, c.sglAddr, src) ? Nvme.SC_SUCCESS : transferRefused(c, "RDMA WRITE");
    }

    private int transferRefused(CommandSlot c, String op) {
        t.counters.traffic.inc(Traffic.TRANSFERS_REFUSED);
        t.refuse("transfer refused", op + " of " + c.sglLength + " bytes at 0x" + Long.toHexString(c.sglAddr)
                + " under rkey 0x" + Integer.toHexString(c.sglKey) + " refused; the controller fails, as"
                + " nvmet-rdma's does when its RDMA operation fails");
        return FATAL;
    }

    /** Logs the cause once and returns {@code status} with DNR (errors are counted when they are sent). */
    int refuse(int status, String cause, String detail) {
        t.refuse(cause, detail);
        return status;
    }

    // ---- responses ----

    private CommandSlot take() {
        return freeTop == 0 ? null : slots[free[--freeTop]];
    }

    private void release(CommandSlot c) {
        c.generation++;
        free[freeTop++] = c.slot;
    }

    /** Sends the response of {@code c} with {@code status} and frees its slot. */
    void complete(CommandSlot c, int status) {
        if (closed) {
            return;
        }
        respond(c, status == Nvme.SC_SUCCESS ? 0 : status | Nvme.STATUS_DNR);
        release(c);
    }

    /** A file operation that ran on the I/O executor came back on the device thread. */
    void completeLater(CommandSlot c, int generation, int status) {
        if (closed || c.generation != generation) {
            return;  // the queue went away meanwhile; the command gets no response
        }
        if (status == FATAL) {
            release(c);
            fatal();
        } else {
            complete(c, status);
        }
    }

    private void respond(CommandSlot c, int status) {
        if (status != 0) {
            t.counters.errors.inc(NvmeofCounters.Status.of(status));
        }
        MemorySegment cqe = c.cqe;
        le64(cqe, Nvme.CQE_RESULT, c.result);
        le16(cqe, Nvme.CQE_SQ_HEAD, sqHead);
        le16(cqe, Nvme.CQE_SQ_ID, qid);
        le16(cqe, Nvme.CQE_CID, c.cid);
        le16(cqe, Nvme.CQE_STATUS, status << 1);
        boolean inv = c.invalidate && c.sglKind == CommandSlot.SGL_KEYED;
        if (inv) {
            t.counters.traffic.inc(Traffic.SEND_INV);
        }
        responder.respond(cqe, inv, inv ? c.sglKey : 0);
    }

    /**
     * Runs {@code op} on the I/O executor, then {@code after} (if any) and the response on the device
     * thread. {@code buffer} goes back to the pool on the device thread in every case.
     */
    int offload(CommandSlot c, ByteBuffer buffer, IoOp op, AfterIo after) {
        int generation = c.generation;
        try {
            t.io.execute(() -> {
                int st;
                try {
                    st = op.run();
                } catch (IOException | RuntimeException e) {
                    st = IO_FAILED;
                    t.loop.execute(() -> t.fileError(e));
                }
                int status = st;
                t.loop.execute(() -> {
                    int s = status == IO_FAILED ? op.failure() : status;
                    if (s == Nvme.SC_SUCCESS && after != null && !closed && c.generation == generation) {
                        s = after.run(buffer);
                    }
                    if (buffer != null) {
                        t.pool.give(buffer);
                    }
                    completeLater(c, generation, s);
                });
            });
            return LATER;
        } catch (RejectedExecutionException e) {
            if (buffer != null) {
                t.pool.give(buffer);
            }
            return refuse(Nvme.SC_INTERNAL, "io executor", "the I/O executor refused work: " + e);
        }
    }

    /** File work on the I/O executor: a status. */
    interface IoOp {
        int run() throws IOException;

        /** The status when {@link #run} failed: Write Fault, or Unrecovered Read Error for a read. */
        default int failure() {
            return Nvme.SC_WRITE_FAULT;
        }
    }

    /** Device-thread work after a successful file operation (a Read's transfer to the host). */
    interface AfterIo {
        int run(ByteBuffer buffer);
    }

    // ---- Fabrics Connect ----

    private int connect(CommandSlot c, MemorySegment cap) {
        int recfmt = le16(cap, Nvme.CONNECT_RECFMT), cqid = le16(cap, Nvme.CONNECT_QID);
        int sqsize = le16(cap, Nvme.CONNECT_SQSIZE);
        long kato = Integer.toUnsignedLong(le32(cap, Nvme.CONNECT_KATO));
        if (recfmt != 0) {
            return connectRefused(c, Nvme.SC_CONNECT_FORMAT, Nvme.CONNECT_RECFMT, "connect recfmt", "record format " + recfmt);
        }
        if (expectLength(c, Nvme.CONNECT_DATA_SIZE) != Nvme.SC_SUCCESS) {
            t.counters.traffic.inc(Traffic.CONNECTS_REFUSED);
            return Nvme.SC_SGL_INVALID_DATA;
        }
        ByteBuffer b = t.pool.take(Nvme.CONNECT_DATA_SIZE);
        MemorySegment data = MemorySegment.ofBuffer(b);
        int cntlid;
        String subNqn, hostNqn;
        try {
            int st = fromHost(c, cap, data);
            if (st != Nvme.SC_SUCCESS) {
                return st;
            }
            cntlid = le16(data, Nvme.CONNECT_DATA_CNTLID);
            subNqn = nqn(data, Nvme.CONNECT_DATA_SUBNQN);
            hostNqn = nqn(data, Nvme.CONNECT_DATA_HOSTNQN);
        } finally {
            t.pool.give(b);
        }
        int dataAttr = Nvme.IATTR_CONNECT_DATA;
        if (cqid != qid) {
            return connectRefused(c, Nvme.SC_CONNECT_INVALID_PARAM, Nvme.CONNECT_QID, "connect qid",
                    "Connect for queue " + cqid + " on the connection made for queue " + qid);
        }
        boolean toDiscovery = Nvme.DISCOVERY_NQN.equals(subNqn);
        if (subNqn == null || !(toDiscovery || subNqn.equals(t.options.nqn()))) {
            return connectRefused(c, Nvme.SC_CONNECT_INVALID_PARAM, dataAttr | Nvme.CONNECT_DATA_SUBNQN,
                    "connect subsystem", "no subsystem '" + subNqn + "' here (it is '" + t.options.nqn() + "')");
        }
        if (hostNqn == null || hostNqn.isEmpty()) {
            return connectRefused(c, Nvme.SC_CONNECT_INVALID_HOST, dataAttr | Nvme.CONNECT_DATA_HOSTNQN,
                    "connect host", "an empty or unterminated host NQN");
        }
        if (sqsize == 0 || sqsize >= slots.length) {
            return connectRefused(c, Nvme.SC_CONNECT_INVALID_PARAM, Nvme.CONNECT_SQSIZE, "connect sqsize",
                    "SQ size " + sqsize + " (0's based) for a queue of " + slots.length + " entries");
        }
        if (qid == 0) {
            if (cntlid != Nvme.CNTLID_DYNAMIC) {
                return connectRefused(c, Nvme.SC_CONNECT_INVALID_PARAM, dataAttr | Nvme.CONNECT_DATA_CNTLID,
                        "connect cntlid", "admin Connect for controller " + cntlid + " (the dynamic model needs 0xffff)");
            }
            Controller made = t.newController(toDiscovery, hostNqn, kato);
            if (made == null) {
                return connectRefused(c, Nvme.SC_CONNECT_CTRL_BUSY, 0, "controllers", "every controller id is in use");
            }
            ctrl = made;
            made.queues[0] = this;
        } else {
            if (toDiscovery) {
                return connectRefused(c, Nvme.SC_QID_INVALID, Nvme.CONNECT_QID, "connect qid",
                        "queue " + qid + " of the discovery controller, which has only an admin queue");
            }
            Controller found = t.controller(cntlid);
            if (found == null || found.discovery || !hostNqn.equals(found.hostNqn)) {
                return connectRefused(c, Nvme.SC_CONNECT_INVALID_PARAM, dataAttr | Nvme.CONNECT_DATA_CNTLID,
                        "connect cntlid", "I/O Connect for controller " + cntlid + " of host " + hostNqn
                                + ", which has none by that id");
            }
            if (qid >= found.queues.length) {
                return connectRefused(c, Nvme.SC_QID_INVALID, Nvme.CONNECT_QID, "connect qid",
                        "queue " + qid + " of a controller with " + (found.queues.length - 1) + " I/O queues");
            }
            if (!found.ready()) {
                return connectRefused(c, Nvme.SC_CMD_SEQ_ERROR, 0, "connect not ready", "I/O Connect before CC.EN");
            }
            if (found.queues[qid] != null) {
                return connectRefused(c, Nvme.SC_CMD_SEQ_ERROR, Nvme.CONNECT_QID, "connect twice",
                        "queue " + qid + " of controller " + cntlid + " is connected already");
            }
            ctrl = found;
            found.queues[qid] = this;
            found.heard();
        }
        t.counters.traffic.inc(Traffic.CONNECTIONS);
        c.result = ctrl.cntlid;
        return Nvme.SC_SUCCESS;
    }

    private int connectRefused(CommandSlot c, int status, int ipo, String cause, String detail) {
        t.counters.traffic.inc(Traffic.CONNECTS_REFUSED);
        c.result = Integer.toUnsignedLong(ipo);
        return refuse(status, cause, detail);
    }

    /** A NUL-terminated NQN in a 256-byte field, or null when it is not terminated or not ASCII. */
    private static String nqn(MemorySegment data, int off) {
        for (int i = 0; i < Nvme.NQN_FIELD; i++) {
            byte b = data.get(ValueLayout.JAVA_BYTE, off + i);
            if (b == 0) {
                return i > Nvme.NQN_MAX ? null : new String(data.asSlice(off, i).toArray(ValueLayout.JAVA_BYTE),
                        StandardCharsets.US_ASCII);
            }
            if (b < 0x20 || b > 0x7e) {
                return null;
            }
        }
        return null;
    }
}
