package ernic.server;

import ernic.mesh.MeshSpec;
import ernic.nvmeof.NvmeofOptions;
import ernic.s3.S3Options;

import java.util.List;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The backend registry: every {@code --backend} form, parsed or refused here (one line, which
 * {@code ernic serve} prints before it exits with status 2). A new form is one entry.
 */
public final class Backends {
    /** One word before the first ':'; {@code parse} gets what follows it (null when there is no ':'). */
    private record Entry(String word, String usage, String meaning, Function<String, Backend> parse) {
    }

    private static final List<Entry> ENTRIES = List.of(
            new Entry("loopback", "loopback", "the default: one VM, every QP's peer in the same guest",
                    arg -> bare("loopback", arg, new Backend.Loopback())),
            new Entry("none", "none", "stub resource commands, for driver bring-up",
                    arg -> bare("none", arg, new Backend.None())),
            new Entry("tcp", "tcp:manager:listen:PORT[,secret=FILE,queue=BYTES],"
                    + " tcp:worker:HOST:PORT[,secret=FILE,queue=BYTES]",
                    "a mesh of servers, one per VM, as its manager or a worker (an IPv6 host in brackets; the guest's"
                            + " GIDs come from ERNIC_TCP_GUEST_GIDS; secret=FILE on every server authenticates the mesh"
                            + " with the shared secret in FILE, mode 0600, at least 16 bytes; queue=BYTES, 64K to 1G,"
                            + " default 32M, bounds the requests each connection queues for its peer)",
                    arg -> new Backend.Mesh(MeshSpec.parse("tcp:" + (arg == null ? "" : arg)),
                            "tcp:" + (arg == null ? "" : arg))),
            new Entry("nvmeof", NvmeofOptions.GRAMMAR.usage(), "the in-process NVMe-oF target", arg -> {
                String form = arg == null ? "nvmeof" : "nvmeof:" + arg;
                return new NvmeofBackend(NvmeofBackend.parse(form), form);
            }),
            new Entry("s3", S3Options.GRAMMAR.usage(), "the in-process S3 store on the guest's Ethernet", arg -> {
                String form = arg == null ? "s3" : "s3:" + arg;
                return new S3Backend(S3Options.parse(form), form);
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

    /** The help text of {@code --backend}: every form with what it stands for. */
    public static String help() {
        return "What stands behind the RDMA side: " + ENTRIES.stream()
                .map(e -> e.usage.replaceAll(",(?! )", ", ") + " (" + e.meaning + ")") // spaces: the help wraps there
                .collect(Collectors.joining("; ")) + ". See docs/operations.md, docs/mesh.md, docs/nvmeof.md and"
                + " docs/s3.md.";
    }

    private static Backend bare(String word, String arg, Backend b) {
        if (arg != null) {
            throw new IllegalArgumentException("--backend " + word + " takes no argument (got " + word + ":" + arg + ")");
        }
        return b;
    }
}
