package ernic.nvmeof;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The data structures admin commands return, written into a zeroed segment with the offsets of the NVMe
 * base specification (Identify Controller / Namespace, namespace lists and descriptors) and of NVMe-oF
 * (the discovery log page). Offsets are named once here, with the Linux nvme.h field names.
 */
final class AdminPages {
    private AdminPages() {}

    private static final ValueLayout.OfShort LE16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt LE32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LE64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    // struct nvme_id_ctrl
    static final int IDC_VID = 0, IDC_SSVID = 2, IDC_SN = 4, IDC_MN = 24, IDC_FR = 64, IDC_RAB = 72, IDC_CMIC = 76,
            IDC_MDTS = 77, IDC_CNTLID = 78, IDC_VER = 80, IDC_CTRATT = 96, IDC_CNTRLTYPE = 111, IDC_ACL = 258,
            IDC_AERL = 259, IDC_FRMW = 260, IDC_LPA = 261, IDC_ELPE = 262, IDC_NPSS = 263, IDC_WCTEMP = 266,
            IDC_CCTEMP = 268, IDC_KAS = 320, IDC_SQES = 512, IDC_CQES = 513, IDC_MAXCMD = 514, IDC_NN = 516,
            IDC_ONCS = 520, IDC_VWC = 525, IDC_SGLS = 536, IDC_MNAN = 540, IDC_SUBNQN = 768, IDC_IOCCSZ = 1792,
            IDC_IORCSZ = 1796, IDC_ICDOFF = 1800, IDC_CTRATTR = 1802, IDC_MSDBD = 1803;
    // struct nvme_id_ns
    static final int IDN_NSZE = 0, IDN_NCAP = 8, IDN_NUSE = 16, IDN_NSFEAT = 24, IDN_NLBAF = 25, IDN_FLBAS = 26,
            IDN_NMIC = 30, IDN_DLFEAT = 33, IDN_NVMCAP = 48, IDN_NGUID = 104, IDN_LBAF0 = 128;
    // struct nvmf_disc_rsp_page_hdr and nvmf_disc_rsp_page_entry
    static final int DISC_GENCTR = 0, DISC_NUMREC = 8, DISC_RECFMT = 16, DISC_ENTRIES = 1024, DISC_ENTRY_SIZE = 1024;
    static final int DE_TRTYPE = 0, DE_ADRFAM = 1, DE_SUBTYPE = 2, DE_TREQ = 3, DE_PORTID = 4, DE_CNTLID = 6,
            DE_ASQSZ = 8, DE_TRSVCID = 32, DE_SUBNQN = 256, DE_TRADDR = 512, DE_TSAS = 768;
    static final int TRTYPE_RDMA = 1, ADRFAM_IPV4 = 1, SUBTYPE_NVME = 2, SUBTYPE_CURRENT_DISCOVERY = 3;
    static final int RDMA_QPTYPE_CONNECTED = 1, RDMA_PRTYPE_NOT_SPECIFIED = 1, RDMA_CMS_RDMA_CM = 1;
    // SMART / health log (512 bytes)
    static final int SMART_SIZE = 512, SMART_TEMP = 1, SMART_AVAIL_SPARE = 3, SMART_SPARE_THRESH = 4,
            SMART_DATA_UNITS_READ = 32, SMART_DATA_UNITS_WRITTEN = 48, SMART_HOST_READS = 64,
            SMART_HOST_WRITES = 80, SMART_POWER_CYCLES = 112, SMART_POWER_ON_HOURS = 128;
    static final int FW_SLOT_SIZE = 512, FW_AFI = 0, FW_FRS1 = 8;
    static final int ERROR_ENTRY_SIZE = 64, CHANGED_NS_SIZE = 4096;

    /** The firmware revision reported (Identify FR, firmware slot 1). */
    static final String FIRMWARE = "0.1.0";
    /** Composite temperature and thresholds in Kelvin: a cool device, warning at 70 C, critical at 100 C. */
    static final int TEMP_K = 313, WCTEMP_K = 343, CCTEMP_K = 373;

