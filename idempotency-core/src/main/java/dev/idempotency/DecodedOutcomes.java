package dev.idempotency;

import dev.idempotency.codec.ResultCodec;
import dev.idempotency.store.IdempotencyRecord;
import java.lang.reflect.Type;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jspecify.annotations.Nullable;

/**
 * The decoded values of the latest outcomes a pre-filter answered, so that a key replayed again from the same cached
 * record is not decoded again: decoding is most of what a replay from memory costs. Only for declared types whose
 * decoded values the codec knows to be immutable at every depth ({@link ResultCodec#decodesImmutable}): handing one
 * such value to several callers is the same as handing each its own copy. A value is reused only for the very record
 * instance it was decoded from (the pre-filter answers each replay of a cached outcome with one instance, and never
 * changes it), so a record the pre-filter dropped and read again is decoded again.
 *
 * <p>Bounded: {@value #SLOTS} slots chosen by the key's hash (a newer outcome takes the slot of an older one), and only
 * results of at most {@value #MAX_RESULT_BYTES} stored bytes. Thread-safe.
 */
final class DecodedOutcomes {

    static final int SLOTS = 256;
    static final int MAX_RESULT_BYTES = 4096;

    private final ResultCodec codec;
    private final AtomicReferenceArray<Slot> slots = new AtomicReferenceArray<>(SLOTS);
    private final Map<Type, Boolean> immutable = new ConcurrentHashMap<>();

    private record Slot(IdempotencyRecord record, Type type, @Nullable Object value) {
    }

    DecodedOutcomes(ResultCodec codec) {
        this.codec = codec;
    }

    /**
     * What {@link ResultCodec#decode} gives for {@code data}, the result of {@code record} as a pre-filter answered it.
     *
     * @throws IdempotencyReplayException as {@link ResultCodec#decode} does
     */
    @Nullable Object decode(IdempotencyRecord record, byte[] data, Type type) {
        if (data.length > MAX_RESULT_BYTES || !isImmutable(type)) {
            return codec.decode(data, type);
        }
        byte[] h = record.keyHash();
        int i = ((h.length > 0 ? h[0] : 0) & 0xff) % SLOTS;
        Slot slot = slots.get(i);
        if (slot != null && slot.record == record && slot.type.equals(type)) {
            return slot.value;
        }
        Object value = codec.decode(data, type);
        slots.set(i, new Slot(record, type, value));
        return value;
    }

    private boolean isImmutable(Type type) {
        Boolean known = immutable.get(type);
        if (known == null) {
            known = codec.decodesImmutable(type);
            immutable.put(type, known);
        }
        return known;
    }
}
