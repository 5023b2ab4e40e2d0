package ernic.ionic.p4hook;

import ernic.ionic.eth.FrameFilter;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the Ethernet hook hands on: the device's own frame when the program left it as it came (no copy), else
 * the program's output in the hook's native buffer; and nothing allocated per frame either way. l2_fwd and its
 * entries are the real-guest test's: 02:00:00:ee:00:0b goes to the TAP unchanged, 02:00:00:ee:00:0f is
 * rewritten to 02:00:00:ee:00:0b and goes to the TAP.
 */
class EthernetHookOutputTest {
    static final Path PROGRAMS = Path.of("..", "integration-tests", "src", "test", "resources", "p4");
    static final long OTHER_GUEST = 0x02_00_00_ee_00_0bL, VIRTUAL = 0x02_00_00_ee_00_0fL;
    final Arena arena = Arena.ofAuto();

    static FrameFilter l2fwd() throws IOException {
        return P4Hooks.load(Files.readString(PROGRAMS.resolve("l2_fwd.json")), "l2_fwd.json",
                Files.readString(PROGRAMS.resolve("l2_fwd.entries")), "l2_fwd.entries", P4Scope.NONE).ethernet();
    }

    static byte[] frame(long dst, int size) {
        byte[] f = new byte[size];
        for (int i = 0; i < 6; i++) {
            f[i] = (byte) (dst >>> (40 - 8 * i));
            f[6 + i] = (byte) (0x02_00_00_ee_00_0aL >>> (40 - 8 * i));
        }
        f[12] = 0x08;
        for (int i = 14; i < size; i++) {
            f[i] = (byte) i;
        }
        return f;
    }

    MemorySegment nativeCopy(byte[] f) {
        MemorySegment s = arena.allocate(f.length);
        s.copyFrom(MemorySegment.ofArray(f));
        return s;
    }

    static byte[] bytes(MemorySegment s) {
        return s.toArray(ValueLayout.JAVA_BYTE);
    }

    @Test
    void anUnchangedFrameGoesOnInTheDevicesOwnBuffer() throws IOException {
        FrameFilter hook = l2fwd();
        MemorySegment in = nativeCopy(frame(OTHER_GUEST, 1514));
        assertThat(hook.filter(in, FrameFilter.GUEST)).isEqualTo(FrameFilter.TAP);
        assertThat(hook.output()).as("the input itself, not a copy").isSameAs(in);
    }

    @Test
    void aRewrittenFrameGoesOnFromTheHooksBufferWithItsPayload() throws IOException {
        FrameFilter hook = l2fwd();
        byte[] f = frame(VIRTUAL, 1514);
        MemorySegment in = nativeCopy(f);
        assertThat(hook.filter(in, FrameFilter.GUEST)).isEqualTo(FrameFilter.TAP);
        assertThat(hook.output()).isNotSameAs(in);
        assertThat(hook.output().isNative()).isTrue();
        assertThat(bytes(hook.output())).isEqualTo(frame(OTHER_GUEST, 1514));
        assertThat(bytes(in)).as("the device's frame is not written").isEqualTo(f);
    }

    @Test
    void aFrameOnTheHeapGoesOnAsANativeCopy() throws IOException {
        FrameFilter hook = l2fwd();
        byte[] f = frame(OTHER_GUEST, 64);
        assertThat(hook.filter(MemorySegment.ofArray(f), FrameFilter.GUEST)).isEqualTo(FrameFilter.TAP);
        assertThat(hook.output().isNative()).isTrue();
        assertThat(bytes(hook.output())).isEqualTo(f);
    }

    @Test
    void framesAllocateNothing() throws IOException {
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        FrameFilter hook = l2fwd();
        MemorySegment[] frames = {nativeCopy(frame(OTHER_GUEST, 1514)), nativeCopy(frame(VIRTUAL, 1514)),
                nativeCopy(frame(OTHER_GUEST, 64)), nativeCopy(frame(VIRTUAL, 64)),
                nativeCopy(frame(0x02_00_00_ee_00_0cL, 100))};
        long before = 0;
        for (int round = 0; round < 2; round++) {
            if (round == 1) {
                before = threads.getCurrentThreadAllocatedBytes();
            }
            for (int i = 0; i < 20_000; i++) {
                if (hook.filter(frames[i % frames.length], FrameFilter.GUEST) == FrameFilter.GUEST) {
                    throw new AssertionError("frame " + i + " sent to the guest");
                }
            }
        }
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertThat(allocated).as("bytes allocated by 20000 frames through l2_fwd").isLessThan(20_000);
    }
}
