package ernic.p4;

import java.math.BigInteger;
import ernic.p4.Expr.Field;
import ernic.p4.Expr.Kind;

/** A compiled primitive call. {@link #exec} returns the index of the next primitive (jumps change it). */
interface Prim {
    int exec(Packet p, int pc);

    static void runAll(Prim[] prims, Packet p) {
        int pc = 0;
        while (pc >= 0 && pc < prims.length && !p.exit) {
            Prim x = prims[pc];
            // Assignments first: a call the JIT can inline, where the call on Prim sees every primitive.
            pc = x instanceof Assign a ? a.exec(p, pc) : x.exec(p, pc);
        }
    }

    /** assign / modify_field: data, wide data, with an optional mask (modify_field's third argument). */
    final class Assign implements Prim {
        final Field dst;
        final Expr src;
        final Expr mask;
        /**
         * The slot of a narrow field named directly (not through a stack index), or -1: an action's usual
         * assignment (a field from action data or from another such field) then writes the PHV with
         * what it reads known, not through three calls.
         */
        private final int dstSlot;
        private final int dstWidth;
        private final int argIndex;
        private final int srcSlot;

        Assign(Field dst, Expr src, Expr mask) {
            this.dst = dst;
            this.src = src;
            this.mask = mask;
            boolean direct = mask == null && dst.kind == Kind.DATA && dst.fixedSlot() >= 0 && src.kind == Kind.DATA
                    && !src.signed;
            this.dstSlot = direct ? dst.fixedSlot() : -1;
            this.dstWidth = dst.width;
            this.argIndex = direct && src instanceof Expr.Arg a ? a.index : -1;
            this.srcSlot = direct && src instanceof Field f && f.fixedSlot() >= 0 ? f.fixedSlot() : -1;
        }

        @Override
        public int exec(Packet p, int pc) {
            if (argIndex >= 0) {
                p.phv.val[dstSlot] = Bits.truncate(p.args[argIndex], dstWidth);
            } else if (srcSlot >= 0) {
                long[] val = p.phv.val;
                val[dstSlot] = Bits.truncate(val[srcSlot], dstWidth);
            } else if (src.kind == Kind.WIDE) {
                byte[] w = src.wide(p);
                dst.setBytes(p, w, w.length);
            } else if (mask != null) {
                long m = mask.num(p);
                dst.set(p, (dst.num(p) & ~m) | (src.num(p) & m));
            } else {
                dst.set(p, src.num(p));
            }
            return pc + 1;
        }
    }

    /** assign_VL: a variable-length field from another of the same type. */
    record AssignVar(Field dst, Field src) implements Prim {
        @Override
        public int exec(Packet p, int pc) {
            int s = src.slot(p);
            int d = dst.slot(p);
            byte[] from = p.phv.wide[s];
            byte[] to = p.phv.wide[d];
            int n = Math.min(p.phv.varBits[s], to.length * 8);
            System.arraycopy(from, 0, to, 0, (n + 7) / 8);
            p.phv.varBits[d] = n;
            return pc + 1;
        }
    }

    /** assign_header, copy_header. */
    record AssignHeader(Expr dst, Expr src) implements Prim {
        @Override
        public int exec(Packet p, int pc) {
            int d = dst.ref(p);
            boolean v = p.phv.valid[src.ref(p)];
            p.phv.copyHeader(src.ref(p), d);
            p.phv.setValid(d, v);
            return pc + 1;
        }
    }

    /** assign_union (every member) and assign_header_stack (every element and the next index). */
    record AssignGroup(int[] dst, int[] src, int dstStack, int srcStack) implements Prim {
        @Override
        public int exec(Packet p, int pc) {
            for (int i = 0; i < dst.length; i++) {
                p.phv.copyHeader(src[i], dst[i]);
            }
            if (dstStack >= 0) {
                p.phv.stackNext[dstStack] = p.phv.stackNext[srcStack];
            }
            return pc + 1;
        }
    }

