package ernic.s3;

import ernic.s3.ObjectStore.Bucket;
import ernic.s3.ObjectStore.Entry;
import ernic.s3.S3Store.Call;

import java.lang.foreign.MemorySegment;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;

/**
 * Object operations: Put (HTTP body or RDMA token), Get and Head (Range, conditions, token), Delete,
 * Copy and DeleteObjects.
 */
final class S3Objects {
    private final S3Store s;

    S3Objects(S3Store s) {
        this.s = s;
    }

    // ---- put ----

    /** Refusals known from the head alone, so a client waiting on 100-continue hears them first. */
    HttpResponse precheckPut(Call c, long decodedLength) {
        if (c.token() != null && decodedLength != 0 && c.http().hasBody()) {
            return s.error(400, "InvalidRequest", "A request with x-amz-rdma-token carries no body", c);
        }
        if (c.token() == null && noLength(c.http())) {
            return s.error(411, "MissingContentLength", "You must provide the Content-Length HTTP header.", c);
        }
        long size = c.token() != null ? c.token().length() : decodedLength;
        return size < 0 ? null : roomError(c, s.store.roomFor(s.store.bucket(c.bucket()), c.key(), size));
    }

    /** An upload with neither a length nor a chunked framing: S3 answers 411. */
    static boolean noLength(HttpRequest r) {
        return !r.chunked && r.contentLength < 0;
    }

