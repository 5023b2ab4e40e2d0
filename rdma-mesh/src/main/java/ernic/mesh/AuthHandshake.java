package ernic.mesh;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

import java.security.MessageDigest;
import java.util.Arrays;

/**
 * The first handler of a connection of a node with a secret: it runs the handshake of {@link MeshAuth} and holds
 * back everything the peer sends until the peer has proved it knows the secret. Then it tells the connection's
 * {@link MeshLink} ({@link #AUTHENTICATED}), passes on the bytes that followed the proof and removes itself: the
 * mesh's frames go by untouched from then on. A peer that fails is counted, logged once per cause and closed, and
 * nothing it sent reaches the {@link FrameReader}. The time-out is the link's ({@link MeshLink#health}), on the
 * node's clock. It buffers at most one CHALLENGE's worth of bytes, whatever the peer sends.
 */
final class AuthHandshake extends ChannelInboundHandlerAdapter {
    /** The user event that tells the {@link MeshLink} the peer is authenticated. */
    enum Event { AUTHENTICATED }

    static final Event AUTHENTICATED = Event.AUTHENTICATED;

    /** Bytes enough to tell a plain mesh frame (length, type, magic) from garbage. */
    private static final int PLAIN_FRAME_PREFIX = Wire.LENGTH_BYTES + 1 + 4;

    private final MeshAuth auth;
    private final boolean dialer;
    /** The message awaited (the peer's CHALLENGE, then its PROOF) as it arrives. */
    private final byte[] in = new byte[MeshAuth.CHALLENGE_BYTES];
    private int filled;
    private byte[] ownNonce;
    /** The peer's nonce once its CHALLENGE is in; its PROOF is awaited then. */
    private byte[] peerNonce;
    /** Authenticated or failed: nothing more is taken here. */
    private boolean finished;
    private boolean authenticated;

    AuthHandshake(MeshAuth auth, boolean dialer) {
        this.auth = auth;
        this.dialer = dialer;
    }

    private int ownRole() {
        return dialer ? MeshAuth.ROLE_DIALER : MeshAuth.ROLE_ACCEPTOR;
    }

    private int peerRole() {
        return dialer ? MeshAuth.ROLE_ACCEPTOR : MeshAuth.ROLE_DIALER;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        ownNonce = auth.newNonce();
        ByteBuf c = ctx.alloc().buffer(MeshAuth.CHALLENGE_BYTES);
        c.writeInt(MeshAuth.MAGIC).writeShort(MeshAuth.VERSION).writeByte(ownRole()).writeByte(0).writeBytes(ownNonce);
        ctx.writeAndFlush(c);
        ctx.fireChannelActive(); // the link starts its clock; it waits for AUTHENTICATED to speak
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf b = (ByteBuf) msg;
        boolean handedOn = false;
        try {
            while (!finished && b.isReadable()) {
                int want = (peerNonce == null ? MeshAuth.CHALLENGE_BYTES : MeshAuth.PROOF_BYTES) - filled;
                int n = Math.min(want, b.readableBytes());
                b.readBytes(in, filled, n);
                filled += n;
                if (peerNonce == null) {
                    challengeSoFar(ctx);
                } else if (filled == MeshAuth.PROOF_BYTES) {
                    proof(ctx);
                }
            }
            if (authenticated) {
                ctx.fireUserEventTriggered(AUTHENTICATED);
                if (b.isReadable() && ctx.channel().isActive()) {
                    handedOn = true;
                    ctx.fireChannelRead(b); // what the peer sent after its proof is the mesh's
                }
                ctx.pipeline().remove(this);
            }
        } finally {
            if (!handedOn) {
                b.release();
            }
        }
    }

