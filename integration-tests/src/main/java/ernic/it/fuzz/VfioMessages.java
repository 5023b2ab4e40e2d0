package ernic.it.fuzz;

import ernic.vfiouser.client.VfioUserClient;
import ernic.vfiouser.sys.ErrnoException;
import ernic.vfiouser.sys.LibC;
import ernic.vfiouser.wire.Command;
import ernic.vfiouser.wire.Header;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Generates vfio-user messages as a hostile client writes them: valid ones with mutated fields, random ones,
 * framing attacks (truncated, undersized, oversized, lying about their size), with fds of every kind attached.
 * Layouts are the vfio-user spec's (docs/interop/vfio-user.rst), written here by hand so that any field can be
 * wrong.
 */
final class VfioMessages {
    /** The guest RAM a connection maps first: where devcmd and queue addresses point. */
    static final long RAM_IOVA = 0x1000_0000L, RAM_SIZE = 2L << 20;
    static final int BAR0 = 0, BAR2 = 2, CONFIG = 7;
    /** BAR0: devcmd doorbell, done, command (64 bytes), completion, data (ionic_if.h's ionic_dev_cmd_regs). */
    static final int DEVCMD_DOORBELL = 0x800, DEVCMD_CMD = 0x808, DEVCMD_DATA = 0xc00;
    static final int MAX_XFER = 1 << 20;

    /** One message to send: its bytes, the fds to attach, and what the client does after it. */
    static final class Msg {
        final ByteBuffer b;
        final List<Integer> fds = new ArrayList<>();
        final StringBuilder what = new StringBuilder();
        /** The stream is no longer framed as the server sees it (truncated, a lying size): close after this. */
        boolean closeAfter;

        Msg(ByteBuffer buf) {
            this.b = buf.clear().order(ByteOrder.LITTLE_ENDIAN);
        }

        int[] fdArray() {
            return fds.stream().mapToInt(Integer::intValue).toArray();
        }

        int length() {
            return b.position();
        }
    }

    private final ByteBuffer buf = ByteBuffer.allocateDirect(MAX_XFER + 4096).order(ByteOrder.LITTLE_ENDIAN);
    /** A devcmd's bytes, sent before its doorbell (which is built in {@link #buf}). */
    private final ByteBuffer small = ByteBuffer.allocateDirect(256).order(ByteOrder.LITTLE_ENDIAN);
    private static final byte[] VERSION_JSON = (VfioUserClient.QEMU_CAPABILITIES + "\0").getBytes(StandardCharsets.UTF_8);

    ByteBuffer buffer() {
        return buf;
    }

    /** Starts message {@code cmd} with flags; the size is filled in by {@link #end}. */
    private static void header(Msg m, int id, int cmd, int flags) {
        m.b.putShort((short) id).putShort((short) cmd).putInt(0).putInt(flags).putInt(0);
    }

    private static void end(Msg m) {
        m.b.putInt(Header.OFF_SIZE, m.b.position());
    }

    // ---- the prologue of a connection ------------------------------------------------------------------

    /** VERSION (valid, or now and then wrong), for a new connection. */
    Msg version(SplittableRandom r) {
        Msg m = new Msg(buf);
        header(m, r.nextInt(0x10000), Command.VERSION.code, 0);
        int kind = r.nextInt(40);
        m.b.putShort((short) (kind == 0 ? 1 : 0)).putShort((short) (kind == 1 ? r.nextInt(0x10000) : 0));
        if (kind == 2) {
            byte[] junk = new byte[r.nextInt(200)];
            r.nextBytes(junk);
            m.b.put(junk);
        } else if (kind == 3) {
            m.b.put("{\"capabilities\":{\"max_msg_fds\":-1,\"max_data_xfer_size\":1e99}}\0"
                    .getBytes(StandardCharsets.UTF_8));
        } else if (kind != 4) {
            m.b.put(VERSION_JSON);
        }
        end(m);
        m.what.append("VERSION").append(kind <= 4 ? " (bad kind " + kind + ")" : "");
        return m;
    }

