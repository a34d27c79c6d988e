package dev.idempotency.codec;

import java.lang.reflect.Type;
import org.jspecify.annotations.Nullable;

/**
 * Turns a method's result into bytes for the store and back into the method's declared type on a replay.
 * Implementations never name a class to instantiate in the bytes they write and never trust one in the bytes
 * they read: the declared type (and an allow-list, where the declared type is abstract) decides what is built.
 *
 * <p>The byte {@code 0x00} is reserved as the first byte of a recorded business exception
 * ({@link dev.idempotency.Idempotent#replayExceptions()}): {@link #encode} must never return bytes that start with
 * it (no JSON text does), and the executor refuses, without recording, a value that does.
 */
public interface ResultCodec {

    /**
     * Refuses, once when an operation is first seen, a declared return type whose values cannot be replayed
     * ({@code Stream}, {@code Iterator}, {@code InputStream}, ...).
     *
     * @throws dev.idempotency.IdempotencyReplayException naming the type and why
     */
    default void checkReplayable(Type declaredType) {
    }

    /**
     * Encodes a result of the declared type.
     *
     * @throws dev.idempotency.IdempotencyReplayException if the value cannot be encoded
     */
    byte[] encode(@Nullable Object value, Type declaredType);

    /**
     * Decodes bytes written by {@link #encode} into the declared type.
     *
     * @throws dev.idempotency.IdempotencyReplayException if the bytes are unreadable or do not fit the type
     */
    @Nullable Object decode(byte[] data, Type declaredType);

    /**
     * Whether every value {@link #decode} returns for {@code declaredType} is immutable at every depth (nothing any
     * holder could change), so that one decoded value may be handed to several replays of the same recorded bytes
     * instead of decoding them each time: the executor does so for outcomes answered by the pre-filter. False unless
     * the codec knows; a wrong {@code true} would let one caller's change to a replayed value reach another's.
     */
    default boolean decodesImmutable(Type declaredType) {
        return false;
    }
}
