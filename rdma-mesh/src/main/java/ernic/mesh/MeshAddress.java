package ernic.mesh;

import io.netty.util.NetUtil;

/**
 * A {@code host:port} as the command line writes it. An IPv6 literal goes in brackets, with an optional
 * zone id: {@code [::1]:5000}, {@code [fe80::1%eth0]:5000}. A host name is resolved later, and every
 * address it resolves to is tried.
 *
 * @param host host name or IP literal, without brackets (a zone id stays after its {@code %})
 * @param port TCP port, 1..65535
 */
public record MeshAddress(String host, int port) {

    public MeshAddress {
        if (host == null || host.isEmpty()) {
            throw new IllegalArgumentException("empty host");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port out of range: " + port);
        }
    }

    public static MeshAddress parse(String text) {
        if (text == null || text.isEmpty()) {
            throw new IllegalArgumentException("empty address");
        }
        String host;
        String portText;
        if (text.startsWith("[")) {
            int close = text.indexOf(']');
            if (close < 0 || close + 1 >= text.length() || text.charAt(close + 1) != ':') {
                throw new IllegalArgumentException("expected [ipv6]:port, got " + text);
            }
            host = text.substring(1, close);
            portText = text.substring(close + 2);
            if (!NetUtil.isValidIpV6Address(host)) {
                throw new IllegalArgumentException("not an IPv6 literal in brackets: " + host);
            }
        } else {
            int colon = text.lastIndexOf(':');
            if (colon <= 0 || text.indexOf(':') != colon) {
                throw new IllegalArgumentException(
                        "expected host:port (an IPv6 address goes in brackets, [::1]:5000), got " + text);
            }
            host = text.substring(0, colon);
            portText = text.substring(colon + 1);
        }
        int port;
        try {
            port = Integer.parseInt(portText);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad port in " + text, e);
        }
        return new MeshAddress(host, port);
    }

    /** Whether {@link #host} is an IP literal, which needs no name lookup. */
    public boolean isLiteral() {
        return NetUtil.isValidIpV4Address(host) || NetUtil.isValidIpV6Address(host);
    }

    @Override
    public String toString() {
        return host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
    }
}