    static void le16(MemorySegment s, long off, int v) { s.set(LE16, off, (short) v); }
    static void le32(MemorySegment s, long off, int v) { s.set(LE32, off, v); }
    static void le64(MemorySegment s, long off, long v) { s.set(LE64, off, v); }
    static int le16(MemorySegment s, long off) { return Short.toUnsignedInt(s.get(LE16, off)); }
    static int le32(MemorySegment s, long off) { return s.get(LE32, off); }
    static long le64(MemorySegment s, long off) { return s.get(LE64, off); }

    /** ASCII, padded with spaces to {@code width} (Identify SN/MN/FR, discovery TRSVCID/TRADDR). */
    static void spacePadded(MemorySegment s, long off, int width, String text) {
        byte[] b = text.getBytes(StandardCharsets.US_ASCII);
        for (int i = 0; i < width; i++) {
            s.set(ValueLayout.JAVA_BYTE, off + i, i < b.length ? b[i] : (byte) ' ');
        }
    }

    /** ASCII, NUL-terminated within {@code width} (NQN fields); the rest stays zero. */
    static void nulPadded(MemorySegment s, long off, int width, String text) {
        byte[] b = text.getBytes(StandardCharsets.US_ASCII);
        MemorySegment.copy(b, 0, s, ValueLayout.JAVA_BYTE, off, Math.min(b.length, width - 1));
    }

    /** Identify Controller (CNS 01h) of an I/O or the discovery controller. */
    static void identifyController(MemorySegment s, NvmeofTarget t, Controller c) {
        spacePadded(s, IDC_SN, 20, t.options.serial());
        spacePadded(s, IDC_MN, 40, t.options.model());
        spacePadded(s, IDC_FR, 8, FIRMWARE);
        s.set(ValueLayout.JAVA_BYTE, IDC_RAB, (byte) 6);
        s.set(ValueLayout.JAVA_BYTE, IDC_MDTS, (byte) NvmeofTarget.MDTS);
        le16(s, IDC_CNTLID, c.cntlid);
        le32(s, IDC_VER, Nvme.VERSION_1_3);
        // 128-bit host identifier (required by fabrics); keep-alive is traffic based (any command resets it).
        le32(s, IDC_CTRATT, 1 | 1 << 6);
        s.set(ValueLayout.JAVA_BYTE, IDC_CNTRLTYPE, (byte) (c.discovery ? Nvme.CNTRLTYPE_DISCOVERY : Nvme.CNTRLTYPE_IO));
        s.set(ValueLayout.JAVA_BYTE, IDC_ACL, (byte) 3);
        s.set(ValueLayout.JAVA_BYTE, IDC_AERL, (byte) (Controller.MAX_AERS - 1));
        s.set(ValueLayout.JAVA_BYTE, IDC_FRMW, (byte) (1 << 1 | 1));  // one slot, read-only
        s.set(ValueLayout.JAVA_BYTE, IDC_LPA, (byte) (1 << 2));       // log page offsets (extended data)
        s.set(ValueLayout.JAVA_BYTE, IDC_ELPE, (byte) 0);
        s.set(ValueLayout.JAVA_BYTE, IDC_NPSS, (byte) 0);
        le16(s, IDC_WCTEMP, WCTEMP_K);
        le16(s, IDC_CCTEMP, CCTEMP_K);
        le16(s, IDC_KAS, NvmeofTarget.KAS_100MS);
        s.set(ValueLayout.JAVA_BYTE, IDC_SQES, (byte) 0x66);
        s.set(ValueLayout.JAVA_BYTE, IDC_CQES, (byte) 0x44);
        le16(s, IDC_MAXCMD, NvmeofTarget.MAX_CMD);
        // SGLs: byte-aligned, keyed data blocks, offset-based in-capsule data (SAOS, bit 20).
        le32(s, IDC_SGLS, 1 | 1 << 2 | 1 << 20);
        if (c.discovery) {
            nulPadded(s, IDC_SUBNQN, Nvme.NQN_FIELD, Nvme.DISCOVERY_NQN);
            return;
        }
        s.set(ValueLayout.JAVA_BYTE, IDC_CMIC, (byte) (1 << 1));   // more than one controller may exist
        le32(s, IDC_NN, t.options.nsid());
        le32(s, IDC_MNAN, 1);
        le16(s, IDC_ONCS, 1 << 2 | 1 << 3);                          // Dataset Management, Write Zeroes
        s.set(ValueLayout.JAVA_BYTE, IDC_VWC, (byte) 1);             // a volatile write cache is present
        nulPadded(s, IDC_SUBNQN, Nvme.NQN_FIELD, t.options.nqn());
        le32(s, IDC_IOCCSZ, (Nvme.SQE_SIZE + NvmeofTarget.IN_CAPSULE_DATA) / 16);
        le32(s, IDC_IORCSZ, Nvme.CQE_SIZE / 16);
        le16(s, IDC_ICDOFF, 0);
        s.set(ValueLayout.JAVA_BYTE, IDC_CTRATTR, (byte) 0);         // dynamic controller model
        s.set(ValueLayout.JAVA_BYTE, IDC_MSDBD, (byte) 1);
    }

