package ernic.ionic.p4hook;

import ernic.counters.Counter;

/** One table's hits and misses (the family {@code p4.table.}, labelled {@code table}). */
public enum P4TableCounter implements Counter {
    HITS, MISSES
}
