package ernic.ionic.rdma;

import ernic.counters.Counters;
import ernic.p4.Fp8;
import ernic.vfiouser.server.Refusals;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static ernic.common.Endian.BE;

/**
 * The P4 engine's WQE hook on the requester: after a send WQE's own memory checks, its {@link WqeHeader} goes
 * through the program ({@link WqeFilter}). The program may drop it (the WQE completes with
 * {@link V1#STS_LOCAL_PROT_ERR}: the device's own policy refused to issue it; nothing reached the destination)
 * or, for a plain RDMA WRITE to a QP of this guest, select an extern that replaces the copy: fp8 accumulate
 * ({@code dst[i] += src[i]}) or format convert (fp32 / bf16 / fp16 / fp8 into fp8, or fp8 into the wider
 * formats). The source is the WQE's local payload; the destination is the WQE's rkey and remote address,
 * resolved in this device's MR table with the rights of a remote WRITE. Device thread only; the scratch
 * buffers are allocated once.
 */
final class WqePipeline {
    /** {@link #run}'s answer when the WQE goes on to its end. */
    static final int GO_ON = Integer.MIN_VALUE + 1;
    /** Values converted or added per chunk (the scratch buffers hold 4 bytes a value at most). */
    static final int CHUNK = 16 * 1024;

    private final RdmaLif lif;
    private final KeyedMemory memory;
    private final Refusals refusals;
    private final RdmaCounters rdmaCounters;
    private final WqeFilter filter;
    final Counters<P4WqeCounter> counters;
    private final byte[] header = new byte[WqeHeader.SIZE];
    private final MemorySegment hdr = MemorySegment.ofArray(header);
    private final byte[] srcBuf = new byte[CHUNK * 4];
    private final byte[] dstBuf = new byte[CHUNK * 4];
    private final MemorySegment srcSeg = MemorySegment.ofArray(srcBuf);
    private final MemorySegment dstSeg = MemorySegment.ofArray(dstBuf);
    private final Spans target = new Spans(), srcPart = new Spans(), dstPart = new Spans(), scratch = new Spans();

    WqePipeline(RdmaLif lif, KeyedMemory memory, Refusals refusals, RdmaCounters rdmaCounters, WqeFilter filter,
                Counters<P4WqeCounter> counters) {
        this.lif = lif;
        this.memory = memory;
        this.refusals = refusals;
        this.rdmaCounters = rdmaCounters;
        this.filter = filter;
        this.counters = counters;
    }

    /**
     * Runs the program on the checked WQE {@code r} (its payload gathered, or its local landing checked), whose
     * payload or READ length is {@code length}; {@code destLocal} when its end is a QP of this guest. Returns
     * {@link #GO_ON}, or the WQE's final status (a drop, an extern's result).
     */
    int run(Request r, long length, boolean destLocal) {
        V1.Wqe w = r.wqe;
        QueuePair qp = r.qp;
        int op = w.op();
        WqeOpcode o = r.opcode;
        java.util.Arrays.fill(header, (byte) 0);
        header[WqeHeader.OPCODE] = (byte) (op);
        header[WqeHeader.QP_TYPE] = (byte) (qp.type);
        BE.put16(hdr, WqeHeader.FLAGS, w.flags());
        BE.put32(hdr, WqeHeader.QPN, qp.id);
        BE.put32(hdr, WqeHeader.DEST_QPN, qp.datagram() ? w.destQpn() & 0xff_ffff : qp.destQpn);
        BE.put32(hdr, WqeHeader.LENGTH, (int) Math.min(length, 0xffff_ffffL));
        boolean atomic = o.kind == WqeOpcode.Kind.ATOMIC;
        if ((w.flags() & V1.Wqe.FLAG_INL) == 0 && !atomic) {
            int sgl = KeyedMemory.sgl(w);
            if (w.numSgeKey() > 0 && sgl + V1.Wqe.SGE_SIZE <= qp.sq.stride()) {
                BE.put32(hdr, WqeHeader.LKEY, w.sgeLkey(sgl, 0));
            }
        } else if (atomic) {
            BE.put32(hdr, WqeHeader.LKEY, w.atomicSgeLkey());
        }
        if (o.keyed) {
            BE.put32(hdr, WqeHeader.RKEY, w.rkey());
            BE.put64(hdr, WqeHeader.REMOTE_VA, w.remoteVa());
        }
        if (o.immediate || o.invalidate) {
            BE.put32(hdr, WqeHeader.IMM, w.immDataKey());
        }
        header[WqeHeader.DEST_LOCAL] = (byte) (destLocal ? 1 : 0);
        counters.inc(P4WqeCounter.WQES);
        if (!filter.run(header, WqeHeader.SIZE)) {
            counters.inc(P4WqeCounter.DROPPED);
            return V1.STS_LOCAL_PROT_ERR;
        }
        int ext = (header[WqeHeader.EXTERN] & 0xff);
        if (ext == WqeHeader.EXTERN_NONE) {
            return GO_ON;
        }
        return extern(r, ext, destLocal);
    }

