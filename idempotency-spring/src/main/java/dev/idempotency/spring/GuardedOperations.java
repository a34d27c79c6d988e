package dev.idempotency.spring;

/**
 * A way in other than {@code @Idempotent} that guards methods of the context, for the startup {@code INFO} line
 * ({@code operations 4 (+2 HTTP)}): idempotency-web's {@code IdempotentRequestHandlerAdapter} is one. The startup check
 * asks every bean of this type, after every singleton is created.
 */
public interface GuardedOperations {

    /** What the line calls these methods, e.g. {@code HTTP}. */
    String guardedKind();

    /** How many methods this way in guards in the context. */
    int guardedCount();
}
