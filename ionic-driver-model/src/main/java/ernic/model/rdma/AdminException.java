package ernic.model.rdma;

import java.io.IOException;

/** An RDMA admin command the device refused, with its ionic_v1_admin_status. */
public final class AdminException extends IOException {
    public final int status;

    AdminException(String what, int status) {
        super(what + " failed with admin status " + status);
        this.status = status;
    }
}
