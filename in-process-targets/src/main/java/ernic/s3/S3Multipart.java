package ernic.s3;

import ernic.s3.ObjectStore.Bucket;
import ernic.s3.ObjectStore.Entry;
import ernic.s3.ObjectStore.Part;
import ernic.s3.ObjectStore.Upload;
import ernic.s3.S3Store.Call;

import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Multipart uploads: initiate, upload part (HTTP body, RDMA token, or a copy of a range), complete (ETag
 * md5-of-part-md5s-N), abort, list parts, list uploads. Parts other than the last must be at least 5 MiB, as
 * in S3.
 */
final class S3Multipart {
    static final long MIN_PART = 5L << 20;

    private final S3Store s;
    private final S3Objects objects;

    S3Multipart(S3Store s, S3Objects objects) {
        this.s = s;
        this.objects = objects;
    }

    HttpResponse initiate(Call c) {
        Bucket b = s.store.bucket(c.bucket());
        byte[] id = new byte[16];
        ThreadLocalRandom.current().nextBytes(id);
        Upload u = s.store.startUpload(b, HexFormat.of().formatHex(id), c.key(), s.clock.millis(),
                S3Objects.contentType(c.http()), S3Objects.metadata(c.http()));
        if (u == null) {
            return s.error(507, "InsufficientStorage", "Too many multipart uploads are in progress.", c);
        }
        S3Xml x = new S3Xml("InitiateMultipartUploadResult").el("Bucket", b.name).el("Key", c.key())
                .el("UploadId", u.id);
        return s.xml(x, "InitiateMultipartUploadResult");
    }

    /** The upload a request names, or null (then {@code out[0]} is the error). */
    private Upload upload(Call c, HttpResponse[] out) {
        Upload u = s.store.bucket(c.bucket()).uploads.get(c.http().query().get("uploadId"));
        if (u == null || !u.key.equals(c.key())) {
            out[0] = s.error(404, "NoSuchUpload", "The specified multipart upload does not exist. The upload ID might be invalid, or the multipart upload might have been aborted or completed.", c);
            return null;
        }
        return u;
    }

    /** The part number of an UploadPart, 1..10000, or -1. */
    private static int partNumber(Call c) {
        long n = HttpHeadParser.parseLength(c.http().query().getOrDefault("partNumber", ""));
        return n < 1 || n > ObjectStore.MAX_PARTS ? -1 : (int) n;
    }

    HttpResponse precheckPart(Call c, long decodedLength) {
        HttpResponse[] err = new HttpResponse[1];
        Upload u = upload(c, err);
        if (u == null) {
            return err[0];
        }
        if (partNumber(c) < 0) {
            return s.error(400, "InvalidArgument", "Part number must be an integer between 1 and 10000, inclusive", c);
        }
        if (c.token() != null && decodedLength != 0 && c.http().hasBody()) {
            return s.error(400, "InvalidRequest", "A request with x-amz-rdma-token carries no body", c);
        }
        if (c.token() == null && S3Objects.noLength(c.http())) {
            return s.error(411, "MissingContentLength", "You must provide the Content-Length HTTP header.", c);
        }
        long size = c.token() != null ? c.token().length() : decodedLength;
        return size < 0 ? null : objects.roomError(c, s.store.roomForPart(u, partNumber(c), size, s.options.maxPart()));
    }

    HttpResponse uploadPart(Call c) {
        HttpResponse bad = precheckPart(c, c.token() != null ? c.token().length() : c.body().size());
        if (bad != null) {
            return bad;
        }
        Upload u = upload(c, new HttpResponse[1]);
        Blob data;
        byte[] md5;
        if (c.token() != null) {
            data = objects.readFromGuest(c.token());
            if (data == null) {
                return objects.refusedTransfer(c);
            }
            md5 = S3Objects.md5(data);
        } else {
            data = c.body().blob();
            md5 = c.body().md5();
        }
        String etag = HexFormat.of().formatHex(md5);
        s.store.putPart(u, new Part(partNumber(c), data, etag, md5, s.clock.millis()));
        HttpResponse resp = s.ok(200).header("ETag", S3Objects.quote(etag));
        return c.token() != null ? objects.rdmaHeaders(resp, 200, data.size(), data.size()) : resp;
    }

