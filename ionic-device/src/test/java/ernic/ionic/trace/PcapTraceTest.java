package ernic.ionic.trace;

import ernic.roce.IbOpcode;
import ernic.roce.RoceFrame;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** The pcap file's bytes, and frames the writer cannot take counted (the frames' own layout: RoceFrameTest). */
class PcapTraceTest {
    /** An RC SEND_ONLY from 10.0.0.1 to 10.0.0.2: 54 bytes of headers. */
    static RoceFrame helloFrame() {
        RoceFrame f = new RoceFrame();
        f.srcIp = 0x0a00_0001;
        f.dstIp = 0x0a00_0002;
        f.bth.opcode = IbOpcode.RC_SEND_ONLY.code;
        return f;
    }

    /** The pcap file: global header (LINKTYPE_ETHERNET), then one record per frame with its real length. */
    @Test
    void pcapFileHoldsTheRecords() throws Exception {
        Path file = Files.createTempFile("ernic-trace", ".pcap");
        PcapTrace t = PcapTrace.open(file);
        t.start(1_000_000_000L);
        RoceFrame f = helloFrame();
        byte[] b = t.reserve();
        int at = t.frameOffset();
        int h = f.headers(b, at, 5);
        System.arraycopy("hello".getBytes(StandardCharsets.US_ASCII), 0, b, at + h, 5);
        int captured = h + 5 + f.trailer(b, at, 5);
        t.commit(captured, f.frameLength(5), 1_000_500_000L);
        b = t.reserve();
        at = t.frameOffset();
        h = f.headers(b, at, 4096);
        t.commit(h, f.frameLength(4096), 1_001_000_000L); // cut: headers only
        t.flush();
        t.close();
        t.reclaim();
        assertThat(t.counters().get(TraceCounter.FRAMES_WRITTEN)).isEqualTo(2);
        assertThat(t.counters().get(TraceCounter.FRAMES_DROPPED)).isZero();
        assertThat(t.reserve()).as("closed: frames are dropped").isNull();
        assertThat(t.counters().get(TraceCounter.FRAMES_DROPPED)).isEqualTo(1);

        ByteBuffer p = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(p.remaining()).isEqualTo(24 + 16 + 66 + 16 + 54);
        assertThat(p.getInt()).isEqualTo(0xa1b2c3d4);
        assertThat(p.getShort()).isEqualTo((short) 2);
        assertThat(p.getShort()).isEqualTo((short) 4);
        p.getInt();
        p.getInt();
        assertThat(p.getInt()).isEqualTo(PcapTrace.SNAPLEN);
        assertThat(p.getInt()).isEqualTo(PcapTrace.LINKTYPE_ETHERNET);
        long sec1 = p.getInt() & 0xffffffffL, usec1 = p.getInt();
        assertThat(p.getInt()).isEqualTo(66);
        assertThat(p.getInt()).isEqualTo(66);
        p.position(p.position() + 66);
        long sec2 = p.getInt() & 0xffffffffL, usec2 = p.getInt();
        assertThat(p.getInt()).isEqualTo(54);
        assertThat(p.getInt()).isEqualTo(54 + 4096 + 4);
        assertThat((sec2 * 1_000_000 + usec2) - (sec1 * 1_000_000 + usec1)).isEqualTo(500);
        Files.delete(file);
    }

    /** A burst faster than the writer: every frame is either in the file or counted as dropped, none lost silently. */
    @Test
    void framesThatFindNoBufferAreCounted() throws Exception {
        Path file = Files.createTempFile("ernic-trace", ".pcap");
        PcapTrace t = PcapTrace.open(file, 2, 2 * (PcapTrace.RECORD_HEADER + PcapTrace.SNAPLEN));
        t.start(0);
        RoceFrame f = helloFrame();
        int frames = 20_000;
        for (int i = 0; i < frames; i++) {
            byte[] b = t.reserve();
            if (b != null) {
                int h = f.headers(b, t.frameOffset(), 0);
                t.commit(h + f.trailer(b, t.frameOffset(), 0), f.frameLength(0), i);
            }
        }
        t.flush();
        t.close();
        t.reclaim();
        long written = t.counters().get(TraceCounter.FRAMES_WRITTEN), dropped = t.counters().get(TraceCounter.FRAMES_DROPPED);
        assertThat(written + dropped).isEqualTo(frames);
        assertThat(Files.size(file)).isEqualTo(PcapTrace.FILE_HEADER + written * (PcapTrace.RECORD_HEADER + 58L));
        Files.delete(file);
    }
}
