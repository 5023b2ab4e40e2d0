package ernic.model.rdma;

import java.lang.foreign.MemorySegment;

/** A send work request, reused by the caller from one post to the next. */
public final class SendWr {
    public long wrId;
    public int opcode;
    public boolean signaled = true, solicited, fence;
    public int imm;
    public long remoteVa;
    public int rkey;
    public int numSge;
    public final long[] sgeVa = new long[8];
    public final int[] sgeLen = new int[8], sgeLkey = new int[8];
    /** Inline payload (copied into the WQE) when not null. */
    public MemorySegment inline;
    public Ah ah;
    public int destQpn, qkey;
    public long compare, swapAdd;

    public SendWr reset() {
        wrId = 0;
        opcode = RdmaVerbs.SEND;
        signaled = true;
        solicited = fence = false;
        imm = 0;
        remoteVa = 0;
        rkey = 0;
        numSge = 0;
        inline = null;
        ah = null;
        destQpn = qkey = 0;
        compare = swapAdd = 0;
        return this;
    }

    public SendWr sge(long va, int len, int lkey) {
        sgeVa[numSge] = va;
        sgeLen[numSge] = len;
        sgeLkey[numSge] = lkey;
        numSge++;
        return this;
    }
}
