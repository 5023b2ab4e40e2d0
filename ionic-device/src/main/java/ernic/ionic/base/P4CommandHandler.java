package ernic.ionic.base;

import java.lang.foreign.MemorySegment;

/** Handles the P4 engine's device commands 70-72 (docs/p4.md), issued on the device-command page. */
@FunctionalInterface
public interface P4CommandHandler {
    /** Returns an ionic status; {@code data} is the devcmd data area (1912 bytes). */
    int execute(int opcode, MemorySegment cmd, MemorySegment comp, MemorySegment data);
}
