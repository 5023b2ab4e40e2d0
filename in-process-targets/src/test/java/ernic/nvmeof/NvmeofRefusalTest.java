package ernic.nvmeof;

import ernic.nvmeof.Harness.Cqe;
import ernic.nvmeof.Harness.Queue;
import ernic.nvmeof.NvmeofCounters.Status;
import ernic.nvmeof.NvmeofCounters.Traffic;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each class of bad input gets the status an NVMe controller returns (NVMe base spec, NVMe-oF, and where
 * the spec leaves room, what Linux nvmet does), with DNR, a counter, and the target keeps serving.
 */
class NvmeofRefusalTest {
    final Harness h = new Harness("nvmeof:size=1M,bs=512,queues=2");
    final Queue a = h.adminEnabled();
    final Queue q = h.io(a, 1);

    /** Asserts the response's status (SCT << 8 | SC) and DNR, and that it was counted under {@code counter}. */
    Cqe refused(Cqe c, int status, Status counter) {
        assertThat(c).as("a response").isNotNull();
        assertThat(c.sc()).as("status").isEqualTo(status);
        assertThat(c.dnr()).as("do not retry").isTrue();
        assertThat(h.counters.errors.get(counter)).isPositive();
        return c;
    }

    /** The queues still serve afterwards. */
    void stillServing() {
        assertThat(a.send(Sqe.op(0x18)).sc()).isZero();
        assertThat(q.send(Sqe.op(0x00).nsid(1)).sc()).isZero();
    }

    int key() {
        return h.nextKey++;
    }

    @Test
    void invalidOpcode() {
        refused(a.send(Sqe.op(0x7e)), 0x01, Status.INVALID_OPCODE);
        refused(q.send(Sqe.op(0x05).nsid(1)), 0x01, Status.INVALID_OPCODE);  // Compare: not offered
        refused(q.send(Sqe.fabrics(0x04).cdw(11, 0)), 0x01, Status.INVALID_OPCODE);  // property get on an I/O queue
        refused(a.send(Sqe.fabrics(0x7e)), 0x01, Status.INVALID_OPCODE);
        assertThat(h.counters.commands.get(NvmeofCounters.Command.UNSUPPORTED)).isGreaterThanOrEqualTo(3);
        stillServing();
    }

    @Test
    void invalidFieldFlagsAndValues() {
        refused(a.send(Sqe.op(0x18).flags(0x00)), 0x02, Status.INVALID_FIELD);          // PRPs
        refused(a.send(Sqe.op(0x18).flags(0x41)), 0x02, Status.INVALID_FIELD);          // fused
        refused(a.send(Sqe.fabrics(0x04).cdw(11, 0x24)), 0x02, Status.INVALID_FIELD);   // AQA: not a fabrics property
        refused(a.send(Sqe.fabrics(0x00).cdw(11, 0x1c)), 0x02, Status.INVALID_FIELD);   // CSTS is read-only
        refused(a.send(Sqe.op(0x09).cdw(10, 0x07).cdw(11, 0xffff)), 0x02, Status.INVALID_FIELD);
        refused(a.send(Sqe.op(0x0a).cdw(10, 0x7e)), 0x02, Status.INVALID_FIELD);        // unknown feature
        refused(a.send(Sqe.op(0x0a).cdw(10, 0x06 | 5 << 8)), 0x02, Status.INVALID_FIELD);  // SEL 5
        int k = key();
        long addr = h.host.register(k, 0x10000, 4096);
        refused(a.send(Sqe.op(0x06).cdw(10, 0x1f).keyed(addr, 4096, k, false)), 0x02, Status.INVALID_FIELD);  // CNS
        stillServing();
    }

