package ernic.vfiouser.pci;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A PCI type-0 configuration space: header, memory BARs with sizing, and a capability list (power
 * management, MSI-X, PCI Express). Writes honour read-only, writable and write-1-to-clear bits.
 * 256 bytes, or 4096 when it has a PCI Express capability.
 *
 * <p>The space is three byte arrays: the values, a writable mask and a write-1-to-clear mask. Every
 * register, BARs included, is described by those masks (a BAR's writable bits are its address bits,
 * so writing all ones reads back the size mask), so an access of any width at any offset is handled
 * byte by byte. Two fields need more than a mask: a PMCSR power state the function does not support
 * and a Max_Payload_Size above the supported one are discarded, as the specifications ask.
 *
 * <p>API FROZEN: the bodies are being written; keep the signatures.
 */
public final class PciConfigSpace {
    /** Where MSI-X lives: table size (vectors), BAR and offset of the table and of the PBA. */
    public record Msix(int tableSize, int tableBar, long tableOffset, int pbaBar, long pbaOffset) {}

    // Type-0 header (PCI Local Bus 3.0, 6.1).
    static final int VENDOR_ID = 0x00, DEVICE_ID = 0x02, COMMAND = 0x04, STATUS = 0x06, REVISION_ID = 0x08,
            CLASS_CODE = 0x09, CACHE_LINE_SIZE = 0x0c, LATENCY_TIMER = 0x0d, HEADER_TYPE = 0x0e, BIST = 0x0f,
            BAR0 = 0x10, CARDBUS_CIS = 0x28, SUBSYSTEM_VENDOR_ID = 0x2c, SUBSYSTEM_ID = 0x2e, EXPANSION_ROM = 0x30,
            CAPABILITIES_POINTER = 0x34, INTERRUPT_LINE = 0x3c, INTERRUPT_PIN = 0x3d;
    /** Command: I/O space, memory space, bus master, parity error response, SERR# enable, interrupt disable. */
    static final int COMMAND_IO = 1, COMMAND_MEMORY = 1 << 1, COMMAND_BUS_MASTER = 1 << 2, COMMAND_PARITY = 1 << 6,
            COMMAND_SERR = 1 << 8, COMMAND_INTX_DISABLE = 1 << 10;
    static final int COMMAND_WRITABLE = COMMAND_IO | COMMAND_MEMORY | COMMAND_BUS_MASTER | COMMAND_PARITY
            | COMMAND_SERR | COMMAND_INTX_DISABLE;
    /** Status: capabilities list (RO); master data parity error, signaled/received target abort, received
     *  master abort, signaled system error, detected parity error (all RW1C). */
    static final int STATUS_CAP_LIST = 1 << 4, STATUS_RW1C = 1 << 8 | 0xf800;
    /** Memory BAR low bits: bits 2:1 type (10b = 64-bit), bit 3 prefetchable. */
    static final int BAR_TYPE_64 = 0b100, BAR_PREFETCHABLE = 0b1000;

    /** Capabilities start after the header; the list lives in 0x40..0xff (PCI Local Bus 3.0, 6.7). */
    static final int FIRST_CAPABILITY = 0x40, CONFIG_SIZE = 256, EXPRESS_CONFIG_SIZE = 4096,
            EXTENDED_CAPABILITIES = 0x100;
    static final int CAP_ID_PM = 0x01, CAP_ID_EXPRESS = 0x10, CAP_ID_MSIX = 0x11;
    static final int CAP_NEXT = 1;

    // Power Management capability (PCI Bus Power Management Interface 1.2, 3.2): 8 bytes.
    static final int PM_LENGTH = 8, PM_PMC = 2, PM_PMCSR = 4;
    /** PMC version 011b = PM 1.2; no D1/D2, no PME. */
    static final int PM_PMC_VALUE = 0x0003;
    /** PMCSR bits 1:0 PowerState; bit 3 No_Soft_Reset: D3hot to D0 keeps the state, because nothing
     *  here resets the function on that transition. */
    static final int PMCSR_POWER_STATE = 0b11, PMCSR_NO_SOFT_RESET = 1 << 3;

