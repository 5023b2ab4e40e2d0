package ernic.vfiouser.server;

import ernic.counters.Counters;
import ernic.vfiouser.pci.PciConfigSpace;
import ernic.vfiouser.sys.LibC;
import ernic.vfiouser.sys.NativeMemory;
import ernic.vfiouser.transport.FdSocketChannel;
import ernic.vfiouser.wire.Command;
import ernic.vfiouser.wire.Header;
import ernic.vfiouser.wire.MessageFramer;
import ernic.vfiouser.wire.Messages.DeviceInfo;
import ernic.vfiouser.wire.Messages.DmaAccess;
import ernic.vfiouser.wire.Messages.DmaMap;
import ernic.vfiouser.wire.Messages.DmaUnmap;
import ernic.vfiouser.wire.Messages.IrqInfo;
import ernic.vfiouser.wire.Messages.RegionAccess;
import ernic.vfiouser.wire.Messages.RegionInfo;
import ernic.vfiouser.wire.Messages.RegionIoFds;
import ernic.vfiouser.wire.Messages.SetIrqs;
import ernic.vfiouser.wire.Messages.Version;
import ernic.vfiouser.wire.Messages.WriteEntry;
import ernic.vfiouser.wire.Messages.WriteMulti;
import ernic.vfiouser.wire.ProtocolException;
import ernic.vfiouser.wire.VfioUserMessage;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import static ernic.common.Endian.LE;

/**
 * One client connection: answers every vfio-user command for {@code device}, owns the client's DMA
 * mappings and interrupt eventfds, and frees them all when the client goes. Runs on the device
 * thread. Replies are flushed once per read batch; a register access's reply goes to the socket at
 * once when nothing is queued before it (the doorbell path: no message objects, one sendmsg).
 */
public final class Connection extends ChannelInboundHandlerAdapter implements DeviceContext, MessageFramer.Posted {
    private static final Logger LOG = LoggerFactory.getLogger(Connection.class);

    /** VFIO PCI region indices: BAR0-5 are 0-5. */
    public static final int ROM_REGION = 6, CONFIG_REGION = 7, VGA_REGION = 8, NUM_REGIONS = 9;

    private final VfioUserDevice device;
    private final VfioUserServer.Options options;
    private final Counters<VfioCounter> counters;
    /** Told the JSON of the client's VERSION. */
    private final Consumer<String> versionSeen;
    private final Refusals refusals;
    private final Capabilities ours;
    private final DmaSpace dma;
    private final IrqTable irqs;
    private final Region[] bars = new Region[6];
    private final Arena arena = Arena.ofShared();
    private final MemorySegment scratch;
    private final ByteBuffer scratchView;
    private final MemorySegment[] scratchSlices = new MemorySegment[65];
    private static final int REPLY_BUFFER_SIZE = 4096;
    /** Replies to register accesses, sent from here when nothing is queued before them. */
    private final MemorySegment replyBuffer = arena.allocate(REPLY_BUFFER_SIZE, 64);
    /** The socket, for {@link FdSocketChannel#writeNow}; null under a test channel. */
    private FdSocketChannel socket;
    private final Map<Integer, CompletableFuture<VfioUserMessage>> pendingRequests = new HashMap<>();
    private ChannelHandlerContext ctx;
    private Capabilities peer = Capabilities.DEFAULTS;
    private boolean negotiated;
    private boolean attached;
    private int nextMsgId;

    Connection(VfioUserDevice device, VfioUserServer.Options options, Counters<VfioCounter> counters,
            Refusals refusals, Consumer<String> versionSeen) {
        this.device = device;
        this.options = options;
        this.counters = counters;
        this.versionSeen = versionSeen;
        this.refusals = refusals;
        this.ours = new Capabilities(options.maxMsgFds(), options.maxDataXferSize(), DmaSpace.PAGE_SIZE,
                options.maxDmaMaps(), true);
        this.dma = new DmaSpace(options.maxDmaMaps());
        this.irqs = new IrqTable(device);
        for (Region r : device.regions()) {
            bars[r.index()] = r;
        }
        this.scratch = arena.allocate(options.maxDataXferSize(), 64);
        this.scratchView = scratch.asByteBuffer();
        for (int i = 1; i < scratchSlices.length; i++) {
            scratchSlices[i] = scratch.asSlice(0, Math.min(i, scratch.byteSize()));
        }
    }

