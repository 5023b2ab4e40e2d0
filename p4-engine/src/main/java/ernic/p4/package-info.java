/**
 * The P4 engine core (module p4-engine): it runs a compiled P4 program, bmv2 JSON as {@code p4c-bm2-ss} writes it
 * for the v1model architecture, with simple_switch's semantics on one frame (or WQE header) at a time, on the
 * caller's thread. {@link ernic.p4.Loader} reads a program or refuses it in one line ({@link ernic.p4.P4Refusal});
 * {@link ernic.p4.P4Engine} parses, runs the ingress and egress pipelines (tables, actions, expressions, checksums,
 * registers and counters) and deparses, and takes runtime entries in simple_switch_CLI's syntax (a refused line is a
 * {@link ernic.p4.P4EntryError}); its counters are the {@code p4.} set ({@link ernic.p4.P4Counter}). Beside it:
 * OCP 8-bit floating point ({@link ernic.p4.Fp8}) and classic pcap files ({@link ernic.p4.Pcap}).
 *
 * <p>It knows nothing of the device: it uses the JDK, Jackson, and the counters and common modules only
 * ({@code P4ArchitectureTest} holds it to that list), so it is tested on byte arrays alone. Its users are the
 * device's hooks ({@code ernic.ionic.p4hook}, and {@code WqePipeline} in the RDMA data path) and the server's
 * offline runner ({@code ernic p4}). See docs/p4.md.
 */
package ernic.p4;
