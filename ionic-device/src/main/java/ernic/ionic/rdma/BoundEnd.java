package ernic.ionic.rdma;

import ernic.attach.ConnectedEnd;
import ernic.attach.Payload;
import ernic.attach.WcStatus;

import java.lang.foreign.MemorySegment;

/**
 * The end of a guest QP an attachment connected ({@link Attachments#bind}): its SENDs go to the attachment's
 * {@link ConnectedEnd}; the attachment posts no buffers for RDMA, so WRITE, READ and atomics get a remote
 * access error, as a real peer without such buffers answers. Device thread only.
 */
final class BoundEnd implements End, Payload {
    final ConnectedEnd end;
    private final KeyedMemory memory;
    private final Spans into = new Spans();
    private Request request;

    BoundEnd(ConnectedEnd end, KeyedMemory memory) {
        this.end = end;
        this.memory = memory;
    }

    @Override
    public int send(Request r) {
        request = r;
        WcStatus st = end.send(this);
        request = null;
        if (st == WcStatus.SUCCESS) {
            r.moved = r.payload.total;
        }
        return switch (st) {
            case SUCCESS -> V1.STS_OK;
            case LOCAL_PROTECTION_ERROR -> V1.STS_LOCAL_PROT_ERR;
            case REMOTE_INVALID_REQUEST_ERROR -> V1.STS_REMOTE_INV_REQ_ERR;
            case REMOTE_ACCESS_ERROR -> V1.STS_REMOTE_ACC_ERR;
        };
    }

    @Override
    public int write(Request r) {
        return V1.STS_REMOTE_ACC_ERR;
    }

    @Override
    public int read(Request r) {
        return V1.STS_REMOTE_ACC_ERR;
    }

    @Override
    public int atomic(Request r) {
        return V1.STS_REMOTE_ACC_ERR;
    }

    @Override
    public int datagram(Request r) {
        return V1.STS_LOCAL_QP_OPER_ERR; // an RC QP sends no datagrams
    }

    // Payload: the SEND being carried out

    @Override
    public long length() {
        return request.payload.total;
    }

    @Override
    public boolean copyTo(MemorySegment dst) {
        long len = request.payload.total;
        into.clear().addLocal(dst, 0, len);
        boolean ok = memory.copy(request.payload, into, len);
        into.clear();
        return ok;
    }
}
