package ernic.ionic.target.s3;

/** A bounded byte FIFO over one array: a TCP connection's send or receive buffer. */
final class ByteRing {
    private final byte[] buf;
    private int head;
    private int size;

    ByteRing(int capacity) {
        buf = new byte[capacity];
    }

    int size() {
        return size;
    }

    int free() {
        return buf.length - size;
    }

    int capacity() {
        return buf.length;
    }

    /** Appends up to {@code len} bytes; returns how many fitted. */
    int write(byte[] src, int off, int len) {
        int n = Math.min(len, free());
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

    void clear() {
        head = 0;
        size = 0;
    }
}
