package ernic.attach;

import java.lang.foreign.MemorySegment;

/** The bytes of a guest's request, in guest memory: valid only during the call it is handed to. */
public interface Payload {
    long length();

    /** Copies the {@link #length()} bytes into {@code dst} (at least that long); false when guest memory refused. */
    boolean copyTo(MemorySegment dst);
}
