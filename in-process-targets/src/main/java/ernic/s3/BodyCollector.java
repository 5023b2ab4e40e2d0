package ernic.s3;

import java.util.ArrayList;
import java.util.List;

/**
 * Gathers a request body into array pieces within a byte limit, with the digests the request needs: MD5
 * always (the ETag), SHA-256 when the signature names the payload hash, and one flexible checksum when the
 * client declared one. Memory for the body is taken from the store's in-flight budget and given back by
 * {@link #release()}.
 */
final class BodyCollector implements ChunkedDecoder.Output {
    /** The memory bodies in flight may use together. */
    interface Budget {
        boolean take(long n);

        void give(long n);
    }

    private final Budget budget;
    private final long limit;
    private final long expected;
    private final List<Blob.Piece> pieces = new ArrayList<>();
    private final Summary md5 = new Summary(ChecksumAlgorithm.digest("MD5"));
    private final Summary sha256;
    private final ChecksumAlgorithm checksum;
    private final Summary running;
    private byte[] current;
    private int fill;
    private long size, stored, taken;
    private boolean overLimit, overBudget;

    /**
     * A digest or checksum running over the body, and its value: taken once, when first asked (the body is complete
     * by then).
     */
    private static final class Summary {
        private final ChecksumAlgorithm.Running running;
        private byte[] value;

        Summary(ChecksumAlgorithm.Running running) {
            this.running = running;
        }

        void update(byte[] b, int off, int len) {
            running.update(b, off, len);
        }

        byte[] value() {
            if (value == null) {
                value = running.value();
            }
            return value;
        }
    }

    /**
     * @param limit    most bytes accepted
     * @param expected the decoded length if known (-1), so pieces are sized to it
     */
    BodyCollector(Budget budget, long limit, long expected, boolean sha256, ChecksumAlgorithm checksum) {
        this.budget = budget;
        this.limit = limit;
        this.expected = expected;
        this.sha256 = sha256 ? new Summary(ChecksumAlgorithm.digest("SHA-256")) : null;
        this.checksum = checksum;
        this.running = checksum == null ? null : new Summary(checksum.start());
    }

    @Override
    public void data(byte[] b, int off, int len) {
        if (overLimit || overBudget) {
            return;
        }
        if (size + len > limit) {
            overLimit = true;
            return;
        }
        md5.update(b, off, len);
        if (sha256 != null) {
            sha256.update(b, off, len);
        }
        if (running != null) {
            running.update(b, off, len);
        }
        size += len;
        while (len > 0) {
            if (current == null || fill == current.length) {
                long want = expected > stored ? expected - stored : Blob.PIECE;
                int n = (int) Math.min(Blob.PIECE, want);
                if (!budget.take(n)) {
                    overBudget = true;
                    return;
                }
                taken += n;
                current = new byte[n];
                fill = 0;
                pieces.add(null);
            }
            int n = Math.min(len, current.length - fill);
            System.arraycopy(b, off, current, fill, n);
            fill += n;
            stored += n;
            off += n;
            len -= n;
            pieces.set(pieces.size() - 1, new Blob.Piece(current, 0, fill));
        }
    }

    long size() {
        return size;
    }

    boolean overLimit() {
        return overLimit;
    }

    boolean overBudget() {
        return overBudget;
    }

    Blob blob() {
        return new Blob(pieces);
    }

    /** The body's MD5. */
    byte[] md5() {
        return md5.value();
    }

    /** The body's SHA-256, or null when the request does not need it. */
    byte[] sha256() {
        return sha256 == null ? null : sha256.value();
    }

    ChecksumAlgorithm checksum() {
        return checksum;
    }

    /** The value of the {@link #checksum()} the client declared, or null when it declared none. */
    byte[] checksumValue() {
        return running == null ? null : running.value();
    }

    /** Gives the body's memory back to the in-flight budget (the store accounts for it once stored). */
    void release() {
        budget.give(taken);
        taken = 0;
    }
}
