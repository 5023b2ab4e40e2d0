package ernic.vfiouser.client;

import ernic.vfiouser.server.Capabilities;
import ernic.vfiouser.server.IrqType;
import ernic.vfiouser.sys.LibC;
import ernic.vfiouser.wire.Command;
import ernic.vfiouser.wire.Header;
import ernic.vfiouser.wire.Messages.DeviceInfo;
import ernic.vfiouser.wire.Messages.DmaAccess;
import ernic.vfiouser.wire.Messages.DmaMap;
import ernic.vfiouser.wire.Messages.DmaUnmap;
import ernic.vfiouser.wire.Messages.IrqInfo;
import ernic.vfiouser.wire.Messages.RegionAccess;
import ernic.vfiouser.wire.Messages.RegionInfo;
import ernic.vfiouser.wire.Messages.SetIrqs;
import ernic.vfiouser.wire.Messages.Version;
import ernic.vfiouser.wire.ProtocolException;
import ernic.vfiouser.wire.VfioUserMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

import static ernic.common.Endian.LE;

/**
 * The client side of vfio-user, as QEMU speaks it: connect, negotiate, share memfd-backed guest RAM,
 * read and write regions, hand over interrupt eventfds, reset. The client answers the server's
 * DMA_READ / DMA_WRITE from the {@link GuestRam} it mapped. These are the typed commands; the
 * messages go through a {@link ClientExchange} (headers, ids, replies, the reader role and its
 * threads) over a {@link ClientSocket} (the socket and its fds). Any thread may call; a blocking call
 * reads its own reply, so a callback of a {@link #send} future must not make one.
 */
