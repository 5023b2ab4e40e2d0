package ernic.ionic.trace;

import ernic.counters.Counters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A classic libpcap file (magic a1b2c3d4 written little-endian, version 2.4, microsecond timestamps,
 * LINKTYPE_ETHERNET) filled from the device thread without waiting for the disk. Records go into one of
 * {@link #BUFFERS} preallocated buffers of {@link #BUFFER_BYTES}; a full buffer (and, from the server's timer,
 * a partly filled one) goes to a writer thread of this trace's own, which writes it and hands it back. When
 * no buffer is free the record is dropped and counted ({@link TraceCounter#FRAMES_DROPPED}); nothing on the
 * device thread blocks or allocates per record.
 *
 * <p>Threads: {@link #open} and {@link #close} on any thread but the device thread; {@link #start},
 * {@link #reserve}, {@link #commit}, {@link #flush} and {@link #reclaim} on the device thread only.
 */
public final class PcapTrace implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PcapTrace.class);

    public static final int BUFFER_BYTES = 1 << 20;
    public static final int BUFFERS = 4;
    /** Payload bytes a frame keeps; a longer payload is cut there (and the frame's ICRC left out). */
    public static final int SNAPLEN_PAYLOAD = 256;
    /** The snap length in the file header: the longest frame a record holds. */
    public static final int SNAPLEN = 512;
    public static final int LINKTYPE_ETHERNET = 1;
    public static final int FILE_HEADER = 24, RECORD_HEADER = 16;

    /** One buffer: records, then written by the writer thread. */
    private static final class Buf {
        final byte[] bytes;
        final ByteBuffer view;
        final MemorySegment segment;
        int used, frames;
        volatile boolean failed;

        Buf(int size) {
            bytes = new byte[size];
            view = ByteBuffer.wrap(bytes);
            segment = MemorySegment.ofArray(bytes);
        }
    }

    private final Path file;
    private final FileChannel channel;
    private final ArrayBlockingQueue<Buf> toWrite, written;
    private final ArrayDeque<Buf> free;
    private final Buf stop = new Buf(0);
    private final Thread writer;
    private Buf current;
    private int at;
    private long baseMicros, baseNanos;
    private volatile boolean closed;
    private final Counters<TraceCounter> counters = new Counters<>(TraceCounter.class);

    private PcapTrace(Path file, FileChannel channel, int buffers, int bufferBytes) {
        this.file = file;
        this.channel = channel;
        toWrite = new ArrayBlockingQueue<>(buffers + 1);
        written = new ArrayBlockingQueue<>(buffers);
        free = new ArrayDeque<>(buffers);
        for (int i = 0; i < buffers; i++) {
            free.add(new Buf(bufferBytes));
        }
        current = free.poll();
        writer = Thread.ofPlatform().name("ernic-trace-writer").daemon().unstarted(this::writeLoop);
    }

    /** Creates (or truncates) {@code file}, writes the file header and starts the writer thread. */
    public static PcapTrace open(Path file) throws IOException {
        return open(file, BUFFERS, BUFFER_BYTES);
    }

    /** With {@code buffers} buffers of {@code bufferBytes} (at least one record's room) each: for tests. */
    static PcapTrace open(Path file, int buffers, int bufferBytes) throws IOException {
        if (buffers < 1 || bufferBytes < RECORD_HEADER + SNAPLEN) {
            throw new IllegalArgumentException("a trace needs a buffer with room for one record");
        }
        FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING);
        try {
            ByteBuffer h = ByteBuffer.allocate(FILE_HEADER).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            h.putInt(0xa1b2c3d4).putShort((short) 2).putShort((short) 4).putInt(0).putInt(0)
                    .putInt(SNAPLEN).putInt(LINKTYPE_ETHERNET).flip();
            while (h.hasRemaining()) {
                ch.write(h);
            }
        } catch (IOException e) {
            ch.close();
            throw e;
        }
        PcapTrace t = new PcapTrace(file, ch, buffers, bufferBytes);
        t.writer.start();
        return t;
    }

    public Path file() {
        return file;
    }

    /** The counters (device thread), for the registry under {@code rdma.trace.}. */
    public Counters<TraceCounter> counters() {
        return counters;
    }

    /** Pairs the device clock's {@code nanos} with the wall clock: record times are wall-clock from here. */
    public void start(long nanos) {
        Instant now = Instant.now();
        baseMicros = now.getEpochSecond() * 1_000_000 + now.getNano() / 1000;
        baseNanos = nanos;
    }

    /**
     * Room for one record of at most {@link #SNAPLEN} frame bytes: the array to build the frame in, with the
     * frame starting at {@link #frameOffset()}; null when no buffer is free (the frame is counted as dropped).
     */
    public byte[] reserve() {
        if (closed) {
            counters.inc(TraceCounter.FRAMES_DROPPED);
            return null;
        }
        if (current != null && current.bytes.length - current.used < RECORD_HEADER + SNAPLEN) {
            handOff();
        }
        if (current == null) {
            reclaim();
            if (current == null) {
                current = free.poll();
            }
            if (current == null) {
                counters.inc(TraceCounter.FRAMES_DROPPED);
                return null;
            }
        }
        at = current.used;
        return current.bytes;
    }

    /** The array {@link #reserve} returned, as a segment (for copies out of guest memory). */
    public MemorySegment segment() {
        return current.segment;
    }

    /** Where the frame goes in the array {@link #reserve} returned. */
    public int frameOffset() {
        return at + RECORD_HEADER;
    }

    /** The frame reserved last is built: {@code captured} bytes of a frame of {@code length}, seen at {@code nanos}. */
    public void commit(int captured, int length, long nanos) {
        long micros = baseMicros + Math.max(0, nanos - baseNanos) / 1000;
        byte[] b = current.bytes;
        le32(b, at, (int) (micros / 1_000_000));
        le32(b, at + 4, (int) (micros % 1_000_000));
        le32(b, at + 8, captured);
        le32(b, at + 12, length);
        current.used = at + RECORD_HEADER + captured;
        current.frames++;
    }

    /** Hands the current buffer to the writer if it holds a record (the server's timer, and close). */
    public void flush() {
        reclaim();
        if (current != null && current.frames > 0) {
            handOff();
        }
    }

    private void handOff() {
        Buf b = current;
        current = null;
        counters.inc(TraceCounter.FLUSHES);
        if (!toWrite.offer(b)) { // cannot happen: the queue has room for every buffer
            counters.add(TraceCounter.FRAMES_DROPPED, b.frames);
            recycle(b);
            return;
        }
        current = free.poll();
    }

    /** Takes back the buffers the writer is done with and counts their frames. */
    public void reclaim() {
        Buf b;
        while ((b = written.poll()) != null) {
            if (b.failed) {
                counters.inc(TraceCounter.WRITE_ERRORS);
                counters.add(TraceCounter.FRAMES_DROPPED, b.frames);
            } else {
                counters.add(TraceCounter.FRAMES_WRITTEN, b.frames);
            }
            recycle(b);
        }
    }

    private void recycle(Buf b) {
        b.used = 0;
        b.frames = 0;
        b.failed = false;
        if (current == null) {
            current = b;
        } else {
            free.add(b);
        }
    }

    private void writeLoop() {
        boolean logged = false;
        while (true) {
            Buf b;
            try {
                b = toWrite.take();
            } catch (InterruptedException e) {
                return;
            }
            if (b == stop) {
                return;
            }
            try {
                b.view.clear().limit(b.used);
                while (b.view.hasRemaining()) {
                    channel.write(b.view);
                }
            } catch (IOException e) {
                b.failed = true;
                if (!logged) {
                    log.warn("--trace-rdma {}: write failed ({}); frames are dropped and counted", file, e.toString());
                    logged = true;
                }
            }
            written.add(b);
        }
    }

    /**
     * Ends the file: after the device thread's last {@link #flush}, waits (at most 10 s) for the writer to
     * write what it was given, then closes the file. Not on the device thread. Run {@link #reclaim} on the
     * device thread afterwards for the final counts.
     */
    @Override
    public void close() {
        closed = true;
        toWrite.add(stop);
        try {
            writer.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            channel.force(false);
            channel.close();
        } catch (IOException e) {
            log.warn("--trace-rdma {}: close failed: {}", file, e.toString());
        }
    }

    private static void le32(byte[] b, int p, int v) {
        b[p] = (byte) v;
        b[p + 1] = (byte) (v >>> 8);
        b[p + 2] = (byte) (v >>> 16);
        b[p + 3] = (byte) (v >>> 24);
    }
}
