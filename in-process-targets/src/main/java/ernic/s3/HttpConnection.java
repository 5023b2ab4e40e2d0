package ernic.s3;

import ernic.ipstack.TcpConnection;
import ernic.ipstack.StreamHandler;

import ernic.counters.Counters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * HTTP/1.1 over one TCP connection: reads request heads and bodies (Content-Length, chunked, and S3's
 * aws-chunked content encoding inside either), answers {@code Expect: 100-continue}, and writes responses
 * as the send window allows. Requests are served one at a time in order (keep-alive and pipelining):
 * while a response is being written nothing more is read, so the receive window closes on a client that
 * pipelines faster than it reads. A malformed request gets its 4xx and the connection closes.
 */
final class HttpConnection implements StreamHandler {
    private static final Logger LOG = LoggerFactory.getLogger(HttpConnection.class);
    static final int IN_BUFFER = 32 * 1024;
    private static final byte[] CONTINUE = "HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1);

    private enum State { HEAD, BODY, RESPOND, DONE }

    private final TcpConnection tcp;
    private final HttpService service;
    private final Counters<HttpCounter> counters;
    private final byte[] in = new byte[IN_BUFFER];
    private int inLen;
    private State state = State.HEAD;

    // the request being read
    private HttpRequest request;
    private long fixedRemaining;
    private ChunkedDecoder transport, content;
    private BodyCollector body;
    private ChunkedDecoder.Output transportSink;
    /** The 100 Continue being written: the body comes after it. */
    private boolean continueThenBody;
    private final List<HttpService.Chunk> chunks = new ArrayList<>();
    private MessageDigest chunkHash;
    private String chunkExt;

    // the response being written
    private byte[] outHead;
    private int outHeadAt;
    private Blob outBody = Blob.EMPTY;
    private long outBodyAt;
    private boolean closeAfter;
    private final byte[] pump = new byte[16 * 1024];

    HttpConnection(TcpConnection tcp, HttpService service, Counters<HttpCounter> counters) {
        this.tcp = tcp;
        this.service = service;
        this.counters = counters;
    }

    @Override
    public void onReadable() {
        progress();
    }

    @Override
    public void onWritable() {
        progress();
    }

    @Override
    public void onClosed() {
        state = State.DONE;
        releaseBody();
    }

    /** Runs the connection as far as it can; a fault of ours resets it (counted as a 500), it never escapes. */
    private void progress() {
        try {
            run();
        } catch (RuntimeException e) {
            LOG.warn("s3: request failed inside the store, connection closed", e);
            counters.inc(HttpCounter.STATUS_500);
            if (state != State.DONE) {
                tcp.abort();
                state = State.DONE;
                releaseBody();
            }
        }
    }

    private void run() {
        boolean moved = true;
        while (moved && state != State.DONE) {
            moved = switch (state) {
                case RESPOND -> writeOut();
                case HEAD -> readHead();
                case BODY -> readBody();
                case DONE -> false;
            };
        }
    }

    private int fill() {
        int n = tcp.read(in, inLen, in.length - inLen);
        inLen += n;
        return n;
    }

    private void consume(int n) {
        System.arraycopy(in, n, in, 0, inLen - n);
        inLen -= n;
    }

    private boolean readHead() {
        int n = fill();
        int end = HttpHeadParser.headEnd(in, inLen);
        if (end < 0) {
            if (inLen == in.length || inLen >= HttpHeadParser.MAX_HEAD) {
                malformed(431, "RequestHeaderSectionTooLarge", "the request head is too large");
                return true;
            }
            if (tcp.atEof()) {
                finish();
            }
            return n > 0;
        }
        HttpHeadParser.Result r = HttpHeadParser.parse(in, end);
        consume(end);
        if (r.request() == null) {
            malformed(r.status(), r.status() == 501 ? "NotImplemented" : "BadRequest", r.error());
            return true;
        }
        request = r.request();
        counters.inc(HttpCounter.method(request.method));
        return startBody();
    }