    /** Checks the peer's CHALLENGE as far as it has come; takes it when whole. */
    private void challengeSoFar(ChannelHandlerContext ctx) {
        if (filled >= 4 && getInt(0) != MeshAuth.MAGIC) {
            if (filled >= PLAIN_FRAME_PREFIX || filled == MeshAuth.CHALLENGE_BYTES) {
                notAChallenge(ctx);
            }
            return;
        }
        if (filled < MeshAuth.CHALLENGE_BYTES) {
            return;
        }
        int version = (in[4] & 0xff) << 8 | (in[5] & 0xff);
        int role = in[6] & 0xff;
        byte[] nonce = Arrays.copyOfRange(in, 8, MeshAuth.CHALLENGE_BYTES);
        if (version != MeshAuth.VERSION) {
            fail(ctx, MeshAuth.Failure.VERSION, "auth version " + version + ", this node speaks " + MeshAuth.VERSION);
        } else if (auth.isOwn(nonce)) {
            fail(ctx, MeshAuth.Failure.REFLECTED, null);
        } else if (role != peerRole() || in[7] != 0) {
            fail(ctx, MeshAuth.Failure.GARBAGE, "a CHALLENGE with role " + role + " and flags " + (in[7] & 0xff)
                    + ", expected role " + peerRole() + " and 0");
        } else {
            peerNonce = nonce;
            filled = 0;
            byte[] dialerNonce = dialer ? ownNonce : peerNonce;
            byte[] acceptorNonce = dialer ? peerNonce : ownNonce;
            ctx.writeAndFlush(ctx.alloc().buffer(MeshAuth.PROOF_BYTES)
                    .writeBytes(auth.proof(ownRole(), dialerNonce, acceptorNonce)));
        }
    }

    /**
     * The peer opened with something else: a plain mesh frame means it has no secret (a worker's REGISTER or HELLO,
     * or the REFUSE a node without a secret answers a CHALLENGE with); anything else is garbage. A peer without a
     * secret that dialed this node is told why in a REFUSE it understands.
     */
    private void notAChallenge(ChannelHandlerContext ctx) {
        int type = in[Wire.LENGTH_BYTES] & 0xff;
        boolean opening = (type == Wire.REGISTER || type == Wire.HELLO) && getInt(Wire.LENGTH_BYTES + 1) == Wire.MAGIC;
        boolean refusal = type == Wire.REFUSE && (in[Wire.LENGTH_BYTES + 1] & 0xff) == Wire.REFUSE_AUTH;
        if (opening && !dialer) {
            finish();
            auth.failed(MeshAuth.Failure.MISSING, ctx.channel().remoteAddress(),
                    type == Wire.REGISTER ? "REGISTER" : "HELLO");
            ctx.writeAndFlush(new Wire.Refuse(Wire.REFUSE_AUTH, "this mesh requires authentication: secret=FILE")
                    .encode(ctx.alloc())).addListener(ChannelFutureListener.CLOSE);
        } else if (refusal) {
            fail(ctx, MeshAuth.Failure.MISSING, "the peer refused the CHALLENGE");
        } else {
            fail(ctx, MeshAuth.Failure.GARBAGE, "first bytes " + hex(Math.min(filled, PLAIN_FRAME_PREFIX)));
        }
    }

    private void proof(ChannelHandlerContext ctx) {
        byte[] dialerNonce = dialer ? ownNonce : peerNonce;
        byte[] acceptorNonce = dialer ? peerNonce : ownNonce;
        byte[] expected = auth.proof(peerRole(), dialerNonce, acceptorNonce);
        if (!MessageDigest.isEqual(expected, Arrays.copyOf(in, MeshAuth.PROOF_BYTES))) {
            fail(ctx, MeshAuth.Failure.WRONG_PROOF, null);
            return;
        }
        finish();
        authenticated = true;
        auth.passed();
    }

    private void fail(ChannelHandlerContext ctx, MeshAuth.Failure why, String detail) {
        finish();
        auth.failed(why, ctx.channel().remoteAddress(), detail);
        ctx.close();
    }

    private void finish() {
        finished = true;
        auth.forget(ownNonce);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (!finished) {
            finish();
            auth.closedEarly(ctx.channel().remoteAddress());
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        auth.forget(ownNonce);
    }

    private int getInt(int at) {
        return (in[at] & 0xff) << 24 | (in[at + 1] & 0xff) << 16 | (in[at + 2] & 0xff) << 8 | (in[at + 3] & 0xff);
    }

    private String hex(int n) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < n; i++) {
            s.append(String.format("%02x", in[i] & 0xff));
        }
        return s.toString();
    }
}
