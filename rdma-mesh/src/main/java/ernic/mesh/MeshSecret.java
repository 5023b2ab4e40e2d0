package ernic.mesh;

import javax.crypto.spec.SecretKeySpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;

/**
 * The shared secret every node of an authenticated mesh holds, read from a file ({@code secret=FILE} in the
 * {@code --backend} spec). The secret is the file's bytes without trailing whitespace (so {@code openssl rand -hex 32}
 * and {@code head -c 32 /dev/urandom} both work), at least {@link #MIN_BYTES} of them. The file must be a regular
 * file that neither group nor others may read, write or execute, as ssh insists for private keys: a secret others
 * can read authenticates nobody.
 */
public final class MeshSecret {
    /** Fewest bytes a secret may have: 128 bits if they are random. */
    public static final int MIN_BYTES = 16;
    /** Most bytes read from a secret file. */
    public static final int MAX_BYTES = 4096;

    private static final Set<PosixFilePermission> GROUP_OR_OTHERS = EnumSet.of(
            PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE,
            PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

    private final Path file;
    private final SecretKeySpec key;

    private MeshSecret(Path file, byte[] bytes) {
        this.file = file;
        this.key = new SecretKeySpec(bytes, "HmacSHA256");
        Arrays.fill(bytes, (byte) 0);
    }

    /**
     * Reads the secret from {@code file}. Anything wrong (missing, not a regular file, readable by group or others,
     * empty, shorter than {@link #MIN_BYTES} or longer than {@link #MAX_BYTES}) is an IllegalArgumentException with a
     * one-line message naming the file: the server refuses to start.
     */
    public static MeshSecret load(Path file) {
        String what = "mesh secret file " + file;
        try {
            if (!Files.exists(file)) {
                throw new IllegalArgumentException(what + ": no such file");
            }
            if (!Files.isRegularFile(file)) {
                throw new IllegalArgumentException(what + ": not a regular file");
            }
            Set<PosixFilePermission> perms;
            try {
                perms = Files.getPosixFilePermissions(file);
            } catch (UnsupportedOperationException e) {
                throw new IllegalArgumentException(what + ": its file system has no POSIX permissions to check");
            }
            Set<PosixFilePermission> open = EnumSet.copyOf(GROUP_OR_OTHERS);
            open.retainAll(perms);
            if (!open.isEmpty()) {
                throw new IllegalArgumentException(what + ": permissions " + PosixFilePermissions.toString(perms)
                        + " are too open (group or others have access); chmod 600 it");
            }
            if (Files.size(file) > MAX_BYTES) {
                throw new IllegalArgumentException(what + ": longer than " + MAX_BYTES + " bytes");
            }
            byte[] raw = Files.readAllBytes(file);
            int n = raw.length;
            while (n > 0 && isTrailingSpace(raw[n - 1])) {
                n--;
            }
            byte[] secret = Arrays.copyOf(raw, n);
            Arrays.fill(raw, (byte) 0);
            if (n == 0) {
                throw new IllegalArgumentException(what + ": empty");
            }
            if (n < MIN_BYTES) {
                Arrays.fill(secret, (byte) 0);
                throw new IllegalArgumentException(what + ": " + n + " bytes, a secret needs at least " + MIN_BYTES
                        + " (e.g. openssl rand -hex 32 > FILE)");
            }
            return new MeshSecret(file, secret);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException(what + ": no such file");
        } catch (IOException e) {
            throw new IllegalArgumentException(what + ": cannot read (" + e.getMessage() + ")");
        }
    }

    /** A secret from bytes (tests, and callers with their own key store); at least {@link #MIN_BYTES}. */
    public static MeshSecret of(byte[] secret) {
        if (secret.length < MIN_BYTES || secret.length > MAX_BYTES) {
            throw new IllegalArgumentException("a mesh secret has " + MIN_BYTES + " to " + MAX_BYTES + " bytes");
        }
        return new MeshSecret(null, secret.clone());
    }

    private static boolean isTrailingSpace(byte b) {
        return b == '\n' || b == '\r' || b == ' ' || b == '\t';
    }

    /** The HMAC-SHA256 key. */
    SecretKeySpec key() {
        return key;
    }

    /** Where it was read from, for logs (null when given as bytes). */
    Path file() {
        return file;
    }

    /** Never the secret itself. */
    @Override
    public String toString() {
        return "MeshSecret[" + (file == null ? "given" : file) + "]";
    }
}