    /** DMA_MAP of the guest RAM (a memfd). */
    Msg mapRam(SplittableRandom r) throws ErrnoException {
        Msg m = new Msg(buf);
        header(m, r.nextInt(0x10000), Command.DMA_MAP.code, 0);
        m.b.putInt(32).putInt(3).putLong(0).putLong(RAM_IOVA).putLong(RAM_SIZE);
        end(m);
        m.fds.add(LibC.memfd("fuzz-ram", RAM_SIZE));
        m.what.append("DMA_MAP guest RAM");
        return m;
    }

    /** Config space: memory space and bus mastering on (PCI command register). */
    Msg busMaster(SplittableRandom r) {
        return regionWrite(r.nextInt(0x10000), CONFIG, 4, 2, 0x6, "config: bus master on");
    }

    /** SET_IRQS of MSI-X vectors 0..n-1 with eventfds. */
    Msg msixEventfds(SplittableRandom r) throws ErrnoException {
        Msg m = new Msg(buf);
        int n = r.nextInt(1, 9);
        header(m, r.nextInt(0x10000), Command.DEVICE_SET_IRQS.code, 0);
        m.b.putInt(20).putInt(4 | 0x20).putInt(2).putInt(0).putInt(n); // DATA_EVENTFD | ACTION_TRIGGER, MSI-X
        end(m);
        for (int i = 0; i < n; i++) {
            m.fds.add(LibC.eventfd(true));
        }
        m.what.append("SET_IRQS MSI-X ").append(n).append(" eventfds");
        return m;
    }

    private Msg regionWrite(int id, int region, long offset, int count, long value, String what) {
        Msg m = new Msg(buf);
        header(m, id, Command.REGION_WRITE.code, 0);
        m.b.putLong(offset).putInt(region).putInt(count);
        for (int i = 0; i < count; i++) {
            m.b.put((byte) (value >>> (8 * (i & 7))));
        }
        end(m);
        m.what.append(what);
        return m;
    }

    /** A valid DEVICE_GET_INFO with message id {@code id}: the liveness probe. */
    Msg deviceInfo(int id) {
        Msg m = new Msg(buf);
        header(m, id, Command.DEVICE_GET_INFO.code, 0);
        m.b.putInt(16).putInt(0).putInt(0).putInt(0);
        end(m);
        m.what.append("DEVICE_GET_INFO (probe)");
        return m;
    }

    // ---- one fuzz message -------------------------------------------------------------------------------

    /** Input of the fuzz: one message (sometimes two: a devcmd and its doorbell), mutated or not. */
    List<Msg> next(SplittableRandom r) throws ErrnoException {
        List<Msg> out = new ArrayList<>(2);
        int id = r.nextInt(0x10000);
        int k = r.nextInt(100);
        Msg m;
        if (k < 18) {
            m = devcmd(r, id);
            if (r.nextInt(8) != 0) {
                mutate(r, m);
                out.add(m);
                m = regionWrite(r.nextInt(0x10000), BAR0, DEVCMD_DOORBELL, 4, r.nextInt(16) == 0 ? r.nextInt() : 1,
                        "devcmd doorbell");
            }
        } else if (k < 30) {
            m = regionWrite(id, BAR2, (long) r.nextInt(0, 64) * 4096 + r.nextInt(0, 512) * 8L, 8, r.nextLong(),
                    "BAR2 doorbell");
        } else if (k < 42) {
            m = regionAccess(r, id);
        } else if (k < 50) {
            m = dmaMap(r, id);
        } else if (k < 55) {
            m = dmaUnmap(r, id);
        } else if (k < 62) {
            m = setIrqs(r, id);
        } else if (k < 70) {
            m = info(r, id);
        } else if (k < 74) {
            m = writeMulti(r, id);
        } else if (k < 76) {
            m = new Msg(buf);
            header(m, id, Command.DEVICE_RESET.code, 0);
            end(m);
            m.what.append("DEVICE_RESET");
        } else if (k < 82) {
            m = otherCommand(r, id);
        } else if (k < 98 || r.nextInt(3) != 0) {
            m = random(r, id);
        } else {
            m = framing(r, id);
        }
        if (!m.closeAfter) {
            mutate(r, m);
        }
        if (r.nextInt(40) == 0) {
            int n = r.nextInt(60) == 0 ? r.nextInt(17, 40) : r.nextInt(1, 4);
            m.what.append(" +fds: ");
            for (int i = 0; i < n; i++) {
                m.fds.add(Fds.any(r, m.what));
            }
        }
        out.add(m);
        return out;
    }

