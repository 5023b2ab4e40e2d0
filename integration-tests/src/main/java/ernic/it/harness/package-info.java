/**
 * The real-guest harness (docs/testing.md): the guest image, one guest VM in a container
 * ({@link ernic.it.harness.GuestVm}), servers as processes, the Ethernet segment and mesh LAN made of network
 * namespaces, and the commands built on them ({@code ./ernic guest run}, {@code ./ernic up|shell|status|down}).
 * What a run leaves on the host is found and removed by {@link ernic.it.harness.Leftovers}. May use every module;
 * the end-to-end test suites and the benches use it.
 */
package ernic.it.harness;
