package ernic.model.rdma;

/**
 * An admin CQE (struct ionic_v1_cqe of the admin CQ) as the device wrote it: {@code cmdIdx} (BE16 @0, the
 * command's first slot), {@code status} (status_length BE32 @24, an enum ionic_v1_admin_status when
 * {@code error}), and the qid and type of qid_type_flags.
 */
public record AdminCqe(int cmdIdx, int status, boolean error, int qid, int type) {}
