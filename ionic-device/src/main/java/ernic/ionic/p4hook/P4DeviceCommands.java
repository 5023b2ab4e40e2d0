package ernic.ionic.p4hook;

import java.lang.foreign.ValueLayout;
import ernic.counters.CounterRegistry;
import ernic.ionic.base.P4CommandHandler;
import ernic.p4.P4EntryError;
import ernic.ionic.regs.Bar0;
import ernic.ionic.regs.Opcode;
import ernic.ionic.regs.Status;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static ernic.common.Endian.LE;

/**
 * Device commands 70-72, the guest's way to the engine (layouts in docs/p4.md, all fields little-endian as in
 * ionic_if.h). Each command is 64 bytes on the device-command page; its data is the 1912-byte data area; the
 * command-specific completion bytes are at 4 to 14 of the 16-byte completion. A command beyond the guest's
 * scope fails with EPERM; a malformed one with EINVAL; both are counted and logged once per cause.
 */
final class P4DeviceCommands implements P4CommandHandler {
    /** struct ernic_p4_cmd: u8 opcode; u8 what; u16 rsvd; __le32 index_or_length; __le32 index; rsvd to 64. */
    static final int WHAT = 1, ARG = 4, ARG2 = 8;
    /** struct ernic_p4_comp: status, rsvd, comp_index, then __le32 count (or __le64 value) at 4, __le32 total at 8. */
    static final int COMP_COUNT = 4, COMP_VALUE = 4, COMP_TOTAL = 8;
    /** devcmd 70 what: program information, counters, tables. */
    static final int READ_INFO = 0, READ_COUNTERS = 1, READ_TABLES = 2;
    /** devcmd 71 what: table commands, take digests. */
    static final int TABLE_COMMANDS = 0, TABLE_TAKE_DIGESTS = 1;
    /**
     * A digest entry (devcmd 71 what 1): char name[32] NUL-padded (the learn list's), __le32 fields (how many the
     * list has), __le32 rsvd, then the first {@value #DIGEST_VALUES} values, 16 bytes each, little-endian (a value
     * wider than 128 bits keeps its low 128).
     */
    static final int DIGEST_NAME_SIZE = 32, DIGEST_FIELDS = 32, DIGEST_VALUE_AT = 40, DIGEST_VALUES = 4,
            DIGEST_VALUE_SIZE = 16, DIGEST_ENTRY = 104;
    /** devcmd 72 what: runtime commands of any kind, reset every counter, read a register cell. */
    static final int CONTROL_COMMANDS = 0, CONTROL_RESET_COUNTERS = 1, CONTROL_READ_REGISTER = 2;
    /** Program information (devcmd 70 what 0): version, scope, wqe, counts, the name. */
    static final int INFO_VERSION = 0, INFO_SCOPE = 4, INFO_WQE = 5, INFO_TABLES = 8, INFO_ACTIONS = 12,
            INFO_REGISTERS = 16, INFO_COUNTER_ARRAYS = 20, INFO_NAME = 24, INFO_NAME_SIZE = 64, INFO_SIZE = 88;
    /** A counter entry (devcmd 70 what 1): char name[40] NUL-padded, __le64 value. */
    static final int COUNTER_NAME_SIZE = 40, COUNTER_ENTRY = 48;
    /** A table entry (devcmd 70 what 2): char name[48] NUL-padded, __le64 hits, __le64 misses. */
    static final int TABLE_NAME_SIZE = 48, TABLE_ENTRY = 64;

    private final P4Hooks hooks;

    P4DeviceCommands(P4Hooks hooks) {
        this.hooks = hooks;
    }

