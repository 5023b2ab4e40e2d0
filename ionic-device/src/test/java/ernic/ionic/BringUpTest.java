package ernic.ionic;

import ernic.ionic.fault.FaultPlan;
import ernic.ionic.layout.Cmd;
import ernic.ionic.layout.Comp;
import ernic.ionic.layout.Identity;
import ernic.ionic.layout.Identity.Lif.RdmaQueue;
import ernic.ionic.layout.InfoBlock.LifInfo;
import ernic.ionic.layout.InfoBlock.PortInfo;
import ernic.ionic.layout.Le;
import ernic.ionic.layout.Mac;
import ernic.ionic.profile.ProfileLoader;
import ernic.ionic.regs.Bar0;
import ernic.ionic.regs.Opcode;
import ernic.ionic.regs.Status;
import ernic.vfiouser.server.IrqType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static org.assertj.core.api.Assertions.assertThat;

/** The probe sequence of ionic.ko (bring-up doc section 3), checking every reply field the driver reads. */
class BringUpTest {
    FakeGuest guest;
    IonicDevice dev;
    Driver drv;

    @BeforeEach
    void setUp() {
        guest = new FakeGuest(8 << 20);
        dev = new IonicDevice(ProfileLoader.compat(), FaultPlan.none());
        dev.attach(guest);
        drv = new Driver(dev, guest);
    }

    @AfterEach
    void tearDown() {
        dev.detach();
        guest.close();
    }