    /** A device command: an opcode the device knows (or not) and 60 random bytes, RAM addresses here and there. */
    private Msg devcmd(SplittableRandom r, int id) {
        Msg m = new Msg(small);
        header(m, id, Command.REGION_WRITE.code, 0);
        m.b.putLong(DEVCMD_CMD).putInt(BAR0).putInt(64);
        int[] known = {0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 16, 17, 18, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30,
                31, 32, 33, 34, 35, 36, 40, 41, 42, 50, 51, 52, 53, 70, 71, 72};
        int op = r.nextInt(4) == 0 ? r.nextInt(256) : known[r.nextInt(known.length)];
        byte[] cmd = new byte[64];
        r.nextBytes(cmd);
        cmd[0] = (byte) op;
        ByteBuffer c = ByteBuffer.wrap(cmd).order(ByteOrder.LITTLE_ENDIAN);
        for (int at = 8; at < 64; at += 8) {
            if (r.nextInt(4) == 0) {
                c.putLong(at, RAM_IOVA + r.nextLong(RAM_SIZE) & ~63L);
            } else if (r.nextInt(4) == 0) {
                c.putLong(at, r.nextInt(32));
            }
        }
        m.b.put(cmd);
        end(m);
        m.what.append("devcmd opcode ").append(op);
        return m;
    }

    /** A region read or write: any region, offsets and counts at and past the edges. */
    private Msg regionAccess(SplittableRandom r, int id) {
        boolean write = r.nextBoolean();
        Msg m = new Msg(buf);
        header(m, id, write ? Command.REGION_WRITE.code : Command.REGION_READ.code, 0);
        int region = r.nextInt(6) == 0 ? r.nextInt(-1, 12) : new int[] {BAR0, BAR0, BAR2, CONFIG}[r.nextInt(4)];
        long offset = switch (r.nextInt(6)) {
            case 0 -> r.nextInt(0x10000);
            case 1 -> r.nextInt(0x1000) & ~3;
            case 2 -> r.nextInt(256);
            case 3 -> r.nextLong();
            case 4 -> (1L << r.nextInt(64)) - r.nextInt(9);
            default -> 0x2000 + r.nextInt(0x1000);
        };
        int count = switch (r.nextInt(8)) {
            case 0 -> 0;
            case 1 -> r.nextInt(1, 4097);
            case 2 -> r.nextInt(50) == 0 ? MAX_XFER + r.nextInt(-1, 2) : r.nextInt(1, 65536);
            default -> 1 << r.nextInt(4);
        };
        m.b.putLong(offset).putInt(region).putInt(count);
        if (write) {
            int data = r.nextInt(10) == 0 ? r.nextInt(0, Math.min(count + 9, MAX_XFER)) : count;
            data = Math.min(data, m.b.remaining() - 64);
            for (int i = 0; i < data; i++) {
                m.b.put((byte) r.nextInt());
            }
        } else if (r.nextInt(20) == 0) {
            m.b.putInt(r.nextInt()); // a read with data
        }
        end(m);
        m.what.append(write ? "REGION_WRITE " : "REGION_READ ").append(region).append(" @").append(Long.toHexString(offset))
                .append('+').append(Integer.toUnsignedString(count));
        return m;
    }