    private int badRequest(String cause, String detail) {
        counters.inc(P4WqeCounter.EXTERN_BAD_REQUEST);
        refusals.refuse(cause, detail);
        return V1.STS_LOCAL_QP_OPER_ERR;
    }

    private int badOperand(String cause, String detail, int status) {
        counters.inc(P4WqeCounter.EXTERN_BAD_OPERAND);
        refusals.refuse(cause, detail);
        return status;
    }

    /** Bytes of one value of a format, or 0 for a code that names none. */
    static int size(int format) {
        return switch (format) {
            case WqeHeader.FORMAT_E4M3, WqeHeader.FORMAT_E5M2 -> 1;
            case WqeHeader.FORMAT_FP16, WqeHeader.FORMAT_BF16 -> 2;
            case WqeHeader.FORMAT_FP32 -> 4;
            default -> 0;
        };
    }

    private static Fp8.Format fp8(int format) {
        return format == WqeHeader.FORMAT_E4M3 ? Fp8.Format.E4M3 : format == WqeHeader.FORMAT_E5M2 ? Fp8.Format.E5M2
                : null;
    }

    private int extern(Request r, int ext, boolean destLocal) {
        V1.Wqe w = r.wqe;
        QueuePair qp = r.qp;
        int sf = (header[WqeHeader.SRC_FORMAT] & 0xff), df = (header[WqeHeader.DST_FORMAT] & 0xff);
        boolean saturate = ((header[WqeHeader.EXTERN_FLAGS] & 0xff) & WqeHeader.FLAG_NON_SATURATING) == 0;
        if (r.opcode != WqeOpcode.RDMA_WRITE) {
            return badRequest("p4-extern-opcode", "QP " + qp.id + ": the program selected extern " + ext
                    + " for WQE opcode " + w.op() + " (only a plain RDMA WRITE)");
        }
        if (ext == WqeHeader.EXTERN_FP8_ACCUMULATE ? fp8(sf) == null || fp8(df) == null
                : ext != WqeHeader.EXTERN_FORMAT_CONVERT || size(sf) == 0 || size(df) == 0
                || fp8(sf) == null && fp8(df) == null) {
            return badRequest("p4-extern-format", "QP " + qp.id + ": extern " + ext + " with formats " + sf + " -> "
                    + df);
        }
        long total = r.payload.total;
        int ss = size(sf), ds = size(df);
        if (total % ss != 0) {
            return badRequest("p4-extern-length", "QP " + qp.id + ": " + total + " payload bytes are not whole values"
                    + " of format " + sf);
        }
        long n = total / ss;
        if (!destLocal || qp.remote() || qp.end != null) {
            return badOperand("p4-extern-remote", "QP " + qp.id + ": an extern's destination must be a QP of this"
                    + " guest (the rkey belongs to another node or target)", V1.STS_REMOTE_ACC_ERR);
        }
        int id = qp.destQpn;
        QueuePair dest = lif.queuePairs.get(id);
        if (dest == null || !dest.connected() || dest.state != V1.QPS_RTR && dest.state != V1.QPS_RTS
                && dest.state != V1.QPS_SQD) {
            return V1.STS_RETRY_EXCEEDED; // as the plain WRITE would: nobody answers
        }
        if ((dest.accessFlags & V1.QPF_REMOTE_WRITE) == 0) {
            return badOperand("p4-extern-access", "QP " + dest.id + " does not allow remote writes",
                    V1.STS_REMOTE_INV_REQ_ERR);
        }
        if (n == 0) {
            r.moved = 0;
            return V1.STS_OK;
        }
        if (w.rkey() == 0) {
            return badOperand("p4-extern-key0", "QP " + qp.id + ": key 0 with " + total + " bytes as an extern operand",
                    V1.STS_REMOTE_ACC_ERR);
        }
        int st = memory.resolve(dest, w.rkey(), w.remoteVa(), n * ds, V1.MRF_REMOTE_WRITE, true, target.clear());
        if (st != V1.STS_OK) {
            return badOperand("p4-extern-rkey", "QP " + qp.id + ": rkey 0x" + Integer.toHexString(w.rkey())
                    + " does not open " + n * ds + " bytes for an extern", st);
        }
        for (long done = 0; done < n; done += CHUNK) {
            int k = (int) Math.min(CHUNK, n - done);
            if (!memory.copy(slice(r.payload, done * ss, (long) k * ss, srcPart), scratch.clear().local(srcSeg, k * ss),
                    (long) k * ss)) {
                return V1.STS_LOCAL_PROT_ERR;
            }
            Spans dstRange = slice(target, done * ds, (long) k * ds, dstPart);
            if (ext == WqeHeader.EXTERN_FP8_ACCUMULATE
                    && !memory.copy(dstRange, scratch.clear().local(dstSeg, k), k)) {
                return V1.STS_REMOTE_ACC_ERR;
            }
            compute(ext, sf, df, saturate, k);
            if (!memory.copy(scratch.clear().local(dstSeg, k * ds), dstRange, (long) k * ds)) {
                return V1.STS_REMOTE_ACC_ERR;
            }
        }
        rdmaCounters.add(dest, RdmaCounters.Device.RX_REMOTE_REQS, 1);
        counters.inc(ext == WqeHeader.EXTERN_FP8_ACCUMULATE ? P4WqeCounter.FP8_ACCUMULATE_OPS
                : P4WqeCounter.FORMAT_CONVERT_OPS);
        counters.add(ext == WqeHeader.EXTERN_FP8_ACCUMULATE ? P4WqeCounter.FP8_ACCUMULATE_VALUES
                : P4WqeCounter.FORMAT_CONVERT_VALUES, n);
        r.moved = total;
        return V1.STS_OK;
    }

