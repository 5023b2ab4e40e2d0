package ernic.nvmeof;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.OptionalLong;

/**
 * The one namespace of the subsystem: {@code blocks} blocks of {@code blockSize} bytes, in RAM or in a file.
 * RAM is moved to and from the host directly ({@link #memory()}) on the device thread; a file is read and
 * written only on the target's I/O executor, never on the device thread (its calls block).
 */
public abstract sealed class Namespace implements AutoCloseable permits Namespace.Ram, Namespace.File {
    private final long blocks;
    private final int blockSize;

    Namespace(long bytes, int blockSize) {
        this.blockSize = blockSize;
        this.blocks = bytes / blockSize;
    }

    public long blocks() {
        return blocks;
    }

    public int blockSize() {
        return blockSize;
    }

    public long bytes() {
        return blocks * blockSize;
    }

    /** The namespace's bytes when it is in RAM (moved inline, on the device thread); null for a file. */
    abstract MemorySegment memory();

    /** File only, I/O executor only: reads {@code dst.remaining()} bytes at {@code offset}. */
    abstract void read(long offset, ByteBuffer dst) throws IOException;

    /** File only, I/O executor only: writes {@code src} at {@code offset}; {@code durable} forces it to the disk. */
    abstract void write(long offset, ByteBuffer src, boolean durable) throws IOException;

    /** Zeroes {@code length} bytes at {@code offset} (Write Zeroes, deallocation). File: I/O executor only. */
    abstract void zero(long offset, long length) throws IOException;

    /** Flush: the data of completed writes reaches stable storage (fdatasync). File: I/O executor only. */
    abstract void flush() throws IOException;

    @Override
    public abstract void close() throws IOException;

    /** A zeroed namespace of {@code bytes} in memory. */
    public static Namespace ram(long bytes, int blockSize) {
        return new Ram(bytes, blockSize);
    }

    /**
     * Opens (or creates) {@code path}. An absent file is created with {@code size} (or the default); an
     * existing one keeps its size when no size is given, is grown to a larger {@code size}, and is refused
     * when {@code size} is smaller: a user's data is never truncated. The message of the exception is the
     * one-line start-up error.
     */
    public static Namespace file(Path path, OptionalLong size, int blockSize) throws IOException {
        boolean existed = Files.exists(path);
        FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        try {
            // Two servers writing one file would corrupt it: the file is ours while the namespace is open.
            boolean locked;
            try {
                locked = ch.tryLock() != null;
            } catch (OverlappingFileLockException e) {
                locked = false;
            }
            if (!locked) {
                throw new IllegalArgumentException("nvmeof backend: file " + path + " is in use by another namespace");
            }
            long have = ch.size();
            long want;
            if (!existed || (have == 0 && size.isEmpty())) {
                want = size.orElse(NvmeofOptions.DEFAULT_SIZE);
            } else if (size.isEmpty()) {
                want = have;
            } else if (size.getAsLong() < have) {
                throw new IllegalArgumentException("nvmeof backend: file " + path + " has " + have
                        + " bytes, more than size=" + size.getAsLong() + " (the file is never truncated)");
            } else {
                want = size.getAsLong();
            }
            if (want % blockSize != 0) {
                throw new IllegalArgumentException("nvmeof backend: file " + path + " has " + want
                        + " bytes, not a whole number of " + blockSize + "-byte blocks");
            }
            if (want > have) {
                // Grows the file without writing: the new blocks read as zeros.
                ch.write(ByteBuffer.allocate(1), want - 1);
            }
            return new File(ch, want, blockSize);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    static final class Ram extends Namespace {
        private final MemorySegment bytes;

        Ram(long bytes, int blockSize) {
            super(bytes, blockSize);
            this.bytes = Arena.ofAuto().allocate(bytes, 4096);
        }

        @Override
        MemorySegment memory() {
            return bytes;
        }

        @Override
        void read(long offset, ByteBuffer dst) {
            MemorySegment.ofBuffer(dst).copyFrom(bytes.asSlice(offset, dst.remaining()));
        }

        @Override
        void write(long offset, ByteBuffer src, boolean durable) {
            bytes.asSlice(offset, src.remaining()).copyFrom(MemorySegment.ofBuffer(src));
        }

        @Override
        void zero(long offset, long length) {
            bytes.asSlice(offset, length).fill((byte) 0);
        }

        @Override
        void flush() {
            // RAM has no stable storage to reach.
        }

        @Override
        public void close() {
            // The arena is automatic: the memory goes with the last reference.
        }
    }

    static final class File extends Namespace {
        private static final int ZERO_CHUNK = 1 << 20;
        private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(ZERO_CHUNK).asReadOnlyBuffer();
        private final FileChannel ch;

        File(FileChannel ch, long bytes, int blockSize) {
            super(bytes, blockSize);
            this.ch = ch;
        }

        @Override
        MemorySegment memory() {
            return null;
        }

        @Override
        void read(long offset, ByteBuffer dst) throws IOException {
            while (dst.hasRemaining()) {
                int n = ch.read(dst, offset);
                if (n < 0) {
                    // The file was shortened behind our back: the rest reads as zeros.
                    while (dst.hasRemaining()) {
                        dst.put((byte) 0);
                    }
                    return;
                }
                offset += n;
            }
        }

        @Override
        void write(long offset, ByteBuffer src, boolean durable) throws IOException {
            while (src.hasRemaining()) {
                offset += ch.write(src, offset);
            }
            if (durable) {
                ch.force(false);
            }
        }

        @Override
        void zero(long offset, long length) throws IOException {
            while (length > 0) {
                ByteBuffer z = ZEROS.duplicate().limit((int) Math.min(length, ZERO_CHUNK));
                int n = z.remaining();
                write(offset, z, false);
                offset += n;
                length -= n;
            }
        }

        @Override
        void flush() throws IOException {
            ch.force(false);
        }

        @Override
        public void close() throws IOException {
            ch.close();
        }
    }
}