    @Test
    void featureNotSaveableAndLogPage() {
        refused(a.send(Sqe.op(0x09).cdw(10, 0x06 | 1 << 31).cdw(11, 1)), 0x10d, Status.FEATURE_NOT_SAVEABLE);
        int k = key();
        long addr = h.host.register(k, 0x10000, 512);
        refused(a.send(Sqe.op(0x02).cdw(10, 0x42 | 127 << 16).keyed(addr, 512, k, false)), 0x109, Status.INVALID_LOG_PAGE);
        // an offset that is not a dword multiple
        refused(a.send(Sqe.op(0x02).cdw(10, 0x02 | 127 << 16).cdw(12, 2).keyed(addr, 512, k, false)),
                0x02, Status.INVALID_FIELD);
    }

    @Test
    void sglTypeSubtypeAndLength() {
        int k = key();
        long addr = h.host.register(k, 0x10000, 8192);
        // a Segment descriptor (type 2): not offered
        refused(q.send(Sqe.op(0x02).nsid(1).cdw(12, 0).keyed(addr, 512, k, false).sglType(0x20)), 0x11, Status.SGL_TYPE_INVALID);
        // keyed, subtype 1 (offset): invalid subtype for a keyed block
        refused(q.send(Sqe.op(0x02).nsid(1).cdw(12, 0).keyed(addr, 512, k, false).sglType(0x41)), 0x02, Status.INVALID_FIELD);
        // data block, subtype address (no key): not usable over fabrics
        refused(q.send(Sqe.op(0x02).nsid(1).cdw(12, 0).keyed(addr, 512, k, false).sglType(0x00)), 0x02, Status.INVALID_FIELD);
        // the SGL length is not what the command moves (2 blocks, 512 bytes named)
        refused(q.send(Sqe.op(0x02).nsid(1).cdw(12, 1).keyed(addr, 512, k, false)), 0x0f, Status.SGL_LENGTH_INVALID);
        // Identify needs exactly 4096 bytes
        refused(a.send(Sqe.op(0x06).cdw(10, 1).keyed(addr, 2048, k, false)), 0x0f, Status.SGL_LENGTH_INVALID);
        // a command without data carrying some
        refused(q.send(Sqe.op(0x00).nsid(1).keyed(addr, 512, k, false)), 0x0f, Status.SGL_LENGTH_INVALID);
        stillServing();
    }

    @Test
    void inCapsuleData() {
        byte[] block = new byte[512];
        // in-capsule data on a Read (controller to host): invalid field
        refused(q.send(Sqe.op(0x02).nsid(1).cdw(12, 0).inline(block)), 0x02, Status.INVALID_FIELD);
        // an offset past the in-capsule data the controller offers (IOCCSZ)
        refused(q.send(Sqe.op(0x01).nsid(1).cdw(12, 0).inline(8192, 512, block)), 0x16, Status.SGL_OFFSET_INVALID);
        // more data named than the capsule carries
        refused(q.send(Sqe.op(0x01).nsid(1).cdw(12, 0).inline(0, 512, new byte[100])), 0x0f, Status.SGL_LENGTH_INVALID);
        stillServing();
    }

    @Test
    void lbaOutOfRangeAndInvalidNamespace() {
        int k = key();
        long addr = h.host.register(k, 0x10000, 4096);
        // 1 MiB of 512-byte blocks = 2048 blocks: LBA 2047 + 2 blocks is past the end
        refused(q.send(Sqe.op(0x02).nsid(1).cdw64(10, 2047).cdw(12, 1).keyed(addr, 1024, k, false)), 0x80, Status.LBA_OUT_OF_RANGE);
        // an SLBA that would overflow a 64-bit byte offset
        refused(q.send(Sqe.op(0x01).nsid(1).cdw64(10, -2L).cdw(12, 1).keyed(addr, 1024, k, false)), 0x80, Status.LBA_OUT_OF_RANGE);
        refused(q.send(Sqe.op(0x08).nsid(1).cdw64(10, 2048).cdw(12, 0)), 0x80, Status.LBA_OUT_OF_RANGE);
        byte[] range = new byte[16];
        Harness.le(range).putInt(4, 10).putLong(8, 2040);
        refused(q.send(Sqe.op(0x09).nsid(1).cdw(11, 4).inline(range)), 0x80, Status.LBA_OUT_OF_RANGE);
        refused(q.send(Sqe.op(0x02).nsid(2).cdw(12, 0).keyed(addr, 512, k, false)), 0x0b, Status.INVALID_NS);
        refused(a.send(Sqe.op(0x06).nsid(7).cdw(10, 0).keyed(addr, 4096, k, false)), 0x0b, Status.INVALID_NS);
        stillServing();
    }

