package ernic.p4;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Classic libpcap files of Ethernet frames (link type 1), microsecond or nanosecond, either byte order. */
public final class Pcap {
    /** One captured frame and its time stamp (seconds, and micro- or nanoseconds as the file has them). */
    public record Frame(long seconds, long fraction, byte[] data) {
    }

    private static final int MAGIC_US = 0xa1b2c3d4;
    private static final int MAGIC_NS = 0xa1b23c4d;
    private static final int LINKTYPE_ETHERNET = 1;

    private Pcap() {
    }

    /** True when the file's time stamps count nanoseconds (its magic says so), false for microseconds. */
    public static boolean nanosecond(Path file) throws IOException {
        byte[] h = new byte[4];
        try (var in = Files.newInputStream(file)) {
            if (in.readNBytes(h, 0, 4) < 4) {
                return false;
            }
        }
        int le = ByteBuffer.wrap(h).order(ByteOrder.LITTLE_ENDIAN).getInt();
        int be = ByteBuffer.wrap(h).order(ByteOrder.BIG_ENDIAN).getInt();
        return le == MAGIC_NS || be == MAGIC_NS;
    }

    public static List<Frame> read(Path file) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        if (b.remaining() < 24) {
            throw new IOException(file + ": not a pcap file (shorter than its header)");
        }
        int magic = b.getInt(0);
        if (magic != MAGIC_US && magic != MAGIC_NS) {
            b.order(ByteOrder.BIG_ENDIAN);
            magic = b.getInt(0);
            if (magic != MAGIC_US && magic != MAGIC_NS) {
                throw new IOException(file + ": not a classic pcap file (pcapng is not read; convert it with"
                        + " editcap -F pcap)");
            }
        }
        int link = b.getInt(20);
        if (link != LINKTYPE_ETHERNET) {
            throw new IOException(file + ": link type " + link + ", not Ethernet (1)");
        }
        b.position(24);
        List<Frame> out = new ArrayList<>();
        while (b.remaining() > 0) {
            if (b.remaining() < 16) {
                throw new IOException(file + ": truncated record header after " + out.size() + " frames");
            }
            long sec = Integer.toUnsignedLong(b.getInt());
            long frac = Integer.toUnsignedLong(b.getInt());
            int incl = b.getInt();
            b.getInt();
            if (incl < 0 || incl > b.remaining()) {
                throw new IOException(file + ": truncated frame " + (out.size() + 1));
            }
            byte[] d = new byte[incl];
            b.get(d);
            out.add(new Frame(sec, frac, d));
        }
        return out;
    }

    /** Writes a microsecond, little-endian classic pcap file. */
    public static void write(Path file, List<Frame> frames) throws IOException {
        int size = 24;
        for (Frame f : frames) {
            size += 16 + f.data().length;
        }
        ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(MAGIC_US).putShort((short) 2).putShort((short) 4).putInt(0).putInt(0).putInt(65535)
                .putInt(LINKTYPE_ETHERNET);
        for (Frame f : frames) {
            b.putInt((int) f.seconds()).putInt((int) f.fraction()).putInt(f.data().length).putInt(f.data().length);
            b.put(f.data());
        }
        Files.write(file, b.array());
    }
}
