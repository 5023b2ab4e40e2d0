package ernic.ionic;

import ernic.ionic.fault.FaultPlan;
import ernic.ionic.profile.ProfileLoader;
import ernic.ionic.regs.Bar0;
import ernic.model.IonicDriverModel;
import ernic.model.IonicDriverModel.Bringup;
import ernic.model.IonicDriverModel.Completion;
import ernic.vfiouser.server.DeviceContext;
import ernic.vfiouser.server.GuestMemory;
import ernic.vfiouser.server.Interrupts;
import ernic.vfiouser.server.IrqType;
import ernic.vfiouser.testing.PciIdentity;
import io.netty.channel.EventLoop;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Set;

import static ernic.model.IonicDriverModel.*;
import static org.assertj.core.api.Assertions.assertThat;
import static ernic.common.Endian.LE;

/**
 * The probe sequence of ionic.ko (bring-up doc section 3) by the driver model, checking every reply field the
 * driver reads at the offsets of ionic_if.h.
 */
class BringUpTest {

    IonicDevice dev;
    ModelGuest guest;
    IonicDriverModel drv;

    @BeforeEach
    void setUp() {
        dev = new IonicDevice(ProfileLoader.compat(), FaultPlan.none());
        guest = new ModelGuest(dev, 8 << 20);
        drv = guest.drv;
    }

    @AfterEach
    void tearDown() {
        guest.close();
    }

    /** The MSI-X PBA reads what the client holds pending (vectors it masked); nothing once it is gone. */
    @Test
    void msixPendingBitArrayShowsTheClientsPendingVectors() {
        IonicDevice d = new IonicDevice(ProfileLoader.compat(), FaultPlan.none());
        Set<Integer> pending = Set.of(3, 9);
        Interrupts irqs = new Interrupts() {
            @Override public boolean trigger(IrqType type, int vector) { return true; }
            @Override public boolean hasEventfd(IrqType type, int vector) { return true; }
            @Override public boolean pending(IrqType type, int vector) {
                return type == IrqType.MSIX && pending.contains(vector);
            }
        };
        d.attach(new DeviceContext() {
            @Override public GuestMemory memory() { return null; }
            @Override public Interrupts interrupts() { return irqs; }
            @Override public EventLoop eventLoop() { return null; }
        });
        MemorySegment pba = MemorySegment.ofArray(new byte[4]);
        d.regions().get(0).handler().read(Bar0.MSIX_PBA, pba);
        assertThat(LE.u32(pba, 0)).isEqualTo(1 << 3 | 1 << 9);
        d.detach();
        d.regions().get(0).handler().read(Bar0.MSIX_PBA, pba);
        assertThat(LE.u32(pba, 0)).isZero();
    }

    @Test
    void pciIdentityAndBars() {
        var c = dev.configSpace();
        new PciIdentity(0x1dd8, 0x1002, 0x1dd8, 0x5400, 0x020000).assertIn(c);
        assertThat(c.readU32(0x10) & 0b110).isEqualTo(0b100); // BAR0 64-bit memory
        assertThat(c.readU32(0x18) & 0b110).isEqualTo(0b100); // BAR2 64-bit memory
        assertThat(c.readU32(0x20)).isZero();                 // nothing at BAR index 4
        assertThat(c.msix().tableSize()).isEqualTo(32);
        assertThat(c.msix().tableBar()).isZero();
        assertThat(c.msix().tableOffset()).isEqualTo(0x8000);
        assertThat(c.msix().pbaOffset()).isEqualTo(0xa000);
        assertThat(dev.regions()).extracting(r -> r.index()).containsExactly(0, 2);
        assertThat(dev.regions().get(0).size()).isEqualTo(64 * 1024);
        assertThat(dev.regions().get(1).size()).isEqualTo(4 * 1024 * 1024);
        assertThat(dev.irqCount(IrqType.MSIX)).isEqualTo(32);
        assertThat(dev.irqCount(IrqType.INTX)).isEqualTo(1);
    }

    @Test
    void devInfoRegisters() throws IOException {
        assertThat(drv.bar0(SIGNATURE, 4)).isEqualTo(DEV_INFO_SIGNATURE);
        assertThat(drv.bar0(VERSION, 1)).isEqualTo(1);
        assertThat(drv.bar0(ASIC_TYPE, 1)).isNotIn(0L, 2L);
        long fw = drv.bar0(FW_STATUS, 1);
        assertThat(fw & 1).isEqualTo(1);
        assertThat(fw).isNotEqualTo(0xff);
        assertThat(string(drv.bar0Bytes(FW_VERSION, 32))).isEqualTo("1.0.0-ernic");
        assertThat(string(drv.bar0Bytes(SERIAL_NUM, 32))).isNotEmpty();
        long hb = drv.bar0(FW_HEARTBEAT, 4);
        dev.heartbeatTick();
        assertThat(drv.bar0(FW_HEARTBEAT, 4)).isEqualTo(hb + 1);
        assertThat(drv.bar0(FW_STATUS, 1)).isEqualTo(fw); // constant generation
    }

