package ernic.vfiouser.wire;

/** vfio-user command numbers (docs/interop/vfio-user.rst). 14 (the old DIRTY_PAGES) is not in the spec. */
public enum Command {
    VERSION(1),
    DMA_MAP(2),
    DMA_UNMAP(3),
    DEVICE_GET_INFO(4),
    DEVICE_GET_REGION_INFO(5),
    DEVICE_GET_REGION_IO_FDS(6),
    DEVICE_GET_IRQ_INFO(7),
    DEVICE_SET_IRQS(8),
    REGION_READ(9),
    REGION_WRITE(10),
    DMA_READ(11),
    DMA_WRITE(12),
    DEVICE_RESET(13),
    REGION_WRITE_MULTI(15),
    DEVICE_FEATURE(16),
    MIG_DATA_READ(17),
    MIG_DATA_WRITE(18);

    public final int code;
    private static final Command[] BY_CODE = new Command[19];

    static {
        for (Command c : values()) {
            BY_CODE[c.code] = c;
        }
    }

    Command(int code) {
        this.code = code;
    }

    /**
     * The most fds a message of this command may carry: a request (to the server; DMA_READ and
     * DMA_WRITE to the client) or, with {@code reply}, its reply. {@code maxMsgFds} is the receiver's
     * negotiated limit. Every other message carries none.
     */
    public int maxFds(boolean reply, int maxMsgFds) {
        return switch (this) {
            case DMA_MAP -> reply ? 0 : 1;                           // the memfd of the mapping
            case DEVICE_SET_IRQS -> reply ? 0 : maxMsgFds;           // eventfds
            case DEVICE_GET_REGION_INFO -> reply ? 1 : 0;            // the region's mmap fd
            case DEVICE_GET_REGION_IO_FDS -> reply ? maxMsgFds : 0;  // ioeventfds
            default -> 0;
        };
    }

    /** The command with this number, or null when there is none. */
    public static Command of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
