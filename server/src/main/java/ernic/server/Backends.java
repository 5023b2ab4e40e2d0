package ernic.server;

import ernic.mesh.MeshSpec;

import java.util.List;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The backend registry: every {@code --backend} form, parsed or refused here (one line, which
 * {@code ernic serve} prints before it exits with status 2). A new form is one entry.
 */
public final class Backends {
    /** One word before the first ':'; {@code parse} gets what follows it (null when there is no ':'). */
    private record Entry(String word, String usage, Function<String, Backend> parse) {
    }

    private static final List<Entry> ENTRIES = List.of(
            new Entry("loopback", "loopback", arg -> bare("loopback", arg, new Backend.Loopback())),
            new Entry("none", "none", arg -> bare("none", arg, new Backend.None())),
            new Entry("tcp", "tcp:manager:listen:PORT[,secret=FILE,queue=BYTES],"
                    + " tcp:worker:HOST:PORT[,secret=FILE,queue=BYTES]",
                    arg -> new Backend.Mesh(MeshSpec.parse("tcp:" + (arg == null ? "" : arg)),
                            "tcp:" + (arg == null ? "" : arg))),
            new Entry("nvmeof", "nvmeof[:size=SIZE,bs=512|4096,nqn=NQN,file=PATH,ip=ADDR]", arg -> {
                String form = arg == null ? "nvmeof" : "nvmeof:" + arg;
                return new Backend.Nvmeof(NvmeofBackend.parse(form), form);
            }),
            new Entry("s3", "s3[:bucket=NAME,size=SIZE,objects=N,ip=ADDR,port=PORT,maxpart=SIZE]", arg -> {
                String form = arg == null ? "s3" : "s3:" + arg;
                return new Backend.S3(ernic.ionic.target.s3.S3Options.parse(form), form);
            }));

    private Backends() {
    }

    /** The backend of a {@code --backend} value; null (not given) is loopback. */
    public static Backend parse(String spec) {
        if (spec == null) {
            return new Backend.Loopback();
        }
        int colon = spec.indexOf(':');
        String word = colon < 0 ? spec : spec.substring(0, colon);
        String arg = colon < 0 ? null : spec.substring(colon + 1);
        for (Entry e : ENTRIES) {
            if (e.word.equals(word)) {
                return e.parse.apply(arg);
            }
        }
        throw new IllegalArgumentException("--backend " + spec + ": expected one of " + usage());
    }

    /** Every form, for messages and the help text. */
    public static String usage() {
        return ENTRIES.stream().map(Entry::usage).collect(Collectors.joining(", "));
    }

    private static Backend bare(String word, String arg, Backend b) {
        if (arg != null) {
            throw new IllegalArgumentException("--backend " + word + " takes no argument (got " + word + ":" + arg + ")");
        }
        return b;
    }
}
