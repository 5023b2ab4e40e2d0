package ernic.ionic.eth;

import ernic.ionic.base.Bar2;
import ernic.ionic.base.RdmaIdentity;
import ernic.ionic.base.P4CommandHandler;
import ernic.ionic.base.RdmaCommandHandler;
import ernic.ionic.layout.Cmd;
import ernic.ionic.layout.Comp;
import ernic.ionic.layout.Identity;
import ernic.ionic.layout.Identity.Lif.RdmaQueue;
import ernic.ionic.layout.Identity.PortConfig;
import ernic.ionic.profile.Profile;
import ernic.ionic.regs.Opcode;
import ernic.ionic.regs.Status;
import ernic.vfiouser.server.Refusals;

import java.lang.foreign.MemorySegment;

/**
 * Runs device commands: synchronously from BAR 0 dev_cmd_regs (with the 1912-byte data area) or from
 * the Ethernet admin queue (no data area). Every row of the seed's table: identities, port and LIF
 * lifecycle, queues, attributes, filters; the no-op commands succeed with a zeroed completion; the
 * RDMA bootstrap commands (50-53) go to an RDMA handler when one is installed and otherwise fail as
 * unknown opcodes; anything else fails with EOPCODE.
 */
public final class DeviceCommands {
    /** Doorbell pages per LIF: page 0 for the kernel, the rest for user contexts (all of BAR 2). */
    public static final int NDBPGS_PER_LIF = Bar2.PAGES;
    /** Identity versions the device speaks. */
    public static final int DEV_IDENTITY_VERSION = 2, LIF_IDENTITY_VERSION = 1, PORT_IDENTITY_VERSION = 1;



    private final Profile profile;
    private final EthLif lif;
    private final int interrupts;
    private final Refusals refusals;
    private RdmaCommandHandler rdma;
    private P4CommandHandler p4;

    private final Cmd.Admin admin = new Cmd.Admin();
    private final Cmd.Identify identify = new Cmd.Identify();
    private final Cmd.LifIdentify lifIdentify = new Cmd.LifIdentify();
    private final Cmd.LifInit lifInit = new Cmd.LifInit();
    private final Cmd.LifReset lifReset = new Cmd.LifReset();
    private final Cmd.PortIdentify portIdentify = new Cmd.PortIdentify();
    private final Cmd.PortInit portInit = new Cmd.PortInit();
    private final Cmd.QIdentify qIdentify = new Cmd.QIdentify();
    private final Cmd.QInit qInit = new Cmd.QInit();
    private final Cmd.QControl qControl = new Cmd.QControl();
    private final Cmd.LifAttr lifAttr = new Cmd.LifAttr();
    private final Cmd.RxModeSet rxModeSet = new Cmd.RxModeSet();
    private final Cmd.RxFilterAdd rxFilterAdd = new Cmd.RxFilterAdd();
    private final Cmd.RxFilterDel rxFilterDel = new Cmd.RxFilterDel();
    private final Comp.Identify identifyComp = new Comp.Identify();
    private final Comp.LifInit lifInitComp = new Comp.LifInit();
    private final Comp.QIdentify qIdentifyComp = new Comp.QIdentify();
    private final Comp.QInit qInitComp = new Comp.QInit();
    private final Comp.LifAttr lifAttrComp = new Comp.LifAttr();
    private final Comp.RxFilterAdd rxFilterAddComp = new Comp.RxFilterAdd();
    private final Identity.Dev devIdentity = new Identity.Dev();
    private final Identity.Lif lifIdentity = new Identity.Lif();
    private final Identity.Port portIdentity = new Identity.Port();
    private final Identity.PortConfig portConfig = new Identity.PortConfig();
    private final Identity.Queue qIdentity = new Identity.Queue();

    public DeviceCommands(Profile profile, EthLif lif, int interrupts, Refusals refusals) {
        this.profile = profile;
        this.lif = lif;
        this.interrupts = interrupts;
        this.refusals = refusals;
        lif.commands(this);
    }

    public void rdmaHandler(RdmaCommandHandler handler) {
        this.rdma = handler;
    }

    /** The P4 engine's device commands 70-72, when the guest may reach the engine (a scope other than none). */
    public void p4Handler(P4CommandHandler handler) {
        this.p4 = handler;
    }

