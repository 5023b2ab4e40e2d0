package ernic.it.harness;

import org.testcontainers.DockerClientFactory;

/** The real-guest image that {@code ./ernic guest build} makes. */
public final class GuestImage {
    private GuestImage() {}

    static {
        // We turn Testcontainers' reaper container off on purpose (its image comes from a registry, and
        // Leftovers does its job); its warning about that would only alarm a user.
        if (org.slf4j.LoggerFactory.getLogger("org.testcontainers.utility.ResourceReaper")
                instanceof ch.qos.logback.classic.Logger l) {
            l.setLevel(ch.qos.logback.classic.Level.ERROR);
        }
    }

    public static final String NAME = System.getenv().getOrDefault("ERNIC_GUEST_IMAGE", "ernic-guest:latest");

    /**
     * Null when a docker engine answers and the image is there; otherwise what is missing, in words
     * a person can act on.
     */
    public static String missing() {
        try {
            if (!DockerClientFactory.instance().isDockerAvailable()) {
                return "no docker engine answers (install docker.io and start dockerd, or run .ci/run)";
            }
            DockerClientFactory.instance().client().inspectImageCmd(NAME).exec();
            return null;
        } catch (com.github.dockerjava.api.exception.NotFoundException e) {
            return "the guest image " + NAME + " is not built (run ./ernic guest build)";
        } catch (RuntimeException e) {
            return "docker is not usable: " + e.getMessage();
        }
    }
}
