package ernic.nvmeof;


import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

import static ernic.nvmeof.AdminPages.le32;
import static ernic.nvmeof.AdminPages.le64;

/**
 * One NVMe controller of the dynamic controller model: made by an admin-queue Fabrics Connect, owning its
 * properties (CC, CSTS), features and I/O queues; the discovery controller is the same with one admin queue
 * and the discovery log. Admin commands run here, on the device thread.
 */
final class Controller {
    static final int MAX_AERS = 4;
    /** CAP: MQES (0's based), TO = 15 x 500 ms, CSS bit 37 (NVM command set), MPSMIN = MPSMAX = 0 (4 KiB). */
    static final long CAP = NvmeofTarget.MQES | 15L << 24 | 1L << 37;

    final NvmeofTarget t;
    final int cntlid;
    final boolean discovery;
    final String hostNqn;
    final HostQueue[] queues;
    private final ArrayDeque<CommandSlot> aers = new ArrayDeque<>();
    int cc, csts;
    /** Keep Alive Timeout in ms (0: none), and when the host was last heard from. */
    long katoMs, lastHeard;
    boolean writeCache = true, failed;
    private int asyncEventConfig, arbitration, tempThreshold = AdminPages.WCTEMP_K, errorRecovery, writeAtomicity;

    Controller(NvmeofTarget t, int cntlid, boolean discovery, String hostNqn, long katoMs) {
        this.t = t;
        this.cntlid = cntlid;
        this.discovery = discovery;
        this.hostNqn = hostNqn;
        this.katoMs = katoMs;
        this.queues = new HostQueue[discovery ? 1 : t.options.queues() + 1];
        this.lastHeard = t.ticker.nanoTime();
    }

    boolean ready() {
        return (cc & Nvme.CC_EN) != 0 && (csts & Nvme.CSTS_RDY) != 0;
    }

    void heard() {
        lastHeard = t.ticker.nanoTime();
    }

    /** Keep-alive expiry: the KATO rounded up to whole seconds (nvmet's granularity) without a command. */
    boolean expired(long now) {
        long seconds = (katoMs + 999) / 1000;
        return katoMs > 0 && now - lastHeard > TimeUnit.SECONDS.toNanos(seconds);
    }

    /** A fatal error: CSTS.CFS, and every queue is disconnected without responses (nvmet_ctrl_fatal_error). */
    void fail() {
        if (failed) {
            return;
        }
        failed = true;
        csts |= Nvme.CSTS_CFS;
        t.counters.traffic.inc(NvmeofCounters.Traffic.FATAL);
        t.removeController(this);
        for (HostQueue q : queues) {
            if (q != null) {
                q.teardown(true);
            }
        }
    }

    /** The admin queue went away: the controller goes, and with it the I/O queues still connected. */
    void adminQueueClosed() {
        t.removeController(this);
        aers.clear();
        for (int i = 1; i < queues.length; i++) {
            if (queues[i] != null) {
                queues[i].teardown(true);
            }
        }
    }

    // ---- properties (Fabrics Property Get / Set) ----

    int propertyGet(CommandSlot c, MemorySegment sqe) {
        boolean eight = (sqe.get(ValueLayout.JAVA_BYTE, Nvme.PROP_ATTRIB) & 1) != 0;
        int offset = le32(sqe, Nvme.PROP_OFFSET);
        if (eight && offset == Nvme.REG_CAP) {
            c.result = CAP;
        } else if (!eight && offset == Nvme.REG_VS) {
            c.result = Nvme.VERSION_1_3;
        } else if (!eight && offset == Nvme.REG_CC) {
            c.result = Integer.toUnsignedLong(cc);
        } else if (!eight && offset == Nvme.REG_CSTS) {
            c.result = Integer.toUnsignedLong(csts);
        } else {
            return c.queue.refuse(Nvme.SC_INVALID_FIELD, "property get", "offset 0x" + Integer.toHexString(offset)
                    + (eight ? " (8 bytes)" : " (4 bytes)") + " is not a property we have");
        }
        return Nvme.SC_SUCCESS;
    }

    int propertySet(CommandSlot c, MemorySegment sqe) {
        boolean eight = (sqe.get(ValueLayout.JAVA_BYTE, Nvme.PROP_ATTRIB) & 1) != 0;
        int offset = le32(sqe, Nvme.PROP_OFFSET);
        if (eight || offset != Nvme.REG_CC) {
            return c.queue.refuse(Nvme.SC_INVALID_FIELD, "property set", "offset 0x" + Integer.toHexString(offset)
                    + " is not writable");
        }
        writeCc((int) le64(sqe, Nvme.PROP_VALUE));
        return Nvme.SC_SUCCESS;
    }

