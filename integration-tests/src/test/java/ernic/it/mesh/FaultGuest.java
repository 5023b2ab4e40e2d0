package ernic.it.mesh;

import ernic.it.harness.ServerProcess;
import ernic.model.IonicDriverModel;
import ernic.model.rdma.Buffer;
import ernic.model.rdma.Cq;
import ernic.model.rdma.Mr;
import ernic.model.rdma.RdmaVerbs;

import java.io.IOException;

import static ernic.model.rdma.RdmaVerbs.ACCESS_LOCAL_WRITE;
import static ernic.model.rdma.RdmaVerbs.ACCESS_REMOTE_ATOMIC;
import static ernic.model.rdma.RdmaVerbs.ACCESS_REMOTE_READ;
import static ernic.model.rdma.RdmaVerbs.ACCESS_REMOTE_WRITE;

/**
 * One server's guest as the driver model drives it over the server's vfio-user socket: a CQ and one registered
 * buffer of three parts: {@code slots} slots of {@code slotBytes} that peers write into (offset 0), an 8-byte stamp
 * per operation this guest posts (the WRITE's first bytes, or where a FETCH_ADD's old value lands), and a filler
 * (a byte pattern, so that what lands can be checked) for WRITEs longer than 8 bytes. Its memory stays readable after its server died (the memfd is this JVM's).
 */
final class FaultGuest implements AutoCloseable {
    final String ip;
    final IonicDriverModel drv;
    final RdmaVerbs v;
    final Cq cq;
    final Buffer buf;
    final Mr mr;
    final int slots, slotBytes;

    FaultGuest(ServerProcess server, String ip, int slots, int slotBytes) throws IOException {
        this.ip = ip;
        this.slots = slots;
        this.slotBytes = slotBytes;
        long bytes = (long) slots * slotBytes + slots * 8L + slotBytes;
        long ram = bytes + (64L << 20) + (2L << 20) - 1 & -(2L << 20); // rings and all, in whole 2 MiB (DMA_MAP)
        drv = IonicDriverModel.connect(server.socket().toString(), ram);
        try {
            v = RdmaVerbs.open(drv);
            cq = v.createCq(11);
            buf = v.buffer(bytes, false);
            mr = v.regMr(buf, 0, bytes, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ
                    | ACCESS_REMOTE_ATOMIC);
            if (slotBytes > 8) {
                byte[] pattern = new byte[slotBytes]; // what a peer's WRITE must carry after its stamp
                for (int i = 0; i < slotBytes; i++) {
                    pattern[i] = (byte) (i * 131 + 17 ^ i >>> 8);
                }
                buf.put(filler(), pattern);
            }
        } catch (IOException | RuntimeException e) {
            drv.close();
            throw e;
        }
    }

    /** Where operation {@code seq} of a peer lands in this guest's buffer. */
    long slot(int seq) {
        return (long) seq * slotBytes;
    }

    /** This guest's stamp for its own operation {@code seq}. */
    long stamp(int seq) {
        return (long) slots * slotBytes + seq * 8L;
    }

    long filler() {
        return (long) slots * slotBytes + slots * 8L;
    }

    @Override
    public void close() {
        drv.close();
    }
}
