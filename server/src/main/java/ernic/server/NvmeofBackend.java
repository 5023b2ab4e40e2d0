package ernic.server;

import ernic.counters.Counters;
import ernic.ionic.IonicDevice;
import ernic.ionic.base.RdmaIdentity;
import ernic.ipstack.IpEndpoint;
import ernic.ipstack.NetCounter;
import ernic.nvmeof.Namespace;
import ernic.nvmeof.NvmeofAttachment;
import ernic.nvmeof.NvmeofCounters;
import ernic.nvmeof.NvmeofOptions;
import ernic.nvmeof.NvmeofTarget;
import ernic.nvmeof.PathCounter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * {@code --backend nvmeof[:...]}: the in-process NVMe-oF target attached to the device's RDMA side (docs/nvmeof.md).
 * Its namespace's file I/O runs on an executor of its own and comes back on the device loop; its counters are under
 * {@code nvmeof.} (and {@code rdma.target.}); its keep-alive runs with the RDMA tick. On the guest's Ethernet the
 * target's address is a {@link SegmentHost} that answers ARP and ICMP echo (a TCP connection to it is refused with
 * RST, as by a host with no listener), so the guest needs no static neighbour entry.
 */
record NvmeofBackend(NvmeofOptions options, String form) implements Backend {
    private static final Logger log = LoggerFactory.getLogger(NvmeofBackend.class);

    /** The options, checked against the device's identity; a bad one is the one-line start-up error. */
    static NvmeofOptions parse(String backend) {
        return NvmeofOptions.parse(backend, RdmaIdentity.NMRS_PER_LIF, RdmaIdentity.QP_COUNT);
    }

    /** Opens the namespace and attaches the target to the device; what it returns closes them. */
    @Override
    public AutoCloseable start(BackendContext c) throws IOException {
        Namespace ns = options.file() != null ? Namespace.file(options.file(), options.size(), options.blockSize())
                : Namespace.ram(options.sizeOrDefault(), options.blockSize());
        ExecutorService io = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "ernic-nvmeof-io");
            t.setDaemon(true);
            return t;
        });
        NvmeofTarget target = new NvmeofTarget(options, ns, c.loop()::execute, io, c.loop().ticker(),
                new NvmeofCounters());
        IonicDevice ionic = c.ionic();
        SegmentHost host = c.onLoop(() -> {
            Counters<PathCounter> path = new Counters<>(PathCounter.class);
            ionic.rdma().addAttachment(qps -> new NvmeofAttachment(qps, target, path));
            Counters<NetCounter> net = new Counters<>(NetCounter.class);
            IpEndpoint endpoint = new IpEndpoint(options.ip().ipv4(), options.port(), SegmentHost.toGuest(ionic),
                    c.loop().ticker(), net, null);
            target.counters().registerIn(c.registry());
            c.registry().register("nvmeof.", net);
            c.registry().register("rdma.", path);
            return new SegmentHost(endpoint, ionic, c.loop());
        });
        log.info("{}", target.describe());
        return new Running(target, io, host, c);
    }

    /** A started target. */
    private record Running(NvmeofTarget target, ExecutorService io, SegmentHost host, BackendContext context)
            implements AutoCloseable {
        /** After the device is detached: lets go of the Ethernet, stops the I/O executor, closes the namespace. */
        @Override
        public void close() throws IOException {
            if (context.loop().inEventLoop()) {
                host.close();
            } else {
                context.onLoop(() -> {
                    host.close();
                    return null;
                });
            }
            io.shutdown();
            try {
                io.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            target.close();
        }
    }
}