    /**
     * add_header (setValid: fields start at zero) and remove_header (setInvalid); each moves the packet length
     * register by the header's bytes when it changes the header's validity, as simple_switch's primitives do.
     */
    record SetValid(Expr header, boolean valid) implements Prim {
        @Override
        public int exec(Packet p, int pc) {
            int h = header.ref(p);
            if (valid && !p.phv.valid[h]) {
                p.phv.clearHeader(h);
                p.lengthRegister += p.phv.wireBytes(h);
            } else if (!valid && p.phv.valid[h]) {
                p.lengthRegister -= p.phv.wireBytes(h);
            }
            p.phv.setValid(h, valid);
            return pc + 1;
        }
    }

    /** push (push_front: elements move up, the first n become invalid) and pop (pop_front). */
    record PushPop(int stack, Expr count, boolean push) implements Prim {
        @Override
        public int exec(Packet p, int pc) {
            int[] m = p.phv.layout.stackMembers[stack];
            long n = Math.max(0, Math.min(count.num(p), m.length));
            int k = (int) n;
            if (push) {
                for (int i = m.length - 1; i >= k; i--) {
                    p.phv.copyHeader(m[i - k], m[i]);
                }
                for (int i = 0; i < k; i++) {
                    p.phv.valid[m[i]] = false;
                }
                p.phv.stackNext[stack] = Math.min(m.length, p.phv.stackNext[stack] + k);
            } else {
                for (int i = 0; i + k < m.length; i++) {
                    p.phv.copyHeader(m[i + k], m[i]);
                }
                for (int i = m.length - k; i < m.length; i++) {
                    p.phv.valid[m[i]] = false;
                }
                p.phv.stackNext[stack] = Math.max(0, p.phv.stackNext[stack] - k);
            }
            return pc + 1;
        }
    }

    /** mark_to_drop / drop: egress_spec 511, and no multicast group. */
    record MarkToDrop(StdMeta sm) implements Prim {
        @Override
        public int exec(Packet p, int pc) {
            StdMeta.set(sm.egressSpec(), p, StdMeta.DROP_PORT);
            StdMeta.set(sm.mcastGrp(), p, 0);
            return pc + 1;
        }
    }

    record Exit() implements Prim {
        @Override
        public int exec(Packet p, int pc) {
            p.exit = true;
            return -1;
        }
    }

    /** assert / assume: a false condition drops the frame (bmv2 would stop the switch). */
    record Assert(Expr cond) implements Prim {
        @Override
        public int exec(Packet p, int pc) {
            if (!cond.test(p)) {
                p.assertFailed = true;
                p.exit = true;
                return -1;
            }
            return pc + 1;
        }
    }

    /**
     * log_msg(format, values): counted; the text goes to the log listener when there is one ({@code p4 run}), never
     * on the device's data path, which logs nothing per frame. As bmv2's log_msg does, each pair of braces in the
     * format takes the next value (in decimal), and a backslash before a brace makes it a plain brace; braces past
     * the last value stay as they are.
     */
    record LogMsg(String format, Expr[] values) implements Prim {
        @Override
        public int exec(Packet p, int pc) {
            p.externs.counters.inc(P4Counter.LOG_MSGS);
            if (p.externs.logListener != null) {
                p.externs.logListener.accept(text(p));
            }
            return pc + 1;
        }

        String text(Packet p) {
            StringBuilder out = new StringBuilder();
            int next = 0;
            for (int i = 0; i < format.length(); i++) {
                char c = format.charAt(i);
                char d = i + 1 < format.length() ? format.charAt(i + 1) : 0;
                if (c == '\\' && (d == '{' || d == '}')) {
                    out.append(format.charAt(++i));
                } else if (c == '{' && next < values.length && format.indexOf('}', i) > 0) {
                    out.append(value(values[next++], p));
                    i = format.indexOf('}', i);
                } else {
                    out.append(c);
                }
            }
            return out.toString();
        }

        private static String value(Expr e, Packet p) {
            if (e.kind == Expr.Kind.WIDE) {
                return new BigInteger(1, e.wide(p)).toString();
            }
            long v = e.num(p);
            return e.exactLong() ? Long.toString(v) : Long.toUnsignedString(v);
        }
    }

