package ernic.it.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongFunction;

/**
 * One table of {@link P4Bench.Compared} rows in the P4 section of the report: its columns (size, configuration, the
 * wall-clock rate, the rate per second of device CPU, and the reference the ratios divide by), how a size and a rate
 * read in it, and the JSON keys of its rows: the configuration and the size, the stems of the rate keys
 * ({@code <rate>Median}, {@code <rate>Rounds}) and the reference in the ratio keys ({@code ratioTo<reference>}).
 */
record ComparedTable(String sizeColumn, String whatColumn, String rateColumn, String cpuRateColumn,
        String referenceColumn, LongFunction<String> sizeLabel, double rateScale, String rateFormat,
        String whatKey, String sizeKey, String rateKey, String cpuRateKey, String referenceKey, boolean ratePerByte) {

    /** Ethernet frames: frames per second beside the engine off. */
    static final ComparedTable ETHERNET = new ComparedTable("frame", "engine", "frames/s",
            "frames per device CPU s", "engine off", size -> size + " B", 1, "%,.0f",
            "engine", "frameBytes", "framesPerSecond", "framesPerDeviceCpuSecond", "EngineOff", false);

    /** RDMA WRITE: payload bytes per second (GB in the table) beside the plain WRITE without the engine. */
    static final ComparedTable RDMA = new ComparedTable("size", "operation", "GB/s",
            "GB per device CPU s", "plain WRITE", BenchSuite::human, 1e9, "%.3f",
            "op", "size", "bytesPerSecond", "bytesPerDeviceCpuSecond", "PlainWrite", true);

    /**
     * Writes this table of {@code rows} into {@code md}: per size, each row beside that size's reference. Returns its
     * rows for the JSON report.
     */
    List<Map<String, Object>> write(StringBuilder md, List<P4Bench.Row> rows, long[] sizes) {
        String ref = referenceColumn;
        md.append("| ").append(sizeColumn).append(" | ").append(whatColumn).append(" | ").append(rateColumn)
                .append(" | × ").append(ref).append(" | rounds: × ").append(ref)
                .append(" | ").append(cpuRateColumn).append(" | × ").append(ref).append(" |\n")
                .append("|---:|---|---:|---:|---:|---:|---:|\n");
        String rowFormat = "| %s | %s | " + rateFormat + " | %s | %s | " + rateFormat + " | %s |%n";
        List<Map<String, Object>> out = new ArrayList<>();
        for (long size : sizes) {
            for (P4Bench.Compared c : P4Bench.compared(rows, size)) {
                P4Bench.Row row = c.row();
                boolean isRef = c.isReference();
                double[] perRound = c.perRound();
                double ratio = c.ratio(), cpuRatio = c.cpuRatio();
                Map<String, Object> m = new LinkedHashMap<>();
                m.put(whatKey, row.what());
                m.put("reference", isRef);
                m.put(sizeKey, size);
                m.put(rateKey + "Median", row.median());
                m.put(rateKey + "Rounds", row.perRound());
                m.put("ratioTo" + referenceKey, ratio);
                m.put("ratioTo" + referenceKey + "Rounds", perRound);
                m.put(cpuRateKey + "Median", row.cpuMedian());
                m.put(cpuRateKey + "Rounds", row.perCpuRound());
                m.put("deviceCpuRatioTo" + referenceKey, cpuRatio);
                // The same device CPU as the suite's CPU fields: ns per frame or WRITE and per byte, beside the
                // reference's (its rate is this row's × the rate ratio).
                double perOp = 1e9 / row.cpuMedian() * (ratePerByte ? size : 1);
                double refPerOp = perOp * cpuRatio;
                m.putAll(CpuCost.fields(perOp, perOp / size, refPerOp, refPerOp / size));
                out.add(m);
                md.append(String.format(Locale.ROOT, rowFormat, sizeLabel.apply(size),
                        isRef ? row.what() + " (reference)" : row.what(), row.median() / rateScale,
                        isRef ? "1" : "**" + BenchSuite.ratio(ratio) + "**", isRef ? "" : BenchSuite.lowHigh(perRound),
                        row.cpuMedian() / rateScale, isRef ? "1" : "**" + BenchSuite.ratio(cpuRatio) + "**"));
            }
        }
        return out;
    }
}
