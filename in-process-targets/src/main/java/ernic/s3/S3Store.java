package ernic.s3;

import ernic.ipstack.IpEndpoint;
import ernic.ipstack.TcpConnection;
import ernic.common.IpAddress;
import ernic.ipstack.StreamHandler;

import ernic.counters.Counters;
import ernic.attach.HostMemory;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The S3 store: answers the HTTP requests of its TCP connections (path-style and virtual-hosted), keeps the
 * objects in RAM ({@link ObjectStore}), checks SigV4 when keys are configured, verifies the body checksums
 * clients send, and moves objects by rkey when a request carries {@code x-amz-rdma-token}. This class
 * routes a request, checks it and its body, and builds errors; the operations are in {@link S3Objects},
 * {@link S3Buckets} and {@link S3Multipart}. Device thread only.
 */
public final class S3Store implements HttpService {
    /** What a request asks for. */
    enum Op {
        LIST_BUCKETS, LIST_OBJECTS, LIST_OBJECTS_V2, BUCKET_LOCATION, BUCKET_VERSIONING, LIST_UPLOADS, HEAD_BUCKET,
        CREATE_BUCKET, DELETE_BUCKET, DELETE_OBJECTS, PUT_OBJECT, COPY_OBJECT, GET_OBJECT, HEAD_OBJECT,
        DELETE_OBJECT, INITIATE_UPLOAD, UPLOAD_PART, UPLOAD_PART_COPY, COMPLETE_UPLOAD, ABORT_UPLOAD, LIST_PARTS
    }

    /** One routed request: the operation, bucket and key, its body once read, its RDMA token if any. */
    record Call(HttpRequest http, Op op, String bucket, String key, BodyCollector body, RdmaToken token) {
        String resource() {
            return "/" + (bucket == null ? "" : bucket) + (key == null ? "" : "/" + key);
        }

        boolean head() {
            return http.method.equals("HEAD");
        }
    }

