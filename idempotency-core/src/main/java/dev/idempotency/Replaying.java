package dev.idempotency;

import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.internal.RecordedExceptions;
import dev.idempotency.store.IdempotencyRecord;

/**
 * Answers a call from its key's completed record ({@code docs/engine.md}, state {@code Replay}): the recorded value,
 * decoded (from the pre-filter's decoded values when it held the record), or a new instance of the recorded
 * exception. Runs nothing and writes nothing; a record that cannot be read back is an
 * {@link IdempotencyReplayException}.
 */
final class Replaying {

    private Replaying() {
    }

    /**
     * Replays {@code record} as the outcome of {@code call}, and publishes it.
     *
     * @param cached whether the pre-filter held the record ({@link Outcome#REPLAYED_CACHED})
     */
    static <T> T replay(IdempotentCall<T, ?> call, IdempotencyRecord record, boolean cached) {
        IdempotentOperation<T> op = call.op;
        String readable = call.identity().readable();
        byte[] data = record.result();
        if (data == null) {
            throw call.fail(Outcome.FAILED, new IdempotencyReplayException(op.description()
                    + ": the completed record of key '" + readable + "' holds no result"));
        }
        if (RecordedExceptions.isException(data)) {
            Throwable recorded = recordedException(call, data);
            call.publish(cached ? Outcome.REPLAYED_CACHED : Outcome.REPLAYED);
            throw Replaying.<RuntimeException>sneaky(recorded);
        }
        Object value;
        try {
            value = cached ? call.engine.decoded.decode(record, data, op.resultType().type())
                    : call.engine.codec.decode(data, op.resultType().type());
        } catch (IdempotencyReplayException e) {
            throw call.fail(Outcome.FAILED, new IdempotencyReplayException(op.description() + ": key '" + readable
                    + "': " + e.getMessage(), e));
        }
        call.publish(cached ? Outcome.REPLAYED_CACHED : Outcome.REPLAYED);
        @SuppressWarnings("unchecked")
        T t = (T) value;
        return t;
    }

    /**
     * A new instance of the recorded exception: only a class among the operation's declared replayExceptions,
     * through its public (String) constructor; anything else in the row is an IdempotencyReplayException.
     */
    private static Throwable recordedException(IdempotentCall<?, ?> call, byte[] data) {
        IdempotentOperation<?> op = call.op;
        String readable = call.identity().readable();
        RecordedExceptions.Recorded recorded;
        try {
            recorded = RecordedExceptions.decode(data);
        } catch (IllegalArgumentException e) {
            throw call.fail(Outcome.FAILED, new IdempotencyReplayException(op.description() + ": key '" + readable
                    + "': " + e.getMessage() + " (was the row changed?)", e));
        }
        Class<? extends Throwable> type = op.replayExceptionNamed(recorded.exception());
        if (type == null) {
            throw call.fail(Outcome.FAILED, new IdempotencyReplayException(op.description() + ": key '" + readable
                    + "' recorded the exception " + recorded.exception() + ", which is not among the operation's"
                    + " replayExceptions " + op.replayExceptions().stream().map(Class::getName).toList()
                    + " (was the row changed, or the list since?)"));
        }
        try {
            return type.getConstructor(String.class).newInstance(recorded.message());
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw call.fail(Outcome.FAILED, new IdempotencyReplayException(op.description() + ": key '" + readable
                    + "': cannot make a new " + type.getName() + " through its (String) constructor", e));
        }
    }

    @SuppressWarnings("unchecked")
    private static <X extends Throwable> X sneaky(Throwable t) throws X {
        throw (X) t;
    }
}
