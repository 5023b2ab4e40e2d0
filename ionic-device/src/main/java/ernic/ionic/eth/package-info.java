/**
 * The Ethernet side, what the Linux {@code ionic} driver drives: the device-command processor
 * (IDENTIFY, LIF_*, Q_*, PORT_*, RX_FILTER_*, ...), the one LIF with its admin, notify, RX and TX
 * queues, the frame path to the TAP and in-process endpoints, and the LIF and port statistics. May use
 * {@code base}, {@code layout}, {@code regs}, {@code fault} and {@code profile}; never {@code rdma} nor
 * the root package (RDMA commands and doorbells go through the {@code base} handler interfaces).
 * The root package and the server depend on it.
 */
package ernic.ionic.eth;
