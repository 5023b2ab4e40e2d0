package ernic.ionic.fault;

import java.util.Arrays;

/**
 * Which occurrences of an event fail. Occurrences are numbered from 1 since the device's power-on
 * (or its last reset). Patterns never depend on time, so the same workload fails the same way.
 */
public sealed interface FaultPattern {
    /** True when occurrence {@code n} (1-based) fails. */
    boolean matches(long n);

    /** {@code every=N}: occurrences N, 2N, 3N, ... */
    record Every(long n) implements FaultPattern {
        public Every {
            if (n < 1) {
                throw new IllegalArgumentException("every=" + n + ": must be at least 1");
            }
        }

        @Override
        public boolean matches(long k) {
            return k % n == 0;
        }
    }

    /** {@code from=N[,count=C]}: a run of C occurrences starting at the Nth (C omitted: all of them). */
    record Run(long from, long count) implements FaultPattern {
        public static final long FOREVER = Long.MAX_VALUE;

        public Run {
            if (from < 1 || count < 1) {
                throw new IllegalArgumentException("from=" + from + ",count=" + count + ": both must be at least 1");
            }
        }

        @Override
        public boolean matches(long k) {
            return k >= from && k - from < count;
        }
    }

    /** {@code burst=K/M}: the first K occurrences of every M (1..K, M+1..M+K, ...). */
    record Burst(long k, long m) implements FaultPattern {
        public Burst {
            if (k < 1 || m < 1 || k > m) {
                throw new IllegalArgumentException("burst=" + k + "/" + m + ": needs 1 <= K <= M");
            }
        }

        @Override
        public boolean matches(long n) {
            return (n - 1) % m < k;
        }
    }

    /** {@code seq=a,b,c}: exactly these occurrences. */
    record Sequence(long[] occurrences) implements FaultPattern {
        public Sequence {
            occurrences = occurrences.clone();
            Arrays.sort(occurrences);
            if (occurrences.length == 0 || occurrences[0] < 1) {
                throw new IllegalArgumentException("seq: needs one or more occurrence numbers, each at least 1");
            }
        }

        @Override
        public boolean matches(long n) {
            return Arrays.binarySearch(occurrences, n) >= 0;
        }

        @Override
        public long[] occurrences() {
            return occurrences.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Sequence s && Arrays.equals(occurrences, s.occurrences);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(occurrences);
        }

        @Override
        public String toString() {
            return "Sequence" + Arrays.toString(occurrences);
        }
    }
}
