package ernic.it.bench;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Section 10's ratios: RoCEv2 on the wire against its references, per perftest row. Each is a speed ratio, above 1
 * when the first is faster: bandwidth over bandwidth, a reference's time over the measured time. Runs that are not
 * {@code ok} are left out; rows with several rounds (ping-pong) compare their medians.
 */
final class WireRatios {
    private WireRatios() {}

    /**
     * {@code ionic_0} of {@code wireRxe} (ionic to Soft-RoCE on the wire) against {@code rxe0} of {@code twoGuests}
     * (Soft-RoCE to Soft-RoCE over the same bridge), and {@code ionic_0} of {@code wire} (ionic to ionic on the
     * wire) against {@code ionic_0} of {@code twoGuests} (across the mesh).
     */
    static List<Map<String, Object>> of(JsonNode twoGuests, JsonNode wireRxe, JsonNode wire) {
        Map<String, List<Double>> rxe = figures(twoGuests, "rxe0"), mesh = figures(twoGuests, "ionic_0");
        Map<String, List<Double>> onWireRxe = figures(wireRxe, "ionic_0"), onWire = figures(wire, "ionic_0");
        List<Map<String, Object>> rows = new ArrayList<>();
        for (String key : rxe.keySet()) {
            Map<String, Object> r = new LinkedHashMap<>();
            String[] k = key.split(" ");
            r.put("test", k[0]);
            r.put("size", Integer.parseInt(k[1]));
            r.put("ionic_to_rxe_over_rxe_to_rxe", ratio(k[0], onWireRxe.get(key), rxe.get(key)));
            r.put("wire_over_mesh", ratio(k[0], onWire.get(key), mesh.get(key)));
            rows.add(r);
        }
        return rows;
    }

    /** Each ok row's main figure (bandwidth, or typical / average time), by "test size". */
    private static Map<String, List<Double>> figures(JsonNode doc, String device) {
        Map<String, List<Double>> m = new LinkedHashMap<>();
        for (JsonNode r : doc.path("results")) {
            if (!r.path("ok").asBoolean() || !device.equals(r.path("device").asText())) {
                continue;
            }
            String test = r.path("test").asText();
            JsonNode v = test.endsWith("_bw") ? r.path("bw_avg_MiB_s")
                    : r.has("t_typical_usec") ? r.path("t_typical_usec") : r.path("t_avg_usec");
            if (v.isNumber() && v.asDouble() > 0) {
                m.computeIfAbsent(test + " " + r.path("size").asInt(), x -> new ArrayList<>()).add(v.asDouble());
            }
        }
        return m;
    }

    /** Speed of {@code measured} over {@code reference}, 3 decimals; null when either is missing. */
    private static Double ratio(String test, List<Double> measured, List<Double> reference) {
        if (measured == null || reference == null) {
            return null;
        }
        double a = median(measured), b = median(reference);
        double speed = test.endsWith("_bw") ? a / b : b / a;
        return Math.round(speed * 1000) / 1000.0;
    }

    private static double median(List<Double> v) {
        List<Double> s = new ArrayList<>(v);
        s.sort(null);
        return s.get(s.size() / 2);
    }
}
