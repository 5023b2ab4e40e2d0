package ernic.s3;

/** What answers the requests of an {@link HttpConnection}: the S3 store. Called on the device thread. */
interface HttpService {
    /** How to take a request's body: its limit and the digests to compute while it arrives. */
    record BodyPlan(long limit, boolean sha256, ChecksumAlgorithm checksum, boolean chunkHashes) {
    }

    /** One aws-chunked chunk as it came: its extensions (chunk-signature=...) and its data's SHA-256. */
    record Chunk(String extensions, byte[] sha256) {
    }

    /** The answer to a head: a response now (no body is read) or a plan to read the body. */
    sealed interface Start permits Respond, ReadBody {
    }

    record Respond(HttpResponse response) implements Start {
    }

    record ReadBody(BodyPlan plan) implements Start {
    }

    /**
     * The head has arrived ({@code decodedLength}: the body's length after aws-chunked decoding, -1 if not
     * known yet).
     */
    Start begin(HttpRequest request, long decodedLength);

    /** The whole body arrived (decoded; trailers of aws-chunked or chunked included). */
    HttpResponse complete(HttpRequest request, BodyCollector body, java.util.List<HttpRequest.Field> trailers,
                          java.util.List<Chunk> chunks);

    /** The response to a request that could not be parsed or whose body was refused. */
    HttpResponse refuse(int status, String code, String message);

    /** The memory budget bodies in flight draw from. */
    BodyCollector.Budget budget();

    /** The Date field's value now (RFC 9110 5.6.7). */
    String date();
}
