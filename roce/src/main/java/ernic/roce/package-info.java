/**
 * RoCEv2 as the IBTA (vol. 1) and its Annex A17 define it, independent of the device: {@link ernic.roce.IbOpcode},
 * the opcode table (vol. 1, 9.2.3, table 38) that says for each BTH opcode which extension headers follow the BTH,
 * whether a payload does, and where the packet stands in its message; {@link ernic.roce.TransportHeader}, the BTH
 * and extension headers, written and read; {@link ernic.roce.RoceFrame}, one frame's fields and its builder
 * (Ethernet, optional 802.1Q, IPv4 or IPv6, UDP 4791, BTH, extension headers, payload, pad, ICRC);
 * {@link ernic.roce.RoceParser}, which checks a received frame (and the ionic driver's header template) and reads
 * it, each refusal a cause of its own; {@link ernic.roce.Icrc}, the invariant CRC of annex A17.3.3. The device's
 * RDMA data path ({@code ernic.ionic.rdma}) maps its WQE opcodes onto the table, and its trace writes frames with
 * the builder. A module of its own, so that it can use nothing of the device.
 */
package ernic.roce;
