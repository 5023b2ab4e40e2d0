package ernic.it.guest;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** A harness command ({@code ./ernic guest run}, {@code up}, {@code shell}, ...) run as its own process, as the launcher runs it. */
final class HarnessProcess {
    private HarnessProcess() {
    }

    /** Starts {@code main} with {@code args} in {@code dir}, its output going to {@code log}. */
    static Process start(Path dir, Path log, Map<String, String> env, String main, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), main));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        pb.environment().putAll(env);
        return pb.start();
    }

    /** Runs {@code main} with {@code args} to its end; its status and what it printed. */
    static Result run(Path dir, Map<String, String> env, String main, String... args) throws Exception {
        Path log = Files.createTempFile(dir, "run", ".log");
        try {
            Process p = start(dir, log, env, main, args);
            int status = p.waitFor();
            String out = Files.readString(log, StandardCharsets.UTF_8);
            System.out.println("$ " + main.substring(main.lastIndexOf('.') + 1) + " " + String.join(" ", args)
                    + "  -> " + status + "\n" + out);
            return new Result(status, out);
        } finally {
            Files.deleteIfExists(log);
        }
    }

    record Result(int status, String out) {
    }
}