    /** CC: enabling checks the configuration (4 KiB pages, round robin, NVM set, 64/16-byte entries). */
    private void writeCc(int value) {
        int old = cc;
        cc = value;
        if ((value & Nvme.CC_EN) != 0 && (old & Nvme.CC_EN) == 0) {
            int css = value >>> 4 & 7, mps = value >>> 7 & 0xf, ams = value >>> 11 & 7;
            int iosqes = value >>> 16 & 0xf, iocqes = value >>> 20 & 0xf;
            boolean ok = css == 0 && mps == 0 && ams == 0 && (discovery || (iosqes == 6 && iocqes == 4));
            csts = ok ? Nvme.CSTS_RDY : Nvme.CSTS_CFS;
            if (!ok) {
                t.refuse("cc enable", "CC 0x" + Integer.toHexString(value)
                        + " asks for what this controller does not do; CSTS.CFS set");
            }
        } else if ((value & Nvme.CC_EN) == 0 && (old & Nvme.CC_EN) != 0) {
            // A controller reset ends the commands outstanding: the held AERs, answered so their slots free.
            csts = 0;
            for (CommandSlot aer; (aer = aers.poll()) != null; ) {
                aer.queue.complete(aer, Nvme.SC_ABORT_REQ);
            }
        }
        if ((value & Nvme.CC_SHN_MASK) != 0 && (old & Nvme.CC_SHN_MASK) == 0) {
            csts |= Nvme.CSTS_SHST_COMPLETE;
        }
    }

    // ---- admin commands ----

    /** Runs admin command {@code c}; a status, or {@link HostQueue#LATER} / {@link HostQueue#FATAL}. */
    int admin(CommandSlot c, MemorySegment cap) {
        HostQueue q = c.queue;
        NvmeofCounters.Command kind = NvmeofCounters.Command.of(NvmeofCounters.Command.Set.ADMIN, c.opcode);
        t.counters.commands.inc(kind);
        if (kind == NvmeofCounters.Command.UNSUPPORTED) {
            return q.refuse(Nvme.SC_INVALID_OPCODE, "admin opcode", "opcode 0x" + Integer.toHexString(c.opcode));
        }
        int st = q.mapSgl(c, cap);
        if (st != Nvme.SC_SUCCESS) {
            return st;
        }
        int cdw10 = le32(cap, Nvme.SQE_CDW10), cdw11 = le32(cap, Nvme.SQE_CDW11);
        int nsid = le32(cap, Nvme.SQE_NSID);
        return switch (kind) {
            case IDENTIFY -> identify(c, cap, cdw10 & 0xff, nsid);
            case GET_LOG_PAGE -> getLogPage(c, cap, cdw10, cdw11);
            case SET_FEATURES -> q.expectLength(c, 0) != 0 ? Nvme.SC_SGL_INVALID_DATA : setFeature(c, cdw10, cdw11);
            case GET_FEATURES -> q.expectLength(c, 0) != 0 ? Nvme.SC_SGL_INVALID_DATA : getFeature(c, cdw10);
            case KEEP_ALIVE -> q.expectLength(c, 0);
            case ABORT -> {
                c.result = 1;  // bit 0: the command was not aborted (as nvmet answers)
                yield Nvme.SC_SUCCESS;
            }
            case ASYNC_EVENT -> {
                if (aers.size() >= MAX_AERS) {
                    yield q.refuse(Nvme.SC_ASYNC_LIMIT, "async event limit", "more than " + MAX_AERS + " outstanding");
                }
                // Held until an event; this target raises none, so they end with the controller.
                aers.add(c);
                yield HostQueue.LATER;
            }
            default -> Nvme.SC_INTERNAL;
        };
    }

