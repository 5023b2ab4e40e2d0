package ernic.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParseResult;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code ernic serve @FILE}: a config file (a picocli argument file) gives the same options as the command line,
 * and the unit's command line with the example file parses to what the example says.
 */
class ConfigFileTest {
    static final Path PACKAGING = Path.of("../packaging");

    /** Every option of {@code serve} after parsing {@code ernic ARGS}, by its longest name. */
    static Map<String, Object> serveOptions(String... args) {
        ParseResult top = Main.commandLine(null).parseArgs(args);
        assertThat(top.subcommand()).isNotNull();
        assertThat(top.subcommand().commandSpec().name()).isEqualTo("serve");
        assertThat(top.subcommand().unmatched()).isEmpty();
        Map<String, Object> values = new LinkedHashMap<>();
        for (OptionSpec o : top.subcommand().commandSpec().options()) {
            Object v = o.getValue();
            values.put(o.longestName(), v instanceof List<?> l ? List.copyOf(l) : v);
        }
        return values;
    }

    @Test
    void aConfigFileParsesExactlyLikeTheSameOptionsOnTheCommandLine(@TempDir Path dir) throws IOException {
        String[] options = {
            "--socket-group-access", "--device", "ionic", "--nic-profile", "compat,25g",
            "--inject", "rx-lost:every=20", "--inject", "tx-drop:burst=2/10",
            "--tap", "ernic0", "--mac", "02:ee:00:00:00:01", "--stats-file", "/var/lib/ernic/a b.json",
            "--backend", "nvmeof:size=64M,bs=4096,nqn=nqn.2026-01.io.ernic:vm1", "--metrics", "[::1]:9464",
            "--log-level", "DEBUG", "--max-data-xfer", "65536"
        };
        Path conf = dir.resolve("vm1.conf");
        Files.writeString(conf, """
                # a whole-line comment
                --socket-group-access
                --device ionic   --nic-profile compat,25g
                --inject rx-lost:every=20
                --inject tx-drop:burst=2/10   # a comment after options

                --tap ernic0 --mac 02:ee:00:00:00:01
                --stats-file "/var/lib/ernic/a b.json"
                --backend nvmeof:size=64M,bs=4096,nqn=nqn.2026-01.io.ernic:vm1
                --metrics [::1]:9464
                --log-level DEBUG
                --max-data-xfer 65536
                """);
        List<String> direct = new ArrayList<>(List.of("serve", "--socket", "/run/ernic/vm1.sock"));
        direct.addAll(Arrays.asList(options));

        Map<String, Object> fromFile = serveOptions("serve", "--socket", "/run/ernic/vm1.sock", "@" + conf);
        Map<String, Object> fromArgs = serveOptions(direct.toArray(String[]::new));
        assertThat(fromFile).isEqualTo(fromArgs);
        // and the values are the intended ones, not two equal sets of defaults
        assertThat(fromFile).containsEntry("--socket", "/run/ernic/vm1.sock")
                .containsEntry("--socket-group-access", true)
                .containsEntry("--inject", List.of("rx-lost:every=20", "tx-drop:burst=2/10"))
                .containsEntry("--stats-file", "/var/lib/ernic/a b.json")
                .containsEntry("--metrics", "[::1]:9464")
                .containsEntry("--max-data-xfer", 65536);
        // the file may also come first: it is spliced in where it stands
        assertThat(serveOptions("serve", "@" + conf, "--socket", "/run/ernic/vm1.sock")).isEqualTo(fromArgs);
    }

    @Test
    void quotesKeepSpacesAndHashesAndAnUnquotedHashStartsAComment(@TempDir Path dir) throws IOException {
        Path conf = dir.resolve("q.conf");
        Files.writeString(conf, """
                --stats-file '/srv/stats #1/vm.json'
                --tap tap#0
                """);
        Map<String, Object> v = serveOptions("serve", "@" + conf);
        assertThat(v).containsEntry("--stats-file", "/srv/stats #1/vm.json").containsEntry("--tap", "tap");
    }

    @Test
    void aSocketInTheFileBesideTheUnitsSocketIsRefused(@TempDir Path dir) throws IOException {
        Path conf = dir.resolve("dup.conf");
        Files.writeString(conf, "--socket /tmp/other.sock\n");
        assertThatThrownBy(() -> serveOptions("serve", "--socket", "/run/ernic/vm1.sock", "@" + conf))
                .isInstanceOf(CommandLine.OverwrittenOptionException.class)
                .hasMessageContaining("--socket").hasMessageContaining("only once");
    }

    @Test
    void aMissingConfigFileIsAUsageErrorWithExitTwo(@TempDir Path dir) {
        ServeCommandTest.refusedIn(dir, "@" + dir.resolve("absent.conf"));
    }

    /** The unit's ExecStart for instance vm1, with the example file where /etc/ernic/vm1.conf would be. */
    @Test
    void theUnitsCommandLineWithTheExampleFileServesWhatTheExampleSays() throws IOException {
        String execStart = ServiceUnitTest.unitLine("ExecStart=");
        List<String> words = new ArrayList<>(List.of(execStart.split(" +")));
        assertThat(words.subList(0, 2)).containsExactly("/opt/ernic/ernic", "serve");
        String[] args = words.subList(1, words.size()).stream()
                .map(w -> w.replace("%i", "vm1"))
                .map(w -> w.equals("@/etc/ernic/vm1.conf") ? "@" + PACKAGING.resolve("ernic.conf.example") : w)
                .toArray(String[]::new);
        assertThat(args).contains("@" + PACKAGING.resolve("ernic.conf.example"));

        Map<String, Object> v = serveOptions(args);
        assertThat(v).containsEntry("--socket", "/run/ernic/vm1.sock")
                .containsEntry("--socket-group-access", true)
                .containsEntry("--device", ErnicServer.DeviceKind.ionic)
                .containsEntry("--nic-profile", "compat")
                .containsEntry("--tap", "ernic-vm1")
                .containsEntry("--backend", "loopback")
                .containsEntry("--stats-file", "/var/lib/ernic/vm1.json")
                .containsEntry("--metrics", "localhost:9464")
                .containsEntry("--log-level", "INFO");
    }
}
