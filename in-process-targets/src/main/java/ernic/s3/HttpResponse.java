package ernic.s3;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** A response to write: status, fields, and a body from an array or from a range of an object. */
final class HttpResponse {
    final int status;
    final List<HttpRequest.Field> fields = new ArrayList<>();
    Blob body = Blob.EMPTY;
    /** HEAD: the Content-Length of the object, no body bytes. */
    long headLength = -1;
    boolean close;

    HttpResponse(int status) {
        this.status = status;
    }

    HttpResponse header(String name, String value) {
        fields.add(new HttpRequest.Field(name, value));
        return this;
    }

    HttpResponse body(byte[] b, String contentType) {
        body = Blob.of(b);
        return header("Content-Type", contentType);
    }

    HttpResponse xml(String xml) {
        return body(xml.getBytes(StandardCharsets.UTF_8), "application/xml");
    }

    HttpResponse blob(Blob b) {
        body = b;
        return this;
    }

    /** A HEAD response: the length the GET would have, no body. */
    HttpResponse headOnly(long length) {
        body = Blob.EMPTY;
        headLength = length;
        return this;
    }

    String header(String name) {
        for (HttpRequest.Field f : fields) {
            if (f.name().equalsIgnoreCase(name)) {
                return f.value();
            }
        }
        return null;
    }

    /** The status line and fields, Content-Length and Connection added. */
    byte[] head(String date) {
        StringBuilder sb = new StringBuilder(256);
        sb.append("HTTP/1.1 ").append(status).append(' ').append(reason(status)).append("\r\n");
        sb.append("Date: ").append(date).append("\r\n");
        for (HttpRequest.Field f : fields) {
            sb.append(f.name()).append(": ").append(f.value()).append("\r\n");
        }
        if (status != 204 && status != 304 && status >= 200) {
            sb.append("Content-Length: ").append(headLength >= 0 ? headLength : body.size()).append("\r\n");
        }
        if (close) {
            sb.append("Connection: close\r\n");
        }
        sb.append("\r\n");
        return sb.toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    static String reason(int status) {
        return switch (status) {
            case 100 -> "Continue";
            case 200 -> "OK";
            case 204 -> "No Content";
            case 206 -> "Partial Content";
            case 304 -> "Not Modified";
            case 400 -> "Bad Request";
            case 403 -> "Forbidden";
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 409 -> "Conflict";
            case 411 -> "Length Required";
            case 412 -> "Precondition Failed";
            case 413 -> "Content Too Large";
            case 416 -> "Range Not Satisfiable";
            case 431 -> "Request Header Fields Too Large";
            case 500 -> "Internal Server Error";
            case 501 -> "Not Implemented";
            case 505 -> "HTTP Version Not Supported";
            case 507 -> "Insufficient Storage";
            default -> "Status";
        };
    }
}
