package ernic.ionic.regs;

/**
 * BAR 0 offsets (ionic_if.h {@code union ionic_dev_regs}, ionic_regs.h {@code struct ionic_intr}).
 * The register window is 32 KiB; the MSI-X table and PBA live above it.
 */
public final class Bar0 {
    public static final long SIZE = 64 * 1024;
    /** IONIC_BAR0_SIZE: the register window the driver maps. */
    public static final int WINDOW = 0x8000;
    public static final long MSIX_TABLE = 0x8000, MSIX_PBA = 0xa000;

    // union ionic_dev_info_regs @0x000.
    public static final int SIGNATURE = 0x000;     // u32 signature 0x44455649 'DEVI'
    public static final int VERSION = 0x004;       // u8 version
    public static final int ASIC_TYPE = 0x005;     // u8 asic_type
    public static final int ASIC_REV = 0x006;      // u8 asic_rev
    public static final int FW_STATUS = 0x007;     // u8 fw_status: bit 0 running, bits 7..4 generation
    public static final int FW_HEARTBEAT = 0x008;  // u32 fw_heartbeat
    public static final int FW_VERSION = 0x00c;    // char fw_version[32]
    public static final int SERIAL_NUM = 0x02c;    // char serial_num[32]
    public static final int HWSTAMP = 0x400;       // struct ionic_hwstamp_regs hwstamp (tick_low, tick_high)
    public static final int STRING_SIZE = 32;      // IONIC_DEVINFO_FWVERS_BUFLEN, IONIC_DEVINFO_SERIAL_BUFLEN

    public static final int DEV_INFO_SIGNATURE = 0x44455649;
    public static final int DEV_INFO_VERSION = 1;
    public static final int FW_STS_RUNNING = 0x01;
    /** asic_type values; 0 (none) and 2 (Elba) switch on the driver's doorbell workaround. */
    public static final int ASIC_TYPE_CAPRI = 1, ASIC_TYPE_GIGLIO = 3, ASIC_TYPE_SALINA = 4;

    // union ionic_dev_cmd_regs @0x800.
    public static final int DEVCMD = 0x800;
    public static final int DEVCMD_DOORBELL = 0x800; // u32 doorbell
    public static final int DEVCMD_DONE = 0x804;     // u32 done, bit 0
    public static final int DEVCMD_CMD = 0x808;      // union ionic_dev_cmd cmd (64)
    public static final int DEVCMD_COMP = 0x848;     // union ionic_dev_cmd_comp comp (16)
    public static final int DEVCMD_DATA = 0x888;     // u32 data[478] (1912)
    public static final int DEVCMD_DATA_SIZE = 1912;
    public static final int DEVCMD_END = 0x1000;
    public static final int DEV_CMD_DONE = 0x1;

    /** struct ionic_intr_status @0x1000: one pending bit per interrupt (u32 status[2] per 64). */
    public static final int INTR_STATUS = 0x1000;
    /** struct ionic_intr[] @0x2000, 32 bytes each. */
    public static final int INTR_CTRL = 0x2000;
    public static final int INTR_CTRL_SIZE = 32;
    public static final int INTR_COAL_INIT = 0x00;   // u32 coal_init
    public static final int INTR_MASK = 0x04;        // u32 mask
    public static final int INTR_CREDITS = 0x08;     // u32 credits
    public static final int INTR_MASK_ASSERT = 0x0c; // u32 mask_assert
    public static final int INTR_COAL = 0x10;        // u32 coal
    /** credits write: bits 15..0 count, bit 16 unmask, bit 17 reset coalescing. */
    public static final int CRED_UNMASK = 1 << 16, CRED_RESET_COALESCE = 1 << 17;

    private Bar0() {}
}
