package ernic.it.bench;

import ernic.model.IonicDriverModel;
import ernic.model.rdma.RdmaVerbs;

import java.io.IOException;

/**
 * The client of {@code packaging/start-footprint.sh --client}: {@code IdleClient SOCKET} brings the device of the server
 * on SOCKET up as section 5's {@link StartFootprint} does (the driver model with 64 MiB of guest RAM: Ethernet, then
 * RDMA with one CQ), prints {@code up}, and stays connected until its standard input ends, so the script reads the
 * server's size "with a guest up" from the package's own files (the package carries the driver model for
 * {@code ernic fuzz}).
 */
public final class IdleClient {
    private IdleClient() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: IdleClient SOCKET");
            System.exit(2);
        }
        try (IonicDriverModel drv = IonicDriverModel.connect(args[0], 64L << 20)) {
            RdmaVerbs.open(drv).createCq(12);
            System.out.println("up");
            System.out.flush();
            while (System.in.read() >= 0) {
                // connected until the script closes our standard input
            }
        }
    }
}
