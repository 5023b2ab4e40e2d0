package ernic.nvmeof;

import ernic.nvmeof.NvmeofCounters.Traffic;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

import static ernic.nvmeof.AdminPages.le32;
import static ernic.nvmeof.AdminPages.le64;

/**
 * The NVM command set on an I/O queue: Read, Write, Flush, Write Zeroes, Dataset Management. A RAM
 * namespace is moved to and from the host directly, on the device thread; a file namespace's work runs on
 * the I/O executor and the response follows on the device thread.
 */
final class IoCommands {
    private IoCommands() {}

    /** cdw12 of Read/Write: FUA (bit 30); NLB in bits 15:0, 0's based. */
    private static final int CDW12_FUA = 1 << 30;
    /** cdw11 of Dataset Management: AD, deallocate (bit 2). */
    private static final int DSM_AD = 1 << 2;
    /** A DSM range (16 bytes): context attributes le32 @0, length in blocks le32 @4, starting LBA le64 @8. */
    private static final int RANGE_SIZE = 16, RANGE_NLB = 4, RANGE_SLBA = 8;

    static int execute(NvmeofTarget t, HostQueue q, CommandSlot c, MemorySegment cap) {
        NvmeofCounters.Command kind = NvmeofCounters.Command.of(NvmeofCounters.Command.Set.IO, c.opcode);
        t.counters.commands.inc(kind);
        if (kind == NvmeofCounters.Command.UNSUPPORTED) {
            return q.refuse(Nvme.SC_INVALID_OPCODE, "io opcode", "opcode 0x" + Integer.toHexString(c.opcode));
        }
        int nsid = le32(cap, Nvme.SQE_NSID);
        if (nsid != t.options.nsid() && !(kind == NvmeofCounters.Command.FLUSH && nsid == Nvme.NSID_ALL)) {
            return q.refuse(Nvme.SC_INVALID_NS, "io nsid", "NSID " + Integer.toUnsignedString(nsid));
        }
        int st = q.mapSgl(c, cap);
        if (st != Nvme.SC_SUCCESS) {
            return st;
        }
        return switch (kind) {
            case READ, WRITE -> readWrite(t, q, c, cap, kind == NvmeofCounters.Command.WRITE);
            case FLUSH -> flush(t, q, c);
            case WRITE_ZEROES -> writeZeroes(t, q, c, cap);
            default -> dsm(t, q, c, cap);
        };
    }

    /** LBA range check, overflow safe: {@code nlb} blocks from {@code slba} lie inside the namespace. */
    private static boolean inRange(Namespace ns, long slba, long nlb) {
        return slba >= 0 && nlb >= 0 && slba <= ns.blocks() && nlb <= ns.blocks() - slba;
    }

    private static int readWrite(NvmeofTarget t, HostQueue q, CommandSlot c, MemorySegment cap, boolean write) {
        Namespace ns = t.namespace;
        long slba = le64(cap, Nvme.SQE_CDW10);
        int cdw12 = le32(cap, Nvme.SQE_CDW12);
        long nlb = (cdw12 & 0xffff) + 1L;
        long len = nlb * ns.blockSize();
        int st = q.expectLength(c, len);
        if (st != Nvme.SC_SUCCESS) {
            return st;
        }
        if (len > NvmeofTarget.MAX_TRANSFER) {
            return q.refuse(Nvme.SC_INVALID_FIELD, "transfer size", len + " bytes is more than MDTS");
        }
        if (!inRange(ns, slba, nlb)) {
            return q.refuse(Nvme.SC_LBA_RANGE, "lba range", (write ? "write" : "read") + " of " + nlb + " blocks at LBA "
                    + Long.toUnsignedString(slba) + " of " + ns.blocks());
        }
        long offset = slba * ns.blockSize();
        MemorySegment ram = ns.memory();
        if (ram != null) {
            MemorySegment blocks = ram.asSlice(offset, len);
            st = write ? q.fromHost(c, cap, blocks) : q.toHost(c, blocks);
            if (st == Nvme.SC_SUCCESS) {
                t.counters.traffic.add(write ? Traffic.BYTES_WRITTEN : Traffic.BYTES_READ, len);
            }
            return st;
        }
        ByteBuffer b = t.pool.take((int) len);
        if (write) {
            st = q.fromHost(c, cap, MemorySegment.ofBuffer(b));
            if (st != Nvme.SC_SUCCESS) {
                t.pool.give(b);
                return st;
            }
            t.counters.traffic.add(Traffic.BYTES_WRITTEN, len);
            // Without the write cache (or with FUA) a completed write is on stable storage.
            boolean durable = (cdw12 & CDW12_FUA) != 0 || !q.ctrl.writeCache;
            return q.offload(c, b, () -> {
                ns.write(offset, b.duplicate(), durable);
                return Nvme.SC_SUCCESS;
            }, null);
        }
        return q.offload(c, b, new HostQueue.IoOp() {
            @Override
            public int run() throws java.io.IOException {
                ns.read(offset, b.duplicate());
                return Nvme.SC_SUCCESS;
            }

            @Override
            public int failure() {
                return Nvme.SC_READ_ERROR;
            }
        }, buf -> {
            int s = q.toHost(c, MemorySegment.ofBuffer(buf));
            if (s == Nvme.SC_SUCCESS) {
                t.counters.traffic.add(Traffic.BYTES_READ, len);
            }
            return s;
        });
    }