    @Test
    void keyZeroMovesNothing() {
        h.host.mem[0] = 0x55;
        int moved = h.host.moved;
        Cqe c = refused(q.send(Sqe.op(0x02).nsid(1).cdw(12, 0).keyed(ArrayHost.BASE, 512, 0, false)),
                0x04, Status.DATA_TRANSFER_ERROR);
        assertThat(c.invalidate()).isFalse();
        assertThat(h.host.moved).isEqualTo(moved);
        assertThat(h.host.mem[0]).isEqualTo((byte) 0x55);
        stillServing();
    }

    @Test
    void aRefusedKeyFailsTheControllerAsNvmetRdmaDoes() {
        Queue q2 = h.io(a, 2);
        int responses = q.wire.cqes.size();
        // rkey 0x999 was never registered: the RDMA READ of a Write fails
        Cqe c = q.send(Sqe.op(0x01).nsid(1).cdw(12, 0).keyed(ArrayHost.BASE, 512, 0x999, true));
        assertThat(c).as("no response for the failed command").isNull();
        assertThat(q.wire.cqes).hasSize(responses);
        assertThat(h.counters.traffic.get(Traffic.TRANSFERS_REFUSED)).isEqualTo(1);
        assertThat(h.counters.traffic.get(Traffic.FATAL)).isEqualTo(1);
        // every queue of the controller is disconnected
        assertThat(a.wire.disconnects).isEqualTo(1);
        assertThat(q.wire.disconnects).isEqualTo(1);
        assertThat(q2.wire.disconnects).isEqualTo(1);
        // later capsules on the dead queues are dropped; a new controller can be made
        assertThat(q.send(Sqe.op(0x00).nsid(1))).isNull();
        assertThat(h.adminEnabled().q.controllerId()).isPositive();
    }

    @Test
    void aRefusedKeyOnAReadToo() {
        int k = key();
        h.host.register(k, 0x10000, 256);  // smaller than the 512 bytes to write into it
        Cqe c = q.send(Sqe.op(0x02).nsid(1).cdw(12, 0).keyed(ArrayHost.BASE + 0x10000, 512, k, false));
        assertThat(c).isNull();
        assertThat(q.wire.disconnects).isEqualTo(1);
    }

    @Test
    void commandsOutOfSequence() {
        Queue fresh = h.new Queue(0, 31);
        refused(fresh.send(Sqe.op(0x06).cdw(10, 1)), 0x01, Status.INVALID_OPCODE);       // before Connect
        fresh.connect(31, 0xffff, h.options.nqn());
        refused(fresh.send(Sqe.op(0x18)), 0x0c, Status.COMMAND_SEQUENCE_ERROR);          // before CC.EN
        // a second Connect on a connected queue
        refused(fresh.connect(31, 0xffff, h.options.nqn()), 0x01, Status.INVALID_OPCODE);
        // an I/O Connect for a queue that is connected already
        Queue twice = h.new Queue(1, 127);
        refused(twice.connect(127, a.q.controllerId(), h.options.nqn()), 0x0c, Status.COMMAND_SEQUENCE_ERROR);
    }

