package ernic.model.rdma;

/** A work completion, reused by the caller. */
public final class Wc {
    public long wrId;
    public int status, opcode, qpNum, srcQp, byteLen, imm, vendorErr;
    /** A SEND_INV arrived: {@link #imm} holds the rkey it invalidated. */
    public boolean withImm, withInv, ipv4, vlan;
    public long srcMac;
    public int vlanTag;

    public boolean ok() {
        return status == RdmaVerbs.STS_OK;
    }

    @Override
    public String toString() {
        return "Wc[wrId=" + wrId + ", status=" + status + ", opcode=" + opcode + ", qp=" + qpNum + ", src="
                + srcQp + ", len=" + byteLen + ", imm=" + Integer.toHexString(imm) + "]";
    }
}
