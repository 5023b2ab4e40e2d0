package ernic.server;

import ernic.ionic.IonicDevice;
import ernic.mesh.MeshSpec;

import java.io.IOException;

/**
 * What stands behind the device's RDMA side ({@code --backend}); {@link Backends} parses the forms. One value
 * per server: the mesh and an in-process target are separate words, and none combines with another. An in-process
 * target's backend is a class of its own ({@link NvmeofBackend}, {@link S3Backend}): a new target is that class and
 * one entry in {@link Backends}.
 */
public interface Backend {
    /** The form as given (for messages). */
    String form();

    /** The mesh this server joins, or null. */
    default MeshSpec mesh() {
        return null;
    }

    /** Whether the form needs the ionic device (the sample device has no RDMA side). */
    default boolean needsIonic() {
        return true;
    }

    /** Sets the device up before it is served (not yet on the device loop: nothing runs there yet). */
    default void prepare(IonicDevice device) {
    }

    /**
     * Starts what stands behind the device once it is served (an in-process peer attached to it). Returns what the
     * server closes at its stop, on the device loop after the device is detached; a failure to start is the
     * server's start-up error.
     */
    default AutoCloseable start(BackendContext context) throws IOException {
        return () -> { };
    }

    /** The default: one VM, every QP's peer in the same guest, resources in the device's tables. */
    record Loopback() implements Backend {
        @Override
        public String form() {
            return "loopback";
        }

        @Override
        public boolean needsIonic() {
            return false;
        }
    }

    /**
     * The seed's stub backend, for PCI enumeration and driver bring-up: the RDMA resource commands succeed
     * and create nothing, counted under {@code rdma.stub.}; see {@link ernic.ionic.rdma.RdmaLif#stubResources}.
     */
    record None() implements Backend {
        @Override
        public String form() {
            return "none";
        }

        @Override
        public void prepare(IonicDevice device) {
            device.rdma().stubResources();
        }
    }

    /** A mesh of servers, one per VM: {@code tcp:manager:listen:PORT} or {@code tcp:worker:HOST:PORT}. */
    record Mesh(MeshSpec spec, String form) implements Backend {
        @Override
        public MeshSpec mesh() {
            return spec;
        }
    }
}