    private static String string(byte[] b) {
        int n = 0;
        while (n < b.length && b[n] != 0) {
            n++;
        }
        return new String(b, 0, n, StandardCharsets.US_ASCII);
    }

    private ByteBuffer data() throws IOException {
        return drv.devcmdData(DEVCMD_DATA_SIZE);
    }

    @Test
    void identifyReplies() throws IOException {
        drv.bringUp();
        ByteBuffer c = command(IDENTIFY);
        c.put(1, (byte) 2); // ver
        Completion comp = drv.devcmd(c);
        assertThat(comp.status()).isZero();
        ByteBuffer id = data(); // union ionic_dev_identity
        assertThat(id.getInt(12)).as("nintrs").isEqualTo(32);
        assertThat(id.getInt(16)).as("ndbpgs_per_lif").isEqualTo(1024); // every 4 KiB page of the 4 MiB BAR 2
        assertThat((long) id.getInt(16) * 4096).isLessThanOrEqualTo(IonicDevice.BAR2_SIZE);
        assertThat(id.getInt(20)).as("intr_coal_mult").isEqualTo(1);
        assertThat(id.getInt(24)).as("intr_coal_div").isEqualTo(1);
        assertThat(id.getInt(28)).as("eq_count").isEqualTo(32);
        assertThat(id.getLong(48)).as("capabilities").isZero();
        assertThat(comp.bytes()[1]).as("ionic_dev_identify_comp.ver").isEqualTo((byte) 2);

        c = command(LIF_IDENTIFY);
        c.put(1, (byte) 0).put(2, (byte) 1); // type classic, ver 1
        assertThat(drv.devcmd(c).status()).isZero();
        ByteBuffer lif = data(); // union ionic_lif_identity
        assertThat(lif.getLong(0)).as("capabilities: ETH | RDMA").isEqualTo(3);
        assertThat(lif.getInt(12)).as("max_ucast_filters").isGreaterThanOrEqualTo(16);
        assertThat(lif.getShort(20)).as("rss_ind_tbl_sz").isEqualTo((short) 64);
        assertThat(lif.getInt(26)).as("max_frame_size").isEqualTo(9018);
        assertThat(lif.getLong(168) & 1L << 20).as("config.features: no TIMESTAMP").isZero();
        assertThat(lif.getInt(176 + 4)).as("queue_count[NOTIFYQ]").isEqualTo(1);
        assertThat(lif.getInt(176 + 8)).as("queue_count[RXQ]").isEqualTo(16);
        assertThat(lif.getInt(176 + 12)).as("queue_count[TXQ]").isEqualTo(16);
        assertThat(lif.get(392)).as("rdma.version").isEqualTo((byte) 1);
        assertThat(lif.get(393) & 0xff).as("rdma.qp_opcodes").isGreaterThanOrEqualTo(11);
        assertThat(lif.get(394) & 0xff).as("rdma.admin_opcodes").isEqualTo(19);
        assertThat(lif.get(408) & 0xff).as("rdma.max_stride").isEqualTo(8);
        assertThat(lif.getInt(400)).as("rdma.nmrs_per_lif").isGreaterThanOrEqualTo(2);
        int udmaShift = lif.get(414) & 0xff;
        assertThat(udmaShift).as("rdma.udma_shift").isBetween(1, 4);
        assertThat(lif.getLong(416)).as("rdma.page_size_cap").isNotZero();
        // struct ionic_lif_logical_qtype {qtype @0, qid_count @4, qid_base @8} for aq, sq, rq, cq, eq
        int aq = 424, sq = 436, rq = 448, cq = 460, eq = 472;
        assertThat(lif.get(aq)).isEqualTo((byte) 5);
        assertThat(lif.get(sq)).isEqualTo((byte) 6);
        assertThat(lif.get(rq)).isEqualTo((byte) 7);
        assertThat(lif.get(cq)).isEqualTo((byte) 8);
        assertThat(lif.get(eq)).isEqualTo((byte) 9);
        assertThat(lif.getInt(eq + 4)).as("EQ count").isEqualTo(32);
        assertThat(lif.getInt(eq + 8)).as("EQ base").isZero();
        assertThat(lif.getInt(cq + 8)).as("CQ base").isZero();
        assertThat(lif.getInt(aq + 4)).as("AQ count").isGreaterThanOrEqualTo(1);
        for (int q : new int[] {aq, sq, rq, cq, eq}) {
            assertThat(Integer.bitCount(lif.getInt(q + 4))).as(q + " count power of two").isEqualTo(1);
        }
        int cqCount = lif.getInt(cq + 4);
        assertThat(udmaShift).isLessThan(Integer.numberOfTrailingZeros(cqCount / 2));
        assertThat(lif.getShort(484)).as("stats_type: device and per-QP hw counters").isEqualTo((short) 3);

        assertThat(drv.devcmd(command(PORT_IDENTIFY)).status()).isZero();
        ByteBuffer port = data(); // union ionic_port_identity
        assertThat(port.get(1)).as("type ETH").isEqualTo((byte) 1);
        assertThat(port.getInt(128)).as("config.speed").isEqualTo(100000);
    }

