package ernic.vfiouser.wire;

import ernic.vfiouser.sys.LibC;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.AbstractReferenceCounted;
import io.netty.util.ReferenceCounted;

/**
 * One vfio-user message: header fields, payload (the bytes after the header) and the file
 * descriptors that arrived with its first byte. The message owns its payload and its fds: releasing
 * it closes every fd nobody {@linkplain #takeFds() took}.
 */
public final class VfioUserMessage extends AbstractReferenceCounted {
    private final int msgId;
    private final int command;
    private final int flags;
    private final int errno;
    private final ByteBuf payload;
    private int[] fds;

    public VfioUserMessage(int msgId, int command, int flags, int errno, ByteBuf payload, int[] fds) {
        this.msgId = msgId & 0xffff;
        this.command = command & 0xffff;
        this.flags = flags;
        this.errno = errno;
        this.payload = payload == null ? Unpooled.EMPTY_BUFFER : payload;
        this.fds = fds == null ? NO_FDS : fds;
    }

    public static final int[] NO_FDS = new int[0];

    public static VfioUserMessage command(int msgId, Command command, ByteBuf payload, int... fds) {
        return new VfioUserMessage(msgId, command.code, Header.TYPE_COMMAND, 0, payload, fds);
    }

    public static VfioUserMessage reply(VfioUserMessage request, ByteBuf payload, int... fds) {
        return new VfioUserMessage(request.msgId, request.command, Header.TYPE_REPLY, 0, payload, fds);
    }

    /** A header-only error reply. */
    public static VfioUserMessage errorReply(int msgId, int command, int errno) {
        return new VfioUserMessage(msgId, command, Header.TYPE_REPLY | Header.FLAG_ERROR, errno, null, null);
    }

    public int msgId() {
        return msgId;
    }

    public int commandCode() {
        return command;
    }

    /** The command, or null for a number the spec does not define. */
    public Command command() {
        return Command.of(command);
    }

    public int flags() {
        return flags;
    }

    public int errno() {
        return errno;
    }

    public int type() {
        return flags & Header.TYPE_MASK;
    }

    public boolean isReply() {
        return type() == Header.TYPE_REPLY;
    }

    public boolean noReply() {
        return (flags & Header.FLAG_NO_REPLY) != 0;
    }

    public boolean isError() {
        return (flags & Header.FLAG_ERROR) != 0;
    }

    public ByteBuf payload() {
        return payload;
    }

    /** Whole message size as it goes on the wire. */
    public int size() {
        return Header.SIZE + payload.readableBytes();
    }

    /** The fds still owned by this message (do not close them). */
    public int[] fds() {
        return fds;
    }

    /** Takes ownership of the fds: the caller must close them. */
    public int[] takeFds() {
        int[] taken = fds;
        fds = NO_FDS;
        return taken;
    }

    @Override
    protected void deallocate() {
        payload.release();
        for (int fd : takeFds()) {
            LibC.close(fd);
        }
    }

    @Override
    public VfioUserMessage retain() {
        super.retain();
        return this;
    }

    @Override
    public ReferenceCounted touch(Object hint) {
        payload.touch(hint);
        return this;
    }

    @Override
    public String toString() {
        Command c = command();
        return (isReply() ? "reply " : "") + (c == null ? "command " + command : c.name()) + " #" + msgId
                + " size " + size() + (fds.length > 0 ? " fds " + fds.length : "")
                + (isError() ? " errno " + errno : "");
    }
}
