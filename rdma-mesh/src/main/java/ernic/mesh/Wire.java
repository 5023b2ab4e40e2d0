package ernic.mesh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The mesh wire format: one record per frame type, its encoder and its decoder side by side. Every frame is
 * {@code u32 length} (of what follows), {@code u8 type}, then the body; integers are big-endian. Inbound frames
 * are cut by {@link FrameReader}, which strips the length; outbound frames carry it,
 * written here, so that one frame is one buffer on the channel (its write promise then reports progress).
 *
 * <pre>
 * REGISTER      worker→manager  magic u32, version u16, requested id i32 (-1 none), nonce i64, listen port u16
 * REGISTER_ACK  manager→worker  magic u32, version u16, node id i32
 * REFUSE        either          reason u8, UTF-8 text (then the sender closes)
 * HELLO         lower→higher    magic u32, version u16, node id i32, nonce i64, target id i32
 * HELLO_ACK     higher→lower    magic u32, version u16, node id i32, nonce i64
 * HEARTBEAT     either          (empty)
 * HEARTBEAT_ACK either          (empty)
 * TOPOLOGY      manager→worker  count u16, then per node: id i32, alive u8, family u8 (0 none, 4, 6),
 *                               address (4 or 16 bytes), scope id i32 (family 6 only), port u16
 * GIDS          worker→manager  the sender's whole claim: count u16, count × 16-byte GID (declared), then
 *                               count u16 (at most 64), GIDs (learned; none of them declared)
 * GID_UPDATE    manager→worker  nodes u16, then per node: id i32, flags u8 (1 alive, 2 removed), count u16, GIDs
 *                               (what the node owns, as the manager decided)
 * DATA          either          source id i32, destination id i32, opaque payload
 * </pre>
 *
 * <p>A peer is hostile until proven otherwise: {@link #decode} checks every field and the exact length, and
 * answers a frame it cannot accept with {@link BadFrame} (the node counts it as a protocol error and closes the
 * connection). The handshake frames are the exception that proves the rule: one with another magic or version is
 * decoded only that far, so that it can be refused with {@link #REFUSE_VERSION} rather than misread.
 */
final class Wire {
    static final int MAGIC = 0x45524E4D; // "ERNM"
    /**
     * 2: GIDS carries declared and learned GIDs, GID_UPDATE what each node owns. 3: the ionic messages in DATA
     * frames carry a long WRITE in pieces ({@code WireHeader.FLAG_MORE} in ionic-device).
     */
    static final int VERSION = 3;
    static final int LENGTH_BYTES = 4;

    static final int REGISTER = 1;
    static final int REGISTER_ACK = 2;
    static final int REFUSE = 3;
    static final int HELLO = 4;
    static final int HELLO_ACK = 5;
    static final int HEARTBEAT = 6;
    static final int HEARTBEAT_ACK = 7;
    static final int TOPOLOGY = 8;
    static final int GIDS = 9;
    static final int GID_UPDATE = 10;
    static final int DATA = 11;

    /** Where a DATA frame (length, type, source, destination, payload) holds its destination. */
    static final int DATA_DESTINATION = LENGTH_BYTES + 1 + 4;
    /** Bytes of a DATA frame besides the payload: length, type, source, destination. */
    static final int DATA_OVERHEAD = DATA_DESTINATION + 4;

    static final int REFUSE_VERSION = 1;
    static final int REFUSE_FULL = 2;
    static final int REFUSE_NOT_ME = 4;
    static final int REFUSE_DIRECT_DISABLED = 5;
    /** Authentication is on at one end only (see {@link MeshAuth}). */
    static final int REFUSE_AUTH = 6;

    static final int GID_ALIVE = 1;
    static final int GID_REMOVED = 2;

    /** Most GIDs in one set on the wire: what a node declares and learns, what it owns. */
    static final int MAX_GIDS_PER_NODE = 4096;
    /** Most GIDs a node may learn from its guest (the rest of {@link #MAX_GIDS_PER_NODE} it may declare). */
    static final int MAX_LEARNED_GIDS = 64;

    private Wire() {
    }

    /** A frame a peer sent that this node cannot accept. Cheap: no stack trace, it is hostile input, not a bug. */
    static final class BadFrame extends Exception {
        BadFrame(String message) {
            super(message, null, false, false);
        }
    }

    /** One frame of the protocol. */
    sealed interface Frame {
        /** The frame as it goes on the wire, length first. */
        ByteBuf encode(ByteBufAllocator alloc);
    }

    /** A handshake frame: it opens with the magic number and the version. */
    sealed interface Handshake extends Frame {
        int magic();

        int version();

        /** The peer speaks this protocol; only then were the fields after the version read. */
        default boolean speaksOurs() {
            return magic() == MAGIC && version() == VERSION;
        }
    }

    /** A worker asks the manager for an id; {@code port} is where it accepts direct connections. */
    record Register(int magic, int version, int requestedId, long nonce, int port) implements Handshake {
        @Override
        public ByteBuf encode(ByteBufAllocator alloc) {
            ByteBuf b = start(alloc, REGISTER, 20);
            b.writeInt(magic).writeShort(version).writeInt(requestedId).writeLong(nonce).writeShort(port);
            return finish(b);
        }

        static Register decode(ByteBuf b) throws BadFrame {
            int magic = readMagic(b);
            int version = b.readUnsignedShort();
            if (!ours(b, magic, version)) {
                return new Register(magic, version, -1, 0, 0);
            }
            need(b, 14, "REGISTER");
            Register r = new Register(magic, version, b.readInt(), b.readLong(), b.readUnsignedShort());
            end(b, "REGISTER");
            if (r.port == 0) {
                throw new BadFrame("registration without a listening port");
            }
            return r;
        }
    }

    /** The manager's answer to a registration: the worker's id. */
    record RegisterAck(int magic, int version, int nodeId) implements Handshake {
        RegisterAck(int nodeId) {
            this(MAGIC, VERSION, nodeId);
        }

        @Override
        public ByteBuf encode(ByteBufAllocator alloc) {
            ByteBuf b = start(alloc, REGISTER_ACK, 10);
            b.writeInt(magic).writeShort(version).writeInt(nodeId);
            return finish(b);
        }

        static RegisterAck decode(ByteBuf b) throws BadFrame {
            int magic = readMagic(b);
            int version = b.readUnsignedShort();
            if (!ours(b, magic, version)) {
                return new RegisterAck(magic, version, -1);
            }
            need(b, 4, "REGISTER_ACK");
            int id = b.readInt();
            end(b, "REGISTER_ACK");
            if (id <= 0) {
                throw new BadFrame("assigned id " + id);
            }
            return new RegisterAck(magic, version, id);
        }
    }

    /** A refusal, after which its sender closes. */
    record Refuse(int reason, String text) implements Frame {
        @Override
        public ByteBuf encode(ByteBufAllocator alloc) {
            byte[] t = text.getBytes(StandardCharsets.UTF_8);
            ByteBuf b = start(alloc, REFUSE, 1 + t.length);
            b.writeByte(reason).writeBytes(t);
            return finish(b);
        }

        static Refuse decode(ByteBuf b) throws BadFrame {
            need(b, 1, "REFUSE");
            int reason = b.readUnsignedByte();
            // Only logged; malformed UTF-8 becomes replacement characters.
            String text = b.toString(StandardCharsets.UTF_8);
            b.skipBytes(b.readableBytes());
            return new Refuse(reason, text);
        }
    }

    /** A worker opens a direct connection to {@code target} (the lower id dials the higher). */
    record Hello(int magic, int version, int nodeId, long nonce, int target) implements Handshake {
        @Override
        public ByteBuf encode(ByteBufAllocator alloc) {
            ByteBuf b = start(alloc, HELLO, 22);
            b.writeInt(magic).writeShort(version).writeInt(nodeId).writeLong(nonce).writeInt(target);
            return finish(b);
        }

        static Hello decode(ByteBuf b) throws BadFrame {
            int magic = readMagic(b);
            int version = b.readUnsignedShort();
            if (!ours(b, magic, version)) {
                return new Hello(magic, version, -1, 0, -1);
            }
            need(b, 16, "HELLO");
            Hello h = new Hello(magic, version, b.readInt(), b.readLong(), b.readInt());
            end(b, "HELLO");
            return h;
        }
    }

    /** The answer to a {@link Hello}. */
    record HelloAck(int magic, int version, int nodeId, long nonce) implements Handshake {
        HelloAck(int nodeId, long nonce) {
            this(MAGIC, VERSION, nodeId, nonce);
        }

        @Override
        public ByteBuf encode(ByteBufAllocator alloc) {
            ByteBuf b = start(alloc, HELLO_ACK, 18);
            b.writeInt(magic).writeShort(version).writeInt(nodeId).writeLong(nonce);
            return finish(b);
        }

        static HelloAck decode(ByteBuf b) throws BadFrame {
            int magic = readMagic(b);
            int version = b.readUnsignedShort();
            if (!ours(b, magic, version)) {
                return new HelloAck(magic, version, -1, 0);
            }
            need(b, 12, "HELLO_ACK");
            HelloAck h = new HelloAck(magic, version, b.readInt(), b.readLong());
            end(b, "HELLO_ACK");
            return h;
        }
    }

    /** The two empty frames: a heartbeat and its answer. */
    enum Heartbeat implements Frame {
        REQUEST(HEARTBEAT), ANSWER(HEARTBEAT_ACK);

        final int type;

        Heartbeat(int type) {
            this.type = type;
        }

        @Override
        public ByteBuf encode(ByteBufAllocator alloc) {
            return finish(start(alloc, type, 0));
        }
    }

    /** The manager's view of every node. */
    record Topology(List<NodeInfo> nodes) implements Frame {
        /** The smallest node entry: id, alive, family 0. */
        private static final int MIN_NODE_BYTES = 6;

        @Override
        public ByteBuf encode(ByteBufAllocator alloc) {
            ByteBuf b = start(alloc, TOPOLOGY, 2 + nodes.size() * 32);
            b.writeShort(nodes.size());
            for (NodeInfo n : nodes) {
                b.writeInt(n.id()).writeByte(n.alive() ? 1 : 0);
                InetSocketAddress a = n.address();
                InetAddress ip = a == null ? null : a.getAddress();
                if (ip instanceof Inet4Address) {
                    b.writeByte(4).writeBytes(ip.getAddress()).writeShort(a.getPort());
                } else if (ip instanceof Inet6Address v6) {
                    b.writeByte(6).writeBytes(v6.getAddress()).writeInt(v6.getScopeId()).writeShort(a.getPort());
                } else {
                    b.writeByte(0);
                }
            }
            return finish(b);
        }

        static Topology decode(ByteBuf b) throws BadFrame {
            need(b, 2, "TOPOLOGY");
            int n = b.readUnsignedShort();
            need(b, (long) n * MIN_NODE_BYTES, "TOPOLOGY of " + n + " nodes");
            List<NodeInfo> nodes = new ArrayList<>(n);
            Set<Integer> ids = new HashSet<>();
            for (int i = 0; i < n; i++) {
                NodeInfo node = readNode(b);
                if (!ids.add(node.id())) {
                    throw new BadFrame("TOPOLOGY names node " + node.id() + " twice");
                }
                nodes.add(node);
            }
            end(b, "TOPOLOGY");
            return new Topology(List.copyOf(nodes));
        }

        private static NodeInfo readNode(ByteBuf b) throws BadFrame {
            need(b, MIN_NODE_BYTES, "TOPOLOGY node");
            int id = b.readInt();
            if (id < 0) {
                throw new BadFrame("TOPOLOGY node id " + id);
            }
            int alive = b.readUnsignedByte();
            if (alive > 1) {
                throw new BadFrame("TOPOLOGY node " + id + " alive flag " + alive);
            }
            int family = b.readUnsignedByte();
            InetSocketAddress address;
            try {
                address = switch (family) {
                    case 0 -> null;
                    case 4 -> {
                        need(b, 6, "TOPOLOGY IPv4 address");
                        byte[] raw = new byte[4];
                        b.readBytes(raw);
                        yield new InetSocketAddress(InetAddress.getByAddress(raw), port(b, id));
                    }
                    case 6 -> {
                        need(b, 22, "TOPOLOGY IPv6 address");
                        byte[] raw = new byte[16];
                        b.readBytes(raw);
                        int scope = b.readInt();
                        yield new InetSocketAddress(Inet6Address.getByAddress(null, raw, scope), port(b, id));
                    }
                    default -> throw new BadFrame("TOPOLOGY node " + id + " address family " + family);
                };
            } catch (UnknownHostException e) {
                throw new BadFrame("TOPOLOGY node " + id + ": " + e.getMessage());
            }
            return new NodeInfo(id, alive == 1, address);
        }

        private static int port(ByteBuf b, int id) throws BadFrame {
            int port = b.readUnsignedShort();
            if (port == 0) {
                throw new BadFrame("TOPOLOGY node " + id + " port 0");
            }
            return port;
        }
    }

    /** A worker's whole claim: the GIDs it was told (declared) and those it learned from its guest. */
    record Gids(Set<Gid> declared, Set<Gid> learned) implements Frame {
        @Override
        public ByteBuf encode(ByteBufAllocator alloc) {
            ByteBuf b = start(alloc, GIDS, 4 + (declared.size() + learned.size()) * Gid.BYTES);
            writeGids(b, declared);
            writeGids(b, learned);
            return finish(b);
        }

        static Gids decode(ByteBuf b) throws BadFrame {
            Set<Gid> declared = readGids(b);
            Set<Gid> learned = readGids(b);
            end(b, "GIDS");
            if (learned.size() > MAX_LEARNED_GIDS) {
                throw new BadFrame("GIDS with " + learned.size() + " learned GIDs, most is " + MAX_LEARNED_GIDS);
            }
            if (declared.size() + learned.size() > MAX_GIDS_PER_NODE) {
                throw new BadFrame("GIDS with " + (declared.size() + learned.size()) + " GIDs, most is "
                        + MAX_GIDS_PER_NODE);
            }
            for (Gid g : learned) {
                if (declared.contains(g)) {
                    throw new BadFrame("GIDS names " + g + " declared and learned");
                }
            }
            return new Gids(declared, learned);
        }
    }

    /** One node's part of a GID_UPDATE. */
    record GidRecord(int nodeId, boolean alive, boolean removed, Set<Gid> gids) {
    }

    /** The GID sets of the nodes that changed (of every node, for a newly registered one). */
    record GidUpdate(List<GidRecord> records) implements Frame {
        @Override
        public ByteBuf encode(ByteBufAllocator alloc) {
            int bytes = 2;
            for (GidRecord r : records) {
                bytes += 7 + r.gids().size() * Gid.BYTES;
            }
            ByteBuf b = start(alloc, GID_UPDATE, bytes);
            b.writeShort(records.size());
            for (GidRecord r : records) {
                b.writeInt(r.nodeId()).writeByte((r.alive() ? GID_ALIVE : 0) | (r.removed() ? GID_REMOVED : 0));
                writeGids(b, r.gids());
            }
            return finish(b);
        }

        static GidUpdate decode(ByteBuf b) throws BadFrame {
            need(b, 2, "GID_UPDATE");
            int n = b.readUnsignedShort();
            need(b, (long) n * 7, "GID_UPDATE of " + n + " nodes");
            List<GidRecord> records = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                need(b, 5, "GID_UPDATE record");
                int id = b.readInt();
                int flags = b.readUnsignedByte();
                if (id < 0 || (flags & ~(GID_ALIVE | GID_REMOVED)) != 0) {
                    throw new BadFrame("GID_UPDATE record of node " + id + " with flags " + flags);
                }
                records.add(new GidRecord(id, (flags & GID_ALIVE) != 0, (flags & GID_REMOVED) != 0, readGids(b)));
            }
            end(b, "GID_UPDATE");
            return new GidUpdate(List.copyOf(records));
        }
    }

    /**
     * A payload from {@code source} for {@code destination}. Decoded, {@code payload} is the received frame itself
     * read up to the payload: neither a copy nor retained, valid while the frame is.
     */
    record Data(int source, int destination, ByteBuf payload) implements Frame {
        /** Takes {@code payload} over. */
        @Override
        public ByteBuf encode(ByteBufAllocator alloc) {
            return data(alloc, source, destination, payload);
        }

        static Data decode(ByteBuf b) throws BadFrame {
            long route = route(b);
            return new Data(source(route), destination(route), b);
        }

        /**
         * Reads and checks the source and destination of a DATA frame whose type was read, packed in a long: what
         * the receive path uses, so that a data frame costs no record.
         */
        static long route(ByteBuf b) throws BadFrame {
            need(b, 8, "DATA");
            int src = b.readInt();
            int dst = b.readInt();
            if (src < 0 || dst < 0) {
                throw new BadFrame("DATA " + src + "->" + dst);
            }
            return (long) src << 32 | Integer.toUnsignedLong(dst);
        }

        static int source(long route) {
            return (int) (route >>> 32);
        }

        static int destination(long route) {
            return (int) route;
        }
    }

    /** Whether a frame as received (type and body, length stripped) is a DATA frame. */
    static boolean isData(ByteBuf body) {
        return body.isReadable() && body.getUnsignedByte(body.readerIndex()) == DATA;
    }

    /** A frame as received (type and body, length stripped), decoded and checked. */
    static Frame decode(ByteBuf body) throws BadFrame {
        if (!body.isReadable()) {
            throw new BadFrame("an empty frame");
        }
        int type = body.readUnsignedByte();
        return switch (type) {
            case DATA -> Data.decode(body);
            case HEARTBEAT, HEARTBEAT_ACK -> {
                end(body, typeName(type));
                yield type == HEARTBEAT ? Heartbeat.REQUEST : Heartbeat.ANSWER;
            }
            case REGISTER -> Register.decode(body);
            case REGISTER_ACK -> RegisterAck.decode(body);
            case REFUSE -> Refuse.decode(body);
            case HELLO -> Hello.decode(body);
            case HELLO_ACK -> HelloAck.decode(body);
            case TOPOLOGY -> Topology.decode(body);
            case GIDS -> Gids.decode(body);
            case GID_UPDATE -> GidUpdate.decode(body);
            default -> throw new BadFrame("unknown frame " + typeName(type));
        };
    }

    static String typeName(int type) {
        return switch (type) {
            case REGISTER -> "REGISTER";
            case REGISTER_ACK -> "REGISTER_ACK";
            case REFUSE -> "REFUSE";
            case HELLO -> "HELLO";
            case HELLO_ACK -> "HELLO_ACK";
            case HEARTBEAT -> "HEARTBEAT";
            case HEARTBEAT_ACK -> "HEARTBEAT_ACK";
            case TOPOLOGY -> "TOPOLOGY";
            case GIDS -> "GIDS";
            case GID_UPDATE -> "GID_UPDATE";
            case DATA -> "DATA";
            default -> "type " + type;
        };
    }

    /** The name of a decoded frame, for logs. */
    static String name(Frame f) {
        return switch (f) {
            case Register r -> "REGISTER";
            case RegisterAck r -> "REGISTER_ACK";
            case Refuse r -> "REFUSE";
            case Hello h -> "HELLO";
            case HelloAck h -> "HELLO_ACK";
            case Heartbeat h -> typeName(h.type);
            case Topology t -> "TOPOLOGY";
            case Gids g -> "GIDS";
            case GidUpdate g -> "GID_UPDATE";
            case Data d -> "DATA";
        };
    }

    /**
     * A DATA frame around {@code payload}, which it takes over; the send path's encoder (no record). A payload made
     * by {@link MeshNode#message} has room for the header before it: the frame is then the same memory, one
     * contiguous buffer the socket writes by address (a view that leaves the payload's own indices as they
     * were). Any other payload gets a header buffer of its own in front of it.
     */
    static ByteBuf data(ByteBufAllocator alloc, int src, int dst, ByteBuf payload) {
        int length = DATA_OVERHEAD - LENGTH_BYTES + payload.readableBytes();
        if (hasHeadroom(payload)) {
            int at = payload.readerIndex() - DATA_OVERHEAD;
            payload.setInt(at, length).setByte(at + LENGTH_BYTES, DATA).setInt(at + LENGTH_BYTES + 1, src)
                    .setInt(at + DATA_DESTINATION, dst);
            ByteBuf frame = payload.retainedDuplicate().readerIndex(at);
            payload.release(); // the frame holds it now
            return frame;
        }
        ByteBuf h = alloc.buffer(DATA_OVERHEAD);
        h.writeInt(length).writeByte(DATA).writeInt(src).writeInt(dst);
        CompositeByteBuf c = alloc.compositeBuffer(2);
        c.addComponents(true, h, payload);
        return c;
    }

    /**
     * Whether the bytes before {@code payload}'s reader index are free for a DATA header: a buffer of its own
     * (not a view of another), held by nobody else, as {@link MeshNode#message} makes them.
     */
    private static boolean hasHeadroom(ByteBuf payload) {
        return payload.readerIndex() == DATA_OVERHEAD && payload.unwrap() == null && payload.refCnt() == 1
                && payload.hasMemoryAddress() && !payload.isReadOnly();
    }

    /** The destination of an outbound DATA frame (one {@link #data} built). */
    static int dataDestination(ByteBuf frame) {
        return frame.getInt(frame.readerIndex() + DATA_DESTINATION);
    }

    /** A frame as received (type and body, length stripped) made sendable again; takes over {@code body}. */
    static ByteBuf reframe(ByteBufAllocator alloc, ByteBuf body) {
        ByteBuf h = alloc.buffer(LENGTH_BYTES);
        h.writeInt(body.readableBytes());
        CompositeByteBuf c = alloc.compositeBuffer(2);
        c.addComponents(true, h, body);
        return c;
    }

    private static ByteBuf start(ByteBufAllocator alloc, int type, int bodyBytes) {
        ByteBuf b = alloc.buffer(LENGTH_BYTES + 1 + bodyBytes);
        b.writeInt(0);
        b.writeByte(type);
        return b;
    }

    private static ByteBuf finish(ByteBuf b) {
        b.setInt(b.readerIndex(), b.readableBytes() - LENGTH_BYTES);
        return b;
    }

    private static void writeGids(ByteBuf b, Set<Gid> gids) {
        b.writeShort(gids.size());
        for (Gid g : gids) {
            b.writeLong(g.hi()).writeLong(g.lo());
        }
    }

    private static Set<Gid> readGids(ByteBuf b) throws BadFrame {
        need(b, 2, "GID count");
        int n = b.readUnsignedShort();
        if (n > MAX_GIDS_PER_NODE) {
            throw new BadFrame(n + " GIDs, most is " + MAX_GIDS_PER_NODE);
        }
        need(b, (long) n * Gid.BYTES, n + " GIDs");
        Set<Gid> s = new LinkedHashSet<>(n * 2);
        for (int i = 0; i < n; i++) {
            s.add(Gid.of(b.readLong(), b.readLong()));
        }
        return s;
    }

    /**
     * Whether a handshake's magic and version are this protocol's; if not, skips the rest of it, which another
     * version may lay out otherwise.
     */
    private static boolean ours(ByteBuf b, int magic, int version) {
        if (magic == MAGIC && version == VERSION) {
            return true;
        }
        b.skipBytes(b.readableBytes());
        return false;
    }

    private static int readMagic(ByteBuf b) throws BadFrame {
        need(b, 6, "handshake");
        return b.readInt();
    }

    private static void need(ByteBuf b, long bytes, String what) throws BadFrame {
        if (b.readableBytes() < bytes) {
            throw new BadFrame(what + ": " + b.readableBytes() + " bytes left, needs " + bytes);
        }
    }

    private static void end(ByteBuf b, String what) throws BadFrame {
        if (b.isReadable()) {
            throw new BadFrame(what + " with " + b.readableBytes() + " bytes too many");
        }
    }
}