    @Test
    void queueIdentify() throws IOException {
        drv.bringUp();
        int[] asked = {0, 0, 2, 3};
        for (int type = 0; type < 4; type++) {
            ByteBuffer c = command(Q_IDENTIFY);
            c.put(4, (byte) type).put(5, (byte) asked[type]);
            Completion comp = drv.devcmd(c);
            assertThat(comp.status()).isZero();
            ByteBuffer q = data(); // union ionic_q_identity
            assertThat(q.getLong(8)).as("no offload features").isZero();
            assertThat(comp.bytes()[4]).as("ionic_q_identify_comp.ver").isEqualTo(q.get(0));
            if (type == 3) {
                assertThat(q.get(0)).as("TXQ version").isEqualTo((byte) 1);
                assertThat(q.getShort(20)).as("sg_desc_sz").isEqualTo((short) 256);
            }
        }
        ByteBuffer c = command(Q_IDENTIFY);
        c.put(4, (byte) 9);
        assertThat(drv.devcmd(c).status()).isEqualTo(EQTYPE);
    }

    @Test
    void fullProbeSequence() throws IOException {
        Bringup b = drv.bringUp();
        // PORT_INIT wrote port_info: link up, speed, copper QSFP 100G CR4, extra_stats untouched.
        MemorySegment pi = guest.at(b.portInfo(), 4096);
        assertThat(pi.get(ValueLayout.JAVA_BYTE, 264)).as("status.status: UP").isEqualTo((byte) 1);
        assertThat(LE.u32(pi, 260)).as("status.speed").isEqualTo(100000);
        assertThat(pi.get(ValueLayout.JAVA_BYTE, 316)).as("xcvr.state: SPROM read").isEqualTo((byte) 3);
        assertThat(pi.get(ValueLayout.JAVA_BYTE, 317)).as("xcvr.phy: copper").isEqualTo((byte) 1);
        assertThat(pi.get(LE.u16(), 318)).as("xcvr.pid: QSFP 100G CR4").isEqualTo((short) 1);
        assertThat(pi.get(ValueLayout.JAVA_BYTE, PORT_INFO_EXTRA_STATS)).as("extra_stats").isEqualTo((byte) 0xff);
        // LIF_INIT wrote lif_info status and returned hw_index 0.
        MemorySegment li = guest.at(b.lifInfo(), 4096);
        assertThat(li.get(LE.u16(), 266)).as("link_status UP").isEqualTo((short) 1);
        assertThat(LE.u32(li, 268)).as("link_speed").isEqualTo(100000);
        assertThat(b.lifHwIndex()).isZero();
        assertThat(b.adminqHwType()).isZero();
        assertThat(b.adminqHwIndex()).isZero();

        drv.probeLif();
        // Each admin completion raised MSI-X 0 (auto-masked; the driver unmasks with credits).
        assertThat(guest.count(0)).isGreaterThanOrEqualTo(1);
    }

    /** A LIF_SETATTR / LIF_GETATTR command (ionic_lif_setattr_cmd: attr @1, payload @4). */
    private static ByteBuffer lifAttr(int opcode, int attr) {
        ByteBuffer c = command(opcode);
        c.put(1, (byte) attr);
        return c;
    }

    /** RX_FILTER_ADD match MAC (ionic_rx_filter_add_cmd: match @8, mac @10). */
    private static ByteBuffer filterMac(long mac) {
        ByteBuffer c = command(RX_FILTER_ADD);
        c.putShort(8, (short) MATCH_MAC);
        putMac(c, 10, mac);
        return c;
    }

