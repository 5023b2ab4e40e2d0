package ernic.s3;

import ernic.common.IpAddress;
import ernic.common.OptionList;
import ernic.ipstack.IpEndpoint;

import java.util.List;
import java.util.Map;
import java.util.Locale;

/**
 * The options of {@code --backend s3[:bucket=ernic,size=256M,objects=256,ip=192.168.200.1,port=9000,
 * maxpart=256M,access=..,secret=..,reply=compat]}. {@link #parse} refuses a bad option with an
 * {@link IllegalArgumentException} whose message is the one-line error the command line prints.
 */
public record S3Options(String bucket, long size, int objects, int ip, int port, long maxPart,
                        String accessKey, String secretKey, boolean replyCompat) {
    /** The keys, written once: the parser, the usage in messages and {@code ernic serve --help} come from it. */
    public static final OptionList GRAMMAR = new OptionList("s3", List.of(
            OptionList.key("bucket", "NAME"), OptionList.key("size", "SIZE"), OptionList.key("objects", "N"),
            OptionList.key("ip", "ADDR"), OptionList.key("port", "PORT"), OptionList.key("maxpart", "SIZE"),
            OptionList.key("access", "KEY"), OptionList.key("secret", "KEY"), OptionList.key("reply", "status|compat")));

    public static final S3Options DEFAULTS = new S3Options("ernic", 256L << 20, 256, 0xc0a8c801, 9000,
            256L << 20, null, null, false);
    /** S3's largest single PUT and part. */
    public static final long MAX_OBJECT = 5L << 30;

    /** Whether SigV4 signatures are verified (both keys given). */
    public boolean verifiesSignatures() {
        return accessKey != null;
    }

    /** The store's MAC: 02:53 and the four IPv4 bytes. */
    public String mac() {
        return IpEndpoint.macOf(ip);
    }

    public String endpointUrl() {
        return "http://" + IpAddress.ofIpv4(ip) + ":" + port;
    }

    /** Parses {@code s3}, {@code s3:opts} or just {@code opts}. */
    public static S3Options parse(String spec) {
        String bucket = DEFAULTS.bucket, access = null, secret = null;
        long size = DEFAULTS.size, maxPart = DEFAULTS.maxPart;
        int objects = DEFAULTS.objects, ip = DEFAULTS.ip, port = DEFAULTS.port;
        boolean compat = false;
        for (Map.Entry<String, String> e : GRAMMAR.split(spec, S3Options::bad).entrySet()) {
            String name = e.getKey(), value = e.getValue();
            switch (name) {
                case "bucket" -> {
                    if (!validBucketName(value)) {
                        throw bad("bad bucket '" + value + "'");
                    }
                    bucket = value;
                }
                case "size" -> size = size("size", value, 1L << 20, 1L << 40);
                case "maxpart" -> maxPart = size("maxpart", value, 5L << 20, MAX_OBJECT);
                case "objects" -> objects = (int) number("objects", value, 1, 65536);
                case "port" -> port = (int) number("port", value, 1, 65535);
                case "ip" -> ip = ipv4(value);
                case "access" -> access = key("access", value);
                case "secret" -> secret = key("secret", value);
                case "reply" -> {
                    if (!value.equals("compat") && !value.equals("status")) {
                        throw bad("bad reply '" + value + "' (status or compat)");
                    }
                    compat = value.equals("compat");
                }
                default -> throw new IllegalStateException("a key of GRAMMAR without a case: " + name);
            }
        }
        if ((access == null) != (secret == null)) {
            throw bad("access and secret go together");
        }
        return new S3Options(bucket, size, objects, ip, port, maxPart, access, secret, compat);
    }

    private static IllegalArgumentException bad(String what) {
        return new IllegalArgumentException("s3 backend: " + what);
    }

    /** A size with an optional K/M/G/T (or KiB/MiB/GiB/TiB) suffix, powers of 1024. */
    static long size(String name, String v, long min, long max) {
        String u = v.toUpperCase(Locale.ROOT);
        int shift = 0;
        for (String[] suf : new String[][] {{"KIB", "10"}, {"MIB", "20"}, {"GIB", "30"}, {"TIB", "40"},
                {"K", "10"}, {"M", "20"}, {"G", "30"}, {"T", "40"}}) {
            if (u.endsWith(suf[0])) {
                shift = Integer.parseInt(suf[1]);
                u = u.substring(0, u.length() - suf[0].length());
                break;
            }
        }
        long n = HttpHeadParser.parseLength(u);
        if (n < 0 || n > (Long.MAX_VALUE >> shift) || (n << shift) < min || (n << shift) > max) {
            throw bad("bad " + name + " '" + v + "'");
        }
        return n << shift;
    }

    private static long number(String name, String v, long min, long max) {
        long n = HttpHeadParser.parseLength(v);
        if (n < min || n > max) {
            throw bad("bad " + name + " '" + v + "'");
        }
        return n;
    }

    private static int ipv4(String v) {
        int ip;
        try {
            ip = IpAddress.parseIpv4(v);
        } catch (IllegalArgumentException e) {
            throw bad("bad ip '" + v + "'");
        }
        int top = ip >>> 24;
        if (ip == 0 || ip == -1 || top == 0 || top == 127 || top >= 224) {
            throw bad("bad ip '" + v + "' (a unicast host address)");
        }
        return ip;
    }

    private static String key(String name, String v) {
        if (v.isEmpty() || v.length() > 128 || !v.chars().allMatch(c -> c > 0x20 && c < 0x7f && c != ',')) {
            throw bad("bad " + name + " key");
        }
        return v;
    }

    /** S3's bucket naming rules: 3-63 of lower-case letters, digits, '.', '-', alphanumeric at both ends. */
    static boolean validBucketName(String n) {
        if (n.length() < 3 || n.length() > 63 || n.contains("..") || n.matches("\\d+\\.\\d+\\.\\d+\\.\\d+")) {
            return false;
        }
        for (int i = 0; i < n.length(); i++) {
            char c = n.charAt(i);
            boolean alnum = c >= 'a' && c <= 'z' || c >= '0' && c <= '9';
            if (!alnum && ((c != '.' && c != '-') || i == 0 || i == n.length() - 1)) {
                return false;
            }
        }
        return true;
    }
}
