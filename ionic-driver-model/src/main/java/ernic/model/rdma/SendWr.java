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
    /** BIND_MW: the window, the rkey it is to have (bind_mw.rkey), and bind_info: MR, addr, length, access. */
    public Mw mw;
    public int bindRkey;
    public Mr bindMr;
    public long bindAddr, bindLength;
    public int bindAccess;

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
        mw = null;
        bindRkey = 0;
        bindMr = null;
        bindAddr = bindLength = 0;
        bindAccess = 0;
        return this;
    }

    /**
     * A BIND_MW of {@code mw} to {@code [addr, addr + length)} of {@code mr} with {@code access} (ACCESS_* flags),
     * the window to have {@code rkey} (for a type 1 bind, {@link RdmaVerbs#bindMw} picks it).
     */
    public SendWr bind(Mw mw, int rkey, Mr mr, long addr, long length, int access) {
        opcode = RdmaVerbs.BIND_MW;
        this.mw = mw;
        bindRkey = rkey;
        bindMr = mr;
        bindAddr = addr;
        bindLength = length;
        bindAccess = access;
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
