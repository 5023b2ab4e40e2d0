package ernic.vfiouser.server;

import java.util.List;
import ernic.vfiouser.wire.Messages.SparseArea;

/**
 * A BAR the device implements. Accesses the client sends as REGION_READ / REGION_WRITE go to
 * {@code handler}. A region that offers {@code mmapFd} lets the client map the {@code sparseAreas}
 * of it directly (then QEMU sends no posted writes); {@code mmapFd} &lt; 0 means no mmap.
 */
public record Region(int index, long size, boolean readable, boolean writable, RegionHandler handler,
                     int mmapFd, long mmapOffset, List<SparseArea> sparseAreas) {
    public Region {
        if (index < 0 || index > 5) {
            throw new IllegalArgumentException("BAR index " + index);
        }
        sparseAreas = List.copyOf(sparseAreas);
    }

    /** A read-write region with no mmap. */
    public static Region of(int index, long size, RegionHandler handler) {
        return new Region(index, size, true, true, handler, -1, 0, List.of());
    }
}
