package ernic.mesh;

/** What {@link MeshNode#send} did with a payload. */
public enum SendResult {
    /** Queued on a connection (direct, or to the manager for relay); the mesh owns the payload now. */
    QUEUED,
    /**
     * The route exists but its connection is above its high write watermark: try again after
     * {@link MeshListener#onWritable}. The caller still owns the payload.
     */
    BUSY,
    /** No connection can carry it (unknown or dead node, no manager connection). The caller still owns the payload. */
    NO_ROUTE
}
