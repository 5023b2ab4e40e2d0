package ernic.ionic.p4hook;

/**
 * {@code --p4-guest-scope}: how far the guest reaches the engine through device commands 70-72. {@code none}
 * (the default): the opcodes do not exist for it (EOPCODE); {@code read}: program information and counters
 * (70); {@code tables}: also table entries (71); {@code all}: also registers, counter resets and parse value
 * sets (72). A command beyond the scope fails with EPERM.
 */
public enum P4Scope {
    NONE, READ, TABLES, ALL;

    /** The scope of an option value; anything else is an IllegalArgumentException naming the values. */
    public static P4Scope parse(String value) {
        for (P4Scope s : values()) {
            if (s.name().toLowerCase().equals(value)) {
                return s;
            }
        }
        throw new IllegalArgumentException("--p4-guest-scope " + value + ": expected none, read, tables or all");
    }

    public boolean allows(P4Scope needed) {
        return compareTo(needed) >= 0;
    }
}
