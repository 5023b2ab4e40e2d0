package ernic.s3;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.Locale;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;

/**
 * The flexible checksums S3 clients send as {@code x-amz-checksum-<name>} (a header or an aws-chunked
 * trailer): the value is the base64 of the big-endian checksum or digest of the decoded object bytes.
 */
enum ChecksumAlgorithm {
    CRC32, CRC32C, CRC64NVME, SHA1, SHA256;

    /** A running checksum over the bytes of one body. */
    interface Running {
        void update(byte[] b, int off, int len);

        byte[] value();
    }

    String header() {
        return "x-amz-checksum-" + name().toLowerCase(Locale.ROOT);
    }

    /** The algorithm a header or trailer name ({@code x-amz-checksum-crc32}) or an algorithm name names. */
    static ChecksumAlgorithm named(String s) {
        String n = s.toLowerCase(Locale.ROOT).strip();
        if (n.startsWith("x-amz-checksum-")) {
            n = n.substring("x-amz-checksum-".length());
        }
        for (ChecksumAlgorithm a : values()) {
            if (a.name().toLowerCase(Locale.ROOT).equals(n)) {
                return a;
            }
        }
        return null;
    }

    Running start() {
        return switch (this) {
            case CRC32 -> crc(new CRC32());
            case CRC32C -> crc(new CRC32C());
            case CRC64NVME -> new Crc64Nvme();
            case SHA1 -> digest("SHA-1");
            case SHA256 -> digest("SHA-256");
        };
    }

    static String base64(byte[] v) {
        return Base64.getEncoder().encodeToString(v);
    }

    private static Running crc(java.util.zip.Checksum c) {
        return new Running() {
            @Override
            public void update(byte[] b, int off, int len) {
                c.update(b, off, len);
            }

            @Override
            public byte[] value() {
                long v = c.getValue();
                return new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
            }
        };
    }

    static MessageDigest messageDigest(String name) {
        try {
            return MessageDigest.getInstance(name);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK lacks " + name, e);
        }
    }

    /** A {@link MessageDigest} of {@code name} as a running value. */
    static Running digest(String name) {
        MessageDigest d = messageDigest(name);
        return new Running() {
            @Override
            public void update(byte[] b, int off, int len) {
                d.update(b, off, len);
            }

            @Override
            public byte[] value() {
                return d.digest();
            }
        };
    }

    /**
     * CRC-64/NVME (the NVMe NVM command set's CRC, AWS's default): polynomial 0xAD93D23594C93659, reflected,
     * initial value and final XOR all ones.
     */
    static final class Crc64Nvme implements Running {
        private static final long[] TABLE = new long[256];

        static {
            long poly = Long.reverse(0xAD93D23594C93659L);
            for (int i = 0; i < 256; i++) {
                long c = i;
                for (int k = 0; k < 8; k++) {
                    c = (c & 1) != 0 ? c >>> 1 ^ poly : c >>> 1;
                }
                TABLE[i] = c;
            }
        }

        private long crc = -1L;

        @Override
        public void update(byte[] b, int off, int len) {
            long c = crc;
            for (int i = off, end = off + len; i < end; i++) {
                c = TABLE[(int) ((c ^ b[i]) & 0xff)] ^ c >>> 8;
            }
            crc = c;
        }

        long getValue() {
            return ~crc;
        }

        @Override
        public byte[] value() {
            long v = ~crc;
            byte[] out = new byte[8];
            for (int i = 0; i < 8; i++) {
                out[i] = (byte) (v >>> (56 - 8 * i));
            }
            return out;
        }
    }
}
