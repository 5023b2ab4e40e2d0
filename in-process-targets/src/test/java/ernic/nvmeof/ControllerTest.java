package ernic.nvmeof;

import ernic.nvmeof.Harness.Cqe;
import ernic.nvmeof.Harness.Queue;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The controller against a byte array standing in for guest memory. Expected values are the NVMe base
 * and NVMe-oF specifications' (offsets and bit positions written here from the spec's tables).
 */
class ControllerTest {
    final Harness h = new Harness("nvmeof:size=1M,bs=4096,nqn=nqn.2026-12.io.ernic:test,queues=4,serial=SN123,model=Model X");

    static String ascii(byte[] b, int off, int len) {
        return new String(b, off, len, StandardCharsets.US_ASCII);
    }

    @Test
    void connectEnableAndProperties() {
        Queue a = admin0();
        Cqe c = a.connect(31, 0xffff, "nqn.2026-12.io.ernic:test");
        assertThat(c.sc()).isZero();
        int cntlid = (int) (c.result() & 0xffff);
        assertThat(cntlid).isBetween(1, 0xffef);
        assertThat(c.sqId()).isZero();
        // Property Get CAP (8 bytes: attrib bit 0 = 1, offset 0)
        Cqe cap = a.send(Sqe.fabrics(0x04).cdw(10, 1).cdw(11, 0x00));
        long v = cap.result();
        assertThat(v & 0xffff).as("MQES").isEqualTo(127);
        assertThat(v >>> 37 & 1).as("CSS NVM").isEqualTo(1);
        assertThat(v >>> 48 & 0xf).as("MPSMIN").isZero();
        // VS at 0x08 = 1.3
        assertThat(a.send(Sqe.fabrics(0x04).cdw(11, 0x08)).result()).isEqualTo(0x00010300L);
        // CSTS (0x1c) before enable: RDY 0; an admin command now is a command sequence error
        assertThat(a.send(Sqe.fabrics(0x04).cdw(11, 0x1c)).result()).isZero();
        assertThat(a.send(Sqe.op(0x18)).sc()).isEqualTo(0x0c);
        // CC (0x14) = EN | IOSQES 6 << 16 | IOCQES 4 << 20
        assertThat(a.send(Sqe.fabrics(0x00).cdw(11, 0x14).cdw64(12, 1 | 6 << 16 | 4 << 20)).sc()).isZero();
        assertThat(a.send(Sqe.fabrics(0x04).cdw(11, 0x1c)).result() & 1).as("CSTS.RDY").isEqualTo(1);
        assertThat(a.send(Sqe.fabrics(0x04).cdw(11, 0x14)).result()).isEqualTo(1 | 6 << 16 | 4 << 20);
        assertThat(a.send(Sqe.op(0x18)).sc()).as("keep alive").isZero();
        // Shutdown: CC.SHN = 01b -> CSTS.SHST = 10b
        a.send(Sqe.fabrics(0x00).cdw(11, 0x14).cdw64(12, 1 | 6 << 16 | 4 << 20 | 1 << 14));
        assertThat(a.send(Sqe.fabrics(0x04).cdw(11, 0x1c)).result() >>> 2 & 3).isEqualTo(2);
        assertThat(h.counters.commands.get(NvmeofCounters.Command.CONNECT)).isEqualTo(1);
        assertThat(h.counters.traffic.get(NvmeofCounters.Traffic.CONNECTIONS)).isEqualTo(1);
    }

    /** A fresh admin queue (hsqsize 31). */
    Queue admin0() {
        return h.new Queue(0, 31);
    }

