package ernic.p4;

import com.fasterxml.jackson.databind.JsonNode;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

/** A JSON node with its path, so every refusal can say where in the program it is. */
record J(JsonNode node, String path) {

    boolean has(String key) {
        JsonNode v = node.get(key);
        return v != null && !v.isNull();
    }

    J get(String key) {
        JsonNode v = node.get(key);
        if (v == null) {
            throw P4Refusal.malformed("missing attribute '" + key + "'", path);
        }
        return new J(v, path + "." + key);
    }

    /** The attribute, or null when it is absent or JSON null. */
    J opt(String key) {
        JsonNode v = node.get(key);
        return v == null || v.isNull() ? null : new J(v, path + "." + key);
    }

    boolean isNull() {
        return node.isNull();
    }

    J at(int i) {
        if (!node.isArray() || i >= node.size()) {
            throw P4Refusal.malformed("expected an array with at least " + (i + 1) + " items", path);
        }
        return new J(node.get(i), path + "[" + i + "]");
    }

    int size() {
        return node.size();
    }

    List<J> items() {
        if (!node.isArray()) {
            throw P4Refusal.malformed("expected an array", path);
        }
        List<J> out = new ArrayList<>(node.size());
        for (int i = 0; i < node.size(); i++) {
            out.add(new J(node.get(i), path + "[" + i + "]"));
        }
        return out;
    }

    /** The items of an optional array attribute (absent or null: none). */
    List<J> list(String key) {
        J v = opt(key);
        return v == null ? List.of() : v.items();
    }

    String text() {
        if (!node.isTextual()) {
            throw P4Refusal.malformed("expected a string", path);
        }
        return node.asText();
    }

    int integer() {
        if (!node.canConvertToInt()) {
            throw P4Refusal.malformed("expected an integer", path);
        }
        return node.asInt();
    }

    boolean bool() {
        if (!node.isBoolean()) {
            throw P4Refusal.malformed("expected a boolean", path);
        }
        return node.asBoolean();
    }

    boolean boolOr(String key, boolean dflt) {
        J v = opt(key);
        return v == null ? dflt : v.bool();
    }

    String str(String key) {
        return get(key).text();
    }

    int num(String key) {
        return get(key).integer();
    }

    /** A bmv2 hexstr ("0x..", "-0x.."), as an integer. Decimal strings are accepted too, as bmv2 does. */
    BigInteger hex() {
        String s = text().trim();
        boolean neg = s.startsWith("-");
        if (neg) {
            s = s.substring(1);
        }
        try {
            BigInteger v = s.startsWith("0x") || s.startsWith("0X") ? new BigInteger(s.substring(2), 16)
                    : new BigInteger(s);
            return neg ? v.negate() : v;
        } catch (NumberFormatException e) {
            throw P4Refusal.malformed("not a hexstr: '" + text() + "'", path);
        }
    }

    P4Refusal unsupported(String feature) {
        return P4Refusal.unsupported(feature, path);
    }

    P4Refusal malformed(String what) {
        return P4Refusal.malformed(what, path);
    }
}