    @Test
    void adminqReplies() throws IOException {
        drv.bringUp();
        long notifyRing = drv.alloc(4096 + 64 * 64);
        drv.intrUnmask(0);
        Completion c = drv.adminq(qInit(QTYPE_NOTIFYQ, 0, 0, Q_F_IRQ | Q_F_ENA, 6, notifyRing, 0, 0));
        assertThat(c.status()).isZero();
        assertThat(c.bytes()[8]).as("ionic_q_init_comp.hw_type").isEqualTo((byte) 1);

        drv.intrUnmask(0);
        ByteBuffer features = lifAttr(LIF_SETATTR, ATTR_FEATURES);
        features.putLong(4, 0xffff);
        c = drv.adminq(features);
        assertThat(c.status()).isZero();
        assertThat(c.le().getLong(4)).as("granted features").isZero();

        c = drv.adminq(lifAttr(LIF_GETATTR, ATTR_MAC));
        long mac = IonicDriverModel.mac(c.bytes(), 4);
        assertThat(mac).isNotZero();
        assertThat(mac >>> 40 & 1).as("unicast").isZero();

        ByteBuffer setMac = lifAttr(LIF_SETATTR, ATTR_MAC);
        putMac(setMac, 4, 0x02_11_22_33_44_55L);
        assertThat(drv.adminq(setMac).status()).isZero();
        c = drv.adminq(lifAttr(LIF_GETATTR, ATTR_MAC));
        assertThat(IonicDriverModel.mac(c.bytes(), 4)).isEqualTo(0x02_11_22_33_44_55L);
        setMac = lifAttr(LIF_SETATTR, ATTR_MAC);
        putMac(setMac, 4, 0x01_00_5e_00_00_01L);
        assertThat(drv.adminq(setMac).status()).isEqualTo(EINVAL);

        int[] ids = new int[3];
        for (int i = 0; i < 3; i++) {
            c = drv.adminq(filterMac(0x02_00_00_00_00_10L + i));
            assertThat(c.status()).isZero();
            ids[i] = c.le().getInt(4); // filter_id
        }
        assertThat(ids).doesNotHaveDuplicates();
        assertThat(drv.adminq(filterMac(0x02_00_00_00_00_10L)).status()).isEqualTo(EEXIST);
        ByteBuffer del = command(RX_FILTER_DEL);
        del.putInt(4, ids[1]);
        assertThat(drv.adminq(del).status()).isZero();
        del = command(RX_FILTER_DEL);
        del.putInt(4, ids[1]);
        assertThat(drv.adminq(del).status()).isEqualTo(ENOENT);

        ByteBuffer mode = command(RX_MODE_SET);
        mode.putShort(4, (short) 0x7);
        assertThat(drv.adminq(mode).status()).isZero();
        assertThat(dev.lif().rxMode()).isEqualTo(7);
        assertThat(drv.adminq(lifAttr(LIF_SETATTR, ATTR_NAME)).status()).isZero();
        // A device command on the admin queue is refused with DEV_CMD.
        assertThat(drv.adminq(command(IDENTIFY)).status()).isEqualTo(DEV_CMD);
    }

    @Test
    void adminqCompletionColorFlipsOnWrap() throws IOException {
        drv.bringUp();
        for (int i = 0; i < 40; i++) {
            assertThat(drv.adminq(command(NOP)).status()).isZero();
        }
        assertThat(drv.adminqColor()).isTrue(); // 40 = 2 wraps + 8: color back to 1 on the third pass
    }

    @Test
    void noOpCommandsSucceedZeroed() throws IOException {
        drv.bringUp();
        for (int op : new int[] {NOP, INIT, GETATTR, SETATTR, PORT_GETATTR, PORT_SETATTR}) {
            Completion c = drv.devcmd(command(op));
            assertThat(c.status()).as("opcode " + op).isZero();
            assertThat(c.bytes()).as("opcode " + op).containsOnly(0);
        }
    }

