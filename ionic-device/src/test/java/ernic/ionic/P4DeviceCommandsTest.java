package ernic.ionic;

import ernic.ionic.fault.FaultPlan;
import ernic.ionic.p4hook.P4Hooks;
import ernic.ionic.p4hook.P4Scope;
import ernic.ionic.profile.ProfileLoader;
import ernic.model.IonicDriverModel;
import ernic.model.P4Control;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.Map;

import static ernic.model.P4Control.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Device commands 70-72 through the driver model (P4Control, written from docs/p4.md): what each
 * --p4-guest-scope lets the guest do, and the statuses outside it (EOPCODE without a scope, EPERM beyond it,
 * EINVAL for a malformed command, DEV_CMD on the admin queue).
 */
class P4DeviceCommandsTest {
    IonicDevice dev;
    ModelGuest guest;
    IonicDriverModel drv;
    P4Control p4;

    void start(P4Scope scope) throws IOException {
        dev = new IonicDevice(ProfileLoader.compat(), FaultPlan.none());
        if (scope != null) {
            String json = Files.readString(P4WqeHookTest.PROGRAMS.resolve("l2_fwd.json"));
            String entries = Files.readString(P4WqeHookTest.PROGRAMS.resolve("l2_fwd.entries"));
            dev.p4(P4Hooks.load(json, "l2_fwd.json", entries, "l2_fwd.entries", scope));
        }
        guest = new ModelGuest(dev, 16 << 20);
        drv = guest.drv;
        drv.bringUp();
        p4 = new P4Control(drv);
    }

    @AfterEach
    void tearDown() {
        if (guest != null) {
            guest.close();
        }
    }

    int status(int opcode, int what) throws IOException {
        return p4.raw(opcode, what, 0, 0).status();
    }

    @Test
    void withoutTheEngineOrWithScopeNoneTheOpcodesDoNotExist() throws IOException {
        start(null);
        assertThat(status(P4_READ, READ_INFO)).isEqualTo(EOPCODE);
        guest.close();
        start(P4Scope.NONE);
        for (int op : new int[] {P4_READ, P4_TABLE_WRITE, P4_CONTROL}) {
            assertThat(status(op, 0)).as("opcode " + op).isEqualTo(EOPCODE);
        }
        assertThat(dev.refusals().snapshot()).containsKey("ionic-p4-no-scope");
    }

    @Test
    void scopeReadReadsInfoCountersAndTablesButWritesNothing() throws IOException {
        start(P4Scope.READ);
        P4Control.Info info = p4.info();
        assertThat(info).isEqualTo(new P4Control.Info(1, 1, false, 1, 5, 0, 0, "l2_fwd"));
        // One frame through the program: the counters and the table's hits move.
        byte[] f = P4EthernetHookTest.frame(0x02_00_00_ee_00_0bL, 0x02_00_00_ee_00_0aL, 0x0800, 30);
        var seg = java.lang.foreign.Arena.ofAuto().allocate(f.length);
        java.lang.foreign.MemorySegment.copy(java.lang.foreign.MemorySegment.ofArray(f), 0, seg, 0, f.length);
        dev.receive(seg); // from the TAP to the other guest's MAC: forward 0, back to the TAP (no sink: lost)
        Map<String, Long> counters = p4.counters();
        assertThat(counters).containsEntry("p4.frames_in", 1L).containsEntry("p4.eth.rx_frames", 1L)
                .containsEntry("p4.eth.rx_to_tap", 1L).containsKey("p4.devcmd.out_of_scope");
        assertThat(counters.size()).isGreaterThan(30); // more than one page of 39 entries is fine too: paged
        assertThat(p4.tables()).containsEntry("MyIngress.dmac", 1L).containsEntry("MyIngress.dmac.misses", 0L);
        assertThat(p4.tableWrite("table_clear dmac").status()).isEqualTo(EPERM);
        assertThat(p4.control("register_reset x").status()).isEqualTo(EPERM);
        assertThat(status(P4_CONTROL, CONTROL_RESET_COUNTERS)).isEqualTo(EPERM);
        assertThat(p4.counters()).containsEntry("p4.devcmd.out_of_scope", 3L);
        assertThat(dev.refusals().count("p4-devcmd-scope")).isEqualTo(3);
        assertThat(status(P4_READ, 9)).isEqualTo(EINVAL);
    }

