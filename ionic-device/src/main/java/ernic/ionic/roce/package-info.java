/**
 * The InfiniBand transport's facts as RoCEv2 carries them, independent of the device: {@link
 * ernic.ionic.roce.IbOpcode}, the IBTA opcode table (vol. 1, 9.2.3, table 38) that says for each BTH opcode
 * which extension headers follow the BTH, whether a payload does, and where the packet stands in its message.
 * The RDMA data path ({@code ernic.ionic.rdma}) maps its WQE opcodes onto it, and the trace ({@code
 * ernic.ionic.trace}) lays its frames out by it. Uses nothing of the device.
 */
package ernic.ionic.roce;
