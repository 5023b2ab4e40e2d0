package ernic.s3;

import ernic.ipstack.NetCounter;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;

/**
 * What aws cli v2 does with its defaults for a 40 MiB file, on ten connections at once: a multipart
 * upload of 8 MiB parts, each part aws-chunked with a CRC32 trailer behind Expect: 100-continue, then
 * parallel ranged GETs, a recursive listing and a DeleteObjects.
 */
class AwsCliFlowTest {
    /** Bytes from..from+len of data in aws cli's 64 KiB aws-chunked chunks, with their CRC32 as the trailer. */
    static byte[] awsChunkedWithCrc32(byte[] data, int from, int len) {
        CRC32 crc = new CRC32();
        crc.update(data, from, len);
        long v = crc.getValue();
        String b64 = Base64.getEncoder().encodeToString(new byte[] {(byte) (v >> 24), (byte) (v >> 16), (byte) (v >> 8), (byte) v});
        return BodyEncodingTest.awsChunked(Arrays.copyOfRange(data, from, from + len), 65536,
                "x-amz-checksum-crc32:" + b64);
    }

    @Test
    void fortyMebibytesUpAndDownOnTenConnections() {
        S3Client first = new S3Client();
        List<S3Client> conns = new ArrayList<>();
        conns.add(first);
        for (int i = 1; i < 10; i++) {
            conns.add(new S3Client(first));
        }
        byte[] file = S3StoreTest.random(40 << 20, 40);
        int part = 8 << 20, parts = file.length / part;
        String init = first.send("POST", "/ernic/big.bin?uploads", Map.of(), new byte[0]).text();
        String id = init.substring(init.indexOf("<UploadId>") + 10, init.indexOf("</UploadId>"));
        for (int p = 0; p < parts; p++) {
            Map<String, String> h = BodyEncodingTest.awsChunkedHeaders("x-amz-checksum-crc32", part);
            h.put("Expect", "100-continue");
            h.put("x-amz-sdk-checksum-algorithm", "CRC32");
            conns.get(p).write("PUT", "/ernic/big.bin?uploadId=" + id + "&partNumber=" + (p + 1), h,
                    awsChunkedWithCrc32(file, p * part, part));
        }
        S3Client.Response[] done = new S3Client.Response[parts];
        first.rig.run(() -> {
            boolean all = true;
            for (int p = 0; p < parts; p++) {
                if (done[p] == null) {
                    done[p] = conns.get(p).poll(false);
                }
                all &= done[p] != null;
            }
            return all;
        }, 60_000);
        StringBuilder complete = new StringBuilder("<CompleteMultipartUpload>");
        for (int p = 0; p < parts; p++) {
            assertThat(done[p].status()).isEqualTo(200);
            assertThat(done[p].interim()).containsExactly(100);
            complete.append("<Part><PartNumber>").append(p + 1).append("</PartNumber><ETag>")
                    .append(done[p].header("ETag")).append("</ETag></Part>");
        }
        complete.append("</CompleteMultipartUpload>");
        S3Client.Response c = first.send("POST", "/ernic/big.bin?uploadId=" + id, Map.of(),
                complete.toString().getBytes(StandardCharsets.US_ASCII));
        assertThat(c.status()).isEqualTo(200);
        assertThat(c.text()).contains("-5&quot;</ETag>");
        assertThat(first.store.store.inFlight()).isZero();

        // ten ranged GETs of 4 MiB at once, as the cli downloads
        int slice = file.length / 10;
        for (int i = 0; i < 10; i++) {
            conns.get(i).write("GET", "/ernic/big.bin",
                    Map.of("Range", "bytes=" + (i * slice) + "-" + ((i + 1) * slice - 1)), new byte[0]);
        }
        S3Client.Response[] got = new S3Client.Response[10];
        first.rig.run(() -> {
            boolean all = true;
            for (int i = 0; i < 10; i++) {
                if (got[i] == null) {
                    got[i] = conns.get(i).poll(false);
                }
                all &= got[i] != null;
            }
            return all;
        }, 60_000);
        ByteArrayOutputStream back = new ByteArrayOutputStream();
        for (int i = 0; i < 10; i++) {
            assertThat(got[i].status()).isEqualTo(206);
            back.writeBytes(got[i].body());
        }
        assertThat(back.toByteArray()).isEqualTo(file);
        assertThat(first.rig.net.get(NetCounter.CONNECTIONS_OPEN)).isEqualTo(10);
        assertThat(first.rig.net.get(NetCounter.RETRANSMITS)).isZero();

        assertThat(first.send("GET", "/ernic?list-type=2&prefix=&encoding-type=url").text()).contains("<Key>big.bin</Key>")
                .contains("<Size>41943040</Size>");
        String del = "<Delete><Object><Key>big.bin</Key></Object></Delete>";
        assertThat(first.send("POST", "/ernic?delete", Map.of(), del.getBytes(StandardCharsets.US_ASCII)).status()).isEqualTo(200);
        assertThat(first.store.store.used()).isZero();
    }
}
