package ernic.s3;

import ernic.counters.Counter;

/** The object store: bytes by path (HTTP body or RDMA token), token outcomes, checks that failed, contents. */
public enum S3Counter implements Counter {
    BODY_BYTES_IN("bytes.body_in"),
    BODY_BYTES_OUT("bytes.body_out"),
    RDMA_BYTES_IN("bytes.rdma_in"),
    RDMA_BYTES_OUT("bytes.rdma_out"),
    RDMA_TRANSFERS("rdma.transfers"),
    RDMA_SHORT("rdma.short"),
    RDMA_REFUSED("rdma.refused"),
    RDMA_DECLINED("rdma.declined"),
    TOKEN_MALFORMED("rdma.token_malformed"),
    CHECKSUM_MISMATCH("checksum_mismatch"),
    SIGNATURE_MISMATCH("signature_mismatch"),
    CAPACITY_REFUSED("capacity_refused"),
    OBJECTS("objects"),
    BYTES_STORED("bytes_stored");

    private final String key;

    S3Counter(String key) {
        this.key = key;
    }

    @Override
    public String key() {
        return key;
    }
}