public final class VfioUserClient implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(VfioUserClient.class);
    public static final String QEMU_CAPABILITIES = "{\"capabilities\":{\"migration\":{\"pgsize\":4096,"
            + "\"max_bitmap_size\":268435456},\"max_msg_fds\":16,\"max_data_xfer_size\":1048576,"
            + "\"pgsizes\":4096,\"max_dma_maps\":65535,\"write_multiple\":true}}";
    private static final int[] NO_FDS = VfioUserMessage.NO_FDS;

    /** Read by the reader (serving DMA_READ/WRITE), changed by callers: copy-on-write. */
    private final List<GuestRam> ram = new CopyOnWriteArrayList<>();
    private volatile Capabilities serverCapabilities = Capabilities.DEFAULTS;
    private final ClientExchange exchange;

    private VfioUserClient(String path) throws IOException {
        this.exchange = ClientExchange.connect(path, this::serve);
    }

    /** Connects to the server at {@code path}. */
    public static VfioUserClient connect(String path) throws IOException {
        return new VfioUserClient(path);
    }

    public boolean isConnected() {
        return exchange.isConnected();
    }

    /** Waits up to {@code millis} for the server to close the connection; true when it did. */
    public boolean awaitClosed(long millis) {
        return exchange.awaitClosed(millis);
    }

    public Capabilities serverCapabilities() {
        return serverCapabilities;
    }

    /** The allocator for payloads handed to {@link #send} and {@link #call}. */
    public ByteBufAllocator alloc() {
        return ByteBufAllocator.DEFAULT;
    }

    /** Sends a command; the future completes with the reply (release it), or never with NO_REPLY. */
    public CompletableFuture<VfioUserMessage> send(Command cmd, ByteBuf payload, boolean noReply, int... fds) {
        return exchange.send(cmd, payload, noReply, fds);
    }

    /** Sends arbitrary bytes (for protocol tests); {@code fds} go with the first byte and stay the caller's. */
    public void sendRaw(ByteBuf bytes, int... fds) {
        exchange.sendRaw(bytes, fds);
    }

    /** Sends a command and waits for its reply; an error reply becomes a {@link VfioUserException}. */
    public VfioUserMessage call(Command cmd, ByteBuf payload, int... fds) throws IOException {
        return exchange.call(cmd, payload, fds);
    }

    @Override
    public void close() {
        exchange.close();
    }

    // ---- the commands --------------------------------------------------------------------------

    /** VERSION with {@code json} as our capabilities; returns the server's. */
    public Capabilities negotiate(String json) throws IOException {
        VfioUserMessage r = exchange.call(Command.VERSION, new Version(0, 0, json).encode(alloc()));
        try {
            Version v = Version.decode(r.payload());
            serverCapabilities = Capabilities.parse(v.json());
            return serverCapabilities;
        } catch (ProtocolException e) {
            throw new IOException("bad VERSION reply: " + e.getMessage());
        } finally {
            r.release();
        }
    }

    /** VERSION with QEMU's own proposal. */
    public Capabilities negotiate() throws IOException {
        return negotiate(QEMU_CAPABILITIES);
    }

    /** Shares {@code r} with the server (DMA_MAP with its memfd), read-write. */
    public void map(GuestRam r) throws IOException {
        exchange.callNoPayload(Command.DMA_MAP, new DmaMap(DmaMap.SIZE, DmaMap.FLAG_READ | DmaMap.FLAG_WRITE, 0, r.iova(),
                r.size()).encode(alloc()), r.fd());
        ram.add(r);
    }

    /** DMA_MAP without an fd: the server must reach {@code r} by DMA_READ / DMA_WRITE. */
    public void mapWithoutFd(GuestRam r) throws IOException {
        exchange.callNoPayload(Command.DMA_MAP, new DmaMap(DmaMap.SIZE, DmaMap.FLAG_READ | DmaMap.FLAG_WRITE, 0, r.iova(),
                r.size()).encode(alloc()));
        ram.add(r);
    }

    public void dmaMap(DmaMap req, int... fds) throws IOException {
        exchange.callNoPayload(Command.DMA_MAP, req.encode(alloc()), fds);
    }

    public DmaUnmap dmaUnmap(long iova, long size, int flags) throws IOException {
        VfioUserMessage r = exchange.call(Command.DMA_UNMAP, new DmaUnmap(DmaUnmap.SIZE, flags, iova, size).encode(alloc()));
        try {
            ram.removeIf(g -> (flags & DmaUnmap.FLAG_ALL) != 0 || g.iova() >= iova && g.iova() + g.size() <= iova + size);
            return DmaUnmap.decode(r.payload());
        } catch (ProtocolException e) {
            throw new IOException(e.getMessage());
        } finally {
            r.release();
        }
    }

    public DeviceInfo deviceInfo() throws IOException {
        return callDecoded(Command.DEVICE_GET_INFO, new DeviceInfo(DeviceInfo.SIZE, 0, 0, 0).encode(alloc()), DeviceInfo::decode);
    }

    /** A region's info with its capabilities, asking again with more room when the server says so. */
    public RegionInfoReply regionInfo(int index) throws IOException {
        int argsz = RegionInfo.SIZE;
        for (int attempt = 0; attempt < 2; attempt++) {
            ByteBuf req = new RegionInfo(argsz, 0, index, 0, 0, 0, List.of()).encode(alloc());
            req.writeZero(argsz - RegionInfo.SIZE);
            VfioUserMessage r = exchange.call(Command.DEVICE_GET_REGION_INFO, req);
            try {
                RegionInfo info = RegionInfo.decode(r.payload());
                int[] fds = r.takeFds();
                if (info.argsz() > argsz && attempt == 0) {
                    for (int fd : fds) {
                        LibC.close(fd);
                    }
                    argsz = info.argsz();
                    continue;
                }
                return new RegionInfoReply(info, fds.length > 0 ? fds[0] : -1);
            } catch (ProtocolException e) {
                throw new IOException(e.getMessage());
            } finally {
                r.release();
            }
        }
        throw new IOException("region info of " + index + " kept growing");
    }

    /** A region's info; {@code fd} (or -1) is the caller's to close. */
    public record RegionInfoReply(RegionInfo info, int fd) {}

    public IrqInfo irqInfo(IrqType type) throws IOException {
        return callDecoded(Command.DEVICE_GET_IRQ_INFO, new IrqInfo(IrqInfo.SIZE, 0, type.index(), 0).encode(alloc()),
                IrqInfo::decode);
    }

    /** How a reply's payload becomes its message record. */
    @FunctionalInterface
    private interface Decoder<T> {
        T decode(ByteBuf payload) throws ProtocolException;
    }

    /** A request whose reply is one message record: a reply that does not decode is an IOException. */
    private <T> T callDecoded(Command cmd, ByteBuf payload, Decoder<T> decoder) throws IOException {
        VfioUserMessage r = exchange.call(cmd, payload);
        try {
            return decoder.decode(r.payload());
        } catch (ProtocolException e) {
            throw new IOException(e.getMessage());
        } finally {
            r.release();
        }
    }

    /**
     * Gives the server eventfds for vectors {@code start ..} of {@code type}, in chunks of the
     * server's max_msg_fds, as QEMU does.
     */
    public void setIrqEventfds(IrqType type, int start, int... eventfds) throws IOException {
        int chunk = Math.max(1, serverCapabilities.maxMsgFds());
        for (int done = 0; done < eventfds.length; done += chunk) {
            int[] part = java.util.Arrays.copyOfRange(eventfds, done, Math.min(eventfds.length, done + chunk));
            setIrqs(new SetIrqs(SetIrqs.SIZE, SetIrqs.DATA_EVENTFD | SetIrqs.ACTION_TRIGGER, type.index(),
                    start + done, part.length, null), part);
        }
    }

    public void setIrqs(SetIrqs req, int... fds) throws IOException {
        exchange.callNoPayload(Command.DEVICE_SET_IRQS, req.encode(alloc()), fds);
    }

    public byte[] regionRead(int region, long offset, int count) throws IOException {
        VfioUserMessage r = exchange.call(Command.REGION_READ, new RegionAccess(offset, region, count).encodeHead(alloc(), 0));
        try {
            ByteBuf p = r.payload();
            if (p.readableBytes() != RegionAccess.SIZE + count) {
                throw new IOException("REGION_READ reply of " + p.readableBytes() + " bytes for " + count);
            }
            byte[] data = new byte[count];
            p.getBytes(p.readerIndex() + RegionAccess.SIZE, data);
            return data;
        } finally {
            r.release();
        }
    }

    public long regionReadLong(int region, long offset, int width) throws IOException {
        byte[] b = regionRead(region, offset, width);
        long v = 0;
        for (int i = width - 1; i >= 0; i--) {
            v = v << 8 | (b[i] & 0xff);
        }
        return v;
    }

    public void regionWrite(int region, long offset, byte[] data) throws IOException {
        exchange.callNoPayload(Command.REGION_WRITE, new RegionAccess(offset, region, data.length)
                .encodeHead(alloc(), data.length).writeBytes(data));
    }

    /**
     * A write of {@code width} bytes of {@code value} (little-endian), waiting for the reply. This is
     * the doorbell path: the message is built in the socket's buffer and the reply is read by this
     * thread, with nothing allocated.
     */
    public void regionWriteLong(int region, long offset, int width, long value) throws IOException {
        if (width < 1 || width > 8) {
            regionWrite(region, offset, littleEndian(value, width));
            return;
        }
        exchange.callInline(Command.REGION_WRITE, offset, regionAndCount(region, width), value, width);
    }

    /** A posted write (NO_REPLY), as QEMU sends most BAR writes. */
    public void regionWritePosted(int region, long offset, int width, long value) {
        if (width < 1 || width > 8) {
            send(Command.REGION_WRITE, new RegionAccess(offset, region, width).encodeHead(alloc(), width)
                    .writeBytes(littleEndian(value, width)), true);
            return;
        }
        exchange.postInline(Command.REGION_WRITE, offset, regionAndCount(region, width), value, width);
    }

    /** The second 8 bytes of a RegionAccess head: region (u32), then count (u32), little-endian. */
    private static long regionAndCount(int region, int count) {
        return Integer.toUnsignedLong(region) | (long) count << 32;
    }

    private static byte[] littleEndian(long value, int width) {
        byte[] b = new byte[width];
        for (int i = 0; i < width; i++) {
            b[i] = (byte) (value >>> (8 * i));
        }
        return b;
    }

    public void reset() throws IOException {
        exchange.callNoPayload(Command.DEVICE_RESET, null);
    }

    // ---- the server's requests -----------------------------------------------------------------

    /** The server's DMA_READ / DMA_WRITE, served from the client's guest RAM; ENOSYS for anything else. */
    private void serve(ClientExchange ex, int id, int cmd, MemorySegment rbuf, long at, int length) {
        Command c = Command.of(cmd);
        int replyFlags = Header.TYPE_REPLY;
        long rc;
        if (c != Command.DMA_READ && c != Command.DMA_WRITE) {
            rc = sendError(ex, id, cmd, LibC.ENOSYS);
        } else if (length < DmaAccess.SIZE) {
            rc = sendError(ex, id, cmd, LibC.EINVAL);
        } else {
            long address = LE.u64(rbuf, at);
            long count = LE.u64(rbuf, at + 8);
            MemorySegment mem = find(address, count);
            if (mem == null) {
                rc = sendError(ex, id, cmd, LibC.EFAULT);
            } else if (c == Command.DMA_READ) {
                rc = ex.sendMessage(id, cmd, replyFlags, 0, true, address, count, mem, count, NO_FDS);
            } else if (length - DmaAccess.SIZE != count) {
                rc = sendError(ex, id, cmd, LibC.EINVAL);
            } else {
                MemorySegment.copy(rbuf, at + DmaAccess.SIZE, mem, 0, count);
                rc = ex.sendMessage(id, cmd, replyFlags, 0, true, address, count, MemorySegment.NULL, 0, NO_FDS);
            }
        }
        if (rc < 0) {
            LOG.debug("cannot answer the server's {}: {}", c, LibC.strerror((int) -rc));
        }
    }

    private static long sendError(ClientExchange ex, int id, int cmd, int errno) {
        return ex.sendMessage(id, cmd, Header.TYPE_REPLY | Header.FLAG_ERROR, errno, false, 0, 0, MemorySegment.NULL, 0,
                NO_FDS);
    }

    private MemorySegment find(long addr, long count) {
        for (GuestRam r : ram) {
            if (addr >= r.iova() && count >= 0 && count <= r.size() && addr - r.iova() <= r.size() - count) {
                return r.at(addr, count);
            }
        }
        return null;
    }
}
