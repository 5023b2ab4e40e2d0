package ernic.p4;

/** A runtime entry the engine refuses: one line, {@code SOURCE:LINE: what}. */
public final class P4EntryError extends RuntimeException {
    private final int line;

    P4EntryError(String source, int line, String what) {
        super(source + ":" + line + ": " + what, null, false, false);
        this.line = line;
    }

    /** The refused line, counting from 1. */
    public int line() {
        return line;
    }
}
