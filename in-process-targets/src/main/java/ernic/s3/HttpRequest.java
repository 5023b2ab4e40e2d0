package ernic.s3;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** One parsed HTTP/1.1 request head (RFC 9112): method, target split into path and query, fields. */
public final class HttpRequest {
    /** One header field, name in lower case, value with surrounding whitespace removed. */
    public record Field(String name, String value) {
    }

    final String method;
    /** The request target as sent: path and query, still percent-encoded. */
    final String rawPath, rawQuery;
    /** The decoded path; query parameters decoded, in the order sent (a name without '=' maps to ""). */
    final String path;
    final Map<String, String> query;
    final boolean http11;
    final List<Field> fields;
    /** Content-Length, or -1 when absent. */
    final long contentLength;
    final boolean chunked;

    HttpRequest(String method, String rawPath, String rawQuery, String path, Map<String, String> query,
                boolean http11, List<Field> fields, long contentLength, boolean chunked) {
        this.method = method;
        this.rawPath = rawPath;
        this.rawQuery = rawQuery;
        this.path = path;
        this.query = Collections.unmodifiableMap(new LinkedHashMap<>(query));
        this.http11 = http11;
        this.fields = List.copyOf(fields);
        this.contentLength = contentLength;
        this.chunked = chunked;
    }

    public String method() {
        return method;
    }

    public String path() {
        return path;
    }

    public Map<String, String> query() {
        return query;
    }

    /** The field's value (several occurrences joined with ","), or null. */
    public String header(String lowerName) {
        String v = null;
        for (Field f : fields) {
            if (f.name.equals(lowerName)) {
                v = v == null ? f.value : v + "," + f.value;
            }
        }
        return v;
    }

    /** The fields whose names start with {@code prefix}, in order (unmodifiable). */
    List<Field> fieldsNamed(String prefix) {
        return fields.stream().filter(f -> f.name.startsWith(prefix)).toList();
    }

    boolean hasBody() {
        return chunked || contentLength > 0;
    }

    /** Whether the connection stays open after the response (RFC 9112 9.3). */
    boolean keepAlive() {
        String c = header("connection");
        String lc = c == null ? "" : c.toLowerCase(java.util.Locale.ROOT);
        return http11 ? !lc.contains("close") : lc.contains("keep-alive");
    }

    boolean expectsContinue() {
        String e = header("expect");
        return http11 && e != null && e.equalsIgnoreCase("100-continue");
    }
}
