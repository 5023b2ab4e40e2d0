package ernic.ionic;

import ernic.ionic.fault.FaultPlan;
import ernic.ionic.profile.ProfileLoader;
import ernic.model.IonicDriverModel;
import ernic.model.rdma.AdminCqe;
import ernic.model.rdma.RawCqe;
import ernic.model.rdma.RawWqe;
import ernic.model.rdma.RdmaRaw;
import ernic.model.rdma.RdmaVerbs;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import static ernic.model.rdma.Fw.*;
import static ernic.model.rdma.RdmaVerbs.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random sequences of RC work requests (RDMA WRITE, READ, SEND/RECV with gathered or inline data,
 * atomic fetch-and-add and compare-and-swap) on two connected QPs over three MRs with different
 * access rights, page layouts and alignments; some WQEs deliberately use bad keys, run past their
 * MR, wrap the address space or carry too much inline data. A byte-array model predicts every
 * completion (type, status, MSN, receive length) and the memory contents; after each sequence the
 * guest memory must equal the model and every WQE must have had exactly one completion (receives
 * left posted: one RQ flush completion when the QP goes to ERROR). As the device does, a QP goes on
 * executing after an error completion; copies whose source and destination overlap (where the
 * result depends on the copy's chunking) are left out of the sequence.
 */
class RdmaWqePropertyTest {
    static final int CQ = 8, CQ_LOG2 = 8, Q_LOG2 = 5, DEPTH = 1 << Q_LOG2, STRIDE_LOG2 = 7, STRIDE = 1 << STRIDE_LOG2;
    static final int MAX_INLINE = STRIDE - WQE_PLD;
    static final int[] QP = {2, 3};

    /** One MR of the model: its key, va, length, access flags and the guest pages behind it. */
    record Region(int key, long va, long length, int flags, long[] pageOf, int firstOffset) {
        /** Guest address of byte {@code off} of the region. */
        long phys(long off) {
            long at = firstOffset + off;
            return pageOf[(int) (at >>> 12)] + (at & 4095);
        }
    }

    static final Region[] MRS = new Region[3];
    static IonicDevice dev;
    static ModelGuest guest;
    static IonicDriverModel drv;
    static RdmaRaw rdma;
    static RawCqe.Ring cq;
    static final RawWqe wqe = new RawWqe();
    static final long[] sq = new long[2], rq = new long[2];

    // The model.
    static final byte[][] mem = new byte[3][];
    static final int[] msn = new int[2];
    static final int[] sqProd = new int[2], rqProd = new int[2];
    /** Receives posted and not yet consumed, per QP (the receive's SGEs and wqe_id). */
    @SuppressWarnings("unchecked")
    static final ArrayDeque<Recv>[] posted = new ArrayDeque[] {new ArrayDeque<Recv>(), new ArrayDeque<Recv>()};
    static long nextRecvId = 1000;
    static long executed, skipped, errors;
    /** Statuses seen, by operation: what the random sequences covered. */
    static final Map<String, Long> seen = new TreeMap<>();

    record Recv(long id, List<Sge> sges) {}

    @BeforeContainer
    static void up() throws IOException {
        dev = new IonicDevice(ProfileLoader.compat(), FaultPlan.none());
        guest = new ModelGuest(dev, 16 << 20);
        drv = guest.drv;
        rdma = RdmaVerbs.open(drv).raw();
        cq = guest.createCq(rdma, CQ, CQ_LOG2);
        // MR 1: everything allowed, 4 pages in scrambled order, va starting mid-page.
        long[] p1 = {drv.alloc(4096), drv.alloc(4096), drv.alloc(4096), drv.alloc(4096)};
        long[] order1 = {p1[2], p1[0], p1[3], p1[1]};
        MRS[0] = mr(1 << 8 | 0x11, 0x7f00_0000_0800L, 4 * 4096 - 0x800, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE
                | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC, order1, 0x800);
        // MR 2: remote read only (no local write: neither a READ target nor a receive buffer).
        long[] p2 = {drv.alloc(4096), drv.alloc(4096)};
        MRS[1] = mr(2 << 8 | 0x22, 0x5000_0000L, 2 * 4096, ACCESS_REMOTE_READ, p2, 0);
        // MR 3: 3000 bytes, one contiguous run, local write + remote write + atomics, no remote read.
        long p3 = drv.alloc(4096);
        MRS[2] = mr(3 << 8 | 0x33, 0x3000_0100L, 3000, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_ATOMIC,
                new long[] {p3}, 0x100);
        for (int i = 0; i < 2; i++) {
            sq[i] = drv.alloc((long) STRIDE * DEPTH);
            rq[i] = drv.alloc((long) STRIDE * DEPTH);
            assertThat(rdma.createQp(QP[i], RC, 0, CQ, CQ, sq[i], Q_LOG2, rq[i], Q_LOG2, STRIDE_LOG2, 0).status())
                    .isZero();
        }
        for (int i = 0; i < 2; i++) {
            connect(i);
        }
    }

    static Region mr(int key, long va, long length, int flags, long[] pages, int first) throws IOException {
        AdminCqe a;
        if (pages.length == 1) {
            a = rdma.createMr(key, va, length, flags, 1, pages[0] + first, 12);
        } else {
            long table = drv.alloc(4096);
            for (int i = 0; i < pages.length; i++) {
                le64(guest.at(table, 8L * pages.length), 8L * i, pages[i]);
            }
            a = rdma.createMr(key, va, length, flags, pages.length, table, 12);
        }
        assertThat(a.status()).isZero();
        return new Region(key, va, length, flags, pages, first);
    }

    static void connect(int i) throws IOException {
        assertThat(rdma.modifyQp(QP[i], IB_QP_STATE | IB_QP_ACCESS_FLAGS, INIT, 0, 0,
                QP_REMOTE_WRITE | QP_REMOTE_READ | QP_REMOTE_ATOMIC).status()).isZero();
        assertThat(rdma.modifyQp(QP[i], IB_QP_STATE | IB_QP_DEST_QPN, RTR, 0, QP[1 - i]).status()).isZero();
        assertThat(rdma.modifyQp(QP[i], IB_QP_STATE, RTS, 0, 0).status()).isZero();
    }

    @AfterContainer
    static void down() {
        guest.close();
        System.out.println("RdmaWqePropertyTest: " + executed + " WQEs executed (" + errors + " with an error status), "
                + skipped + " skipped (overlapping copies); op and status: " + seen);
    }

    // ---------------------------------------------------------------------------------------------
    // Operations and their generators

    enum Kind { WRITE, READ, SEND, FETCH_ADD, CMP_SWAP }

    /**
     * An address, length and key. Key kinds: 0 the MR's own, 1 right index but wrong key byte, 2 an
     * index no MR has, 3 key 0. Modes: 0 inside the MR (at a fraction of the room left), 1 running
     * past its end, 2 starting below it, 3 far past it, 4 near 2^64 so that the range wraps, 5 inside and 8-byte aligned.
     */
    record Sge(int mr, int keyKind, int mode, long frac, int len) {
        int key() {
            return switch (keyKind) {
                case 0 -> MRS[mr].key;
                case 1 -> MRS[mr].key ^ 0x80;
                case 2 -> 0x7e << 8 | 0x11;
                default -> 0;
            };
        }

        long va() {
            return va(len);
        }

        /** The address for an access of {@code n} bytes. */
        long va(long n) {
            long room = MRS[mr].length - n;
            long off = switch (mode) {
                case 0 -> room >= 0 ? frac % (room + 1) : 0;
                case 5 -> room >= 0 ? frac % (room + 1) & ~7L : 0;
                case 1 -> room + 1 + frac % 64;
                case 2 -> -1 - frac % 64;
                case 3 -> MRS[mr].length + frac % (1L << 40);
                default -> 0;
            };
            return mode == 4 ? -1L - frac % 64 : MRS[mr].va + off;
        }

        /** The same, 8-byte aligned when inside the MR (every MR's va is). */
        Sge aligned() {
            return mode == 0 ? new Sge(mr, keyKind, 5, frac, len) : this;
        }
    }

    /**
     * One work request: posted on QP {@code side}; {@code local} is the gather list (or the READ /
     * atomic target), {@code remote} the remote address and key (len unused), {@code recv} the
     * receive posted on the peer before a SEND, {@code inline} a SEND/WRITE's inline length (0: none).
     */
    record Op(Kind kind, int side, List<Sge> local, Sge remote, List<Sge> recv, int inline, long operand,
              long compare, boolean compareHits, long seed) {}

    static Arbitrary<Sge> sge(int minLen, int maxLen) {
        Arbitrary<Integer> mr = Arbitraries.frequency(Tuple.of(65, 0), Tuple.of(10, 1), Tuple.of(25, 2));
        Arbitrary<Integer> keyKind = Arbitraries.frequency(Tuple.of(96, 0), Tuple.of(1, 1), Tuple.of(2, 2), Tuple.of(1, 3));
        Arbitrary<Integer> mode = Arbitraries.frequency(Tuple.of(95, 0), Tuple.of(2, 1), Tuple.of(1, 2), Tuple.of(1, 3),
                Tuple.of(1, 4));
        Arbitrary<Long> frac = Arbitraries.longs().between(0, Long.MAX_VALUE);
        Arbitrary<Integer> len = Arbitraries.frequencyOf(
                Tuple.of(85, Arbitraries.integers().between(minLen, Math.max(minLen, 300))),
                Tuple.of(15, Arbitraries.integers().between(minLen, maxLen)));
        return Combinators.combine(mr, keyKind, mode, frac, len).as(Sge::new);
    }

    /** Gather/scatter lists: one SGE most of the time, up to 3. */
    static Arbitrary<List<Sge>> sges() {
        return Arbitraries.frequencyOf(Tuple.of(60, sge(1, 5000).list().ofSize(1)),
                Tuple.of(40, sge(1, 5000).list().ofMinSize(2).ofMaxSize(3)));
    }

    static Arbitrary<Op> op() {
        Arbitrary<Kind> kind = Arbitraries.of(Kind.class);
        Arbitrary<Integer> side = Arbitraries.integers().between(0, 1);
        Arbitrary<List<Sge>> local = sges();
        Arbitrary<Sge> remote = sge(1, 1);
        Arbitrary<List<Sge>> recv = sges();
        Arbitrary<Integer> inline = Arbitraries.frequencyOf(
                Tuple.of(75, Arbitraries.just(0)),
                Tuple.of(20, Arbitraries.integers().between(1, MAX_INLINE)),
                Tuple.of(5, Arbitraries.integers().between(MAX_INLINE + 1, 200)));
        Arbitrary<Long> operand = Arbitraries.longs();
        Arbitrary<Boolean> hits = Arbitraries.of(true, false);
        Arbitrary<Long> seed = Arbitraries.longs();
        return Combinators.combine(kind, side, local, remote, recv, inline, operand, operand)
                .flatAs((k, s, l, r, rv, in, a, c) -> Combinators.combine(hits, seed)
                        .as((h, sd) -> new Op(k, s, l, alignedMostly(k, r), rv, in, a, c, h, sd)));
    }

    /** Atomics target 8-byte-aligned addresses most of the time. */
    static Sge alignedMostly(Kind k, Sge r) {
        return (k == Kind.FETCH_ADD || k == Kind.CMP_SWAP) && (r.frac & 0x70) != 0x70 ? r.aligned() : r;
    }

    @Provide
    Arbitrary<List<Op>> sequences() {
        return op().list().ofMinSize(1).ofMaxSize(24);
    }

    // ---------------------------------------------------------------------------------------------
    // The property

    @Property(tries = 2000, edgeCases = EdgeCasesMode.NONE)
    void memoryAndCompletionsFollowTheModel(@ForAll("sequences") List<Op> ops, @ForAll long fill) throws IOException {
        startSequence(fill);
        for (Op op : ops) {
            run(op);
        }
        endSequence();
    }

    /** Fresh memory contents; both QPs back through ERROR / RESET to RTS (the MSN and rings start over). */
    static void startSequence(long fill) {
        Random r = new Random(fill);
        for (int m = 0; m < 3; m++) {
            mem[m] = new byte[(int) MRS[m].length];
            r.nextBytes(mem[m]);
            for (int i = 0; i < mem[m].length; i++) {
                u8(guest.at(MRS[m].phys(i), 1), 0, mem[m][i]);
            }
        }
        drainAdminEvents();
    }

    static void endSequence() throws IOException {
        assertThat(poll()).as("no completion beyond the predicted ones").isNull();
        for (int m = 0; m < 3; m++) {
            byte[] actual = new byte[mem[m].length];
            for (int i = 0; i < actual.length; i++) {
                actual[i] = (byte) u8(guest.at(MRS[m].phys(i), 1), 0);
            }
            int at = Arrays.mismatch(actual, mem[m]);
            assertThat(at).as("MR %d differs from the model first at offset %d", m + 1, at).isEqualTo(-1);
        }
        // Receives never consumed: moving to ERROR flushes each RQ with one completion.
        for (int i = 0; i < 2; i++) {
            assertThat(rdma.modifyQp(QP[i], IB_QP_STATE, ERR, 0, 0).status()).isZero();
            if (!posted[i].isEmpty()) {
                RawCqe c = poll();
                assertThat(c).as("RQ flush of QP %d", QP[i]).isNotNull();
                assertThat(c.type()).isEqualTo(CQE_TYPE_RECV);
                assertThat(c.qid()).isEqualTo(QP[i]);
                assertThat(c.error()).isTrue();
                assertThat(c.statusLength()).isEqualTo(STS_WQE_FLUSHED_ERR);
                posted[i].clear();
            }
            assertThat(poll()).isNull();
            reset(i);
        }
        reconnect();
    }

    static void drainAdminEvents() {
        while (rdma.nextEqe(2) != -1) {
            // the CQ's events: not what this property checks
        }
    }

    // ---------------------------------------------------------------------------------------------
    // The model

    /** A checked range: region index and offset. */
    record Span(int mr, long off, long len) {}

    /** Resolves like the device: Null status means OK, the span lands in {@code out}. */
    static int resolve(int key, long va, long len, int access, boolean remote, List<Span> out) {
        int err = remote ? STS_REMOTE_ACC_ERR : STS_LOCAL_PROT_ERR;
        if (key == 0 && !remote) {
            return STS_LOCAL_PROT_ERR; // the QPs are not privileged
        }
        if (key == 0) {
            return len == 0 ? STS_OK : err; // an rkey of 0 is refused unless it reaches nothing
        }
        for (int m = 0; m < 3; m++) {
            Region r = MRS[m];
            if (key >>> 8 != r.key >>> 8) {
                continue;
            }
            long off = va - r.va;
            if ((key & 0xff) != (r.key & 0xff) || Long.compareUnsigned(off, r.length) > 0
                    || Long.compareUnsigned(len, r.length - off) > 0 || (r.flags & access) != access) {
                return err;
            }
            out.add(new Span(m, off, len));
            return STS_OK;
        }
        return err;
    }

    static byte[] read(List<Span> spans) {
        int total = spans.stream().mapToInt(s -> (int) s.len).sum();
        byte[] b = new byte[total];
        int at = 0;
        for (Span s : spans) {
            System.arraycopy(mem[s.mr], (int) s.off, b, at, (int) s.len);
            at += (int) s.len;
        }
        return b;
    }

    static void write(List<Span> spans, byte[] data) {
        int at = 0;
        for (Span s : spans) {
            System.arraycopy(data, at, mem[s.mr], (int) s.off, (int) s.len);
            at += (int) s.len;
        }
    }

    static boolean overlap(List<Span> a, List<Span> b) {
        for (Span x : a) {
            for (Span y : b) {
                if (x.mr == y.mr && x.off < y.off + y.len && y.off < x.off + x.len) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The gather list's status; its spans into {@code out}. Local read needs no access flag. */
    static int gather(List<Sge> sges, List<Span> out) {
        for (Sge s : sges) {
            int st = resolve(s.key(), s.va(), s.len, 0, false, out);
            if (st != STS_OK) {
                return st;
            }
        }
        return STS_OK;
    }

    /** The first {@code len} bytes of {@code sges}, checked for local write. */
    static int scatter(List<Sge> sges, long len, List<Span> out) {
        long left = len;
        for (int i = 0; i < sges.size() && left > 0; i++) {
            Sge s = sges.get(i);
            long chunk = Math.min(s.len, left);
            int st = resolve(s.key(), s.va(), chunk, ACCESS_LOCAL_WRITE, false, out);
            if (st != STS_OK) {
                return st;
            }
            left -= chunk;
        }
        return left > 0 ? STS_LOCAL_LEN_ERR : STS_OK;
    }

    /** Predicted completions of one op. */
    record Expect(int sendStatus, Recv recv, int recvStatus, long recvLen) {}

    static void run(Op op) throws IOException {
        int me = op.side, peer = 1 - op.side;
        byte[] inlineData = null;
        if (op.inline > 0) {
            inlineData = new byte[op.inline];
            new Random(op.seed).nextBytes(inlineData);
        }
        boolean useInline = inlineData != null && (op.kind == Kind.SEND || op.kind == Kind.WRITE);
        if (op.kind == Kind.SEND && posted[peer].size() < DEPTH - 4) {
            Recv r = new Recv(nextRecvId++, op.recv);
            postRecv(peer, r);
            posted[peer].add(r);
        }
        List<Span> src = new ArrayList<>(), dst = new ArrayList<>();
        int st;
        Recv consumed = null;
        int recvSt = 0;
        long len = 0;
        long compare = op.compare;
        Runnable apply = () -> { };
        switch (op.kind) {
            case WRITE, READ -> { // one transfer, two directions: the local SGEs are checked first, then the rkey
                boolean isWrite = op.kind == Kind.WRITE;
                if (isWrite) {
                    st = useInline ? (op.inline > MAX_INLINE ? STS_LOCAL_LEN_ERR : STS_OK) : gather(op.local, src);
                    len = useInline ? op.inline : op.local.stream().mapToLong(Sge::len).sum();
                } else {
                    len = op.local.stream().mapToLong(Sge::len).sum();
                    st = scatter(op.local, len, dst);
                }
                if (st == STS_OK) {
                    st = resolve(op.remote.key(), op.remote.va(len), len,
                            isWrite ? ACCESS_REMOTE_WRITE : ACCESS_REMOTE_READ, true, isWrite ? dst : src);
                }
                if (st == STS_OK) {
                    if (overlap(src, dst)) {
                        skipped++;
                        return;
                    }
                    byte[] data = useInline ? inlineData : read(src);
                    apply = () -> write(dst, data);
                }
            }
            case SEND -> {
                st = useInline ? (op.inline > MAX_INLINE ? STS_LOCAL_LEN_ERR : STS_OK) : gather(op.local, src);
                len = useInline ? op.inline : op.local.stream().mapToLong(Sge::len).sum();
                if (st == STS_OK) {
                    consumed = posted[peer].peek();
                    recvSt = scatter(consumed.sges, len, dst);
                    if (recvSt == STS_OK && overlap(src, dst)) {
                        skipped++;
                        return;
                    }
                    posted[peer].poll();
                    st = recvSt == STS_OK ? STS_OK
                            : recvSt == STS_LOCAL_LEN_ERR ? STS_REMOTE_INV_REQ_ERR : STS_REMOTE_OPER_ERR;
                    if (recvSt == STS_OK) {
                        byte[] data = useInline ? inlineData : read(src);
                        apply = () -> write(dst, data);
                    }
                }
            }
            default -> { // atomics: the local SGE that takes the old value is checked first, as a READ's SGEs are
                Sge l = op.local.getFirst().aligned();
                st = resolve(l.key(), l.va(8), 8, ACCESS_LOCAL_WRITE, false, src);
                long va = op.remote.va(8);
                if (st == STS_OK) {
                    st = (va & 7) != 0 ? STS_REMOTE_INV_REQ_ERR
                            : resolve(op.remote.key(), va, 8, ACCESS_REMOTE_ATOMIC, true, dst);
                }
                if (st == STS_OK) {
                    long old = modelLe64(dst.getFirst());
                    if (op.compareHits) {
                        compare = old;
                    }
                    long next = op.kind == Kind.CMP_SWAP ? (old == compare ? op.operand : old) : old + op.operand;
                    apply = () -> {
                        modelPutLe64(dst.getFirst(), next);
                        modelPutLe64(src.getFirst(), old);
                    };
                }
            }
        }
        apply.run();
        Expect expect = new Expect(st, consumed, recvSt, len);
        seen.merge(op.kind + (useInline ? "-inline" : "") + " " + st, 1L, Long::sum);
        post(op, me, inlineData, useInline, compare);
        executed++;
        check(op, me, peer, expect);
    }

    static long modelLe64(Span s) {
        long v = 0;
        for (int i = 7; i >= 0; i--) {
            v = v << 8 | (mem[s.mr][(int) s.off + i] & 0xff);
        }
        return v;
    }

    static void modelPutLe64(Span s, long v) {
        for (int i = 0; i < 8; i++) {
            mem[s.mr][(int) s.off + i] = (byte) (v >>> 8 * i);
        }
    }

    /**
     * The completions of one WQE: the receive (when one was consumed), the send, and, when either carries
     * an error, only flush completions besides: an error moves the QP (and a responder that rejected or
     * failed the request) to ERROR, which flushes what each still had posted. Then both QPs start over.
     */
    static void check(Op op, int me, int peer, Expect e) throws IOException {
        List<RawCqe> got = new ArrayList<>();
        for (RawCqe c = poll(); c != null; c = poll()) {
            got.add(c);
        }
        List<RawCqe> flushes = got.stream().filter(c -> c.error() && c.statusLength() == STS_WQE_FLUSHED_ERR).toList();
        List<RawCqe> own = got.stream().filter(c -> !flushes.contains(c)).toList();
        int i = 0;
        if (e.recv != null) {
            assertThat(own).as("receive completion of %s", op).hasSizeGreaterThan(i);
            RawCqe r = own.get(i++);
            assertThat(r.type()).isEqualTo(CQE_TYPE_RECV);
            assertThat(r.qid()).isEqualTo(QP[peer]);
            assertThat(r.wqeId()).isEqualTo(e.recv.id);
            assertThat(r.error()).as("receive error flag of %s", op).isEqualTo(e.recvStatus != STS_OK);
            assertThat(r.statusLength()).as("receive status/length of %s", op)
                    .isEqualTo(e.recvStatus == STS_OK ? (int) e.recvLen : e.recvStatus);
            if (e.recvStatus != STS_OK) {
                errors++;
            }
        }
        assertThat(own).as("send completion of %s", op).hasSizeGreaterThan(i);
        RawCqe c = own.get(i++);
        assertThat(c.type()).isEqualTo(CQE_TYPE_SEND_MSN);
        assertThat(c.qid()).isEqualTo(QP[me]);
        assertThat(c.msn()).as("MSN").isEqualTo(++msn[me]);
        assertThat(c.statusLength()).as("status of %s", op).isEqualTo(e.sendStatus);
        assertThat(c.error()).isEqualTo(e.sendStatus != STS_OK);
        assertThat(own).as("one completion per WQE: %s", op).hasSize(i);
        if (e.sendStatus == STS_OK && (e.recv == null || e.recvStatus == STS_OK)) {
            assertThat(flushes).as("no flush without an error: %s", op).isEmpty();
            return;
        }
        errors++;
        for (RawCqe f : flushes) {
            assertThat(f.type()).as("what an error flushes: the posted receives").isEqualTo(CQE_TYPE_RECV);
            assertThat(posted[f.qid() == QP[0] ? 0 : 1]).as("a flush of QP %d, which had receives", f.qid()).isNotEmpty();
        }
        startOver();
    }

    /** Both QPs through ERROR and RESET back to RTS, their posted receives flushed (one completion each). */
    static void startOver() throws IOException {
        for (int i = 0; i < 2; i++) {
            assertThat(rdma.modifyQp(QP[i], IB_QP_STATE, ERR, 0, 0).status()).isZero();
            for (RawCqe f = poll(); f != null; f = poll()) {
                assertThat(f.statusLength()).as("only flushes while starting over").isEqualTo(STS_WQE_FLUSHED_ERR);
            }
            posted[i].clear();
            reset(i);
        }
        reconnect();
    }

    /** QP {@code i} (out of ERROR) to RESET: its rings and its MSN from 0. */
    static void reset(int i) throws IOException {
        assertThat(rdma.modifyQp(QP[i], IB_QP_STATE, RESET, 0, 0).status()).isZero();
        sqProd[i] = rqProd[i] = 0;
        msn[i] = 0;
    }

    /** Both QPs from RESET connected to each other again (INIT, RTR, RTS), then the admin EQ drained. */
    static void reconnect() throws IOException {
        for (int i = 0; i < 2; i++) {
            connect(i);
        }
        drainAdminEvents();
    }

    // ---------------------------------------------------------------------------------------------
    // The driver side

    static void postRecv(int q, Recv r) {
        RawWqe w = wqe.wrap(guest.at(rq[q] + (long) STRIDE * rqProd[q], STRIDE)).wqeId(r.id).numSgeKey(r.sges.size());
        for (int i = 0; i < r.sges.size(); i++) {
            Sge s = r.sges.get(i);
            w.sge(WQE_PLD, i, s.va(), s.len, s.key());
        }
        rqProd[q] = (rqProd[q] + 1) & (DEPTH - 1);
        rdma.ringRq(0, QP[q], rqProd[q]);
    }

    static void post(Op op, int q, byte[] inlineData, boolean useInline, long compare) {
        MemorySegment slot = guest.at(sq[q] + (long) STRIDE * sqProd[q], STRIDE);
        RawWqe w = wqe.wrap(slot).wqeId(sqProd[q]);
        int opcode = switch (op.kind) {
            case WRITE -> WRITE;
            case READ -> READ;
            case SEND -> SEND;
            case FETCH_ADD -> ATOMIC_FA;
            case CMP_SWAP -> ATOMIC_CS;
        };
        w.op(opcode).flags(WQE_FLAG_SIG);
        if (op.kind == Kind.FETCH_ADD || op.kind == Kind.CMP_SWAP) {
            w.rdma(op.remote.va(8), op.remote.key());
            be32(slot, WQE_ATOMIC_SWAP_ADD_HIGH_BE, (int) (op.operand >>> 32));
            be32(slot, WQE_ATOMIC_SWAP_ADD_LOW_BE, (int) op.operand);
            be32(slot, WQE_ATOMIC_COMPARE_HIGH_BE, (int) (compare >>> 32));
            be32(slot, WQE_ATOMIC_COMPARE_LOW_BE, (int) compare);
            Sge l = op.local.getFirst().aligned();
            be64(slot, WQE_ATOMIC_SGE + SGE_VA_BE, l.va(8));
            be32(slot, WQE_ATOMIC_SGE + SGE_LEN_BE, 8);
            be32(slot, WQE_ATOMIC_SGE + SGE_LKEY_BE, l.key());
        } else {
            long len = useInline ? inlineData.length : op.local.stream().mapToLong(Sge::len).sum();
            if (op.kind != Kind.SEND) {
                w.rdma(op.remote.va(len), op.remote.key());
            }
            if (useInline) {
                w.flags(WQE_FLAG_SIG | WQE_FLAG_INL).length(inlineData.length);
                // Inline data beyond what the stride holds: only the part that fits is written.
                MemorySegment.copy(MemorySegment.ofArray(inlineData), 0, slot, WQE_PLD,
                        Math.min(inlineData.length, MAX_INLINE));
            } else {
                w.numSgeKey(op.local.size()).length((int) op.local.stream().mapToLong(Sge::len).sum());
                for (int i = 0; i < op.local.size(); i++) {
                    Sge s = op.local.get(i);
                    w.sge(WQE_PLD, i, s.va(), s.len, s.key());
                }
            }
        }
        sqProd[q] = (sqProd[q] + 1) & (DEPTH - 1);
        rdma.ringSq(0, QP[q], sqProd[q]);
    }

    /** The next CQE (a copy), or null; the consumer index goes back to the device as ring 0. */
    static RawCqe poll() {
        RawCqe c = cq.pollWork();
        if (c != null) {
            rdma.ringCq(CQ, 0, cq.consumer());
        }
        return c;
    }

    // ---------------------------------------------------------------------------------------------
    // The responder's receive faults, one by one (the device fix: requester REM_OP_ERR vs REM_INV_REQ_ERR)

    @Example
    void aFaultyReceiveBufferIsTheRespondersErrorATooShortOneTheRequesters() throws IOException {
        startSequence(1);
        Sge good = new Sge(0, 0, 0, 0, 64);
        // The receive runs past MR 3 (3000 bytes): local protection at the responder, REM_OP_ERR at the requester.
        Op pastMr = new Op(Kind.SEND, 0, List.of(good), good, List.of(new Sge(2, 0, 1, 0, 64)), 0, 0, 0, false, 0);
        // A receive into MR 2 (no local write): the same.
        Op noWrite = new Op(Kind.SEND, 0, List.of(good), good, List.of(new Sge(1, 0, 0, 0, 64)), 0, 0, 0, false, 0);
        // A receive of 16 bytes for a 64-byte message: length error at the responder, REM_INV_REQ_ERR at the requester.
        Op tooShort = new Op(Kind.SEND, 1, List.of(good), good, List.of(new Sge(0, 0, 0, 4096, 16)), 0, 0, 0, false, 0);
        for (Op op : List.of(pastMr, noWrite, tooShort)) {
            RawCqe[] got = runAndCollect(op);
            assertThat(got[0].type()).isEqualTo(CQE_TYPE_RECV);
            assertThat(got[1].type()).isEqualTo(CQE_TYPE_SEND_MSN);
            if (op == tooShort) {
                assertThat(got[0].statusLength()).isEqualTo(STS_LOCAL_LEN_ERR);
                assertThat(got[1].statusLength()).isEqualTo(STS_REMOTE_INV_REQ_ERR);
            } else {
                assertThat(got[0].statusLength()).isEqualTo(STS_LOCAL_PROT_ERR);
                assertThat(got[1].statusLength()).isEqualTo(STS_REMOTE_OPER_ERR);
            }
        }
        endSequence();
    }

    /** Runs {@code op} through the device only (no model), returning its receive and send CQEs; then starts over. */
    static RawCqe[] runAndCollect(Op op) throws IOException {
        int peer = 1 - op.side;
        Recv r = new Recv(nextRecvId++, op.recv);
        postRecv(peer, r);
        post(op, op.side, null, false, 0);
        RawCqe recv = poll(), send = poll();
        assertThat(recv).isNotNull();
        assertThat(send).isNotNull();
        assertThat(poll()).isNull();
        msn[op.side]++;
        startOver();
        return new RawCqe[] {recv, send};
    }
}
