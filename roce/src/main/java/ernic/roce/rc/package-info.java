/**
 * The RC (reliable connection) transport of IBTA vol. 1, chapter 9 (9.7, reliable service), as pure state
 * machines with the kernel's rdma_rxe as the reference for behaviour: {@link ernic.roce.rc.RcRequester} (a QP's
 * send side: segmentation, PSNs, ACK/NAK handling, retransmission) and {@link ernic.roce.rc.RcResponder} (a QP's
 * receive side: expected PSN, execution, duplicates, NAKs, ACK coalescing). Neither owns a thread or reads a
 * clock: the caller passes {@code now} (nanoseconds) and drives timers with {@code tick}/{@code nextDeadline}.
 * The outside is a handful of narrow interfaces ({@link ernic.roce.rc.RcPacketSink},
 * {@link ernic.roce.rc.RcRequesterHost}, {@link ernic.roce.rc.RcResponderHost}) that the device implements.
 * Every packet from the wire is hostile: each refusal is counted under its own {@link ernic.roce.rc.RcCounter}.
 */
package ernic.roce.rc;
