package ernic.s3;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Uploads framed the ways clients send them (Content-Length, chunked, aws-chunked with a trailing checksum
 * as aws cli v2 and boto3 do by default), their checksums verified; and malformed requests refused.
 */
class BodyEncodingTest {
    final S3Client c = new S3Client();
    static final byte[] HELLO = "hello world!".getBytes(StandardCharsets.US_ASCII);

    static byte[] awsChunked(byte[] data, int chunk, String trailer) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int at = 0; at < data.length; at += chunk) {
            int n = Math.min(chunk, data.length - at);
            out.writeBytes((Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(data, at, n);
            out.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
        }
        out.writeBytes(("0\r\n" + trailer + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        return out.toByteArray();
    }

    static Map<String, String> awsChunkedHeaders(String trailerName, int decoded) {
        Map<String, String> h = new LinkedHashMap<>();
        h.put("Content-Encoding", "aws-chunked");
        h.put("x-amz-content-sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER");
        h.put("x-amz-trailer", trailerName);
        h.put("x-amz-decoded-content-length", Integer.toString(decoded));
        return h;
    }

    @Test
    void awsChunkedUploadsWithEachChecksumTrailer() {
        String[][] cases = {
                {"x-amz-checksum-crc32", "A7TCbQ=="},
                {"x-amz-checksum-crc64nvme", "2RYNH6jkGOM="},
                {"x-amz-checksum-sha1", "QwzjTQIHJO11oZbfwq1nx3dy0Wk="},
                {"x-amz-checksum-sha256", "dQnlvaDHYtK6x/kNdYtbImP6Acy8VCq1498WO+CObKk="},
        };
        for (String[] tc : cases) {
            S3Client.Response r = c.send("PUT", "/ernic/t", awsChunkedHeaders(tc[0], HELLO.length),
                    awsChunked(HELLO, 5, tc[0] + ":" + tc[1]));
            assertThat(r.status()).as(tc[0]).isEqualTo(200);
            assertThat(r.header(tc[0])).isEqualTo(tc[1]);
            assertThat(c.send("GET", "/ernic/t").body()).isEqualTo(HELLO);
            assertThat(c.send("HEAD", "/ernic/t").header("Content-Encoding")).isNull(); // aws-chunked is not stored
        }
        S3Client.Response bad = c.send("PUT", "/ernic/t", awsChunkedHeaders("x-amz-checksum-crc32", HELLO.length),
                awsChunked(HELLO, 5, "x-amz-checksum-crc32:AAAAAA=="));
        assertThat(bad.status()).isEqualTo(400);
        assertThat(bad.text()).contains("BadDigest");
        assertThat(c.s3.get(S3Counter.CHECKSUM_MISMATCH)).isEqualTo(1);
        S3Client.Response missing = c.send("PUT", "/ernic/t", awsChunkedHeaders("x-amz-checksum-crc32", HELLO.length),
                awsChunked(HELLO, 5, "x-amz-other:1"));
        assertThat(missing.status()).isEqualTo(400);
        S3Client.Response wrongLength = c.send("PUT", "/ernic/t", awsChunkedHeaders("x-amz-checksum-crc32", 11),
                awsChunked(HELLO, 5, "x-amz-checksum-crc32:A7TCbQ=="));
        assertThat(wrongLength.text()).contains("IncompleteBody");
        S3Client.Response unknown = c.send("PUT", "/ernic/t", awsChunkedHeaders("x-amz-checksum-md4", HELLO.length),
                awsChunked(HELLO, 5, "x-amz-checksum-md4:x"));
        assertThat(unknown.text()).contains("InvalidRequest");
    }

    @Test
    void checksumHeadersAreVerified() {
        assertThat(c.send("PUT", "/ernic/h", Map.of("x-amz-checksum-crc32c", "4waSgw=="),
                "123456789".getBytes(StandardCharsets.US_ASCII)).status()).isEqualTo(200);
        assertThat(c.send("PUT", "/ernic/h", Map.of("x-amz-checksum-crc32c", "4waSgw=="),
                "123456780".getBytes(StandardCharsets.US_ASCII)).text()).contains("BadDigest");
    }

    @Test
    void chunkedTransferCodingAndAwsChunkedInsideIt() {
        Map<String, String> h = new LinkedHashMap<>();
        h.put("Transfer-Encoding", "chunked");
        byte[] framed = awsChunked(HELLO, 4, "").clone();
        // plain chunked (the trailer section here is empty)
        String plain = new String(framed, StandardCharsets.US_ASCII).replace("0\r\n\r\n\r\n", "0\r\n\r\n");
        assertThat(c.send("PUT", "/ernic/ch", h, plain.getBytes(StandardCharsets.US_ASCII)).status()).isEqualTo(200);
        assertThat(c.send("GET", "/ernic/ch").body()).isEqualTo(HELLO);
        // aws-chunked carried in chunked transfer coding, one transport chunk
        byte[] inner = awsChunked(HELLO, 6, "x-amz-checksum-crc32:A7TCbQ==");
        ByteArrayOutputStream outer = new ByteArrayOutputStream();
        outer.writeBytes((Integer.toHexString(inner.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
        outer.writeBytes(inner);
        outer.writeBytes("\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        Map<String, String> both = awsChunkedHeaders("x-amz-checksum-crc32", HELLO.length);
        both.put("Transfer-Encoding", "chunked");
        assertThat(c.send("PUT", "/ernic/ch2", both, outer.toByteArray()).status()).isEqualTo(200);
        assertThat(c.send("GET", "/ernic/ch2").body()).isEqualTo(HELLO);
    }

    @Test
    void aLargeUploadArrivesWhole() {
        byte[] big = S3StoreTest.random(3 << 20, 5);
        assertThat(c.send("PUT", "/ernic/big", Map.of("Expect", "100-continue"), big).status()).isEqualTo(200);
        assertThat(c.send("GET", "/ernic/big").body()).isEqualTo(big);
    }

    @Test
    void malformedRequestsGet400AndTheConnectionCloses() {
        S3Client.Response r = c.raw("NOT A REQUEST\r\n\r\n".getBytes(StandardCharsets.US_ASCII), false);
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.header("Connection")).isEqualTo("close");
        assertThat(r.text()).contains("<Error>");
        c.rig.run(() -> c.tcp.peerFin, 1000);
        assertThat(c.http.get(HttpCounter.MALFORMED)).isEqualTo(1);

        c.reconnect();
        String hugeHead = "GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + "x".repeat(20_000) + "\r\n\r\n";
        assertThat(c.raw(hugeHead.getBytes(StandardCharsets.US_ASCII), false).status()).isEqualTo(431);

        c.reconnect();
        String smuggle = "POST /ernic?delete HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
        assertThat(c.raw(smuggle.getBytes(StandardCharsets.US_ASCII), false).status()).isEqualTo(400);

        c.reconnect();
        String badChunk = "PUT /ernic/x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nqq\r\n";
        S3Client.Response chunk = c.raw(badChunk.getBytes(StandardCharsets.US_ASCII), false);
        assertThat(chunk.status()).isEqualTo(400);
        assertThat(chunk.text()).contains("IncompleteBody");

        c.reconnect();
        String binary = "GET /\u0000\u0001 HTTP/1.1\r\nHost: a\r\n\r\n";
        assertThat(c.raw(binary.getBytes(StandardCharsets.ISO_8859_1), false).status()).isEqualTo(400);
        assertThat(c.store.store.objectCount()).isZero();
    }

    @Test
    void aBodyLargerThanAllowedStopsEarly() {
        S3Client small = new S3Client(S3Options.parse("size=1M"), null);
        Map<String, String> h = new LinkedHashMap<>();
        h.put("Transfer-Encoding", "chunked");
        byte[] framed = awsChunked(new byte[1_100_000], 100_000, "");
        String plain = new String(framed, StandardCharsets.ISO_8859_1).replace("0\r\n\r\n\r\n", "0\r\n\r\n");
        S3Client.Response r = small.send("PUT", "/ernic/too-big", h, plain.getBytes(StandardCharsets.ISO_8859_1));
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.text()).contains("EntityTooLarge");
        assertThat(small.store.store.inFlight()).isZero(); // the body's memory went back
    }
}