    // MSI-X capability (PCI Local Bus 3.0, 6.8.2): 12 bytes.
    static final int MSIX_LENGTH = 12, MSIX_CONTROL = 2, MSIX_TABLE = 4, MSIX_PBA = 8;
    static final int MSIX_CONTROL_TABLE_SIZE = 0x7ff, MSIX_CONTROL_MASK_ALL = 1 << 14, MSIX_CONTROL_ENABLE = 1 << 15;
    static final int MSIX_MAX_VECTORS = 2048, MSIX_ENTRY_SIZE = 16;

    // PCI Express capability (PCIe Base 3.0, 7.8), version 2: 60 bytes.
    static final int EXP_LENGTH = 0x3c, EXP_FLAGS = 0x02, EXP_DEVCAP = 0x04, EXP_DEVCTL = 0x08, EXP_DEVSTA = 0x0a,
            EXP_LNKCAP = 0x0c, EXP_LNKCTL = 0x10, EXP_LNKSTA = 0x12, EXP_DEVCAP2 = 0x24, EXP_DEVCTL2 = 0x28,
            EXP_LNKCAP2 = 0x2c, EXP_LNKCTL2 = 0x30;
    /** Capability version 2, device/port type 0 (PCI Express endpoint). */
    static final int EXP_FLAGS_VALUE = 0x0002;
    /** Max_Payload_Size supported 001b (256 bytes), extended tag field supported, role-based error
     *  reporting (required since PCIe 1.1). */
    static final int EXP_DEVCAP_MPS = 1, EXP_DEVCAP_VALUE = EXP_DEVCAP_MPS | 1 << 5 | 1 << 15;
    /** Default: relaxed ordering and no snoop enabled, max read request 010b (512 bytes), MPS 000b. */
    static final int EXP_DEVCTL_VALUE = 1 << 4 | 1 << 11 | 0b010 << 12;
    /** Error reporting enables 3:0, relaxed ordering, MPS 7:5, extended tag, no snoop, max read request
     *  14:12. Phantom functions, aux power PM and FLR are not supported, so read 0. */
    static final int EXP_DEVCTL_WRITABLE = 0x01ff | 1 << 11 | 0b111 << 12;
    static final int EXP_DEVCTL_MPS_SHIFT = 5;
    /** Correctable, non-fatal, fatal, unsupported request detected. */
    static final int EXP_DEVSTA_RW1C = 0x000f;
    /** ASPM optionality compliance (bit 22) with no ASPM support advertised. */
    static final int EXP_LNKCAP_ASPM_OPTIONALITY = 1 << 22;
    /** ASPM control 1:0, read completion boundary, common clock configuration, extended synch. */
    static final int EXP_LNKCTL_WRITABLE = 0b11 | 1 << 3 | 1 << 6 | 1 << 7;
    /** Target link speed 3:0. */
    static final int EXP_LNKCTL2_WRITABLE = 0xf;
    private static final int[] LINK_WIDTHS = {1, 2, 4, 8, 12, 16, 32};

    private final byte[] values;
    private final byte[] writable;
    private final byte[] rw1c;
    private final byte[] powerOn;
    private final Msix msix;
    private final int pmOffset, msixOffset, expressOffset;
    private final long[] barSizes;

    private PciConfigSpace(byte[] values, byte[] writable, byte[] rw1c, Msix msix, int pmOffset, int msixOffset,
                           int expressOffset, long[] barSizes) {
        this.barSizes = barSizes;
        this.values = values;
        this.writable = writable;
        this.rw1c = rw1c;
        this.powerOn = values.clone();
        this.msix = msix;
        this.pmOffset = pmOffset;
        this.msixOffset = msixOffset;
        this.expressOffset = expressOffset;
    }

    public static Builder builder() {
        return new Builder();
    }

    public static final class Builder {
        /** The capabilities a builder adds: each one's capability ID (its first byte) and its length. */
        private enum Cap {
            PM(CAP_ID_PM, PM_LENGTH), MSIX(CAP_ID_MSIX, MSIX_LENGTH), EXPRESS(CAP_ID_EXPRESS, EXP_LENGTH);

            final int id, length;

