package ernic.model.rdma;

/**
 * A memory window (struct ibv_mw as libionic keeps it): its type (1 or 2), its protection domain, the MR id
 * ionic_alloc_mw created it under, and the rkey the user holds. A type 1 bind ({@link RdmaVerbs#bindMw})
 * moves {@link #rkey} on as soon as it is posted, as libionic's ionic_bind_mw does; a type 2 bind posted with
 * {@link RdmaVerbs#postSend} does not (libionic leaves ibv_mw.rkey alone), so its user sets it.
 */
public final class Mw {
    public final int type, pd;
    /** The id CREATE_MR gave it (index << 8 | the key at allocation): what DESTROY_MR names. */
    final int mrid;
    /** ibv_mw.rkey. */
    public int rkey;

    Mw(int type, int pd, int mrid) {
        this.type = type;
        this.pd = pd;
        this.mrid = mrid;
        this.rkey = mrid;
    }

    public int index() {
        return mrid >>> 8;
    }
}
