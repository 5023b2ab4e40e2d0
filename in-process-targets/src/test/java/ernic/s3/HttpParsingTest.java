package ernic.s3;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The request head parser and the chunked decoder on their own. */
class HttpParsingTest {
    static HttpHeadParser.Result parse(String head) {
        byte[] b = head.getBytes(StandardCharsets.ISO_8859_1);
        int end = HttpHeadParser.headEnd(b, b.length);
        assertThat(end).as("head end").isPositive();
        return HttpHeadParser.parse(b, end);
    }

    @Test
    void parsesARequestHead() {
        HttpHeadParser.Result r = parse("PUT /b/k%20ey?uploadId=x%2By&partNumber=3&uploads HTTP/1.1\r\n"
                + "Host: 192.168.200.1:9000\r\nContent-Length: 12\r\nX-Amz-Meta-A:  one \r\nx-amz-meta-a: two\r\n\r\n");
        HttpRequest q = r.request();
        assertThat(q.method()).isEqualTo("PUT");
        assertThat(q.path()).isEqualTo("/b/k ey");
        assertThat(q.query()).containsEntry("uploadId", "x+y").containsEntry("partNumber", "3").containsEntry("uploads", "");
        assertThat(q.contentLength).isEqualTo(12);
        assertThat(q.header("x-amz-meta-a")).isEqualTo("one,two");
        assertThat(q.keepAlive()).isTrue();
    }

    @Test
    void findsTheEndOfEachPipelinedHead() {
        byte[] b = "GET / HTTP/1.1\r\nHost: a\r\n\r\nGET /x HTTP/1.1\r\n".getBytes(StandardCharsets.ISO_8859_1);
        assertThat(HttpHeadParser.headEnd(b, b.length)).isEqualTo(27);
        byte[] bare = "GET / HTTP/1.1\nHost: a\n\n".getBytes(StandardCharsets.ISO_8859_1);
        assertThat(HttpHeadParser.headEnd(bare, bare.length)).isEqualTo(bare.length);
        assertThat(HttpHeadParser.parse(bare, bare.length).request()).isNotNull();
    }