            Cap(int id, int length) {
                this.id = id;
                this.length = length;
            }
        }

        private int vendorId, deviceId, subsystemVendorId, subsystemId, classCode, revision, interruptPin;
        private final long[] barSize = new long[6];
        private final boolean[] bar64 = new boolean[6], barPrefetchable = new boolean[6], barUpperHalf = new boolean[6];
        private final List<Cap> caps = new ArrayList<>();
        private Msix msix;
        private int linkSpeed, linkWidth;

        private Builder() {}

        public Builder vendorId(int v) { vendorId = bits(v, 16, "vendor id"); return this; }
        public Builder deviceId(int v) { deviceId = bits(v, 16, "device id"); return this; }
        public Builder subsystemVendorId(int v) { subsystemVendorId = bits(v, 16, "subsystem vendor id"); return this; }
        public Builder subsystemId(int v) { subsystemId = bits(v, 16, "subsystem id"); return this; }
        /** 24-bit class code: base class << 16 | sub-class << 8 | prog-if. */
        public Builder classCode(int v) { classCode = bits(v, 24, "class code"); return this; }
        public Builder revision(int v) { revision = bits(v, 8, "revision"); return this; }
        /** 0 none, 1 INTA# ... 4 INTD#. */
        public Builder interruptPin(int v) {
            if (v < 0 || v > 4) {
                throw new IllegalArgumentException("interrupt pin " + v);
            }
            interruptPin = v;
            return this;
        }

        /** A memory BAR of {@code size} bytes (a power of two, at least 16); a 64-bit BAR also uses index + 1. */
        public Builder memoryBar(int index, long size, boolean is64bit, boolean prefetchable) {
            int last = is64bit ? 4 : 5;
            if (index < 0 || index > last) {
                throw new IllegalArgumentException((is64bit ? "64-bit " : "") + "BAR index " + index);
            }
            // 16 bytes is the smallest memory BAR (bits 3:0 are flags); a 32-bit BAR needs an address bit.
            long max = is64bit ? 1L << 62 : 1L << 31;
            if (size < 16 || size > max || Long.bitCount(size) != 1) {
                throw new IllegalArgumentException("BAR " + index + " size " + size);
            }
            if (used(index) || is64bit && used(index + 1)) {
                throw new IllegalArgumentException("BAR " + index + " already in use");
            }
            barSize[index] = size;
            bar64[index] = is64bit;
            barPrefetchable[index] = prefetchable;
            if (is64bit) {
                barUpperHalf[index + 1] = true;
            }
            return this;
        }

        public Builder powerManagement() { return addCap(Cap.PM); }

        public Builder msix(Msix msix) {
            Objects.requireNonNull(msix, "msix");
            if (msix.tableSize() < 1 || msix.tableSize() > MSIX_MAX_VECTORS) {
                throw new IllegalArgumentException("MSI-X table size " + msix.tableSize());
            }
            checkBirOffset("table", msix.tableBar(), msix.tableOffset());
            checkBirOffset("PBA", msix.pbaBar(), msix.pbaOffset());
            addCap(Cap.MSIX);
            this.msix = msix;
            return this;
        }

        /** A PCI Express endpoint capability; linkSpeed 1..5 (2.5 .. 32 GT/s), linkWidth 1..32 lanes. */
        public Builder pciExpress(int linkSpeed, int linkWidth) {
            if (linkSpeed < 1 || linkSpeed > 5) {
                throw new IllegalArgumentException("link speed " + linkSpeed);
            }
            // The Maximum Link Width field has encodings only for these widths.
            boolean known = false;
            for (int w : LINK_WIDTHS) {
                known |= w == linkWidth;
            }
            if (!known) {
                throw new IllegalArgumentException("link width x" + linkWidth + " (x1, x2, x4, x8, x12, x16, x32)");
            }
            addCap(Cap.EXPRESS);
            this.linkSpeed = linkSpeed;
            this.linkWidth = linkWidth;
            return this;
        }

