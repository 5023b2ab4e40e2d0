package ernic.s3;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Checksums against published check values, and SigV4 against the worked examples in the AWS S3 docs
 * (sig-v4-header-based-auth.html: GET Object, PUT Object, GET Bucket; sigv4-streaming.html: the chunked
 * upload), run through the whole store.
 */
class ChecksumAndSigV4Test {
    static final byte[] CHECK = "123456789".getBytes(StandardCharsets.US_ASCII);
    static final String AKID = "AKIAIOSFODNN7EXAMPLE", SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    static final String EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    static String b64(ChecksumAlgorithm a, byte[] data) {
        ChecksumAlgorithm.Running r = a.start();
        r.update(data, 0, data.length);
        return ChecksumAlgorithm.base64(r.value());
    }

    @Test
    void checksumsMatchTheirCatalogueCheckValues() {
        assertThat(b64(ChecksumAlgorithm.CRC32, CHECK)).isEqualTo("y/Q5Jg==");        // 0xCBF43926
        assertThat(b64(ChecksumAlgorithm.CRC32C, CHECK)).isEqualTo("4waSgw==");       // 0xE3069283 (RFC 3720)
        assertThat(b64(ChecksumAlgorithm.CRC64NVME, CHECK)).isEqualTo("rosUhgp5mIg="); // 0xAE8B14860A799888
        byte[] hello = "hello world!".getBytes(StandardCharsets.US_ASCII);
        assertThat(b64(ChecksumAlgorithm.CRC64NVME, hello)).isEqualTo("2RYNH6jkGOM="); // crc64fast-nvme's example
        assertThat(b64(ChecksumAlgorithm.CRC32, hello)).isEqualTo("A7TCbQ==");
        assertThat(b64(ChecksumAlgorithm.SHA1, hello)).isEqualTo("QwzjTQIHJO11oZbfwq1nx3dy0Wk=");
        assertThat(b64(ChecksumAlgorithm.SHA256, hello)).isEqualTo("dQnlvaDHYtK6x/kNdYtbImP6Acy8VCq1498WO+CObKk=");
        // fed in pieces, the same
        ChecksumAlgorithm.Running r = ChecksumAlgorithm.CRC64NVME.start();
        r.update(hello, 0, 5);
        r.update(hello, 5, 7);
        assertThat(ChecksumAlgorithm.base64(r.value())).isEqualTo("2RYNH6jkGOM=");
        assertThat(ChecksumAlgorithm.named("x-amz-checksum-crc32c")).isEqualTo(ChecksumAlgorithm.CRC32C);
        assertThat(ChecksumAlgorithm.named("CRC64NVME")).isEqualTo(ChecksumAlgorithm.CRC64NVME);
        assertThat(ChecksumAlgorithm.named("md4")).isNull();
    }

    private static S3Client awsExampleStore(String bucket) {
        return new S3Client(S3Options.parse("s3:bucket=" + bucket + ",access=" + AKID + ",secret=" + SECRET), null,
                Clock.fixed(Instant.parse("2013-05-24T00:00:00Z"), ZoneOffset.UTC));
    }

    private static String auth(String signedHeaders, String signature) {
        return "AWS4-HMAC-SHA256 Credential=" + AKID + "/20130524/us-east-1/s3/aws4_request,SignedHeaders="
                + signedHeaders + ",Signature=" + signature;
    }

