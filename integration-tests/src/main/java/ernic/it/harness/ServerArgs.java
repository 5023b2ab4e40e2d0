package ernic.it.harness;

import picocli.CommandLine.Option;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The extra arguments each guest's {@code ernic serve} gets: {@code --server-args ARGS} for every server, and
 * {@code --server-args-vm K=ARGS} (repeatable) for server K in their place, so that one VM's server can differ from
 * the others' (one with {@code --roce}, one without). {@code K=} with nothing after it runs server K with no extra
 * arguments. ARGS is one string, split at white space. Immutable.
 */
public final class ServerArgs {
    private final List<String> common;
    private final Map<Integer, List<String>> perVm;

    private ServerArgs(List<String> common, Map<Integer, List<String>> perVm) {
        this.common = common;
        this.perVm = perVm;
    }

    /** The two options, as a picocli mixin of every command that starts guests' servers. */
    public static final class Options {
        @Option(names = "--server-args", defaultValue = "", description = "More arguments for each ernic serve, in one string.")
        String common;

        @Option(names = "--server-args-vm", paramLabel = "K=ARGS", description = "Arguments for VM K's ernic serve in"
                + " place of --server-args, in one string (repeatable; K= alone: none).")
        List<String> vmValues = new ArrayList<>();

        /** {@link #parseOrSay} of these values. */
        public ServerArgs parseOrSay(String command, int vms) {
            return ServerArgs.parseOrSay(command, common, vmValues, vms);
        }
    }

    /** {@code --server-args} alone: the same arguments for every server. */
    public static ServerArgs of(String common) {
        return new ServerArgs(split(common), Map.of());
    }

    /**
     * {@code --server-args} and the values of {@code --server-args-vm} for {@code vms} guests. A value that is not
     * {@code K=ARGS} with K a VM of the run (0 to vms - 1), or a K given twice, is an
     * {@link IllegalArgumentException} whose message is one line that says which and why.
     */
    /** {@link #parse}, or null after one line on stderr that starts with {@code command} and says why. */
    public static ServerArgs parseOrSay(String command, String common, List<String> vmValues, int vms) {
        try {
            return parse(common, vmValues, vms);
        } catch (IllegalArgumentException e) {
            System.err.println(command + ": " + e.getMessage());
            return null;
        }
    }

    public static ServerArgs parse(String common, List<String> vmValues, int vms) {
        Map<Integer, List<String>> perVm = new TreeMap<>();
        for (String v : vmValues == null ? List.<String>of() : vmValues) {
            int eq = v.indexOf('=');
            String k = eq < 0 ? "" : v.substring(0, eq);
            if (eq < 0 || k.isEmpty() || !k.chars().allMatch(c -> c >= '0' && c <= '9') || k.length() > 3) {
                throw new IllegalArgumentException("--server-args-vm " + quote(v) + ": expected K=ARGS, K the number"
                        + " of a VM (0 to " + (vms - 1) + ")");
            }
            int vm = Integer.parseInt(k);
            if (vm >= vms) {
                throw new IllegalArgumentException("--server-args-vm " + quote(v) + ": there is no VM " + vm + " (--vms "
                        + vms + ": 0 to " + (vms - 1) + ")");
            }
            if (perVm.put(vm, split(v.substring(eq + 1))) != null) {
                throw new IllegalArgumentException("--server-args-vm " + quote(v) + ": VM " + vm + " is given twice");
            }
        }
        return new ServerArgs(split(common), Collections.unmodifiableMap(perVm));
    }

    /** The extra arguments of server {@code vm}: its own when {@code --server-args-vm} gave it some, else the common. */
    public List<String> forVm(int vm) {
        return perVm.getOrDefault(vm, common);
    }

    /** The command-line values that give the same again ({@code --server-args-vm K=ARGS} each), for a child process. */
    public List<String> vmValues() {
        List<String> out = new ArrayList<>();
        perVm.forEach((vm, args) -> out.add(vm + "=" + String.join(" ", args)));
        return out;
    }

    /** The common arguments as one string. */
    public String common() {
        return String.join(" ", common);
    }

    private static List<String> split(String args) {
        return args == null || args.isBlank() ? List.of() : List.of(args.trim().split("\\s+"));
    }

    /** The value as given, quoted, on one line whatever it holds. */
    private static String quote(String v) {
        return "'" + v.replaceAll("\\p{Cntrl}", "?") + "'";
    }

    @Override
    public String toString() {
        return "common " + common + (perVm.isEmpty() ? "" : ", per VM " + perVm);
    }

    /** For tests: the arguments of every server of a run of {@code vms} guests. */
    List<List<String>> all(int vms) {
        List<List<String>> out = new ArrayList<>();
        for (int i = 0; i < vms; i++) {
            out.add(forVm(i));
        }
        return out;
    }
}
