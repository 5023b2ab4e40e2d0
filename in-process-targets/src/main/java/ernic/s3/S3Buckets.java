package ernic.s3;

import ernic.s3.ObjectStore.Bucket;
import ernic.s3.ObjectStore.Entry;
import ernic.s3.S3Store.Call;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/** Bucket operations: ListBuckets, ListObjects v1 and v2, HEAD, Create, Delete, location, versioning. */
final class S3Buckets {
    static final String OWNER_ID = "ernic", REGION = "us-east-1";
    static final int MAX_KEYS = 1000;

    private final S3Store s;

    S3Buckets(S3Store s) {
        this.s = s;
    }

    HttpResponse listBuckets(Call c) {
        S3Xml x = new S3Xml("ListAllMyBucketsResult");
        x.open("Owner").el("ID", OWNER_ID).el("DisplayName", OWNER_ID).close("Owner").open("Buckets");
        for (Bucket b : s.store.buckets()) {
            x.open("Bucket").el("Name", b.name).el("CreationDate", s.iso(b.created)).close("Bucket");
        }
        return s.xml(x.close("Buckets"), "ListAllMyBucketsResult");
    }

    HttpResponse headBucket(Call c) {
        return s.ok(200).header("x-amz-bucket-region", REGION);
    }

    HttpResponse location(Call c) {
        // us-east-1 is the empty LocationConstraint
        return s.ok(200).xml("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<LocationConstraint xmlns=\""
                + S3Xml.NS + "\"/>");
    }

    HttpResponse versioning(Call c) {
        return s.ok(200).xml("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<VersioningConfiguration xmlns=\""
                + S3Xml.NS + "\"/>");
    }

    HttpResponse createBucket(Call c) {
        if (!S3Options.validBucketName(c.bucket())) {
            return s.error(400, "InvalidBucketName", "The specified bucket is not valid.", c);
        }
        if (c.body().size() > 0) {
            S3Xml.Node root = S3Xml.parse(c.body().blob().toArray());
            if (root == null || !root.name().equals("CreateBucketConfiguration")) {
                return s.error(400, "MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema", c);
            }
        }
        if (s.store.bucket(c.bucket()) != null) {
            return s.error(409, "BucketAlreadyOwnedByYou", "Your previous request to create the named bucket succeeded and you already own it.", c);
        }
        if (!s.store.createBucket(c.bucket(), s.clock.millis())) {
            return s.error(400, "TooManyBuckets", "You have attempted to create more buckets than allowed", c);
        }
        return s.ok(200).header("Location", "/" + c.bucket());
    }

    HttpResponse deleteBucket(Call c) {
        Bucket b = s.store.bucket(c.bucket());
        if (!b.objects.isEmpty()) {
            return s.error(409, "BucketNotEmpty", "The bucket you tried to delete is not empty", c);
        }
        s.store.deleteBucket(b);
        return s.ok(204);
    }

    /** ListObjects (v1: marker) and ListObjectsV2 (continuation-token, start-after). */
    HttpResponse listObjects(Call c, boolean v2) {
        Map<String, String> q = c.http().query();
        String prefix = q.getOrDefault("prefix", "");
        String delimiter = q.getOrDefault("delimiter", "");
        String enc = q.get("encoding-type");
        if (enc != null && !enc.equals("url")) {
            return s.error(400, "InvalidArgument", "Invalid Encoding Method specified in Request", c);
        }
        boolean url = enc != null;
        int maxKeys = MAX_KEYS;
        if (q.containsKey("max-keys")) {
            long m = HttpHeadParser.parseLength(q.get("max-keys"));
            if (m < 0 || m > Integer.MAX_VALUE) {
                return s.error(400, "InvalidArgument", "Provided max-keys not an integer or within integer range", c);
            }
            maxKeys = (int) Math.min(m, MAX_KEYS);
        }
        String after;
        String token = q.get("continuation-token");
        if (v2 && token != null) {
            after = decodeToken(token);
            if (after == null) {
                return s.error(400, "InvalidArgument", "The continuation token provided is incorrect", c);
            }
        } else {
            after = v2 ? q.getOrDefault("start-after", "") : q.getOrDefault("marker", "");
        }
        Bucket b = s.store.bucket(c.bucket());
        List<Map.Entry<String, Entry>> contents = new ArrayList<>();
        List<String> prefixes = new ArrayList<>();
        boolean truncated = false;
        String last = null;
        String from = after.compareTo(prefix) > 0 ? after : prefix;
        for (Map.Entry<String, Entry> en : b.objects.tailMap(from, !from.equals(after)).entrySet()) {
            String key = en.getKey();
            if (!key.startsWith(prefix)) {
                break;
            }
            String common = null;
            if (!delimiter.isEmpty()) {
                int i = key.indexOf(delimiter, prefix.length());
                if (i >= 0) {
                    common = key.substring(0, i + delimiter.length());
                }
            }
            if (common != null && (common.equals(last) || common.equals(after))) {
                continue; // more keys under a prefix already listed (or the marker itself)
            }
            if (contents.size() + prefixes.size() == maxKeys) {
                truncated = true;
                break;
            }
            if (common != null) {
                prefixes.add(common);
                last = common;
            } else {
                contents.add(en);
                last = key;
            }
        }
        String root = "ListBucketResult";
        S3Xml x = new S3Xml(root).el("Name", b.name).el("Prefix", enc(prefix, url));
        if (v2) {
            if (token != null) {
                x.el("ContinuationToken", token);
            }
            if (q.containsKey("start-after")) {
                x.el("StartAfter", enc(q.get("start-after"), url));
            }
            x.el("KeyCount", contents.size() + prefixes.size());
        } else {
            x.el("Marker", enc(after, url));
        }
        x.el("MaxKeys", maxKeys);
        if (!delimiter.isEmpty()) {
            x.el("Delimiter", enc(delimiter, url));
        }
        if (url) {
            x.el("EncodingType", "url");
        }
        x.el("IsTruncated", truncated);
        if (truncated && last != null) {
            if (v2) {
                x.el("NextContinuationToken", encodeToken(last));
            } else {
                x.el("NextMarker", enc(last, url));
            }
        }
        boolean owner = !v2 || "true".equals(q.get("fetch-owner"));
        for (Map.Entry<String, Entry> en : contents) {
            Entry e = en.getValue();
            x.open("Contents").el("Key", enc(en.getKey(), url)).el("LastModified", s.iso(e.modified()))
                    .el("ETag", S3Objects.quote(e.etag())).el("Size", e.data().size());
            if (owner) {
                x.open("Owner").el("ID", OWNER_ID).el("DisplayName", OWNER_ID).close("Owner");
            }
            x.el("StorageClass", "STANDARD").close("Contents");
        }
        for (String p : prefixes) {
            x.open("CommonPrefixes").el("Prefix", enc(p, url)).close("CommonPrefixes");
        }
        return s.xml(x, root);
    }

    private static String enc(String v, boolean url) {
        return url ? SigV4.uriEncode(v, false) : v;
    }

    /** A v2 continuation token: the last key or prefix listed, base64url (opaque to clients). */
    static String encodeToken(String last) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(last.getBytes(StandardCharsets.UTF_8));
    }

    static String decodeToken(String token) {
        try {
            byte[] b = Base64.getUrlDecoder().decode(token);
            var dec = StandardCharsets.UTF_8.newDecoder();
            return dec.decode(java.nio.ByteBuffer.wrap(b)).toString();
        } catch (IllegalArgumentException | java.nio.charset.CharacterCodingException e) {
            return null;
        }
    }
}
