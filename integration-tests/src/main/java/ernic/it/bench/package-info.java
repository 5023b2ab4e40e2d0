/**
 * {@code ./ernic bench} (docs/performance.md): {@link ernic.it.bench.BenchSuite} runs the sections (doorbell, RDMA
 * data path, mesh, memory, P4, real-guest benches) and writes the report; every figure is a ratio against a
 * reference measured in the same run. The sections drive servers in this JVM or forked ones
 * ({@link ernic.it.bench.ServerFork}) through the driver model; JMH runs the doorbell benchmark. May use every
 * module and the harness; nothing in main code depends on it.
 */
package ernic.it.bench;