    /** Identify Namespace (CNS 00h). */
    static void identifyNamespace(MemorySegment s, NvmeofTarget t) {
        Namespace ns = t.namespace;
        le64(s, IDN_NSZE, ns.blocks());
        le64(s, IDN_NCAP, ns.blocks());
        le64(s, IDN_NUSE, ns.blocks());
        s.set(ValueLayout.JAVA_BYTE, IDN_NLBAF, (byte) 0);           // one LBA format (0's based)
        s.set(ValueLayout.JAVA_BYTE, IDN_FLBAS, (byte) 0);
        s.set(ValueLayout.JAVA_BYTE, IDN_NMIC, (byte) 1);            // may be shared by several controllers
        // Deallocated blocks read as zeros (001b) and Write Zeroes may deallocate (bit 3): we zero them.
        s.set(ValueLayout.JAVA_BYTE, IDN_DLFEAT, (byte) (1 << 3 | 1));
        le64(s, IDN_NVMCAP, ns.bytes());
        MemorySegment.copy(t.nguid, 0, s, ValueLayout.JAVA_BYTE, IDN_NGUID, 16);
        // lbaf[0]: ms 0, lbads = log2(block size), rp 0 (best).
        s.set(ValueLayout.JAVA_BYTE, IDN_LBAF0 + 2, (byte) Integer.numberOfTrailingZeros(ns.blockSize()));
    }

    /** Active namespace ID list (CNS 02h): NSIDs greater than {@code after}, ascending, 0-terminated. */
    static void activeNamespaces(MemorySegment s, NvmeofTarget t, int after) {
        if (Integer.compareUnsigned(t.options.nsid(), after) > 0) {
            le32(s, 0, t.options.nsid());
        }
    }

    /** Namespace identification descriptor list (CNS 03h): NGUID, UUID, command set (NVM). */
    static void namespaceDescriptors(MemorySegment s, NvmeofTarget t) {
        long off = 0;
        off = descriptor(s, off, Nvme.NIDT_NGUID, t.nguid);
        off = descriptor(s, off, Nvme.NIDT_UUID, t.uuid);
        descriptor(s, off, Nvme.NIDT_CSI, new byte[] {0});
    }

    private static long descriptor(MemorySegment s, long off, int type, byte[] id) {
        s.set(ValueLayout.JAVA_BYTE, off, (byte) type);
        s.set(ValueLayout.JAVA_BYTE, off + 1, (byte) id.length);
        MemorySegment.copy(id, 0, s, ValueLayout.JAVA_BYTE, off + 4, id.length);
        return off + 4 + id.length;
    }