    @Test
    void pciIdentityAndBars() {
        var c = dev.configSpace();
        assertThat(c.readU16(0)).isEqualTo(0x1dd8);
        assertThat(c.readU16(2)).isEqualTo(0x1002);
        assertThat(c.readU16(0x2c)).isEqualTo(0x1dd8);
        assertThat(c.readU16(0x2e)).isEqualTo(0x5400);
        assertThat(c.readU32(8) >>> 8).isEqualTo(0x020000);
        assertThat(c.readU8(0x3d)).isEqualTo(1);
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
    void devInfoRegisters() {
        assertThat(drv.read32(Bar0.SIGNATURE)).isEqualTo(0x44455649);
        assertThat(drv.read8(Bar0.VERSION)).isEqualTo(1);
        assertThat(drv.read8(Bar0.ASIC_TYPE)).isNotIn(0, 2);
        int fw = drv.read8(Bar0.FW_STATUS);
        assertThat(fw & 1).isEqualTo(1);
        assertThat(fw).isNotEqualTo(0xff);
        MemorySegment s = drv.arena.allocate(32);
        dev.regions().get(0).handler().read(Bar0.FW_VERSION, s);
        assertThat(Le.string(s, 0, 32)).isEqualTo("1.0.0-ernic");
        dev.regions().get(0).handler().read(Bar0.SERIAL_NUM, s);
        assertThat(Le.string(s, 0, 32)).isNotEmpty();
        int hb = drv.read32(Bar0.FW_HEARTBEAT);
        dev.heartbeatTick();
        assertThat(drv.read32(Bar0.FW_HEARTBEAT)).isEqualTo(hb + 1);
        assertThat(drv.read8(Bar0.FW_STATUS)).isEqualTo(fw); // constant generation
    }

    @Test
    void identifyReplies() {
        drv.probeToAdminq();
        MemorySegment c = drv.cmd(Opcode.IDENTIFY);
        new Cmd.Identify().wrap(c, 0).ver(2);
        assertThat(drv.devcmd(c)).isZero();
        Identity.Dev id = new Identity.Dev().wrap(drv.data(), 0);
        assertThat(id.nintrs()).isEqualTo(32);
        assertThat(id.ndbpgsPerLif()).isEqualTo(16);
        assertThat((long) id.ndbpgsPerLif() * 4096).isLessThanOrEqualTo(IonicDevice.BAR2_SIZE);
        assertThat(id.intrCoalMult()).isEqualTo(1);
        assertThat(id.intrCoalDiv()).isEqualTo(1);
        assertThat(id.eqCount()).isEqualTo(32);
        assertThat(id.capabilities()).isZero();
        assertThat(new Comp.Identify().wrap(drv.devcmdComp(), 0).ver()).isEqualTo(2);

        c = drv.cmd(Opcode.LIF_IDENTIFY);
        new Cmd.LifIdentify().wrap(c, 0).type(0).ver(1);
        assertThat(drv.devcmd(c)).isZero();
        Identity.Lif lif = new Identity.Lif().wrap(drv.data(), 0);
        assertThat(lif.capabilities()).isEqualTo(3);
        assertThat(lif.maxUcastFilters()).isGreaterThanOrEqualTo(16);
        assertThat(lif.rssIndTblSz()).isEqualTo(64);
        assertThat(lif.maxFrameSize()).isEqualTo(9018);
        assertThat(lif.configFeatures() & 1L << 20).isZero();
        assertThat(lif.queueCount(1)).isEqualTo(1);
        assertThat(lif.queueCount(2)).isEqualTo(16);
        assertThat(lif.queueCount(3)).isEqualTo(16);
        assertThat(lif.rdmaVersion()).isEqualTo(1);
        assertThat(lif.rdmaQpOpcodes()).isGreaterThanOrEqualTo(11);
        assertThat(lif.rdmaAdminOpcodes()).isEqualTo(19);
        assertThat(lif.rdmaMaxStride()).isEqualTo(8);
        assertThat(lif.rdmaNmrsPerLif()).isGreaterThanOrEqualTo(2);
        assertThat(lif.rdmaUdmaShift()).isBetween(1, 4);
        assertThat(lif.rdmaPageSizeCap()).isNotZero();
        assertThat(lif.rdmaQtype(RdmaQueue.AQ)).isEqualTo(5);
        assertThat(lif.rdmaQtype(RdmaQueue.SQ)).isEqualTo(6);
        assertThat(lif.rdmaQtype(RdmaQueue.RQ)).isEqualTo(7);
        assertThat(lif.rdmaQtype(RdmaQueue.CQ)).isEqualTo(8);
        assertThat(lif.rdmaQtype(RdmaQueue.EQ)).isEqualTo(9);
        assertThat(lif.rdmaQidCount(RdmaQueue.EQ)).isEqualTo(32);
        assertThat(lif.rdmaQidBase(RdmaQueue.EQ)).isZero();
        assertThat(lif.rdmaQidBase(RdmaQueue.CQ)).isZero();
        assertThat(lif.rdmaQidCount(RdmaQueue.AQ)).isGreaterThanOrEqualTo(1);
        for (RdmaQueue q : RdmaQueue.values()) {
            assertThat(Integer.bitCount(lif.rdmaQidCount(q))).as(q + " count power of two").isEqualTo(1);
        }
        int cqCount = lif.rdmaQidCount(RdmaQueue.CQ);
        assertThat(lif.rdmaUdmaShift()).isLessThan(Integer.numberOfTrailingZeros(cqCount / 2));
        assertThat(lif.rdmaStatsType()).as("device and per-QP hw counters").isEqualTo(3);

        c = drv.cmd(Opcode.PORT_IDENTIFY);
        assertThat(drv.devcmd(c)).isZero();
        Identity.Port port = new Identity.Port().wrap(drv.data(), 0);
        assertThat(port.type()).isEqualTo(1);
        assertThat(new Identity.PortConfig().wrap(drv.data(), Identity.Port.CONFIG).speed()).isEqualTo(100000);
    }

    @Test
    void queueIdentify() {
        drv.probeToAdminq();
        int[] asked = {0, 0, 2, 3};
        for (int type = 0; type < 4; type++) {
            MemorySegment c = drv.cmd(Opcode.Q_IDENTIFY);
            new Cmd.QIdentify().wrap(c, 0).type(type).ver(asked[type]);
            assertThat(drv.devcmd(c)).isZero();
            Identity.Queue q = new Identity.Queue().wrap(drv.data(), 0);
            assertThat(q.features()).as("no offload features").isZero();
            assertThat(new Comp.QIdentify().wrap(drv.devcmdComp(), 0).ver()).isEqualTo(q.version());
            if (type == 3) {
                assertThat(q.version()).isEqualTo(1);
                assertThat(q.sgDescSz()).isEqualTo(256);
            }
        }
        MemorySegment c = drv.cmd(Opcode.Q_IDENTIFY);
        new Cmd.QIdentify().wrap(c, 0).type(9);
        assertThat(drv.devcmd(c)).isEqualTo(Status.EQTYPE);
    }

    @Test
    void fullProbeSequence() {
        drv.probeToAdminq();
        // PORT_INIT wrote port_info: link up, speed, copper QSFP 100G CR4, extra_stats untouched.
        PortInfo pi = new PortInfo().wrap(guest.at(drv.portInfo, 4096), 0);
        assertThat(pi.operStatus()).isEqualTo(1);
        assertThat(pi.speed()).isEqualTo(100000);
        assertThat(pi.xcvrState()).isEqualTo(3);
        assertThat(pi.xcvrPhy()).isEqualTo(1);
        assertThat(pi.xcvrPid()).isEqualTo(1);
        assertThat(Le.u8(guest.at(drv.portInfo, 4096), 2048)).isEqualTo(0xff);
        // LIF_INIT wrote lif_info status and returned hw_index 0.
        MemorySegment li = guest.at(drv.lifInfo, 4096);
        assertThat(Le.u16(li, 266)).isEqualTo(1);
        assertThat(Le.u32(li, 268)).isEqualTo(100000);
        assertThat(new LifInfo().wrap(li, 0).linkStatus()).isEqualTo(1);
        assertThat(drv.aqHwType).isZero();
        assertThat(drv.aqHwIndex).isZero();

        drv.probeAdminqCommands();
        // Each admin completion raised MSI-X 0 (auto-masked; the driver unmasks with credits).
        assertThat(guest.count(0)).isGreaterThanOrEqualTo(1);
    }

    @Test
    void adminqReplies() {
        drv.probeToAdminq();
        drv.notifyRing = guest.alloc(4096 + 64 * 64);
        unmask(0);
        MemorySegment c = drv.adminq(s -> new Cmd.QInit().wrap(Driver.op(s, Opcode.Q_INIT), 0).type(1).index(0)
                .intrIndex(0).flags(Cmd.QInit.F_IRQ | Cmd.QInit.F_ENA).ringSize(6).ringBase(drv.notifyRing));
        assertThat(Driver.status(c)).isZero();
        assertThat(new Comp.QInit().wrap(c, 0).hwType()).isEqualTo(1);

        unmask(0);
        c = drv.adminq(s -> new Cmd.LifAttr().wrap(Driver.op(s, Opcode.LIF_SETATTR), 0).attr(Cmd.LifAttr.FEATURES)
                .features(0xffff));
        assertThat(Driver.status(c)).isZero();
        assertThat(new Comp.LifAttr().wrap(c, 0).features()).isZero();

        c = drv.adminq(s -> new Cmd.LifAttr().wrap(Driver.op(s, Opcode.LIF_GETATTR), 0).attr(Cmd.LifAttr.MAC));
        long mac = new Comp.LifAttr().wrap(c, 0).mac();
        assertThat(mac).isNotZero();
        assertThat(Mac.isMulticast(mac)).isFalse();

        c = drv.adminq(s -> new Cmd.LifAttr().wrap(Driver.op(s, Opcode.LIF_SETATTR), 0).attr(Cmd.LifAttr.MAC)
                .mac(0x02_11_22_33_44_55L));
        assertThat(Driver.status(c)).isZero();
        c = drv.adminq(s -> new Cmd.LifAttr().wrap(Driver.op(s, Opcode.LIF_GETATTR), 0).attr(Cmd.LifAttr.MAC));
        assertThat(new Comp.LifAttr().wrap(c, 0).mac()).isEqualTo(0x02_11_22_33_44_55L);
        c = drv.adminq(s -> new Cmd.LifAttr().wrap(Driver.op(s, Opcode.LIF_SETATTR), 0).attr(Cmd.LifAttr.MAC)
                .mac(0x01_00_5e_00_00_01L));
        assertThat(Driver.status(c)).isEqualTo(Status.EINVAL);

        int[] ids = new int[3];
        for (int i = 0; i < 3; i++) {
            long m = 0x02_00_00_00_00_10L + i;
            c = drv.adminq(s -> new Cmd.RxFilterAdd().wrap(Driver.op(s, Opcode.RX_FILTER_ADD), 0)
                    .match(Cmd.RxFilterAdd.MATCH_MAC).mac(m));
            assertThat(Driver.status(c)).isZero();
            ids[i] = new Comp.RxFilterAdd().wrap(c, 0).filterId();
        }
        assertThat(ids).doesNotHaveDuplicates();
        c = drv.adminq(s -> new Cmd.RxFilterAdd().wrap(Driver.op(s, Opcode.RX_FILTER_ADD), 0)
                .match(Cmd.RxFilterAdd.MATCH_MAC).mac(0x02_00_00_00_00_10L));
        assertThat(Driver.status(c)).isEqualTo(Status.EEXIST);
        c = drv.adminq(s -> new Cmd.RxFilterDel().wrap(Driver.op(s, Opcode.RX_FILTER_DEL), 0).filterId(ids[1]));
        assertThat(Driver.status(c)).isZero();
        c = drv.adminq(s -> new Cmd.RxFilterDel().wrap(Driver.op(s, Opcode.RX_FILTER_DEL), 0).filterId(ids[1]));
        assertThat(Driver.status(c)).isEqualTo(Status.ENOENT);

        c = drv.adminq(s -> new Cmd.RxModeSet().wrap(Driver.op(s, Opcode.RX_MODE_SET), 0).rxMode(0x7));
        assertThat(Driver.status(c)).isZero();
        assertThat(dev.lif().rxMode()).isEqualTo(7);
        c = drv.adminq(s -> new Cmd.LifAttr().wrap(Driver.op(s, Opcode.LIF_SETATTR), 0).attr(Cmd.LifAttr.NAME));
        assertThat(Driver.status(c)).isZero();
        // A device command on the admin queue is refused with DEV_CMD.
        c = drv.adminq(s -> Driver.op(s, Opcode.IDENTIFY));
        assertThat(Driver.status(c)).isEqualTo(Status.DEV_CMD);
    }

    @Test
    void adminqCompletionColorFlipsOnWrap() {
        drv.probeToAdminq();
        for (int i = 0; i < 40; i++) {
            MemorySegment c = drv.adminq(s -> Driver.op(s, Opcode.NOP));
            assertThat(Driver.status(c)).isZero();
        }
        assertThat(drv.aqColor).isTrue(); // 40 = 2 wraps + 8: color back to 1 on the third pass
    }

    @Test
    void noOpCommandsSucceedZeroed() {
        drv.probeToAdminq();
        for (int op : new int[] {Opcode.NOP, Opcode.INIT, Opcode.GETATTR, Opcode.SETATTR, Opcode.PORT_GETATTR,
                Opcode.PORT_SETATTR}) {
            assertThat(drv.devcmd(drv.cmd(op))).as("opcode " + op).isZero();
            MemorySegment comp = drv.devcmdComp();
            for (int i = 0; i < 16; i++) {
                assertThat(Le.u8(comp, i)).isZero();
            }
        }
    }

    @Test
    void refusals() {
        drv.probeToAdminq();
        long ring = guest.alloc(1 << 16), cq = guest.alloc(1 << 14);
        // Unknown queue type.
        MemorySegment c = drv.cmd(Opcode.Q_INIT);
        new Cmd.QInit().wrap(c, 0).type(7).ringSize(4).ringBase(ring).cqRingBase(cq);
        assertThat(drv.devcmd(c)).isEqualTo(Status.EQTYPE);
        // Queue index past the LIF's count (16 queue pairs under compat).
        c = drv.cmd(Opcode.Q_INIT);
        new Cmd.QInit().wrap(c, 0).type(3).index(16).ringSize(4).ringBase(ring).cqRingBase(cq);
        assertThat(drv.devcmd(c)).isEqualTo(Status.EQID);
        c = drv.cmd(Opcode.Q_INIT);
        new Cmd.QInit().wrap(c, 0).type(1).index(1).ringSize(4).ringBase(ring);
        assertThat(drv.devcmd(c)).isEqualTo(Status.EQID);
        // Ring deeper than 2^15.
        c = drv.cmd(Opcode.Q_INIT);
        new Cmd.QInit().wrap(c, 0).type(2).index(0).ringSize(16).ringBase(ring).cqRingBase(cq);
        assertThat(drv.devcmd(c)).isEqualTo(Status.EINVAL);
        // 2^15 itself is fine when the rings are in guest memory.
        long bigRing = guest.alloc(16L << 15), bigCq = guest.alloc(16L << 15);
        c = drv.cmd(Opcode.Q_INIT);
        new Cmd.QInit().wrap(c, 0).type(2).index(0).ringSize(15).ringBase(bigRing).cqRingBase(bigCq);
        assertThat(drv.devcmd(c)).isZero();
        // A ring outside guest memory.
        c = drv.cmd(Opcode.Q_INIT);
        new Cmd.QInit().wrap(c, 0).type(2).index(1).ringSize(4).ringBase(0x7fff_0000_0000L).cqRingBase(cq);
        assertThat(drv.devcmd(c)).isEqualTo(Status.BAD_ADDR);
        // Unknown opcode. The RDMA bootstrap commands are served (RdmaControlPathTest): RESET_LIF
        // succeeds, the queue commands with all-zero fields are refused (depth 0, no EQ, no CQ).
        assertThat(drv.devcmd(drv.cmd(0x77))).isEqualTo(Status.EOPCODE);
        assertThat(drv.devcmd(drv.cmd(Opcode.RDMA_RESET_LIF))).isEqualTo(Status.SUCCESS);
        for (int op = Opcode.RDMA_CREATE_EQ; op <= Opcode.RDMA_CREATE_ADMINQ; op++) {
            assertThat(drv.devcmd(drv.cmd(op))).isEqualTo(Status.EINVAL);
        }
        c = drv.adminq(s -> Driver.op(s, 0x99));
        assertThat(Driver.status(c)).isEqualTo(Status.EOPCODE);
        c = drv.adminq(s -> Driver.op(s, Opcode.RDMA_RESET_LIF));
        assertThat(Driver.status(c)).isEqualTo(Status.SUCCESS);
        // Q_CONTROL with a bad type or index.
        c = drv.cmd(Opcode.Q_CONTROL);
        new Cmd.QControl().wrap(c, 0).type(5).index(0).oper(1);
        assertThat(drv.devcmd(c)).isEqualTo(Status.EQTYPE);
        c = drv.cmd(Opcode.Q_CONTROL);
        new Cmd.QControl().wrap(c, 0).type(2).index(99).oper(1);
        assertThat(drv.devcmd(c)).isEqualTo(Status.EQID);
        assertThat(dev.refusals().count("ionic-queue-type")).isEqualTo(2);
        assertThat(dev.refusals().count("ionic-unknown-opcode")).isEqualTo(2);
        assertThat(dev.refusals().count("ionic-q-init-ring-size")).isEqualTo(1);
    }

    @Test
    void lifResetAndResetStopWritingBlocks() {
        drv.probeToAdminq();
        assertThat(dev.lif().lifInfoPa()).isEqualTo(drv.lifInfo);
        assertThat(drv.devcmd(drv.cmd(Opcode.LIF_RESET))).isZero();
        assertThat(dev.lif().lifInfoPa()).isZero();
        assertThat(drv.devcmd(drv.cmd(Opcode.PORT_RESET))).isZero();
        assertThat(dev.lif().portInfoPa()).isZero();
        guest.at(drv.lifInfo, 4096).fill((byte) 0x5a);
        dev.statisticsTick();
        assertThat(Le.u8(guest.at(drv.lifInfo, 4096), 320)).isEqualTo(0x5a);
        // The whole sequence can run again without a PCI reset.
        drv.probeToAdminq();
        drv.probeAdminqCommands();
    }

    @Test
    void bar0AccessWidths() {
        // QWORD read in the data area and QWORD doorbell-style writes are accepted.
        drv.probeToAdminq();
        MemorySegment c = drv.cmd(Opcode.Q_IDENTIFY);
        new Cmd.QIdentify().wrap(c, 0).type(3).ver(3);
        assertThat(drv.devcmd(c)).isZero();
        long q = drv.read64(Bar0.DEVCMD_DATA + 8);
        assertThat(q).isZero(); // features
        // Writes to read-only dev_info are ignored (and counted).
        drv.write32(Bar0.SIGNATURE, 0);
        assertThat(drv.read32(Bar0.SIGNATURE)).isEqualTo(0x44455649);
        assertThat(dev.refusals().count("ionic-bar0-readonly")).isEqualTo(1);
    }

    private void unmask(int i) {
        drv.write32(Bar0.INTR_CTRL + 32L * i + Bar0.INTR_CREDITS, Bar0.CRED_UNMASK);
    }
}
