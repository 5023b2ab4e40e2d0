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
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * The mesh wire format. Every frame is {@code u32 length} (of what follows), {@code u8 type}, then the body;
 * integers are big-endian. Inbound frames are cut by Netty's {@code LengthFieldBasedFrameDecoder}, which strips
 * the length; outbound frames carry it, written here, so that one frame is one buffer on the channel (its write
 * promise then reports progress).
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
 * GIDS          worker→manager  count u16, count × 16-byte GID (the sender's whole set)
 * GID_UPDATE    manager→worker  nodes u16, then per node: id i32, flags u8 (1 alive, 2 removed), count u16, GIDs
 * DATA          either          source id i32, destination id i32, opaque payload
 * </pre>
 */
final class Wire {
    static final int MAGIC = 0x45524E4D; // "ERNM"
    static final int VERSION = 1;
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
    static final int REFUSE_PROTOCOL = 3;
    static final int REFUSE_NOT_ME = 4;
    static final int REFUSE_DIRECT_DISABLED = 5;

    static final int GID_ALIVE = 1;
    static final int GID_REMOVED = 2;

    /** Most GIDs one node may advertise. */
    static final int MAX_GIDS_PER_NODE = 4096;

    private Wire() {
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

    /** Starts a frame: a length placeholder and the type. Finish it with {@link #finish}. */
    static ByteBuf start(ByteBufAllocator alloc, int type, int bodyBytes) {
        ByteBuf b = alloc.buffer(LENGTH_BYTES + 1 + bodyBytes);
        b.writeInt(0);
        b.writeByte(type);
        return b;
    }

    static ByteBuf finish(ByteBuf b) {
        b.setInt(b.readerIndex(), b.readableBytes() - LENGTH_BYTES);
        return b;
    }

    static ByteBuf empty(ByteBufAllocator alloc, int type) {
        return finish(start(alloc, type, 0));
    }

    static ByteBuf register(ByteBufAllocator alloc, int magic, int version, int requestedId, long nonce, int port) {
        ByteBuf b = start(alloc, REGISTER, 20);
        b.writeInt(magic).writeShort(version).writeInt(requestedId).writeLong(nonce).writeShort(port);
        return finish(b);
    }

    static ByteBuf registerAck(ByteBufAllocator alloc, int nodeId) {
        ByteBuf b = start(alloc, REGISTER_ACK, 10);
        b.writeInt(MAGIC).writeShort(VERSION).writeInt(nodeId);
        return finish(b);
    }

    static ByteBuf refuse(ByteBufAllocator alloc, int reason, String text) {
        byte[] t = text.getBytes(StandardCharsets.UTF_8);
        ByteBuf b = start(alloc, REFUSE, 1 + t.length);
        b.writeByte(reason).writeBytes(t);
        return finish(b);
    }

    static ByteBuf hello(ByteBufAllocator alloc, int magic, int version, int nodeId, long nonce, int target) {
        ByteBuf b = start(alloc, HELLO, 22);
        b.writeInt(magic).writeShort(version).writeInt(nodeId).writeLong(nonce).writeInt(target);
        return finish(b);
    }

    static ByteBuf helloAck(ByteBufAllocator alloc, int nodeId, long nonce) {
        ByteBuf b = start(alloc, HELLO_ACK, 18);
        b.writeInt(MAGIC).writeShort(VERSION).writeInt(nodeId).writeLong(nonce);
        return finish(b);
    }

    static ByteBuf topology(ByteBufAllocator alloc, Collection<NodeInfo> nodes) {
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

    static NodeInfo readNode(ByteBuf b) {
        int id = b.readInt();
        boolean alive = b.readUnsignedByte() != 0;
        int family = b.readUnsignedByte();
        InetSocketAddress address = null;
        try {
            switch (family) {
                case 0 -> {
                }
                case 4 -> {
                    byte[] raw = new byte[4];
                    b.readBytes(raw);
                    address = new InetSocketAddress(InetAddress.getByAddress(raw), b.readUnsignedShort());
                }
                case 6 -> {
                    byte[] raw = new byte[16];
                    b.readBytes(raw);
                    int scope = b.readInt();
                    address = new InetSocketAddress(Inet6Address.getByAddress(null, raw, scope), b.readUnsignedShort());
                }
                default -> throw new IllegalArgumentException("address family " + family);
            }
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("bad address", e);
        }
        return new NodeInfo(id, alive, address);
    }

    static ByteBuf gids(ByteBufAllocator alloc, Set<Gid> gids) {
        ByteBuf b = start(alloc, GIDS, 2 + gids.size() * Gid.BYTES);
        b.writeShort(gids.size());
        for (Gid g : gids) {
            b.writeLong(g.hi()).writeLong(g.lo());
        }
        return finish(b);
    }

    static Set<Gid> readGids(ByteBuf b) {
        int n = b.readUnsignedShort();
        if (n > MAX_GIDS_PER_NODE || (long) n * Gid.BYTES > b.readableBytes()) {
            throw new IllegalArgumentException("bad GID count " + n);
        }
        Set<Gid> s = new LinkedHashSet<>(n * 2);
        for (int i = 0; i < n; i++) {
            s.add(Gid.of(b.readLong(), b.readLong()));
        }
        return s;
    }

    /** One node's part of a GID_UPDATE. */
    record GidRecord(int nodeId, boolean alive, boolean removed, Set<Gid> gids) {
    }

    static ByteBuf gidUpdate(ByteBufAllocator alloc, Collection<GidRecord> records) {
        int bytes = 2;
        for (GidRecord r : records) {
            bytes += 7 + r.gids().size() * Gid.BYTES;
        }
        ByteBuf b = start(alloc, GID_UPDATE, bytes);
        b.writeShort(records.size());
        for (GidRecord r : records) {
            b.writeInt(r.nodeId()).writeByte((r.alive() ? GID_ALIVE : 0) | (r.removed() ? GID_REMOVED : 0));
            b.writeShort(r.gids().size());
            for (Gid g : r.gids()) {
                b.writeLong(g.hi()).writeLong(g.lo());
            }
        }
        return finish(b);
    }

    /** A DATA frame around {@code payload}, which it takes over. */
    static ByteBuf data(ByteBufAllocator alloc, int src, int dst, ByteBuf payload) {
        ByteBuf h = alloc.buffer(DATA_OVERHEAD);
        h.writeInt(DATA_OVERHEAD - LENGTH_BYTES + payload.readableBytes()).writeByte(DATA).writeInt(src).writeInt(dst);
        CompositeByteBuf c = alloc.compositeBuffer(2);
        c.addComponents(true, h, payload);
        return c;
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
}
