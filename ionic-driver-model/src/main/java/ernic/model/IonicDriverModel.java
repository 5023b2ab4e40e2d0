package ernic.model;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The driver model: a Java stand-in for what {@code ionic.ko} does, through a {@link DeviceBinding} (the real
 * vfio-user socket with memfd guest RAM and MSI-X eventfds, or a device in the same JVM). It brings the device up
 * with the same device commands, in the same order, and posts admin commands on a ring in guest memory as the
 * driver does.
 *
 * <p>It is a second implementation of the interface, written from the bring-up reference and the
 * Linux headers' offsets rather than from the device's code, so the two meet only on the wire; it
 * can still share a misreading with the server, which only the real guest settles.
 */
public final class IonicDriverModel implements AutoCloseable {
    // BAR0 (ionic_if.h: union ionic_dev_info_regs, ionic_dev_cmd_regs, intr ctrl)
    static final int BAR0 = DeviceBinding.BAR0, BAR2 = DeviceBinding.BAR2;
    public static final long SIGNATURE = 0x000, VERSION = 0x004, ASIC_TYPE = 0x005, FW_STATUS = 0x007,
            FW_HEARTBEAT = 0x008, FW_VERSION = 0x00c, SERIAL_NUM = 0x02c;
    /** IONIC_DEV_INFO_SIGNATURE ("DEVI"). */
    public static final int DEV_INFO_SIGNATURE = 0x44455649;
    public static final long DEVCMD_DOORBELL = 0x800, DEVCMD_DONE = 0x804, DEVCMD_CMD = 0x808, DEVCMD_COMP = 0x848,
            DEVCMD_DATA = 0x888, DEVCMD_END = 0x1000;
    /** Bytes of the data window (union ionic_dev_cmd_regs.data: 478 words). */
    public static final int DEVCMD_DATA_SIZE = (int) (DEVCMD_END - DEVCMD_DATA);
    /** struct ionic_intr_ctrl, one per vector at 0x2000 + 32 * vector. */
    public static final long INTR_CTRL = 0x2000, INTR_CTRL_SIZE = 32, INTR_MASK = 4, INTR_CREDITS = 8,
            INTR_MASK_ASSERT = 12;
    /** intr_ctrl.credits bits (ionic_regs.h): the count returned, UNMASK, RESET_COALESCE. */
    public static final long CREDIT_UNMASK = 1L << 16, CREDIT_RESET_COALESCE = 1L << 17;
    /** intr_status: one bit per vector, never read by the driver. */
    public static final long INTR_STATUS = 0x1000;
    /** enum ionic_status_code. */
    public static final int SUCCESS = 0, EOPCODE = 2, EQID = 5, EQTYPE = 6, ENOENT = 7, EEXIST = 13, EINVAL = 14,
            ENOSPC = 15, BAD_ADDR = 17, DEV_CMD = 18;

    // Device command opcodes (ionic_if.h enum ionic_cmd_opcode)
    public static final int NOP = 0, IDENTIFY = 1, INIT = 2, RESET = 3, GETATTR = 4, SETATTR = 5,
            PORT_IDENTIFY = 10, PORT_INIT = 11, PORT_RESET = 12, PORT_GETATTR = 13, PORT_SETATTR = 14,
            LIF_IDENTIFY = 20, LIF_INIT = 21, LIF_RESET = 22, LIF_GETATTR = 23, LIF_SETATTR = 24,
            RX_MODE_SET = 30, RX_FILTER_ADD = 31, RX_FILTER_DEL = 32, Q_IDENTIFY = 39, Q_INIT = 40, Q_CONTROL = 41,
            RDMA_RESET_LIF = 50, RDMA_CREATE_EQ = 51, RDMA_CREATE_CQ = 52, RDMA_CREATE_ADMINQ = 53;
    /** enum ionic_lif_attr: LIF_SETATTR / LIF_GETATTR attr @1. */
    public static final int ATTR_STATE = 0, ATTR_NAME = 1, ATTR_MTU = 2, ATTR_MAC = 3, ATTR_FEATURES = 4;
    /** RX_FILTER_ADD match @8 (enum ionic_rx_filter_match_type). */
    public static final int MATCH_VLAN = 0, MATCH_MAC = 1;
    /** The Q_IDENTIFY versions ionic.ko asks for, by queue type (adminq, notifyq, rxq, txq). */
    static final int[] Q_IDENTIFY_VERSIONS = {0, 0, 2, 3};
    /** Where PORT_INIT's port_info keeps extra_stats, which ionic.ko fills with 0xff before PORT_INIT. */
    public static final int PORT_INFO_EXTRA_STATS = 0x800;
    /** ionic_port_identity.config: 256 bytes at 128, copied back into the data window for PORT_INIT. */
    static final int PORT_IDENTITY_CONFIG = 128, PORT_CONFIG_SIZE = 256;
    // Queue types as the Ethernet side numbers them
    public static final int QTYPE_ADMINQ = 0, QTYPE_NOTIFYQ = 1, QTYPE_RXQ = 2, QTYPE_TXQ = 3;
    public static final int Q_F_IRQ = 1, Q_F_ENA = 2, Q_F_SG = 4;