    @Test
    void http10ClosesUnlessKeepAlive() {
        assertThat(parse("GET / HTTP/1.0\r\n\r\n").request().keepAlive()).isFalse();
        assertThat(parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").request().keepAlive()).isTrue();
        assertThat(parse("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").request().keepAlive()).isFalse();
    }

    @Test
    void refusesMalformedHeads() {
        assertThat(parse("GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n").status()).isEqualTo(400);
        assertThat(parse("GET / HTTP/1.1\r\nHost : a\r\n\r\n").status()).isEqualTo(400);
        assertThat(parse("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n").status()).isEqualTo(400);
        assertThat(parse("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n").status()).isEqualTo(400);
        assertThat(parse("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1e3\r\n\r\n").status()).isEqualTo(400);
        assertThat(parse("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n").status()).isEqualTo(400);
        assertThat(parse("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n").status()).isEqualTo(501);
        assertThat(parse("GET / HTTP/1.1\r\n\r\n").status()).isEqualTo(400); // no Host
        assertThat(parse("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n").status()).isEqualTo(400);
        assertThat(parse("GET / HTTP/2.0\r\nHost: a\r\n\r\n").status()).isEqualTo(505);
        assertThat(parse("GET /%zz HTTP/1.1\r\nHost: a\r\n\r\n").status()).isEqualTo(400);
        assertThat(parse("GET /%ff HTTP/1.1\r\nHost: a\r\n\r\n").status()).isEqualTo(400); // not UTF-8
        assertThat(parse("GET relative HTTP/1.1\r\nHost: a\r\n\r\n").status()).isEqualTo(400);
        assertThat(parse("GET  / HTTP/1.1\r\nHost: a\r\n\r\n").status()).isEqualTo(400);
        assertThat(parse("G(T / HTTP/1.1\r\nHost: a\r\n\r\n").status()).isEqualTo(400);
        assertThat(parse("GET / HTTP/1.1\r\nHost: a\u0001b\r\n\r\n").status()).isEqualTo(400);
        StringBuilder many = new StringBuilder("GET / HTTP/1.1\r\nHost: a\r\n");
        for (int i = 0; i < 100; i++) {
            many.append("x-").append(i).append(": y\r\n");
        }
        assertThat(parse(many.append("\r\n").toString()).status()).isEqualTo(431);
    }

    /** Decodes {@code in} fed in slices of {@code step} bytes. */
    static String decode(String in, int step, ChunkedDecoder[] out) {
        ByteArrayOutputStream data = new ByteArrayOutputStream();
        ChunkedDecoder d = new ChunkedDecoder((b, off, len) -> data.write(b, off, len));
        byte[] b = in.getBytes(StandardCharsets.ISO_8859_1);
        int at = 0;
        while (at < b.length && !d.done() && d.error() == null) {
            at += d.feed(b, at, Math.min(step, b.length - at));
        }
        out[0] = d;
        return data.toString(StandardCharsets.ISO_8859_1);
    }

    @Test
    void decodesChunkedBodiesInAnySlicing() {
        // RFC 9112 7.1 framing, with an extension and a trailer
        String body = "4\r\nWiki\r\n6;name=value\r\npedia \r\nE\r\nin \r\n\r\nchunks.\r\n0\r\nExpires: never\r\n\r\nNEXT";
        for (int step : new int[] {1, 2, 3, 7, 1000}) {
            ChunkedDecoder[] d = new ChunkedDecoder[1];
            assertThat(decode(body, step, d)).isEqualTo("Wikipedia in \r\n\r\nchunks.");
            assertThat(d[0].done()).isTrue();
            assertThat(d[0].trailers()).containsExactly(new HttpRequest.Field("expires", "never"));
        }
        ChunkedDecoder[] d = new ChunkedDecoder[1];
        ChunkedDecoder dec = new ChunkedDecoder((b, off, len) -> { });
        byte[] b = body.getBytes(StandardCharsets.ISO_8859_1);
        assertThat(dec.feed(b, 0, b.length)).isEqualTo(b.length - 4); // stops before the next request
        assertThat(decode("0\r\n\r\n", 1, d)).isEmpty();
        assertThat(d[0].done()).isTrue();
    }

    @Test
    void decodesAwsChunkedWithTrailingChecksums() {
        // aws-chunked as aws cli v2 sends it unsigned: sizes, data, then the checksum trailer
        String body = "5\r\nhello\r\n7\r\n world!\r\n0\r\nx-amz-checksum-crc64nvme:2RYNH6jkGOM=\r\n\r\n";
        ChunkedDecoder[] d = new ChunkedDecoder[1];
        assertThat(decode(body, 3, d)).isEqualTo("hello world!");
        assertThat(d[0].trailers()).containsExactly(new HttpRequest.Field("x-amz-checksum-crc64nvme", "2RYNH6jkGOM="));
        String signed = "5;chunk-signature=abc\r\nhello\r\n0;chunk-signature=def\r\n\r\n";
        assertThat(decode(signed, 4, d)).isEqualTo("hello");
        assertThat(d[0].done()).isTrue();
    }

    @Test
    void refusesMalformedChunks() {
        ChunkedDecoder[] d = new ChunkedDecoder[1];
        decode("zz\r\n", 1, d);
        assertThat(d[0].error()).isNotNull();
        decode("3\r\nabcX\r\n", 1, d);
        assertThat(d[0].error()).contains("CRLF");
        decode("1234567890abcdef0\r\n", 5, d);
        assertThat(d[0].error()).isNotNull(); // a size that overflows
        decode("\r\n", 1, d);
        assertThat(d[0].error()).isNotNull();
        decode("1;" + "x".repeat(5000) + "\r\n", 100, d);
        assertThat(d[0].error()).contains("too long");
        decode("0\r\nno colon here\r\n\r\n", 1, d);
        assertThat(d[0].error()).contains("trailer");
        StringBuilder big = new StringBuilder("0\r\n");
        for (int i = 0; i < 100; i++) {
            big.append("x-t-").append(i).append(": ").append("v".repeat(100)).append("\r\n");
        }
        decode(big.append("\r\n").toString(), 1000, d);
        assertThat(d[0].error()).contains("trailer section");
    }
}
