package ernic.ionic.profile;

import java.util.Locale;

/**
 * Transceivers a profile can name (ionic_if.h {@code enum ionic_xcvr_pid}, {@code enum ionic_phy_type}).
 * ethtool reports a speed only for phy copper/fiber or a copper pid, so every entry has one.
 */
public enum Transceiver {
    QSFP_100G_CR4(1, 1, 4),
    QSFP_40GBASE_CR4(1, 2, 4),
    SFP_25GBASE_CR_S(1, 3, 1),
    QSFP_50G_CR2(1, 7, 2),
    QSFP_200G_CR4(1, 8, 4),
    QSFP_400G_CR4(1, 9, 4),
    QSFP_100G_AOC(2, 50, 4),
    QSFP_100G_SR4(2, 52, 4),
    QSFP_100G_LR4(2, 53, 4),
    SFP_25GBASE_SR(2, 59, 1),
    SFP_10GBASE_SR(2, 63, 1),
    QSFP_200G_SR4(2, 77, 4),
    QSFP_400G_DR4(2, 80, 4);

    public static final int PHY_COPPER = 1, PHY_FIBER = 2;

    private final int phy, pid, lanes;

    Transceiver(int phy, int pid, int lanes) {
        this.phy = phy;
        this.pid = pid;
        this.lanes = lanes;
    }

    /** enum ionic_phy_type: 1 copper, 2 fiber. */
    public int phy() {
        return phy;
    }

    /** enum ionic_xcvr_pid. */
    public int pid() {
        return pid;
    }

    public int lanes() {
        return lanes;
    }

    /** The ini spelling: lower case with dashes, e.g. {@code qsfp-100g-cr4}. */
    public String key() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** Parses the ini spelling (case-insensitive, dashes or underscores); null when unknown. */
    public static Transceiver parse(String s) {
        String n = s.trim().toUpperCase(Locale.ROOT).replace('-', '_');
        for (Transceiver t : values()) {
            if (t.name().equals(n)) {
                return t;
            }
        }
        return null;
    }
}
