package ernic.model;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * ernic's P4 device commands 70-72 as a guest tool would issue them, written from the layouts in docs/p4.md
 * (not from the device): each is a 64-byte command on the device-command page with its text or results in the
 * 1912-byte data area; the completion's bytes 4 to 11 carry a count and a total (or a register's value).
 */
public final class P4Control {
    /** Opcodes and the "what" byte (cmd byte 1) of 70 and 72. */
    public static final int P4_READ = 70, P4_TABLE_WRITE = 71, P4_CONTROL = 72;
    public static final int READ_INFO = 0, READ_COUNTERS = 1, READ_TABLES = 2;
    public static final int CONTROL_COMMANDS = 0, CONTROL_RESET_COUNTERS = 1, CONTROL_READ_REGISTER = 2;
    /** enum ionic_status_code values a P4 command answers with. */
    public static final int SUCCESS = 0, EOPCODE = 2, EPERM = 4, EINVAL = 14, DEV_CMD = 18;

    /** Program information (devcmd 70, what 0). */
    public record Info(int version, int scope, boolean wqe, int tables, int actions, int registers, int counterArrays,
                       String name) {
    }

    private final IonicDriverModel drv;

    public P4Control(IonicDriverModel drv) {
        this.drv = drv;
    }

    private static ByteBuffer cmd(int opcode, int what, int arg, int arg2) {
        ByteBuffer c = IonicDriverModel.command(opcode);
        c.put(1, (byte) what);
        c.putInt(4, arg);
        c.putInt(8, arg2);
        return c;
    }

    /** A raw command: its completion (status in byte 0). */
    public IonicDriverModel.Completion raw(int opcode, int what, int arg, int arg2) throws IOException {
        return drv.devcmd(cmd(opcode, what, arg, arg2));
    }

    public Info info() throws IOException {
        expect(raw(P4_READ, READ_INFO, 0, 0), "P4 read info");
        ByteBuffer d = drv.devcmdData(88);
        byte[] name = new byte[64];
        d.get(24, name);
        return new Info(d.getInt(0), d.get(4) & 0xff, d.get(5) != 0, d.getInt(8), d.getInt(12), d.getInt(16),
                d.getInt(20), cString(name));
    }

    /** Every counter, by name, paging through the data area. */
    public Map<String, Long> counters() throws IOException {
        return entries(READ_COUNTERS, 48, 40, 0);
    }

    /** Each table's hits (misses at the same name + ".misses"). */
    public Map<String, Long> tables() throws IOException {
        return entries(READ_TABLES, 64, 48, 1);
    }

    private Map<String, Long> entries(int what, int size, int nameSize, int withMisses) throws IOException {
        Map<String, Long> m = new LinkedHashMap<>();
        int first = 0;
        while (true) {
            IonicDriverModel.Completion c = raw(P4_READ, what, first, 0);
            expect(c, "P4 read " + what);
            int count = c.le().getInt(4), total = c.le().getInt(8);
            ByteBuffer d = drv.devcmdData(count * size);
            for (int i = 0; i < count; i++) {
                byte[] name = new byte[nameSize];
                d.get(i * size, name);
                String n = cString(name);
                m.put(n, d.getLong(i * size + nameSize));
                if (withMisses == 1) {
                    m.put(n + ".misses", d.getLong(i * size + nameSize + 8));
                }
            }
            first += count;
            if (count == 0 || first >= total) {
                return m;
            }
        }
    }

    /** Table commands (simple_switch_CLI syntax, one a line) through devcmd 71; the completion. */
    public IonicDriverModel.Completion tableWrite(String text) throws IOException {
        byte[] b = text.getBytes(StandardCharsets.US_ASCII);
        drv.writeDevcmdData(0, b);
        return raw(P4_TABLE_WRITE, 0, b.length, 0);
    }

    /** Any runtime command through devcmd 72; the completion. */
    public IonicDriverModel.Completion control(String text) throws IOException {
        byte[] b = text.getBytes(StandardCharsets.US_ASCII);
        drv.writeDevcmdData(0, b);
        return raw(P4_CONTROL, CONTROL_COMMANDS, b.length, 0);
    }

    /**
     * What the read commands (register_read, counter_read, meter_get_rates, table_dump) of a successful
     * {@link #control} printed: the data area's text, {@code total} (at 8) bytes long, cut at the data area's 1912.
     */
    public String printed(IonicDriverModel.Completion c) throws IOException {
        expect(c, "P4 control");
        int n = Math.min(c.le().getInt(8), 1912);
        byte[] b = new byte[n];
        drv.devcmdData(n).get(0, b);
        return new String(b, StandardCharsets.US_ASCII);
    }

    /** A register cell through devcmd 72 (what 2); the completion carries the value at 4. */
    public IonicDriverModel.Completion readRegister(String name, int index) throws IOException {
        byte[] b = name.getBytes(StandardCharsets.US_ASCII);
        drv.writeDevcmdData(0, b);
        return raw(P4_CONTROL, CONTROL_READ_REGISTER, b.length, index);
    }

    private static String cString(byte[] b) {
        int n = 0;
        while (n < b.length && b[n] != 0) {
            n++;
        }
        return new String(b, 0, n, StandardCharsets.UTF_8);
    }

    private static void expect(IonicDriverModel.Completion c, String what) throws IOException {
        if (c.status() != SUCCESS) {
            throw new IOException(what + ": status " + c.status());
        }
    }
}
