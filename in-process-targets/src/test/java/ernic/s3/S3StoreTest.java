package ernic.s3;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Every S3 operation and error, over HTTP over TCP over the simulated link. */
class S3StoreTest {
    final S3Client c = new S3Client();

    static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    static String md5(byte[]... parts) throws Exception {
        MessageDigest d = MessageDigest.getInstance("MD5");
        for (byte[] p : parts) {
            d.update(p);
        }
        return HexFormat.of().formatHex(d.digest());
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void putGetHeadDelete() throws Exception {
        byte[] data = random(100_000, 1);
        S3Client.Response put = c.send("PUT", "/ernic/dir/obj.bin",
                Map.of("Content-Type", "application/x-test", "x-amz-meta-colour", "blue"), data);
        assertThat(put.status()).isEqualTo(200);
        assertThat(put.header("ETag")).isEqualTo("\"" + md5(data) + "\"");

        S3Client.Response get = c.send("GET", "/ernic/dir/obj.bin");
        assertThat(get.status()).isEqualTo(200);
        assertThat(get.body()).isEqualTo(data);
        assertThat(get.header("Content-Type")).isEqualTo("application/x-test");
        assertThat(get.header("x-amz-meta-colour")).isEqualTo("blue");
        assertThat(get.header("Last-Modified")).isEqualTo("Tue, 01 Dec 2026 12:00:00 GMT");
        assertThat(get.header("x-amz-request-id")).isNotBlank();

        S3Client.Response head = c.send("HEAD", "/ernic/dir/obj.bin");
        assertThat(head.status()).isEqualTo(200);
        assertThat(head.header("Content-Length")).isEqualTo("100000");
        assertThat(head.body()).isEmpty();

        assertThat(c.send("DELETE", "/ernic/dir/obj.bin").status()).isEqualTo(204);
        S3Client.Response gone = c.send("GET", "/ernic/dir/obj.bin");
        assertThat(gone.status()).isEqualTo(404);
        assertThat(gone.text()).contains("<Code>NoSuchKey</Code>").contains("<Key>dir/obj.bin</Key>");
        S3Client.Response headGone = c.send("HEAD", "/ernic/dir/obj.bin");
        assertThat(headGone.status()).isEqualTo(404);
        assertThat(headGone.body()).isEmpty();
        assertThat(c.send("DELETE", "/ernic/dir/obj.bin").status()).isEqualTo(204); // missing key: 204 too
        assertThat(c.http.get(HttpCounter.PUT)).isEqualTo(1);
        assertThat(c.http.get(HttpCounter.STATUS_404)).isEqualTo(2);
        assertThat(c.s3.get(S3Counter.BODY_BYTES_IN)).isEqualTo(100_000);
        assertThat(c.s3.get(S3Counter.BODY_BYTES_OUT)).isEqualTo(100_000);
    }

    @Test
    void emptyObjectAndOddKeys() throws Exception {
        assertThat(c.put("/ernic/empty", new byte[0]).header("ETag")).isEqualTo("\"" + md5() + "\"");
        assertThat(c.send("GET", "/ernic/empty").body()).isEmpty();
        assertThat(c.put("/ernic/a%20b%2Bc/%E2%82%AC", utf8("x")).status()).isEqualTo(200);
        assertThat(c.send("GET", "/ernic/a%20b+c/%E2%82%AC").text()).isEqualTo("x");
        String longKey = "k".repeat(1025);
        assertThat(c.put("/ernic/" + longKey, utf8("x")).text()).contains("KeyTooLongError");
    }

    @Test
    void ranges() {
        byte[] data = utf8("0123456789abcdefghij");
        c.put("/ernic/r", data);
        S3Client.Response r = c.send("GET", "/ernic/r", Map.of("Range", "bytes=0-9"), new byte[0]);
        assertThat(r.status()).isEqualTo(206);
        assertThat(r.text()).isEqualTo("0123456789");
        assertThat(r.header("Content-Range")).isEqualTo("bytes 0-9/20");
        assertThat(c.send("GET", "/ernic/r", Map.of("Range", "bytes=15-"), new byte[0]).text()).isEqualTo("fghij");
        assertThat(c.send("GET", "/ernic/r", Map.of("Range", "bytes=-3"), new byte[0]).text()).isEqualTo("hij");
        assertThat(c.send("GET", "/ernic/r", Map.of("Range", "bytes=18-100"), new byte[0]).text()).isEqualTo("ij");
        S3Client.Response bad = c.send("GET", "/ernic/r", Map.of("Range", "bytes=20-"), new byte[0]);
        assertThat(bad.status()).isEqualTo(416);
        assertThat(bad.text()).contains("<Code>InvalidRange</Code>");
        assertThat(bad.header("Content-Range")).isEqualTo("bytes */20");
        // not a single well-formed range: the whole object (RFC 9110 14.2)
        assertThat(c.send("GET", "/ernic/r", Map.of("Range", "bytes=0-1,4-5"), new byte[0]).status()).isEqualTo(200);
        assertThat(c.send("GET", "/ernic/r", Map.of("Range", "bytes=5-2"), new byte[0]).status()).isEqualTo(200);
        S3Client.Response h = c.send("HEAD", "/ernic/r", Map.of("Range", "bytes=2-4"), new byte[0]);
        assertThat(h.status()).isEqualTo(206);
        assertThat(h.header("Content-Length")).isEqualTo("3");
    }

    @Test
    void conditionalGets() {
        String etag = c.put("/ernic/c", utf8("x")).header("ETag");
        assertThat(c.send("GET", "/ernic/c", Map.of("If-None-Match", etag), new byte[0]).status()).isEqualTo(304);
        assertThat(c.send("GET", "/ernic/c", Map.of("If-Match", "\"nope\""), new byte[0]).status()).isEqualTo(412);
        assertThat(c.send("GET", "/ernic/c", Map.of("If-Match", etag), new byte[0]).status()).isEqualTo(200);
    }

    @Test
    void buckets() {
        S3Client.Response list = c.send("GET", "/");
        assertThat(list.text()).contains("<ListAllMyBucketsResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">")
                .contains("<Name>ernic</Name>").contains("<CreationDate>2026-12-01T12:00:00.000Z</CreationDate>");
        assertThat(c.send("PUT", "/second").status()).isEqualTo(200);
        assertThat(c.send("PUT", "/third", Map.of(), utf8("<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><LocationConstraint>eu-west-1</LocationConstraint></CreateBucketConfiguration>")).status()).isEqualTo(200);
        S3Client.Response dup = c.send("PUT", "/second");
        assertThat(dup.status()).isEqualTo(409);
        assertThat(dup.text()).contains("BucketAlreadyOwnedByYou");
        assertThat(c.send("PUT", "/Bad_Name").text()).contains("InvalidBucketName");
        assertThat(c.send("GET", "/").text()).contains("<Name>second</Name>").contains("<Name>third</Name>");
        assertThat(c.send("HEAD", "/second").status()).isEqualTo(200);
        assertThat(c.send("HEAD", "/missing").status()).isEqualTo(404);
        assertThat(c.send("GET", "/missing").text()).contains("<Code>NoSuchBucket</Code>").contains("<BucketName>missing</BucketName>");
        assertThat(c.put("/missing/k", utf8("x")).status()).isEqualTo(404);
        c.put("/second/k", utf8("x"));
        S3Client.Response notEmpty = c.send("DELETE", "/second");
        assertThat(notEmpty.status()).isEqualTo(409);
        assertThat(notEmpty.text()).contains("BucketNotEmpty");
        c.send("DELETE", "/second/k");
        assertThat(c.send("DELETE", "/second").status()).isEqualTo(204);
        assertThat(c.send("HEAD", "/second").status()).isEqualTo(404);
        assertThat(c.send("GET", "/ernic?location").text()).contains("LocationConstraint");
    }

    @Test
    void listObjectsV1AndV2() {
        for (String k : new String[] {"a/1", "a/2", "a/b/3", "b", "c/4", "c/5", "d"}) {
            c.put("/ernic/" + k, utf8(k));
        }
        String v1 = c.send("GET", "/ernic?delimiter=/").text();
        assertThat(v1).contains("<Key>b</Key>").contains("<Key>d</Key>")
                .contains("<CommonPrefixes><Prefix>a/</Prefix></CommonPrefixes>")
                .contains("<CommonPrefixes><Prefix>c/</Prefix></CommonPrefixes>")
                .doesNotContain("<Key>a/1</Key>").contains("<IsTruncated>false</IsTruncated>");
        String prefixed = c.send("GET", "/ernic?prefix=a/&delimiter=/").text();
        assertThat(prefixed).contains("<Key>a/1</Key>").contains("<Key>a/2</Key>")
                .contains("<Prefix>a/b/</Prefix>").doesNotContain("<Key>a/b/3</Key>");
        // v1 pages with marker: two at a time, prefixes count as entries
        String p1 = c.send("GET", "/ernic?delimiter=/&max-keys=2").text();
        assertThat(p1).contains("<IsTruncated>true</IsTruncated>").contains("<NextMarker>b</NextMarker>");
        String p2 = c.send("GET", "/ernic?delimiter=/&max-keys=2&marker=b").text();
        assertThat(p2).contains("<Prefix>c/</Prefix>").contains("<Key>d</Key>").doesNotContain("<Key>b</Key>");
        // v2 pages with continuation tokens until done, every key once
        StringBuilder keys = new StringBuilder();
        String token = null;
        for (int page = 0; page < 10; page++) {
            String q = "/ernic?list-type=2&max-keys=3" + (token == null ? "" : "&continuation-token=" + token);
            String x = c.send("GET", q).text();
            for (String part : x.split("<Key>")) {
                if (part.contains("</Key>")) {
                    keys.append(part, 0, part.indexOf("</Key>")).append(',');
                }
            }
            assertThat(x).contains("<KeyCount>");
            if (x.contains("<IsTruncated>false</IsTruncated>")) {
                token = null;
                break;
            }
            token = x.substring(x.indexOf("<NextContinuationToken>") + 23, x.indexOf("</NextContinuationToken>"));
        }
        assertThat(token).isNull();
        assertThat(keys.toString()).isEqualTo("a/1,a/2,a/b/3,b,c/4,c/5,d,");
        assertThat(c.send("GET", "/ernic?list-type=2&start-after=c/4").text()).contains("<Key>c/5</Key>")
                .doesNotContain("<Key>c/4</Key>");
        assertThat(c.send("GET", "/ernic?list-type=2&continuation-token=***").status()).isEqualTo(400);
        assertThat(c.send("GET", "/ernic?max-keys=lots").text()).contains("InvalidArgument");
        c.put("/ernic/sp%20ace", utf8("x"));
        assertThat(c.send("GET", "/ernic?list-type=2&encoding-type=url&prefix=sp").text())
                .contains("<Key>sp%20ace</Key>").contains("<EncodingType>url</EncodingType>");
    }

    @Test
    void copyObject() throws Exception {
        byte[] data = random(5000, 3);
        c.send("PUT", "/ernic/src", Map.of("Content-Type", "text/x-src", "x-amz-meta-a", "1"), data);
        c.send("PUT", "/other");
        S3Client.Response copy = c.send("PUT", "/other/dst", Map.of("x-amz-copy-source", "/ernic/src"), new byte[0]);
        assertThat(copy.status()).isEqualTo(200);
        assertThat(copy.text()).contains("<CopyObjectResult").contains("<ETag>&quot;" + md5(data) + "&quot;</ETag>");
        S3Client.Response got = c.send("GET", "/other/dst");
        assertThat(got.body()).isEqualTo(data);
        assertThat(got.header("x-amz-meta-a")).isEqualTo("1");
        assertThat(got.header("Content-Type")).isEqualTo("text/x-src");
        S3Client.Response replaced = c.send("PUT", "/ernic/src", Map.of("x-amz-copy-source", "ernic/src",
                "x-amz-metadata-directive", "REPLACE", "Content-Type", "text/new"), new byte[0]);
        assertThat(replaced.status()).isEqualTo(200);
        assertThat(c.send("HEAD", "/ernic/src").header("Content-Type")).isEqualTo("text/new");
        assertThat(c.send("PUT", "/ernic/src", Map.of("x-amz-copy-source", "/ernic/src"), new byte[0]).text())
                .contains("InvalidRequest");
        assertThat(c.send("PUT", "/ernic/x", Map.of("x-amz-copy-source", "/ernic/none"), new byte[0]).status())
                .isEqualTo(404);
    }

    @Test
    void deleteObjects() {
        c.put("/ernic/d1", utf8("1"));
        c.put("/ernic/d2", utf8("2"));
        String body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                + "<Object><Key>d1</Key></Object><Object><Key>d2</Key></Object><Object><Key>never</Key></Object></Delete>";
        S3Client.Response r = c.send("POST", "/ernic?delete", Map.of(), utf8(body));
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.text()).contains("<Deleted><Key>d1</Key></Deleted>").contains("<Deleted><Key>never</Key></Deleted>");
        assertThat(c.send("GET", "/ernic/d2").status()).isEqualTo(404);
        String quiet = "<Delete><Quiet>true</Quiet><Object><Key>x</Key></Object></Delete>";
        assertThat(c.send("POST", "/ernic?delete", Map.of(), utf8(quiet)).text()).doesNotContain("<Deleted>");
        assertThat(c.send("POST", "/ernic?delete", Map.of(), utf8("<Delete><Object>")).text()).contains("MalformedXML");
        String xxe = "<?xml version=\"1.0\"?><!DOCTYPE d [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><Delete><Object><Key>&e;</Key></Object></Delete>";
        assertThat(c.send("POST", "/ernic?delete", Map.of(), utf8(xxe)).text()).contains("MalformedXML");
    }

    @Test
    void multipartUpload() throws Exception {
        byte[] p1 = random(5 << 20, 10), p2 = random(3000, 11);
        String init = c.send("POST", "/ernic/big?uploads", Map.of("Content-Type", "video/x-test"), new byte[0]).text();
        assertThat(init).contains("<InitiateMultipartUploadResult").contains("<Key>big</Key>");
        String id = init.substring(init.indexOf("<UploadId>") + 10, init.indexOf("</UploadId>"));
        S3Client.Response r1 = c.send("PUT", "/ernic/big?partNumber=1&uploadId=" + id, Map.of(), p1);
        S3Client.Response r2 = c.send("PUT", "/ernic/big?partNumber=2&uploadId=" + id, Map.of(), p2);
        assertThat(r1.header("ETag")).isEqualTo("\"" + md5(p1) + "\"");
        String parts = c.send("GET", "/ernic/big?uploadId=" + id).text();
        assertThat(parts).contains("<PartNumber>1</PartNumber>").contains("<Size>3000</Size>");
        assertThat(c.send("GET", "/ernic?uploads").text()).contains("<UploadId>" + id + "</UploadId>");

        String wrongOrder = "<CompleteMultipartUpload><Part><PartNumber>2</PartNumber><ETag>" + r2.header("ETag")
                + "</ETag></Part><Part><PartNumber>1</PartNumber><ETag>" + r1.header("ETag") + "</ETag></Part></CompleteMultipartUpload>";
        assertThat(c.send("POST", "/ernic/big?uploadId=" + id, Map.of(), utf8(wrongOrder)).text()).contains("InvalidPartOrder");
        String wrongTag = "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\"00\"</ETag></Part></CompleteMultipartUpload>";
        assertThat(c.send("POST", "/ernic/big?uploadId=" + id, Map.of(), utf8(wrongTag)).text()).contains("InvalidPart");
        String tooSmall = "<CompleteMultipartUpload><Part><PartNumber>2</PartNumber><ETag>" + r2.header("ETag")
                + "</ETag></Part><Part><PartNumber>3</PartNumber><ETag>x</ETag></Part></CompleteMultipartUpload>";
        assertThat(c.send("POST", "/ernic/big?uploadId=" + id, Map.of(), utf8(tooSmall)).status()).isEqualTo(400);

        String complete = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Part><ETag>"
                + r1.header("ETag") + "</ETag><PartNumber>1</PartNumber></Part><Part><ETag>" + r2.header("ETag")
                + "</ETag><PartNumber>2</PartNumber></Part></CompleteMultipartUpload>";
        S3Client.Response done = c.send("POST", "/ernic/big?uploadId=" + id, Map.of(), utf8(complete));
        assertThat(done.status()).isEqualTo(200);
        MessageDigest d = MessageDigest.getInstance("MD5");
        d.update(HexFormat.of().parseHex(md5(p1)));
        d.update(HexFormat.of().parseHex(md5(p2)));
        String etag = HexFormat.of().formatHex(d.digest()) + "-2";
        assertThat(done.text()).contains("<ETag>&quot;" + etag + "&quot;</ETag>");
        S3Client.Response got = c.send("GET", "/ernic/big");
        assertThat(got.header("ETag")).isEqualTo("\"" + etag + "\"");
        assertThat(got.header("Content-Type")).isEqualTo("video/x-test");
        byte[] all = new byte[p1.length + p2.length];
        System.arraycopy(p1, 0, all, 0, p1.length);
        System.arraycopy(p2, 0, all, p1.length, p2.length);
        assertThat(got.body()).isEqualTo(all);
        // a range across the part boundary
        S3Client.Response across = c.send("GET", "/ernic/big", Map.of("Range", "bytes=" + (p1.length - 2) + "-" + (p1.length + 1)), new byte[0]);
        assertThat(across.body()).containsExactly(p1[p1.length - 2], p1[p1.length - 1], p2[0], p2[1]);
        assertThat(c.send("GET", "/ernic/big?uploadId=" + id).text()).contains("NoSuchUpload");
        assertThat(c.s3.get(S3Counter.BYTES_STORED)).isEqualTo(all.length);
    }

    @Test
    void multipartErrorsAbortAndPartCopy() {
        String init = c.send("POST", "/ernic/m?uploads").text();
        String id = init.substring(init.indexOf("<UploadId>") + 10, init.indexOf("</UploadId>"));
        assertThat(c.send("PUT", "/ernic/m?partNumber=0&uploadId=" + id, Map.of(), utf8("x")).text()).contains("InvalidArgument");
        assertThat(c.send("PUT", "/ernic/m?partNumber=1&uploadId=nope", Map.of(), utf8("x")).status()).isEqualTo(404);
        c.put("/ernic/source", utf8("0123456789"));
        S3Client.Response pc = c.send("PUT", "/ernic/m?partNumber=1&uploadId=" + id,
                Map.of("x-amz-copy-source", "/ernic/source", "x-amz-copy-source-range", "bytes=2-5"), new byte[0]);
        assertThat(pc.text()).contains("<CopyPartResult");
        String complete = "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"
                + pc.text().substring(pc.text().indexOf("<ETag>") + 6, pc.text().indexOf("</ETag>")).replace("&quot;", "\"")
                + "</ETag></Part></CompleteMultipartUpload>";
        assertThat(c.send("POST", "/ernic/m?uploadId=" + id, Map.of(), utf8(complete)).status()).isEqualTo(200);
        assertThat(c.send("GET", "/ernic/m").text()).isEqualTo("2345");

        String init2 = c.send("POST", "/ernic/n?uploads").text();
        String id2 = init2.substring(init2.indexOf("<UploadId>") + 10, init2.indexOf("</UploadId>"));
        c.send("PUT", "/ernic/n?partNumber=1&uploadId=" + id2, Map.of(), random(1000, 1));
        assertThat(c.send("DELETE", "/ernic/n?uploadId=" + id2).status()).isEqualTo(204);
        assertThat(c.send("DELETE", "/ernic/n?uploadId=" + id2).text()).contains("NoSuchUpload");
        assertThat(c.store.store.used()).isEqualTo(10 + 4);
    }

    @Test
    void capacityLimits() {
        S3Client small = new S3Client(S3Options.parse("s3:size=1M,objects=2,maxpart=5M"), null);
        assertThat(small.put("/ernic/a", new byte[600_000]).status()).isEqualTo(200);
        S3Client.Response full = small.put("/ernic/b", new byte[600_000]);
        assertThat(full.status()).isEqualTo(507);
        assertThat(full.text()).contains("InsufficientStorage");
        assertThat(small.put("/ernic/a", new byte[700_000]).status()).isEqualTo(200); // replacing frees the old
        assertThat(small.put("/ernic/b", new byte[10]).status()).isEqualTo(200);
        S3Client.Response many = small.put("/ernic/c", new byte[10]);
        assertThat(many.status()).isEqualTo(507);
        S3Client.Response huge = small.send("PUT", "/ernic/z", Map.of("Content-Length", "2000000", "Expect", "100-continue"), new byte[0]);
        assertThat(huge.status()).isEqualTo(400);
        assertThat(huge.text()).contains("EntityTooLarge");
        assertThat(huge.interim()).isEmpty(); // refused before 100 Continue
        assertThat(small.s3.get(S3Counter.CAPACITY_REFUSED)).isEqualTo(3);
    }

    @Test
    void expectContinue() {
        S3Client.Response r = c.send("PUT", "/ernic/e", Map.of("Expect", "100-continue"), utf8("payload"));
        assertThat(r.interim()).containsExactly(100);
        assertThat(r.status()).isEqualTo(200);
        assertThat(c.http.get(HttpCounter.CONTINUES)).isEqualTo(1);
        S3Client.Response noBucket = c.send("PUT", "/nobucket/e", Map.of("Expect", "100-continue", "Content-Length", "7"), new byte[0]);
        assertThat(noBucket.status()).isEqualTo(404);
        assertThat(noBucket.interim()).isEmpty();
        assertThat(noBucket.header("Connection")).isEqualTo("close");
    }

    @Test
    void pipelinedRequestsAreAnsweredInOrder() {
        c.put("/ernic/p1", utf8("one"));
        c.put("/ernic/p2", utf8("two"));
        String two = "GET /ernic/p1 HTTP/1.1\r\nHost: x\r\n\r\nGET /ernic/p2 HTTP/1.1\r\nHost: x\r\n\r\n";
        assertThat(c.raw(utf8(two), false).text()).isEqualTo("one");
        assertThat(c.next(false).text()).isEqualTo("two");
        S3Client.Response closing = c.send("GET", "/ernic/p1", Map.of("Connection", "close"), new byte[0]);
        assertThat(closing.header("Connection")).isEqualTo("close");
        c.rig.run(() -> c.tcp.peerFin, 1000);
    }

    @Test
    void virtualHostedStyle() {
        c.put("/ernic/vh", utf8("hosted"));
        assertThat(c.send("GET", "/vh", Map.of("Host", "ernic.192.168.200.1:9000"), new byte[0]).text()).isEqualTo("hosted");
        assertThat(c.send("GET", "/vh", Map.of("Host", "ernic.s3.us-east-1.example.com"), new byte[0]).text()).isEqualTo("hosted");
        assertThat(c.send("GET", "/ernic/vh", Map.of("Host", "ernic.localdomain"), new byte[0]).text()).isEqualTo("hosted");
        assertThat(c.send("GET", "/ernic/vh", Map.of("Host", "storage.localdomain:9000"), new byte[0]).text()).isEqualTo("hosted");
    }

    @Test
    void unsupportedAndNotAllowed() {
        assertThat(c.send("GET", "/ernic?acl").status()).isEqualTo(501);
        assertThat(c.send("PUT", "/ernic/k?tagging", Map.of(), utf8("x")).status()).isEqualTo(501);
        assertThat(c.send("OPTIONS", "/ernic/k").status()).isEqualTo(405);
        assertThat(c.send("POST", "/ernic/k").status()).isEqualTo(405);
        assertThat(c.send("DELETE", "/").text()).contains("MethodNotAllowed");
    }

    @Test
    void contentMd5IsChecked() {
        Map<String, String> bad = new LinkedHashMap<>();
        bad.put("Content-MD5", "AAAAAAAAAAAAAAAAAAAAAA==");
        assertThat(c.send("PUT", "/ernic/m5", bad, utf8("x")).text()).contains("BadDigest");
        assertThat(c.send("PUT", "/ernic/m5", Map.of("Content-MD5", "zz"), utf8("x")).text()).contains("InvalidDigest");
        // md5("x") = 9dd4e461268c8034f5c8564e155c67a6
        String good = java.util.Base64.getEncoder().encodeToString(HexFormat.of().parseHex("9dd4e461268c8034f5c8564e155c67a6"));
        assertThat(c.send("PUT", "/ernic/m5", Map.of("Content-MD5", good), utf8("x")).status()).isEqualTo(200);
        assertThat(c.send("GET", "/ernic/nothere", Map.of(), new byte[0]).status()).isEqualTo(404);
    }
}