    /** Guest RAM: 64 MiB at 256 MiB, handed out page by page. */
    public static final long RAM_IOVA = 0x1000_0000L, RAM_SIZE = 64L << 20;

    private final DeviceBinding device;
    private final MemorySegment ram;
    private final long ramIova, ramSize;
    private long nextFree;
    private int ndbpgsPerLif = 16;

    // The admin queue, once created
    private long aqRing, aqCq;
    private int aqDepth, aqHead, aqCqTail, aqHwIndex, aqHwType;
    private boolean aqColor = true;
    private int lifHwIndex;

    /**
     * The model on {@code device}, which it now owns; turns on memory space and bus mastering as
     * pci_enable_device and pci_set_master do.
     */
    public IonicDriverModel(DeviceBinding device) throws IOException {
        this.device = device;
        this.ram = device.ram();
        this.ramIova = device.ramIova();
        this.ramSize = ram.byteSize();
        this.nextFree = ramIova;
        device.writeLong(DeviceBinding.CONFIG, 4, 2, 0x6);
    }

    /** Connects as QEMU does: VERSION, guest RAM by memfd, an eventfd per MSI-X vector. */
    public static IonicDriverModel connect(String socket) throws IOException {
        return connect(socket, RAM_SIZE);
    }

    /** {@link #connect(String)} with {@code ramBytes} of guest RAM (a memfd: pages are backed when touched). */
    public static IonicDriverModel connect(String socket, long ramBytes) throws IOException {
        SocketBinding binding = SocketBinding.connect(socket, RAM_IOVA, ramBytes);
        try {
            return new IonicDriverModel(binding);
        } catch (IOException | RuntimeException e) {
            binding.close();
            throw e;
        }
    }

    /** How the model reaches the device. */
    public DeviceBinding device() {
        return device;
    }

    /** Guest memory at {@code iova}. */
    public MemorySegment mem(long iova, long length) {
        return ram.asSlice(iova - ramIova, length);
    }

    /** A zeroed, page-aligned block of guest RAM. */
    public long alloc(long bytes) {
        long at = nextFree;
        nextFree += (bytes + 4095) & ~4095L;
        if (nextFree > ramIova + ramSize) {
            throw new IllegalStateException("driver model out of guest RAM");
        }
        mem(at, bytes).fill((byte) 0);
        return at;
    }

    /** All of guest RAM; offset 0 is guest address {@link #ramIova()}. */
    public MemorySegment ram() {
        return ram;
    }

    /** The guest address of RAM offset 0 ({@link #RAM_IOVA} for {@link #connect}). */
    public long ramIova() {
        return ramIova;
    }

    /** Guest RAM not handed out yet. */
    public long freeRam() {
        return ramIova + ramSize - nextFree;
    }

    /** MSI-X vectors the device offers. */
    public int vectors() {
        return device.vectors();
    }

    /** Doorbell pages per LIF (IDENTIFY's ndbpgs_per_lif, read at bring-up). */
    public int doorbellPagesPerLif() {
        return ndbpgsPerLif;
    }

    /** The LIF's hw_index from LIF_INIT. */
    public int lifHwIndex() {
        return lifHwIndex;
    }

    /**
     * A posted 8-byte write to BAR 2 at {@code offset}, as a guest's doorbell store reaches the device: nothing
     * to wait for. Accesses are handled in order, so a later {@link #sync()} finds it done.
     */
    public void doorbellPosted(long offset, long value) {
        device.writePosted(BAR2, offset, 8, value);
    }

