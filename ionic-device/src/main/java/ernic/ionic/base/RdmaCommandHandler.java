package ernic.ionic.base;

import java.lang.foreign.MemorySegment;

/** Handles the RDMA bootstrap device commands 50-53 (ionic_if.h), issued on the device-command page or the admin queue. */
@FunctionalInterface
public interface RdmaCommandHandler {
    /** Returns an ionic status; {@code data} is null on the admin queue. */
    int execute(int opcode, MemorySegment cmd, MemorySegment comp, MemorySegment data);
}