    @Test
    void headerSignaturesOfTheAwsExamplesVerify() {
        S3Client c = awsExampleStore("examplebucket");
        Map<String, String> put = new LinkedHashMap<>();
        put.put("Host", "examplebucket.s3.amazonaws.com");
        put.put("Date", "Fri, 24 May 2013 00:00:00 GMT");
        put.put("x-amz-date", "20130524T000000Z");
        put.put("x-amz-storage-class", "REDUCED_REDUNDANCY");
        put.put("x-amz-content-sha256", "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
        put.put("Authorization", auth("date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class",
                "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"));
        byte[] body = "Welcome to Amazon S3.".getBytes(StandardCharsets.US_ASCII);
        assertThat(c.send("PUT", "/test%24file.text", put, body).status()).isEqualTo(200);
        assertThat(c.store.store.bucket("examplebucket").objects).containsKey("test$file.text");

        Map<String, String> get = new LinkedHashMap<>();
        get.put("Host", "examplebucket.s3.amazonaws.com");
        get.put("Range", "bytes=0-9");
        get.put("x-amz-content-sha256", EMPTY);
        get.put("x-amz-date", "20130524T000000Z");
        get.put("Authorization", auth("host;range;x-amz-content-sha256;x-amz-date",
                "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"));
        // the signature is good, the key is not there: 404, not 403
        assertThat(c.send("GET", "/test.txt", get, new byte[0]).text()).contains("NoSuchKey");

        Map<String, String> list = new LinkedHashMap<>();
        list.put("Host", "examplebucket.s3.amazonaws.com");
        list.put("x-amz-content-sha256", EMPTY);
        list.put("x-amz-date", "20130524T000000Z");
        list.put("Authorization", auth("host;x-amz-content-sha256;x-amz-date",
                "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"));
        assertThat(c.send("GET", "/?max-keys=2&prefix=J", list, new byte[0]).status()).isEqualTo(200);

        // one character of the signature changed
        get.put("Authorization", auth("host;range;x-amz-content-sha256;x-amz-date",
                "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb42"));
        S3Client.Response bad = c.send("GET", "/test.txt", get, new byte[0]);
        assertThat(bad.status()).isEqualTo(403);
        assertThat(bad.text()).contains("SignatureDoesNotMatch");
        // a signed header changed after signing
        list.put("x-amz-date", "20130524T000001Z");
        assertThat(c.send("GET", "/?max-keys=2&prefix=J", list, new byte[0]).text()).contains("SignatureDoesNotMatch");
        // the body is not what the signed hash says
        put.put("Date", "Fri, 24 May 2013 00:00:00 GMT");
        S3Client.Response swapped = c.send("PUT", "/test%24file.text", put, "Welcome to Amazon S4.".getBytes(StandardCharsets.US_ASCII));
        assertThat(swapped.text()).contains("XAmzContentSHA256Mismatch");
        assertThat(c.s3.get(S3Counter.SIGNATURE_MISMATCH)).isEqualTo(2);
    }

    @Test
    void presignedUrlOfTheAwsExampleVerifiesUntilItExpires() {
        String url = "/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2F"
                + "us-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
                + "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404";
        Map<String, String> host = Map.of("Host", "examplebucket.s3.amazonaws.com");
        S3Client c = awsExampleStore("examplebucket");
        assertThat(c.send("GET", url, host, new byte[0]).text()).contains("NoSuchKey"); // signature good
        assertThat(c.send("GET", url.replace("d404", "d405"), host, new byte[0]).text()).contains("SignatureDoesNotMatch");
        S3Client late = new S3Client(S3Options.parse("s3:bucket=examplebucket,access=" + AKID + ",secret=" + SECRET), null,
                Clock.fixed(Instant.parse("2013-05-25T00:00:01Z"), ZoneOffset.UTC));
        assertThat(late.send("GET", url, host, new byte[0]).text()).contains("Request has expired");
    }

    @Test
    void unsignedAndWrongKeyRequestsAreRefusedWhenKeysAreConfigured() {
        S3Client c = awsExampleStore("examplebucket");
        assertThat(c.send("GET", "/examplebucket").status()).isEqualTo(403);
        Map<String, String> h = new LinkedHashMap<>();
        h.put("x-amz-content-sha256", EMPTY);
        h.put("x-amz-date", "20130524T000000Z");
        h.put("Authorization", "AWS4-HMAC-SHA256 Credential=OTHERKEY/20130524/us-east-1/s3/aws4_request,SignedHeaders=host,Signature=00");
        assertThat(c.send("GET", "/examplebucket", h, new byte[0]).text()).contains("InvalidAccessKeyId");
        h.put("Authorization", "AWS AKIAIOSFODNN7EXAMPLE:frJIUN8DYpKDtOLCwo//yllqDzg=");
        assertThat(c.send("GET", "/examplebucket", h, new byte[0]).status()).isEqualTo(400);
        // without keys, any signature is accepted unchecked
        S3Client open = new S3Client();
        h.put("Authorization", auth("host", "00"));
        assertThat(open.send("GET", "/ernic", h, new byte[0]).status()).isEqualTo(200);
    }

    /** The sigv4-streaming.html example: 65 KiB of 'a' in 64 KiB chunks with chained chunk signatures. */
    static byte[] streamingBody(char last) {
        StringBuilder sb = new StringBuilder();
        sb.append("10000;chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648\r\n");
        sb.append("a".repeat(65536)).append("\r\n");
        sb.append("400;chunk-signature=0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497\r\n");
        sb.append("a".repeat(1023)).append(last).append("\r\n");
        sb.append("0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9\r\n\r\n");
        return sb.toString().getBytes(StandardCharsets.US_ASCII);
    }

    static Map<String, String> streamingHeaders() {
        Map<String, String> h = new LinkedHashMap<>();
        h.put("Host", "s3.amazonaws.com");
        h.put("x-amz-date", "20130524T000000Z");
        h.put("x-amz-storage-class", "REDUCED_REDUNDANCY");
        h.put("Authorization", auth("content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;"
                + "x-amz-decoded-content-length;x-amz-storage-class",
                "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"));
        h.put("x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD");
        h.put("Content-Encoding", "aws-chunked");
        h.put("x-amz-decoded-content-length", "66560");
        h.put("Content-Length", "66824");
        return h;
    }

    @Test
    void streamingChunkSignaturesOfTheAwsExampleVerify() {
        S3Client c = awsExampleStore("examplebucket");
        byte[] body = streamingBody('a');
        assertThat(body).hasSize(66824);
        S3Client.Response ok = c.send("PUT", "/examplebucket/chunkObject.txt", streamingHeaders(), body);
        assertThat(ok.status()).isEqualTo(200);
        assertThat(c.store.store.bucket("examplebucket").objects.get("chunkObject.txt").data().size()).isEqualTo(66560);
        assertThat(c.store.store.bucket("examplebucket").objects.get("chunkObject.txt").contentType())
                .isEqualTo("binary/octet-stream");
        // one byte of the second chunk changed: its signature no longer holds
        S3Client.Response tampered = c.send("PUT", "/examplebucket/chunkObject.txt", streamingHeaders(), streamingBody('b'));
        assertThat(tampered.status()).isEqualTo(403);
        assertThat(tampered.text()).contains("SignatureDoesNotMatch");
    }
}
