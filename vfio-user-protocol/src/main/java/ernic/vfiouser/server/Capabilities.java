package ernic.vfiouser.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import ernic.vfiouser.sys.LibC;
import ernic.vfiouser.wire.ProtocolException;

/**
 * The capabilities object of VERSION ({"capabilities": {...}}), both ways. Unknown keys are
 * ignored, as the spec asks; the known ones must have the right JSON type.
 */
public record Capabilities(int maxMsgFds, long maxDataXferSize, long pgsizes, int maxDmaMaps,
                           boolean writeMultiple) {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The spec's defaults for a peer that states nothing. */
    public static final Capabilities DEFAULTS = new Capabilities(1, 1 << 20, 4096, 65535, false);

    public static Capabilities parse(String json) throws ProtocolException {
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (Exception e) {
            throw new ProtocolException(LibC.EINVAL, "VERSION: malformed JSON: " + firstLine(e.getMessage()));
        }
        if (root == null || !root.isObject()) {
            throw new ProtocolException(LibC.EINVAL, "VERSION: JSON is not an object");
        }
        JsonNode caps = root.get("capabilities");
        if (caps == null) {
            return DEFAULTS;
        }
        if (!caps.isObject()) {
            throw new ProtocolException(LibC.EINVAL, "VERSION: \"capabilities\" is not an object");
        }
        return new Capabilities(
                (int) number(caps, "max_msg_fds", DEFAULTS.maxMsgFds, 0, 253),
                number(caps, "max_data_xfer_size", DEFAULTS.maxDataXferSize, 1, 1L << 32),
                number(caps, "pgsizes", DEFAULTS.pgsizes, 1, Long.MAX_VALUE),
                (int) number(caps, "max_dma_maps", DEFAULTS.maxDmaMaps, 0, 65535),
                bool(caps, "write_multiple", DEFAULTS.writeMultiple));
    }

    private static long number(JsonNode caps, String key, long dflt, long min, long max) throws ProtocolException {
        JsonNode v = caps.get(key);
        if (v == null) {
            return dflt;
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong() || v.asLong() < min || v.asLong() > max) {
            throw new ProtocolException(LibC.EINVAL, "VERSION: capability " + key + " = " + v + " is not a whole number in ["
                    + min + ", " + max + "]");
        }
        return v.asLong();
    }

    private static boolean bool(JsonNode caps, String key, boolean dflt) throws ProtocolException {
        JsonNode v = caps.get(key);
        if (v == null) {
            return dflt;
        }
        if (!v.isBoolean()) {
            throw new ProtocolException(LibC.EINVAL, "VERSION: capability " + key + " = " + v + " is not a boolean");
        }
        return v.asBoolean();
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    public String toJson() {
        ObjectNode root = JSON.createObjectNode();
        ObjectNode caps = root.putObject("capabilities");
        caps.put("max_msg_fds", maxMsgFds);
        caps.put("max_data_xfer_size", maxDataXferSize);
        caps.put("pgsizes", pgsizes);
        caps.put("max_dma_maps", maxDmaMaps);
        caps.put("write_multiple", writeMultiple);
        return root.toString();
    }
}
