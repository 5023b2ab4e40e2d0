package ernic.server;

import ernic.counters.CounterRegistry;
import ernic.ionic.IonicDevice;
import ernic.ionic.base.RdmaIdentity;
import ernic.ionic.target.nvmeof.Namespace;
import ernic.ionic.target.nvmeof.NvmeofCounters;
import ernic.ionic.target.nvmeof.NvmeofOptions;
import ernic.ionic.target.nvmeof.NvmeofTarget;
import ernic.ionic.target.s3.IpEndpoint;
import ernic.ionic.target.s3.NetCounter;
import ernic.counters.Counters;
import io.netty.channel.EventLoop;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * {@code --backend nvmeof[:...]}: the in-process NVMe-oF target on the device's RDMA side (docs/nvmeof.md).
 * Its namespace's file I/O runs on an executor of its own and comes back on the device loop; its counters
 * are under {@code nvmeof.}; its keep-alive runs with the RDMA tick. On the guest's Ethernet the target's
 * address answers ARP and ICMP echo (a TCP connection to it is refused with RST, as by a host with no
 * listener), so the guest needs no static neighbour entry.
 */
final class NvmeofBackend implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(NvmeofBackend.class);

    private final NvmeofTarget target;
    private final ExecutorService io;

    private NvmeofBackend(NvmeofTarget target, ExecutorService io) {
        this.target = target;
        this.io = io;
    }

    /** True when {@code backend} names this backend ({@code nvmeof} or {@code nvmeof:...}). */
    static boolean named(String backend) {
        return backend != null && (backend.equals("nvmeof") || backend.startsWith("nvmeof:"));
    }

    /** The options, checked against the device's identity; a bad one is the one-line start-up error. */
    static NvmeofOptions parse(String backend) {
        return NvmeofOptions.parse(backend, RdmaIdentity.NMRS_PER_LIF, RdmaIdentity.QP_COUNT);
    }

    /** Opens the namespace and puts the target on {@code ionic}, whose thread is {@code loop}. */
    static NvmeofBackend start(NvmeofOptions options, IonicDevice ionic, EventLoop loop, CounterRegistry registry)
            throws IOException {
        Namespace ns = options.file() != null ? Namespace.file(options.file(), options.size(), options.blockSize())
                : Namespace.ram(options.sizeOrDefault(), options.blockSize());
        ExecutorService io = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "ernic-nvmeof-io");
            t.setDaemon(true);
            return t;
        });
        NvmeofTarget target = new NvmeofTarget(options, ns, loop::execute, io, loop.ticker(), new NvmeofCounters());
        Counters<NetCounter> net = new Counters<>(NetCounter.class);
        IpEndpoint host = new IpEndpoint(ipv4(options.ip()), options.port(), ionic::queueForGuest, loop.ticker(),
                net, null);
        loop.submit(() -> {
            ionic.rdma().attachNvmeof(target);
            ionic.addTxClaimer(S3Backend.claimer(host));
            target.counters().registerIn(registry);
            registry.register("nvmeof.", net);
        }).syncUninterruptibly();
        log.info("{}", target.describe());
        return new NvmeofBackend(target, io);
    }

    private static int ipv4(String dotted) {
        int a = 0;
        for (String part : dotted.split("\\.")) {
            a = a << 8 | Integer.parseInt(part);
        }
        return a;
    }

    /** After the device is detached: stops the I/O executor, then closes the namespace (a file is forced). */
    @Override
    public void close() throws IOException {
        io.shutdown();
        try {
            io.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        target.close();
    }
}