    /**
     * Runs the 64-byte command in {@code cmd}. {@code comp} (16 bytes, zeroed by the caller) receives
     * the command-specific completion bytes; the caller writes the status (the return value), the
     * comp_index and the color. {@code data} is the devcmd data area, or null on the admin queue.
     */
    public int execute(MemorySegment cmd, MemorySegment comp, MemorySegment data) {
        int opcode = admin.wrap(cmd, 0).opcode();
        boolean devcmd = data != null;
        if (!devcmd && devcmdOnly(opcode)) {
            return onAdminq(opcode);
        }
        switch (opcode) {
            case Opcode.NOP, Opcode.GETATTR, Opcode.SETATTR, Opcode.PORT_GETATTR, Opcode.PORT_SETATTR, Opcode.INIT -> {
                return Status.SUCCESS;
            }
            case Opcode.RESET -> {
                lif.deviceReset();
                return Status.SUCCESS;
            }
            case Opcode.IDENTIFY -> {
                return identify(cmd, comp, data);
            }
            case Opcode.LIF_IDENTIFY -> {
                return lifIdentify(cmd, comp, data);
            }
            case Opcode.PORT_IDENTIFY -> {
                return portIdentify(cmd, comp, data);
            }
            case Opcode.Q_IDENTIFY -> {
                return queueIdentify(cmd, comp, data);
            }
            case Opcode.PORT_INIT -> {
                portInit.wrap(cmd, 0);
                if (portInit.index() != 0) {
                    refusals.refuse("ionic-port-index", "PORT_INIT for port " + portInit.index());
                    return Status.ENOENT;
                }
                return lif.portInit(portInit.infoPa(), data);
            }
            case Opcode.PORT_RESET -> {
                lif.resetPort();
                return Status.SUCCESS;
            }
            case Opcode.LIF_INIT -> {
                lifInit.wrap(cmd, 0);
                if (lifInit.index() != 0) {
                    refusals.refuse("ionic-lif-index", "LIF_INIT for LIF " + lifInit.index());
                    return Status.ENOENT;
                }
                int status = lif.lifInit(lifInit.infoPa());
                lifInitComp.wrap(comp, 0).hwIndex(0);
                return status;
            }
            case Opcode.LIF_RESET -> {
                if (lifReset.wrap(cmd, 0).index() != 0) {
                    refusals.refuse("ionic-lif-index", "LIF_RESET for LIF " + lifReset.index());
                    return Status.ENOENT;
                }
                lif.resetLif();
                return Status.SUCCESS;
            }
            case Opcode.LIF_SETATTR -> {
                return lif.lifSetattr(lifAttr.wrap(cmd, 0), lifAttrComp.wrap(comp, 0));
            }
            case Opcode.LIF_GETATTR -> {
                return lif.lifGetattr(lifAttr.wrap(cmd, 0), lifAttrComp.wrap(comp, 0));
            }
            case Opcode.LIF_SETPHC -> {
                refusals.refuse("ionic-lif-setphc", "LIF_SETPHC without a PHC");
                return Status.ENOSUPP;
            }
            case Opcode.RX_MODE_SET -> {
                return lif.rxModeSet(rxModeSet.wrap(cmd, 0));
            }
            case Opcode.RX_FILTER_ADD -> {
                return lif.rxFilterAdd(rxFilterAdd.wrap(cmd, 0), rxFilterAddComp.wrap(comp, 0));
            }
            case Opcode.RX_FILTER_DEL -> {
                return lif.rxFilterDel(rxFilterDel.wrap(cmd, 0));
            }
            case Opcode.Q_INIT -> {
                return lif.queueInit(qInit.wrap(cmd, 0), qInitComp.wrap(comp, 0));
            }
            case Opcode.Q_CONTROL -> {
                return lif.queueControl(qControl.wrap(cmd, 0));
            }
            case Opcode.RDMA_RESET_LIF, Opcode.RDMA_CREATE_EQ, Opcode.RDMA_CREATE_CQ, Opcode.RDMA_CREATE_ADMINQ -> {
                RdmaCommandHandler h = rdma;
                if (h != null) {
                    return h.execute(opcode, cmd, comp, data);
                }
                refusals.refuse("ionic-rdma-bootstrap", "RDMA bootstrap opcode " + opcode + " (no RDMA side yet)");
                return Status.EOPCODE;
            }
            case Opcode.P4_READ, Opcode.P4_TABLE_WRITE, Opcode.P4_CONTROL -> {
                P4CommandHandler h = p4;
                if (h == null) {
                    // No engine, or --p4-guest-scope none: the opcodes do not exist for this guest.
                    refusals.refuse("ionic-p4-no-scope", "P4 opcode " + opcode + " (the guest has no P4 scope)");
                    return Status.EOPCODE;
                }
                return devcmd ? h.execute(opcode, cmd, comp, data) : onAdminq(opcode);
            }
            default -> {
                refusals.refuse("ionic-unknown-opcode", "unknown opcode " + opcode);
                return Status.EOPCODE;
            }
        }
    }