    @Test
    void identifyController() {
        Queue a = h.adminEnabled();
        byte[] id = a.readData(Sqe.op(0x06).cdw(10, 1), 0x10000, 4096);
        ByteBuffer b = Harness.le(id);
        assertThat(ascii(id, 4, 20)).isEqualTo("SN123" + " ".repeat(15));
        assertThat(ascii(id, 24, 40)).isEqualTo("Model X" + " ".repeat(33));
        assertThat(id[77]).as("MDTS").isEqualTo((byte) 8);
        assertThat(b.getShort(78) & 0xffff).as("CNTLID").isEqualTo(a.q.controllerId());
        assertThat(b.getInt(80)).as("VER").isEqualTo(0x00010300);
        assertThat(id[111]).as("CNTRLTYPE I/O").isEqualTo((byte) 1);
        assertThat(id[512]).as("SQES").isEqualTo((byte) 0x66);
        assertThat(id[513]).as("CQES").isEqualTo((byte) 0x44);
        assertThat(b.getShort(514)).as("MAXCMD").isEqualTo((short) 128);
        assertThat(b.getInt(516)).as("NN").isEqualTo(1);
        assertThat(b.getShort(520) & 0b1100).as("ONCS DSM + Write Zeroes").isEqualTo(0b1100);
        assertThat(id[525] & 1).as("VWC present").isEqualTo(1);
        int sgls = b.getInt(536);
        assertThat(sgls & 3).as("SGLs supported").isEqualTo(1);
        assertThat(sgls >>> 2 & 1).as("keyed SGL data block").isEqualTo(1);
        assertThat(sgls >>> 20 & 1).as("offset-based in-capsule data").isEqualTo(1);
        assertThat(ascii(id, 768, 26)).isEqualTo("nqn.2026-12.io.ernic:test\0");
        assertThat(b.getInt(1792)).as("IOCCSZ: 64-byte SQE + 8 KiB").isEqualTo((64 + 8192) / 16);
        assertThat(b.getInt(1796)).as("IORCSZ").isEqualTo(1);
        assertThat(b.getShort(1800)).as("ICDOFF").isZero();
        assertThat(id[1803]).as("MSDBD").isEqualTo((byte) 1);
        assertThat(b.getShort(320)).as("KAS").isEqualTo((short) 10);
    }

    @Test
    void identifyNamespaceAndLists() {
        Queue a = h.adminEnabled();
        byte[] ns = a.readData(Sqe.op(0x06).nsid(1).cdw(10, 0), 0x10000, 4096);
        ByteBuffer b = Harness.le(ns);
        assertThat(b.getLong(0)).as("NSZE").isEqualTo(256);
        assertThat(b.getLong(8)).as("NCAP").isEqualTo(256);
        assertThat(b.getLong(16)).as("NUSE").isEqualTo(256);
        assertThat(ns[25]).as("NLBAF").isZero();
        assertThat(ns[26]).as("FLBAS").isZero();
        assertThat(ns[128 + 2]).as("LBAF0 LBADS").isEqualTo((byte) 12);
        byte[] nguid = Arrays.copyOfRange(ns, 104, 120);
        assertThat(nguid).isNotEqualTo(new byte[16]);

        byte[] list = a.readData(Sqe.op(0x06).nsid(0).cdw(10, 2), 0x10000, 4096);
        assertThat(Harness.le(list).getInt(0)).isEqualTo(1);
        assertThat(Harness.le(list).getInt(4)).isZero();
        byte[] after = a.readData(Sqe.op(0x06).nsid(1).cdw(10, 2), 0x10000, 4096);
        assertThat(Harness.le(after).getInt(0)).as("nothing above NSID 1").isZero();

        byte[] d = a.readData(Sqe.op(0x06).nsid(1).cdw(10, 3), 0x10000, 4096);
        // descriptor: NIDT @0, NIDL @1, 2 reserved, NID @4
        assertThat(d[0]).as("NGUID type").isEqualTo((byte) 2);
        assertThat(d[1]).isEqualTo((byte) 16);
        assertThat(Arrays.copyOfRange(d, 4, 20)).isEqualTo(nguid);
        assertThat(d[20]).as("UUID type").isEqualTo((byte) 3);
        assertThat(d[21]).isEqualTo((byte) 16);
        assertThat(d[40]).as("CSI type").isEqualTo((byte) 4);
        assertThat(d[41]).isEqualTo((byte) 1);
        assertThat(d[44]).as("NVM command set").isZero();
    }

