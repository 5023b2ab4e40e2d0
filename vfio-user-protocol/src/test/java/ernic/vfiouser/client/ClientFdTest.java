package ernic.vfiouser.client;

import ernic.vfiouser.sys.LibC;
import ernic.vfiouser.sys.ScmRights;
import ernic.vfiouser.testing.Leaks;
import ernic.vfiouser.testing.TestSockets;
import ernic.vfiouser.wire.Command;
import ernic.vfiouser.wire.Header;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.assertj.core.api.Assertions.assertThat;
import static ernic.common.Endian.LE;

/** The client side of the shared fd rule, against a hand-made server on a raw socket. */
class ClientFdTest {

    @Test
    void fdsOnACommandFromTheServerAreClosedAndTheCommandAnswered() throws Exception {
        String path = TestSockets.newPath("client-fd");
        int listener = LibC.socketUnixStream(true);
        try (Arena arena = Arena.ofConfined()) {
            LibC.bindUnix(listener, path);
            LibC.listen(listener, 1);
            try (VfioUserClient client = VfioUserClient.connect(path)) {
                int server = LibC.accept(listener);
                assertThat(server).isPositive();
                Leaks baseline = Leaks.baseline();
                ScmRights scm = new ScmRights(arena);
                MemorySegment m = arena.allocate(64, 8);
                // DMA_READ #9 of 8 bytes at 0, with an eventfd it does not take.
                m.set(LE.u16(), Header.OFF_MSG_ID, (short) 9);
                m.set(LE.u16(), Header.OFF_COMMAND, (short) Command.DMA_READ.code);
                LE.put32(m, Header.OFF_SIZE, Header.SIZE + 16);
                LE.put32(m, Header.OFF_FLAGS, Header.TYPE_COMMAND);
                LE.put32(m, Header.OFF_ERRNO, 0);
                LE.put64(m, Header.SIZE, 0);
                LE.put64(m, Header.SIZE + 8, 8);
                int fd = LibC.eventfd(true);
                assertThat(scm.send(server, m.address(), Header.SIZE + 16, new int[] {fd}, LibC.MSG_NOSIGNAL))
                        .isEqualTo(Header.SIZE + 16);
                LibC.close(fd);
                assertThat(LibC.pollIn(server, 5000)).as("the client answers").isTrue();
                assertThat(scm.receive(server, m.address(), 64, LibC.MSG_DONTWAIT)).isEqualTo(Header.SIZE);
                assertThat(scm.takeReceived()).isNull();
                assertThat(Short.toUnsignedInt(m.get(LE.u16(), Header.OFF_MSG_ID))).isEqualTo(9);
                assertThat(LE.u32(m, Header.OFF_FLAGS)).isEqualTo(Header.TYPE_REPLY | Header.FLAG_ERROR);
                assertThat(LE.u32(m, Header.OFF_ERRNO)).as("no guest RAM mapped").isEqualTo(LibC.EFAULT);
                baseline.assertBackToBaseline(); // the client's copy of the eventfd is closed
                LibC.close(server);
            }
        } finally {
            LibC.close(listener);
            LibC.unlink(path);
        }
    }
}
