package ernic.vfiouser.wire;

/**
 * The 16-byte little-endian header of every vfio-user message: msg_id u16 @0, command u16 @2,
 * msg_size u32 @4 (whole message), flags u32 @8, error_no u32 @12.
 */
public final class Header {
    private Header() {}

    public static final int SIZE = 16;
    public static final int OFF_MSG_ID = 0, OFF_COMMAND = 2, OFF_SIZE = 4, OFF_FLAGS = 8, OFF_ERRNO = 12;
    /** flags bits 0-3: the message type. */
    public static final int TYPE_MASK = 0xf, TYPE_COMMAND = 0, TYPE_REPLY = 1;
    /** flags bit 4: the sender wants no reply. */
    public static final int FLAG_NO_REPLY = 0x10;
    /** flags bit 5: the reply carries an errno and no payload. */
    public static final int FLAG_ERROR = 0x20;
}
