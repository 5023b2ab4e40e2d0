package ernic.p4;

/** An action: named parameters (runtime data) and the primitives it runs, in order. */
final class Action {
    final String name;
    final int id;
    final String[] paramNames;
    final int[] paramWidths;
    Prim[] prims = new Prim[0];

    Action(String name, int id, String[] paramNames, int[] paramWidths) {
        this.name = name;
        this.id = id;
        this.paramNames = paramNames;
        this.paramWidths = paramWidths;
    }

    void run(Packet p, long[] args, byte[][] wideArgs) {
        p.args = args;
        p.wideArgs = wideArgs;
        Prim.runAll(prims, p);
    }

    @Override
    public String toString() {
        return name;
    }
}