    /** The first {@code count} bytes of the scratch buffer; made once for the small accesses of registers. */
    private MemorySegment scratch(int count) {
        return count < scratchSlices.length ? scratchSlices[count] : scratch.asSlice(0, count);
    }

    /** Copies {@code count} bytes of {@code src} at {@code index} to the scratch buffer. */
    private void toScratch(ByteBuf src, int index, int count) {
        NativeMemory.copy(src, index, scratch, scratchView, count);
    }

    /**
     * The reply to a REGION_READ or REGION_WRITE as one buffer (header, head, then {@code count} bytes
     * of the scratch buffer), written straight to the socket: the hot path of register accesses
     * allocates no message, header or composite buffer, and no promise.
     */
    private void replyRegionAccess(VfioUserMessage m, long offset, int region, int headCount, int count) {
        if (m.noReply()) {
            return;
        }
        int size = Header.SIZE + RegionAccess.SIZE + count;
        if (socket != null && size <= REPLY_BUFFER_SIZE) {
            // Nothing queued before it: straight from a native buffer to the socket.
            MemorySegment r = replyBuffer;
            r.set(LE.u16(), Header.OFF_MSG_ID, (short) m.msgId());
            r.set(LE.u16(), Header.OFF_COMMAND, (short) m.commandCode());
            LE.put32(r, Header.OFF_SIZE, size);
            LE.put32(r, Header.OFF_FLAGS, Header.TYPE_REPLY);
            LE.put32(r, Header.OFF_ERRNO, 0);
            LE.put64(r, Header.SIZE, offset);
            LE.put32(r, Header.SIZE + 8, region);
            LE.put32(r, Header.SIZE + 12, headCount);
            if (count > 0) {
                MemorySegment.copy(scratch, 0, r, Header.SIZE + RegionAccess.SIZE, count);
            }
            if (socket.writeNow(r, size)) {
                return;
            }
        }
        ByteBuf out = ctx.alloc().buffer(size);
        out.writeShortLE(m.msgId()).writeShortLE(m.commandCode()).writeIntLE(size).writeIntLE(Header.TYPE_REPLY)
                .writeIntLE(0);
        out.writeLongLE(offset).writeIntLE(region).writeIntLE(headCount);
        if (count > 0) {
            NativeMemory.append(scratch, scratchView, count, out);
        }
        ctx.write(out, ctx.voidPromise());
    }

    // ---- DeviceContext -------------------------------------------------------------------------

    @Override
    public GuestMemory memory() {
        return dma;
    }

    @Override
    public Interrupts interrupts() {
        return irqs;
    }

    @Override
    public EventLoop eventLoop() {
        return ctx.channel().eventLoop();
    }

    public DmaSpace dmaSpace() {
        return dma;
    }

    public IrqTable irqTable() {
        return irqs;
    }

    public Capabilities peerCapabilities() {
        return peer;
    }

