package ernic.it.fuzz;

/** A finding: the server crashed, wedged or leaked. The message says which and how it showed. */
final class FuzzFailure extends Exception {
    FuzzFailure(String message) {
        super(message);
    }

    FuzzFailure(String message, Throwable cause) {
        super(message, cause);
    }
}
