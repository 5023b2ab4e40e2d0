package ernic.p4;

import java.util.function.Consumer;
import ernic.counters.Counters;

/** The program's stateful objects that outlive a frame: registers, counter arrays, and the engine's counters. */
final class Externs {
    final String[] registerNames;
    final int[] registerWidths;
    final long[][] registers;
    final String[] counterNames;
    final long[][] counterPackets;
    final long[][] counterBytes;
    final Counters<P4Counter> counters = new Counters<>(P4Counter.class);
    /** Indirect meter arrays (execute_meter): their specs and cells. Direct meters live on table entries. */
    Meter.Spec[] meterSpecs = new Meter.Spec[0];
    Meter[][] meters = new Meter[0][];
    /** Where log_msg texts go: null on the device (its data path logs nothing per frame); p4 run prints them. */
    Consumer<String> logListener;

    Externs(String[] registerNames, int[] registerWidths, int[] registerSizes, String[] counterNames, int[] counterSizes) {
        this.registerNames = registerNames;
        this.registerWidths = registerWidths;
        this.registers = new long[registerSizes.length][];
        for (int i = 0; i < registerSizes.length; i++) {
            registers[i] = new long[registerSizes[i]];
        }
        this.counterNames = counterNames;
        this.counterPackets = new long[counterSizes.length][];
        this.counterBytes = new long[counterSizes.length][];
        for (int i = 0; i < counterSizes.length; i++) {
            counterPackets[i] = new long[counterSizes[i]];
            counterBytes[i] = new long[counterSizes[i]];
        }
    }

    int register(String name) {
        return indexOf(registerNames, name);
    }

    int meter(String name) {
        for (int i = 0; i < meterSpecs.length; i++) {
            if (meterSpecs[i].name().equals(name)) {
                return i;
            }
        }
        return -1;
    }

    int counter(String name) {
        return indexOf(counterNames, name);
    }

    static int indexOf(String[] names, String name) {
        for (int i = 0; i < names.length; i++) {
            if (names[i].equals(name)) {
                return i;
            }
        }
        return -1;
    }
}
