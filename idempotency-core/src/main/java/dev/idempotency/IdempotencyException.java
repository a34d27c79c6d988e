package dev.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * The root of every exception this library throws. Unchecked: a caller decides which ones it maps, and how.
 * The exceptions a caller answers per key ({@link IdempotencyKeyReusedException},
 * {@link IdempotencyInProgressException}, {@link IdempotencyOutcomeUnknownException},
 * {@link ConfirmationRequiredException}) carry the call's {@link #operation()} and readable {@link #key()}; the
 * others name the method and key in their message. None carries the call's arguments, which may hold personal data.
 * <p>
 * A way in (an HTTP door, an MCP tool, a message listener) answers by {@link #kind()}, one {@code switch} over
 * {@link Kind}, rather than by testing classes: a new exception of the library states its kind and every door
 * answers it.
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

    /**
     * What went wrong, as a caller answers it. Each exception of the library states one; a door maps each kind to its
     * own answer (an HTTP status, an MCP error result, a listener's retry or dead letter).
     */
    public enum Kind {
        /** The idempotency key is not accepted (empty, too long, control characters) or cannot be computed. */
        INVALID_KEY,
        /** The key was used before with other arguments: never retry with it. */
        KEY_REUSED,
        /** The first call with the key is still running: retry later with the same key to get its outcome. */
        IN_PROGRESS,
        /** An earlier attempt may have taken effect and awaits a person's review: do not retry. */
        OUTCOME_UNKNOWN,
        /** The call must be confirmed before it runs. */
        CONFIRMATION_REQUIRED,
        /** A recorded outcome could not be read back. */
        REPLAY_FAILED,
        /** The store could not be reached or did not answer: retrying later with the same key is safe. */
        STORE_UNAVAILABLE,
        /** Anything else the library refuses: a misconfigured method, an unusable result. */
        REFUSED
    }

    /** What went wrong, for a door to answer with one {@code switch}; {@link Kind#REFUSED} unless a subclass says. */
    public Kind kind() {
        return Kind.REFUSED;
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