    private int identify(CommandSlot c, MemorySegment cap, int cns, int nsid) {
        HostQueue q = c.queue;
        if (q.expectLength(c, Nvme.IDENTIFY_SIZE) != 0) {
            return q.refuse(Nvme.SC_SGL_INVALID_DATA, "identify length", c.sglLength + " bytes for a 4096-byte page");
        }
        if (discovery && cns != Nvme.CNS_CTRL) {
            return q.refuse(Nvme.SC_INVALID_FIELD, "identify cns", "CNS " + cns + " on the discovery controller");
        }
        if ((cns == Nvme.CNS_NS || cns == Nvme.CNS_NS_DESC_LIST) && nsid != t.options.nsid()) {
            return q.refuse(Nvme.SC_INVALID_NS, "identify nsid", "NSID " + Integer.toUnsignedString(nsid));
        }
        if (cns == Nvme.CNS_NS_ACTIVE_LIST && Integer.compareUnsigned(nsid, 0xffff_fffe) >= 0) {
            return q.refuse(Nvme.SC_INVALID_FIELD, "identify list nsid", "NSID " + Integer.toUnsignedString(nsid));
        }
        if (cns > Nvme.CNS_NS_DESC_LIST) {
            return q.refuse(Nvme.SC_INVALID_FIELD, "identify cns", "CNS " + cns);
        }
        ByteBuffer b = t.pool.take(Nvme.IDENTIFY_SIZE);
        try {
            MemorySegment s = MemorySegment.ofBuffer(b).fill((byte) 0);
            switch (cns) {
                case Nvme.CNS_NS -> AdminPages.identifyNamespace(s, t);
                case Nvme.CNS_CTRL -> AdminPages.identifyController(s, t, this);
                case Nvme.CNS_NS_ACTIVE_LIST -> AdminPages.activeNamespaces(s, t, nsid);
                default -> AdminPages.namespaceDescriptors(s, t);
            }
            return q.toHost(c, s);
        } finally {
            t.pool.give(b);
        }
    }

    private int getLogPage(CommandSlot c, MemorySegment cap, int cdw10, int cdw11) {
        HostQueue q = c.queue;
        int lid = cdw10 & 0xff;
        long dwords = ((long) (cdw11 & 0xffff) << 16 | cdw10 >>> 16) + 1;
        long offset = Integer.toUnsignedLong(le32(cap, Nvme.SQE_CDW12)) | (long) le32(cap, Nvme.SQE_CDW13) << 32;
        long len = dwords * 4;
        if (q.expectLength(c, len) != 0) {
            return q.refuse(Nvme.SC_SGL_INVALID_DATA, "log page length", c.sglLength + " bytes for " + len);
        }
        if (len > NvmeofTarget.MAX_TRANSFER) {
            return q.refuse(Nvme.SC_INVALID_FIELD, "log page length", len + " bytes is more than MDTS");
        }
        int size = discovery
                ? (lid == Nvme.LOG_DISCOVERY ? AdminPages.DISCOVERY_SIZE : -1)
                : switch (lid) {
                    case Nvme.LOG_ERROR -> AdminPages.ERROR_ENTRY_SIZE;
                    case Nvme.LOG_SMART, Nvme.LOG_FW_SLOT -> AdminPages.SMART_SIZE;
                    case Nvme.LOG_CHANGED_NS -> AdminPages.CHANGED_NS_SIZE;
                    default -> -1;
                };
        if (size < 0) {
            return q.refuse(Nvme.SC_INVALID_LOG_PAGE, "log page id", "LID 0x" + Integer.toHexString(lid));
        }
        if ((offset & 3) != 0 || offset < 0 || offset > size) {
            return q.refuse(Nvme.SC_INVALID_FIELD, "log page offset", "offset " + offset + " in a " + size + "-byte page");
        }
        ByteBuffer page = t.pool.take(size), out = t.pool.take((int) len);
        try {
            MemorySegment p = MemorySegment.ofBuffer(page).fill((byte) 0);
            switch (lid) {
                case Nvme.LOG_DISCOVERY -> AdminPages.discovery(p, t);
                case Nvme.LOG_SMART -> AdminPages.smart(p, t, t.powerOnHours());
                case Nvme.LOG_FW_SLOT -> AdminPages.firmwareSlots(p);
                default -> { } // no error entries, no namespace changes
            }
            MemorySegment o = MemorySegment.ofBuffer(out).fill((byte) 0);
            long n = Math.min(len, size - offset);
            MemorySegment.copy(p, offset, o, 0, n);
            return q.toHost(c, o);
        } finally {
            t.pool.give(page);
            t.pool.give(out);
        }
    }

