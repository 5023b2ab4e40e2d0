package ernic.server;

import ernic.mesh.MeshNode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The backend registry: each form parsed, every other refused with one line. */
class BackendsTest {
    @Test
    void theFormsParse() {
        assertThat(Backends.parse(null)).isInstanceOf(Backend.Loopback.class);
        assertThat(Backends.parse("loopback")).isInstanceOf(Backend.Loopback.class);
        assertThat(Backends.parse("none")).isInstanceOf(Backend.None.class);
        Backend mesh = Backends.parse("tcp:manager:listen:7400");
        assertThat(mesh.mesh().role()).isEqualTo(MeshNode.Role.MANAGER);
        assertThat(mesh.form()).isEqualTo("tcp:manager:listen:7400");
        assertThat(Backends.parse("tcp:worker:[::1]:7400").mesh().role()).isEqualTo(MeshNode.Role.WORKER);
        Backend small = Backends.parse("tcp:worker:[::1]:7400,queue=64K");
        assertThat(small.mesh().queueBytes()).isEqualTo(64 << 10);
        assertThat(small.form()).isEqualTo("tcp:worker:[::1]:7400,queue=64K");
        assertThat(Backends.parse("none").needsIonic()).isTrue();
        assertThat(Backends.parse("loopback").needsIonic()).isFalse();
    }

    @Test
    void othersAreRefusedInOneLine() {
        assertThatThrownBy(() -> Backends.parse("rxe")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--backend rxe: expected one of " + Backends.usage());
        assertThatThrownBy(() -> Backends.parse("none:x")).hasMessage("--backend none takes no argument (got none:x)");
        assertThatThrownBy(() -> Backends.parse("tcp")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Backends.parse("")).isInstanceOf(IllegalArgumentException.class);
        assertThat(Backends.usage()).isEqualTo("loopback, none, tcp:manager:listen:PORT[,secret=FILE,queue=BYTES],"
                + " tcp:worker:HOST:PORT[,secret=FILE,queue=BYTES],"
                + " nvmeof[:size=SIZE,bs=512|1024|2048|4096,file=PATH,nqn=NQN,ip=ADDR,port=PORT,queues=N,nsid=N,"
                + "model=TEXT,serial=TEXT],"
                + " s3[:bucket=NAME,size=SIZE,objects=N,ip=ADDR,port=PORT,maxpart=SIZE,access=KEY,secret=KEY,"
                + "reply=status|compat]");
        assertThatThrownBy(() -> Backends.parse("nvmeof:size=bogus")).hasMessage("nvmeof backend: bad size 'bogus'");
    }

    @Test
    void theHelpShowsEveryFormFromItsOwnGrammar() {
        java.io.StringWriter out = new java.io.StringWriter();
        new picocli.CommandLine(new ServeCommand()).usage(new java.io.PrintWriter(out));
        String help = out.toString().replaceAll("\\s+", ""); // the help wraps long forms after their commas
        assertThat(help).contains(ernic.nvmeof.NvmeofOptions.GRAMMAR.usage()).contains(ernic.s3.S3Options.GRAMMAR.usage())
                .contains("tcp:worker:HOST:PORT[,secret=FILE,queue=BYTES]").contains("--backend=SPEC");
    }

    @Test
    void everyKeyOfAGrammarIsParsed() {
        // A key the grammar shows but the parser has no case for would be an IllegalStateException here.
        assertThat(ernic.nvmeof.NvmeofOptions.GRAMMAR.keys()).allSatisfy(k -> assertThatThrownBy(
                () -> Backends.parse("nvmeof:" + k.name() + "=\u0000")).isInstanceOf(IllegalArgumentException.class)
                .isNotInstanceOf(IllegalStateException.class));
        assertThat(ernic.s3.S3Options.GRAMMAR.keys()).allSatisfy(k -> assertThatThrownBy(
                () -> Backends.parse("s3:" + k.name() + "=\u0000")).isInstanceOf(IllegalArgumentException.class));
    }
}
