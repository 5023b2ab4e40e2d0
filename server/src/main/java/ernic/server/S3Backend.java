package ernic.server;

import ernic.counters.Counters;
import ernic.ionic.IonicDevice;
import ernic.ipstack.IpEndpoint;
import ernic.ipstack.NetCounter;
import ernic.s3.HttpCounter;
import ernic.s3.S3Counter;
import ernic.s3.S3Options;
import ernic.s3.S3Store;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;

/**
 * {@code --backend s3[:...]}: the in-process S3 store as a host on the guest's Ethernet segment ({@link SegmentHost});
 * token transfers reach guest memory through the RDMA side's {@code HostMemory}. Everything runs on the device
 * thread; a power-on reset of the device drops the store's connections, the objects stay. Counters under {@code s3.}.
 */
record S3Backend(S3Options options, String form) implements Backend {
    private static final Logger log = LoggerFactory.getLogger(S3Backend.class);

    /** Builds the store on the device thread and logs where it answers; what it returns closes it there. */
    @Override
    public AutoCloseable start(BackendContext c) {
        IonicDevice ionic = c.ionic();
        SegmentHost host = c.onLoop(() -> {
            Counters<NetCounter> net = new Counters<>(NetCounter.class);
            Counters<HttpCounter> http = new Counters<>(HttpCounter.class);
            Counters<S3Counter> s3 = new Counters<>(S3Counter.class);
            S3Store store = new S3Store(options, ionic.rdma().hostMemory(), Clock.systemUTC(), http, s3);
            IpEndpoint endpoint = new IpEndpoint(options.ip(), options.port(), SegmentHost.toGuest(ionic),
                    c.loop().ticker(), net, store::accept);
            c.registry().register("s3.", net);
            c.registry().register("s3.", http);
            c.registry().register("s3.", s3);
            return new SegmentHost(endpoint, ionic, c.loop());
        });
        log.info("s3 store: {} (bucket {}, MAC {}, {} bytes, {} objects)", options.endpointUrl(), options.bucket(),
                options.mac(), options.size(), options.objects());
        return host;
    }
}
