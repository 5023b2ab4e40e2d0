package ernic.server;

import picocli.CommandLine.IVersionProvider;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * {@code --version} of every command: the Maven project version and, when the build was given one, the git
 * commit, both from {@code ernic/server/version.properties} (filtered at build time); the jar manifest's
 * {@code Implementation-Version} if that resource is missing or unfiltered; then the Java runtime.
 */
public final class ErnicVersion implements IVersionProvider {
    static final String RESOURCE = "/ernic/server/version.properties";

    /** The version and commit of this build; {@code commit} is empty when the build had none. */
    public record Build(String version, String commit) {
        /** {@code 0.1.0-SNAPSHOT (commit 0123abcd4567)}, or the version alone. */
        public String describe() {
            return commit.isEmpty() ? version : version + " (commit " + commit + ")";
        }
    }

    /** What this build says about itself; version {@code unknown} when neither source has one. */
    public static Build build() {
        Properties p = new Properties();
        try (InputStream in = ErnicVersion.class.getResourceAsStream(RESOURCE)) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            // fall through to the manifest
        }
        String version = filtered(p.getProperty("version"));
        String commit = filtered(p.getProperty("commit"));
        if (version.isEmpty()) {
            String manifest = ErnicVersion.class.getPackage().getImplementationVersion();
            version = manifest == null || manifest.isBlank() ? "unknown" : manifest.strip();
        }
        return new Build(version, commit);
    }

    /** A value Maven filled in, or empty (absent, blank, or still a {@code ${...}} placeholder). */
    private static String filtered(String v) {
        return v == null || v.isBlank() || v.contains("${") ? "" : v.strip();
    }

    @Override
    public String[] getVersion() {
        return new String[] {
            "ernic " + build().describe(),
            "Java " + Runtime.version() + " (" + System.getProperty("java.vendor", "unknown vendor") + ")"
        };
    }
}