    record Jump(Expr cond, Expr offset) implements Prim {
        @Override
        public int exec(Packet p, int pc) {
            if (cond == null || cond.num(p) == 0) {
                return (int) Math.max(-1, Math.min(Integer.MAX_VALUE, offset.num(p)));
            }
            return pc + 1;
        }
    }

    /** count(counter_array, index): one packet and the frame's bytes. */
    record Count(int counter, Expr index) implements Prim {
        @Override
        public int exec(Packet p, int pc) {
            long i = index.num(p);
            long[] pk = p.externs.counterPackets[counter];
            if (p.inBounds(i, pk.length)) {
                pk[(int) i]++;
                p.externs.counterBytes[counter][(int) i] += p.inLen;
                p.externs.counters.inc(P4Counter.COUNTER_UPDATES);
            }
            return pc + 1;
        }
    }

    /** execute_meter(meter_array, index, dst): the colour of this frame on that cell. */
    record ExecuteMeter(int meter, Expr index, Field dst) implements Prim {
        @Override
        public int exec(Packet p, int pc) {
            Meter[] cells = p.externs.meters[meter];
            long i = index.num(p);
            if (p.inBounds(i, cells.length)) {
                dst.set(p, cells[(int) i].execute(p.micros, p.externs.meterSpecs[meter].bytes() ? p.inLen : 1));
            }
            return pc + 1;
        }
    }

    /** clone_ingress_pkt_to_egress / clone_egress_pkt_to_egress: a copy to a mirror session, after this pipeline. */
    record Clone(Expr session, int fieldList) implements Prim {
        @Override
        public int exec(Packet p, int pc) {
            p.cloneSession = (int) (session.num(p) & P4Engine.MIRROR_SESSION_MASK);
            p.cloneFieldList = fieldList;
            return pc + 1;
        }
    }

    /** resubmit (after ingress) and recirculate (after the deparser), keeping a field list; id 0 does nothing. */
    record Again(boolean resubmit, int fieldList) implements Prim {
        @Override
        public int exec(Packet p, int pc) {
            if (resubmit) {
                p.resubmitList = fieldList;
            } else {
                p.recirculateList = fieldList;
            }
            return pc + 1;
        }
    }

    /** generate_digest(receiver, learn list): the list's values go to the digest listeners after ingress. */
    record Digest(int learnList) implements Prim {
        @Override
        public int exec(Packet p, int pc) {
            p.learnList = learnList;
            return pc + 1;
        }
    }

    record RegisterRead(Field dst, Expr.RegisterRead read) implements Prim {
        @Override
        public int exec(Packet p, int pc) {
            dst.set(p, read.num(p));
            return pc + 1;
        }
    }

    record RegisterWrite(int reg, Expr index, Expr value) implements Prim {
        @Override
        public int exec(Packet p, int pc) {
            long[] r = p.externs.registers[reg];
            long i = index.num(p);
            p.externs.counters.inc(P4Counter.REGISTER_WRITES);
            if (p.inBounds(i, r.length)) {
                r[(int) i] = Bits.truncate(value.num(p), p.externs.registerWidths[reg]);
            }
            return pc + 1;
        }
    }

    /** modify_field_with_hash_based_offset(dst, base, calculation, size): dst = base + hash % size. */
    record HashOffset(Field dst, Expr base, Calc calc, Expr size) implements Prim {
        @Override
        public int exec(Packet p, int pc) {
            long h = calc.compute(p);
            long n = size.num(p);
            if (n == 0) {
                p.externs.counters.inc(P4Counter.DIVISIONS_BY_ZERO);
                dst.set(p, base.num(p));
            } else {
                dst.set(p, base.num(p) + Long.remainderUnsigned(h, n));
            }
            return pc + 1;
        }
    }

    /** truncate(length): at most length bytes of the frame leave. */
    record Truncate(Expr length) implements Prim {
        @Override
        public int exec(Packet p, int pc) {
            p.truncateTo = (int) Math.max(0, Math.min(Integer.MAX_VALUE, length.num(p)));
            return pc + 1;
        }
    }
}
