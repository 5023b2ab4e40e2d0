/**
 * The connected transports of IBTA vol. 1, chapter 9, as pure state machines with the kernel's rdma_rxe as the
 * reference for behaviour. RC (9.7, reliable service): {@link ernic.roce.rc.RcRequester} (a QP's send side:
 * segmentation, PSNs, ACK/NAK handling, retransmission) and {@link ernic.roce.rc.RcResponder} (a QP's receive side:
 * expected PSN, execution, duplicates, NAKs, ACK coalescing). UC (9.8, unreliable connection):
 * {@link ernic.roce.rc.UcRequester} and {@link ernic.roce.rc.UcResponder}, nothing acknowledged, a message taken
 * whole or dropped. The device drives either through {@link ernic.roce.rc.ConnectedRequester} and
 * {@link ernic.roce.rc.ConnectedResponder}. None owns a thread or reads a clock: the caller passes {@code now}
 * (nanoseconds) and drives timers with {@code tick}/{@code nextDeadline}.
 * The outside is a handful of narrow interfaces ({@link ernic.roce.rc.RcPacketSink},
 * {@link ernic.roce.rc.RcRequesterHost}, {@link ernic.roce.rc.RcResponderHost}) that the device implements.
 * Every packet from the wire is hostile: each refusal is counted under its own {@link ernic.roce.rc.RcCounter}.
 */
package ernic.roce.rc;
