package ernic.p4;

/**
 * v1model's standard_metadata fields the engine reads and writes, found through {@code field_aliases}
 * ("standard_metadata.egress_spec" -> [header, field]) or the header instance {@code standard_metadata}.
 * A field the program does not declare is null and left alone.
 */
record StdMeta(Expr.Field ingressPort, Expr.Field egressSpec, Expr.Field egressPort, Expr.Field instanceType,
               Expr.Field packetLength, Expr.Field parserError, Expr.Field checksumError, Expr.Field mcastGrp,
               Expr.Field egressRid) {
    /** v1model's drop port: egress_spec 511 (what mark_to_drop writes) drops the frame. */
    static final int DROP_PORT = 511;

    static void set(Expr.Field f, Packet p, long v) {
        if (f != null) {
            f.set(p, v);
        }
    }

    static long get(Expr.Field f, Packet p) {
        return f == null ? 0 : f.num(p);
    }

    /**
     * One of these fields as the frame path uses it, several times a frame: its PHV slot and mask looked up once (a
     * narrow unsigned field of a named header, as standard_metadata's are), else through the field; absent, it reads
     * 0 and ignores writes, as {@link #set} and {@link #get} do.
     */
    static final class Slot {
        private final Expr.Field field;
        private final int slot;
        private final long mask;

        Slot(Expr.Field f) {
            field = f;
            slot = f != null && f.kind == Expr.Kind.DATA && !f.signed ? f.fixedSlot() : -1;
            mask = f == null || f.width >= 64 ? -1L : (1L << f.width) - 1;
        }

        void set(Packet p, long v) {
            if (slot >= 0) {
                p.phv.val[slot] = v & mask;
            } else if (field != null) {
                field.set(p, v);
            }
        }

        long get(Packet p) {
            return slot >= 0 ? p.phv.val[slot] : field == null ? 0 : field.num(p);
        }
    }
}