    /** An 8-byte doorbell write that returns once the device has taken it (the control path's doorbells). */
    public void doorbell(long offset, long value) throws IOException {
        device.writeLong(BAR2, offset, 8, value);
    }

    /** Every access made before it has been handled when it returns. */
    public void sync() throws IOException {
        device.sync();
    }

    public long bar0(long offset, int width) throws IOException {
        return device.readLong(BAR0, offset, width);
    }

    /** {@code length} bytes of BAR 0 at {@code offset}. */
    public byte[] bar0Bytes(long offset, int length) throws IOException {
        return device.readBytes(BAR0, offset, length);
    }

    /** A 64-byte little-endian command block to fill. */
    public static ByteBuffer command(int opcode) {
        ByteBuffer b = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
        b.put(0, (byte) opcode);
        return b;
    }

    /** A 16-byte completion: status in byte 0, the rest as the command defines. */
    public record Completion(byte[] bytes) {
        public int status() {
            return bytes[0] & 0xff;
        }

        public ByteBuffer le() {
            return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        }
    }

    /** Runs a device command as ionic_dev_cmd_go does: command, done = 0, doorbell = 1, poll done. */
    public Completion devcmd(ByteBuffer cmd) throws IOException {
        device.writeBytes(BAR0, DEVCMD_CMD, cmd.array());
        device.writeLong(BAR0, DEVCMD_DONE, 4, 0);
        device.writeLong(BAR0, DEVCMD_DOORBELL, 4, 1);
        for (int i = 0; i < 1000 && (bar0(DEVCMD_DONE, 4) & 1) == 0; i++) {
            device.sync();
        }
        if ((bar0(DEVCMD_DONE, 4) & 1) == 0) {
            throw new IOException("device command " + (cmd.get(0) & 0xff) + " never completed");
        }
        Completion c = new Completion(device.readBytes(BAR0, DEVCMD_COMP, 16));
        device.writeLong(BAR0, DEVCMD_DOORBELL, 4, 0);
        return c;
    }

    /** Writes {@code data} into the device command data window at {@code offset} (driver identity, port config). */
    public void writeDevcmdData(int offset, byte[] data) throws IOException {
        device.writeBytes(BAR0, DEVCMD_DATA + offset, data);
    }

