package ernic.ionic;

import ernic.model.rdma.Cq;
import ernic.model.rdma.Path;
import ernic.model.rdma.Qp;
import ernic.model.rdma.RdmaVerbs;
import ernic.model.rdma.SendWr;
import ernic.model.rdma.Wc;
import org.junit.jupiter.api.AfterEach;

import java.io.IOException;

import static ernic.model.rdma.RdmaVerbs.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the verbs-level RDMA tests of one device build on: a guest driven by the driver model in process, and two RC
 * QPs connected to each other through its verbs, {@code a} (10.0.0.1) completing on {@code cqA} and {@code b}
 * (10.0.0.2) on {@code cqB}.
 */
abstract class RcPairTest {
    static final int QP_ALL = QP_REMOTE_WRITE | QP_REMOTE_READ | QP_REMOTE_ATOMIC;

    IonicDevice dev;
    ModelGuest guest;
    RdmaVerbs v;
    Cq cqA, cqB;
    Qp a, b;
    final Wc wc = new Wc();
    final SendWr wr = new SendWr();

    /** A guest of {@code device} with 16 MiB of RAM, and {@code a} and {@code b} (16 deep, 128-byte WQEs) connected. */
    void startRcPair(IonicDevice device) throws IOException {
        dev = device;
        guest = new ModelGuest(dev, 16 << 20);
        v = RdmaVerbs.open(guest.drv);
        cqA = v.createCq(6);
        cqB = v.createCq(6);
        a = v.createQp(RC, cqA, cqA, 4, 4, 7, QP_ALL);
        b = v.createQp(RC, cqB, cqB, 4, 4, 7, QP_ALL);
        connect(a, b);
    }

    @AfterEach
    void closeGuest() {
        if (guest != null) {
            guest.close();
        }
    }

    /** {@code x} at 10.0.0.1 and {@code y} at 10.0.0.2 connected to each other (INIT, RTR, RTS). */
    void connect(Qp x, Qp y) throws IOException {
        v.connect(x, Path.of("10.0.0.1", "10.0.0.2"), y, Path.of("10.0.0.2", "10.0.0.1"));
    }

    /** After an error completion: a and b through ERROR and RESET back to RTS, the flushes drained. */
    void startOver() throws IOException {
        v.toState(a, ERR);
        v.toState(b, ERR);
        while (cqA.poll(wc) || cqB.poll(wc)) {
            assertThat(wc.status).as("only flushes while starting over").isEqualTo(STS_WQE_FLUSHED_ERR);
        }
        v.toState(a, RESET);
        v.toState(b, RESET);
        connect(a, b);
    }
}