    @Test
    void scopeTablesWritesEntriesButNotRegistersOrCounters() throws IOException {
        start(P4Scope.TABLES);
        byte[] f = P4EthernetHookTest.frame(0x02_00_00_ee_00_0cL, 0x0aL, 0x0800, 30);
        var seg = java.lang.foreign.Arena.ofAuto().allocate(f.length);
        java.lang.foreign.MemorySegment.copy(java.lang.foreign.MemorySegment.ofArray(f), 0, seg, 0, f.length);
        assertThat(dev.receive(seg)).isFalse(); // 02:..:0c has no entry: dropped
        IonicDriverModel.Completion c = p4.tableWrite("# to the TAP\ntable_add dmac forward 02:00:00:ee:00:0c => 0\n");
        assertThat(c.status()).isEqualTo(SUCCESS);
        assertThat(c.le().getInt(4)).isEqualTo(1);
        java.util.List<byte[]> wire = new java.util.ArrayList<>();
        dev.lif().sink(x -> wire.add(x.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)));
        assertThat(dev.receive(seg)).isTrue();
        assertThat(wire).hasSize(1);
        // A refused line: EINVAL, and the completion says which line.
        c = p4.tableWrite("table_add dmac forward 02:00:00:ee:00:0d => 0\ntable_add dmac nonesuch 1 => 0\n");
        assertThat(c.status()).isEqualTo(EINVAL);
        assertThat(c.le().getInt(8)).isEqualTo(2);
        // Registers, counters, parse value sets are not table commands.
        assertThat(p4.tableWrite("counter_reset c").status()).isEqualTo(EINVAL);
        assertThat(p4.control("table_clear dmac").status()).isEqualTo(EPERM);
        // Not text, or longer than the data area.
        drv.writeDevcmdData(0, new byte[] {1, 2, 3});
        assertThat(p4.raw(P4_TABLE_WRITE, 0, 3, 0).status()).isEqualTo(EINVAL);
        assertThat(p4.raw(P4_TABLE_WRITE, 0, 5000, 0).status()).isEqualTo(EINVAL);
        assertThat(p4.raw(P4_TABLE_WRITE, 0, -1, 0).status()).isEqualTo(EINVAL);
        assertThat(dev.refusals().snapshot()).containsKey("p4-devcmd-invalid");
    }

    @Test
    void scopeAllRunsAnyCommandResetsCountersAndReadsRegisters() throws IOException {
        dev = new IonicDevice(ProfileLoader.compat(), FaultPlan.none());
        String json = Files.readString(P4EthernetHookTest.PROGRAMS.resolve("l2_switch.json"));
        dev.p4(P4Hooks.load(json, "l2_switch.json", null, null, P4Scope.ALL));
        guest = new ModelGuest(dev, 16 << 20);
        drv = guest.drv;
        drv.bringUp();
        p4 = new P4Control(drv);
        assertThat(p4.control("register_write frames_per_port 1 42").status()).isEqualTo(SUCCESS);
        IonicDriverModel.Completion c = p4.readRegister("MyIngress.frames_per_port", 1);
        assertThat(c.status()).isEqualTo(SUCCESS);
        assertThat(c.le().getLong(4)).isEqualTo(42);
        assertThat(p4.readRegister("frames_per_port", 2).status()).isEqualTo(EINVAL); // 2 cells
        assertThat(p4.readRegister("nonesuch", 0).status()).isEqualTo(EINVAL);
        assertThat(p4.tableWrite("table_add dmac forward 00:00:00:00:00:02 => 1").status()).isEqualTo(SUCCESS);
        // The reads print into the data area, as simple_switch_CLI prints them.
        assertThat(p4.printed(p4.control("register_read frames_per_port 1\ntable_dump dmac"))).isEqualTo("""
                frames_per_port[1]= 42
                MyIngress.dmac entry 0x0: hdr.ethernet.dstAddr EXACT 000000000002 => MyIngress.forward - 0001
                MyIngress.dmac default: MyIngress.drop -
                """);
        assertThat(p4.counters()).containsEntry("p4.devcmd.control", 3L); // register_write, the reads, one read
        assertThat(status(P4_CONTROL, CONTROL_RESET_COUNTERS)).isEqualTo(SUCCESS);
        // Everything back to zero, then the reset counts itself.
        assertThat(p4.counters()).containsEntry("p4.devcmd.control", 1L).containsEntry("p4.devcmd.table_write", 0L);
        assertThat(status(P4_CONTROL, 7)).isEqualTo(EINVAL);
    }

    /**
     * v1model_features.json sends a digest [srcAddr, ingress_port] for a source MAC other than 00:..:0a; devcmd 71
     * what 1 hands the waiting ones to the guest (104-byte entries: name[32], __le32 fields, rsvd, 16-byte
     * little-endian values) and takes them.
     */
    @Test
    void scopeTablesTakesDigests() throws IOException {
        dev = new IonicDevice(ProfileLoader.compat(), FaultPlan.none());
        dev.p4(P4Hooks.load(Files.readString(P4EthernetHookTest.PROGRAMS.resolve("v1model_features.json")),
                "v1model_features.json", Files.readString(P4EthernetHookTest.PROGRAMS.resolve("v1model_features.entries")),
                "v1model_features.entries", P4Scope.TABLES));
        guest = new ModelGuest(dev, 16 << 20);
        drv = guest.drv;
        drv.bringUp();
        p4 = new P4Control(drv);
        for (long src : new long[] {0x0c, 0x0a, 0x02_00_00_00_00_0dL}) {
            byte[] f = P4EthernetHookTest.frame(0x0b, src, 0x88b8, 30);
            var seg = java.lang.foreign.Arena.ofAuto().allocate(f.length);
            java.lang.foreign.MemorySegment.copy(java.lang.foreign.MemorySegment.ofArray(f), 0, seg, 0, f.length);
            dev.receive(seg);
        }
        IonicDriverModel.Completion c = p4.raw(P4_TABLE_WRITE, 1, 0, 0);
        assertThat(c.status()).isEqualTo(SUCCESS);
        assertThat(c.le().getInt(4)).isEqualTo(2); // 00:..:0a is known: no digest
        assertThat(c.le().getInt(8)).isEqualTo(2);
        ByteBuffer d = drv.devcmdData(2 * 104);
        byte[] name = new byte[32];
        d.get(0, name);
        assertThat(new String(name, java.nio.charset.StandardCharsets.US_ASCII)).startsWith("mac_learn\0");
        assertThat(d.getInt(32)).isEqualTo(2);
        assertThat(d.getLong(40)).isEqualTo(0x0c);      // srcAddr, low 64 bits
        assertThat(d.getLong(48)).isZero();             // and high
        assertThat(d.getLong(56)).isZero();             // ingress_port 0: the TAP
        assertThat(d.getLong(104 + 40)).isEqualTo(0x02_00_00_00_00_0dL);
        assertThat(p4.raw(P4_TABLE_WRITE, 1, 0, 0).le().getInt(4)).isZero(); // taken
        assertThat(p4.raw(P4_TABLE_WRITE, 2, 0, 0).status()).isEqualTo(EINVAL);
    }

    @Test
    void onTheAdminQueueTheyAreDeviceCommandsOnly() throws IOException {
        start(P4Scope.ALL);
        drv.probeLif();
        assertThat(drv.adminq(IonicDriverModel.command(P4_READ)).status()).isEqualTo(DEV_CMD);
    }

    /** Random command bytes and data areas never throw, and every answer is one of the documented statuses. */
    @Test
    void hostileCommandsGetAStatusAndTheDeviceGoesOn() throws IOException {
        start(P4Scope.ALL);
        java.util.Random r = new java.util.Random(15);
        String[] words = {"table_add", "dmac", "forward", "=>", "table_delete", "register_write", "0x", "&&&", "->",
                "02:00:00:ee:00:0a", "99999999999999999999", "-1", "\n", "table_clear", "pvs_add", "#"};
        for (int i = 0; i < 1500; i++) {
            ByteBuffer cmd = IonicDriverModel.command(P4_READ + r.nextInt(3));
            byte[] rest = new byte[63];
            r.nextBytes(rest);
            if (r.nextBoolean()) {
                java.util.Arrays.fill(rest, 1, 63, (byte) 0); // a small what, a sane length now and then
                rest[0] = (byte) r.nextInt(4);
            }
            cmd.put(1, rest);
            byte[] data;
            if (r.nextBoolean()) {
                StringBuilder t = new StringBuilder();
                for (int k = r.nextInt(12); k > 0; k--) {
                    t.append(words[r.nextInt(words.length)]).append(r.nextInt(4) == 0 ? "\n" : " ");
                }
                data = t.toString().getBytes(java.nio.charset.StandardCharsets.US_ASCII);
                cmd.putInt(4, r.nextInt(4) == 0 ? r.nextInt() : data.length);
            } else {
                data = new byte[r.nextInt(64)];
                r.nextBytes(data);
            }
            drv.writeDevcmdData(0, data);
            int st = drv.devcmd(cmd).status();
            assertThat(st).as("round " + i).isIn(SUCCESS, EINVAL);
        }
        assertThat(p4.info().name()).isEqualTo("l2_fwd");
        assertThat(dev.refusals().snapshot()).doesNotContainKey("ionic-devcmd-internal");
    }
}
