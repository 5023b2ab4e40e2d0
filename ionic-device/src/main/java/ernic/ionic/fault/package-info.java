/**
 * Fault injection ({@code --inject KIND:PATTERN}): which occurrences of a device event (a STATS_VALS command, a
 * received frame, a transmitted frame, an RC QP's RDMA operation) fail or, for {@code rdma-latency}, wait,
 * decided by count (and, with {@code frac=}, by a seeded draw per occurrence), never by time. Serves no guest
 * structure. Anyone in the module (and the server, which parses the option) may depend on it; it depends on no
 * other ionic package.
 */
package ernic.ionic.fault;
