package ernic.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ernic.attach.HostMemory;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HexFormat;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The x-amz-rdma-token header, and objects moved by rkey with a byte array standing in for the guest. */
class RdmaTokenTest {
    /** Guest memory as one array, with memory regions by rkey and their remote access rights. */
    static final class ArrayHostMemory implements HostMemory {
        record Mr(long base, int offset, int length, boolean remoteRead, boolean remoteWrite) {
        }

        final byte[] ram = new byte[8 << 20];
        final Map<Integer, Mr> mrs = new java.util.HashMap<>();
        int refused;

        /** The bytes {@code len} at {@code addr} under {@code rkey} reach, or null (counted) where the MR forbids. */
        private MemorySegment at(int rkey, long addr, long len, boolean write) {
            Mr mr = rkey == 0 ? null : mrs.get(rkey);
            if (mr == null || (write ? !mr.remoteWrite : !mr.remoteRead) || addr < mr.base
                    || addr - mr.base + len > mr.length) {
                refused++;
                return null;
            }
            return MemorySegment.ofArray(ram).asSlice(mr.offset + (addr - mr.base), len);
        }

        @Override
        public boolean fromHost(int rkey, long addr, MemorySegment dst) {
            return copy(at(rkey, addr, dst.byteSize(), false), dst);
        }

        @Override
        public boolean toHost(int rkey, long addr, MemorySegment src) {
            return copy(src, at(rkey, addr, src.byteSize(), true));
        }

        /** Copies {@code from} into {@code to} unless one is null (an access refused). */
        private static boolean copy(MemorySegment from, MemorySegment to) {
            if (from == null || to == null) {
                return false;
            }
            to.copyFrom(from);
            return true;
        }
    }

