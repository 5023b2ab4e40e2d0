package ernic.nvmeof;

import ernic.counters.OncePerCause;

import ernic.attach.HostMemory;
import io.netty.util.concurrent.Ticker;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The in-process NVMe-oF target of {@code --backend nvmeof}: one NVM subsystem with one namespace, the
 * discovery controller, and the controllers hosts make by Fabrics Connect. The data path opens a
 * {@link HostQueue} per connection the CM accepted and hands it the command capsules.
 *
 * <p>Threads: everything runs on the device thread except namespace file I/O, which runs on {@code io}
 * and comes back through {@code loop} (the device loop's {@code execute}).
 */
public final class NvmeofTarget implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(NvmeofTarget.class);

    /** MDTS in 4 KiB pages, as a power of two: 1 MiB per command (nvmet-rdma's limit). */
    static final int MDTS = 8;
    static final int MAX_TRANSFER = 4096 << MDTS;
    /** Queue entries: MQES (0's based) and MAXCMD. */
    static final int MQES = 127, MAX_CMD = 128;
    /** In-capsule data a command may carry (IOCCSZ = (64 + this) / 16), as nvmet's default 8 KiB. */
    static final int IN_CAPSULE_DATA = 8192;
    /** Keep Alive granularity (KAS) in 100 ms units. */
    static final int KAS_100MS = 10;
    static final int MAX_CONTROLLERS = 64;

    final NvmeofOptions options;
    final Namespace namespace;
    final NvmeofCounters counters;
    final Ticker ticker;
    final Executor loop, io;
    final BufferPool pool = new BufferPool(MAX_TRANSFER);
    /** The log line of each refusal cause, once (the counters say how often). */
    final OncePerCause refusals = new OncePerCause(log);
    /** The namespace's NGUID and UUID: derived from subsystem, serial and NSID, so a file keeps them. */
    final byte[] nguid, uuid;
    private final Controller[] controllers = new Controller[MAX_CONTROLLERS + 1];
    private final long started;

    /**
     * @param loop runs work on the device thread (the device loop's {@code execute})
     * @param io   runs namespace file I/O; never the device thread
     */
    public NvmeofTarget(NvmeofOptions options, Namespace namespace, Executor loop, Executor io, Ticker ticker,
                        NvmeofCounters counters) {
        this.options = options;
        this.namespace = namespace;
        this.loop = loop;
        this.io = io;
        this.ticker = ticker;
        this.counters = counters;
        this.started = ticker.nanoTime();
        String id = options.nqn() + "/" + options.serial() + "/" + options.nsid();
        this.uuid = bytes(UUID.nameUUIDFromBytes(("uuid:" + id).getBytes(StandardCharsets.UTF_8)));
        this.nguid = bytes(UUID.nameUUIDFromBytes(("nguid:" + id).getBytes(StandardCharsets.UTF_8)));
    }

    private static byte[] bytes(UUID u) {
        byte[] b = new byte[16];
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (u.getMostSignificantBits() >>> (56 - 8 * i));
            b[8 + i] = (byte) (u.getLeastSignificantBits() >>> (56 - 8 * i));
        }
        return b;
    }

    /** The start-up line: {@code nvmeof target 'nvmet-test' 1073741824 bytes bs=4096 at 192.168.200.1:4420}. */
    public String describe() {
        return "nvmeof target '" + options.nqn() + "' " + namespace.bytes() + " bytes bs=" + namespace.blockSize()
                + " at " + options.ip() + ":" + options.port();
    }

    public NvmeofOptions options() {
        return options;
    }

    public NvmeofCounters counters() {
        return counters;
    }

    /**
     * A queue for a connection the CM accepted: {@code qid} and {@code hsqsize} (0's based) from the host's
     * NVMe/RDMA private data, already checked by the CM. Device thread only.
     */
    public HostQueue openQueue(int qid, int hsqsize, HostMemory host, HostConnection responder) {
        int max = qid == 0 ? Nvme.AQ_DEPTH : MQES + 1;
        if (qid < 0 || qid > options.queues() || hsqsize < 1 || hsqsize + 1 > max) {
            throw new IllegalArgumentException("queue " + qid + " of " + (hsqsize + 1) + " entries");
        }
        return new HostQueue(this, qid, hsqsize + 1, host, responder);
    }

    /** The largest queue the CM may accept for {@code qid}: the admin queue 32 entries, I/O queues MQES + 1. */
    public int maxQueueEntries(int qid) {
        return qid == 0 ? Nvme.AQ_DEPTH : MQES + 1;
    }

    /** Keep-alive: a controller that heard nothing for its KATO fails (nvmet's keep-alive timer). */
    public void tick() {
        long now = ticker.nanoTime();
        for (Controller c : controllers) {
            if (c != null && c.expired(now)) {
                counters.traffic.inc(NvmeofCounters.Traffic.KEEP_ALIVE_EXPIRED);
                refuse("keep alive expired", "controller " + c.cntlid + " of " + c.hostNqn
                        + " heard nothing for its KATO of " + c.katoMs + " ms");
                c.fail();
            }
        }
    }

    Controller newController(boolean discovery, String hostNqn, long katoMs) {
        for (int id = 1; id <= MAX_CONTROLLERS; id++) {
            if (controllers[id] == null) {
                Controller c = new Controller(this, id, discovery, hostNqn, katoMs);
                controllers[id] = c;
                counters.traffic.inc(NvmeofCounters.Traffic.CONTROLLERS);
                return c;
            }
        }
        return null;
    }

    Controller controller(int cntlid) {
        return cntlid >= 1 && cntlid <= MAX_CONTROLLERS ? controllers[cntlid] : null;
    }

    void removeController(Controller c) {
        if (controllers[c.cntlid] == c) {
            controllers[c.cntlid] = null;
        }
    }

    long powerOnHours() {
        return TimeUnit.NANOSECONDS.toHours(ticker.nanoTime() - started);
    }

    /** A namespace file operation failed (device thread). */
    void fileError(Exception e) {
        counters.traffic.inc(NvmeofCounters.Traffic.FILE_ERRORS);
        refuse("namespace file error", e.toString());
    }

    /** Closes the namespace (the caller stops the I/O executor first). */
    @Override
    public void close() throws IOException {
        namespace.close();
    }

    /** Logs {@code cause: detail} the first time the cause is seen: a hostile host must not flood the log. */
    void refuse(String cause, String detail) {
        refusals.warn(cause, "{}: {}", cause, detail);
    }
}
