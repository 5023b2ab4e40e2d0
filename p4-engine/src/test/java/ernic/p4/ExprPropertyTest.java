package ernic.p4;

import net.jqwik.api.Assume;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

import java.math.BigInteger;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Expression arithmetic against a reference model: random expressions over signed and unsigned fields of
 * random widths, evaluated by the engine (parse, action, deparse) and by bmv2's rule computed here with
 * BigInteger (unbounded integers, truncation only when the result is copied into the destination field).
 * An expression the engine refuses at load (an intermediate it cannot hold exactly in 64 bits) is skipped;
 * what it accepts must match.
 */
class ExprPropertyTest {
    interface Node {
        String json();

        BigInteger eval(BigInteger[] f);
    }

    interface Cond {
        String json();

        boolean eval(BigInteger[] f);
    }

    static final BigInteger TWO = BigInteger.TWO;

    static String hex(BigInteger v) {
        return "{\"type\":\"hexstr\",\"value\":\"" + (v.signum() < 0 ? "-0x" + v.negate().toString(16) : "0x" + v.toString(16)) + "\"}";
    }

    static String ex(String op, String l, String r) {
        return "{\"type\":\"expression\",\"value\":{\"op\":\"" + op + "\",\"left\":" + l + ",\"right\":" + r + "}}";
    }

    static BigInteger mod(BigInteger v, int w) {
        return v.mod(TWO.pow(w));
    }

    static BigInteger twoComp(BigInteger v, int w) {
        BigInteger m = mod(v, w);
        return m.testBit(w - 1) ? m.subtract(TWO.pow(w)) : m;
    }

    static final class Gen {
        final Random rnd;

        Gen(long seed) {
            rnd = new Random(seed);
        }

        Node leaf() {
            if (rnd.nextInt(3) > 0) {
                int i = rnd.nextInt(3);
                String name = "abc".substring(i, i + 1);
                return new Node() {
                    public String json() {
                        return "{\"type\":\"field\",\"value\":[\"h\",\"" + name + "\"]}";
                    }

                    public BigInteger eval(BigInteger[] f) {
                        return f[i];
                    }
                };
            }
            BigInteger v = new BigInteger(1 + rnd.nextInt(rnd.nextBoolean() ? 8 : 64), rnd);
            BigInteger c = rnd.nextInt(5) == 0 ? v.negate() : v;
            return new Node() {
                public String json() {
                    return hex(c);
                }

                public BigInteger eval(BigInteger[] f) {
                    return c;
                }
            };
        }

        Node node(int depth) {
            if (depth == 0 || rnd.nextInt(4) == 0) {
                return leaf();
            }
            Node l = node(depth - 1);
            Node r = node(depth - 1);
            int k = rnd.nextInt(14);
            return switch (k) {
                case 0, 1, 2, 3, 4, 5 -> {
                    String op = new String[] {"+", "-", "*", "&", "|", "^"}[k];
                    yield new Node() {
                        public String json() {
                            return ex(op, l.json(), r.json());
                        }

                        public BigInteger eval(BigInteger[] f) {
                            BigInteger a = l.eval(f);
                            BigInteger b = r.eval(f);
                            return switch (op) {
                                case "+" -> a.add(b);
                                case "-" -> a.subtract(b);
                                case "*" -> a.multiply(b);
                                case "&" -> a.and(b);
                                case "|" -> a.or(b);
                                default -> a.xor(b);
                            };
                        }
                    };
                }
                case 6, 7 -> {
                    boolean not = k == 6;
                    yield new Node() {
                        public String json() {
                            return ex(not ? "~" : "-", "null", l.json());
                        }

                        public BigInteger eval(BigInteger[] f) {
                            return not ? l.eval(f).not() : l.eval(f).negate();
                        }
                    };
                }
                case 8, 9 -> {
                    boolean left = k == 8;
                    int n = rnd.nextInt(70);
                    yield new Node() {
                        public String json() {
                            return ex(left ? "<<" : ">>", l.json(), hex(BigInteger.valueOf(n)));
                        }

                        public BigInteger eval(BigInteger[] f) {
                            return left ? l.eval(f).shiftLeft(n) : l.eval(f).shiftRight(n);
                        }
                    };
                }
                case 10, 11 -> {
                    String op = new String[] {"two_comp_mod", "sat_cast", "usat_cast"}[rnd.nextInt(3)];
                    int w = 1 + rnd.nextInt(64);
                    yield new Node() {
                        public String json() {
                            return ex(op, l.json(), hex(BigInteger.valueOf(w)));
                        }

                        public BigInteger eval(BigInteger[] f) {
                            BigInteger v = l.eval(f);
                            return switch (op) {
                                case "two_comp_mod" -> twoComp(v, w);
                                case "sat_cast" -> v.max(TWO.pow(w - 1).negate()).min(TWO.pow(w - 1).subtract(BigInteger.ONE));
                                default -> v.max(BigInteger.ZERO).min(TWO.pow(w).subtract(BigInteger.ONE));
                            };
                        }
                    };
                }
                default -> {
                    Cond c = cond(depth - 1);
                    yield new Node() {
                        public String json() {
                            return "{\"type\":\"expression\",\"value\":{\"op\":\"?\",\"left\":" + l.json() + ",\"right\":"
                                    + r.json() + ",\"cond\":" + c.json() + "}}";
                        }

                        public BigInteger eval(BigInteger[] f) {
                            return c.eval(f) ? l.eval(f) : r.eval(f);
                        }
                    };
                }
            };
        }