    /** Subresources no operation here implements: 501 rather than a misleading answer. */
    private static final Set<String> UNSUPPORTED = Set.of("acl", "policy", "cors", "lifecycle", "tagging", "website",
            "encryption", "replication", "logging", "notification", "object-lock", "retention", "legal-hold",
            "torrent", "restore", "select", "accelerate", "requestPayment", "analytics", "inventory", "metrics",
            "ownershipControls", "publicAccessBlock", "intelligent-tiering", "attributes", "versions", "policyStatus",
            "uploadPart", "rename", "session");
    static final int MAX_KEY_BYTES = 1024;
    static final long XML_LIMIT = 2 << 20, OTHER_LIMIT = 1 << 20;
    private static final DateTimeFormatter HTTP_DATE =
            DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US).withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter ISO =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", Locale.US).withZone(ZoneOffset.UTC);

    final S3Options options;
    final ObjectStore store;
    final HostMemory host;
    final Clock clock;
    final Counters<HttpCounter> httpCounters;
    final Counters<S3Counter> counters;
    private final SigV4 sig;
    private final String serverToken;
    private final S3Objects objects;
    private final S3Buckets buckets;
    private final S3Multipart multipart;
    private long requests;

    /**
     * @param host  the guest's memory by rkey (token requests)
     * @param clock wall time for Last-Modified, Date and presigned expiry
     */
    public S3Store(S3Options options, HostMemory host, Clock clock, Counters<HttpCounter> httpCounters,
                   Counters<S3Counter> counters) {
        this.options = options;
        this.store = new ObjectStore(options.size(), options.objects());
        this.host = host;
        this.clock = clock;
        this.httpCounters = httpCounters;
        this.counters = counters;
        this.sig = options.verifiesSignatures() ? new SigV4(options.accessKey(), options.secretKey()) : null;
        byte[] gid = new byte[16];
        gid[10] = (byte) 0xff;
        gid[11] = (byte) 0xff;
        for (int i = 0; i < 4; i++) {
            gid[12 + i] = (byte) (options.ip() >>> (24 - 8 * i));
        }
        // The compat reply's server token: RC, the store's IPv4-mapped GID; no QP of its own until it is an
        // end of the data path.
        this.serverToken = new RdmaToken(RdmaToken.TRANSPORT_RC, 0, gid, 0, 0, 0, 1, 0).hex();
        this.objects = new S3Objects(this);
        this.buckets = new S3Buckets(this);
        this.multipart = new S3Multipart(this, objects);
        store.createBucket(options.bucket(), clock.millis());
    }

    /** The acceptor for {@link IpEndpoint}: every connection speaks HTTP to this store. */
    public StreamHandler accept(TcpConnection c) {
        return new HttpConnection(c, this, httpCounters);
    }

    // ---- HttpService ----

    @Override
    public Start begin(HttpRequest r, long decodedLength) {
        Object routed = route(r, null);
        if (routed instanceof HttpResponse e) {
            return new Respond(e);
        }
        Call c = (Call) routed;
        if (sig != null) {
            SigV4.Failure f = sig.verify(r, clock.instant(), new SigV4.Verified[1]);
            if (f != null) {
                counters.inc(S3Counter.SIGNATURE_MISMATCH);
                return new Respond(error(f.status(), f.code(), f.message(), c));
            }
        }
        String trailer = r.header("x-amz-trailer");
        if (trailer != null && !trailer.isBlank() && ChecksumAlgorithm.named(trailer) == null) {
            return new Respond(error(400, "InvalidRequest", "The value specified in the x-amz-trailer header is not supported", c));
        }
        HttpResponse early = switch (c.op) {
            case PUT_OBJECT -> objects.precheckPut(c, decodedLength);
            case UPLOAD_PART -> multipart.precheckPart(c, decodedLength);
            default -> null;
        };
        if (early != null) {
            return new Respond(early);
        }
        long limit = switch (c.op) {
            case PUT_OBJECT -> Math.min(store.capacity, S3Options.MAX_OBJECT);
            case UPLOAD_PART -> options.maxPart();
            case DELETE_OBJECTS, COMPLETE_UPLOAD, CREATE_BUCKET -> XML_LIMIT;
            default -> OTHER_LIMIT;
        };
        if (decodedLength > limit) {
            return new Respond(error(400, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size", c));
        }
        String payload = r.header("x-amz-content-sha256");
        boolean hexPayload = payload != null && payload.length() == 64 && RdmaToken.isHex(payload);
        boolean signedChunks = sig != null && payload != null && payload.startsWith("STREAMING-AWS4-HMAC-SHA256-PAYLOAD");
        return new ReadBody(new BodyPlan(limit, hexPayload, declaredChecksum(r), signedChunks));
    }

    @Override
    public HttpResponse complete(HttpRequest r, BodyCollector body, List<HttpRequest.Field> trailers,
                                 List<Chunk> chunks) {
        Object routed = route(r, body);
        if (routed instanceof HttpResponse e) {
            return e;
        }
        Call c = (Call) routed;
        HttpResponse bad = checkBody(c, trailers, chunks);
        if (bad != null) {
            return bad;
        }
        if (c.token == null && c.op != Op.GET_OBJECT && c.op != Op.HEAD_OBJECT) {
            counters.add(S3Counter.BODY_BYTES_IN, body.size());
        }
        HttpResponse resp = switch (c.op) {
            case LIST_BUCKETS -> buckets.listBuckets(c);
            case LIST_OBJECTS -> buckets.listObjects(c, false);
            case LIST_OBJECTS_V2 -> buckets.listObjects(c, true);
            case BUCKET_LOCATION -> buckets.location(c);
            case BUCKET_VERSIONING -> buckets.versioning(c);
            case LIST_UPLOADS -> multipart.listUploads(c);
            case HEAD_BUCKET -> buckets.headBucket(c);
            case CREATE_BUCKET -> buckets.createBucket(c);
            case DELETE_BUCKET -> buckets.deleteBucket(c);
            case DELETE_OBJECTS -> objects.deleteObjects(c);
            case PUT_OBJECT -> objects.putObject(c);
            case COPY_OBJECT -> objects.copyObject(c);
            case GET_OBJECT, HEAD_OBJECT -> objects.getObject(c);
            case DELETE_OBJECT -> objects.deleteObject(c);
            case INITIATE_UPLOAD -> multipart.initiate(c);
            case UPLOAD_PART -> multipart.uploadPart(c);
            case UPLOAD_PART_COPY -> multipart.uploadPartCopy(c);
            case COMPLETE_UPLOAD -> multipart.complete(c);
            case ABORT_UPLOAD -> multipart.abort(c);
            case LIST_PARTS -> multipart.listParts(c);
        };
        counters.set(S3Counter.OBJECTS, store.objectCount());
        counters.set(S3Counter.BYTES_STORED, store.used());
        return resp;
    }

    @Override
    public HttpResponse refuse(int status, String code, String message) {
        return error(status, code, message, null);
    }

    @Override
    public BodyCollector.Budget budget() {
        return store;
    }

    @Override
    public String date() {
        return httpDate(clock.millis());
    }

    // ---- routing ----

    /** The call a request makes, or the error response it gets. */
    private Object route(HttpRequest r, BodyCollector body) {
        String host = r.header("host");
        String vbucket = virtualBucket(host == null ? "" : host);
        String bucket, key;
        String p = r.path.substring(1);
        if (vbucket != null) {
            bucket = vbucket;
            key = p.isEmpty() ? null : p;
        } else {
            int slash = p.indexOf('/');
            bucket = p.isEmpty() ? null : slash < 0 ? p : p.substring(0, slash);
            key = slash < 0 || slash == p.length() - 1 ? null : p.substring(slash + 1);
        }
        Call probe = new Call(r, null, bucket, key, body, null);
        if (key != null && key.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > MAX_KEY_BYTES) {
            return error(400, "KeyTooLongError", "Your key is too long", probe);
        }
        for (String q : r.query.keySet()) {
            if (UNSUPPORTED.contains(q)) {
                return error(501, "NotImplemented", "A header or query you provided implies functionality that is not implemented (" + q + ")", probe);
            }
        }
        Op op = op(r, bucket, key);
        if (op == null) {
            return error(405, "MethodNotAllowed", "The specified method is not allowed against this resource.", probe);
        }
        RdmaToken token = null;
        String th = r.header("x-amz-rdma-token");
        if (th != null && (op == Op.PUT_OBJECT || op == Op.GET_OBJECT || op == Op.UPLOAD_PART)) {
            try {
                token = RdmaToken.parse(th);
            } catch (RdmaToken.Refused e) {
                Call c = new Call(r, op, bucket, key, body, null);
                if (e.declined) {
                    counters.inc(S3Counter.RDMA_DECLINED);
                    return error(501, "NotImplemented", e.getMessage(), c).header("x-amz-rdma-reply", "501");
                }
                counters.inc(S3Counter.TOKEN_MALFORMED);
                return error(400, "InvalidRDMAToken", e.getMessage(), c).header("x-amz-rdma-reply", "400");
            }
        }
        Call c = new Call(r, op, bucket, key, body, token);
        if (op != Op.LIST_BUCKETS && op != Op.CREATE_BUCKET && store.bucket(bucket) == null) {
            return noSuchBucket(c);
        }
        return c;
    }

    private static Op op(HttpRequest r, String bucket, String key) {
        var q = r.query;
        String m = r.method;
        if (bucket == null) {
            return m.equals("GET") ? Op.LIST_BUCKETS : null;
        }
        if (key == null) {
            return switch (m) {
                case "GET" -> q.containsKey("location") ? Op.BUCKET_LOCATION
                        : q.containsKey("versioning") ? Op.BUCKET_VERSIONING
                        : q.containsKey("uploads") ? Op.LIST_UPLOADS
                        : "2".equals(q.get("list-type")) ? Op.LIST_OBJECTS_V2 : Op.LIST_OBJECTS;
                case "HEAD" -> Op.HEAD_BUCKET;
                case "PUT" -> Op.CREATE_BUCKET;
                case "DELETE" -> Op.DELETE_BUCKET;
                case "POST" -> q.containsKey("delete") ? Op.DELETE_OBJECTS : null;
                default -> null;
            };
        }
        boolean upload = q.containsKey("uploadId");
        return switch (m) {
            case "PUT" -> upload ? (r.header("x-amz-copy-source") != null ? Op.UPLOAD_PART_COPY : Op.UPLOAD_PART)
                    : r.header("x-amz-copy-source") != null ? Op.COPY_OBJECT : Op.PUT_OBJECT;
            case "GET" -> upload ? Op.LIST_PARTS : Op.GET_OBJECT;
            case "HEAD" -> Op.HEAD_OBJECT;
            case "DELETE" -> upload ? Op.ABORT_UPLOAD : Op.DELETE_OBJECT;
            case "POST" -> q.containsKey("uploads") ? Op.INITIATE_UPLOAD : upload ? Op.COMPLETE_UPLOAD : null;
            default -> null;
        };
    }

    /**
     * The bucket a virtual-hosted Host names ({@code bucket.s3.region.example}, {@code bucket.s3-x.example},
     * {@code bucket.<store ip>}), or null for path-style (an IP address or any other name).
     */
    String virtualBucket(String hostHeader) {
        String h = hostHeader.toLowerCase(Locale.ROOT);
        if (h.startsWith("[")) {
            return null; // an IPv6 literal
        }
        int colon = h.lastIndexOf(':');
        if (colon >= 0) {
            h = h.substring(0, colon);
        }
        if (h.matches("\\d+\\.\\d+\\.\\d+\\.\\d+") || !h.contains(".")) {
            return null;
        }
        String ip = "." + IpAddress.ofIpv4(options.ip());
        if (h.endsWith(ip)) {
            return h.substring(0, h.length() - ip.length());
        }
        int s3 = h.indexOf(".s3.");
        if (s3 < 0) {
            s3 = h.indexOf(".s3-");
        }
        // any other name is path-style: a first label that happens to be a bucket name proves nothing
        return s3 > 0 ? h.substring(0, s3) : null;
    }

    // ---- body checks ----

    private HttpResponse checkBody(Call c, List<HttpRequest.Field> trailers, List<Chunk> chunks) {
        HttpRequest r = c.http;
        BodyCollector body = c.body;
        String payload = r.header("x-amz-content-sha256");
        if (body.sha256() != null && !SigV4.hex(body.sha256()).equalsIgnoreCase(payload)) {
            counters.inc(S3Counter.CHECKSUM_MISMATCH);
            return error(400, "XAmzContentSHA256Mismatch", "The provided 'x-amz-content-sha256' header does not match what was computed.", c);
        }
        if (sig != null && payload != null && payload.startsWith("STREAMING-AWS4-HMAC-SHA256-PAYLOAD")) {
            SigV4.Verified[] v = new SigV4.Verified[1];
            if (sig.verify(r, clock.instant(), v) != null || !chunksSigned(v[0], chunks)) {
                counters.inc(S3Counter.SIGNATURE_MISMATCH);
                return error(403, "SignatureDoesNotMatch", "The chunk signature we calculated does not match the one you provided.", c);
            }
        }
        String decoded = r.header("x-amz-decoded-content-length");
        if (decoded != null && HttpHeadParser.parseLength(decoded) != body.size()) {
            return error(400, "IncompleteBody", "You did not provide the number of bytes specified by the x-amz-decoded-content-length header.", c);
        }
        String md5 = r.header("content-md5");
        if (md5 != null && c.token == null) {
            byte[] want = base64(md5);
            if (want == null || want.length != 16) {
                return error(400, "InvalidDigest", "The Content-MD5 you specified was invalid.", c);
            }
            if (!java.util.Arrays.equals(want, body.md5())) {
                counters.inc(S3Counter.CHECKSUM_MISMATCH);
                return error(400, "BadDigest", "The Content-MD5 you specified did not match what we received.", c);
            }
        }
        ChecksumAlgorithm alg = body.checksum();
        if (alg != null && c.token == null) {
            String want = r.header(alg.header());
            for (HttpRequest.Field t : trailers) {
                if (t.name().equals(alg.header())) {
                    want = t.value();
                }
            }
            if (want == null && r.header("x-amz-trailer") != null) {
                return error(400, "InvalidRequest", "The trailer " + alg.header() + " was declared but not sent.", c);
            }
            if (want != null && !want.equals(ChecksumAlgorithm.base64(body.checksumValue()))) {
                counters.inc(S3Counter.CHECKSUM_MISMATCH);
                return error(400, "BadDigest", "The " + alg.name() + " you specified did not match the calculated checksum.", c);
            }
        }
        return null;
    }

    private static boolean chunksSigned(SigV4.Verified v, List<Chunk> chunks) {
        if (v == null || chunks.isEmpty()) {
            return false;
        }
        String previous = v.seedSignature();
        for (Chunk ch : chunks) {
            String given = null;
            for (String ext : ch.extensions().split(";")) {
                if (ext.strip().startsWith("chunk-signature=")) {
                    given = ext.strip().substring("chunk-signature=".length());
                }
            }
            String expected = SigV4.chunkSignature(v, previous, ch.sha256());
            if (!expected.equals(given)) {
                return false;
            }
            previous = expected;
        }
        return true;
    }

    /** The flexible checksum a request declares (a checksum header, x-amz-trailer, or the SDK's algorithm). */
    static ChecksumAlgorithm declaredChecksum(HttpRequest r) {
        for (ChecksumAlgorithm a : ChecksumAlgorithm.values()) {
            if (r.header(a.header()) != null) {
                return a;
            }
        }
        String t = r.header("x-amz-trailer");
        if (t != null && ChecksumAlgorithm.named(t) != null) {
            return ChecksumAlgorithm.named(t);
        }
        String sdk = r.header("x-amz-sdk-checksum-algorithm");
        return sdk == null ? null : ChecksumAlgorithm.named(sdk);
    }

    static byte[] base64(String s) {
        try {
            return Base64.getDecoder().decode(s.strip());
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    // ---- responses ----

    /** A response with the request id every S3 response carries. */
    HttpResponse ok(int status) {
        return new HttpResponse(status).header("x-amz-request-id", String.format("%016X", ++requests))
                .header("Server", "ernic-s3");
    }

    HttpResponse error(int status, String code, String message, Call c) {
        HttpResponse resp = ok(status);
        if (c != null && c.head()) {
            return resp.header("x-amz-error-code", code); // a HEAD answer has no body
        }
        S3Xml x = S3Xml.bare("Error").el("Code", code).el("Message", message);
        if (c != null && c.key != null && (code.equals("NoSuchKey") || code.equals("KeyTooLongError"))) {
            x.el("Key", c.key);
        }
        if (c != null && c.bucket != null && (code.equals("NoSuchBucket") || code.equals("BucketNotEmpty")
                || code.equals("BucketAlreadyOwnedByYou"))) {
            x.el("BucketName", c.bucket);
        }
        if (c != null) {
            x.el("Resource", c.resource());
        }
        return resp.xml(x.el("RequestId", resp.header("x-amz-request-id")).end("Error"));
    }

    HttpResponse noSuchBucket(Call c) {
        return error(404, "NoSuchBucket", "The specified bucket does not exist", c);
    }

    HttpResponse xml(S3Xml x, String root) {
        return ok(200).xml(x.end(root));
    }

    String iso(long millis) {
        return ISO.format(Instant.ofEpochMilli(millis));
    }

    static String httpDate(long millis) {
        return HTTP_DATE.format(Instant.ofEpochMilli(millis));
    }

    static long parseHttpDate(String s) {
        try {
            return java.time.ZonedDateTime.parse(s, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant().toEpochMilli();
        } catch (java.time.format.DateTimeParseException e) {
            return -1;
        }
    }

    /** The reply header for a token request: the bare status, or {@code status:server-token} with reply=compat. */
    String rdmaReply(int status) {
        return options.replyCompat() ? status + ":" + serverToken : Integer.toString(status);
    }
}