        public PciConfigSpace build() {
            if (msix != null) {
                checkMsixInBars();
            }
            boolean express = caps.contains(Cap.EXPRESS);
            int size = express ? EXPRESS_CONFIG_SIZE : CONFIG_SIZE;
            Space s = new Space(size);

            s.value(VENDOR_ID, 2, vendorId);
            s.value(DEVICE_ID, 2, deviceId);
            s.writable(COMMAND, 2, COMMAND_WRITABLE);
            s.value(STATUS, 2, caps.isEmpty() ? 0 : STATUS_CAP_LIST);
            s.rw1c(STATUS, 2, STATUS_RW1C);
            s.value(REVISION_ID, 1, revision);
            s.value(CLASS_CODE, 3, classCode);
            s.writable(CACHE_LINE_SIZE, 1, 0xff);
            // PCIe Base 3.0, 7.5.1.3: the latency timer does not apply to PCI Express and is hardwired to 0.
            s.writable(LATENCY_TIMER, 1, express ? 0 : 0xff);
            for (int i = 0; i < 6; i++) {
                if (barSize[i] == 0) {
                    continue;
                }
                int at = BAR0 + 4 * i;
                long addressMask = ~(barSize[i] - 1);
                s.value(at, 4, (bar64[i] ? BAR_TYPE_64 : 0) | (barPrefetchable[i] ? BAR_PREFETCHABLE : 0));
                s.writable(at, 4, addressMask & ~0xfL);
                if (bar64[i]) {
                    s.writable(at + 4, 4, addressMask >>> 32);
                }
            }
            s.value(SUBSYSTEM_VENDOR_ID, 2, subsystemVendorId);
            s.value(SUBSYSTEM_ID, 2, subsystemId);
            s.writable(INTERRUPT_LINE, 1, 0xff);
            s.value(INTERRUPT_PIN, 1, interruptPin);

            int pm = 0, msixAt = 0, exp = 0;
            int at = FIRST_CAPABILITY, previousNext = CAPABILITIES_POINTER;
            for (Cap cap : caps) {
                s.value(previousNext, 1, at);
                previousNext = at + CAP_NEXT;
                s.value(at, 1, cap.id);
                switch (cap) {
                    case PM -> {
                        pm = at;
                        s.value(at + PM_PMC, 2, PM_PMC_VALUE);
                        s.value(at + PM_PMCSR, 2, PMCSR_NO_SOFT_RESET);
                        s.writable(at + PM_PMCSR, 2, PMCSR_POWER_STATE);
                    }
                    case MSIX -> {
                        msixAt = at;
                        s.value(at + MSIX_CONTROL, 2, msix.tableSize() - 1);
                        s.writable(at + MSIX_CONTROL, 2, MSIX_CONTROL_MASK_ALL | MSIX_CONTROL_ENABLE);
                        s.value(at + MSIX_TABLE, 4, msix.tableOffset() | msix.tableBar());
                        s.value(at + MSIX_PBA, 4, msix.pbaOffset() | msix.pbaBar());
                    }
                    case EXPRESS -> {
                        exp = at;
                        s.value(at + EXP_FLAGS, 2, EXP_FLAGS_VALUE);
                        s.value(at + EXP_DEVCAP, 4, EXP_DEVCAP_VALUE);
                        s.value(at + EXP_DEVCTL, 2, EXP_DEVCTL_VALUE);
                        s.writable(at + EXP_DEVCTL, 2, EXP_DEVCTL_WRITABLE);
                        s.rw1c(at + EXP_DEVSTA, 2, EXP_DEVSTA_RW1C);
                        s.value(at + EXP_LNKCAP, 4, linkSpeed | linkWidth << 4 | EXP_LNKCAP_ASPM_OPTIONALITY);
                        s.writable(at + EXP_LNKCTL, 2, EXP_LNKCTL_WRITABLE);
                        // A virtual link trains at once to its maximum.
                        s.value(at + EXP_LNKSTA, 2, linkSpeed | linkWidth << 4);
                        // Supported Link Speeds Vector, bits 7:1: bit n set = speed encoding n supported.
                        s.value(at + EXP_LNKCAP2, 4, ((1 << linkSpeed) - 1) << 1);
                        // Target Link Speed defaults to the highest supported speed.
                        s.value(at + EXP_LNKCTL2, 2, linkSpeed);
                        s.writable(at + EXP_LNKCTL2, 2, EXP_LNKCTL2_WRITABLE);
                    }
                }
                at = (at + cap.length + 3) & ~3;
            }
            // The last next pointer stays 0; with an extended space, the header at 0x100 stays 0 too,
            // which is how PCIe Base 3.0, 7.9.2 says "no extended capabilities".
            if (at > CONFIG_SIZE) {
                throw new IllegalStateException("capabilities end at 0x" + Integer.toHexString(at));
            }
            return new PciConfigSpace(s.values, s.writable, s.rw1c, msix, pm, msixAt, exp, barSize.clone());
        }