    private static long iova(SplittableRandom r) {
        return switch (r.nextInt(5)) {
            case 0 -> r.nextLong();
            case 1 -> RAM_IOVA + (r.nextLong(-4, 4) << 20);
            case 2 -> (long) r.nextInt(0, 1 << 20) << 12;
            case 3 -> -4096L * r.nextInt(1, 16);
            default -> 0x4000_0000L + ((long) r.nextInt(256) << 16);
        };
    }

    private static long size(SplittableRandom r) {
        return switch (r.nextInt(5)) {
            case 0 -> r.nextLong();
            case 1 -> 0;
            case 2 -> r.nextInt(1, 10000);
            default -> 4096L << r.nextInt(10);
        };
    }

    private Msg dmaMap(SplittableRandom r, int id) throws ErrnoException {
        Msg m = new Msg(buf);
        header(m, id, Command.DMA_MAP.code, 0);
        int flags = r.nextInt(8) == 0 ? r.nextInt() : r.nextInt(4);
        long offset = r.nextInt(4) == 0 ? size(r) : 0;
        long addr = iova(r), size = size(r);
        m.b.putInt(r.nextInt(16) == 0 ? r.nextInt(64) : 32).putInt(flags).putLong(offset).putLong(addr).putLong(size);
        end(m);
        m.what.append("DMA_MAP ").append(Long.toHexString(addr)).append('+').append(Long.toHexString(size))
                .append(" offset ").append(Long.toHexString(offset)).append(" flags ").append(flags).append(" fd: ");
        if (r.nextInt(5) == 0) {
            m.what.append("none");
        } else if (r.nextInt(3) == 0) {
            long fdSize = r.nextInt(3) == 0 ? r.nextInt(1, 1 << 16) : Math.max(4096, Math.min(size, 4L << 20));
            m.fds.add(LibC.memfd("fuzz-map", fdSize));
            m.what.append("memfd(").append(fdSize).append(')');
        } else {
            m.fds.add(Fds.any(r, m.what));
        }
        return m;
    }

    private Msg dmaUnmap(SplittableRandom r, int id) {
        Msg m = new Msg(buf);
        header(m, id, Command.DMA_UNMAP.code, 0);
        int flags = switch (r.nextInt(6)) {
            case 0 -> 2; // VFIO_DMA_UNMAP_FLAG_ALL
            case 1 -> r.nextInt();
            default -> 0;
        };
        long addr = iova(r), size = size(r);
        if (flags == 2 && r.nextBoolean()) {
            addr = 0;
            size = 0;
        }
        m.b.putInt(r.nextInt(16) == 0 ? r.nextInt(64) : 24).putInt(flags).putLong(addr).putLong(size);
        end(m);
        m.what.append("DMA_UNMAP ").append(Long.toHexString(addr)).append('+').append(Long.toHexString(size))
                .append(" flags ").append(flags);
        return m;
    }

