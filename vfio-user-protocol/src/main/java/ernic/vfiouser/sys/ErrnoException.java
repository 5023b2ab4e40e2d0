package ernic.vfiouser.sys;

import java.io.IOException;

/** A failed system call, with its errno; or, as {@code VfioUserException}, a server's error reply with one. */
public class ErrnoException extends IOException {
    private final int errno;

    public ErrnoException(String what, int errno) {
        super(what + ": " + LibC.strerror(errno) + " (errno " + errno + ")");
        this.errno = errno;
    }

    public int errno() {
        return errno;
    }
}
