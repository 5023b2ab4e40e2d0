package ernic.p4;

/** A node of a control flow: a table, a conditional or an action call. {@link #run} returns the next node. */
abstract class Node {
    final String name;

    Node(String name) {
        this.name = name;
    }

    abstract Node run(Packet p);

    /** Runs a pipeline from its first node until it ends or the program exits. */
    static void runPipeline(Node init, Packet p) {
        Node n = init;
        while (n != null && !p.exit) {
            // Tables first: a call the JIT can inline, where the call on Node sees every kind of node.
            n = n instanceof Table t ? t.run(p) : n.run(p);
        }
    }

    static final class Conditional extends Node {
        final Expr cond;
        Node ifTrue;
        Node ifFalse;

        Conditional(String name, Expr cond) {
            super(name);
            this.cond = cond;
        }

        @Override
        Node run(Packet p) {
            return cond.test(p) ? ifTrue : ifFalse;
        }
    }

    /** {@code action_calls}: an action without parameters run directly. */
    static final class ActionCall extends Node {
        final Action action;
        Node next;

        ActionCall(String name, Action action) {
            super(name);
            this.action = action;
        }

        @Override
        Node run(Packet p) {
            action.run(p, NO_ARGS, NO_WIDE);
            return next;
        }
    }

    static final long[] NO_ARGS = new long[0];
    static final byte[][] NO_WIDE = new byte[0][];
}
