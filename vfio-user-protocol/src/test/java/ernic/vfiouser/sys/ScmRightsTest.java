package ernic.vfiouser.sys;

import ernic.vfiouser.testing.Leaks;
import ernic.vfiouser.testing.TestSockets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The one SCM_RIGHTS codec, over a real connected UNIX socket pair. */
class ScmRightsTest {
    final Arena arena = Arena.ofConfined();
    final MemorySegment bytes = arena.allocate(64, 8);
    Leaks baseline;
    int listener, a, b;

    @BeforeEach
    void connect() throws Exception {
        baseline = Leaks.baseline();
        String path = TestSockets.newPath("scm");
        listener = LibC.socketUnixStream(true);
        LibC.bindUnix(listener, path);
        LibC.listen(listener, 1);
        a = LibC.socketUnixStream(false);
        assertThat(LibC.connectUnix(a, path)).isZero();
        b = LibC.accept(listener);
        assertThat(b).isPositive();
        LibC.unlink(path);
    }

    @AfterEach
    void close() throws Exception {
        LibC.close(a);
        LibC.close(b);
        LibC.close(listener);
        arena.close();
        baseline.assertBackToBaseline();
    }

    int[] eventfds(int n) throws ErrnoException {
        int[] fds = new int[n];
        for (int i = 0; i < n; i++) {
            fds[i] = LibC.eventfd(true);
        }
        return fds;
    }

    @Test
    void fdsTravelWithTheirBytes() throws Exception {
        ScmRights out = new ScmRights(arena), in = new ScmRights(arena);
        int[] sent = eventfds(3);
        bytes.fill((byte) 7);
        assertThat(out.send(a, bytes.address(), 16, sent, LibC.MSG_NOSIGNAL)).isEqualTo(16);
        ScmRights.closeAll(sent); // the kernel passed duplicates: ours are ours to close
        assertThat(in.receive(b, bytes.address() + 32, 32, LibC.MSG_DONTWAIT)).isEqualTo(16);
        int[] got = in.takeReceived();
        assertThat(got).hasSize(3);
        assertThat(java.util.Arrays.stream(got)).allMatch(LibC::isOpen);
        assertThat(in.takeReceived()).as("taken once").isNull();
        assertThat(bytes.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 32)).isEqualTo((byte) 7);
        ScmRights.closeAll(got);
    }

    @Test
    void aReadWithoutFdsHasNone() {
        ScmRights out = new ScmRights(arena), in = new ScmRights(arena);
        assertThat(out.send(a, bytes.address(), 8, new int[0], LibC.MSG_NOSIGNAL)).isEqualTo(8);
        assertThat(in.receive(b, bytes.address(), 64, LibC.MSG_DONTWAIT)).isEqualTo(8);
        assertThat(in.takeReceived()).isNull();
        assertThat(in.receive(b, bytes.address(), 64, LibC.MSG_DONTWAIT)).isEqualTo(-LibC.EAGAIN);
    }

    @Test
    void truncatedControlDataIsRefusedAndItsFdsAreClosed() throws Exception {
        ScmRights out = new ScmRights(arena), in = new ScmRights(arena, 2);
        int[] sent = eventfds(3);
        assertThat(out.send(a, bytes.address(), 16, sent, LibC.MSG_NOSIGNAL)).isEqualTo(16);
        ScmRights.closeAll(sent);
        // Room for 2 fds, 3 came: MSG_CTRUNC. The 2 the kernel installed are closed by the codec.
        assertThat(in.receive(b, bytes.address(), 64, LibC.MSG_DONTWAIT)).isEqualTo(-LibC.EMSGSIZE);
        assertThat(in.takeReceived()).isNull();
    }

    @Test
    void tooManyFdsAreNotSent() throws Exception {
        ScmRights out = new ScmRights(arena, 2);
        int[] fds = eventfds(3);
        try {
            assertThatThrownBy(() -> out.send(a, bytes.address(), 16, fds, LibC.MSG_NOSIGNAL))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("3 fds");
            assertThat(LibC.pollIn(b, 0)).as("nothing was sent").isFalse();
        } finally {
            ScmRights.closeAll(fds);
        }
        assertThatThrownBy(() -> new ScmRights(arena, ScmRights.MAX_FDS + 1))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void fdsNobodyTookAreClosedByTheNextReceive() throws Exception {
        ScmRights out = new ScmRights(arena), in = new ScmRights(arena);
        int[] sent = eventfds(1);
        out.send(a, bytes.address(), 8, sent, LibC.MSG_NOSIGNAL);
        ScmRights.closeAll(sent);
        assertThat(in.receive(b, bytes.address(), 8, LibC.MSG_DONTWAIT)).isEqualTo(8);
        // Not taken: the next receive closes them (the leak check in close() says so).
        assertThat(in.receive(b, bytes.address(), 8, LibC.MSG_DONTWAIT)).isEqualTo(-LibC.EAGAIN);
    }

    @Test
    void fdsAtEndOfFileAreClosed() throws Exception {
        ScmRights in = new ScmRights(arena);
        LibC.close(a);
        a = -1;
        assertThat(in.receive(b, bytes.address(), 8, LibC.MSG_DONTWAIT)).isZero();
        assertThat(in.takeReceived()).isNull();
    }
}