    /** The opcodes only the device command registers take: posted on the admin queue, they are refused. */
    private static boolean devcmdOnly(int opcode) {
        return switch (opcode) {
            case Opcode.INIT, Opcode.RESET, Opcode.IDENTIFY, Opcode.LIF_IDENTIFY, Opcode.PORT_IDENTIFY, Opcode.Q_IDENTIFY,
                    Opcode.PORT_INIT, Opcode.PORT_RESET, Opcode.LIF_INIT, Opcode.LIF_RESET -> true;
            default -> false;
        };
    }

    private int onAdminq(int opcode) {
        refusals.refuse("ionic-devcmd-on-adminq", "device command " + opcode + " posted on the admin queue");
        return Status.DEV_CMD;
    }

    private int identify(MemorySegment cmd, MemorySegment comp, MemorySegment data) {
        int ver = Math.max(1, Math.min(identify.wrap(cmd, 0).ver(), DEV_IDENTITY_VERSION));
        data.asSlice(0, Identity.SIZE).fill((byte) 0);
        devIdentity.wrap(data, 0)
                .version(ver).type(0).nports(1).nlifs(1)
                .nintrs(interrupts)
                .ndbpgsPerLif(NDBPGS_PER_LIF)
                .intrCoal(1, 1)
                .eqCount(profile.rdmaEqs())
                .hwstamp(0, 0, 0)
                .capabilities(0);
        identifyComp.wrap(comp, 0).ver(ver);
        return Status.SUCCESS;
    }

    private int lifIdentify(MemorySegment cmd, MemorySegment comp, MemorySegment data) {
        lifIdentify.wrap(cmd, 0);
        if (lifIdentify.type() != 0) { // IONIC_LIF_TYPE_CLASSIC only
            refusals.refuse("ionic-lif-type", "LIF_IDENTIFY type " + lifIdentify.type());
            return Status.EINVAL;
        }
        data.asSlice(0, Identity.SIZE).fill((byte) 0);
        int n = profile.ethQueues();
        lifIdentity.wrap(data, 0)
                .capabilities(Identity.Lif.CAP_ETH | Identity.Lif.CAP_RDMA)
                .ethVersion(1)
                .filters(EthLif.MAX_UCAST_FILTERS, EthLif.MAX_MCAST_FILTERS)
                .rssIndTblSz(64)
                .frameSizes(64, profile.maxFrameSize())
                .hwstamp(0, 0)
                .configState(0)
                .configMtu(lif.mtu())
                .configMac(lif.mac())
                .configFeatures(0) // bit 20 (TIMESTAMP) stays clear
                .queueCount(EthLif.QTYPE_ADMINQ, 1)
                .queueCount(EthLif.QTYPE_NOTIFYQ, 1)
                .queueCount(EthLif.QTYPE_RXQ, n)
                .queueCount(EthLif.QTYPE_TXQ, n)
                .rdmaVersion(RdmaIdentity.VERSION, RdmaIdentity.MINOR_VERSION, RdmaIdentity.QP_OPCODES, RdmaIdentity.ADMIN_OPCODES)
                .rdmaPerLif(RdmaIdentity.NPTS_PER_LIF, RdmaIdentity.NMRS_PER_LIF, RdmaIdentity.NAHS_PER_LIF)
                .rdmaStrides(RdmaIdentity.MAX_STRIDE, RdmaIdentity.CL_STRIDE, RdmaIdentity.PTE_STRIDE, RdmaIdentity.RRQ_STRIDE, RdmaIdentity.RSQ_STRIDE)
                .rdmaDcqcnProfiles(0)
                .rdmaUdmaShift(RdmaIdentity.UDMA_SHIFT)
                .rdmaPageSizeCap(RdmaIdentity.PAGE_SIZE_CAP)
                .rdmaQueue(RdmaQueue.AQ, RdmaIdentity.AQ_QTYPE, RdmaIdentity.AQ_COUNT, 0)
                .rdmaQueue(RdmaQueue.SQ, RdmaIdentity.SQ_QTYPE, RdmaIdentity.QP_COUNT, 0)
                .rdmaQueue(RdmaQueue.RQ, RdmaIdentity.RQ_QTYPE, RdmaIdentity.RQ_COUNT, 0)
                .rdmaQueue(RdmaQueue.CQ, RdmaIdentity.CQ_QTYPE, RdmaIdentity.CQ_COUNT, 0)
                .rdmaQueue(RdmaQueue.EQ, RdmaIdentity.EQ_QTYPE, profile.rdmaEqs(), 0)
                .rdmaStatsType(RdmaIdentity.STATS_TYPE);
        identifyComp.wrap(comp, 0).ver(LIF_IDENTITY_VERSION);
        return Status.SUCCESS;
    }

