package ernic.s3;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * AWS Signature Version 4 as S3 checks it (docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-authenticating-
 * requests.html): the Authorization header or a presigned query, and the chunk signatures of a
 * {@code STREAMING-AWS4-HMAC-SHA256-PAYLOAD} body. Used only when access and secret keys are configured.
 */
final class SigV4 {
    static final String ALGORITHM = "AWS4-HMAC-SHA256";
    static final String EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    private static final HexFormat HEX = HexFormat.of();
    private static final DateTimeFormatter AMZ_DATE = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'");

    /** An S3 error: its code and message. */
    record Failure(int status, String code, String message) {
    }

    /** What a verified request leaves for checking its streaming chunks. */
    record Verified(String amzDate, String scope, byte[] signingKey, String seedSignature) {
    }

    private final String accessKey, secretKey;

    SigV4(String accessKey, String secretKey) {
        this.accessKey = accessKey;
        this.secretKey = secretKey;
    }

    /** Verifies a request; {@code out[0]} receives what chunk checks need. Returns null when it is good. */
    Failure verify(HttpRequest r, Instant now, Verified[] out) {
        String auth = r.header("authorization");
        Map<String, String> q = r.query;
        String credential, signedHeaders, signature, amzDate, payload;
        boolean presigned = auth == null && q.containsKey("X-Amz-Signature");
        if (presigned) {
            if (!ALGORITHM.equals(q.get("X-Amz-Algorithm"))) {
                return new Failure(400, "AuthorizationQueryParametersError", "X-Amz-Algorithm must be " + ALGORITHM);
            }
            credential = q.get("X-Amz-Credential");
            signedHeaders = q.get("X-Amz-SignedHeaders");
            signature = q.get("X-Amz-Signature");
            amzDate = q.get("X-Amz-Date");
            payload = "UNSIGNED-PAYLOAD";
            long expires = HttpHeadParser.parseLength(q.getOrDefault("X-Amz-Expires", ""));
            Instant at = parseAmzDate(amzDate);
            if (credential == null || signedHeaders == null || at == null || expires < 0 || expires > 604800) {
                return new Failure(400, "AuthorizationQueryParametersError", "bad presigned query parameters");
            }
            if (now.isAfter(at.plusSeconds(expires))) {
                return new Failure(403, "AccessDenied", "Request has expired");
            }
        } else {
            if (auth == null) {
                return new Failure(403, "AccessDenied", "Access Denied");
            }
            if (!auth.startsWith(ALGORITHM + " ")) {
                return new Failure(400, "InvalidRequest", "The authorization mechanism you have provided is not supported. Please use " + ALGORITHM + ".");
            }
            Map<String, String> parts = new TreeMap<>();
            for (String p : auth.substring(ALGORITHM.length() + 1).split(",")) {
                int eq = p.indexOf('=');
                if (eq > 0) {
                    parts.put(p.substring(0, eq).strip(), p.substring(eq + 1).strip());
                }
            }
            credential = parts.get("Credential");
            signedHeaders = parts.get("SignedHeaders");
            signature = parts.get("Signature");
            amzDate = r.header("x-amz-date");
            payload = r.header("x-amz-content-sha256");
            if (credential == null || signedHeaders == null || signature == null) {
                return new Failure(400, "AuthorizationHeaderMalformed", "The authorization header is malformed.");
            }
            if (payload == null) {
                return new Failure(400, "InvalidRequest", "Missing required header for this request: x-amz-content-sha256");
            }
            if (amzDate == null || parseAmzDate(amzDate) == null) {
                return new Failure(403, "AccessDenied", "AWS authentication requires a valid Date or x-amz-date header");
            }
        }
        String[] cred = credential.split("/", -1);
        if (cred.length != 5 || !cred[4].equals("aws4_request") || !cred[3].equals("s3")
                || !amzDate.startsWith(cred[1])) {
            return new Failure(400, "AuthorizationHeaderMalformed", "bad credential scope " + credential);
        }
        if (!cred[0].equals(accessKey)) {
            return new Failure(403, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.");
        }
        String scope = cred[1] + "/" + cred[2] + "/" + cred[3] + "/" + cred[4];
        String canonical = canonicalRequest(r, signedHeaders, payload, presigned);
        if (canonical == null) {
            return new Failure(400, "AuthorizationHeaderMalformed", "a signed header is missing");
        }
        String toSign = ALGORITHM + "\n" + amzDate + "\n" + scope + "\n" + hex(sha256(canonical));
        byte[] key = signingKey(secretKey, cred[1], cred[2], cred[3]);
        String expected = hex(hmac(key, toSign));
        if (!MessageDigest.isEqual(expected.getBytes(StandardCharsets.US_ASCII),
                signature.getBytes(StandardCharsets.US_ASCII))) {
            return new Failure(403, "SignatureDoesNotMatch",
                    "The request signature we calculated does not match the signature you provided.");
        }
        out[0] = new Verified(amzDate, scope, key, signature);
        return null;
    }

    /** The canonical request (step 1 of the signing process), or null if a signed header is absent. */
    static String canonicalRequest(HttpRequest r, String signedHeaders, String payload, boolean presigned) {
        StringBuilder sb = new StringBuilder();
        sb.append(r.method).append('\n');
        sb.append(uriEncode(r.path, false)).append('\n');
        sb.append(canonicalQuery(r.rawQuery, presigned)).append('\n');
        for (String h : signedHeaders.split(";")) {
            String v = r.header(h);
            if (v == null) {
                return null;
            }
            sb.append(h).append(':').append(v.strip().replaceAll(" +", " ")).append('\n');
        }
        sb.append('\n').append(signedHeaders).append('\n').append(payload);
        return sb.toString();
    }

    static String canonicalQuery(String rawQuery, boolean presigned) {
        if (rawQuery.isEmpty()) {
            return "";
        }
        List<String[]> params = new ArrayList<>();
        for (String p : rawQuery.split("&")) {
            if (p.isEmpty()) {
                continue;
            }
            int eq = p.indexOf('=');
            String k = HttpHeadParser.percentDecode(eq < 0 ? p : p.substring(0, eq), false);
            String v = eq < 0 ? "" : HttpHeadParser.percentDecode(p.substring(eq + 1), false);
            if (k == null || v == null || (presigned && k.equals("X-Amz-Signature"))) {
                continue;
            }
            params.add(new String[] {uriEncode(k, true), uriEncode(v, true)});
        }
        params.sort((a, b) -> a[0].equals(b[0]) ? a[1].compareTo(b[1]) : a[0].compareTo(b[0]));
        StringBuilder sb = new StringBuilder();
        for (String[] kv : params) {
            sb.append(sb.isEmpty() ? "" : "&").append(kv[0]).append('=').append(kv[1]);
        }
        return sb.toString();
    }

    /** AWS's URI encoding: unreserved characters kept, everything else %XX of its UTF-8 bytes. */
    static String uriEncode(String s, boolean encodeSlash) {
        StringBuilder sb = new StringBuilder(s.length() + 16);
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if (c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
                    || c == '.' || c == '~' || c == '/' && !encodeSlash) {
                sb.append(c);
            } else {
                sb.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return sb.toString();
    }

    /** The signature a streaming chunk must carry (sigv4-streaming.html). */
    static String chunkSignature(Verified v, String previous, byte[] chunkSha256) {
        String toSign = "AWS4-HMAC-SHA256-PAYLOAD\n" + v.amzDate + "\n" + v.scope + "\n" + previous + "\n"
                + EMPTY_SHA256 + "\n" + hex(chunkSha256);
        return hex(hmac(v.signingKey, toSign));
    }

    static byte[] signingKey(String secret, String date, String region, String service) {
        byte[] k = hmac(("AWS4" + secret).getBytes(StandardCharsets.UTF_8), date);
        k = hmac(k, region);
        k = hmac(k, service);
        return hmac(k, "aws4_request");
    }

    static Instant parseAmzDate(String s) {
        try {
            return s == null ? null : LocalDateTime.parse(s, AMZ_DATE).toInstant(ZoneOffset.UTC);
        } catch (java.time.format.DateTimeParseException e) {
            return null;
        }
    }

    static byte[] hmac(byte[] key, String data) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(data.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK lacks HmacSHA256", e);
        }
    }

    static byte[] sha256(String s) {
        return ChecksumAlgorithm.messageDigest("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
    }

    static String hex(byte[] b) {
        return HEX.formatHex(b);
    }
}