    @Test
    void features() {
        Queue a = h.adminEnabled();
        // Set Features Number of Queues (FID 07h): asks 0xffff... not allowed; asks 16/16 -> gets 4/4 (0's based 3)
        Cqe nq = a.send(Sqe.op(0x09).cdw(10, 0x07).cdw(11, 15 << 16 | 15));
        assertThat(nq.sc()).isZero();
        assertThat(nq.result()).isEqualTo(3L << 16 | 3);
        assertThat(a.send(Sqe.op(0x0a).cdw(10, 0x07)).result()).isEqualTo(3L << 16 | 3);
        // Volatile Write Cache (06h): enabled by default, can be turned off
        assertThat(a.send(Sqe.op(0x0a).cdw(10, 0x06)).result()).isEqualTo(1);
        assertThat(a.send(Sqe.op(0x09).cdw(10, 0x06).cdw(11, 0)).sc()).isZero();
        assertThat(a.send(Sqe.op(0x0a).cdw(10, 0x06)).result()).isZero();
        // SEL = 1 (default) gives the default again; SEL = 3 (capabilities): changeable (bit 2)
        assertThat(a.send(Sqe.op(0x0a).cdw(10, 0x06 | 1 << 8)).result()).isEqualTo(1);
        assertThat(a.send(Sqe.op(0x0a).cdw(10, 0x06 | 3 << 8)).result()).isEqualTo(4);
        // Keep Alive Timer (0Fh)
        assertThat(a.send(Sqe.op(0x09).cdw(10, 0x0f).cdw(11, 5000)).sc()).isZero();
        assertThat(a.send(Sqe.op(0x0a).cdw(10, 0x0f)).result()).isEqualTo(5000);
        // Async event configuration (0Bh)
        a.send(Sqe.op(0x09).cdw(10, 0x0b).cdw(11, 0x100));
        assertThat(a.send(Sqe.op(0x0a).cdw(10, 0x0b)).result()).isEqualTo(0x100);
    }

    @Test
    void logPages() {
        Queue a = h.adminEnabled();
        // Get Log Page: LID cdw10 7:0, NUMDL cdw10 31:16 (0's based dwords)
        byte[] smart = a.readData(Sqe.op(0x02).nsid(0xffffffff).cdw(10, 0x02 | (512 / 4 - 1) << 16), 0x20000, 512);
        assertThat(Harness.le(smart).getShort(1) & 0xffff).as("temperature in K").isBetween(273, 373);
        assertThat(smart[3]).as("available spare %").isEqualTo((byte) 100);
        byte[] fw = a.readData(Sqe.op(0x02).cdw(10, 0x03 | (512 / 4 - 1) << 16), 0x20000, 512);
        assertThat(fw[0] & 7).as("AFI: slot 1 active").isEqualTo(1);
        assertThat(ascii(fw, 8, 8).trim()).isNotEmpty();
        byte[] err = a.readData(Sqe.op(0x02).cdw(10, 0x01 | (64 / 4 - 1) << 16), 0x20000, 64);
        assertThat(err).isEqualTo(new byte[64]);
        // The discovery log is the discovery controller's, not an I/O controller's
        int key = h.nextKey++;
        long addr = h.host.register(key, 0x20000, 1024);
        assertThat(a.send(Sqe.op(0x02).cdw(10, 0x70 | 255 << 16).keyed(addr, 1024, key, false)).sc()).isEqualTo(0x109);
    }

