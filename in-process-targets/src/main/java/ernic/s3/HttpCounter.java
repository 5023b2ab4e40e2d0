package ernic.s3;

import ernic.counters.Counter;

/** HTTP requests the store served, by method and by response status. */
public enum HttpCounter implements Counter {
    GET("http.requests.get"),
    PUT("http.requests.put"),
    HEAD("http.requests.head"),
    DELETE("http.requests.delete"),
    POST("http.requests.post"),
    OTHER_METHOD("http.requests.other"),
    CONTINUES("http.continues"),
    MALFORMED("http.malformed"),
    STATUS_200("http.status.200"),
    STATUS_204("http.status.204"),
    STATUS_206("http.status.206"),
    STATUS_304("http.status.304"),
    STATUS_400("http.status.400"),
    STATUS_403("http.status.403"),
    STATUS_404("http.status.404"),
    STATUS_405("http.status.405"),
    STATUS_409("http.status.409"),
    STATUS_411("http.status.411"),
    STATUS_412("http.status.412"),
    STATUS_416("http.status.416"),
    STATUS_500("http.status.500"),
    STATUS_501("http.status.501"),
    STATUS_507("http.status.507"),
    STATUS_OTHER("http.status.other");

    private final String key;

    HttpCounter(String key) {
        this.key = key;
    }

    @Override
    public String key() {
        return key;
    }

    static HttpCounter method(String m) {
        return switch (m) {
            case "GET" -> GET;
            case "PUT" -> PUT;
            case "HEAD" -> HEAD;
            case "DELETE" -> DELETE;
            case "POST" -> POST;
            default -> OTHER_METHOD;
        };
    }

    static HttpCounter status(int s) {
        return switch (s) {
            case 200 -> STATUS_200;
            case 204 -> STATUS_204;
            case 206 -> STATUS_206;
            case 304 -> STATUS_304;
            case 400 -> STATUS_400;
            case 403 -> STATUS_403;
            case 404 -> STATUS_404;
            case 405 -> STATUS_405;
            case 409 -> STATUS_409;
            case 411 -> STATUS_411;
            case 412 -> STATUS_412;
            case 416 -> STATUS_416;
            case 500 -> STATUS_500;
            case 501 -> STATUS_501;
            case 507 -> STATUS_507;
            default -> STATUS_OTHER;
        };
    }
}
