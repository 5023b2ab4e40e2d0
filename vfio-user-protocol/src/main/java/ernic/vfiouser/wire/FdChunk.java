package ernic.vfiouser.wire;

import ernic.vfiouser.sys.LibC;
import io.netty.buffer.ByteBuf;
import io.netty.util.AbstractReferenceCounted;
import io.netty.util.ReferenceCounted;

/**
 * Bytes of a UNIX stream and the fds that travel with their first byte (SCM_RIGHTS). Inbound, the
 * chunk owns the fds it carries until the framer takes them; outbound, the fds stay the sender's
 * (the kernel duplicates them) and the chunk never closes them.
 */
public final class FdChunk extends AbstractReferenceCounted {
    private final ByteBuf data;
    private int[] fds;
    private final boolean ownsFds;

    private FdChunk(ByteBuf data, int[] fds, boolean ownsFds) {
        this.data = data;
        this.fds = fds == null ? VfioUserMessage.NO_FDS : fds;
        this.ownsFds = ownsFds;
    }

    /** A chunk read from a socket: it owns {@code fds}. */
    public static FdChunk received(ByteBuf data, int[] fds) {
        return new FdChunk(data, fds, true);
    }

    /** A chunk to send: {@code fds} stay open and the caller's. */
    public static FdChunk toSend(ByteBuf data, int[] fds) {
        return new FdChunk(data, fds, false);
    }

    public ByteBuf data() {
        return data;
    }

    public int[] fds() {
        return fds;
    }

    /** Takes the fds out of the chunk; the caller now owns them. */
    public int[] takeFds() {
        int[] taken = fds;
        fds = VfioUserMessage.NO_FDS;
        return taken;
    }

    @Override
    protected void deallocate() {
        data.release();
        int[] left = takeFds();
        if (ownsFds) {
            for (int fd : left) {
                LibC.close(fd);
            }
        }
    }

    @Override
    public ReferenceCounted touch(Object hint) {
        data.touch(hint);
        return this;
    }
}
