package ernic.it.harness;

import java.nio.file.Path;

/**
 * What one guest did: the script's exit status (125 when the guest reported none), the script's
 * output, where the serial console was kept, how long the boot and the whole run took, and how many
 * times QEMU was started (more than once when a boot died before the script and was booted again).
 */
public record GuestResult(int vmIndex, int exitStatus, String output, Path consoleLog, long bootToScriptMillis,
                          long totalMillis, int boots) {
    /** The last {@code n} lines of the serial console, for failure messages. */
    public String consoleTail(int n) {
        try {
            var lines = java.nio.file.Files.readAllLines(consoleLog);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - n), lines.size()));
        } catch (java.io.IOException e) {
            return "(no console log at " + consoleLog + ")";
        }
    }

    @Override
    public String toString() {
        return "vm" + vmIndex + ": exit " + exitStatus + ", boot-to-script " + bootToScriptMillis + " ms, total "
                + totalMillis + " ms" + (boots > 1 ? ", " + boots + " boots" : "");
    }
}
