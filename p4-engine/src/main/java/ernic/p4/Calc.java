package ernic.p4;

import ernic.common.InternetChecksum;

import java.util.Set;
import java.util.zip.CRC32;

/**
 * A named calculation (bmv2 {@code calculations}): an algorithm over the bits of its inputs, concatenated
 * in order with no padding between them (the last byte padded with zero bits). Invalid headers are skipped.
 */
final class Calc {
    /** The algorithms bmv2 ships that the engine implements, with bmv2's parameters. */
    static final Set<String> ALGORITHMS = Set.of("csum16", "cksum16", "crc16", "crc16_custom", "crc32",
            "crc32_custom", "crcCCITT", "identity", "xor16");

    sealed interface Input permits FieldIn, ConstIn, HeaderIn, PayloadIn {
    }

    record FieldIn(Expr.Field field) implements Input {
    }

    record ConstIn(long value, int bits) implements Input {
    }

    record HeaderIn(Expr.HeaderExpr header) implements Input {
    }

    /** {@code payload}: the valid headers that follow the last input header in deparser order, then the payload. */
    record PayloadIn(int[] after) implements Input {
    }

    final String name;
    final String algo;
    final Input[] inputs;
    private final byte[] buf;
    private final CRC32 crc32 = new CRC32();

    Calc(String name, String algo, Input[] inputs, int maxBytes) {
        this.name = name;
        this.algo = algo;
        this.inputs = inputs;
        this.buf = new byte[maxBytes];
    }

    long compute(Packet p) {
        p.externs.counters.inc(P4Counter.HASHES);
        int bits = 0;
        Phv phv = p.phv;
        for (Input in : inputs) {
            switch (in) {
                case FieldIn(Expr.Field f) -> {
                    int h = f.header.ref(p);
                    if (phv.valid[h]) {
                        bits = appendField(phv, h, f.field, bits);
                    }
                }
                case ConstIn(long v, int n) -> {
                    for (int done = 0; done < n; ) {
                        int k = Math.min(64, n - done);
                        Bits.write(buf, bits + done, k, n - done > 64 ? 0 : v);
                        done += k;
                    }
                    bits += n;
                }
                case HeaderIn(Expr.HeaderExpr he) -> {
                    int h = he.ref(p);
                    if (phv.valid[h]) {
                        for (int f = 0; f < phv.layout.typeOf[h].fields().length; f++) {
                            bits = appendField(phv, h, f, bits);
                        }
                    }
                }
                case PayloadIn(int[] after) -> {
                    for (int h : after) {
                        if (phv.valid[h]) {
                            for (int f = 0; f < phv.layout.typeOf[h].fields().length; f++) {
                                bits = appendField(phv, h, f, bits);
                            }
                        }
                    }
                    int n = p.inLen - p.cursor;
                    if (n > 0) {
                        p.need(p.inLen);
                        Bits.copy(p.in, p.cursor * 8, buf, bits, n * 8);
                        bits += n * 8;
                    }
                }
            }
        }
        int len = (bits + 7) / 8;
        if ((bits & 7) != 0) {
            buf[len - 1] &= (byte) (0xff << (8 - (bits & 7)));
        }
        return run(algo, buf, len, crc32);
    }

    private int appendField(Phv phv, int h, int f, int bits) {
        return phv.emitField(phv.layout.typeOf[h], phv.layout.first[h] + f, f, buf, bits);
    }

    /** The algorithm over {@code b[0..len)}; also the reference the tests use for known vectors. */
    static long run(String algo, byte[] b, int len, CRC32 crc32) {
        return switch (algo) {
            case "csum16", "cksum16" -> InternetChecksum.of(b, 0, len, 0);
            case "crc16", "crc16_custom" -> {
                // CRC-16/ARC: polynomial 0x8005 reflected, initial 0, no final xor (bmv2's crc16).
                int crc = 0;
                for (int i = 0; i < len; i++) {
                    crc ^= b[i] & 0xff;
                    for (int k = 0; k < 8; k++) {
                        crc = (crc & 1) != 0 ? (crc >>> 1) ^ 0xa001 : crc >>> 1;
                    }
                }
                yield crc & 0xffff;
            }
            case "crcCCITT" -> {
                // CRC-16/CCITT-FALSE: polynomial 0x1021, initial 0xffff, not reflected.
                int crc = 0xffff;
                for (int i = 0; i < len; i++) {
                    crc ^= (b[i] & 0xff) << 8;
                    for (int k = 0; k < 8; k++) {
                        crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
                    }
                }
                yield crc & 0xffff;
            }
            case "crc32", "crc32_custom" -> {
                crc32.reset();
                crc32.update(b, 0, len);
                yield crc32.getValue();
            }
            case "identity" -> Bits.bytesToLong(b, 0, Math.min(8, len));
            case "xor16" -> {
                int x = 0;
                for (int i = 0; i < len; i += 2) {
                    x ^= ((b[i] & 0xff) << 8) | (i + 1 < len ? b[i + 1] & 0xff : 0);
                }
                yield x;
            }
            default -> throw new IllegalStateException("algorithm " + algo);
        };
    }
}