        private Builder addCap(Cap cap) {
            if (caps.contains(cap)) {
                throw new IllegalStateException(cap + " capability added twice");
            }
            caps.add(cap);
            return this;
        }

        private boolean used(int index) {
            return barSize[index] != 0 || barUpperHalf[index];
        }

        /** The offset shares a dword with the BIR in bits 2:0, so it is 8-byte aligned and below 4 GiB. */
        private static void checkBirOffset(String what, int bir, long offset) {
            if (bir < 0 || bir > 5) {
                throw new IllegalArgumentException("MSI-X " + what + " BIR " + bir);
            }
            if (offset < 0 || offset > 0xffff_fff8L || (offset & 7) != 0) {
                throw new IllegalArgumentException("MSI-X " + what + " offset 0x" + Long.toHexString(offset));
            }
        }

        private void checkMsixInBars() {
            long tableLength = (long) msix.tableSize() * MSIX_ENTRY_SIZE;
            long pbaLength = (msix.tableSize() + 63L) / 64 * 8; // one bit per vector, in qwords
            checkInBar("table", msix.tableBar(), msix.tableOffset(), tableLength);
            checkInBar("PBA", msix.pbaBar(), msix.pbaOffset(), pbaLength);
            if (msix.tableBar() == msix.pbaBar() && msix.tableOffset() < msix.pbaOffset() + pbaLength
                    && msix.pbaOffset() < msix.tableOffset() + tableLength) {
                throw new IllegalArgumentException("MSI-X table and PBA overlap");
            }
        }

        private void checkInBar(String what, int bir, long offset, long length) {
            if (barSize[bir] == 0) {
                throw new IllegalArgumentException("MSI-X " + what + " in BAR " + bir + ", which is not a memory BAR");
            }
            if (offset + length > barSize[bir]) {
                throw new IllegalArgumentException("MSI-X " + what + " does not fit in BAR " + bir);
            }
        }

        private static int bits(int v, int width, String what) {
            if (v < 0 || v >= 1 << width) {
                throw new IllegalArgumentException(what + " 0x" + Integer.toHexString(v));
            }
            return v;
        }
    }

    /** The three arrays while a builder fills them. */
    private static final class Space {
        final byte[] values, writable, rw1c;

        Space(int size) {
            values = new byte[size];
            writable = new byte[size];
            rw1c = new byte[size];
        }

        void value(int offset, int width, long v) { put(values, offset, width, v); }
        void writable(int offset, int width, long mask) { put(writable, offset, width, mask); }
        void rw1c(int offset, int width, long mask) { put(rw1c, offset, width, mask); }

        private static void put(byte[] a, int offset, int width, long v) {
            for (int i = 0; i < width; i++) {
                a[offset + i] = (byte) (v >>> 8 * i);
            }
        }
    }

    /** 256, or 4096 with a PCI Express capability. */
    public int size() {
        return values.length;
    }

    /** Reads {@code dst.byteSize()} bytes at {@code offset}; the caller has checked the range. */
    public void read(int offset, MemorySegment dst) {
        int n = checkRange(offset, dst.byteSize());
        MemorySegment.copy(values, offset, dst, ValueLayout.JAVA_BYTE, 0, n);
    }

