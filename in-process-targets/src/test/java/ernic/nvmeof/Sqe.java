package ernic.nvmeof;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/** A command capsule as a host builds one; offsets written here from the NVMe specs, not from the code. */
final class Sqe {
    final ByteBuffer b = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
    private byte[] data = new byte[0];
    private static int nextCid = 1;

    private Sqe(int opcode) {
        b.put(0, (byte) opcode).put(1, (byte) 0x40).putShort(2, (short) nextCid++);
        // No data: a null keyed SGL (type 0x40, all zero), as nvme-rdma sends.
        b.put(39, (byte) 0x40);
    }

    static Sqe op(int opcode) {
        return new Sqe(opcode);
    }

    static Sqe fabrics(int fctype) {
        Sqe s = new Sqe(0x7f);
        s.b.put(4, (byte) fctype);
        return s;
    }

    int cid() {
        return Short.toUnsignedInt(b.getShort(2));
    }

    Sqe flags(int f) {
        b.put(1, (byte) f);
        return this;
    }

    Sqe nsid(int n) {
        b.putInt(4, n);
        return this;
    }

    /** Command dword {@code n} (10..15). */
    Sqe cdw(int n, int v) {
        b.putInt(n * 4, v);
        return this;
    }

    Sqe cdw64(int n, long v) {
        b.putLong(n * 4, v);
        return this;
    }

    /** A keyed SGL data block: addr, 24-bit length, key, type 0x40 (or 0x4f to invalidate). */
    Sqe keyed(long addr, int length, int key, boolean invalidate) {
        b.putLong(24, addr);
        b.put(32, (byte) length).put(33, (byte) (length >>> 8)).put(34, (byte) (length >>> 16));
        b.putInt(35, key);
        b.put(39, (byte) (invalidate ? 0x4f : 0x40));
        return this;
    }

    /** An SGL descriptor of any type byte. */
    Sqe sglType(int type) {
        b.put(39, (byte) type);
        return this;
    }

    /** Offset-based in-capsule data: data block descriptor, subtype offset (type 0x01), the data after the SQE. */
    Sqe inline(byte[] bytes) {
        return inline(0, bytes.length, bytes);
    }

    Sqe inline(long offset, int length, byte[] bytes) {
        b.putLong(24, offset).putInt(32, length).put(39, (byte) 0x01);
        data = bytes;
        return this;
    }

    byte[] capsule() {
        byte[] c = new byte[64 + data.length];
        System.arraycopy(b.array(), 0, c, 0, 64);
        System.arraycopy(data, 0, c, 64, data.length);
        return c;
    }

    /** The 1024-byte Fabrics Connect data: hostid @0, cntlid @16, subnqn @256, hostnqn @512. */
    static byte[] connectData(int cntlid, String subnqn, String hostnqn) {
        ByteBuffer d = ByteBuffer.allocate(1024).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 16; i++) {
            d.put(i, (byte) (0xa0 + i));
        }
        d.putShort(16, (short) cntlid);
        d.put(256, subnqn.getBytes(StandardCharsets.US_ASCII));
        d.position(0);
        d.put(512, hostnqn.getBytes(StandardCharsets.US_ASCII));
        return d.array();
    }

    /** Fabrics Connect SQE: recfmt @40, qid @42, sqsize @44, kato @48. */
    static Sqe connect(int qid, int sqsize, int katoMs) {
        Sqe s = fabrics(0x01);
        s.b.putShort(40, (short) 0).putShort(42, (short) qid).putShort(44, (short) sqsize).putInt(48, katoMs);
        return s;
    }
}
