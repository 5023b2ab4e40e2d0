package ernic.ionic;

import ernic.ionic.layout.Cmd;
import ernic.ionic.layout.Comp;
import ernic.ionic.layout.Le;
import ernic.ionic.layout.Ring;
import ernic.ionic.regs.Bar0;
import ernic.ionic.regs.Opcode;
import ernic.vfiouser.server.RegionHandler;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.function.Consumer;

/**
 * A small stand-in for ionic.ko: BAR 0 accesses through the device's region handler, device commands,
 * the admin queue in guest memory with its doorbell, and the bring-up sequence of the driver.
 */
final class Driver {
    final IonicDevice dev;
    final FakeGuest guest;
    final RegionHandler bar0, bar2;
    final Arena arena = Arena.ofAuto();
    final MemorySegment cmd = arena.allocate(64, 8);
    final MemorySegment io = arena.allocate(8, 8);

    // Admin queue state.
    long aqRing, aqCq;
    int aqHead, aqTail;
    boolean aqColor = true;
    int aqHwType, aqHwIndex;
    long lifInfo, portInfo, notifyRing;
    static final int AQ_LOG2 = 4, AQ_DEPTH = 16;

    Driver(IonicDevice dev, FakeGuest guest) {
        this.dev = dev;
        this.guest = guest;
        this.bar0 = dev.regions().get(0).handler();
        this.bar2 = dev.regions().get(1).handler();
    }

    int read32(long off) {
        bar0.read(off, io.asSlice(0, 4));
        return Le.u32(io, 0);
    }

    int read8(long off) {
        bar0.read(off, io.asSlice(0, 1));
        return Le.u8(io, 0);
    }

    long read64(long off) {
        bar0.read(off, io);
        return Le.u64(io, 0);
    }

    void write32(long off, int v) {
        Le.put32(io, 0, v);
        bar0.write(off, io.asSlice(0, 4));
    }

    void doorbell(int page, int qtype, long value) {
        Le.put64(io, 0, value);
        bar2.write((long) page * 4096 + qtype * 8L, io);
    }

    /** Enables bus mastering in config space, as ionic_probe does after the first RESET. */
    void busMaster() {
        MemorySegment c = arena.allocate(2);
        Le.put16(c, 0, 0x6); // memory space + bus master
        dev.configSpace().write(4, c);
    }

    /** A fresh zeroed command buffer with the opcode set. */
    MemorySegment cmd(int opcode) {
        cmd.fill((byte) 0);
        Le.put8(cmd, 0, opcode);
        return cmd;
    }

    /** ionic_dev_cmd_go + wait: copy cmd, done = 0, doorbell = 1, poll done; returns the status. */
    int devcmd(MemorySegment c) {
        for (int i = 0; i < 64; i += 4) {
            write32(Bar0.DEVCMD_CMD + i, Le.u32(c, i));
        }
        write32(Bar0.DEVCMD_DONE, 0);
        write32(Bar0.DEVCMD_DOORBELL, 1);
        if ((read32(Bar0.DEVCMD_DONE) & 1) != 1) {
            throw new AssertionError("devcmd not done");
        }
        int status = read8(Bar0.DEVCMD_COMP);
        write32(Bar0.DEVCMD_DOORBELL, 0);
        for (int i = 0; i < 64; i += 4) {
            write32(Bar0.DEVCMD_CMD + i, 0);
        }
        return status;
    }

    /** The devcmd completion bytes. */
    MemorySegment devcmdComp() {
        MemorySegment c = arena.allocate(16);
        bar0.read(Bar0.DEVCMD_COMP, c);
        return c;
    }

    /** The devcmd data area. */
    MemorySegment data() {
        MemorySegment d = arena.allocate(Bar0.DEVCMD_DATA_SIZE);
        for (int i = 0; i < Bar0.DEVCMD_DATA_SIZE; i += 4) {
            bar0.read(Bar0.DEVCMD_DATA + i, d.asSlice(i, 4));
        }
        return d;
    }

    void writeData(int off, MemorySegment src) {
        for (int i = 0; i < src.byteSize(); i++) {
            bar0.write(Bar0.DEVCMD_DATA + off + i, src.asSlice(i, 1));
        }
    }

    /** Posts one admin command and rings the doorbell; returns the 16-byte completion read from the CQ. */
    MemorySegment adminq(Consumer<MemorySegment> fill) {
        MemorySegment slot = guest.at(aqRing + (long) aqHead * 64, 64);
        slot.fill((byte) 0);
        fill.accept(slot);
        int posted = aqHead;
        aqHead = (aqHead + 1) & (AQ_DEPTH - 1);
        doorbell(0, aqHwType, Ring.Doorbell.encode(aqHwIndex, 0, aqHead));
        MemorySegment c = guest.at(aqCq + (long) aqTail * 16, 16);
        Comp.Admin comp = new Comp.Admin().wrap(c, 0);
        if (comp.color() != aqColor) {
            throw new AssertionError("no admin completion with color " + aqColor + " at slot " + aqTail);
        }
        if (comp.compIndex() != posted) {
            throw new AssertionError("comp_index " + comp.compIndex() + " != " + posted);
        }
        aqTail = (aqTail + 1) & (AQ_DEPTH - 1);
        if (aqTail == 0) {
            aqColor = !aqColor;
        }
        MemorySegment copy = arena.allocate(16);
        copy.copyFrom(c);
        return copy;
    }