    @Override
    public int execute(int opcode, MemorySegment cmd, MemorySegment comp, MemorySegment data) {
        P4Scope needed = switch (opcode) {
            case Opcode.P4_READ -> P4Scope.READ;
            case Opcode.P4_TABLE_WRITE -> P4Scope.TABLES;
            default -> P4Scope.ALL;
        };
        if (!hooks.scope.allows(needed)) {
            hooks.counters.inc(P4HookCounter.DEVCMD_OUT_OF_SCOPE);
            hooks.refusals.refuse("p4-devcmd-scope", "P4 device command " + opcode + " needs --p4-guest-scope "
                    + needed.name().toLowerCase() + "; the guest has " + hooks.scope.name().toLowerCase());
            return Status.EPERM;
        }
        int st = switch (opcode) {
            case Opcode.P4_READ -> read(cmd, comp, data);
            case Opcode.P4_TABLE_WRITE -> switch (LE.u8(cmd, WHAT)) {
                case TABLE_COMMANDS -> commands(cmd, comp, data, true);
                case TABLE_TAKE_DIGESTS -> takeDigests(comp, data);
                default -> Status.EINVAL;
            };
            default -> control(cmd, comp, data);
        };
        if (st == Status.EINVAL) {
            hooks.counters.inc(P4HookCounter.DEVCMD_INVALID);
            hooks.refusals.refuse("p4-devcmd-invalid", "P4 device command " + opcode + " refused as malformed"
                    + " (unknown what, bad text, or a runtime command the engine refuses)");
        } else if (st == Status.SUCCESS) {
            hooks.counters.inc(opcode == Opcode.P4_READ ? P4HookCounter.DEVCMD_READ
                    : opcode == Opcode.P4_TABLE_WRITE ? P4HookCounter.DEVCMD_TABLE_WRITE : P4HookCounter.DEVCMD_CONTROL);
        }
        return st;
    }

    private int read(MemorySegment cmd, MemorySegment comp, MemorySegment data) {
        int what = LE.u8(cmd, WHAT);
        long first = Integer.toUnsignedLong(LE.u32(cmd, ARG));
        switch (what) {
            case READ_INFO -> {
                data.asSlice(0, INFO_SIZE).fill((byte) 0);
                LE.put32(data, INFO_VERSION, 1);
                LE.put8(data, INFO_SCOPE, hooks.scope.ordinal());
                LE.put8(data, INFO_WQE, hooks.forWqes() ? 1 : 0);
                LE.put32(data, INFO_TABLES, hooks.engine.tableNames().size());
                LE.put32(data, INFO_ACTIONS, hooks.engine.actionCount());
                LE.put32(data, INFO_REGISTERS, hooks.engine.registerCount());
                LE.put32(data, INFO_COUNTER_ARRAYS, hooks.engine.counterArrayCount());
                putName(data, INFO_NAME, INFO_NAME_SIZE, hooks.engine.name());
                LE.put32(comp, COMP_COUNT, 1);
                LE.put32(comp, COMP_TOTAL, 1);
                return Status.SUCCESS;
            }
            case READ_COUNTERS -> {
                CounterRegistry r = new CounterRegistry();
                hooks.registerCounters(r);
                List<CounterRegistry.Sample> all = r.snapshot().stream().filter(x -> x.labels().isEmpty()).toList();
                int n = 0;
                for (long i = first; i < all.size() && (n + 1) * COUNTER_ENTRY <= Bar0.DEVCMD_DATA_SIZE; i++, n++) {
                    CounterRegistry.Sample c = all.get((int) i);
                    putName(data, (long) n * COUNTER_ENTRY, COUNTER_NAME_SIZE, c.name());
                    LE.put64(data, (long) n * COUNTER_ENTRY + COUNTER_NAME_SIZE, c.value());
                }
                LE.put32(comp, COMP_COUNT, n);
                LE.put32(comp, COMP_TOTAL, all.size());
                return Status.SUCCESS;
            }
            case READ_TABLES -> {
                List<String> names = hooks.engine.tableNames();
                long[] hits = hooks.engine.tableHits();
                long[] misses = hooks.engine.tableMisses();
                int n = 0;
                for (long i = first; i < names.size() && (n + 1) * TABLE_ENTRY <= Bar0.DEVCMD_DATA_SIZE; i++, n++) {
                    long at = (long) n * TABLE_ENTRY;
                    putName(data, at, TABLE_NAME_SIZE, names.get((int) i));
                    LE.put64(data, at + TABLE_NAME_SIZE, hits[(int) i]);
                    LE.put64(data, at + TABLE_NAME_SIZE + 8, misses[(int) i]);
                }
                LE.put32(comp, COMP_COUNT, n);
                LE.put32(comp, COMP_TOTAL, names.size());
                return Status.SUCCESS;
            }
            default -> {
                return Status.EINVAL;
            }
        }
    }

