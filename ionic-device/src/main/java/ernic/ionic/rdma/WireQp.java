package ernic.ionic.rdma;

import ernic.roce.IbOpcode;
import ernic.roce.RoceFrame;
import ernic.roce.TransportHeader;
import ernic.roce.rc.ConnectedRequester;
import ernic.roce.rc.ConnectedResponder;
import ernic.roce.rc.RcPacketSink;
import ernic.roce.rc.RcPayload;
import ernic.roce.rc.RcRequesterHost;
import ernic.roce.rc.RcResponderHost;
import ernic.roce.rc.RcStatus;

import java.lang.foreign.MemorySegment;

/**
 * One connected (RC or UC) QP on the wire: its outer headers (the driver's template), its transport engines (the
 * responder from RTR, the requester from RTS) and what they need of the device: the QP's send WQEs and receives, guest memory by key,
 * completions. The engines name a work request by its SQ slot. Device thread only; nothing allocated per packet.
 */
final class WireQp implements RcPacketSink, RcRequesterHost, RcResponderHost {
    final QueuePair qp;
    final WireEnd wire;
    /** The outer headers every packet of this QP carries: Ethernet [+ 802.1Q], IP, UDP. */
    final RoceFrame template;
    ConnectedResponder responder;
    ConnectedRequester requester;
    /** Flushed, reset or destroyed: the engines' late calls change nothing of the QP (their NAKs still go out). */
    boolean closed;
    /** The opcode of the packet the responder is taking (tells a WRITE with immediate from a SEND). */
    int receiving;
    /** The receive the message in progress fills: its buffers, WQE id and the status its buffers allow. */
    private final Spans recv = new Spans();
    private long recvWqeId;
    private int recvStatus;
    /** Per SQ slot: an error found landing a response (READ data, an atomic's value) its completion carries. */
    private final int[] landed;
    /** The SQ slot whose completion is kept in {@link #captured} rather than reported (-1: none): a UC send in issue. */
    int capture = -1;
    int captured;

    WireQp(QueuePair qp, WireEnd wire, RoceFrame template) {
        this.qp = qp;
        this.wire = wire;
        this.template = template;
        this.landed = new int[qp.sq == null ? 1 : qp.sq.mask() + 1];
    }

    // ---------------------------------------------------------------------------------------------
    // RcPacketSink

    @Override
    public void transmit(TransportHeader header, RcPayload payload) {
        wire.transmit(this, header, payload);
    }

    // ---------------------------------------------------------------------------------------------
    // RcRequesterHost: the QP's send WQEs, by SQ slot

    @Override
    public void gather(long wrId, long offset, MemorySegment dst, long dstOffset, int length) {
        throw new UnsupportedOperationException("the wire end gathers in its sink"); // the engine never calls it
    }

    @Override
    public void scatter(long wrId, long offset, MemorySegment src, long srcOffset, int length) {
        int slot = (int) wrId;
        if (!closed && landed[slot] == V1.STS_OK) {
            landed[slot] = wire.landRead(this, slot, offset, src, srcOffset, length);
        }
    }

    @Override
    public void atomicResult(long wrId, long original) {
        int slot = (int) wrId;
        if (!closed && landed[slot] == V1.STS_OK) {
            landed[slot] = wire.landAtomic(this, slot, original);
        }
    }

    @Override
    public void completed(long wrId, RcStatus status) {
        int slot = (int) wrId;
        int st = landed[slot] != V1.STS_OK && status == RcStatus.SUCCESS ? landed[slot] : WireEnd.status(status);
        landed[slot] = V1.STS_OK;
        if (slot == capture) {
            capture = -1;
            captured = st;
        } else if (!closed) {
            wire.completed(this, slot, st);
        }
    }

    /** A UC packet of the WQE in {@code slot} could not be read from guest memory: its completion says so. */
    void unsent(int slot) {
        if (landed[slot] == V1.STS_OK) {
            landed[slot] = V1.STS_LOCAL_PROT_ERR;
        }
    }

    /** A WQE in {@code slot} was posted: nothing has gone wrong landing its answer yet. */
    void posted(int slot) {
        landed[slot] = V1.STS_OK;
    }

    // ---------------------------------------------------------------------------------------------
    // RcResponderHost: guest memory by rkey, the RQ

    @Override
    public boolean checkAccess(int rkey, long va, long length, int access) {
        return !closed && wire.checkAccess(qp, rkey, va, length, access);
    }

    @Override
    public void write(int rkey, long va, MemorySegment src, long srcOffset, int length) {
        if (!closed) {
            wire.writeMemory(qp, rkey, va, src, srcOffset, length);
        }
    }

    @Override
    public long atomic(int rkey, long va, boolean compareSwap, long swapAdd, long compare) {
        return closed ? 0 : wire.atomic(qp, rkey, va, compareSwap, swapAdd, compare);
    }

    @Override
    public boolean takeReceive() {
        if (closed || !wire.takeReceive(qp, recv)) {
            return false;
        }
        recvWqeId = wire.takenWqeId();
        recvStatus = wire.takenStatus();
        return true;
    }

    @Override
    public long receiveCapacity() {
        // A receive whose buffers fail their checks takes any length: its completion carries that error.
        return recvStatus == V1.STS_OK ? recv.total : Long.MAX_VALUE;
    }

    @Override
    public void receive(long offset, MemorySegment src, long srcOffset, int length) {
        if (!closed && recvStatus == V1.STS_OK && !wire.place(src, srcOffset, recv, offset, length)) {
            recvStatus = V1.STS_LOCAL_PROT_ERR;
        }
    }

    @Override
    public boolean invalidate(int rkey) {
        return !closed && wire.invalidate(rkey);
    }

    @Override
    public void receiveCompleted(RcStatus status, long length, boolean withImm, int imm, boolean withInv,
                                 int invRkey, boolean solicited) {
        if (closed) {
            return;
        }
        int st = recvStatus != V1.STS_OK ? recvStatus : WireEnd.status(status);
        IbOpcode o = IbOpcode.of(receiving);
        boolean write = o != null && o.rdmaWrite();
        WqeOpcode op = write ? WqeOpcode.RDMA_WRITE_IMM
                : withImm ? WqeOpcode.SEND_IMM : withInv ? WqeOpcode.SEND_INV : WqeOpcode.SEND;
        recv.clear();
        wire.receiveCompleted(qp, recvWqeId, (qp.destQpn & 0xff_ffff) | op.recvOp << 24,
                withImm ? imm : withInv ? invRkey : 0, length, st, solicited);
    }

    @Override
    public void failed(RcStatus cause) {
        if (!closed) {
            wire.failed(qp);
        }
    }
}
