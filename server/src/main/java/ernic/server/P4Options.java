package ernic.server;

import ernic.ionic.p4hook.P4Hooks;
import ernic.ionic.p4hook.P4Scope;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The P4 options of {@code ernic serve} (docs/p4.md): {@code --p4} (the engine with its built-in pass-through
 * program), {@code --p4-program FILE.json}, {@code --p4-entries FILE} (simple_switch_CLI commands) and
 * {@code --p4-guest-scope none|read|tables|all}. The engine runs when any of {@code --p4}, {@code --p4-program}
 * or {@code --p4-guest-scope} is given; every mistake is one line (an IllegalArgumentException) before anything
 * starts.
 *
 * @param on      {@code --p4}
 * @param program the program file, or null for the built-in pass-through
 * @param entries the runtime entries file, or null
 * @param scope   the guest's scope as given, or null (none)
 */
public record P4Options(boolean on, String program, String entries, String scope) {
    /** The options as given on the command line, or null when none of them is. */
    public static P4Options of(boolean on, String program, String entries, String scope) {
        if (!on && program == null && entries == null && scope == null) {
            return null;
        }
        return new P4Options(on, program, entries, scope);
    }

    /** Checks the options, reads the files and loads the program with its entries. */
    P4Hooks load() {
        if (!on && program == null && scope == null) {
            throw new IllegalArgumentException("--p4-entries needs --p4 or --p4-program");
        }
        P4Scope s = scope == null ? P4Scope.NONE : P4Scope.parse(scope);
        String json = program == null ? null : read("--p4-program", program);
        String text = entries == null ? null : read("--p4-entries", entries);
        return P4Hooks.load(json, program, text, entries, s);
    }

    private static String read(String option, String file) {
        try {
            return Files.readString(Path.of(file));
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException(option + " " + file + ": cannot read it ("
                    + e.getClass().getSimpleName() + ")");
        }
    }
}
