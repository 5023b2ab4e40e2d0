package ernic.s3;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Decodes the chunked framing shared by HTTP's chunked transfer coding (RFC 9112 7.1) and S3's
 * {@code aws-chunked} content encoding: {@code hex-size[;extensions] CRLF data CRLF ... 0 CRLF trailers CRLF}.
 * Bytes are pushed in; decoded data goes to the {@link Output}; a malformed stream stops with {@link #error()}.
 * Line lengths and the trailer section are bounded.
 */
final class ChunkedDecoder {
    /** Where the decoded stream goes. */
    interface Output {
        /** A chunk begins (size 0: the last chunk), with its extensions ("" if none). */
        default void chunk(long size, String extensions) {
        }

        void data(byte[] b, int off, int len);
    }

    static final int MAX_LINE = 4096, MAX_TRAILERS = 8192;

    private enum State { SIZE, DATA, DATA_END, TRAILER, DONE, FAILED }

    private final Output out;
    private final StringBuilder line = new StringBuilder();
    private final List<HttpRequest.Field> trailers = new ArrayList<>();
    private State state = State.SIZE;
    private long remaining;
    private int trailerBytes;
    private boolean sawCr;
    private String error;

    ChunkedDecoder(Output out) {
        this.out = out;
    }

    boolean done() {
        return state == State.DONE;
    }

    /** Why the stream was refused, or null. */
    String error() {
        return error;
    }

    List<HttpRequest.Field> trailers() {
        return trailers;
    }

    /** Takes bytes from {@code b[off..off+len)}; returns how many were consumed (stops at the end or an error). */
    int feed(byte[] b, int off, int len) {
        int i = off, end = off + len;
        while (i < end && state != State.DONE && state != State.FAILED) {
            switch (state) {
                case DATA -> {
                    int n = (int) Math.min(remaining, end - i);
                    out.data(b, i, n);
                    remaining -= n;
                    i += n;
                    if (remaining == 0) {
                        state = State.DATA_END;
                    }
                }
                case DATA_END -> {
                    byte c = b[i++];
                    if (c == '\r' && !sawCr) {
                        sawCr = true;
                    } else if (c == '\n' && sawCr) {
                        sawCr = false;
                        state = State.SIZE;
                    } else {
                        fail("no CRLF after chunk data");
                    }
                }
                default -> {
                    byte c = b[i++];
                    if (c == '\n') {
                        String l = line.length() > 0 && line.charAt(line.length() - 1) == '\r'
                                ? line.substring(0, line.length() - 1) : line.toString();
                        line.setLength(0);
                        if (state == State.SIZE) {
                            sizeLine(l);
                        } else {
                            trailerLine(l);
                        }
                    } else if (line.length() >= MAX_LINE) {
                        fail("chunk line too long");
                    } else {
                        line.append((char) (c & 0xff));
                        if (state == State.TRAILER && ++trailerBytes > MAX_TRAILERS) {
                            fail("trailer section too large");
                        }
                    }
                }
            }
        }
        return i - off;
    }

    private void sizeLine(String l) {
        int semi = l.indexOf(';');
        String hex = (semi < 0 ? l : l.substring(0, semi)).strip();
        String ext = semi < 0 ? "" : l.substring(semi + 1);
        if (hex.isEmpty() || hex.length() > 15) {
            fail("bad chunk size");
            return;
        }
        long size = 0;
        for (int k = 0; k < hex.length(); k++) {
            int d = Character.digit(hex.charAt(k), 16);
            if (d < 0) {
                fail("bad chunk size");
                return;
            }
            size = size << 4 | d;
        }
        out.chunk(size, ext);
        if (size == 0) {
            state = State.TRAILER;
        } else {
            remaining = size;
            state = State.DATA;
        }
    }

    private void trailerLine(String l) {
        if (l.isEmpty()) {
            state = State.DONE;
            return;
        }
        int colon = l.indexOf(':');
        if (colon <= 0 || l.charAt(0) == ' ' || l.charAt(0) == '\t') {
            fail("bad trailer field");
            return;
        }
        String name = l.substring(0, colon).strip().toLowerCase(Locale.ROOT);
        trailers.add(new HttpRequest.Field(name, l.substring(colon + 1).strip()));
    }

    private void fail(String why) {
        error = why;
        state = State.FAILED;
    }
}
