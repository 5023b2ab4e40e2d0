package ernic.vfiouser.client;

import ernic.vfiouser.sys.ErrnoException;

/** The server answered a request with an error reply: its errno, described as a failed system call's is. */
public final class VfioUserException extends ErrnoException {
    public VfioUserException(String what, int errno) {
        super(what, errno);
    }
}
