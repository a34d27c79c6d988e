package dev.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * The root of every exception this library throws. Unchecked: a caller decides which ones it maps, and how.
 * The exceptions a caller answers per key ({@link IdempotencyKeyReusedException},
 * {@link IdempotencyInProgressException}, {@link IdempotencyOutcomeUnknownException},
 * {@link ConfirmationRequiredException}) carry the call's {@link #operation()} and readable {@link #key()}; the
 * others name the method and key in their message. None carries the call's arguments, which may hold personal data.
 */
public class IdempotencyException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final @Nullable String operation;
    private final @Nullable String key;

    public IdempotencyException(String message) {
        this(message, null, null, null);
    }

    public IdempotencyException(String message, @Nullable Throwable cause) {
        this(message, cause, null, null);
    }

    /**
     * @param operation the operation of the call at fault
     * @param key       the readable idempotency key of the call at fault
     */
    protected IdempotencyException(String message, @Nullable Throwable cause, @Nullable String operation,
            @Nullable String key) {
        super(message, cause);
        this.operation = operation;
        this.key = key;
    }

    /** The operation of the call at fault, when the exception concerns one call. */
    public @Nullable String operation() {
        return operation;
    }

    /** The readable idempotency key of the call at fault, when the exception concerns one call. */
    public @Nullable String key() {
        return key;
    }
}
