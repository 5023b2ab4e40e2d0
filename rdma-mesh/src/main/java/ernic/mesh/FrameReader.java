package ernic.mesh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.util.UncheckedBooleanSupplier;

import java.util.function.BooleanSupplier;

/**
 * Cuts a mesh connection's byte stream into frames ({@code u32 length}, stripped, then that many bytes) and passes
 * each on as one buffer. A frame that lies whole in what the socket gave is passed as a slice of it; a frame that
 * does not gets a buffer of its own length, allocated once, and once its body is missing at least
 * {@link #LEND_MIN} bytes the channel reads the rest straight into that buffer ({@link #recvAllocator()}). So a
 * large WRITE's payload is copied once, by the kernel, on its way in, instead of through a read buffer into a
 * cumulation that doubles as it grows (what Netty's {@code LengthFieldBasedFrameDecoder} costs: about twice the
 * payload in extra copies). One per connection, on its event loop.
 *
 * <p>Every buffer the socket reads into starts on a page boundary ({@link #pageAligned}). The kernel copies received
 * bytes out of its own buffers with {@code rep movsb}; on AMD Zen CPUs that copy runs about four times slower when
 * the destination lies 1 to 31 bytes past the source modulo 4 KiB. On loopback the received bytes start on a page,
 * and Netty's pooled memory starts 16 bytes past one (malloc's header in front of each 16 MiB chunk), so every read
 * landed there: that copy was 30% of both servers' CPU at 64 KiB WRITEs (docs/performance.md, section 3).
 */
final class FrameReader extends ChannelInboundHandlerAdapter {
    /** A body still missing this many bytes is read into its own buffer rather than through a read buffer. */
    static final int LEND_MIN = 16 * 1024;
    /**
     * The largest read buffer between frames (Netty's adaptive sizing, which grows it while reads fill it): a read
     * that holds several whole frames passes them on as slices, with no copy. With Netty's default of 64 KiB, every
     * 64 KiB WRITE's frame (a little longer) took two reads and a copy.
     */
    static final int MAX_READ = 1 << 20;

    /**
     * The longest frame before the connection's handshake is done (REGISTER, HELLO and their answers are a few
     * dozen bytes): a frame's buffer is allocated at its announced length, so a stranger must not make this node
     * allocate 16 MiB with four bytes.
     */
    static final int MAX_HANDSHAKE_FRAME = 4096;

    /** The page size the read buffers are aligned to (x86's, and the kernel's buffers'). */
    static final int PAGE = 4096;

    private final int maxFrameLength;
    private final BooleanSupplier open;
    /** Bytes of the length field read so far (it may be split between reads) and their value, unsigned. */
    private int lengthBytes;
    private long length;
    /** The frame being filled, allocated at its full length; null between frames. */
    private ByteBuf body;
    /** After a bad length: the connection is being closed and the rest of its bytes are dropped. */
    private boolean failed;

    /** Frames up to {@code maxFrameLength} bytes once {@code open} says the handshake is done. */
    FrameReader(int maxFrameLength, BooleanSupplier open) {
        this.maxFrameLength = maxFrameLength;
        this.open = open;
    }

