package ernic.ipstack;

/**
 * A bounded byte FIFO: a TCP connection's send or receive buffer. It holds up to its limit; the array starts
 * small and doubles as data needs it, so a connection pays for the window it uses, not for the one it may use.
 */
final class ByteRing {
    static final int INITIAL = 16 * 1024;

    private final int limit;
    private byte[] buf;
    private int head;
    private int size;

    ByteRing(int limit) {
        this.limit = limit;
        buf = new byte[Math.min(INITIAL, limit)];
    }

    int size() {
        return size;
    }

    int free() {
        return limit - size;
    }

    int capacity() {
        return limit;
    }

    /** Appends up to {@code len} bytes; returns how many fitted. */
    int write(byte[] src, int off, int len) {
        int n = Math.min(len, free());
        grow(size + n);
        int tail = (head + size) % buf.length;
        int first = Math.min(n, buf.length - tail);
        System.arraycopy(src, off, buf, tail, first);
        System.arraycopy(src, off + first, buf, 0, n - first);
        size += n;
        return n;
    }

    /** Copies {@code len} bytes starting {@code at} bytes past the head, without consuming them. */
    void peek(int at, byte[] dst, int off, int len) {
        if (at < 0 || len < 0 || at + len > size) {
            throw new IndexOutOfBoundsException();
        }
        int start = (head + at) % buf.length;
        int first = Math.min(len, buf.length - start);
        System.arraycopy(buf, start, dst, off, first);
        System.arraycopy(buf, 0, dst, off + first, len - first);
    }

    /** Removes and copies up to {@code len} bytes; returns how many. */
    int read(byte[] dst, int off, int len) {
        int n = Math.min(len, size);
        peek(0, dst, off, n);
        discard(n);
        return n;
    }

    void discard(int n) {
        if (n < 0 || n > size) {
            throw new IndexOutOfBoundsException();
        }
        head = (head + n) % buf.length;
        size -= n;
    }

    private void grow(int need) {
        if (need <= buf.length) {
            return;
        }
        int cap = buf.length;
        while (cap < need) {
            cap = Math.min(limit, cap * 2);
        }
        byte[] b = new byte[cap];
        int first = Math.min(size, buf.length - head);
        System.arraycopy(buf, head, b, 0, first);
        System.arraycopy(buf, 0, b, first, size - first);
        buf = b;
        head = 0;
    }

    void clear() {
        head = 0;
        size = 0;
    }
}
