package ernic.vfiouser.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * The server's inbound handler: cuts the channel's reads ({@link ByteBuf}s, or {@link FdChunk}s when fds came
 * with them) into {@link VfioUserMessage}s, each with the file descriptors {@link MessageStream} gives it. A read
 * is cut where it lies; only the part of a message it leaves for the next read is kept. A posted message without
 * fds is first offered, where it lies, to {@link Posted} (the doorbell path, which allocates nothing). A size that
 * cannot be resynchronised is passed on as a fatal {@link ProtocolException} and closes the connection.
 */
public final class MessageFramer extends ChannelInboundHandlerAdapter implements MessageStream.Buffered {
    /** Takes posted messages without fds where they lie, before they become {@link VfioUserMessage}s. */
    public interface Posted {
        /**
         * A message with {@link Header#FLAG_NO_REPLY} and no fds: its {@code command} and {@code flags}, and its
         * payload at {@code [index, index + length)} of {@code buf}, which is valid only during the call. True when
         * it was handled; false passes it on as a message (the way every refusal goes, with its error and count).
         */
        boolean posted(int command, int flags, ByteBuf buf, int index, int length);
    }

    private final MessageStream stream;
    private final Posted posted;
    /** The start of a message a read left unfinished, and the reads after it; empty between messages. */
    private CompositeByteBuf cumulation;
    /** What is being cut: the read itself, or the cumulation when one was pending. */
    private ByteBuf in;
    private ChannelHandlerContext ctx;

    /** @param maxMessageSize the largest whole message (header included) accepted */
    public MessageFramer(int maxMessageSize) {
        this(maxMessageSize, null);
    }

    /** The same, offering posted messages to {@code posted} first (null: none). */
    public MessageFramer(int maxMessageSize, Posted posted) {
        this.stream = new MessageStream(maxMessageSize);
        this.posted = posted;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        cumulation = ctx.alloc().compositeBuffer(Integer.MAX_VALUE);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf data;
        int[] fds = null;
        if (msg instanceof FdChunk chunk) {
            try {
                data = chunk.data().retain();
                fds = chunk.takeFds();
            } finally {
                chunk.release();
            }
        } else if (msg instanceof ByteBuf b) {
            data = b;
        } else {
            ctx.fireChannelRead(msg);
            return;
        }
        stream.received(data.readableBytes(), fds);
        if (cumulation == null || !ctx.channel().isOpen()) {
            data.release();
            if (cumulation == null) {
                stream.close(); // fds that came after the end
            }
            return;
        }
        boolean pending = cumulation.isReadable();
        if (pending) {
            cumulation.addComponent(true, data);
        }
        in = pending ? cumulation : data;
        try {
            stream.cut(this);
        } catch (ProtocolException e) {
            // The stream cannot be resynchronised: tell the handlers why, then close.
            ctx.fireExceptionCaught(e);
            ctx.close();
        } finally {
            in = null;
            if (cumulation == null) {
                if (!pending) {
                    data.release(); // the connection went while this read was cut
                }
            } else if (pending) {
                cumulation.discardReadComponents();
            } else if (data.isReadable() && ctx.channel().isOpen()) {
                cumulation.addComponent(true, data); // the start of a message the next read finishes
            } else {
                data.release();
            }
        }
    }

    @Override
    public long sizeField() {
        return in.getUnsignedIntLE(in.readerIndex() + Header.OFF_SIZE);
    }

    @Override
    public boolean message(int size, int[] fds) {
        ByteBuf b = in;
        int start = b.readerIndex();
        int command = b.getUnsignedShortLE(start + Header.OFF_COMMAND);
        int flags = b.getIntLE(start + Header.OFF_FLAGS);
        if (posted != null && fds.length == 0 && (flags & Header.FLAG_NO_REPLY) != 0
                && posted.posted(command, flags, b, start + Header.SIZE, size - Header.SIZE)) {
            b.skipBytes(size);
            return ctx.channel().isOpen() && cumulation != null;
        }
        int msgId = b.getUnsignedShortLE(start + Header.OFF_MSG_ID);
        int errno = b.getIntLE(start + Header.OFF_ERRNO);
        b.skipBytes(Header.SIZE);
        // A copy, not a slice: the read buffer is used again, and the cumulation drops what was read.
        int length = size - Header.SIZE;
        ByteBuf payload = ctx.alloc().buffer(length);
        b.readBytes(payload, length);
        ctx.fireChannelRead(new VfioUserMessage(msgId, command, flags, errno, payload, fds));
        return ctx.channel().isOpen() && cumulation != null;
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        releaseAll();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        releaseAll();
    }

    private void releaseAll() {
        if (cumulation != null) {
            cumulation.release();
            cumulation = null;
        }
        stream.close();
    }
}