    // ---- Netty ---------------------------------------------------------------------------------

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.socket = ctx.channel() instanceof FdSocketChannel s ? s : null;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof VfioUserMessage m)) {
            ctx.fireChannelRead(msg);
            return;
        }
        try {
            handle(m);
        } catch (ProtocolException e) {
            refuse(m, e);
        } catch (RuntimeException e) {
            refuse(m, deviceError(m.command(), e));
        } finally {
            m.release();
        }
    }

    /**
     * The doorbell path: a posted REGION_WRITE of up to 8 bytes, handled where it lies in the read, with no
     * message object and no copy of its payload. Whatever is not that, or would be refused, returns false and goes
     * as a message through {@link #handle}, which refuses it with its error, count and log line.
     */
    @Override
    public boolean posted(int command, int flags, ByteBuf buf, int index, int length) {
        if (command != Command.REGION_WRITE.code || flags != Header.FLAG_NO_REPLY || !negotiated
                || length < RegionAccess.SIZE || length > RegionAccess.SIZE + 8) {
            return false;
        }
        long offset = buf.getLongLE(index);
        int region = buf.getIntLE(index + 8);
        int count = buf.getIntLE(index + 12);
        if (count != length - RegionAccess.SIZE || accessRefusal(region, offset, count, true) != null) {
            return false;
        }
        for (int k = 0; k < count; k++) {
            scratch.set(ValueLayout.JAVA_BYTE, k, buf.getByte(index + RegionAccess.SIZE + k));
        }
        try {
            write(region, offset, scratch(count));
        } catch (RuntimeException e) {
            ProtocolException p = deviceError(Command.REGION_WRITE, e);
            refusals.refuse(refusalCause("REGION_WRITE", p), p.getMessage()); // posted: nothing to answer
        }
        return true;
    }

    /** A device bug must not take the server down: it is counted and logged, and the request gets EIO. */
    private ProtocolException deviceError(Command cmd, RuntimeException e) {
        refusals.refuse("device error in " + cmd, e.toString());
        LOG.debug("device error", e);
        return new ProtocolException(LibC.EIO, "device error: " + e);
    }

    private static String refusalCause(String cmd, ProtocolException e) {
        return cmd + (e.fatal() ? " (fatal)" : "") + " errno " + e.errno();
    }

    private void refuse(VfioUserMessage m, ProtocolException e) {
        // One cause for every unknown number: a client must not grow the map (or the log) by trying them all.
        String cmd = m.command() == null ? "unknown command" : m.command().name();
        refusals.refuse(refusalCause(cmd, e), e.getMessage());
        VfioUserMessage error = null;
        if (!m.noReply() && !m.isReply()) {
            counters.inc(VfioCounter.ERROR_REPLIES);
            error = VfioUserMessage.errorReply(m.msgId(), m.commandCode(), e.errno());
        }
        if (!e.fatal()) {
            if (error != null) {
                ctx.write(error);
            }
            return;
        }
        counters.inc(VfioCounter.PROTOCOL_CLOSES);
        // The refusal above logged its cause once: a client that reconnects and repeats it logs no line each time.
        LOG.debug("closing vfio-user connection: {}", e.getMessage());
        if (error != null) {
            ctx.writeAndFlush(error).addListener(ChannelFutureListener.CLOSE);
        } else {
            ctx.flush();
            ctx.close();
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        ctx.flush();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof ProtocolException p) {
            refusals.refuse("framing", p.getMessage());
            counters.inc(VfioCounter.PROTOCOL_CLOSES);
        } else {
            // Once per kind of failure: a client that connects and fails in a loop must not fill the log.
            refusals.refuse("connection failed: " + cause.getClass().getSimpleName(), cause.toString());
        }
        ctx.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        try {
            if (attached) {
                device.detach();
            }
            device.configSpace().reset();
        } catch (RuntimeException e) {
            LOG.warn("device reset on disconnect failed", e);
        } finally {
            dma.unmapAll();
            irqs.closeAll();
            ProtocolException gone = new ProtocolException(LibC.ENOTCONN, "client disconnected");
            pendingRequests.values().forEach(f -> f.completeExceptionally(gone));
            pendingRequests.clear();
            arena.close();
            LOG.info("vfio-user client disconnected; device back to power-on state");
            ctx.fireChannelInactive();
        }
    }

    // ---- dispatch ------------------------------------------------------------------------------

    private void handle(VfioUserMessage m) throws ProtocolException {
        if (m.isReply()) {
            CompletableFuture<VfioUserMessage> f = pendingRequests.remove(m.msgId());
            if (f == null) {
                throw new ProtocolException(LibC.EINVAL, "a reply (msg id " + m.msgId()
                        + ") to nothing the server asked", true);
            }
            f.complete(m.retain());
            return;
        }
        if (m.type() != 0) {
            throw new ProtocolException(LibC.EINVAL, "message type " + m.type(), true);
        }
        Command cmd = m.command();
        if (cmd == null) {
            throw new ProtocolException(LibC.ENOSYS, "unknown command " + m.commandCode());
        }
        if (!negotiated && cmd != Command.VERSION) {
            throw new ProtocolException(LibC.EINVAL, cmd + " before VERSION", true);
        }
        int fdLimit = cmd.maxFds(false, options.maxMsgFds());
        if (m.fds().length > fdLimit) {
            throw new ProtocolException(LibC.EINVAL, cmd + " with " + m.fds().length + " fds (at most " + fdLimit + ")");
        }
        ByteBuf p = m.payload();
        switch (cmd) {
            case VERSION -> version(m, p);
            case DMA_MAP -> dmaMap(m, p);
            case DMA_UNMAP -> dmaUnmap(m, p);
            case DEVICE_GET_INFO -> deviceInfo(m, p);
            case DEVICE_GET_REGION_INFO -> regionInfo(m, p);
            case DEVICE_GET_REGION_IO_FDS -> regionIoFds(m, p);
            case DEVICE_GET_IRQ_INFO -> irqInfo(m, p);
            case DEVICE_SET_IRQS -> setIrqs(m, p);
            case REGION_READ -> regionRead(m, p);
            case REGION_WRITE -> regionWrite(m, p);
            case REGION_WRITE_MULTI -> writeMulti(m, p);
            case DEVICE_RESET -> reset(m);
            case DMA_READ, DMA_WRITE -> throw new ProtocolException(LibC.EINVAL, cmd + " is a server-to-client command");
            case DEVICE_FEATURE -> throw new ProtocolException(LibC.ENOTSUP, "no device features (no migration, no dirty logging)");
            case MIG_DATA_READ, MIG_DATA_WRITE -> throw new ProtocolException(LibC.ENOTSUP, "no migration support");
        }
    }

    private void reply(VfioUserMessage request, ByteBuf payload, int... fds) {
        if (request.noReply()) {
            if (payload != null) {
                payload.release();
            }
            return;
        }
        ctx.write(VfioUserMessage.reply(request, payload, fds));
    }

    private void version(VfioUserMessage m, ByteBuf p) throws ProtocolException {
        if (negotiated) {
            throw new ProtocolException(LibC.EINVAL, "a second VERSION", true);
        }
        Version v;
        Capabilities caps;
        try {
            v = Version.decode(p);
            if (v.major() != 0) {
                throw new ProtocolException(LibC.ENOTSUP, "VERSION major " + v.major() + " (this server speaks 0)");
            }
            caps = Capabilities.parse(v.json());
        } catch (ProtocolException e) {
            throw new ProtocolException(e.errno(), e.getMessage(), true);
        }
        versionSeen.accept(v.json());
        counters.inc(VfioCounter.VERSIONS_NEGOTIATED);
        peer = caps;
        negotiated = true;
        reply(m, new Version(0, 0, ours.toJson()).encode(ctx.alloc()));
        LOG.info("vfio-user client negotiated version {}.{}: {}", v.major(), v.minor(), v.json());
        attached = true;
        device.attach(this);
    }

    private void dmaMap(VfioUserMessage m, ByteBuf p) throws ProtocolException {
        DmaMap req = DmaMap.decode(p);
        int[] fds = m.takeFds();
        // QEMU maps the RAM it cannot share (ROMs, or all of it without memory-backend-memfd,share=on)
        // without an fd: such a mapping is reachable only by DMA_READ / DMA_WRITE messages, and a device
        // that needs direct access sees it as unmapped.
        int fd = fds.length == 1 ? fds[0] : -1;
        LOG.debug("DMA_MAP {}+{} offset {} flags {} {}", Long.toHexString(req.addr()), Long.toHexString(req.size()),
                Long.toHexString(req.offset()), req.flags(), fd >= 0 ? "fd" : "no fd");
        dma.map(req.addr(), req.size(), req.offset(), req.flags(), fd);
        counters.inc(fd >= 0 ? VfioCounter.DMA_MAPS_WITH_FD : VfioCounter.DMA_MAPS_WITHOUT_FD);
        reply(m, null);
    }

    private void dmaUnmap(VfioUserMessage m, ByteBuf p) throws ProtocolException {
        DmaUnmap req = DmaUnmap.decode(p);
        LOG.debug("DMA_UNMAP {}+{} flags {}", Long.toHexString(req.addr()), Long.toHexString(req.size()), req.flags());
        if ((req.flags() & DmaUnmap.FLAG_ALL) != 0) {
            if (req.flags() != DmaUnmap.FLAG_ALL || req.addr() != 0 || req.size() != 0) {
                throw new ProtocolException(LibC.EINVAL, "DMA_UNMAP all with an address, size or other flags");
            }
            dma.unmapAll();
        } else if (req.flags() != 0) {
            throw new ProtocolException(LibC.EINVAL, "DMA_UNMAP flags " + req.flags() + " (no dirty bitmaps)");
        } else {
            dma.unmap(req.addr(), req.size());
        }
        counters.inc(VfioCounter.DMA_UNMAPS);
        reply(m, new DmaUnmap(DmaUnmap.SIZE, req.flags(), req.addr(), req.size()).encode(ctx.alloc()));
    }

    private void deviceInfo(VfioUserMessage m, ByteBuf p) throws ProtocolException {
        DeviceInfo req = DeviceInfo.decode(p);
        if (req.argsz() < DeviceInfo.SIZE) {
            throw new ProtocolException(LibC.EINVAL, "DEVICE_GET_INFO argsz " + req.argsz());
        }
        reply(m, new DeviceInfo(DeviceInfo.SIZE, DeviceInfo.FLAG_RESET | DeviceInfo.FLAG_PCI, NUM_REGIONS,
                IrqType.values().length).encode(ctx.alloc()));
    }

    private void regionInfo(VfioUserMessage m, ByteBuf p) throws ProtocolException {
        RegionInfo req = RegionInfo.decode(p);
        if (req.argsz() < RegionInfo.SIZE) {
            throw new ProtocolException(LibC.EINVAL, "DEVICE_GET_REGION_INFO argsz " + req.argsz());
        }
        int index = req.index();
        if (index < 0 || index >= NUM_REGIONS) {
            throw new ProtocolException(LibC.EINVAL, "DEVICE_GET_REGION_INFO of region " + index);
        }
        if (index == CONFIG_REGION) {
            reply(m, new RegionInfo(RegionInfo.SIZE, RegionInfo.FLAG_READ | RegionInfo.FLAG_WRITE, index, 0,
                    device.configSpace().size(), 0, List.of()).encode(ctx.alloc()));
            return;
        }
        Region r = index < 6 ? bars[index] : null;
        if (r == null) {
            reply(m, new RegionInfo(RegionInfo.SIZE, 0, index, 0, 0, 0, List.of()).encode(ctx.alloc()));
            return;
        }
        int flags = (r.readable() ? RegionInfo.FLAG_READ : 0) | (r.writable() ? RegionInfo.FLAG_WRITE : 0);
        if (r.mmapFd() < 0) {
            reply(m, new RegionInfo(RegionInfo.SIZE, flags, index, 0, r.size(), 0, List.of()).encode(ctx.alloc()));
            return;
        }
        flags |= RegionInfo.FLAG_MMAP;
        RegionInfo full = new RegionInfo(RegionInfo.SIZE, flags | (r.sparseAreas().isEmpty() ? 0 : RegionInfo.FLAG_CAPS),
                index, r.sparseAreas().isEmpty() ? 0 : RegionInfo.SIZE, r.size(), r.mmapOffset(), r.sparseAreas());
        int needed = RegionInfo.SIZE + full.capsSize();
        if (req.argsz() < needed) {
            // VFIO convention: say how much room the capabilities need and the client asks again. No CAPS
            // flag without a capability: QEMU refuses a cap_offset outside the reply.
            reply(m, new RegionInfo(needed, full.flags() & ~RegionInfo.FLAG_CAPS, index, 0, r.size(), r.mmapOffset(),
                    List.of()).encode(ctx.alloc()), r.mmapFd());
            return;
        }
        reply(m, new RegionInfo(needed, full.flags(), full.index(), full.capOffset(), full.size(), full.offset(),
                full.sparseAreas()).encode(ctx.alloc()), r.mmapFd());
    }

    private void regionIoFds(VfioUserMessage m, ByteBuf p) throws ProtocolException {
        RegionIoFds req = RegionIoFds.decode(p);
        if (req.index() < 0 || req.index() >= NUM_REGIONS) {
            throw new ProtocolException(LibC.EINVAL, "DEVICE_GET_REGION_IO_FDS of region " + req.index());
        }
        // No ioeventfds: every access comes as a message.
        reply(m, new RegionIoFds(RegionIoFds.SIZE, 0, req.index(), 0).encode(ctx.alloc()));
    }

    private void irqInfo(VfioUserMessage m, ByteBuf p) throws ProtocolException {
        IrqInfo req = IrqInfo.decode(p);
        IrqType t = IrqType.of(req.index());
        if (req.argsz() < IrqInfo.SIZE || t == null) {
            throw new ProtocolException(LibC.EINVAL, "DEVICE_GET_IRQ_INFO index " + req.index() + " argsz " + req.argsz());
        }
        int flags = switch (t) {
            case INTX -> IrqInfo.FLAG_EVENTFD | IrqInfo.FLAG_MASKABLE | IrqInfo.FLAG_AUTOMASKED;
            case MSI -> IrqInfo.FLAG_EVENTFD | IrqInfo.FLAG_NORESIZE;
            case MSIX -> IrqInfo.FLAG_EVENTFD | IrqInfo.FLAG_MASKABLE | IrqInfo.FLAG_NORESIZE;
            case ERR, REQ -> IrqInfo.FLAG_EVENTFD;
        };
        reply(m, new IrqInfo(IrqInfo.SIZE, flags, t.index(), irqs.count(t)).encode(ctx.alloc()));
    }

    private void setIrqs(VfioUserMessage m, ByteBuf p) throws ProtocolException {
        SetIrqs req = SetIrqs.decode(p);
        int[] fds = m.takeFds();
        irqs.set(req, fds);
        counters.add(VfioCounter.IRQ_EVENTFDS, fds.length);
        reply(m, null);
    }

    /** Checks a region access; EINVAL for anything out of range. */
    private void checkAccess(RegionAccess a, boolean write) throws ProtocolException {
        checkAccess(a.region(), a.offset(), a.count(), write);
    }

    private void checkAccess(int index, long offset, int rawCount, boolean write) throws ProtocolException {
        String refusal = accessRefusal(index, offset, rawCount, write);
        if (refusal != null) {
            throw new ProtocolException(LibC.EINVAL, refusal);
        }
    }

    /** Why a region access is refused, or null when it is in range (the posted path asks without throwing). */
    private String accessRefusal(int index, long offset, int rawCount, boolean write) {
        long size;
        boolean allowed;
        if (index == CONFIG_REGION) {
            size = device.configSpace().size();
            allowed = true;
        } else if (index >= 0 && index < 6 && bars[index] != null) {
            size = bars[index].size();
            allowed = write ? bars[index].writable() : bars[index].readable();
        } else {
            return "access to region " + index + ", which does not exist";
        }
        if (!allowed) {
            return (write ? "write to" : "read of") + " region " + index;
        }
        long count = Integer.toUnsignedLong(rawCount);
        if (count == 0 || count > options.maxDataXferSize()) {
            return "access of " + count + " bytes";
        }
        if (offset < 0 || offset > size || count > size - offset) {
            return "access to region " + index + " at " + offset + "+" + count + " past its end (" + size + ")";
        }
        return null;
    }

    private void regionRead(VfioUserMessage m, ByteBuf p) throws ProtocolException {
        RegionAccess a = RegionAccess.decode(p);
        if (p.readableBytes() != RegionAccess.SIZE) {
            throw new ProtocolException(LibC.EINVAL, "REGION_READ with " + (p.readableBytes() - RegionAccess.SIZE) + " bytes of data");
        }
        checkAccess(a, false);
        int count = a.count();
        MemorySegment dst = scratch(count);
        if (a.region() == CONFIG_REGION) {
            counters.inc(VfioCounter.CONFIG_READS);
            device.configSpace().read((int) a.offset(), dst);
        } else {
            counters.inc(VfioCounter.REGION_READS);
            bars[a.region()].handler().read(a.offset(), dst);
            overlayPba(a, dst);
        }
        replyRegionAccess(m, a.offset(), a.region(), a.count(), count);
    }

    /** The MSI-X pending-bit array is the server's: QEMU forwards its reads here. */
    private void overlayPba(RegionAccess a, MemorySegment dst) {
        PciConfigSpace.Msix msix = device.configSpace().msix();
        if (msix == null || msix.pbaBar() != a.region()) {
            return;
        }
        long pbaBytes = (msix.tableSize() + 63) / 64 * 8L;
        for (int i = 0; i < dst.byteSize(); i++) {
            long off = a.offset() + i - msix.pbaOffset();
            if (off >= 0 && off < pbaBytes) {
                int b = 0;
                for (int bit = 0; bit < 8; bit++) {
                    if (irqs.pending(IrqType.MSIX, (int) (off * 8 + bit))) {
                        b |= 1 << bit;
                    }
                }
                dst.set(ValueLayout.JAVA_BYTE, i, (byte) b);
            }
        }
    }

    private void regionWrite(VfioUserMessage m, ByteBuf p) throws ProtocolException {
        if (p.readableBytes() < RegionAccess.SIZE) {
            RegionAccess.decode(p); // throws its EINVAL
        }
        // The head's fields read in place: the doorbell path makes no record.
        int i = p.readerIndex();
        long offset = p.getLongLE(i);
        int region = p.getIntLE(i + 8);
        int count = p.getIntLE(i + 12);
        if (p.readableBytes() - RegionAccess.SIZE != Integer.toUnsignedLong(count)) {
            throw new ProtocolException(LibC.EINVAL, "REGION_WRITE count " + Integer.toUnsignedLong(count) + " with "
                    + (p.readableBytes() - RegionAccess.SIZE) + " bytes of data");
        }
        checkAccess(region, offset, count, true);
        toScratch(p, i + RegionAccess.SIZE, count);
        write(region, offset, scratch(count));
        replyRegionAccess(m, offset, region, count, 0);
    }

    private void write(int region, long offset, MemorySegment src) {
        if (region == CONFIG_REGION) {
            counters.inc(VfioCounter.CONFIG_WRITES);
            device.configSpace().write((int) offset, src);
        } else {
            counters.inc(VfioCounter.REGION_WRITES);
            bars[region].handler().write(offset, src);
        }
    }

    private void writeMulti(VfioUserMessage m, ByteBuf p) throws ProtocolException {
        WriteMulti w = WriteMulti.decode(p);
        for (WriteEntry e : w.writes()) {
            checkAccess(new RegionAccess(e.offset(), e.region(), e.count()), true);
        }
        for (WriteEntry e : w.writes()) {
            scratch.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, e.data());
            write(e.region(), e.offset(), scratch(e.count()));
        }
        reply(m, null);
    }

    private void reset(VfioUserMessage m) {
        counters.inc(VfioCounter.RESETS);
        device.reset();
        device.configSpace().reset();
        irqs.resetState();
        reply(m, null);
        LOG.info("device reset by client");
    }

    // ---- server-to-client DMA (mappings without an fd) -------------------------------------------

    /** Asks the client for guest memory by DMA_READ; the future gets the bytes (release them). */
    public CompletableFuture<ByteBuf> dmaRead(long address, int count) {
        if (count <= 0 || count > peer.maxDataXferSize()) {
            return CompletableFuture.failedFuture(new ProtocolException(LibC.EINVAL, "DMA_READ of " + count + " bytes"));
        }
        return request(Command.DMA_READ, new DmaAccess(address, count).encodeHead(ctx.alloc(), 0))
                .thenApply(r -> {
                    try {
                        ByteBuf data = r.payload();
                        if (data.readableBytes() != DmaAccess.SIZE + count) {
                            throw new IllegalStateException("DMA_READ reply of " + data.readableBytes() + " bytes");
                        }
                        return data.retainedSlice(data.readerIndex() + DmaAccess.SIZE, count);
                    } finally {
                        r.release();
                    }
                });
    }

    /** Writes guest memory through the client by DMA_WRITE. Takes ownership of {@code data}. */
    public CompletableFuture<Void> dmaWrite(long address, ByteBuf data) {
        int count = data.readableBytes();
        if (count <= 0 || count > peer.maxDataXferSize()) {
            data.release();
            return CompletableFuture.failedFuture(new ProtocolException(LibC.EINVAL, "DMA_WRITE of " + count + " bytes"));
        }
        ByteBuf payload = new DmaAccess(address, count).encodeHead(ctx.alloc(), count).writeBytes(data);
        data.release();
        dma.markDirty(address, count);
        return request(Command.DMA_WRITE, payload).thenAccept(VfioUserMessage::release);
    }

    private CompletableFuture<VfioUserMessage> request(Command cmd, ByteBuf payload) {
        CompletableFuture<VfioUserMessage> f = new CompletableFuture<>();
        int id = nextMsgId++ & 0xffff;
        pendingRequests.put(id, f);
        ctx.writeAndFlush(VfioUserMessage.command(id, cmd, payload));
        return f.thenApply(r -> {
            if (r.isError()) {
                int e = r.errno();
                r.release();
                throw new IllegalStateException(cmd + " failed: " + LibC.strerror(e));
            }
            return r;
        });
    }
}