    HttpResponse roomError(Call c, ObjectStore.Room room) {
        return switch (room) {
            case OK -> null;
            case TOO_LARGE -> {
                s.counters.inc(S3Counter.CAPACITY_REFUSED);
                yield s.error(400, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size", c);
            }
            case FULL -> {
                s.counters.inc(S3Counter.CAPACITY_REFUSED);
                yield s.error(507, "InsufficientStorage", "The store is full (size=" + s.store.capacity + ").", c);
            }
            case TOO_MANY_OBJECTS -> {
                s.counters.inc(S3Counter.CAPACITY_REFUSED);
                yield s.error(507, "InsufficientStorage", "The store holds its most objects (objects=" + s.store.maxObjects + ").", c);
            }
        };
    }

    HttpResponse putObject(Call c) {
        Bucket b = s.store.bucket(c.bucket());
        Blob data;
        byte[] md5;
        if (c.token() != null) {
            HttpResponse bad = roomError(c, s.store.roomFor(b, c.key(), c.token().length()));
            if (bad != null) {
                return bad;
            }
            data = readFromGuest(c.token());
            if (data == null) {
                return refusedTransfer(c);
            }
            md5 = md5(data);
        } else {
            data = c.body().blob();
            md5 = c.body().md5();
            HttpResponse bad = roomError(c, s.store.roomFor(b, c.key(), data.size()));
            if (bad != null) {
                return bad;
            }
        }
        String etag = HexFormat.of().formatHex(md5);
        s.store.put(b, c.key(), new Entry(data, etag, s.clock.millis(), contentType(c.http()), metadata(c.http())));
        HttpResponse resp = s.ok(200).header("ETag", quote(etag));
        if (c.body() != null && c.body().checksum() != null && c.token() == null) {
            resp.header(c.body().checksum().header(), ChecksumAlgorithm.base64(c.body().checksumValue()));
        }
        return c.token() != null ? rdmaHeaders(resp, 200, data.size(), data.size()) : resp;
    }

    /** The token's window read out of the guest, or null when HostMemory refused it. */
    Blob readFromGuest(RdmaToken t) {
        List<Blob.Piece> pieces = new ArrayList<>();
        for (long off = 0; off < t.length(); off += Blob.PIECE) {
            int n = (int) Math.min(Blob.PIECE, t.length() - off);
            byte[] a = new byte[n];
            if (!s.host.fromHost(t.rkey(), t.addr() + off, MemorySegment.ofArray(a))) {
                s.counters.inc(S3Counter.RDMA_REFUSED);
                return null;
            }
            pieces.add(new Blob.Piece(a, 0, n));
        }
        s.counters.inc(S3Counter.RDMA_TRANSFERS);
        s.counters.add(S3Counter.RDMA_BYTES_IN, t.length());
        return new Blob(pieces);
    }

    HttpResponse refusedTransfer(Call c) {
        return s.error(400, "InvalidRDMAToken", "The memory region of the token refused the transfer (rkey, access or bounds).", c)
                .header("x-amz-rdma-reply", s.rdmaReply(400));
    }

    HttpResponse rdmaHeaders(HttpResponse resp, int status, long moved, long total) {
        return resp.header("x-amz-rdma-reply", s.rdmaReply(status))
                .header("x-amz-rdma-bytes-transferred", Long.toString(moved))
                .header("x-amz-rdma-bytes", Long.toString(moved));
    }

    static byte[] md5(Blob b) {
        MessageDigest d = ChecksumAlgorithm.messageDigest("MD5");
        for (MemorySegment seg : b.segments()) {
            d.update(seg.asByteBuffer());
        }
        return d.digest();
    }

    static String contentType(HttpRequest r) {
        String t = r.header("content-type");
        return t == null || t.isBlank() ? "binary/octet-stream" : t;
    }

    /** What is stored with an object and returned by GET and HEAD: x-amz-meta-* and the content fields. */
    static List<HttpRequest.Field> metadata(HttpRequest r) {
        List<HttpRequest.Field> out = new ArrayList<>(r.fieldsNamed("x-amz-meta-"));
        for (String h : new String[] {"cache-control", "content-disposition", "content-language", "expires"}) {
            String v = r.header(h);
            if (v != null) {
                out.add(new HttpRequest.Field(h, v));
            }
        }
        String enc = r.header("content-encoding");
        if (enc != null) {
            List<String> kept = new ArrayList<>();
            for (String e : enc.split(",")) {
                if (!e.strip().equalsIgnoreCase("aws-chunked") && !e.isBlank()) {
                    kept.add(e.strip());
                }
            }
            if (!kept.isEmpty()) {
                out.add(new HttpRequest.Field("content-encoding", String.join(",", kept)));
            }
        }
        return out;
    }

    static String quote(String etag) {
        return "\"" + etag + "\"";
    }

    // ---- get / head ----

    HttpResponse getObject(Call c) {
        Bucket b = s.store.bucket(c.bucket());
        Entry e = b.objects.get(c.key());
        if (e == null) {
            return s.error(404, "NoSuchKey", "The specified key does not exist.", c);
        }
        HttpRequest r = c.http();
        String ifMatch = r.header("if-match"), ifNone = r.header("if-none-match");
        if (ifMatch != null && !etagMatches(ifMatch, e.etag())) {
            return s.error(412, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold", c);
        }
        if (ifNone != null && etagMatches(ifNone, e.etag())) {
            return describe(s.ok(304), e);
        }
        long since = r.header("if-modified-since") == null ? -1 : S3Store.parseHttpDate(r.header("if-modified-since"));
        if (ifNone == null && since >= 0 && e.modified() / 1000 <= since / 1000) {
            return describe(s.ok(304), e);
        }
        long size = e.data().size();
        long start = 0, end = size - 1;
        int status = 200;
        long[] range = parseRange(r.header("range"), size);
        if (range == UNSATISFIABLE) {
            return s.error(416, "InvalidRange", "The requested range is not satisfiable", c)
                    .header("Content-Range", "bytes */" + size);
        }
        if (range != null) {
            start = range[0];
            end = range[1];
            status = 206;
        }
        long len = end - start + 1;
        HttpResponse resp = describe(s.ok(status), e);
        if (status == 206) {
            resp.header("Content-Range", "bytes " + start + "-" + end + "/" + size);
        }
        if (c.head()) {
            return resp.headOnly(len);
        }
        if (c.token() != null) {
            long moved = Math.min(len, c.token().length());
            if (!writeToGuest(c.token(), e.data().slice(start, moved))) {
                return refusedTransfer(c);
            }
            if (moved < len) {
                s.counters.inc(S3Counter.RDMA_SHORT);
            }
            return rdmaHeaders(resp, status, moved, len);
        }
        s.counters.add(S3Counter.BODY_BYTES_OUT, len);
        return resp.blob(e.data().slice(start, len));
    }

    private boolean writeToGuest(RdmaToken t, Blob data) {
        long at = 0;
        for (MemorySegment seg : data.segments()) {
            if (!s.host.toHost(t.rkey(), t.addr() + at, seg)) {
                s.counters.inc(S3Counter.RDMA_REFUSED);
                return false;
            }
            at += seg.byteSize();
        }
        s.counters.inc(S3Counter.RDMA_TRANSFERS);
        s.counters.add(S3Counter.RDMA_BYTES_OUT, data.size());
        return true;
    }

    private HttpResponse describe(HttpResponse resp, Entry e) {
        resp.header("ETag", quote(e.etag())).header("Last-Modified", S3Store.httpDate(e.modified()))
                .header("Accept-Ranges", "bytes");
        if (resp.status != 304) {
            resp.header("Content-Type", e.contentType());
        }
        for (HttpRequest.Field f : e.metadata()) {
            resp.header(f.name(), f.value());
        }
        return resp;
    }

    private static boolean etagMatches(String header, String etag) {
        for (String t : header.split(",")) {
            String v = t.strip();
            if (v.startsWith("W/")) {
                v = v.substring(2);
            }
            if (v.equals("*") || v.equals(quote(etag)) || v.equals(etag)) {
                return true;
            }
        }
        return false;
    }

    static final long[] UNSATISFIABLE = new long[0];

    /**
     * One byte range (RFC 9110 14.1.2: {@code bytes=a-b}, {@code a-}, {@code -n}) as [first, last]; null when
     * absent, not a single range, or not well-formed (then the whole object is sent); {@link #UNSATISFIABLE}
     * when it lies outside the object.
     */
    static long[] parseRange(String h, long size) {
        if (h == null || !h.toLowerCase(Locale.ROOT).startsWith("bytes=")) {
            return null;
        }
        String spec = h.substring(6).strip();
        int dash = spec.indexOf('-');
        if (spec.contains(",") || dash < 0) {
            return null;
        }
        String a = spec.substring(0, dash).strip(), b = spec.substring(dash + 1).strip();
        if (a.isEmpty()) {
            long n = HttpHeadParser.parseLength(b);
            if (n < 0) {
                return null;
            }
            if (n == 0 || size == 0) {
                return UNSATISFIABLE;
            }
            return new long[] {Math.max(0, size - n), size - 1};
        }
        long first = HttpHeadParser.parseLength(a);
        long last = b.isEmpty() ? Long.MAX_VALUE : HttpHeadParser.parseLength(b);
        if (first < 0 || last < 0 || last < first) {
            return null;
        }
        if (first >= size) {
            return UNSATISFIABLE;
        }
        return new long[] {first, Math.min(last, size - 1)};
    }

    // ---- delete ----

    HttpResponse deleteObject(Call c) {
        s.store.delete(s.store.bucket(c.bucket()), c.key());
        return s.ok(204); // S3 answers 204 for a key that was not there too
    }

    HttpResponse deleteObjects(Call c) {
        S3Xml.Node root = S3Xml.parse(c.body().blob().toArray());
        if (root == null || !root.name().equals("Delete")) {
            return s.error(400, "MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema", c);
        }
        List<S3Xml.Node> items = root.all("Object");
        if (items.isEmpty() || items.size() > 1000) {
            return s.error(400, "MalformedXML", "A Delete names 1 to 1000 objects", c);
        }
        boolean quiet = "true".equalsIgnoreCase(root.childText("Quiet"));
        Bucket b = s.store.bucket(c.bucket());
        S3Xml x = new S3Xml("DeleteResult");
        for (S3Xml.Node o : items) {
            String key = o.childText("Key");
            if (key == null || key.isEmpty() || key.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > S3Store.MAX_KEY_BYTES) {
                x.open("Error").el("Key", key == null ? "" : key).el("Code", "InvalidArgument")
                        .el("Message", "bad key").close("Error");
                continue;
            }
            // the key's text as sent, not stripped: keys may start or end with spaces
            key = o.child("Key").text();
            s.store.delete(b, key);
            if (!quiet) {
                x.open("Deleted").el("Key", key).close("Deleted");
            }
        }
        return s.xml(x, "DeleteResult");
    }

    // ---- copy ----

    /** The bucket and key of x-amz-copy-source ({@code /bucket/key} or {@code bucket/key}, URL-encoded). */
    static String[] copySource(HttpRequest r) {
        String v = r.header("x-amz-copy-source");
        int q = v.indexOf('?');
        if (q >= 0) {
            v = v.substring(0, q); // ?versionId=: there is one version
        }
        String d = HttpHeadParser.percentDecode(v, false);
        if (d == null) {
            return null;
        }
        if (d.startsWith("/")) {
            d = d.substring(1);
        }
        int slash = d.indexOf('/');
        return slash <= 0 || slash == d.length() - 1 ? null : new String[] {d.substring(0, slash), d.substring(slash + 1)};
    }

    /** The source object of a copy, or the error response (as {@code out[0]}). */
    Entry source(Call c, HttpResponse[] out) {
        String[] src = copySource(c.http());
        if (src == null) {
            out[0] = s.error(400, "InvalidArgument", "Copy Source must mention the source bucket and key: sourcebucket/sourcekey", c);
            return null;
        }
        Bucket sb = s.store.bucket(src[0]);
        if (sb == null) {
            out[0] = s.error(404, "NoSuchBucket", "The specified bucket does not exist", c);
            return null;
        }
        Entry e = sb.objects.get(src[1]);
        if (e == null) {
            out[0] = s.error(404, "NoSuchKey", "The specified key does not exist.", c);
        }
        return e;
    }

    HttpResponse copyObject(Call c) {
        HttpResponse[] err = new HttpResponse[1];
        Entry src = source(c, err);
        if (src == null) {
            return err[0];
        }
        String directive = c.http().header("x-amz-metadata-directive");
        boolean replace = directive != null && directive.equalsIgnoreCase("REPLACE");
        if (directive != null && !replace && !directive.equalsIgnoreCase("COPY")) {
            return s.error(400, "InvalidArgument", "Unknown metadata directive.", c);
        }
        String[] names = copySource(c.http());
        if (!replace && names[0].equals(c.bucket()) && names[1].equals(c.key())) {
            return s.error(400, "InvalidRequest", "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.", c);
        }
        Bucket b = s.store.bucket(c.bucket());
        HttpResponse bad = roomError(c, s.store.roomFor(b, c.key(), src.data().size()));
        if (bad != null) {
            return bad;
        }
        long now = s.clock.millis();
        Entry e = replace ? new Entry(src.data(), src.etag(), now, contentType(c.http()), metadata(c.http()))
                : new Entry(src.data(), src.etag(), now, src.contentType(), src.metadata());
        s.store.put(b, c.key(), e);
        S3Xml x = new S3Xml("CopyObjectResult").el("LastModified", s.iso(now)).el("ETag", quote(e.etag()));
        return s.xml(x, "CopyObjectResult");
    }
}