    @Test
    void discoveryController() {
        Queue d = admin0();
        Cqe c = d.connect(31, 0xffff, "nqn.2014-08.org.nvmexpress.discovery");
        assertThat(c.sc()).isZero();
        d.send(Sqe.fabrics(0x00).cdw(11, 0x14).cdw64(12, 1));
        byte[] id = d.readData(Sqe.op(0x06).cdw(10, 1), 0x10000, 4096);
        assertThat(id[111]).as("CNTRLTYPE discovery").isEqualTo((byte) 2);
        assertThat(ascii(id, 768, 37)).isEqualTo("nqn.2014-08.org.nvmexpress.discovery\0");
        // the header (1024 bytes) first, as nvme-cli does, then the records by offset (LPOL cdw12)
        byte[] hdr = d.readData(Sqe.op(0x02).cdw(10, 0x70 | (1024 / 4 - 1) << 16), 0x20000, 1024);
        ByteBuffer hb = Harness.le(hdr);
        assertThat(hb.getLong(0)).as("GENCTR").isPositive();
        assertThat(hb.getLong(8)).as("NUMREC").isEqualTo(2);
        assertThat(hb.getShort(16)).as("RECFMT").isZero();
        byte[] e = d.readData(Sqe.op(0x02).cdw(10, 0x70 | (1024 / 4 - 1) << 16).cdw(12, 1024), 0x20000, 1024);
        assertThat(e[0]).as("TRTYPE RDMA").isEqualTo((byte) 1);
        assertThat(e[1]).as("ADRFAM IPv4").isEqualTo((byte) 1);
        assertThat(e[2]).as("SUBTYPE NVM subsystem").isEqualTo((byte) 2);
        assertThat(Harness.le(e).getShort(6) & 0xffff).as("CNTLID dynamic").isEqualTo(0xffff);
        assertThat(ascii(e, 32, 32).trim()).as("TRSVCID").isEqualTo("4420");
        assertThat(ascii(e, 256, 26)).isEqualTo("nqn.2026-12.io.ernic:test\0");
        assertThat(ascii(e, 512, 256).trim()).as("TRADDR").isEqualTo("192.168.200.1");
        assertThat(e[768]).as("RDMA QPTYPE connected").isEqualTo((byte) 1);
        assertThat(e[770]).as("RDMA CMS rdma_cm").isEqualTo((byte) 1);
        byte[] e2 = d.readData(Sqe.op(0x02).cdw(10, 0x70 | (1024 / 4 - 1) << 16).cdw(12, 2048), 0x20000, 1024);
        assertThat(e2[2]).as("SUBTYPE current discovery subsystem").isEqualTo((byte) 3);
        // no I/O queue on the discovery controller; Identify Namespace is refused
        int key = h.nextKey++;
        long addr = h.host.register(key, 0x10000, 4096);
        assertThat(d.send(Sqe.op(0x06).nsid(1).cdw(10, 0).keyed(addr, 4096, key, false)).sc()).isEqualTo(0x02);
    }

