package ernic.it.bench;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/** How the guest sections of the report (4, 6, 7, 9, 10) read in markdown: their tables and their CPU line. */
final class GuestReport {
    private GuestReport() {}

    /**
     * A guest section's CPU figures: the server's CPU over the guest's run per guest operation and per MMIO write,
     * and its share of the run's wall-clock time. Soft-RoCE's cost is inside the guest, out of reach: no ratio.
     */
    static void cpu(StringBuilder md, Map<String, Object> j, JsonNode cpu) {
        if (!cpu.isObject() || !cpu.has("wallNs")) {
            md.append("**CPU:** not measured").append(cpu.has("notMeasured") ? " (" + cpu.get("notMeasured").asText() + ")" : "")
                    .append(" (a result written before the CPU columns, or the servers could not be read).\n\n");
            j.put("cpu", null);
            return;
        }
        Map<String, Object> c = new LinkedHashMap<>();
        double perOp = cpu.path("cpuNsPerOp").asDouble(Double.NaN);
        c.putAll(CpuCost.fields(perOp, Double.NaN, Double.NaN, Double.NaN));
        cpu.fields().forEachRemaining(e -> c.putIfAbsent(e.getKey(), e.getValue()));
        j.put("cpu", c);
        double share = cpu.path("deviceShareOfWall").asDouble(Double.NaN);
        md.append(String.format(Locale.ROOT, "**CPU** of the server over the guest's run (boot included): device "
                + "thread %.2f s of %.1f s wall-clock, a share of **%.1f%%**", cpu.path("deviceCpuNs").asDouble() / 1e9,
                cpu.path("wallNs").asDouble() / 1e9, 100 * share));
        if (cpu.has("processShareOfWall")) {
            md.append(String.format(Locale.ROOT, " (both servers' processes: %.1f%%)",
                    100 * cpu.path("processShareOfWall").asDouble()));
        }
        if (Double.isFinite(perOp)) {
            md.append(String.format(Locale.ROOT, "; **%,.0f ns per guest operation** (%,d counted as %s)", perOp,
                    cpu.path("operations").asLong(), cpu.path("operationCounters")));
        }
        if (cpu.hasNonNull("cpuNsPerRegionWrite")) {
            md.append(String.format(Locale.ROOT, "; %,.0f ns per guest MMIO write (%,d)",
                    cpu.path("cpuNsPerRegionWrite").asDouble(), cpu.path("regionWrites").asLong()));
        }
        md.append(". No ratio: Soft-RoCE's own cost is inside the guest.\n\n");
    }

    /** A markdown table of an array of JSON objects, one column per field seen. */
    static void table(StringBuilder md, JsonNode rows) {
        Set<String> cols = new LinkedHashSet<>();
        rows.forEach(r -> r.fieldNames().forEachRemaining(cols::add));
        // perftest runs: the columns that carry the result (report.json keeps every field)
        List<String> main = List.of("device", "test", "size", "bw_avg_MiB_s", "msg_rate_Mpps", "t_typical_usec",
                "t_avg_usec", "t_p99_usec", "ok", "anomaly");
        if (cols.contains("device") && cols.contains("test") && cols.size() > 10) {
            cols.retainAll(main);
        }
        md.append("| ").append(String.join(" | ", cols)).append(" |\n|");
        cols.forEach(c -> md.append("---|"));
        md.append("\n");
        for (JsonNode r : rows) {
            md.append("|");
            for (String c : cols) {
                JsonNode v = r.get(c);
                md.append(" ").append(v == null || v.isNull() ? "" : v.isTextual() ? v.asText() : v.toString())
                        .append(" |");
            }
            md.append("\n");
        }
        md.append("\n");
    }
}
