package ernic.p4;

import ernic.p4.Expr.Field;
import ernic.p4.Expr.Kind;

/** A compiled primitive call. {@link #exec} returns the index of the next primitive (jumps change it). */
abstract class Prim {
    abstract int exec(Packet p, int pc);

    static void runAll(Prim[] prims, Packet p) {
        int pc = 0;
        while (pc >= 0 && pc < prims.length && !p.exit) {
            pc = prims[pc].exec(p, pc);
        }
    }

    /** assign / modify_field: data, wide data, with an optional mask (modify_field's third argument). */
    static final class Assign extends Prim {
        final Field dst;
        final Expr src;
        final Expr mask;

        Assign(Field dst, Expr src, Expr mask) {
            this.dst = dst;
            this.src = src;
            this.mask = mask;
        }

        @Override
        int exec(Packet p, int pc) {
            if (src.kind == Kind.WIDE) {
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
    static final class AssignVar extends Prim {
        final Field dst;
        final Field src;

        AssignVar(Field dst, Field src) {
            this.dst = dst;
            this.src = src;
        }

        @Override
        int exec(Packet p, int pc) {
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
    static final class AssignHeader extends Prim {
        final Expr dst;
        final Expr src;

        AssignHeader(Expr dst, Expr src) {
            this.dst = dst;
            this.src = src;
        }

        @Override
        int exec(Packet p, int pc) {
            int d = dst.ref(p);
            boolean v = p.phv.valid[src.ref(p)];
            p.phv.copyHeader(src.ref(p), d);
            p.phv.setValid(d, v);
            return pc + 1;
        }
    }

    /** assign_union (every member) and assign_header_stack (every element and the next index). */
    static final class AssignGroup extends Prim {
        final int[] dst;
        final int[] src;
        final int dstStack;
        final int srcStack;

        AssignGroup(int[] dst, int[] src, int dstStack, int srcStack) {
            this.dst = dst;
            this.src = src;
            this.dstStack = dstStack;
            this.srcStack = srcStack;
        }

        @Override
        int exec(Packet p, int pc) {
            for (int i = 0; i < dst.length; i++) {
                p.phv.copyHeader(src[i], dst[i]);
            }
            if (dstStack >= 0) {
                p.phv.stackNext[dstStack] = p.phv.stackNext[srcStack];
            }
            return pc + 1;
        }
    }

    /** add_header (setValid: fields start at zero) and remove_header (setInvalid). */
    static final class SetValid extends Prim {
        final Expr header;
        final boolean valid;

        SetValid(Expr header, boolean valid) {
            this.header = header;
            this.valid = valid;
        }

        @Override
        int exec(Packet p, int pc) {
            int h = header.ref(p);
            if (valid && !p.phv.valid[h]) {
                p.phv.clearHeader(h);
            }
            p.phv.setValid(h, valid);
            return pc + 1;
        }
    }

    /** push (push_front: elements move up, the first n become invalid) and pop (pop_front). */
    static final class PushPop extends Prim {
        final int stack;
        final Expr count;
        final boolean push;

        PushPop(int stack, Expr count, boolean push) {
            this.stack = stack;
            this.count = count;
            this.push = push;
        }

        @Override
        int exec(Packet p, int pc) {
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
    static final class MarkToDrop extends Prim {
        final StdMeta sm;

        MarkToDrop(StdMeta sm) {
            this.sm = sm;
        }

        @Override
        int exec(Packet p, int pc) {
            StdMeta.set(sm.egressSpec(), p, StdMeta.DROP_PORT);
            StdMeta.set(sm.mcastGrp(), p, 0);
            return pc + 1;
        }
    }

    static final class Exit extends Prim {
        @Override
        int exec(Packet p, int pc) {
            p.exit = true;
            return -1;
        }
    }

    /** assert / assume: a false condition drops the frame (bmv2 would stop the switch). */
    static final class Assert extends Prim {
        final Expr cond;

        Assert(Expr cond) {
            this.cond = cond;
        }

        @Override
        int exec(Packet p, int pc) {
            if (!cond.test(p)) {
                p.assertFailed = true;
                p.exit = true;
                return -1;
            }
            return pc + 1;
        }
    }

    /** log_msg: counted, not printed (the data path logs nothing per frame). */
    static final class LogMsg extends Prim {
        @Override
        int exec(Packet p, int pc) {
            p.externs.counters.inc(P4Counter.LOG_MSGS);
            return pc + 1;
        }
    }

    static final class Jump extends Prim {
        final Expr cond;
        final Expr offset;

        Jump(Expr cond, Expr offset) {
            this.cond = cond;
            this.offset = offset;
        }

        @Override
        int exec(Packet p, int pc) {
            if (cond == null || cond.num(p) == 0) {
                return (int) Math.max(-1, Math.min(Integer.MAX_VALUE, offset.num(p)));
            }
            return pc + 1;
        }
    }

    /** count(counter_array, index): one packet and the frame's bytes. */
    static final class Count extends Prim {
        final int counter;
        final Expr index;

        Count(int counter, Expr index) {
            this.counter = counter;
            this.index = index;
        }

        @Override
        int exec(Packet p, int pc) {
            long i = index.num(p);
            long[] pk = p.externs.counterPackets[counter];
            if (i < 0 || i >= pk.length) {
                p.externs.counters.inc(P4Counter.OUT_OF_BOUNDS);
            } else {
                pk[(int) i]++;
                p.externs.counterBytes[counter][(int) i] += p.inLen;
                p.externs.counters.inc(P4Counter.COUNTER_UPDATES);
            }
            return pc + 1;
        }
    }

    static final class RegisterRead extends Prim {
        final Field dst;
        final Expr.RegisterRead read;

        RegisterRead(Field dst, Expr.RegisterRead read) {
            this.dst = dst;
            this.read = read;
        }

        @Override
        int exec(Packet p, int pc) {
            dst.set(p, read.num(p));
            return pc + 1;
        }
    }

    static final class RegisterWrite extends Prim {
        final int reg;
        final Expr index;
        final Expr value;

        RegisterWrite(int reg, Expr index, Expr value) {
            this.reg = reg;
            this.index = index;
            this.value = value;
        }

        @Override
        int exec(Packet p, int pc) {
            long[] r = p.externs.registers[reg];
            long i = index.num(p);
            p.externs.counters.inc(P4Counter.REGISTER_WRITES);
            if (i < 0 || i >= r.length) {
                p.externs.counters.inc(P4Counter.OUT_OF_BOUNDS);
            } else {
                r[(int) i] = Bits.truncate(value.num(p), p.externs.registerWidths[reg]);
            }
            return pc + 1;
        }
    }

    /** modify_field_with_hash_based_offset(dst, base, calculation, size): dst = base + hash % size. */
    static final class HashOffset extends Prim {
        final Field dst;
        final Expr base;
        final Calc calc;
        final Expr size;

        HashOffset(Field dst, Expr base, Calc calc, Expr size) {
            this.dst = dst;
            this.base = base;
            this.calc = calc;
            this.size = size;
        }

        @Override
        int exec(Packet p, int pc) {
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
    static final class Truncate extends Prim {
        final Expr length;

        Truncate(Expr length) {
            this.length = length;
        }

        @Override
        int exec(Packet p, int pc) {
            p.truncateTo = (int) Math.max(0, Math.min(Integer.MAX_VALUE, length.num(p)));
            return pc + 1;
        }
    }
}
