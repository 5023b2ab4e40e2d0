package ernic.nvmeof;

import ernic.common.IpAddress;
import ernic.common.OptionList;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code --backend nvmeof[:size=64M,bs=512,file=PATH,nqn=nvmet-test,ip=192.168.200.1,port=4420,queues=8,
 * nsid=1,model=...,serial=...]}, the option spelling of the C original (users' scripts use it).
 * {@link #parse} turns a bad option into an {@link IllegalArgumentException} whose message is the one-line
 * start-up error, e.g. {@code nvmeof backend: bad size 'bogus'}.
 *
 * @param size   the namespace size in bytes; empty when not given (a file keeps its size; else 64 MiB)
 * @param file   the backing file, or null for RAM
 * @param queues the most I/O queues a host may connect (the admin queue not counted)
 */
public record NvmeofOptions(OptionalLong size, int blockSize, Path file, String nqn, IpAddress ip, int port,
                            int queues, int nsid, String model, String serial) {
    public static final long DEFAULT_SIZE = 64L << 20;
    public static final String DEFAULT_NQN = "nvmet-test", DEFAULT_IP = "192.168.200.1",
            DEFAULT_MODEL = "rocm-ernic NVMe-oF target", DEFAULT_SERIAL = "ERNIC0000000000001";
    public static final int DEFAULT_PORT = 4420, DEFAULT_QUEUES = 8, DEFAULT_NSID = 1;
    /** MRs the stock nvme-rdma initiator registers per queue (its MR pool is sized by the queue depth, 128). */
    public static final int MRS_PER_QUEUE = 128;

    /** The keys, written once: the parser, the usage in messages and {@code ernic serve --help} come from it. */
    public static final OptionList GRAMMAR = new OptionList("nvmeof", List.of(
            OptionList.key("size", "SIZE"), OptionList.key("bs", "512|1024|2048|4096"), OptionList.key("file", "PATH"),
            OptionList.key("nqn", "NQN"), OptionList.key("ip", "ADDR"), OptionList.key("port", "PORT"),
            OptionList.key("queues", "N"), OptionList.key("nsid", "N"), OptionList.key("model", "TEXT"),
            OptionList.key("serial", "TEXT")));

    private static final Pattern SIZE = Pattern.compile("(\\d+)([KMGT]?)(i?B)?", Pattern.CASE_INSENSITIVE);

    /** The size the namespace gets when the options do not name one and no file has one. */
    public long sizeOrDefault() {
        return size.orElse(DEFAULT_SIZE);
    }

    /**
     * The most I/O queues the device's identity allows: every queue (admin included) costs the initiator
     * {@link #MRS_PER_QUEUE} MRs of the LIF's {@code mrsPerLif}, and one RC QP of its {@code qpsPerLif}
     * (QP 0 and 1 are the special QPs).
     */
    public static int queueLimit(int mrsPerLif, int qpsPerLif) {
        return Math.max(0, Math.min(mrsPerLif / MRS_PER_QUEUE - 1, qpsPerLif - 3));
    }

    /** Parses {@code nvmeof} or {@code nvmeof:k=v,...} against the queue limit of the device. */
    public static NvmeofOptions parse(String backend, int mrsPerLif, int qpsPerLif) {
        if (!backend.equals("nvmeof") && !backend.startsWith("nvmeof:")) {
            throw bad("not an nvmeof backend '" + backend + "'");
        }
        Map<String, String> given = GRAMMAR.split(backend, NvmeofOptions::bad);
        OptionalLong size = OptionalLong.empty();
        int bs = 512, port = DEFAULT_PORT, queues = DEFAULT_QUEUES, nsid = DEFAULT_NSID;
        Path file = null;
        String nqn = DEFAULT_NQN, model = DEFAULT_MODEL, serial = DEFAULT_SERIAL;
        IpAddress ip = ipv4(DEFAULT_IP);
        for (Map.Entry<String, String> e : given.entrySet()) {
            String key = e.getKey(), value = e.getValue();
            switch (key) {
                case "size" -> size = OptionalLong.of(size(value));
                case "bs" -> bs = switch (value) {
                    case "512", "1024", "2048", "4096" -> Integer.parseInt(value);
                    default -> throw badValue(key, value, "512, 1024, 2048 or 4096");
                };
                case "file" -> {
                    if (value.isEmpty() || value.indexOf('\0') >= 0) {
                        throw badValue(key, value, null);
                    }
                    file = Path.of(value);
                }
                case "nqn" -> nqn = nqn(value);
                case "ip" -> ip = ipv4(value);
                case "port" -> port = number(key, value, 1, 65535);
                case "queues" -> queues = number(key, value, 1, Integer.MAX_VALUE);
                case "nsid" -> nsid = (int) numberLong(key, value, 1, 0xffff_fffeL);
                case "model" -> model = ascii(key, value, 40);
                case "serial" -> serial = ascii(key, value, 20);
                default -> throw new IllegalStateException("a key of GRAMMAR without a case: " + key);
            }
        }
        int limit = queueLimit(mrsPerLif, qpsPerLif);
        if (queues > limit) {
            throw bad("queues=" + queues + " is more than this device allows (" + limit + "): the nvme-rdma"
                    + " initiator registers " + MRS_PER_QUEUE + " MRs per queue, admin queue included, and the"
                    + " LIF has " + mrsPerLif + " MRs and " + qpsPerLif + " QPs");
        }
        if (size.isPresent() && size.getAsLong() % bs != 0) {
            throw badValue("size", Long.toString(size.getAsLong()), "not a whole number of " + bs + "-byte blocks");
        }
        return new NvmeofOptions(size, bs, file, nqn, ip, port, queues, nsid, model, serial);
    }

    /** A byte count with an optional K/M/G/T (or KiB/MiB/GiB/TiB) binary suffix; at least 1. */
    static long size(String value) {
        Matcher m = SIZE.matcher(value);
        if (!m.matches() || (m.group(3) != null && m.group(2).isEmpty())) {
            throw badValue("size", value, null);
        }
        int shift = switch (m.group(2).toUpperCase()) {
            case "K" -> 10;
            case "M" -> 20;
            case "G" -> 30;
            case "T" -> 40;
            default -> 0;
        };
        try {
            long n = Long.parseLong(m.group(1));
            if (n == 0 || n > (Long.MAX_VALUE >> shift)) {
                throw badValue("size", value, null);
            }
            return n << shift;
        } catch (NumberFormatException e) {
            throw badValue("size", value, null);
        }
    }

    private static String nqn(String value) {
        if (value.isEmpty() || value.length() > Nvme.NQN_MAX || !value.chars().allMatch(c -> c > ' ' && c < 0x7f)) {
            throw badValue("nqn", value, "1 to " + Nvme.NQN_MAX + " printable ASCII characters");
        }
        if (value.equals(Nvme.DISCOVERY_NQN)) {
            throw badValue("nqn", value, "that is the discovery subsystem's NQN");
        }
        return value;
    }

    private static IpAddress ipv4(String value) {
        try {
            return IpAddress.ofIpv4(IpAddress.parseIpv4(value));
        } catch (IllegalArgumentException e) {
            throw badValue("ip", value, "an IPv4 address");
        }
    }

    private static String ascii(String key, String value, int max) {
        if (value.isEmpty() || value.length() > max || !value.chars().allMatch(c -> c >= ' ' && c < 0x7f)) {
            throw badValue(key, value, "1 to " + max + " printable ASCII characters");
        }
        return value;
    }

    private static int number(String key, String value, int min, int max) {
        return (int) numberLong(key, value, min, max);
    }

    private static long numberLong(String key, String value, long min, long max) {
        try {
            long n = Long.parseLong(value);
            if (n >= min && n <= max && value.chars().allMatch(Character::isDigit)) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw badValue(key, value, min + ".." + max);
    }

    private static IllegalArgumentException badValue(String key, String value, String why) {
        return bad("bad " + key + " '" + value + "'" + (why == null ? "" : " (" + why + ")"));
    }

    private static IllegalArgumentException bad(String what) {
        return new IllegalArgumentException("nvmeof backend: " + what);
    }
}
