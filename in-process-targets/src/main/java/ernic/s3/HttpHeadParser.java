package ernic.s3;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Parses a request head (request line and fields, RFC 9112 2-5) from bytes. Strict where leniency lets two
 * parsers disagree about where a request ends: obsolete line folding, whitespace before a colon, a bad or
 * conflicting Content-Length, Content-Length with Transfer-Encoding, and transfer codings other than
 * chunked are refused. Never throws: a malformed head is a {@link Result} with an error.
 */
final class HttpHeadParser {
    static final int MAX_HEAD = 16 * 1024, MAX_FIELDS = 100;

    /** A head, or the status and reason it was refused with (400, 431, 501, 505). */
    record Result(HttpRequest request, int status, String error) {
        static Result fail(int status, String error) {
            return new Result(null, status, error);
        }
    }

    private HttpHeadParser() {
    }

    /** Where the head in {@code b[0..len)} ends (just past the empty line), or -1 if it is not complete. */
    static int headEnd(byte[] b, int len) {
        for (int i = 0; i < len; i++) {
            if (b[i] == '\n') {
                if (i + 1 < len && b[i + 1] == '\n') {
                    return i + 2;
                }
                if (i + 2 < len && b[i + 1] == '\r' && b[i + 2] == '\n') {
                    return i + 3;
                }
            }
        }
        return -1;
    }

    static Result parse(byte[] b, int end) {
        List<String> lines = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < end; i++) {
            if (b[i] == '\n') {
                int e = i > start && b[i - 1] == '\r' ? i - 1 : i;
                lines.add(new String(b, start, e - start, StandardCharsets.ISO_8859_1));
                start = i + 1;
            }
        }
        // RFC 9112 2.2: empty lines before the request line are ignored.
        while (!lines.isEmpty() && lines.getFirst().isEmpty()) {
            lines.removeFirst();
        }
        if (lines.isEmpty()) {
            return Result.fail(400, "empty request");
        }
        String[] rl = lines.getFirst().split(" ", -1);
        if (rl.length != 3 || !isToken(rl[0])) {
            return Result.fail(400, "bad request line");
        }
        boolean http11;
        switch (rl[2]) {
            case "HTTP/1.1" -> http11 = true;
            case "HTTP/1.0" -> http11 = false;
            default -> {
                return rl[2].startsWith("HTTP/") ? Result.fail(505, "unsupported HTTP version")
                        : Result.fail(400, "bad request line");
            }
        }
        String target = rl[1];
        if (target.startsWith("http://") || target.startsWith("https://")) {
            int slash = target.indexOf('/', target.indexOf("//") + 2);
            target = slash < 0 ? "/" : target.substring(slash);
        }
        if (!target.startsWith("/") || !printable(target)) {
            return Result.fail(400, "bad request target");
        }
        int q = target.indexOf('?');
        String rawPath = q < 0 ? target : target.substring(0, q);
        String rawQuery = q < 0 ? "" : target.substring(q + 1);
        String path = percentDecode(rawPath, false);
        if (path == null) {
            return Result.fail(400, "bad percent-encoding in path");
        }
        Map<String, String> query = new LinkedHashMap<>();
        if (!rawQuery.isEmpty()) {
            for (String p : rawQuery.split("&")) {
                if (p.isEmpty()) {
                    continue;
                }
                int eq = p.indexOf('=');
                String k = percentDecode(eq < 0 ? p : p.substring(0, eq), true);
                String v = eq < 0 ? "" : percentDecode(p.substring(eq + 1), true);
                if (k == null || v == null) {
                    return Result.fail(400, "bad percent-encoding in query");
                }
                query.putIfAbsent(k, v);
            }
        }
        List<HttpRequest.Field> fields = new ArrayList<>();
        long contentLength = -1;
        boolean chunked = false, te = false;
        for (int i = 1; i < lines.size(); i++) {
            String l = lines.get(i);
            if (l.isEmpty()) {
                break;
            }
            if (fields.size() >= MAX_FIELDS) {
                return Result.fail(431, "too many header fields");
            }
            if (l.charAt(0) == ' ' || l.charAt(0) == '\t') {
                return Result.fail(400, "obsolete line folding");
            }
            int colon = l.indexOf(':');
            if (colon <= 0 || !isToken(l.substring(0, colon))) {
                return Result.fail(400, "bad header field name");
            }
            String name = l.substring(0, colon).toLowerCase(java.util.Locale.ROOT);
            String value = l.substring(colon + 1).strip();
            for (int k = 0; k < value.length(); k++) {
                char c = value.charAt(k);
                if ((c < 0x20 && c != '\t') || c == 0x7f) {
                    return Result.fail(400, "control character in field " + name);
                }
            }
            if (name.equals("content-length")) {
                long n = parseLength(value);
                if (n < 0 || (contentLength >= 0 && contentLength != n)) {
                    return Result.fail(400, "bad Content-Length");
                }
                contentLength = n;
            } else if (name.equals("transfer-encoding")) {
                te = true;
                for (String coding : value.split(",")) {
                    String c = coding.strip().toLowerCase(java.util.Locale.ROOT);
                    if (!c.equals("chunked") || chunked) {
                        return Result.fail(501, "unsupported transfer coding " + c);
                    }
                    chunked = true;
                }
            }
            fields.add(new HttpRequest.Field(name, value));
        }
        if (te && contentLength >= 0) {
            return Result.fail(400, "both Content-Length and Transfer-Encoding");
        }
        boolean host = false;
        for (HttpRequest.Field f : fields) {
            if (f.name().equals("host")) {
                if (host) {
                    return Result.fail(400, "more than one Host");
                }
                host = true;
            }
        }
        if (http11 && !host) {
            return Result.fail(400, "no Host");
        }
        return new Result(new HttpRequest(rl[0], rawPath, rawQuery, path, query, http11, fields, contentLength,
                chunked), 0, null);
    }

    /** A decimal length of up to 18 digits, or -1. */
    static long parseLength(String v) {
        if (v.isEmpty() || v.length() > 18) {
            return -1;
        }
        long n = 0;
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            n = n * 10 + (c - '0');
        }
        return n;
    }

    private static boolean isToken(String s) {
        if (s.isEmpty()) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
                    || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    private static boolean printable(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c <= 0x20 || c >= 0x7f) {
                return false;
            }
        }
        return true;
    }

    /** Percent-decoding as UTF-8 ('+' as space in a query); null on a bad escape or bad UTF-8. */
    static String percentDecode(String s, boolean query) {
        if (s.indexOf('%') < 0 && (!query || s.indexOf('+') < 0)) {
            return s;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '%') {
                if (i + 2 >= s.length()) {
                    return null;
                }
                int hi = Character.digit(s.charAt(i + 1), 16), lo = Character.digit(s.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    return null;
                }
                out.write(hi << 4 | lo);
                i += 2;
            } else if (c == '+' && query) {
                out.write(' ');
            } else {
                out.write(c);
            }
        }
        byte[] bytes = out.toByteArray();
        var dec = StandardCharsets.UTF_8.newDecoder();
        try {
            return dec.decode(java.nio.ByteBuffer.wrap(bytes)).toString();
        } catch (java.nio.charset.CharacterCodingException e) {
            return null;
        }
    }
}