    HttpResponse uploadPartCopy(Call c) {
        HttpResponse[] err = new HttpResponse[1];
        Upload u = upload(c, err);
        if (u == null) {
            return err[0];
        }
        int number = partNumber(c);
        if (number < 0) {
            return s.error(400, "InvalidArgument", "Part number must be an integer between 1 and 10000, inclusive", c);
        }
        Entry src = objects.source(c, err);
        if (src == null) {
            return err[0];
        }
        Blob data = src.data();
        String range = c.http().header("x-amz-copy-source-range");
        if (range != null) {
            long[] r = S3Objects.parseRange(range, data.size());
            if (r == null || r == S3Objects.UNSATISFIABLE || r[1] - r[0] + 1 != rangeLength(range)) {
                return s.error(400, "InvalidRange", "The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy", c);
            }
            data = data.slice(r[0], r[1] - r[0] + 1);
        }
        HttpResponse bad = objects.roomError(c, s.store.roomForPart(u, number, data.size(), s.options.maxPart()));
        if (bad != null) {
            return bad;
        }
        byte[] md5 = S3Objects.md5(data);
        String etag = HexFormat.of().formatHex(md5);
        long now = s.clock.millis();
        s.store.putPart(u, new Part(number, data, etag, md5, now));
        S3Xml x = new S3Xml("CopyPartResult").el("LastModified", s.iso(now)).el("ETag", S3Objects.quote(etag));
        return s.xml(x, "CopyPartResult");
    }

    /** The length a {@code bytes=first-last} copy range names exactly, or -1. */
    private static long rangeLength(String range) {
        String spec = range.substring(6);
        int dash = spec.indexOf('-');
        long a = HttpHeadParser.parseLength(spec.substring(0, dash)), b = HttpHeadParser.parseLength(spec.substring(dash + 1));
        return a < 0 || b < a ? -1 : b - a + 1;
    }

    HttpResponse complete(Call c) {
        HttpResponse[] err = new HttpResponse[1];
        Upload u = upload(c, err);
        if (u == null) {
            return err[0];
        }
        S3Xml.Node root = S3Xml.parse(c.body().blob().toArray());
        if (root == null || !root.name().equals("CompleteMultipartUpload") || root.all("Part").isEmpty()) {
            return s.error(400, "MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema", c);
        }
        List<S3Xml.Node> listed = root.all("Part");
        if (listed.size() > ObjectStore.MAX_PARTS) {
            return s.error(400, "MalformedXML", "Too many parts", c);
        }
        List<Part> chosen = new ArrayList<>();
        int previous = 0;
        for (S3Xml.Node p : listed) {
            long n = HttpHeadParser.parseLength(p.childText("PartNumber") == null ? "" : p.childText("PartNumber"));
            String etag = p.childText("ETag");
            if (n < 1 || n > ObjectStore.MAX_PARTS || etag == null) {
                return s.error(400, "MalformedXML", "A Part needs a PartNumber (1..10000) and an ETag", c);
            }
            if (n <= previous) {
                return s.error(400, "InvalidPartOrder", "The list of parts was not in ascending order. The parts list must be specified in order by part number.", c);
            }
            previous = (int) n;
            Part part = u.parts.get((int) n);
            if (part == null || !unquote(etag).equals(part.etag())) {
                return s.error(400, "InvalidPart", "One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.", c);
            }
            chosen.add(part);
        }
        for (int i = 0; i < chosen.size() - 1; i++) {
            if (chosen.get(i).data().size() < MIN_PART) {
                return s.error(400, "EntityTooSmall", "Your proposed upload is smaller than the minimum allowed object size.", c);
            }
        }
        Bucket b = s.store.bucket(c.bucket());
        if (!b.objects.containsKey(u.key) && s.store.objectCount() >= s.store.maxObjects) {
            return objects.roomError(c, ObjectStore.Room.TOO_MANY_OBJECTS);
        }
        MessageDigest md5s = ChecksumAlgorithm.messageDigest("MD5");
        List<Blob> blobs = new ArrayList<>();
        for (Part p : chosen) {
            md5s.update(p.md5());
            blobs.add(p.data());
        }
        String etag = HexFormat.of().formatHex(md5s.digest()) + "-" + chosen.size();
        Entry e = new Entry(Blob.concat(blobs), etag, s.clock.millis(), u.contentType, u.metadata);
        s.store.complete(b, u, e);
        String host = c.http().header("host");
        S3Xml x = new S3Xml("CompleteMultipartUploadResult")
                .el("Location", "http://" + host + "/" + b.name + "/" + SigV4.uriEncode(u.key, false))
                .el("Bucket", b.name).el("Key", u.key).el("ETag", S3Objects.quote(etag));
        return s.xml(x, "CompleteMultipartUploadResult");
    }