    /** Sets the opcode byte of a command slot. */
    static MemorySegment op(MemorySegment s, int opcode) {
        Le.put8(s, 0, opcode);
        return s;
    }

    static int status(MemorySegment comp) {
        return Le.u8(comp, 0);
    }

    /** Steps 2..14 of the probe: RESET, IDENTIFY, LIF_IDENTIFY, INIT, PORT_IDENTIFY, PORT_INIT, PORT_SETATTR, LIF_INIT, adminq Q_INIT. */
    void probeToAdminq() {
        check(devcmd(cmd(Opcode.RESET)), "RESET");
        busMaster();
        MemorySegment drv = arena.allocate(256);
        Le.put32(drv, 0, 1);
        writeData(0, drv);
        MemorySegment c = cmd(Opcode.IDENTIFY);
        new Cmd.Identify().wrap(c, 0).ver(2);
        check(devcmd(c), "IDENTIFY");
        c = cmd(Opcode.LIF_IDENTIFY);
        new Cmd.LifIdentify().wrap(c, 0).type(0).ver(1);
        check(devcmd(c), "LIF_IDENTIFY");
        check(devcmd(cmd(Opcode.INIT)), "INIT");
        check(devcmd(cmd(Opcode.PORT_IDENTIFY)), "PORT_IDENTIFY");
        MemorySegment portConfig = data().asSlice(128, 256);
        MemorySegment cfg = arena.allocate(256);
        cfg.copyFrom(portConfig);
        portInfo = guest.alloc(4096);
        guest.at(portInfo + 2048, 160).fill((byte) 0xff);
        writeData(0, cfg);
        c = cmd(Opcode.PORT_INIT);
        new Cmd.PortInit().wrap(c, 0).infoPa(portInfo);
        check(devcmd(c), "PORT_INIT");
        c = cmd(Opcode.PORT_SETATTR);
        Le.put8(c, 2, 0);
        Le.put8(c, 4, 2);
        devcmd(c);
        for (int type = 0; type < 4; type++) {
            c = cmd(Opcode.Q_IDENTIFY);
            new Cmd.QIdentify().wrap(c, 0).type(type).ver(new int[] {0, 0, 2, 3}[type]);
            check(devcmd(c), "Q_IDENTIFY " + type);
        }
        lifInfo = guest.alloc(4096);
        c = cmd(Opcode.LIF_INIT);
        new Cmd.LifInit().wrap(c, 0).index(0).infoPa(lifInfo);
        check(devcmd(c), "LIF_INIT");
        aqRing = guest.alloc(AQ_DEPTH * 64);
        aqCq = guest.alloc(AQ_DEPTH * 16);
        c = cmd(Opcode.Q_INIT);
        new Cmd.QInit().wrap(c, 0).type(0).ver(0).index(0).intrIndex(0)
                .flags(Cmd.QInit.F_IRQ | Cmd.QInit.F_ENA).ringSize(AQ_LOG2).ringBase(aqRing).cqRingBase(aqCq);
        check(devcmd(c), "adminq Q_INIT");
        Comp.QInit qc = new Comp.QInit().wrap(devcmdComp(), 0);
        aqHwIndex = qc.hwIndex();
        aqHwType = qc.hwType();
        // ionic_intr_alloc + enable: clean, mask_assert = 1, then mask = 0.
        write32(Bar0.INTR_CTRL + Bar0.INTR_MASK_ASSERT, 1);
        write32(Bar0.INTR_CTRL + Bar0.INTR_MASK, 0);
    }

    /** Steps 15..18: notifyq Q_INIT, LIF_SETATTR FEATURES, LIF_GETATTR MAC, RX_FILTER_ADD. */
    void probeAdminqCommands() {
        notifyRing = guest.alloc(4096 + 64 * 64);
        MemorySegment c = adminq(s -> new Cmd.QInit().wrap(op(s, Opcode.Q_INIT), 0).type(1).index(0).intrIndex(0)
                .flags(Cmd.QInit.F_IRQ | Cmd.QInit.F_ENA).ringSize(6).ringBase(notifyRing));
        check(status(c), "notifyq Q_INIT");
        c = adminq(s -> new Cmd.LifAttr().wrap(op(s, Opcode.LIF_SETATTR), 0).attr(Cmd.LifAttr.FEATURES).features(0x1ff));
        check(status(c), "LIF_SETATTR FEATURES");
        c = adminq(s -> new Cmd.LifAttr().wrap(op(s, Opcode.LIF_GETATTR), 0).attr(Cmd.LifAttr.MAC));
        check(status(c), "LIF_GETATTR MAC");
        long mac = new Comp.LifAttr().wrap(c, 0).mac();
        c = adminq(s -> new Cmd.RxFilterAdd().wrap(op(s, Opcode.RX_FILTER_ADD), 0).match(Cmd.RxFilterAdd.MATCH_MAC).mac(mac));
        check(status(c), "RX_FILTER_ADD");
    }

    static void check(int status, String what) {
        if (status != 0) {
            throw new AssertionError(what + " failed with status " + status);
        }
    }
}
