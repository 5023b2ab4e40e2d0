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
}
