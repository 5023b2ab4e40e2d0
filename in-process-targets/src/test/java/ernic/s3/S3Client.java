package ernic.s3;

import ernic.counters.Counters;
import ernic.attach.HostMemory;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A raw HTTP/1.1 client for the tests: writes requests byte for byte over a {@link GuestTcp} through the
 * simulated link into an {@link S3Store}, and parses the responses it gets back.
 */
final class S3Client {
    record Response(int status, Map<String, String> headers, byte[] body, List<Integer> interim) {
        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }

        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }
    }

    static final String HOST = "192.168.200.1:9000";

    final Counters<HttpCounter> http;
    final Counters<S3Counter> s3;
    final S3Store store;
    final Rig rig;
    GuestTcp tcp;
    private int readAt;
    private static int nextPort = 50000;
    private final List<Integer> interim = new ArrayList<>();

    S3Client(S3Options options, HostMemory host, Clock clock) {
        http = new Counters<>(HttpCounter.class);
        s3 = new Counters<>(S3Counter.class);
        store = new S3Store(options, host, clock, http, s3);
        rig = new Rig(store::accept);
        reconnect();
    }

    /** Another connection to the same store over the same link. */
    S3Client(S3Client same) {
        http = same.http;
        s3 = same.s3;
        store = same.store;
        rig = same.rig;
        reconnect();
    }

    S3Client(S3Options options, HostMemory host) {
        this(options, host, Clock.fixed(Instant.parse("2026-12-01T12:00:00Z"), ZoneOffset.UTC));
    }

    S3Client() {
        this(S3Options.DEFAULTS, null);
    }

    void reconnect() {
        tcp = rig.connect(nextPort++);
        readAt = 0;
        rig.run(() -> tcp.established, 1000);
    }

    /** A request with Host and (for a body) Content-Length added unless given. */
    Response send(String method, String target, Map<String, String> headers, byte[] body) {
        write(method, target, headers, body);
        return next(method.equals("HEAD"));
    }

    /** Queues a request without waiting for its response ({@link #poll}). */
    void write(String method, String target, Map<String, String> headers, byte[] body) {
        if (tcp.peerFin || tcp.reset) {
            reconnect(); // the store closed the last one after an error, as a client would reconnect
        }
        StringBuilder sb = new StringBuilder();
        sb.append(method).append(' ').append(target).append(" HTTP/1.1\r\n");
        Map<String, String> h = new LinkedHashMap<>();
        h.put("Host", HOST);
        h.putAll(headers);
        if ((body.length > 0 || method.equals("PUT")) && h.keySet().stream().noneMatch(k -> k.equalsIgnoreCase("content-length")
                || k.equalsIgnoreCase("transfer-encoding"))) {
            h.put("Content-Length", Integer.toString(body.length));
        }
        h.forEach((k, v) -> sb.append(k).append(": ").append(v).append("\r\n"));
        sb.append("\r\n");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(sb.toString().getBytes(StandardCharsets.ISO_8859_1));
        out.writeBytes(body);
        tcp.write(out.toByteArray());
    }

    /** The next response if it is complete, else null; does not run the link. */
    Response poll(boolean head) {
        return parse(head, interim);
    }

    Response send(String method, String target) {
        return send(method, target, Map.of(), new byte[0]);
    }

    Response put(String target, byte[] body) {
        return send("PUT", target, Map.of(), body);
    }

    /** Writes bytes as they are and waits for one response. */
    Response raw(byte[] request, boolean head) {
        tcp.write(request);
        return next(head);
    }

    /** Waits for the next response on the connection. */
    Response next(boolean head) {
        Response[] got = new Response[1];
        rig.run(() -> (got[0] = parse(head, interim)) != null || tcp.peerFin || tcp.reset, 60_000);
        if (got[0] == null) {
            got[0] = parse(head, interim);
        }
        if (got[0] == null) {
            throw new AssertionError("connection closed without a response");
        }
        return got[0];
    }

    private Response parse(boolean head, List<Integer> interim) {
        byte[] all = tcp.in;
        int allLen = tcp.inLen;
        while (true) {
            int end = indexOf(all, allLen, readAt, "\r\n\r\n");
            if (end < 0) {
                return null;
            }
            String[] lines = new String(all, readAt, end - readAt, StandardCharsets.ISO_8859_1).split("\r\n");
            int status = Integer.parseInt(lines[0].split(" ")[1]);
            Map<String, String> headers = new LinkedHashMap<>();
            for (int i = 1; i < lines.length; i++) {
                int c = lines[i].indexOf(':');
                headers.put(lines[i].substring(0, c).toLowerCase(Locale.ROOT), lines[i].substring(c + 1).strip());
            }
            int bodyAt = end + 4;
            if (status < 200) {
                interim.add(status);
                readAt = bodyAt;
                continue;
            }
            int len = head || status == 204 || status == 304 ? 0
                    : Integer.parseInt(headers.getOrDefault("content-length", "0"));
            if (allLen < bodyAt + len) {
                return null;
            }
            byte[] body = java.util.Arrays.copyOfRange(all, bodyAt, bodyAt + len);
            readAt = bodyAt + len;
            Response r = new Response(status, headers, body, List.copyOf(interim));
            interim.clear();
            return r;
        }
    }

    private static int indexOf(byte[] b, int len, int from, String s) {
        byte[] p = s.getBytes(StandardCharsets.ISO_8859_1);
        outer:
        for (int i = from; i <= len - p.length; i++) {
            for (int k = 0; k < p.length; k++) {
                if (b[i + k] != p[k]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