    private static int flush(NvmeofTarget t, HostQueue q, CommandSlot c) {
        int st = q.expectLength(c, 0);
        if (st != Nvme.SC_SUCCESS || t.namespace.memory() != null) {
            return st;
        }
        Namespace ns = t.namespace;
        return q.offload(c, null, () -> {
            ns.flush();
            return Nvme.SC_SUCCESS;
        }, null);
    }

    private static int writeZeroes(NvmeofTarget t, HostQueue q, CommandSlot c, MemorySegment cap) {
        Namespace ns = t.namespace;
        long slba = le64(cap, Nvme.SQE_CDW10);
        long nlb = (le32(cap, Nvme.SQE_CDW12) & 0xffff) + 1L;
        int st = q.expectLength(c, 0);
        if (st != Nvme.SC_SUCCESS) {
            return st;
        }
        if (!inRange(ns, slba, nlb)) {
            return q.refuse(Nvme.SC_LBA_RANGE, "lba range", "write zeroes of " + nlb + " blocks at LBA "
                    + Long.toUnsignedString(slba) + " of " + ns.blocks());
        }
        long offset = slba * ns.blockSize(), length = nlb * ns.blockSize();
        if (ns.memory() != null) {
            ns.memory().asSlice(offset, length).fill((byte) 0);
            return Nvme.SC_SUCCESS;
        }
        return q.offload(c, null, () -> {
            ns.zero(offset, length);
            return Nvme.SC_SUCCESS;
        }, null);
    }

    /** Zeroes the (offset, length) pairs of DSM {@code ranges}: inline for RAM, on the I/O executor for a file. */
    private static int zero(HostQueue q, CommandSlot c, Namespace ns, long[] ranges) {
        if (ns.memory() != null) {
            for (int i = 0; i < ranges.length; i += 2) {
                ns.memory().asSlice(ranges[i], ranges[i + 1]).fill((byte) 0);
            }
            return Nvme.SC_SUCCESS;
        }
        return q.offload(c, null, () -> {
            for (int i = 0; i < ranges.length; i += 2) {
                ns.zero(ranges[i], ranges[i + 1]);
            }
            return Nvme.SC_SUCCESS;
        }, null);
    }

    /** Dataset Management: with AD the ranges are deallocated, and read back as zeros (DLFEAT 001b). */
    private static int dsm(NvmeofTarget t, HostQueue q, CommandSlot c, MemorySegment cap) {
        Namespace ns = t.namespace;
        int nr = (le32(cap, Nvme.SQE_CDW10) & 0xff) + 1;
        boolean deallocate = (le32(cap, Nvme.SQE_CDW11) & DSM_AD) != 0;
        int len = nr * RANGE_SIZE;
        int st = q.expectAtLeast(c, len); // only the NR ranges are read
        if (st != Nvme.SC_SUCCESS) {
            return st;
        }
        ByteBuffer b = t.pool.take(len);
        long[] ranges = new long[2 * nr];
        try {
            MemorySegment r = MemorySegment.ofBuffer(b);
            st = q.fromHost(c, cap, r);
            if (st != Nvme.SC_SUCCESS) {
                return st;
            }
            for (int i = 0; i < nr; i++) {
                long nlb = Integer.toUnsignedLong(le32(r, i * RANGE_SIZE + RANGE_NLB));
                long slba = le64(r, i * RANGE_SIZE + RANGE_SLBA);
                if (!inRange(ns, slba, nlb)) {
                    return q.refuse(Nvme.SC_LBA_RANGE, "lba range", "DSM range " + i + ": " + nlb + " blocks at LBA "
                            + Long.toUnsignedString(slba) + " of " + ns.blocks());
                }
                ranges[2 * i] = slba * ns.blockSize();
                ranges[2 * i + 1] = nlb * ns.blockSize();
            }
        } finally {
            t.pool.give(b);
        }
        return deallocate ? zero(q, c, ns, ranges) : Nvme.SC_SUCCESS;
    }
}
