package ernic.ionic.rdma;

/**
 * A program the data path runs on each send WQE (the P4 engine's WQE hook), after the WQE's own memory checks.
 * The data path fills a {@link WqeHeader} and calls {@link #run}; the filter leaves the header as the program
 * deparsed it, in place, so the data path reads the extern the program selected from it. Device thread only.
 */
public interface WqeFilter {
    /**
     * Runs the program over {@code header[0, length)}. False when the program dropped the WQE; otherwise
     * {@code header} holds the header the program emitted (bytes it did not emit are zero).
     */
    boolean run(byte[] header, int length);
}