    /** The device command data window (identity blocks, and side data for commands). */
    public ByteBuffer devcmdData(int length) throws IOException {
        return ByteBuffer.wrap(device.readBytes(BAR0, DEVCMD_DATA, length)).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** A vector's interrupt control as the driver programs it (mask, mask-on-assert). */
    public void intrMask(int vector, boolean mask, boolean maskOnAssert) throws IOException {
        long base = INTR_CTRL + INTR_CTRL_SIZE * vector;
        device.writeLong(BAR0, base + INTR_MASK_ASSERT, 4, maskOnAssert ? 1 : 0);
        device.writeLong(BAR0, base + INTR_MASK, 4, mask ? 1 : 0);
    }

    /** A write of {@code value} to a vector's credits register (count, UNMASK, RESET_COALESCE). */
    public void intrCredits(int vector, long value) throws IOException {
        device.writeLong(BAR0, INTR_CTRL + INTR_CTRL_SIZE * vector + INTR_CREDITS, 4, value);
    }

    /** A doorbell value (ionic_regs.h): qid 47..24, ring 18..16, index 15..0. */
    public static long doorbellValue(int qid, int ring, int index) {
        return (long) qid << 24 | (long) (ring & 7) << 16 | (index & 0xffff);
    }

    /** Credits with UNMASK, as the driver's NAPI does when done. */
    public void intrUnmask(int vector) throws IOException {
        device.writeLong(BAR0, INTR_CTRL + INTR_CTRL_SIZE * vector + INTR_CREDITS, 4, CREDIT_UNMASK);
    }

    /** Waits for MSI-X vector {@code vector}; returns the count (0 on time-out). */
    public long awaitInterrupt(int vector, int millis) throws IOException {
        return device.awaitInterrupt(vector, millis);
    }

    /** What bring-up learned: the LIF's hw_index, the status blocks, the admin queue's hw_index and hw_type. */
    public record Bringup(int lifHwIndex, long portInfo, long lifInfo, int adminqHwIndex, int adminqHwType) {}

    /**
     * The probe sequence of ionic.ko up to a working admin queue (steps 2 to 14 of ionic_probe): RESET, the
     * driver identity (os_type 1) into the data window, IDENTIFY, LIF_IDENTIFY, INIT, PORT_IDENTIFY, PORT_INIT
     * with the identity's port config and a port_info whose extra_stats are 0xff, PORT_SETATTR state UP (result
     * ignored), Q_IDENTIFY of the four Ethernet queue types, LIF_INIT, Q_INIT of the admin queue (16 slots,
     * interrupt 0, mask-on-assert). Bus mastering is on from the constructor.
     */
    public Bringup bringUp() throws IOException {
        expectOk(devcmd(command(RESET)), "RESET");
        byte[] driverIdentity = new byte[256];
        driverIdentity[0] = 1; // ionic_drv_identity.os_type: Linux
        byte[] release = "7.2.0-ernic-model".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        System.arraycopy(release, 0, driverIdentity, 172, release.length); // driver_ver_str
        writeDevcmdData(0, driverIdentity);
        ByteBuffer id = command(IDENTIFY);
        id.put(1, (byte) 2); // ver
        expectOk(devcmd(id), "IDENTIFY");
        ndbpgsPerLif = devcmdData(32).getInt(16); // ionic_dev_identity.ndbpgs_per_lif
        ByteBuffer li = command(LIF_IDENTIFY);
        li.put(1, (byte) 0).put(2, (byte) 1); // type classic, ver 1
        expectOk(devcmd(li), "LIF_IDENTIFY");
        expectOk(devcmd(command(INIT)), "INIT");
        expectOk(devcmd(command(PORT_IDENTIFY)), "PORT_IDENTIFY");
        byte[] portConfig = device.readBytes(BAR0, DEVCMD_DATA + PORT_IDENTITY_CONFIG, PORT_CONFIG_SIZE);
        long portInfo = alloc(4096);
        mem(portInfo + PORT_INFO_EXTRA_STATS, 4096 - PORT_INFO_EXTRA_STATS).fill((byte) 0xff);
        writeDevcmdData(0, portConfig);
        ByteBuffer pi = command(PORT_INIT);
        pi.putLong(8, portInfo);
        expectOk(devcmd(pi), "PORT_INIT");
        ByteBuffer up = command(PORT_SETATTR);
        up.put(2, (byte) 0).put(4, (byte) 2); // attr STATE, state UP
        devcmd(up);
        for (int type = 0; type < Q_IDENTIFY_VERSIONS.length; type++) {
            ByteBuffer qi = command(Q_IDENTIFY);
            qi.putShort(2, (short) 0).put(4, (byte) type).put(5, (byte) Q_IDENTIFY_VERSIONS[type]);
            expectOk(devcmd(qi), "Q_IDENTIFY " + type);
        }
        long lifInfo = alloc(4096);
        ByteBuffer lif = command(LIF_INIT);
        lif.putShort(2, (short) 0).putLong(8, lifInfo);
        Completion lc = devcmd(lif);
        expectOk(lc, "LIF_INIT");
        lifHwIndex = lc.le().getShort(2) & 0xffff;
        // The admin queue: 16 descriptors of 64 bytes, a completion ring of 16 x 16 bytes.
        intrMask(0, true, true);
        aqDepth = 16;
        aqRing = alloc(aqDepth * 64L);
        aqCq = alloc(aqDepth * 16L);
        Completion q = devcmd(qInit(QTYPE_ADMINQ, 0, 0, Q_F_IRQ | Q_F_ENA, 4, aqRing, aqCq, 0));
        expectOk(q, "Q_INIT adminq");
        aqHwIndex = q.le().getInt(4);
        aqHwType = q.bytes()[8] & 0xff;
        aqHead = 0;
        aqCqTail = 0;
        aqColor = true;
        intrMask(0, false, true);
        return new Bringup(lifHwIndex, portInfo, lifInfo, aqHwIndex, aqHwType);
    }

    /** What the LIF's first admin commands set up: the notifyq's block and the station MAC with its filter. */
    public record Station(long notifyRing, long mac, int filterId) {}

    /**
     * Steps 15 to 18 of the probe, on the admin queue: Q_INIT of the notifyq (a 4 KiB descriptor page with its
     * 64 x 64-byte event ring right after it, the admin queue's interrupt), LIF_SETATTR FEATURES, LIF_GETATTR MAC,
     * RX_FILTER_ADD of that MAC.
     */
    public Station probeLif() throws IOException {
        long notify = alloc(4096 + 64 * 64);
        expectOk(adminq(qInit(QTYPE_NOTIFYQ, 0, 0, Q_F_IRQ | Q_F_ENA, 6, notify, 0, 0)), "Q_INIT notifyq");
        ByteBuffer features = command(LIF_SETATTR);
        features.put(1, (byte) ATTR_FEATURES).putLong(4, 0x1ffL); // VLAN x3, RX_HASH, csums, SG, TSO
        expectOk(adminq(features), "LIF_SETATTR FEATURES");
        ByteBuffer getMac = command(LIF_GETATTR);
        getMac.put(1, (byte) ATTR_MAC);
        Completion m = adminq(getMac);
        expectOk(m, "LIF_GETATTR MAC");
        long mac = mac(m.bytes(), 4);
        ByteBuffer filter = command(RX_FILTER_ADD);
        filter.putShort(8, (short) MATCH_MAC);
        putMac(filter, 10, mac);
        Completion f = adminq(filter);
        expectOk(f, "RX_FILTER_ADD");
        return new Station(notify, mac, f.le().getInt(4));
    }

    /** A MAC as six bytes in wire order at {@code at}, as a 48-bit number (first byte highest). */
    public static long mac(byte[] b, int at) {
        long m = 0;
        for (int i = 0; i < 6; i++) {
            m = m << 8 | b[at + i] & 0xff;
        }
        return m;
    }

    public static void putMac(ByteBuffer b, int at, long mac) {
        for (int i = 0; i < 6; i++) {
            b.put(at + i, (byte) (mac >>> 8 * (5 - i)));
        }
    }

    /** The color the admin queue expects in its next completion (true on the first pass, flipped at each wrap). */
    public boolean adminqColor() {
        return aqColor;
    }

    /** A Q_INIT command (ionic_q_init_cmd). */
    public static ByteBuffer qInit(int type, int index, int intr, int flags, int ringSizeLog2, long ring, long cqRing,
                                   long sgRing) {
        ByteBuffer c = command(Q_INIT);
        c.put(4, (byte) type);
        c.putInt(8, index);
        c.putShort(14, (short) intr);
        c.putShort(16, (short) flags);
        c.put(19, (byte) ringSizeLog2);
        c.putLong(20, ring);
        c.putLong(28, cqRing);
        c.putLong(36, sgRing);
        return c;
    }

    public static void expectOk(Completion c, String what) throws IOException {
        if (c.status() != 0) {
            throw new IOException(what + " failed with status " + c.status());
        }
    }

    /**
     * Posts one command on the admin queue, rings its doorbell, waits for the interrupt and returns
     * the completion, checking its color and comp_index as ionic.ko does.
     */
    public Completion adminq(ByteBuffer cmd) throws IOException {
        int slot = aqHead;
        MemorySegment.copy(cmd.array(), 0, mem(aqRing + slot * 64L, 64), ValueLayout.JAVA_BYTE, 0, 64);
        aqHead = (aqHead + 1) % aqDepth;
        long page = (long) lifHwIndex * ndbpgsPerLif; // ndbpgs_per_lif doorbell pages per LIF, kernel pid 0
        doorbell(page * 4096 + aqHwType * 8L, (long) aqHwIndex << 24 | aqHead);
        MemorySegment comp = mem(aqCq + aqCqTail * 16L, 16);
        for (int waited = 0; !colorMatches(comp) && waited < 5000; waited += 100) {
            awaitInterrupt(0, 100);
        }
        if (!colorMatches(comp)) {
            throw new IOException("admin command " + (cmd.get(0) & 0xff) + ": no completion");
        }
        byte[] bytes = comp.toArray(ValueLayout.JAVA_BYTE);
        int compIndex = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getShort(2) & 0xffff;
        if (compIndex != slot) {
            throw new IOException("admin completion names slot " + compIndex + ", expected " + slot);
        }
        aqCqTail = (aqCqTail + 1) % aqDepth;
        if (aqCqTail == 0) {
            aqColor = !aqColor;
        }
        intrUnmask(0);
        return new Completion(bytes);
    }

    private boolean colorMatches(MemorySegment comp) {
        boolean color = (comp.get(ValueLayout.JAVA_BYTE, 15) & 0x80) != 0;
        return color == aqColor;
    }

    @Override
    public void close() {
        device.close();
    }
}
