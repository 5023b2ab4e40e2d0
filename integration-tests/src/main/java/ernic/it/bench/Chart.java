package ernic.it.bench;

import javax.imageio.ImageIO;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The suite's chart, drawn with Java2D (headless) into a PNG: bandwidth (GB/s, linear) and latency (µs, log
 * scale) by message size (log scale), one line per operation, the memcpy reference among them.
 */
final class Chart {
    private static final int W = 1400, H = 560, PANEL = 640, TOP = 60, BOTTOM = 70, LEFT = 80;
    private static final Color[] COLORS = {new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c),
            new Color(0x555555), new Color(0x9467bd)};

    private Chart() {}

    /** {@code window}: the WQEs in flight of the bandwidth panel, as its title gives them. */
    static void write(Path file, String title, String window, List<DataPathBench.Row> rows) throws IOException {
        System.setProperty("java.awt.headless", "true");
        Map<String, List<DataPathBench.Row>> series = new LinkedHashMap<>();
        for (DataPathBench.Row r : rows) {
            series.computeIfAbsent(r.op(), k -> new java.util.ArrayList<>()).add(r);
        }
        BufferedImage img = new BufferedImage(W, H, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, W, H);
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
        g.drawString(title, LEFT, 28);
        panel(g, 0, "Bandwidth (GB/s), window of " + window, series, false);
        panel(g, PANEL + 60, "Latency (µs, log), one in flight", series, true);
        // legend
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        int x = LEFT, i = 0;
        for (String name : series.keySet()) {
            g.setColor(COLORS[i++ % COLORS.length]);
            g.setStroke(new BasicStroke(3f));
            g.drawLine(x, H - 22, x + 24, H - 22);
            g.setColor(Color.BLACK);
            g.drawString(name, x + 30, H - 17);
            x += 30 + g.getFontMetrics().stringWidth(name) + 40;
        }
        g.dispose();
        ImageIO.write(img, "png", file.toFile());
    }

    private static void panel(Graphics2D g, int x0, String title, Map<String, List<DataPathBench.Row>> series,
                              boolean latency) {
        int left = x0 + LEFT, right = x0 + PANEL, top = TOP, bottom = H - BOTTOM;
        double xmin = Math.log(DataPathBench.SIZES[0]), xmax = Math.log(DataPathBench.SIZES[DataPathBench.SIZES.length - 1]);
        double ymin = Double.MAX_VALUE, ymax = 0;
        for (List<DataPathBench.Row> rs : series.values()) {
            for (DataPathBench.Row r : rs) {
                double y = latency ? r.latencyNanos() / 1e3 : r.bytesPerSecond() / 1e9;
                ymin = Math.min(ymin, y);
                ymax = Math.max(ymax, y);
            }
        }
        if (latency) {
            ymin = Math.pow(10, Math.floor(Math.log10(Math.max(ymin, 1e-3))));
            ymax = Math.pow(10, Math.ceil(Math.log10(Math.max(ymax, ymin * 10))));
        } else {
            ymin = 0;
            ymax = niceCeil(ymax);
        }
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
        g.drawString(title, left, top - 12);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        g.setStroke(new BasicStroke(1f));
        // grid and y labels
        int ticks = latency ? (int) Math.round(Math.log10(ymax / ymin)) : 5;
        for (int t = 0; t <= ticks; t++) {
            double value = latency ? ymin * Math.pow(10, t) : ymax * t / ticks;
            int y = yPos(value, ymin, ymax, top, bottom, latency);
            g.setColor(new Color(0xdddddd));
            g.drawLine(left, y, right, y);
            g.setColor(Color.BLACK);
            String label = latency ? (value >= 1 ? String.format("%.0f", value) : String.format("%.3g", value))
                    : String.format("%.1f", value);
            g.drawString(label, left - 8 - g.getFontMetrics().stringWidth(label), y + 4);
        }
        for (long s : DataPathBench.SIZES) {
            int x = xPos(s, xmin, xmax, left, right);
            g.setColor(new Color(0xeeeeee));
            g.drawLine(x, top, x, bottom);
            g.setColor(Color.BLACK);
            String label = s >= 1 << 20 ? (s >> 20) + " MiB" : (s >> 10) + " KiB";
            g.drawString(label, x - g.getFontMetrics().stringWidth(label) / 2, bottom + 18);
        }
        g.drawRect(left, top, right - left, bottom - top);
        g.drawString("message size", (left + right) / 2 - 40, bottom + 38);
        int i = 0;
        for (List<DataPathBench.Row> rs : series.values()) {
            g.setColor(COLORS[i++ % COLORS.length]);
            g.setStroke(new BasicStroke(2.5f));
            int px = -1, py = -1;
            for (DataPathBench.Row r : rs) {
                double v = latency ? r.latencyNanos() / 1e3 : r.bytesPerSecond() / 1e9;
                int x = xPos(r.size(), xmin, xmax, left, right), y = yPos(v, ymin, ymax, top, bottom, latency);
                if (px >= 0) {
                    g.drawLine(px, py, x, y);
                }
                g.fillOval(x - 4, y - 4, 8, 8);
                px = x;
                py = y;
            }
        }
    }

    private static int xPos(long size, double xmin, double xmax, int left, int right) {
        return left + 20 + (int) Math.round((Math.log(size) - xmin) / (xmax - xmin) * (right - left - 40));
    }

    private static int yPos(double v, double ymin, double ymax, int top, int bottom, boolean log) {
        double f = log ? (Math.log(Math.max(v, ymin)) - Math.log(ymin)) / (Math.log(ymax) - Math.log(ymin))
                : (v - ymin) / (ymax - ymin);
        return bottom - (int) Math.round(f * (bottom - top));
    }

    private static double niceCeil(double v) {
        if (v <= 0) {
            return 1;
        }
        double p = Math.pow(10, Math.floor(Math.log10(v)));
        for (double m : new double[] {1, 2, 2.5, 5, 10}) {
            if (m * p >= v) {
                return m * p;
            }
        }
        return 10 * p;
    }
}