    /** Writes {@code src} at {@code offset}, bit by bit as the hardware would; the caller has checked the range. */
    public void write(int offset, MemorySegment src) {
        int n = checkRange(offset, src.byteSize());
        int powerState = pmOffset == 0 ? 0 : readU16(pmOffset + PM_PMCSR) & PMCSR_POWER_STATE;
        int payload = expressOffset == 0 ? 0 : readU16(expressOffset + EXP_DEVCTL) & 0b111 << EXP_DEVCTL_MPS_SHIFT;
        for (int i = 0; i < n; i++) {
            int at = offset + i;
            int b = src.get(ValueLayout.JAVA_BYTE, i);
            int v = values[at] & ~writable[at] | b & writable[at];
            values[at] = (byte) (v & ~(b & rw1c[at]));
        }
        if (pmOffset != 0) {
            // PM 1.2, 5.4.1: a write of an unsupported state (D1, D2) completes but changes nothing.
            int state = readU16(pmOffset + PM_PMCSR) & PMCSR_POWER_STATE;
            if (state == 1 || state == 2) {
                values[pmOffset + PM_PMCSR] = (byte) (values[pmOffset + PM_PMCSR] & ~PMCSR_POWER_STATE | powerState);
            }
        }
        if (expressOffset != 0) {
            // PCIe Base 3.0, 7.8.4: software may not set Max_Payload_Size above what the function supports.
            int at = expressOffset + EXP_DEVCTL;
            if ((values[at] >> EXP_DEVCTL_MPS_SHIFT & 0b111) > EXP_DEVCAP_MPS) {
                values[at] = (byte) (values[at] & ~(0b111 << EXP_DEVCTL_MPS_SHIFT) | payload);
            }
        }
    }

    public int readU8(int offset) {
        checkRange(offset, 1);
        return values[offset] & 0xff;
    }

    public int readU16(int offset) {
        checkRange(offset, 2);
        return values[offset] & 0xff | (values[offset + 1] & 0xff) << 8;
    }

    public int readU32(int offset) {
        checkRange(offset, 4);
        return readU16(offset) | readU16(offset + 2) << 16;
    }

    /** The interrupt pin: 0 none, 1 INTA# ... 4 INTD# (read-only). */
    public int interruptPin() {
        return readU8(INTERRUPT_PIN);
    }

    /** The size of the memory BAR {@code index} declares (0-5; 0: none, or the upper half of a 64-bit BAR). */
    public long barSize(int index) {
        return barSizes[index];
    }

    /** The MSI-X capability, or null. */
    public Msix msix() {
        return msix;
    }

    public boolean msixEnabled() {
        return msixOffset != 0 && (readU16(msixOffset + MSIX_CONTROL) & MSIX_CONTROL_ENABLE) != 0;
    }

    public boolean msixFunctionMasked() {
        return msixOffset != 0 && (readU16(msixOffset + MSIX_CONTROL) & MSIX_CONTROL_MASK_ALL) != 0;
    }

    public boolean busMasterEnabled() {
        return (readU16(COMMAND) & COMMAND_BUS_MASTER) != 0;
    }

    public boolean memorySpaceEnabled() {
        return (readU16(COMMAND) & COMMAND_MEMORY) != 0;
    }

    public boolean intxDisabled() {
        return (readU16(COMMAND) & COMMAND_INTX_DISABLE) != 0;
    }

    /** Back to the power-on values (device reset). */
    public void reset() {
        System.arraycopy(powerOn, 0, values, 0, values.length);
    }

    /** Offset of a capability by id in the standard list, or 0 (for tests and devices that extend one). */
    int capabilityOffset(int id) {
        return switch (id) {
            case CAP_ID_PM -> pmOffset;
            case CAP_ID_MSIX -> msixOffset;
            case CAP_ID_EXPRESS -> expressOffset;
            default -> 0;
        };
    }

    /** Sets bits the way the function itself would (an error status bit, say), ignoring the masks. */
    void setBits(int offset, int width, long bits) {
        checkRange(offset, width);
        for (int i = 0; i < width; i++) {
            values[offset + i] |= (byte) (bits >>> 8 * i);
        }
    }

    private int checkRange(int offset, long length) {
        if (length < 0 || length > values.length) {
            throw new IndexOutOfBoundsException("config space access of " + length + " bytes");
        }
        Objects.checkFromIndexSize(offset, (int) length, values.length);
        return (int) length;
    }
}
