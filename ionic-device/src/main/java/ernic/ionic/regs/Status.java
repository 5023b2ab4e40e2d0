package ernic.ionic.regs;

/** enum ionic_status_code (ionic_if.h). */
public final class Status {
    public static final int SUCCESS = 0, EVERSION = 1, EOPCODE = 2, EIO = 3, EPERM = 4, EQID = 5, EQTYPE = 6,
            ENOENT = 7, EINTR = 8, EAGAIN = 9, ENOMEM = 10, EFAULT = 11, EBUSY = 12, EEXIST = 13, EINVAL = 14,
            ENOSPC = 15, ERANGE = 16, BAD_ADDR = 17, DEV_CMD = 18, ENOSUPP = 19, ERROR = 29, ERDMA = 30;

    private Status() {}
}