    /** The runtime commands in the data area ({@code cmd} ARG bytes of text); table commands only for 71. */
    private int commands(MemorySegment cmd, MemorySegment comp, MemorySegment data, boolean tablesOnly) {
        String text = text(data, Integer.toUnsignedLong(LE.u32(cmd, ARG)));
        if (text == null) {
            return Status.EINVAL;
        }
        java.util.List<String> printed;
        try {
            printed = hooks.engine.applyEntries(text, "devcmd", tablesOnly);
        } catch (P4EntryError e) {
            LE.put32(comp, COMP_TOTAL, e.line());
            return Status.EINVAL;
        } catch (RuntimeException e) {
            return Status.EINVAL; // whatever a malformed line makes the parser throw, the guest gets EINVAL
        }
        LE.put32(comp, COMP_COUNT, (int) text.lines().filter(l -> !l.isBlank() && !l.strip().startsWith("#")).count());
        if (!printed.isEmpty()) {
            // What the reads print, a line each, into the data area (cut at its end); total: its whole length.
            byte[] out = (String.join("\n", printed) + "\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            int n = Math.min(out.length, Bar0.DEVCMD_DATA_SIZE);
            data.asSlice(0, Bar0.DEVCMD_DATA_SIZE).fill((byte) 0);
            MemorySegment.copy(MemorySegment.ofArray(out), 0, data, 0, n);
            LE.put32(comp, COMP_TOTAL, out.length);
        }
        return Status.SUCCESS;
    }

    /**
     * As many waiting digests as fit the data area, oldest first, taken (a second read gets the next ones); count is
     * how many, total how many were waiting.
     */
    private int takeDigests(MemorySegment comp, MemorySegment data) {
        int waiting = hooks.digests.size();
        int n = 0;
        while (!hooks.digests.isEmpty() && (n + 1) * DIGEST_ENTRY <= Bar0.DEVCMD_DATA_SIZE) {
            ernic.p4.P4Engine.Digest d = hooks.digests.poll();
            long at = (long) n * DIGEST_ENTRY;
            data.asSlice(at, DIGEST_ENTRY).fill((byte) 0);
            putName(data, at, DIGEST_NAME_SIZE, d.name());
            LE.put32(data, at + DIGEST_FIELDS, d.values().size());
            for (int i = 0; i < Math.min(DIGEST_VALUES, d.values().size()); i++) {
                byte[] be = d.values().get(i).toByteArray(); // big-endian, maybe with a sign byte
                long v = at + DIGEST_VALUE_AT + (long) i * DIGEST_VALUE_SIZE;
                for (int k = 0; k < DIGEST_VALUE_SIZE && k < be.length; k++) {
                    data.set(ValueLayout.JAVA_BYTE, v + k, be[be.length - 1 - k]);
                }
            }
            n++;
        }
        LE.put32(comp, COMP_COUNT, n);
        LE.put32(comp, COMP_TOTAL, waiting);
        return Status.SUCCESS;
    }

    private int control(MemorySegment cmd, MemorySegment comp, MemorySegment data) {
        switch (LE.u8(cmd, WHAT)) {
            case CONTROL_COMMANDS -> {
                return commands(cmd, comp, data, false);
            }
            case CONTROL_RESET_COUNTERS -> {
                hooks.resetCounters();
                return Status.SUCCESS;
            }
            case CONTROL_READ_REGISTER -> {
                String name = text(data, Integer.toUnsignedLong(LE.u32(cmd, ARG)));
                if (name == null || name.isBlank()) {
                    return Status.EINVAL;
                }
                try {
                    LE.put64(comp, COMP_VALUE, hooks.engine.readRegister(name.strip(), LE.u32(cmd, ARG2)));
                } catch (IllegalArgumentException e) {
                    return Status.EINVAL;
                }
                return Status.SUCCESS;
            }
            default -> {
                return Status.EINVAL;
            }
        }
    }

    /** {@code length} bytes of printable ASCII (and tabs, newlines) from the data area, or null. */
    private static String text(MemorySegment data, long length) {
        if (length == 0 || length > Bar0.DEVCMD_DATA_SIZE || length > data.byteSize()) {
            return null;
        }
        byte[] b = data.asSlice(0, length).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        for (byte x : b) {
            if (x != '\n' && x != '\t' && x != '\r' && (x < 0x20 || x > 0x7e)) {
                return null;
            }
        }
        return new String(b, StandardCharsets.US_ASCII).replace("\r", "");
    }

    /** {@code name} in {@code size} bytes, NUL-padded (cut to size - 1 bytes so a NUL always ends it). */
    private static void putName(MemorySegment data, long at, int size, String name) {
        data.asSlice(at, size).fill((byte) 0);
        byte[] b = name.getBytes(StandardCharsets.UTF_8);
        MemorySegment.copy(MemorySegment.ofArray(b), 0, data, at, Math.min(b.length, size - 1));
    }
}
