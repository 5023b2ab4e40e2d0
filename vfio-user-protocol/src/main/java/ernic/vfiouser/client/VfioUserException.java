package ernic.vfiouser.client;

import ernic.vfiouser.sys.LibC;

import java.io.IOException;

/** The server answered a request with an error reply. */
public final class VfioUserException extends IOException {
    private final int errno;

    public VfioUserException(String what, int errno) {
        super(what + ": " + LibC.strerror(errno) + " (errno " + errno + ")");
        this.errno = errno;
    }

    public int errno() {
        return errno;
    }
}
