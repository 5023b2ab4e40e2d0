package ernic.server;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code ernic} command line. */
@Command(name = "ernic", mixinStandardHelpOptions = true, versionProvider = ErnicVersion.class,
        description = "A userspace vfio-user server that emulates an AMD Pensando ionic RDMA NIC.")
public final class Main implements Runnable {
    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }

    public static void main(String[] args) {
        System.exit(commandLine(args.length > 0 ? args[0] : null).execute(args));
    }

    /**
     * The command line with its subcommands; when {@code first} names one, with that one alone. picocli reflects
     * over every command it is given, and its classes (Java 5 class files) cannot go in the AOT cache: {@code serve}
     * opens its socket sooner when the model of {@code p4} is not built first.
     */
    static CommandLine commandLine(String first) {
        CommandLine cl = new CommandLine(new Main());
        if (!"p4".equals(first)) {
            cl.addSubcommand(new CommandLine(new ServeCommand())); // its own CommandLine applies its model transformer
        }
        if (!"serve".equals(first)) {
            cl.addSubcommand(new CommandLine(new P4Command()));
        }
        return cl;
    }
}