    /** SMART / Health Information (LID 02h), for the whole controller. */
    static void smart(MemorySegment s, NvmeofTarget t, long powerOnHours) {
        le16(s, SMART_TEMP, TEMP_K);
        s.set(ValueLayout.JAVA_BYTE, SMART_AVAIL_SPARE, (byte) 100);
        s.set(ValueLayout.JAVA_BYTE, SMART_SPARE_THRESH, (byte) 10);
        NvmeofCounters c = t.counters;
        // Data units are thousands of 512-byte units, rounded up.
        le64(s, SMART_DATA_UNITS_READ, ceilDiv(c.traffic.get(NvmeofCounters.Traffic.BYTES_READ), 512_000));
        le64(s, SMART_DATA_UNITS_WRITTEN, ceilDiv(c.traffic.get(NvmeofCounters.Traffic.BYTES_WRITTEN), 512_000));
        le64(s, SMART_HOST_READS, c.commands.get(NvmeofCounters.Command.READ));
        le64(s, SMART_HOST_WRITES, c.commands.get(NvmeofCounters.Command.WRITE));
        le64(s, SMART_POWER_CYCLES, 1);
        le64(s, SMART_POWER_ON_HOURS, powerOnHours);
    }

    private static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }

    /** Firmware Slot Information (LID 03h): slot 1 active. */
    static void firmwareSlots(MemorySegment s) {
        s.set(ValueLayout.JAVA_BYTE, FW_AFI, (byte) 1);
        spacePadded(s, FW_FRS1, 8, FIRMWARE);
    }

    /** The discovery log page size: header and two entries. */
    static final int DISCOVERY_SIZE = DISC_ENTRIES + 2 * DISC_ENTRY_SIZE;

    /** Discovery log page (LID 70h): our NVM subsystem, then the discovery subsystem itself. */
    static void discovery(MemorySegment s, NvmeofTarget t) {
        le64(s, DISC_GENCTR, 1);
        le64(s, DISC_NUMREC, 2);
        le16(s, DISC_RECFMT, 0);
        entry(s.asSlice(DISC_ENTRIES, DISC_ENTRY_SIZE), t, SUBTYPE_NVME, t.options.nqn());
        entry(s.asSlice(DISC_ENTRIES + DISC_ENTRY_SIZE, DISC_ENTRY_SIZE), t, SUBTYPE_CURRENT_DISCOVERY,
                Nvme.DISCOVERY_NQN);
    }

    private static void entry(MemorySegment e, NvmeofTarget t, int subtype, String nqn) {
        e.set(ValueLayout.JAVA_BYTE, DE_TRTYPE, (byte) TRTYPE_RDMA);
        e.set(ValueLayout.JAVA_BYTE, DE_ADRFAM, (byte) ADRFAM_IPV4);
        e.set(ValueLayout.JAVA_BYTE, DE_SUBTYPE, (byte) subtype);
        e.set(ValueLayout.JAVA_BYTE, DE_TREQ, (byte) 0);            // secure channel not specified
        le16(e, DE_PORTID, 1);
        le16(e, DE_CNTLID, Nvme.CNTLID_DYNAMIC);
        le16(e, DE_ASQSZ, Nvme.AQ_DEPTH);
        spacePadded(e, DE_TRSVCID, 32, Integer.toString(t.options.port()));
        nulPadded(e, DE_SUBNQN, Nvme.NQN_FIELD, nqn);
        spacePadded(e, DE_TRADDR, 256, t.options.ip().toString());
        e.set(ValueLayout.JAVA_BYTE, DE_TSAS, (byte) RDMA_QPTYPE_CONNECTED);
        e.set(ValueLayout.JAVA_BYTE, DE_TSAS + 1, (byte) RDMA_PRTYPE_NOT_SPECIFIED);
        e.set(ValueLayout.JAVA_BYTE, DE_TSAS + 2, (byte) RDMA_CMS_RDMA_CM);
    }
}