    private static String unquote(String etag) {
        String v = etag.strip();
        return v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"") ? v.substring(1, v.length() - 1) : v;
    }

    HttpResponse abort(Call c) {
        HttpResponse[] err = new HttpResponse[1];
        Upload u = upload(c, err);
        if (u == null) {
            return err[0];
        }
        s.store.abort(s.store.bucket(c.bucket()), u);
        return s.ok(204);
    }

    HttpResponse listParts(Call c) {
        HttpResponse[] err = new HttpResponse[1];
        Upload u = upload(c, err);
        if (u == null) {
            return err[0];
        }
        Map<String, String> q = c.http().query();
        long max = q.containsKey("max-parts") ? HttpHeadParser.parseLength(q.get("max-parts")) : 1000;
        long marker = q.containsKey("part-number-marker") ? HttpHeadParser.parseLength(q.get("part-number-marker")) : 0;
        if (max < 0 || marker < 0 || marker > ObjectStore.MAX_PARTS) {
            return s.error(400, "InvalidArgument", "bad max-parts or part-number-marker", c);
        }
        max = Math.min(max, 1000);
        S3Xml x = new S3Xml("ListPartsResult").el("Bucket", c.bucket()).el("Key", u.key).el("UploadId", u.id)
                .open("Initiator").el("ID", S3Buckets.OWNER_ID).el("DisplayName", S3Buckets.OWNER_ID).close("Initiator")
                .open("Owner").el("ID", S3Buckets.OWNER_ID).el("DisplayName", S3Buckets.OWNER_ID).close("Owner")
                .el("StorageClass", "STANDARD").el("PartNumberMarker", marker);
        List<Part> parts = new ArrayList<>(u.parts.tailMap((int) marker, false).values());
        boolean truncated = parts.size() > max;
        if (truncated) {
            parts = parts.subList(0, (int) max);
        }
        x.el("NextPartNumberMarker", parts.isEmpty() ? 0 : parts.getLast().number()).el("MaxParts", max)
                .el("IsTruncated", truncated);
        for (Part p : parts) {
            x.open("Part").el("PartNumber", p.number()).el("LastModified", s.iso(p.modified()))
                    .el("ETag", S3Objects.quote(p.etag())).el("Size", p.data().size()).close("Part");
        }
        return s.xml(x, "ListPartsResult");
    }

    HttpResponse listUploads(Call c) {
        Bucket b = s.store.bucket(c.bucket());
        String prefix = c.http().query().getOrDefault("prefix", "");
        S3Xml x = new S3Xml("ListMultipartUploadsResult").el("Bucket", b.name).el("KeyMarker", "")
                .el("UploadIdMarker", "").el("Prefix", prefix).el("MaxUploads", ObjectStore.MAX_UPLOADS)
                .el("IsTruncated", false);
        for (Upload u : b.uploads.values()) {
            if (u.key.startsWith(prefix)) {
                x.open("Upload").el("Key", u.key).el("UploadId", u.id)
                        .open("Initiator").el("ID", S3Buckets.OWNER_ID).el("DisplayName", S3Buckets.OWNER_ID).close("Initiator")
                        .open("Owner").el("ID", S3Buckets.OWNER_ID).el("DisplayName", S3Buckets.OWNER_ID).close("Owner")
                        .el("StorageClass", "STANDARD").el("Initiated", s.iso(u.created)).close("Upload");
            }
        }
        return s.xml(x, "ListMultipartUploadsResult");
    }
}