    @Test
    void writeAndReadBackThroughKeyedAndInCapsuleData() {
        Queue a = h.adminEnabled();
        Queue q = h.io(a, 1);
        byte[] data = new byte[8192];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 7 + 3);
        }
        // keyed write of 2 blocks at LBA 5, invalidate requested -> response by SEND_INV with that key
        int key = h.nextKey++;
        long addr = h.host.register(key, 0x40000, 8192);
        System.arraycopy(data, 0, h.host.mem, 0x40000, 8192);
        Cqe w = q.send(Sqe.op(0x01).nsid(1).cdw64(10, 5).cdw(12, 1).keyed(addr, 8192, key, true));
        assertThat(w.sc()).isZero();
        assertThat(w.invalidate()).isTrue();
        assertThat(w.rkey()).isEqualTo(key);
        assertThat(w.sqId()).isEqualTo(1);
        byte[] back = q.readData(Sqe.op(0x02).nsid(1).cdw64(10, 5).cdw(12, 1), 0x80000, 8192);
        assertThat(back).isEqualTo(data);
        // in-capsule write of one block at LBA 0: no key, no transfer from host memory
        byte[] small = Arrays.copyOf(data, 4096);
        small[0] = 42;
        int moved = h.host.moved;
        Cqe ic = q.send(Sqe.op(0x01).nsid(1).cdw64(10, 0).cdw(12, 0).inline(small));
        assertThat(ic.sc()).isZero();
        assertThat(ic.invalidate()).isFalse();
        assertThat(h.host.moved).isEqualTo(moved);
        assertThat(q.readData(Sqe.op(0x02).nsid(1).cdw64(10, 0).cdw(12, 0), 0x80000, 4096)).isEqualTo(small);
        assertThat(h.counters.traffic.get(NvmeofCounters.Traffic.IN_CAPSULE_WRITES)).isEqualTo(1);
        assertThat(h.counters.traffic.get(NvmeofCounters.Traffic.BYTES_WRITTEN)).isEqualTo(8192 + 4096);
        assertThat(h.counters.commands.get(NvmeofCounters.Command.READ)).isEqualTo(2);
    }

    @Test
    void flushWriteZeroesAndDeallocate() {
        Queue a = h.adminEnabled();
        Queue q = h.io(a, 2);
        byte[] ones = new byte[4096 * 4];
        Arrays.fill(ones, (byte) 0xff);
        int key = h.nextKey++;
        long addr = h.host.register(key, 0x40000, ones.length);
        System.arraycopy(ones, 0, h.host.mem, 0x40000, ones.length);
        assertThat(q.send(Sqe.op(0x01).nsid(1).cdw64(10, 10).cdw(12, 3).keyed(addr, ones.length, key, false)).sc()).isZero();
        assertThat(q.send(Sqe.op(0x00).nsid(1)).sc()).as("flush").isZero();
        assertThat(q.send(Sqe.op(0x00).nsid(0xffffffff)).sc()).as("flush all namespaces").isZero();
        // Write Zeroes: LBA 10, one block
        assertThat(q.send(Sqe.op(0x08).nsid(1).cdw64(10, 10).cdw(12, 0)).sc()).isZero();
        byte[] r = q.readData(Sqe.op(0x02).nsid(1).cdw64(10, 10).cdw(12, 1), 0x80000, 8192);
        assertThat(Arrays.copyOf(r, 4096)).isEqualTo(new byte[4096]);
        assertThat(r[4096]).isEqualTo((byte) 0xff);
        // DSM, AD (cdw11 bit 2): one range {attr le32, nlb le32, slba le64}: LBA 11, 2 blocks
        byte[] range = new byte[16];
        Harness.le(range).putInt(4, 2).putLong(8, 11);
        assertThat(q.send(Sqe.op(0x09).nsid(1).cdw(10, 0).cdw(11, 4).inline(range)).sc()).isZero();
        r = q.readData(Sqe.op(0x02).nsid(1).cdw64(10, 11).cdw(12, 2), 0x80000, 4096 * 3);
        assertThat(Arrays.copyOf(r, 8192)).isEqualTo(new byte[8192]);
        assertThat(r[8192]).as("LBA 13 untouched").isEqualTo((byte) 0xff);
        // The Linux host maps a 4096-byte buffer (256 ranges) for any NR, as blkdiscard showed in the real
        // guest: only the NR ranges count (nvmet_check_data_len_lte). LBA 13, 1 block; fewer bytes are refused.
        byte[] page = new byte[4096];
        Harness.le(page).putInt(4, 1).putLong(8, 13);
        assertThat(q.send(Sqe.op(0x09).nsid(1).cdw(10, 0).cdw(11, 4).inline(page)).sc()).isZero();
        r = q.readData(Sqe.op(0x02).nsid(1).cdw64(10, 13).cdw(12, 0), 0x80000, 4096);
        assertThat(r).isEqualTo(new byte[4096]);
        assertThat(q.send(Sqe.op(0x09).nsid(1).cdw(10, 1).cdw(11, 4).inline(range)).sc())
                .as("two ranges in 16 bytes").isEqualTo(0x0f);
    }

    @Test
    void asyncEventsAreHeldAndAbortDoesNotAbort() {
        Queue a = h.adminEnabled();
        for (int i = 0; i < 4; i++) {
            assertThat(a.send(Sqe.op(0x0c))).as("an AER stays outstanding").isNull();
        }
        assertThat(a.send(Sqe.op(0x0c)).sc()).as("AERL + 1 exceeded").isEqualTo(0x105);
        Cqe ab = a.send(Sqe.op(0x08).cdw(10, 1 << 16));
        assertThat(ab.sc()).isZero();
        assertThat(ab.result() & 1).as("command not aborted").isEqualTo(1);
    }

    @Test
    void keepAliveExpiryFailsTheController() {
        Queue a = admin0();
        int key = h.nextKey++;
        long addr = h.host.register(key, 0x3000, 1024);
        System.arraycopy(Sqe.connectData(0xffff, h.options.nqn(), Harness.HOST_NQN), 0, h.host.mem, 0x3000, 1024);
        assertThat(a.send(Sqe.connect(0, 31, 2000).keyed(addr, 1024, key, false)).sc()).isZero();
        a.send(Sqe.fabrics(0x00).cdw(11, 0x14).cdw64(12, 1 | 6 << 16 | 4 << 20));
        Queue q = h.io(a, 1);
        h.ticker.advance(1500, TimeUnit.MILLISECONDS);
        a.send(Sqe.op(0x18));
        h.ticker.advance(1500, TimeUnit.MILLISECONDS);
        h.target.tick();
        assertThat(a.wire.disconnects).as("keep-alive heard 1.5 s ago").isZero();
        h.ticker.advance(1000, TimeUnit.MILLISECONDS);
        h.target.tick();
        assertThat(a.wire.disconnects).isEqualTo(1);
        assertThat(q.wire.disconnects).isEqualTo(1);
        assertThat(h.counters.traffic.get(NvmeofCounters.Traffic.KEEP_ALIVE_EXPIRED)).isEqualTo(1);
        // the controller is gone: its id no longer takes I/O queues
        Queue late = h.new Queue(2, 127);
        assertThat(late.connect(127, a.q.controllerId(), h.options.nqn()).sc()).isEqualTo(0x182);
    }

    @Test
    void closingTheAdminQueueEndsTheControllerAndItsIoQueues() {
        Queue a = h.adminEnabled();
        Queue q = h.io(a, 1);
        int id = a.q.controllerId();
        a.q.close();
        assertThat(q.wire.disconnects).isEqualTo(1);
        assertThat(q.q.closed()).isTrue();
        Queue again = h.new Queue(1, 127);
        assertThat(again.connect(127, id, h.options.nqn()).sc()).isEqualTo(0x182);
        // a new admin connect works and gets a controller
        assertThat(h.adminEnabled().q.controllerId()).isPositive();
    }

    @Test
    void aControllerResetAnswersTheHeldAsyncEvents() {
        Queue a = h.adminEnabled();
        a.send(Sqe.op(0x0c));
        int before = a.wire.cqes.size();
        a.send(Sqe.fabrics(0x00).cdw(11, 0x14).cdw64(12, 0));  // CC.EN = 0
        assertThat(a.wire.cqes).hasSize(before + 2);
        assertThat(a.wire.cqes.get(before).sc()).as("the AER, aborted").isEqualTo(0x07);
        assertThat(a.send(Sqe.fabrics(0x04).cdw(11, 0x1c)).result() & 1).as("CSTS.RDY").isZero();
    }

    @Test
    void countersAreInTheRegistry() {
        ernic.counters.CounterRegistry r = new ernic.counters.CounterRegistry();
        h.counters.registerIn(r);
        Queue a = h.adminEnabled();
        a.send(Sqe.op(0x7e));
        java.util.Map<String, Long> m = r.totals();
        assertThat(m).containsEntry("nvmeof.cmd.connect", 1L).containsEntry("nvmeof.cmd.property_set", 1L)
                .containsEntry("nvmeof.err.invalid_opcode", 1L).containsEntry("nvmeof.connections", 1L)
                .containsKeys("nvmeof.bytes.read", "nvmeof.cm.req", "nvmeof.cmd.read", "nvmeof.err.lba_out_of_range");
    }
}