    private int setFeature(CommandSlot c, int cdw10, int cdw11) {
        HostQueue q = c.queue;
        int fid = cdw10 & 0xff;
        if (cdw10 < 0) {
            return q.refuse(Nvme.SC_FEATURE_NOT_SAVEABLE, "set features save", "FID 0x" + Integer.toHexString(fid));
        }
        switch (fid) {
            case Nvme.FEAT_KATO -> katoMs = Integer.toUnsignedLong(cdw11);
            case Nvme.FEAT_ASYNC_EVENT -> asyncEventConfig = cdw11;
            case Nvme.FEAT_NUM_QUEUES -> {
                if (discovery || (cdw11 & 0xffff) == 0xffff || cdw11 >>> 16 == 0xffff) {
                    return q.refuse(Nvme.SC_INVALID_FIELD, "number of queues", "0x" + Integer.toHexString(cdw11));
                }
                c.result = numberOfQueues();
            }
            case Nvme.FEAT_VOLATILE_WC -> {
                if (discovery) {
                    return q.refuse(Nvme.SC_INVALID_FIELD, "set features fid", "write cache on the discovery controller");
                }
                writeCache = (cdw11 & 1) != 0;
            }
            case Nvme.FEAT_ARBITRATION -> arbitration = cdw11;
            case Nvme.FEAT_POWER_MGMT -> {
                if ((cdw11 & 0x1f) != 0) {
                    return q.refuse(Nvme.SC_INVALID_FIELD, "power state", "state " + (cdw11 & 0x1f) + " (only 0)");
                }
            }
            case Nvme.FEAT_TEMP_THRESH -> {
                if ((cdw11 >>> 16 & 0x3f) == 0) {  // composite temperature, over-temperature threshold
                    tempThreshold = cdw11 & 0xffff;
                }
            }
            case Nvme.FEAT_ERR_RECOVERY -> errorRecovery = cdw11;
            case Nvme.FEAT_WRITE_ATOMIC -> writeAtomicity = cdw11 & 1;
            default -> {
                return q.refuse(Nvme.SC_INVALID_FIELD, "set features fid", "FID 0x" + Integer.toHexString(fid));
            }
        }
        return Nvme.SC_SUCCESS;
    }

    private long numberOfQueues() {
        long n = queues.length - 2;  // 0's based count of I/O queues
        return n << 16 | n;
    }

    private int getFeature(CommandSlot c, int cdw10) {
        HostQueue q = c.queue;
        int fid = cdw10 & 0xff, sel = cdw10 >>> 8 & 7;
        if (sel > 3) {
            return q.refuse(Nvme.SC_INVALID_FIELD, "get features select", "SEL " + sel);
        }
        boolean known = switch (fid) {
            case Nvme.FEAT_KATO, Nvme.FEAT_ASYNC_EVENT, Nvme.FEAT_ARBITRATION, Nvme.FEAT_POWER_MGMT,
                 Nvme.FEAT_TEMP_THRESH, Nvme.FEAT_ERR_RECOVERY, Nvme.FEAT_WRITE_ATOMIC -> true;
            case Nvme.FEAT_NUM_QUEUES, Nvme.FEAT_VOLATILE_WC -> !discovery;
            default -> false;
        };
        if (!known) {
            return q.refuse(Nvme.SC_INVALID_FIELD, "get features fid", "FID 0x" + Integer.toHexString(fid));
        }
        if (sel == 3) {
            c.result = fid == Nvme.FEAT_NUM_QUEUES ? 0 : 1 << 2;  // changeable, neither saveable nor per namespace
            return Nvme.SC_SUCCESS;
        }
        boolean current = sel == 0;  // default and saved (nothing is saveable) both give the default
        c.result = switch (fid) {
            case Nvme.FEAT_KATO -> current ? katoMs : 0;
            case Nvme.FEAT_ASYNC_EVENT -> current ? Integer.toUnsignedLong(asyncEventConfig) : 0;
            case Nvme.FEAT_ARBITRATION -> current ? Integer.toUnsignedLong(arbitration) : 0;
            case Nvme.FEAT_TEMP_THRESH -> current ? tempThreshold : AdminPages.WCTEMP_K;
            case Nvme.FEAT_ERR_RECOVERY -> current ? Integer.toUnsignedLong(errorRecovery) : 0;
            case Nvme.FEAT_WRITE_ATOMIC -> current ? writeAtomicity : 0;
            case Nvme.FEAT_NUM_QUEUES -> numberOfQueues();
            case Nvme.FEAT_VOLATILE_WC -> current ? (writeCache ? 1 : 0) : 1;
            default -> 0;  // power state 0
        };
        return Nvme.SC_SUCCESS;
    }
}