    /** The channel's read buffers: a slice of the frame being filled when enough of it is missing, else the usual. */
    RecvByteBufAllocator recvAllocator() {
        return new RecvByteBufAllocator() {
            @Override
            public Handle newHandle() {
                return new Lender((ExtendedHandle) new AdaptiveRecvByteBufAllocator(64, 2048, MAX_READ).newHandle());
            }
        };
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        try {
            if (body != null && root(in) == root(body)) {
                // Read straight into the frame: its bytes are already where they belong.
                body.writerIndex(body.writerIndex() + in.readableBytes());
                if (!body.isWritable()) {
                    pass(ctx);
                }
                return;
            }
            while (in.isReadable() && !failed) {
                if (body == null) {
                    if (!readLength(in)) {
                        break;
                    }
                    int max = open.getAsBoolean() ? maxFrameLength : Math.min(maxFrameLength, MAX_HANDSHAKE_FRAME);
                    if (length > max) {
                        failed = true;
                        ctx.fireExceptionCaught(new TooLongFrameException("frame length " + length + " exceeds " + max
                                + (max < maxFrameLength ? " before the handshake" : "")));
                        break;
                    }
                    int len = (int) length;
                    if (in.readableBytes() >= len) {
                        ctx.fireChannelRead(in.readRetainedSlice(len));
                        continue;
                    }
                    body = pageAligned(ctx.alloc(), len);
                }
                body.writeBytes(in, Math.min(body.writableBytes(), in.readableBytes()));
                if (!body.isWritable()) {
                    pass(ctx);
                }
            }
        } finally {
            in.release();
        }
    }

    /**
     * An empty direct buffer of {@code capacity} bytes, no more, whose first byte is on a page boundary: a slice of a
     * pooled buffer a page longer. Where the allocator gives no memory address, a plain buffer.
     */
    static ByteBuf pageAligned(ByteBufAllocator alloc, int capacity) {
        ByteBuf whole = alloc.directBuffer(capacity + PAGE);
        if (!whole.hasMemoryAddress()) {
            whole.release();
            return alloc.directBuffer(capacity, capacity);
        }
        int skip = (int) (-whole.memoryAddress() & (PAGE - 1));
        ByteBuf aligned = whole.retainedSlice(skip, capacity).clear();
        whole.release(); // the slice holds it
        return aligned;
    }

    /** The buffer that owns {@code b}'s memory: slices of slices all unwrap to it. */
    private static ByteBuf root(ByteBuf b) {
        ByteBuf u = b.unwrap();
        return u == null ? b : u;
    }

    /** Reads the length field, whole or the part of it {@code in} has; true when it is complete. */
    private boolean readLength(ByteBuf in) {
        if (lengthBytes == 0 && in.readableBytes() >= Wire.LENGTH_BYTES) {
            length = in.readUnsignedInt();
        } else {
            if (lengthBytes == 0) {
                length = 0;
            }
            while (lengthBytes < Wire.LENGTH_BYTES && in.isReadable()) {
                length = length << 8 | in.readUnsignedByte();
                lengthBytes++;
            }
            if (lengthBytes < Wire.LENGTH_BYTES) {
                return false;
            }
            lengthBytes = 0;
        }
        return true;
    }

    private void pass(ChannelHandlerContext ctx) {
        ByteBuf frame = body;
        body = null;
        ctx.fireChannelRead(frame);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (body != null) {
            body.release();
            body = null;
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        handlerRemoved(ctx); // a frame cut off by the close is dropped
        ctx.fireChannelInactive();
    }

    /**
     * The channel's read-buffer handle: Netty's adaptive sizing, except that it lends the frame being filled and
     * aligns its own buffers to a page. Netty's {@code DelegatingHandle} passes the rest on; the epoll transport
     * also asks for the extended form.
     */
    private final class Lender extends RecvByteBufAllocator.DelegatingHandle
            implements RecvByteBufAllocator.ExtendedHandle {
        Lender(RecvByteBufAllocator.ExtendedHandle usual) {
            super(usual);
        }

        @Override
        public ByteBuf allocate(ByteBufAllocator alloc) {
            if (body != null && body.writableBytes() >= LEND_MIN) {
                // A slice over the missing bytes, empty: the read fills it and can never run past the frame.
                return body.retainedSlice(body.writerIndex(), body.writableBytes()).clear();
            }
            return pageAligned(alloc, guess());
        }

        @Override
        public boolean continueReading(UncheckedBooleanSupplier maybeMoreDataSupplier) {
            return ((RecvByteBufAllocator.ExtendedHandle) delegate()).continueReading(maybeMoreDataSupplier);
        }
    }
}