    @Test
    void refusals() throws IOException {
        drv.bringUp();
        long ring = drv.alloc(1 << 16), cq = drv.alloc(1 << 14);
        // Unknown queue type.
        assertThat(drv.devcmd(qInit(7, 0, 0, 0, 4, ring, cq, 0)).status()).isEqualTo(EQTYPE);
        // Queue index past the LIF's count (16 queue pairs under compat).
        assertThat(drv.devcmd(qInit(QTYPE_TXQ, 16, 0, 0, 4, ring, cq, 0)).status()).isEqualTo(EQID);
        assertThat(drv.devcmd(qInit(QTYPE_NOTIFYQ, 1, 0, 0, 4, ring, 0, 0)).status()).isEqualTo(EQID);
        // Ring deeper than 2^15.
        assertThat(drv.devcmd(qInit(QTYPE_RXQ, 0, 0, 0, 16, ring, cq, 0)).status()).isEqualTo(EINVAL);
        // 2^15 itself is fine when the rings are in guest memory.
        long bigRing = drv.alloc(16L << 15), bigCq = drv.alloc(16L << 15);
        assertThat(drv.devcmd(qInit(QTYPE_RXQ, 0, 0, 0, 15, bigRing, bigCq, 0)).status()).isZero();
        // A ring outside guest memory.
        assertThat(drv.devcmd(qInit(QTYPE_RXQ, 1, 0, 0, 4, 0x7fff_0000_0000L, cq, 0)).status()).isEqualTo(BAD_ADDR);
        // Unknown opcode. The RDMA bootstrap commands are served (RdmaControlPathTest): RESET_LIF
        // succeeds, the queue commands with all-zero fields are refused (depth 0, no EQ, no CQ).
        assertThat(drv.devcmd(command(0x77)).status()).isEqualTo(EOPCODE);
        assertThat(drv.devcmd(command(RDMA_RESET_LIF)).status()).isEqualTo(SUCCESS);
        for (int op = RDMA_CREATE_EQ; op <= RDMA_CREATE_ADMINQ; op++) {
            assertThat(drv.devcmd(command(op)).status()).isEqualTo(EINVAL);
        }
        assertThat(drv.adminq(command(0x99)).status()).isEqualTo(EOPCODE);
        assertThat(drv.adminq(command(RDMA_RESET_LIF)).status()).isEqualTo(SUCCESS);
        // Q_CONTROL (ionic_q_control_cmd: type @1, index @4, oper @8) with a bad type or index.
        assertThat(drv.devcmd(qControl(5, 0, 1)).status()).isEqualTo(EQTYPE);
        assertThat(drv.devcmd(qControl(QTYPE_RXQ, 99, 1)).status()).isEqualTo(EQID);
        assertThat(dev.refusals().count("ionic-queue-type")).isEqualTo(2);
        assertThat(dev.refusals().count("ionic-unknown-opcode")).isEqualTo(2);
        assertThat(dev.refusals().count("ionic-q-init-ring-size")).isEqualTo(1);
    }

    private static ByteBuffer qControl(int type, int index, int oper) {
        ByteBuffer c = command(Q_CONTROL);
        c.put(1, (byte) type).putInt(4, index).put(8, (byte) oper);
        return c;
    }

    @Test
    void lifResetAndResetStopWritingBlocks() throws IOException {
        Bringup b = drv.bringUp();
        assertThat(dev.lif().lifInfoPa()).isEqualTo(b.lifInfo());
        assertThat(drv.devcmd(command(LIF_RESET)).status()).isZero();
        assertThat(dev.lif().lifInfoPa()).isZero();
        assertThat(drv.devcmd(command(PORT_RESET)).status()).isZero();
        assertThat(dev.lif().portInfoPa()).isZero();
        guest.at(b.lifInfo(), 4096).fill((byte) 0x5a);
        dev.statisticsTick();
        assertThat(guest.at(b.lifInfo(), 4096).get(ValueLayout.JAVA_BYTE, 320)).as("lif_info.stats")
                .isEqualTo((byte) 0x5a);
        // The whole sequence can run again without a PCI reset.
        drv.bringUp();
        drv.probeLif();
    }

    @Test
    void bar0AccessWidths() throws IOException {
        // QWORD read in the data area and QWORD doorbell-style writes are accepted.
        drv.bringUp();
        ByteBuffer c = command(Q_IDENTIFY);
        c.put(4, (byte) QTYPE_TXQ).put(5, (byte) 3);
        assertThat(drv.devcmd(c).status()).isZero();
        assertThat(drv.bar0(DEVCMD_DATA + 8, 8)).as("features").isZero();
        // Writes to read-only dev_info are ignored (and counted).
        drv.device().writeLong(BAR0_REGION, SIGNATURE, 4, 0);
        assertThat(drv.bar0(SIGNATURE, 4)).isEqualTo(DEV_INFO_SIGNATURE);
        assertThat(dev.refusals().count("ionic-bar0-readonly")).isEqualTo(1);
    }

    static final int BAR0_REGION = ernic.model.DeviceBinding.BAR0;
}