    @Test
    void connectRefusals() {
        Queue b = h.new Queue(0, 31);
        // wrong subsystem NQN: Connect Invalid Parameters, IATTR = 1 (data), IPO = 256 (SUBNQN)
        Cqe c = refused(b.connect(31, 0xffff, "nqn.2026-12.io.ernic:other"), 0x182, Status.CONNECT_INVALID_PARAM);
        assertThat(c.result()).isEqualTo(1L << 16 | 256);
        // an admin Connect must ask for the dynamic controller (0xffff): IPO 16 (CNTLID)
        c = refused(b.connect(31, 7, h.options.nqn()), 0x182, Status.CONNECT_INVALID_PARAM);
        assertThat(c.result()).isEqualTo(1L << 16 | 16);
        // an empty host NQN: Connect Invalid Host, IPO 512 (HOSTNQN)
        c = refused(b.connect(31, 0xffff, h.options.nqn(), ""), 0x184, Status.CONNECT_INVALID_HOST);
        assertThat(c.result()).isEqualTo(1L << 16 | 512);
        // SQ size 0, or more than the queue the CM accepted: IPO 44 (SQSIZE in the SQE)
        c = refused(b.connect(0, 0xffff, h.options.nqn()), 0x182, Status.CONNECT_INVALID_PARAM);
        assertThat(c.result()).isEqualTo(44);
        c = refused(b.connect(40, 0xffff, h.options.nqn()), 0x182, Status.CONNECT_INVALID_PARAM);
        // a record format other than 0
        int k = key();
        long addr = h.host.register(k, 0x3000, 1024);
        Sqe bad = Sqe.connect(0, 31, 0).keyed(addr, 1024, k, false);
        bad.b.putShort(40, (short) 1);
        refused(b.send(bad), 0x180, Status.CONNECT_FORMAT);
        // Connect data of the wrong size
        refused(b.send(Sqe.connect(0, 31, 0).keyed(addr, 512, k, false)), 0x0f, Status.SGL_LENGTH_INVALID);
        // an I/O Connect for a controller that does not exist, or of another host
        Queue io = h.new Queue(2, 127);
        refused(io.connect(127, 33, h.options.nqn()), 0x182, Status.CONNECT_INVALID_PARAM);
        refused(io.connect(127, a.q.controllerId(), h.options.nqn(), "nqn.2014-08.org.nvmexpress:uuid:other"),
                0x182, Status.CONNECT_INVALID_PARAM);
        // a Connect whose qid is not the one the CM connection was made for: IPO 42 (QID)
        Queue mismatch = h.new Queue(2, 127);
        k = key();
        addr = h.host.register(k, 0x3000, 1024);
        System.arraycopy(Sqe.connectData(a.q.controllerId(), h.options.nqn(), Harness.HOST_NQN), 0, h.host.mem, 0x3000, 1024);
        c = refused(mismatch.send(Sqe.connect(1, 127, 0).keyed(addr, 1024, k, false)), 0x182, Status.CONNECT_INVALID_PARAM);
        assertThat(c.result()).isEqualTo(42);
        assertThat(h.counters.traffic.get(Traffic.CONNECTS_REFUSED)).isGreaterThanOrEqualTo(9);
        // and a good one afterwards
        assertThat(io.connect(127, a.q.controllerId(), h.options.nqn()).sc()).isZero();
    }

    @Test
    void queueOverflowAndShortCapsules() {
        Queue small = h.new Queue(0, 3);  // 4 entries
        small.connect(3, 0xffff, h.options.nqn());
        small.send(Sqe.fabrics(0x00).cdw(11, 0x14).cdw64(12, 1 | 6 << 16 | 4 << 20));
        for (int i = 0; i < 4; i++) {
            small.send(Sqe.op(0x0c));  // four AERs hold all four slots
        }
        Cqe c = small.send(Sqe.op(0x18));
        assertThat(c.sc()).isEqualTo(0x06);
        assertThat(h.counters.traffic.get(Traffic.QUEUE_OVERFLOW)).isEqualTo(1);
        // a capsule shorter than an SQE: nvmet treats it as fatal for the controller
        small.send(new byte[40]);
        assertThat(small.wire.disconnects).isEqualTo(1);
        stillServing();
    }
}
