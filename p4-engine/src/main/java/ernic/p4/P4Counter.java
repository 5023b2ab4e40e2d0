package ernic.p4;

import ernic.counters.Counter;

/** The engine's counters (prefix {@code p4.}); per-table hits and misses are arrays on {@link P4Engine}. */
public enum P4Counter implements Counter {
    FRAMES_IN("frames_in"),
    FRAMES_OUT("frames_out"),
    /** Dropped by the program: egress_spec 511 (mark_to_drop) after ingress or egress. */
    DROPS("drops"),
    /** Dropped because egress_port names no port of the port model. */
    DROPS_NO_SUCH_PORT("drops_no_such_port"),
    /** Frames whose ingress set mcast_grp to a group that does not exist or has no port: no copy, as in bmv2. */
    DROPS_MULTICAST("drops_multicast"),
    /** Dropped because an assert or assume failed. */
    DROPS_ASSERT("drops_assert"),
    /** Dropped because the frame is larger than the engine's buffers or a header would overflow them. */
    DROPS_TOO_BIG("drops_too_big"),
    PARSER_ERRORS("parser_errors"),
    CHECKSUM_ERRORS("checksum_errors"),
    TABLE_HITS("table_hits"),
    TABLE_MISSES("table_misses"),
    /** An index out of a stack's, register's or counter's bounds (the access did nothing). */
    OUT_OF_BOUNDS("out_of_bounds"),
    REGISTER_READS("register_reads"),
    REGISTER_WRITES("register_writes"),
    COUNTER_UPDATES("counter_updates"),
    HASHES("hashes"),
    LOG_MSGS("log_msgs"),
    DIVISIONS_BY_ZERO("divisions_by_zero"),
    /** Clones made (a clone primitive with a mirror session that exists). */
    CLONES("clones"),
    /** Clone primitives naming a mirror session no mirroring_add made: no clone, as in simple_switch. */
    CLONES_NO_SESSION("clones_no_session"),
    /** Multicast copies made (mcast_grp, or a mirror session to a group): one per port of the group's nodes. */
    MULTICAST_COPIES("multicast_copies"),
    RESUBMITS("resubmits"),
    RECIRCULATIONS("recirculations"),
    /** Digests made (generate_digest). */
    DIGESTS("digests"),
    /** Dropped because a frame was resubmitted or recirculated too often, or made too many clones. */
    DROPS_LOOP("drops_loop");

    private final String key;

    P4Counter(String key) {
        this.key = key;
    }

    @Override
    public String key() {
        return key;
    }
}
