/**
 * The emulated AMD Pensando ionic PF (1dd8:1002) as the stock Linux {@code ionic} and {@code ionic_rdma}
 * drivers and rdma-core's libionic see it over vfio-user. {@link ernic.ionic.IonicDevice} only builds
 * and wires: PCI config space, BAR 0 (device commands, interrupt control) and BAR 2 (doorbells) routed
 * to the Ethernet side ({@code eth}) and the RDMA side ({@code rdma}), the clock, and the counter sets.
 *
 * <p>Who may depend on whom: this root package may use every sub-package; {@code eth} and {@code rdma}
 * are siblings that use neither each other nor this package, and meet only in {@code base}; the shared
 * packages ({@code base}, {@code layout}, {@code regs}, {@code fault}, {@code profile}) use neither side;
 * the P4 engine's hooks ({@code p4hook}) are where the engine (module p4-engine, {@code ernic.p4}, which knows
 * nothing of ionic) meets both sides; the IBTA's opcode table ({@code roce}) uses nothing of ionic, and
 * {@code rdma} and {@code trace} build on it.
 * Outside the module, the server and the integration tests use this package and the sides' public
 * entry points. {@code IonicArchitectureTest} checks these rules.
 */
package ernic.ionic;