    private Msg setIrqs(SplittableRandom r, int id) throws ErrnoException {
        Msg m = new Msg(buf);
        header(m, id, Command.DEVICE_SET_IRQS.code, 0);
        int data = new int[] {1, 2, 4, 1 << r.nextInt(8)}[r.nextInt(4)];
        int action = new int[] {8, 16, 32, 1 << r.nextInt(8)}[r.nextInt(4)];
        int index = r.nextInt(4) == 0 ? r.nextInt(-1, 8) : 2;
        int start = r.nextInt(4) == 0 ? r.nextInt() : r.nextInt(0, 70);
        int count = r.nextInt(4) == 0 ? r.nextInt() : r.nextInt(0, 20);
        int nfds = data == 4 && r.nextInt(4) != 0 ? Math.max(0, Math.min(count, 16)) : r.nextInt(3);
        m.b.putInt(20).putInt(data | action).putInt(index).putInt(start).putInt(count);
        if (data == 2) {
            int n = r.nextInt(4) == 0 ? r.nextInt(0, 100) : Math.max(0, Math.min(count, 64));
            for (int i = 0; i < n; i++) {
                m.b.put((byte) r.nextInt(3));
            }
        }
        m.b.putInt(Header.SIZE, r.nextInt(16) == 0 ? r.nextInt(200) : m.b.position() - Header.SIZE);
        end(m);
        m.what.append("SET_IRQS index ").append(index).append(" flags ").append(Integer.toHexString(data | action))
                .append(" start ").append(start).append(" count ").append(count).append(" fds: ");
        for (int i = 0; i < nfds; i++) {
            if (r.nextInt(4) == 0) {
                m.fds.add(Fds.any(r, m.what));
            } else {
                m.fds.add(LibC.eventfd(true));
                m.what.append("eventfd ");
            }
        }
        return m;
    }

    private Msg info(SplittableRandom r, int id) {
        Msg m = new Msg(buf);
        Command c = new Command[] {Command.DEVICE_GET_INFO, Command.DEVICE_GET_REGION_INFO,
                Command.DEVICE_GET_REGION_IO_FDS, Command.DEVICE_GET_IRQ_INFO}[r.nextInt(4)];
        header(m, id, c.code, 0);
        int size = c == Command.DEVICE_GET_REGION_INFO ? 32 : 16;
        int argsz = r.nextInt(4) == 0 ? r.nextInt() : r.nextInt(0, 200);
        m.b.putInt(argsz).putInt(r.nextInt(8) == 0 ? r.nextInt() : 0).putInt(r.nextInt(4) == 0 ? r.nextInt() : r.nextInt(-1, 11));
        for (int i = 12; i < size; i++) {
            m.b.put((byte) (r.nextInt(8) == 0 ? r.nextInt() : 0));
        }
        if (r.nextInt(6) == 0) {
            m.b.position(Header.SIZE + r.nextInt(0, size + 1)); // short, or as long as it should be
        }
        end(m);
        m.what.append(c).append(" argsz ").append(argsz);
        return m;
    }

    private Msg writeMulti(SplittableRandom r, int id) {
        Msg m = new Msg(buf);
        header(m, id, Command.REGION_WRITE_MULTI.code, 0);
        int n = r.nextInt(10) == 0 ? r.nextInt(0, 260) : r.nextInt(1, 12);
        long declared = r.nextInt(10) == 0 ? r.nextLong() : n;
        m.b.putLong(declared);
        for (int i = 0; i < n; i++) {
            boolean db = r.nextBoolean();
            m.b.putLong(db ? (long) r.nextInt(64) * 4096 + r.nextInt(512) * 8L : r.nextInt(0x4000))
                    .putInt(db ? BAR2 : r.nextInt(8) == 0 ? r.nextInt(-1, 9) : BAR0)
                    .putInt(r.nextInt(8) == 0 ? r.nextInt(-1, 12) : 1 << r.nextInt(4)).putLong(r.nextLong());
        }
        end(m);
        m.what.append("REGION_WRITE_MULTI ").append(n).append(" (declared ").append(declared).append(')');
        return m;
    }

    /** Commands a client must not send or the server does not support, and unknown ones. */
    private Msg otherCommand(SplittableRandom r, int id) {
        Msg m = new Msg(buf);
        int cmd = switch (r.nextInt(6)) {
            case 0 -> Command.VERSION.code;
            case 1 -> Command.DMA_READ.code;
            case 2 -> Command.DMA_WRITE.code;
            case 3 -> new int[] {Command.DEVICE_FEATURE.code, Command.MIG_DATA_READ.code, Command.MIG_DATA_WRITE.code,
                    14, 0}[r.nextInt(5)];
            case 4 -> r.nextInt(19, 64);
            default -> r.nextInt(0x10000);
        };
        header(m, id, cmd, 0);
        int n = r.nextInt(0, 48);
        for (int i = 0; i < n; i++) {
            m.b.put((byte) r.nextInt());
        }
        end(m);
        m.what.append("command ").append(cmd).append(" with ").append(n).append(" random bytes");
        return m;
    }

