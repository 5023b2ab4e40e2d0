package ernic.vfiouser.client;

import ernic.vfiouser.server.Capabilities;
import ernic.vfiouser.server.IrqType;
import ernic.vfiouser.sys.LibC;
import ernic.vfiouser.transport.FdSocketChannel;
import ernic.vfiouser.wire.Command;
import ernic.vfiouser.wire.FdChunk;
import ernic.vfiouser.wire.Header;
import ernic.vfiouser.wire.MessageEncoder;
import ernic.vfiouser.wire.MessageFramer;
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
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.Future;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The client side of vfio-user, as QEMU speaks it: connect, negotiate, share memfd-backed guest RAM,
 * read and write regions, hand over interrupt eventfds, reset. Calls block the caller (never the
 * client's own event loop) until the reply arrives. The client answers the server's DMA_READ /
 * DMA_WRITE from the {@link GuestRam} it mapped.
 */
public final class VfioUserClient implements AutoCloseable {
    public static final String QEMU_CAPABILITIES = "{\"capabilities\":{\"migration\":{\"pgsize\":4096,"
            + "\"max_bitmap_size\":268435456},\"max_msg_fds\":16,\"max_data_xfer_size\":1048576,"
            + "\"pgsizes\":4096,\"max_dma_maps\":65535,\"write_multiple\":true}}";
    private static final long TIMEOUT_SECONDS = 30;

    private final EventLoopGroup group;
    private final Channel channel;
    private final Map<Integer, CompletableFuture<VfioUserMessage>> pending = new ConcurrentHashMap<>();
    /** Read by the client's event loop (serving DMA_READ/WRITE), changed by callers: copy-on-write. */
    private final List<GuestRam> ram = new CopyOnWriteArrayList<>();
    private final AtomicInteger nextId = new AtomicInteger();
    private volatile Capabilities serverCapabilities = Capabilities.DEFAULTS;

    private VfioUserClient(EventLoopGroup group, Channel channel) {
        this.group = group;
        this.channel = channel;
    }

    /** Connects to the server at {@code path}, with a large enough limit for any reply. */
    public static VfioUserClient connect(String path) throws IOException {
        EventLoopGroup group = ernic.vfiouser.server.VfioUserServer.newDeviceLoop("ernic-client");
        try {
            FdSocketChannel ch = FdSocketChannel.connect(path);
            VfioUserClient c = new VfioUserClient(group, ch);
            ch.pipeline().addLast(new MessageFramer(64 << 20), MessageEncoder.INSTANCE, c.new Handler());
            group.register(ch).sync();
            return c;
        } catch (IOException e) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            throw new IOException(e);
        }
    }

    public Channel channel() {
        return channel;
    }

    public boolean isConnected() {
        return channel.isActive();
    }

    /** Waits up to {@code millis} for the server to close the connection; true when it did. */
    public boolean awaitClosed(long millis) {
        return channel.closeFuture().awaitUninterruptibly(millis);
    }

    public Capabilities serverCapabilities() {
        return serverCapabilities;
    }

    public ByteBufAllocator alloc() {
        return channel.alloc();
    }

    // ---- raw messages --------------------------------------------------------------------------

    /** Sends a command; the future completes with the reply (release it), or never with NO_REPLY. */
    public CompletableFuture<VfioUserMessage> send(Command cmd, ByteBuf payload, boolean noReply, int... fds) {
        int id = nextId.getAndIncrement() & 0xffff;
        CompletableFuture<VfioUserMessage> f = new CompletableFuture<>();
        if (!noReply) {
            pending.put(id, f);
        }
        int flags = Header.TYPE_COMMAND | (noReply ? Header.FLAG_NO_REPLY : 0);
        channel.writeAndFlush(new VfioUserMessage(id, cmd.code, flags, 0, payload, fds)).addListener(w -> {
            if (!w.isSuccess()) {
                pending.remove(id);
                f.completeExceptionally(w.cause());
            }
        });
        return f;
    }

    /** Sends arbitrary bytes (for protocol tests); {@code fds} go with the first byte and stay the caller's. */
    public void sendRaw(ByteBuf bytes, int... fds) {
        channel.writeAndFlush(FdChunk.toSend(bytes, fds));
    }

    /** Sends a command and waits for its reply; an error reply becomes a {@link VfioUserException}. */
    public VfioUserMessage call(Command cmd, ByteBuf payload, int... fds) throws IOException {
        CompletableFuture<VfioUserMessage> f = send(cmd, payload, false, fds);
        VfioUserMessage r = await(f, cmd);
        if (r.isError()) {
            int errno = r.errno();
            r.release();
            throw new VfioUserException(cmd.name(), errno);
        }
        return r;
    }

    private <T> T await(CompletableFuture<T> f, Object what) throws IOException {
        try {
            return f.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted waiting for " + what);
        } catch (ExecutionException e) {
            throw new IOException(what + " failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new IOException("no reply to " + what + " within " + TIMEOUT_SECONDS + " s");
        }
    }

    private void callNoPayload(Command cmd, ByteBuf payload, int... fds) throws IOException {
        call(cmd, payload, fds).release();
    }

    // ---- the commands --------------------------------------------------------------------------

    /** VERSION with {@code json} as our capabilities; returns the server's. */
    public Capabilities negotiate(String json) throws IOException {
        VfioUserMessage r = call(Command.VERSION, new Version(0, 0, json).encode(alloc()));
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
        callNoPayload(Command.DMA_MAP, new DmaMap(DmaMap.SIZE, DmaMap.FLAG_READ | DmaMap.FLAG_WRITE, 0, r.iova(),
                r.size()).encode(alloc()), r.fd());
        ram.add(r);
    }

    /** DMA_MAP without an fd: the server must reach {@code r} by DMA_READ / DMA_WRITE. */
    public void mapWithoutFd(GuestRam r) throws IOException {
        callNoPayload(Command.DMA_MAP, new DmaMap(DmaMap.SIZE, DmaMap.FLAG_READ | DmaMap.FLAG_WRITE, 0, r.iova(),
                r.size()).encode(alloc()));
        ram.add(r);
    }

    public void dmaMap(DmaMap req, int... fds) throws IOException {
        callNoPayload(Command.DMA_MAP, req.encode(alloc()), fds);
    }

    public DmaUnmap dmaUnmap(long iova, long size, int flags) throws IOException {
        VfioUserMessage r = call(Command.DMA_UNMAP, new DmaUnmap(DmaUnmap.SIZE, flags, iova, size).encode(alloc()));
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
        VfioUserMessage r = call(Command.DEVICE_GET_INFO, new DeviceInfo(DeviceInfo.SIZE, 0, 0, 0).encode(alloc()));
        try {
            return DeviceInfo.decode(r.payload());
        } catch (ProtocolException e) {
            throw new IOException(e.getMessage());
        } finally {
            r.release();
        }
    }

    /** A region's info with its capabilities, asking again with more room when the server says so. */
    public RegionInfoReply regionInfo(int index) throws IOException {
        int argsz = RegionInfo.SIZE;
        for (int attempt = 0; attempt < 2; attempt++) {
            ByteBuf req = new RegionInfo(argsz, 0, index, 0, 0, 0, List.of()).encode(alloc());
            req.writeZero(argsz - RegionInfo.SIZE);
            VfioUserMessage r = call(Command.DEVICE_GET_REGION_INFO, req);
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
        VfioUserMessage r = call(Command.DEVICE_GET_IRQ_INFO, new IrqInfo(IrqInfo.SIZE, 0, type.index(), 0)
                .encode(alloc()));
        try {
            return IrqInfo.decode(r.payload());
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
        callNoPayload(Command.DEVICE_SET_IRQS, req.encode(alloc()), fds);
    }

    public byte[] regionRead(int region, long offset, int count) throws IOException {
        VfioUserMessage r = call(Command.REGION_READ, new RegionAccess(offset, region, count).encodeHead(alloc(), 0));
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
        callNoPayload(Command.REGION_WRITE, new RegionAccess(offset, region, data.length)
                .encodeHead(alloc(), data.length).writeBytes(data));
    }

    public void regionWriteLong(int region, long offset, int width, long value) throws IOException {
        regionWrite(region, offset, littleEndian(value, width));
    }

    /** A posted write (NO_REPLY), as QEMU sends most BAR writes. */
    public void regionWritePosted(int region, long offset, int width, long value) {
        byte[] data = littleEndian(value, width);
        send(Command.REGION_WRITE, new RegionAccess(offset, region, width).encodeHead(alloc(), width).writeBytes(data),
                true);
    }

    private static byte[] littleEndian(long value, int width) {
        byte[] b = new byte[width];
        for (int i = 0; i < width; i++) {
            b[i] = (byte) (value >>> (8 * i));
        }
        return b;
    }

    public void reset() throws IOException {
        callNoPayload(Command.DEVICE_RESET, null);
    }

    @Override
    public void close() {
        channel.close().awaitUninterruptibly();
        Future<?> f = group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        f.awaitUninterruptibly();
    }

    // ---- inbound -------------------------------------------------------------------------------

    private final class Handler extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            VfioUserMessage m = (VfioUserMessage) msg;
            if (m.isReply()) {
                CompletableFuture<VfioUserMessage> f = pending.remove(m.msgId());
                if (f == null) {
                    m.release();
                } else {
                    f.complete(m);
                }
                return;
            }
            try {
                ctx.writeAndFlush(serve(m));
            } finally {
                m.release();
            }
        }

        /** The server's DMA_READ / DMA_WRITE, served from the client's guest RAM. */
        private VfioUserMessage serve(VfioUserMessage m) {
            try {
                if (m.command() != Command.DMA_READ && m.command() != Command.DMA_WRITE) {
                    return VfioUserMessage.errorReply(m.msgId(), m.commandCode(), LibC.ENOSYS);
                }
                DmaAccess a = DmaAccess.decode(m.payload());
                MemorySegment mem = find(a.address(), a.count());
                if (mem == null) {
                    return VfioUserMessage.errorReply(m.msgId(), m.commandCode(), LibC.EFAULT);
                }
                if (m.command() == Command.DMA_READ) {
                    ByteBuf out = a.encodeHead(alloc(), (int) a.count());
                    out.writeBytes(mem.asByteBuffer());
                    return VfioUserMessage.reply(m, out);
                }
                ByteBuf p = m.payload();
                if (p.readableBytes() - DmaAccess.SIZE != a.count()) {
                    return VfioUserMessage.errorReply(m.msgId(), m.commandCode(), LibC.EINVAL);
                }
                ByteBuffer dst = mem.asByteBuffer();
                p.getBytes(p.readerIndex() + DmaAccess.SIZE, dst);
                return VfioUserMessage.reply(m, a.encodeHead(alloc(), 0));
            } catch (ProtocolException e) {
                return VfioUserMessage.errorReply(m.msgId(), m.commandCode(), e.errno());
            }
        }

        private MemorySegment find(long addr, long count) {
            for (GuestRam r : ram) {
                if (addr >= r.iova() && count <= r.size() && addr - r.iova() <= r.size() - count) {
                    return r.at(addr, count);
                }
            }
            return null;
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            IOException gone = new IOException("server closed the connection");
            pending.values().forEach(f -> f.completeExceptionally(gone));
            pending.clear();
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