    /** {@code k} values from srcBuf into dstBuf (which holds the destination's old values for an accumulate). */
    private void compute(int ext, int sf, int df, boolean saturate, int k) {
        if (ext == WqeHeader.EXTERN_FP8_ACCUMULATE) {
            Fp8.accumulate(dstBuf, 0, fp8(df), srcBuf, 0, fp8(sf), k, saturate);
            return;
        }
        Fp8.Format dst8 = fp8(df), src8 = fp8(sf);
        if (dst8 != null) {
            // Into fp8: one loop per source format, so that each is a tight loop.
            switch (sf) {
                case WqeHeader.FORMAT_E4M3, WqeHeader.FORMAT_E5M2 -> {
                    for (int i = 0; i < k; i++) {
                        dstBuf[i] = (byte) Fp8.encode(Fp8.decode(srcBuf[i] & 0xff, src8), dst8, saturate);
                    }
                }
                case WqeHeader.FORMAT_FP16 -> {
                    for (int i = 0; i < k; i++) {
                        dstBuf[i] = (byte) Fp8.encode(Float.float16ToFloat((short) LE16_ARRAY.get(srcBuf, 2 * i)),
                                dst8, saturate);
                    }
                }
                case WqeHeader.FORMAT_BF16 -> {
                    for (int i = 0; i < k; i++) {
                        dstBuf[i] = (byte) Fp8.encode(Float.intBitsToFloat(((short) LE16_ARRAY.get(srcBuf, 2 * i)
                                & 0xffff) << 16), dst8, saturate);
                    }
                }
                default -> {
                    for (int i = 0; i < k; i++) {
                        dstBuf[i] = (byte) Fp8.encode((float) LEF32_ARRAY.get(srcBuf, 4 * i), dst8, saturate);
                    }
                }
            }
            return;
        }
        // fp8 into a wider format is exact (the source is fp8 here: the formats were checked)
        for (int i = 0; i < k; i++) {
            float v = Fp8.decode(srcBuf[i] & 0xff, src8);
            switch (df) {
                case WqeHeader.FORMAT_FP16 -> dstSeg.set(LE16, 2L * i, Float.floatToFloat16(v));
                case WqeHeader.FORMAT_BF16 -> dstSeg.set(LE16, 2L * i, (short) (Float.floatToRawIntBits(v) >>> 16));
                default -> dstSeg.set(LEF32, 4L * i, v);
            }
        }
    }

    /** The source's wider formats, read from the scratch array (little-endian, as in guest memory). */
    private static final java.lang.invoke.VarHandle LE16_ARRAY = java.lang.invoke.MethodHandles.byteArrayViewVarHandle(
            short[].class, java.nio.ByteOrder.LITTLE_ENDIAN);
    private static final java.lang.invoke.VarHandle LEF32_ARRAY = java.lang.invoke.MethodHandles
            .byteArrayViewVarHandle(float[].class, java.nio.ByteOrder.LITTLE_ENDIAN);

    /** Guest memory holds the wider formats little-endian, as the guest's CPU writes them. */
    private static final ValueLayout.OfShort LE16 = ValueLayout.JAVA_SHORT_UNALIGNED
            .withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat LEF32 = ValueLayout.JAVA_FLOAT_UNALIGNED
            .withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

    /** {@code [off, off + len)} of {@code s} into {@code out} (cleared first). */
    static Spans slice(Spans s, long off, long len, Spans out) {
        out.clear();
        long skip = off, left = len;
        for (int i = 0; i < s.count && left > 0; i++) {
            if (skip >= s.len[i]) {
                skip -= s.len[i];
                continue;
            }
            long n = Math.min(s.len[i] - skip, left);
            out.add(s.mem[i], s.local[i], s.off[i] + skip, n);
            skip = 0;
            left -= n;
        }
        return out;
    }
}
