package ernic.server;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code ernic} command line. */
@Command(name = "ernic", mixinStandardHelpOptions = true, versionProvider = ErnicVersion.class,
        description = "A userspace vfio-user server that emulates an AMD Pensando ionic RDMA NIC.",
        subcommands = {ServeCommand.class, P4Command.class})
public final class Main implements Runnable {
    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new Main()).execute(args));
    }
}