    private boolean startBody() {
        String encoding = request.header("content-encoding");
        String sha = request.header("x-amz-content-sha256");
        boolean awsChunked = encoding != null && encoding.toLowerCase(Locale.ROOT).contains("aws-chunked")
                || sha != null && sha.startsWith("STREAMING-");
        long decoded = -1;
        if (awsChunked) {
            String d = request.header("x-amz-decoded-content-length");
            decoded = d == null ? -1 : HttpHeadParser.parseLength(d);
            if (d != null && decoded < 0) {
                malformed(400, "InvalidArgument", "bad x-amz-decoded-content-length");
                return true;
            }
        } else if (!request.chunked) {
            decoded = Math.max(0, request.contentLength);
        }
        HttpService.Start start = service.begin(request, decoded);
        if (start instanceof HttpService.Respond(HttpResponse resp)) {
            respond(resp, !request.keepAlive() || request.hasBody());
            return true;
        }
        HttpService.BodyPlan plan = ((HttpService.ReadBody) start).plan();
        body = new BodyCollector(service.budget(), plan.limit(), decoded, plan.sha256(), plan.checksum());
        chunks.clear();
        chunkHash = plan.chunkHashes() ? ChecksumAlgorithm.messageDigest("SHA-256") : null;
        chunkExt = null;
        content = awsChunked ? new ChunkedDecoder(new ChunkedDecoder.Output() {
            @Override
            public void chunk(long size, String extensions) {
                endChunk();
                chunkExt = extensions;
            }

            @Override
            public void data(byte[] b, int off, int len) {
                if (chunkHash != null) {
                    chunkHash.update(b, off, len);
                }
                body.data(b, off, len);
            }
        }) : null;
        ChunkedDecoder.Output sink = content != null ? (b, off, len) -> {
            int done = 0;
            while (done < len && !content.done() && content.error() == null) {
                done += content.feed(b, off + done, len - done);
            }
        } : body;
        transport = request.chunked ? new ChunkedDecoder(sink) : null;
        fixedRemaining = request.chunked ? 0 : Math.max(0, request.contentLength);
        transportSink = sink;
        if (request.hasBody() && request.expectsContinue()) {
            counters.inc(HttpCounter.CONTINUES);
            outHead = CONTINUE;
            outHeadAt = 0;
            outBody = Blob.EMPTY;
            state = State.RESPOND;
            continueThenBody = true;
            return true;
        }
        state = State.BODY;
        return true;
    }

    private void endChunk() {
        if (chunkExt != null && chunkHash != null) {
            chunks.add(new HttpService.Chunk(chunkExt, chunkHash.digest()));
        }
        chunkExt = null;
    }

    private boolean readBody() {
        int n = fill();
        int used;
        boolean transportDone;
        if (transport != null) {
            used = transport.feed(in, 0, inLen);
            transportDone = transport.done();
        } else {
            used = (int) Math.min(inLen, fixedRemaining);
            transportSink.data(in, 0, used);
            fixedRemaining -= used;
            transportDone = fixedRemaining == 0;
        }
        consume(used);
        String error = transport != null ? transport.error() : null;
        if (error == null && content != null) {
            error = content.error();
            if (error == null && transportDone && !content.done()) {
                error = "aws-chunked body ends early";
            }
        }
        if (error != null) {
            malformed(400, "IncompleteBody", error);
            return true;
        }
        if (body.overLimit()) {
            respond(service.refuse(400, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size"), true);
            return true;
        }
        if (body.overBudget()) {
            respond(service.refuse(507, "InsufficientStorage", "The store has no room for this body now."), true);
            return true;
        }
        if (transportDone) {
            endChunk();
            List<HttpRequest.Field> trailers = new ArrayList<>();
            if (transport != null) {
                trailers.addAll(transport.trailers());
            }
            if (content != null) {
                trailers.addAll(content.trailers());
            }
            HttpResponse resp = service.complete(request, body, trailers, List.copyOf(chunks));
            releaseBody();
            respond(resp, !request.keepAlive());
            return true;
        }
        if (n == 0 && tcp.atEof()) {
            finish();
        }
        return n > 0 || used > 0;
    }

    private void releaseBody() {
        if (body != null) {
            body.release();
            body = null;
        }
    }

    private void malformed(int status, String code, String message) {
        counters.inc(HttpCounter.MALFORMED);
        respond(service.refuse(status, code, message), true);
    }

    private void respond(HttpResponse resp, boolean close) {
        releaseBody();
        resp.close |= close;
        closeAfter = resp.close;
        counters.inc(HttpCounter.status(resp.status));
        outHead = resp.head(service.date());
        outHeadAt = 0;
        outBody = resp.body;
        outBodyAt = 0;
        continueThenBody = false;
        state = State.RESPOND;
    }

    /** Writes what fits; true when the response is out and the next state was entered. */
    private boolean writeOut() {
        while (outHeadAt < outHead.length) {
            int n = tcp.write(outHead, outHeadAt, outHead.length - outHeadAt);
            if (n == 0) {
                return false;
            }
            outHeadAt += n;
        }
        while (outBodyAt < outBody.size()) {
            int room = Math.min(tcp.writable(), pump.length);
            if (room == 0) {
                return false;
            }
            int n = outBody.copyOut(outBodyAt, pump, 0, (int) Math.min(room, outBody.size() - outBodyAt));
            tcp.write(pump, 0, n);
            outBodyAt += n;
        }
        if (continueThenBody) {
            continueThenBody = false;
            state = State.BODY;
            return true;
        }
        outBody = Blob.EMPTY;
        request = null;
        if (closeAfter) {
            finish();
            return false;
        }
        state = State.HEAD;
        return true;
    }

    private void finish() {
        tcp.close();
        state = State.DONE;
        releaseBody();
    }
}
