/**
 * {@code ./ernic fuzz} (docs/reliability.md): {@link ernic.it.fuzz.FuzzCommand} feeds a real server hostile,
 * seed-determined input through three targets, the vfio-user socket ({@link ernic.it.fuzz.VfioFuzz}), the mesh port
 * ({@link ernic.it.fuzz.MeshFuzz}) and the ionic device under the driver model's in-process binding
 * ({@link ernic.it.fuzz.IonicFuzz}), and checks at rest that the server still answers, logged no escaped exception
 * and holds no more fds, mappings or heap than at the start ({@link ernic.it.fuzz.Health}). May use every module;
 * nothing in main code depends on it.
 */
package ernic.it.fuzz;
