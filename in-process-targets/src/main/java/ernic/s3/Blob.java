package ernic.s3;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Immutable object bytes as a list of array pieces, so a multipart object, a copy or a range shares the
 * uploaded arrays instead of copying them, and an object may exceed one Java array.
 */
final class Blob {
    record Piece(byte[] array, int off, int len) {
    }

    static final Blob EMPTY = new Blob(List.of());

    /**
     * The longest array an upload's bytes are kept in, HTTP body or token. Under half of G1's smallest region
     * (1 MiB), so whatever the heap, a piece is an ordinary allocation in memory the collector reuses, never a
     * humongous object in fresh memory: 16 MiB arrays cost 36-42 ms each to allocate, a page fault per 4 KiB on
     * first touch, most of a 64 MiB token PUT (docs/s3.md).
     */
    static final int PIECE = 256 << 10;

    private final Piece[] pieces;
    /** starts[i] = offset of piece i in the blob. */
    private final long[] starts;
    private final long size;

    Blob(List<Piece> list) {
        List<Piece> kept = new ArrayList<>();
        for (Piece p : list) {
            if (p.len > 0) {
                kept.add(p);
            }
        }
        pieces = kept.toArray(new Piece[0]);
        starts = new long[pieces.length];
        long s = 0;
        for (int i = 0; i < pieces.length; i++) {
            starts[i] = s;
            s += pieces[i].len;
        }
        size = s;
    }

    static Blob of(byte[] a) {
        return new Blob(List.of(new Piece(a, 0, a.length)));
    }

    static Blob concat(List<Blob> parts) {
        List<Piece> all = new ArrayList<>();
        for (Blob b : parts) {
            all.addAll(Arrays.asList(b.pieces));
        }
        return new Blob(all);
    }

    long size() {
        return size;
    }

    private int pieceAt(long off) {
        int i = Arrays.binarySearch(starts, off);
        return i >= 0 ? i : -i - 2;
    }

    /** The bytes [off, off+len) as a blob sharing these arrays. */
    Blob slice(long off, long len) {
        if (off < 0 || len < 0 || off + len > size) {
            throw new IndexOutOfBoundsException();
        }
        List<Piece> out = new ArrayList<>();
        for (int i = len == 0 ? pieces.length : pieceAt(off); i < pieces.length && len > 0; i++) {
            Piece p = pieces[i];
            int skip = (int) Math.max(0, off - starts[i]);
            int n = (int) Math.min(p.len - skip, len);
            out.add(new Piece(p.array, p.off + skip, n));
            len -= n;
            off += n;
        }
        return new Blob(out);
    }

    /** Copies up to {@code len} bytes at {@code off} into {@code dst}; returns how many. */
    int copyOut(long off, byte[] dst, int dstOff, int len) {
        int done = 0;
        for (int i = pieceAt(off); i < pieces.length && done < len && off < size; i++) {
            Piece p = pieces[i];
            int skip = (int) (off - starts[i]);
            int n = Math.min(p.len - skip, len - done);
            System.arraycopy(p.array, p.off + skip, dst, dstOff + done, n);
            done += n;
            off += n;
        }
        return done;
    }

    /** Each piece as a heap segment, in order: what a token GET hands to the guest. */
    List<MemorySegment> segments() {
        List<MemorySegment> out = new ArrayList<>(pieces.length);
        for (Piece p : pieces) {
            out.add(MemorySegment.ofArray(p.array).asSlice(p.off, p.len));
        }
        return out;
    }

    /** A copy as one array (tests and small bodies such as XML). */
    byte[] toArray() {
        byte[] out = new byte[Math.toIntExact(size)];
        copyOut(0, out, 0, out.length);
        return out;
    }
}
