package ernic.p4;

/**
 * A program the engine will not run: a feature it does not support, or JSON that is not the bmv2 format.
 * The message is one line naming the feature and its JSON path; the CLI prints it and exits 2.
 */
public final class P4Refusal extends RuntimeException {
    private final String path;

    P4Refusal(String what, String path) {
        super(what + " (at " + path + ")", null, false, false);
        this.path = path;
    }

    static P4Refusal unsupported(String feature, String path) {
        return new P4Refusal("unsupported: " + feature, path);
    }

    static P4Refusal malformed(String what, String path) {
        return new P4Refusal("malformed program: " + what, path);
    }

    /** The JSON path of the refused element, for example {@code $.pipelines[0].tables[2].match_type}. */
    public String path() {
        return path;
    }
}