    /** A token laid out by hand from the hipObject table: little-endian, 44 bytes. */
    static String token(int transport, int qpn, int rkey, long addr, long len) {
        ByteBuffer b = ByteBuffer.allocate(44).order(ByteOrder.LITTLE_ENDIAN);
        b.put((byte) transport).putInt(qpn);
        b.put(new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, (byte) 192, (byte) 168, (byte) 200, 2});
        b.putInt(rkey).putLong(addr).putLong(len).put((byte) 1).putShort((short) 0x1234);
        return HexFormat.of().formatHex(b.array());
    }

    @Test
    void parsesTheTokenLayout() throws Exception {
        String hex = token(1, 0x00abcdef, 0x1234_5678, 0x7f00_1234_5000L, 1 << 20);
        assertThat(hex).hasSize(88);
        RdmaToken t = RdmaToken.parse(hex);
        assertThat(t.transport()).isEqualTo(1);
        assertThat(t.qpn()).isEqualTo(0x00abcdef);
        assertThat(t.rkey()).isEqualTo(0x1234_5678);
        assertThat(t.addr()).isEqualTo(0x7f00_1234_5000L);
        assertThat(t.length()).isEqualTo(1 << 20);
        assertThat(t.port()).isEqualTo(1);
        assertThat(t.lid()).isEqualTo(0x1234);
        assertThat(t.gid()[15]).isEqualTo((byte) 2);
        assertThat(t.hex()).isEqualTo(hex);
        assertThat(RdmaToken.parse(hex.toUpperCase()).rkey()).isEqualTo(0x1234_5678);
        // the :addr:len suffix replaces the window
        RdmaToken s = RdmaToken.parse(hex + ":00007f0000002000:0000000000001000");
        assertThat(s.addr()).isEqualTo(0x7f00_0000_2000L);
        assertThat(s.length()).isEqualTo(0x1000);
    }

    @Test
    void refusesMalformedAndDeclinesDcTokens() {
        String good = token(1, 1, 7, 0x1000, 16);
        assertThatThrownBy(() -> RdmaToken.parse(good.substring(2))).isInstanceOf(RdmaToken.Refused.class);
        assertThatThrownBy(() -> RdmaToken.parse(good.substring(0, 87) + "g")).isInstanceOf(RdmaToken.Refused.class);
        assertThatThrownBy(() -> RdmaToken.parse(good + ":12")).isInstanceOf(RdmaToken.Refused.class);
        assertThatThrownBy(() -> RdmaToken.parse(good + ":xx:10")).isInstanceOf(RdmaToken.Refused.class);
        assertThatThrownBy(() -> RdmaToken.parse(good + ":1:12345678901234567")).isInstanceOf(RdmaToken.Refused.class);
        assertThatThrownBy(() -> RdmaToken.parse(token(2, 1, 7, 0, 16))).isInstanceOf(RdmaToken.Refused.class);
        assertThatThrownBy(() -> RdmaToken.parse(token(1, 1, 0, 0x1000, 16))).hasMessageContaining("rkey 0");
        assertThatThrownBy(() -> RdmaToken.parse(token(1, 1, 7, -16, 32))).hasMessageContaining("wraps");
        assertThatThrownBy(() -> RdmaToken.parse(token(1, 1, 7, 0, -1))).isInstanceOf(RdmaToken.Refused.class);
        try {
            RdmaToken.parse(token(0, 1, 7, 0x1000, 16));
            throw new AssertionError("a DC token parsed");
        } catch (RdmaToken.Refused e) {
            assertThat(e.declined).isTrue();
        }
        try {
            RdmaToken.parse(good.substring(1));
        } catch (RdmaToken.Refused e) {
            assertThat(e.declined).isFalse();
        }
    }

    final ArrayHostMemory guest = new ArrayHostMemory();
    static final int RW = 0x100, RO = 0x200, WO = 0x300;
    static final long BASE = 0x7f00_0000_0000L;

    S3Client client(String opts) {
        guest.mrs.put(RW, new ArrayHostMemory.Mr(BASE, 0, 2 << 20, true, true));
        guest.mrs.put(RO, new ArrayHostMemory.Mr(BASE + (2 << 20), 2 << 20, 1 << 20, true, false));
        guest.mrs.put(WO, new ArrayHostMemory.Mr(BASE + (3 << 20), 3 << 20, 1 << 20, false, true));
        return new S3Client(S3Options.parse(opts), guest);
    }

    static Map<String, String> tok(String t) {
        return Map.of("x-amz-rdma-token", t, "x-amz-content-sha256", "UNSIGNED-PAYLOAD", "Content-Length", "0");
    }

    @Test
    void putAndGetAMebibyteByRkey() throws Exception {
        S3Client c = client("s3");
        byte[] data = S3StoreTest.random(1 << 20, 9);
        System.arraycopy(data, 0, guest.ram, 0, data.length);
        S3Client.Response put = c.send("PUT", "/ernic/rdma", tok(token(1, 5, RW, BASE, data.length)), new byte[0]);
        assertThat(put.status()).isEqualTo(200);
        assertThat(put.header("x-amz-rdma-reply")).isEqualTo("200");
        assertThat(put.header("x-amz-rdma-bytes-transferred")).isEqualTo("1048576");
        assertThat(put.header("x-amz-rdma-bytes")).isEqualTo("1048576");
        assertThat(put.header("ETag")).isEqualTo("\"" + S3StoreTest.md5(data) + "\"");
        assertThat(c.send("GET", "/ernic/rdma").body()).isEqualTo(data); // the HTTP path sees the same object

        S3Client.Response get = c.send("GET", "/ernic/rdma", tok(token(1, 5, WO, BASE + (3 << 20), 1 << 20)), new byte[0]);
        assertThat(get.status()).isEqualTo(200);
        assertThat(get.body()).isEmpty();
        assertThat(get.header("x-amz-rdma-bytes-transferred")).isEqualTo("1048576");
        assertThat(java.util.Arrays.copyOfRange(guest.ram, 3 << 20, (3 << 20) + data.length)).isEqualTo(data);
        assertThat(c.s3.get(S3Counter.RDMA_BYTES_IN)).isEqualTo(1 << 20);
        assertThat(c.s3.get(S3Counter.RDMA_BYTES_OUT)).isEqualTo(1 << 20);
        assertThat(c.s3.get(S3Counter.BODY_BYTES_IN)).isZero();
    }

    @Test
    void aTokenPutLongerThanOnePieceKeepsEveryByte() throws Exception {
        S3Client c = client("s3");
        byte[] data = S3StoreTest.random(Blob.PIECE + Blob.PIECE / 2 + 3, 4); // a whole piece and part of one
        System.arraycopy(data, 0, guest.ram, 0, data.length);
        S3Client.Response put = c.send("PUT", "/ernic/two", tok(token(1, 5, RW, BASE, data.length)), new byte[0]);
        assertThat(put.status()).isEqualTo(200);
        assertThat(put.header("ETag")).isEqualTo("\"" + S3StoreTest.md5(data) + "\"");
        assertThat(c.send("GET", "/ernic/two").body()).isEqualTo(data);
    }

    @Test
    void aWindowSmallerThanTheObjectIsAShortTransfer() {
        S3Client c = client("s3");
        c.put("/ernic/obj", S3StoreTest.random(10_000, 1));
        S3Client.Response get = c.send("GET", "/ernic/obj", tok(token(1, 5, RW, BASE + 100, 4096)), new byte[0]);
        assertThat(get.status()).isEqualTo(200);
        assertThat(get.header("x-amz-rdma-bytes-transferred")).isEqualTo("4096");
        assertThat(c.s3.get(S3Counter.RDMA_SHORT)).isEqualTo(1);
        // with a range: 206 and the range's bytes
        S3Client.Response ranged = c.send("GET", "/ernic/obj", Map.of("x-amz-rdma-token",
                token(1, 5, RW, BASE, 4096) + ":" + Long.toHexString(BASE + 8192) + ":100", "Range", "bytes=10-19"), new byte[0]);
        assertThat(ranged.status()).isEqualTo(206);
        assertThat(ranged.header("x-amz-rdma-bytes")).isEqualTo("10");
    }

    @Test
    void refusedTransfersMoveNothing() {
        S3Client c = client("s3");
        c.put("/ernic/obj", S3StoreTest.random(1000, 1));
        // GET into a region without REMOTE_WRITE, PUT from one without REMOTE_READ, an unknown rkey, past the end
        S3Client.Response ro = c.send("GET", "/ernic/obj", tok(token(1, 5, RO, BASE + (2 << 20), 1000)), new byte[0]);
        assertThat(ro.status()).isEqualTo(400);
        assertThat(ro.text()).contains("InvalidRDMAToken");
        assertThat(ro.header("x-amz-rdma-reply")).isEqualTo("400");
        assertThat(c.send("PUT", "/ernic/w", tok(token(1, 5, WO, BASE + (3 << 20), 1000)), new byte[0]).status()).isEqualTo(400);
        assertThat(c.send("PUT", "/ernic/w", tok(token(1, 5, 0x999, BASE, 1000)), new byte[0]).status()).isEqualTo(400);
        assertThat(c.send("PUT", "/ernic/w", tok(token(1, 5, RW, BASE + (2 << 20) - 10, 100)), new byte[0]).status()).isEqualTo(400);
        assertThat(c.send("GET", "/ernic/w").status()).isEqualTo(404);
        assertThat(c.s3.get(S3Counter.RDMA_REFUSED)).isEqualTo(4);
        assertThat(guest.refused).isEqualTo(4);
        // a PUT with a token and a body is not a token PUT
        assertThat(c.send("PUT", "/ernic/w", Map.of("x-amz-rdma-token", token(1, 5, RW, BASE, 4)), new byte[] {1, 2, 3, 4})
                .text()).contains("InvalidRequest");
    }

    @Test
    void malformedTokensGet400AndDcTokens501() {
        S3Client c = client("s3");
        S3Client.Response bad = c.send("PUT", "/ernic/x", tok("abc"), new byte[0]);
        assertThat(bad.status()).isEqualTo(400);
        assertThat(bad.text()).contains("<Code>InvalidRDMAToken</Code>");
        assertThat(c.send("PUT", "/ernic/x", tok(token(1, 5, 0, BASE, 10)), new byte[0]).status()).isEqualTo(400);
        S3Client.Response dc = c.send("GET", "/ernic/x", tok(token(0, 5, RW, BASE, 10)), new byte[0]);
        assertThat(dc.status()).isEqualTo(501);
        assertThat(dc.header("x-amz-rdma-reply")).isEqualTo("501");
        assertThat(c.s3.get(S3Counter.TOKEN_MALFORMED)).isEqualTo(2);
        assertThat(c.s3.get(S3Counter.RDMA_DECLINED)).isEqualTo(1);
    }

    @Test
    void compatRepliesCarryTheServerToken() throws Exception {
        S3Client c = client("s3:reply=compat");
        S3Client.Response put = c.send("PUT", "/ernic/k", tok(token(1, 5, RW, BASE, 64)), new byte[0]);
        String reply = put.header("x-amz-rdma-reply");
        assertThat(reply).startsWith("200:");
        assertThat(reply).matches("200:[0-9a-f]{88}");
        byte[] server = HexFormat.of().parseHex(reply.substring(4));
        assertThat(server[0]).isEqualTo((byte) RdmaToken.TRANSPORT_RC);
        // GID at offset 5: the store's IPv4-mapped address ::ffff:192.168.200.1
        assertThat(java.util.Arrays.copyOfRange(server, 15, 21))
                .containsExactly(0xff, 0xff, 192, 168, 200, 1);
    }

    @Test
    void uploadPartByRkey() {
        S3Client c = client("s3");
        byte[] part = S3StoreTest.random(6 << 20 >> 2, 3);
        System.arraycopy(part, 0, guest.ram, 0, part.length);
        String init = c.send("POST", "/ernic/mp?uploads").text();
        String id = init.substring(init.indexOf("<UploadId>") + 10, init.indexOf("</UploadId>"));
        S3Client.Response r = c.send("PUT", "/ernic/mp?partNumber=1&uploadId=" + id,
                tok(token(1, 5, RW, BASE, part.length)), new byte[0]);
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.header("x-amz-rdma-bytes-transferred")).isEqualTo(Integer.toString(part.length));
        String done = "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>" + r.header("ETag")
                + "</ETag></Part></CompleteMultipartUpload>";
        assertThat(c.send("POST", "/ernic/mp?uploadId=" + id, Map.of(), done.getBytes()).status()).isEqualTo(200);
        assertThat(c.send("GET", "/ernic/mp").body()).isEqualTo(part);
    }
}
