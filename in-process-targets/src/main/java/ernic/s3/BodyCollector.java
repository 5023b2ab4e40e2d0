package ernic.s3;

import java.security.MessageDigest;
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
    private final MessageDigest md5 = ChecksumAlgorithm.messageDigest("MD5");
    private final MessageDigest sha256;
    private final ChecksumAlgorithm checksum;
    private final ChecksumAlgorithm.Running running;
    private byte[] current;
    private int fill;
    private long size, stored, taken;
    private boolean overLimit, overBudget;
    private byte[] md5Value, sha256Value, checksumValue;

    /**
     * @param limit    most bytes accepted
     * @param expected the decoded length if known (-1), so pieces are sized to it
     */
    BodyCollector(Budget budget, long limit, long expected, boolean sha256, ChecksumAlgorithm checksum) {
        this.budget = budget;
        this.limit = limit;
        this.expected = expected;
        this.sha256 = sha256 ? ChecksumAlgorithm.messageDigest("SHA-256") : null;
        this.checksum = checksum;
        this.running = checksum == null ? null : checksum.start();
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

    /** The body's MD5 (computed once, when first asked: the body is complete by then). */
    byte[] md5() {
        if (md5Value == null) {
            md5Value = md5.digest();
        }
        return md5Value;
    }

    byte[] sha256() {
        if (sha256Value == null && sha256 != null) {
            sha256Value = sha256.digest();
        }
        return sha256Value;
    }

    ChecksumAlgorithm checksum() {
        return checksum;
    }

    byte[] checksumValue() {
        if (checksumValue == null && running != null) {
            checksumValue = running.value();
        }
        return checksumValue;
    }

    /** Gives the body's memory back to the in-flight budget (the store accounts for it once stored). */
    void release() {
        budget.give(taken);
        taken = 0;
    }
}