    private int portIdentify(MemorySegment cmd, MemorySegment comp, MemorySegment data) {
        if (portIdentify.wrap(cmd, 0).index() != 0) {
            refusals.refuse("ionic-port-index", "PORT_IDENTIFY for port " + portIdentify.index());
            return Status.ENOENT;
        }
        data.asSlice(0, Identity.SIZE).fill((byte) 0);
        portIdentity.wrap(data, 0)
                .version(PORT_IDENTITY_VERSION)
                .type(Identity.Port.TYPE_ETH)
                .numLanes(profile.transceiver().lanes())
                .autoneg(0)
                .frameSizes(64, profile.maxFrameSize())
                .speed(0, profile.linkSpeedMbps());
        portConfig.wrap(data, Identity.Port.CONFIG)
                .speed(profile.linkSpeedMbps())
                .mtu(profile.maxFrameSize())
                .state(PortConfig.STATE_UP);
        identifyComp.wrap(comp, 0).ver(PORT_IDENTITY_VERSION);
        return Status.SUCCESS;
    }

    private int queueIdentify(MemorySegment cmd, MemorySegment comp, MemorySegment data) {
        qIdentify.wrap(cmd, 0);
        int type = qIdentify.type();
        int asked = qIdentify.ver();
        if (qIdentify.lifType() != 0) {
            refusals.refuse("ionic-lif-type", "Q_IDENTIFY for LIF type " + qIdentify.lifType());
            return Status.EINVAL;
        }
        data.asSlice(0, Identity.SIZE).fill((byte) 0);
        Identity.Queue q = qIdentity.wrap(data, 0).features(0);
        int version;
        switch (type) {
            case EthLif.QTYPE_ADMINQ -> {
                version = 0;
                q.supported(1).sizes(64, 16, 0).sg(1, 1);
            }
            case EthLif.QTYPE_NOTIFYQ -> {
                version = 0;
                q.supported(1).sizes(4, 64, 0).sg(1, 1);
            }
            case EthLif.QTYPE_RXQ -> {
                version = 0;
                q.supported(1).sizes(16, 16, 128).sg(8, 8);
            }
            case EthLif.QTYPE_TXQ -> {
                // Version 1 with 256-byte SG descriptors: the driver's 15 elements fit one descriptor.
                version = Math.min(asked, 1);
                q.supported(0b11).sizes(16, 16, version >= 1 ? 256 : 128).sg(version >= 1 ? 15 : 8, version >= 1 ? 16 : 8);
            }
            default -> {
                refusals.refuse("ionic-queue-type", "Q_IDENTIFY for unknown queue type " + type);
                return Status.EQTYPE;
            }
        }
        q.version(version);
        qIdentifyComp.wrap(comp, 0).ver(version);
        return Status.SUCCESS;
    }
}