    /** A header with a right size and anything else random, then random bytes. */
    private Msg random(SplittableRandom r, int id) {
        Msg m = new Msg(buf);
        int cmd = r.nextInt(3) == 0 ? r.nextInt(0x10000) : r.nextInt(0, 19);
        int flags = r.nextInt(10) == 0 ? r.nextInt() : r.nextInt(0, 0x40) & ~Header.TYPE_MASK;
        header(m, id, cmd, flags);
        m.b.putInt(Header.OFF_ERRNO, r.nextInt(4) == 0 ? r.nextInt() : 0);
        int n = r.nextInt(20) == 0 ? r.nextInt(0, 70000) : r.nextInt(0, 120);
        for (int i = 0; i < n; i++) {
            m.b.put((byte) r.nextInt());
        }
        end(m);
        m.what.append("random: command ").append(cmd).append(" flags ").append(Integer.toHexString(flags)).append(", ")
                .append(n).append(" bytes");
        return m;
    }

    /** Framing attacks; the stream is unframed afterwards, so the client closes after sending. */
    private Msg framing(SplittableRandom r, int id) {
        Msg m = new Msg(buf);
        int cmd = r.nextInt(0, 19);
        header(m, id, cmd, 0);
        int body = r.nextInt(0, 64);
        for (int i = 0; i < body; i++) {
            m.b.put((byte) r.nextInt());
        }
        int real = m.b.position();
        int kind = r.nextInt(6);
        int declared = switch (kind) {
            case 0 -> r.nextInt(0, Header.SIZE);                 // smaller than a header
            case 1 -> MAX_XFER + Header.SIZE + 64 + r.nextInt(1, 1 << 20); // larger than the server takes
            case 2 -> -r.nextInt(1, Integer.MAX_VALUE);          // above 2 GiB as u32
            case 3 -> real + r.nextInt(1, 5000);                 // promises more than comes (truncated)
            case 4 -> Math.max(Header.SIZE, real - r.nextInt(1, Math.max(2, body))); // less than it holds
            default -> real;
        };
        m.b.putInt(Header.OFF_SIZE, declared);
        if (kind == 5) {
            m.b.position(r.nextInt(1, Header.SIZE)); // a header cut short
        }
        m.closeAfter = true;
        m.what.append("framing ").append(kind).append(": command ").append(cmd).append(", size field ")
                .append(Integer.toUnsignedString(declared)).append(", ").append(m.b.position()).append(" bytes sent");
        return m;
    }

    /** Flips bytes of the payload, now and then of the header's id, command, flags or errno (never its size). */
    private static void mutate(SplittableRandom r, Msg m) {
        int len = m.b.position();
        int k = r.nextInt(20);
        if (k < 4 && len > Header.SIZE) {
            int n = r.nextInt(1, 5);
            for (int i = 0; i < n; i++) {
                int at = r.nextInt(Header.SIZE, len);
                m.b.put(at, (byte) (r.nextInt(3) == 0 ? 0xff : r.nextInt()));
            }
            m.what.append(" (").append(n).append(" payload bytes mutated)");
        } else if (k == 4) {
            int at = new int[] {Header.OFF_MSG_ID, Header.OFF_COMMAND, Header.OFF_FLAGS, Header.OFF_ERRNO}[r.nextInt(4)];
            m.b.put(at + r.nextInt(2), (byte) r.nextInt());
            m.what.append(" (header byte at ").append(at).append(" mutated)");
        }
    }
}
