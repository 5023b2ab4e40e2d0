package ernic.mesh;

import ernic.counters.OncePerCause;
import ernic.counters.Counters;
import io.netty.channel.ChannelHandler;

import javax.crypto.Mac;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.HashSet;
import java.util.Set;
import java.util.function.Supplier;

/**
 * A node's side of mesh authentication: its secret (or none), the nonces of its handshakes in progress, and the
 * counting and logging of peers that fail. Each connection runs an {@link AuthHandshake} (with a secret) or a
 * {@link NoSecretGuard} (without) as the first handler of its pipeline. On the node's event loop.
 *
 * <p>The handshake, before any mesh frame, on every connection (manager-worker and worker-worker):
 * <pre>
 * CHALLENGE  both sides, at once   magic u32 "ERNA", auth version u16, role u8 (1 dialer, 2 acceptor), 0 u8,
 *                                  nonce (32 random bytes)                                          40 bytes
 * PROOF      both, after the peer's CHALLENGE   HMAC-SHA256(secret, transcript of the prover)      32 bytes
 * transcript = "ernic-mesh-auth" (ASCII) | auth version u16 | mesh version u16 | prover's role u8
 *              | dialer's nonce | acceptor's nonce
 * </pre>
 * A side is authenticated when the peer's PROOF matches (compared in constant time); only then does the mesh see
 * the connection and the bytes after it. Both nonces in the transcript make a recorded handshake useless on a
 * later connection (the other side's nonce is fresh); the prover's role keeps a side's own proof from being
 * reflected back to it; and a peer whose nonce is one this node sent (on this connection or another one still in
 * its handshake) is refused, so one node cannot be made to answer its own challenge.
 */
final class MeshAuth {
    static final int MAGIC = 0x45524E41; // "ERNA"
    static final int VERSION = 1;
    static final int NONCE_BYTES = 32;
    static final int CHALLENGE_BYTES = 8 + NONCE_BYTES;
    static final int PROOF_BYTES = 32;
    static final int ROLE_DIALER = 1;
    static final int ROLE_ACCEPTOR = 2;
    private static final byte[] LABEL = "ernic-mesh-auth".getBytes(StandardCharsets.US_ASCII);

    /** Why a peer was not let in; each is counted, and logged the first time. */
    enum Failure {
        WRONG_PROOF(MeshCounter.AUTH_WRONG_PROOF, "its proof does not match (another secret, or a replayed handshake)"),
        MISSING(MeshCounter.AUTH_MISSING, "it speaks the mesh without authenticating (no secret=FILE on that server?)"),
        UNEXPECTED(MeshCounter.AUTH_UNEXPECTED,
                "it authenticates, but this node has no secret (give every server of the mesh the same secret=FILE)"),
        GARBAGE(MeshCounter.AUTH_GARBAGE, "it sent something that is no mesh handshake"),
        REFLECTED(MeshCounter.AUTH_REFLECTED, "it answered with a nonce this node sent (a reflection)"),
        VERSION(MeshCounter.REFUSED_HANDSHAKES, "it speaks another version of the authentication"),
        TIMEOUT(MeshCounter.AUTH_TIMEOUTS, "it did not authenticate in three intervals");

        final MeshCounter counter;
        final String meaning;

        Failure(MeshCounter counter, String meaning) {
            this.counter = counter;
            this.meaning = meaning;
        }
    }

    private final MeshSecret secret;
    private final Counters<MeshCounter> counters;
    private final Supplier<String> describe;
    private final SecureRandom random;
    /** Nonces this node sent in handshakes not finished yet. */
    private final Set<ByteBuffer> live = new HashSet<>();
    /** The first refusal of each cause is logged, the others counted (in MeshCounter; this counts them again). */
    private final OncePerCause logged = new OncePerCause(MeshNode.log);

    MeshAuth(MeshSecret secret, Counters<MeshCounter> counters, Supplier<String> describe) {
        this.secret = secret;
        this.counters = counters;
        this.describe = describe;
        this.random = secret == null ? null : new SecureRandom();
    }

    /** Whether connections must authenticate before the mesh sees them. */
    boolean required() {
        return secret != null;
    }

    /** The first handler of a connection of {@code kind}. */
    ChannelHandler handler(MeshLink.Kind kind) {
        boolean dialer = kind == MeshLink.Kind.UPLINK || kind == MeshLink.Kind.DIRECT_OUT;
        return secret != null ? new AuthHandshake(this, dialer) : new NoSecretGuard(this, dialer);
    }

    /** Says once, when the node listens, whether its connections are authenticated. */
    void logStart(int port) {
        if (secret == null) {
            MeshNode.log.warn("mesh {}: the mesh is unauthenticated: anyone who reaches port {} (or another node's) can"
                    + " join and send RDMA requests; give every server secret=FILE (docs/mesh.md)", describe.get(),
                    port);
        } else {
            MeshNode.log.info("mesh {}: connections authenticated with the secret in {}", describe.get(),
                    secret.file() == null ? "the configuration" : secret.file());
        }
    }

    /** A fresh nonce for a new handshake, remembered until {@link #forget}. */
    byte[] newNonce() {
        byte[] n = new byte[NONCE_BYTES];
        random.nextBytes(n);
        live.add(ByteBuffer.wrap(n));
        return n;
    }

    void forget(byte[] nonce) {
        if (nonce != null) {
            live.remove(ByteBuffer.wrap(nonce));
        }
    }

    /** Whether {@code nonce} is one this node sent in a handshake still going on. */
    boolean isOwn(byte[] nonce) {
        return live.contains(ByteBuffer.wrap(nonce));
    }

    /** The proof the side in role {@code proverRole} sends: HMAC-SHA256 over its transcript (class comment). */
    byte[] proof(int proverRole, byte[] dialerNonce, byte[] acceptorNonce) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(secret.key());
            mac.update(LABEL);
            mac.update(new byte[] {(byte) (VERSION >>> 8), (byte) VERSION, (byte) (Wire.VERSION >>> 8),
                    (byte) Wire.VERSION, (byte) proverRole});
            mac.update(dialerNonce);
            mac.update(acceptorNonce);
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
    }

    void passed() {
        counters.inc(MeshCounter.AUTH_PASSED);
    }

    /** Counts a peer that failed; logs the first of each cause (a peer retrying must not fill the log). */
    void failed(Failure why, SocketAddress remote, String detail) {
        counters.inc(why.counter);
        // The cause is the counter's name, so the first line says where the others are counted.
        logged.warn("mesh.node." + why.counter.key(), "mesh {}: the peer at {} is not let in: {}{}; closing the"
                + " connection", describe.get(), remote, why.meaning, detail == null ? "" : " [" + detail + "]");
    }

    /** A connection that closed before it authenticated (a port probe, or the peer refused this node). */
    void closedEarly(SocketAddress remote) {
        MeshNode.log.debug("mesh {}: {} closed before authenticating", describe.get(), remote);
    }
}
