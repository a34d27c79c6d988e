package dev.idempotency;

/**
 * The store failed. {@link #methodRan()} says whether the method had run before the failure: if not, a retry is
 * safe; if it had, its outcome may not have been recorded.
 */
public class IdempotencyStoreException extends IdempotencyException {

    private static final long serialVersionUID = 1L;

    private final boolean methodRan;

    public IdempotencyStoreException(String message, boolean methodRan, Throwable cause) {
        super(message + (methodRan ? " (the method ran; its outcome may not be recorded)" : " (the method did not run)"),
                cause);
        this.methodRan = methodRan;
    }

    public boolean methodRan() {
        return methodRan;
    }

    @Override
    public Kind kind() {
        return Kind.STORE_UNAVAILABLE;
    }
}
