/**
 * RoCEv2 as the IBTA (vol. 1) and its Annex A17 define it, independent of the device: {@link ernic.roce.IbOpcode},
 * the opcode table (vol. 1, 9.2.3, table 38) that says for each BTH opcode which extension headers follow the BTH,
 * whether a payload does, and where the packet stands in its message; {@link ernic.roce.RoceFrame}, one frame's
 * layout (Ethernet, IPv4, UDP 4791, BTH, extension headers, payload, pad, ICRC). The device's RDMA data path
 * ({@code ernic.ionic.rdma}) maps its WQE opcodes onto the table, and its trace writes frames with the builder.
 * A module of its own, so that it can use nothing of the device.
 */
package ernic.roce;
