package ernic.roce.rc;

/**
 * The RC attributes of one QP that the transport uses, as {@code ibv_modify_qp} sets them.
 *
 * @param pathMtu         payload bytes per packet: 256, 512, 1024, 2048 or 4096 (path MTU codes 1..5)
 * @param timeout         local ACK timeout code 0..31: 4.096 us * 2^timeout; 0 = no retransmission timer
 * @param retryCnt        retransmissions after a timeout or a sequence NAK before RETRY_EXC_ERR, 0..7; 7 = for ever
 *                        (as rdma_rxe: what rdma-core's tools and rdma_cm ask for keeps a slow live peer connected)
 * @param rnrRetry        retries after an RNR NAK before RNR_RETRY_EXC_ERR, 0..7; 7 = for ever
 * @param maxRdAtomic     READs and atomics this requester keeps in flight (max_rd_atomic), at least 1
 * @param maxDestRdAtomic READs and atomics this responder takes at once and keeps replay records of
 *                        (max_dest_rd_atomic); 0: it takes none (each is NAKed as an invalid request, as rdma_rxe does)
 * @param minRnrTimer     the RNR timer code 0..31 this responder puts in its RNR NAKs
 * @param ackEvery        the responder also ACKs every this many packets; 0 = only when AckReq is set
 * @param sqDepth         work requests the requester holds until they complete
 */
public record RcAttributes(int pathMtu, int timeout, int retryCnt, int rnrRetry, int maxRdAtomic,
                           int maxDestRdAtomic, int minRnrTimer, int ackEvery, int sqDepth) {
    /** rnr_retry that never runs out. */
    public static final int RNR_RETRY_FOREVER = 7;
    /**
     * retry_cnt that never runs out, as rdma_rxe treats it (rxe_comp.c leaves a count of 7 as it is). The IBTA and
     * hardware count 7 retries; rxe, the reference here, does not, and neither do we: in TCG guests a peer that is
     * alive can fall silent for longer than 8 local ACK timeouts (a guest's transmit stalled 0.5 s, 67 ms timeouts).
     */
    public static final int RETRY_FOREVER = 7;

    /** RNR timer codes (IBTA vol. 1, table 45) in units of 10 us: code 0 is 655.36 ms, 1 is 0.01 ms. */
    private static final int[] RNR_TIMER_10US = {
            65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
            256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152};

    public RcAttributes {
        if (pathMtu < 256 || pathMtu > 4096 || Integer.bitCount(pathMtu) != 1) {
            throw new IllegalArgumentException("path MTU " + pathMtu);
        }
        check("timeout", timeout, 0, 31);
        check("retry_cnt", retryCnt, 0, 7);
        check("rnr_retry", rnrRetry, 0, 7);
        check("max_rd_atomic", maxRdAtomic, 1, 255);
        check("max_dest_rd_atomic", maxDestRdAtomic, 0, 255);
        check("min_rnr_timer", minRnrTimer, 0, 31);
        check("ack every", ackEvery, 0, 1 << 16);
        check("SQ depth", sqDepth, 1, 1 << 16);
    }

    /** Defaults of a typical rdma-core connection: MTU 1024, timeout 14 (67 ms), 7 retries, RNR for ever. */
    public static RcAttributes defaults() {
        return new RcAttributes(1024, 14, 7, RNR_RETRY_FOREVER, 16, 16, 12, 0, 256);
    }

    public RcAttributes withPathMtu(int mtu) {
        return new RcAttributes(mtu, timeout, retryCnt, rnrRetry, maxRdAtomic, maxDestRdAtomic, minRnrTimer,
                ackEvery, sqDepth);
    }

    public RcAttributes withRetry(int timeout, int retryCnt, int rnrRetry) {
        return new RcAttributes(pathMtu, timeout, retryCnt, rnrRetry, maxRdAtomic, maxDestRdAtomic, minRnrTimer,
                ackEvery, sqDepth);
    }

    public RcAttributes withRdAtomic(int maxRdAtomic, int maxDestRdAtomic) {
        return new RcAttributes(pathMtu, timeout, retryCnt, rnrRetry, maxRdAtomic, maxDestRdAtomic, minRnrTimer,
                ackEvery, sqDepth);
    }

    public RcAttributes withAckEvery(int ackEvery) {
        return new RcAttributes(pathMtu, timeout, retryCnt, rnrRetry, maxRdAtomic, maxDestRdAtomic, minRnrTimer,
                ackEvery, sqDepth);
    }

    public RcAttributes withMinRnrTimer(int code) {
        return new RcAttributes(pathMtu, timeout, retryCnt, rnrRetry, maxRdAtomic, maxDestRdAtomic, code,
                ackEvery, sqDepth);
    }

    public RcAttributes withSqDepth(int depth) {
        return new RcAttributes(pathMtu, timeout, retryCnt, rnrRetry, maxRdAtomic, maxDestRdAtomic, minRnrTimer,
                ackEvery, depth);
    }

    /** The local ACK timeout in nanoseconds: 4096 ns * 2^timeout, 0 for none. */
    public long ackTimeoutNanos() {
        return timeout == 0 ? 0 : 4096L << timeout;
    }

    /** The RNR wait of RNR timer code {@code code} (the low 5 bits of an RNR NAK's syndrome) in nanoseconds. */
    public static long rnrTimerNanos(int code) {
        return RNR_TIMER_10US[code & 0x1f] * 10_000L;
    }

    /** PSNs a message of {@code length} bytes takes: one per packet, at least one (a READ: one per response). */
    public int packets(long length) {
        return length <= pathMtu ? 1 : (int) ((length + pathMtu - 1) / pathMtu);
    }

    private static void check(String what, int v, int min, int max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(what + " " + v + " not in " + min + ".." + max);
        }
    }
}