        Cond cond(int depth) {
            Node l = node(Math.max(0, depth));
            Node r = node(Math.max(0, depth));
            String op = new String[] {"==", "!=", "<", "<=", ">", ">="}[rnd.nextInt(6)];
            Cond c = new Cond() {
                public String json() {
                    return ex(op, l.json(), r.json());
                }

                public boolean eval(BigInteger[] f) {
                    int x = l.eval(f).compareTo(r.eval(f));
                    return switch (op) {
                        case "==" -> x == 0;
                        case "!=" -> x != 0;
                        case "<" -> x < 0;
                        case "<=" -> x <= 0;
                        case ">" -> x > 0;
                        default -> x >= 0;
                    };
                }
            };
            if (rnd.nextInt(3) > 0) {
                return c;
            }
            Cond d = cond(0);
            boolean and = rnd.nextBoolean();
            return new Cond() {
                public String json() {
                    return ex(and ? "and" : "or", c.json(), d.json());
                }

                public boolean eval(BigInteger[] f) {
                    return and ? c.eval(f) && d.eval(f) : c.eval(f) || d.eval(f);
                }
            };
        }
    }

    static String program(int[] w, boolean[] s, int wr, String expr) {
        int total = w[0] + w[1] + w[2] + wr;
        int pad = (8 - total % 8) % 8;
        String fields = "[\"a\"," + w[0] + "," + s[0] + "],[\"b\"," + w[1] + "," + s[1] + "],[\"c\"," + w[2] + "," + s[2]
                + "],[\"r\"," + wr + ",false]" + (pad > 0 ? ",[\"_pad\"," + pad + ",false]" : "");
        return """
                {"__meta__":{"version":[2,18]},
                 "header_types":[{"name":"standard_metadata","id":0,"fields":[["ingress_port",9,false],["egress_spec",9,false],
                   ["egress_port",9,false],["mcast_grp",16,false],["_padding",5,false]]},
                   {"name":"h_t","id":1,"fields":[%s]}],
                 "headers":[{"name":"standard_metadata","id":0,"header_type":"standard_metadata","metadata":true},
                   {"name":"h","id":1,"header_type":"h_t","metadata":false}],
                 "parsers":[{"name":"parser","id":0,"init_state":"start","parse_states":[{"name":"start","id":0,
                   "parser_ops":[{"op":"extract","parameters":[{"type":"regular","value":"h"}]}],"transition_key":[],
                   "transitions":[{"type":"default","value":null,"mask":null,"next_state":null}]}]}],
                 "deparsers":[{"name":"deparser","id":0,"order":["h"]}],
                 "actions":[{"name":"act","id":0,"runtime_data":[],"primitives":[{"op":"assign","parameters":[
                   {"type":"field","value":["h","r"]},%s]}]}],
                 "pipelines":[{"name":"ingress","id":0,"init_table":"t","action_profiles":[],"conditionals":[],
                   "tables":[{"name":"t","id":0,"key":[],"match_type":"exact","type":"simple","max_size":1,
                   "with_counters":false,"support_timeout":false,"direct_meters":null,"action_ids":[0],"actions":["act"],
                   "base_default_next":null,"next_tables":{"act":null},
                   "default_entry":{"action_id":0,"action_const":true,"action_data":[],"action_entry_const":true}}]},
                   {"name":"egress","id":1,"init_table":null,"tables":[],"action_profiles":[],"conditionals":[]}]}
                """.formatted(fields, expr);
    }

    static BigInteger bits(byte[] b, int off, int n) {
        BigInteger v = BigInteger.ZERO;
        for (int i = off; i < off + n; i++) {
            v = v.shiftLeft(1).or(BigInteger.valueOf((b[i >> 3] >> (7 - (i & 7))) & 1));
        }
        return v;
    }

    @Property(tries = 600)
    void engineArithmeticMatchesUnboundedIntegersTruncatedOnAssignment(@ForAll long seed) {
        Gen g = new Gen(seed);
        int[] w = {1 + g.rnd.nextInt(64), 1 + g.rnd.nextInt(64), 1 + g.rnd.nextInt(40)};
        boolean[] s = {g.rnd.nextBoolean() && w[0] >= 2, g.rnd.nextBoolean() && w[1] >= 2, false};
        int wr = 1 + g.rnd.nextInt(64);
        Node e = g.node(3);
        P4Engine engine;
        try {
            engine = Loader.load(program(w, s, wr, e.json()));
        } catch (P4Refusal r) {
            assertThat(r.getMessage()).contains("64");
            Assume.that(false);
            return;
        }
        int total = w[0] + w[1] + w[2] + wr;
        int bytes = (total + 7) / 8;
        byte[] frame = new byte[bytes + 4];
        g.rnd.nextBytes(frame);
        BigInteger[] f = new BigInteger[3];
        int off = 0;
        for (int i = 0; i < 3; i++) {
            BigInteger raw = bits(frame, off, w[i]);
            f[i] = s[i] ? twoComp(raw, w[i]) : raw;
            off += w[i];
        }
        int port = engine.process(frame, 0, frame.length, P4Engine.PORT_TAP);
        assertThat(port).isEqualTo(P4Engine.PORT_TAP);
        byte[] out = engine.output();
        assertThat(bits(out, off, wr)).as("%s", e.json()).isEqualTo(mod(e.eval(f), wr));
        assertThat(bits(out, 0, off)).isEqualTo(bits(frame, 0, off));
    }
}
