package dev.idempotency.mcp;

import dev.idempotency.Tier;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * The records {@link McpConfirmations} keeps in the executor's store beside the calls (answers, consumed tokens,
 * pending calls, approvals, index slots): JSON written under an id of its own, read back while unexpired, and
 * numbered slots a record takes the first free one of. Every record is a claim completed at once, under an operation
 * of the gate's, so that the store needs nothing but its usual claim, complete, resolve and find.
 */
final class ConfirmationRecords {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final IdempotencyStore store;
    private final Clock clock;

    ConfirmationRecords(IdempotencyStore store, Clock clock) {
        this.store = store;
        this.clock = clock;
    }

    IdempotencyStore store() {
        return store;
    }

    /** The gate's clock now. */
    Instant now() {
        return clock.instant();
    }

    /** The gate's clock now, to the millisecond the stores keep. */
    Instant nowMillis() {
        return clock.instant().truncatedTo(ChronoUnit.MILLIS);
    }

    /** The id of a record: SHA-256 of {@code text}. */
    static byte[] id(String text) {
        return Canonical.sha256(text.getBytes(StandardCharsets.UTF_8));
    }

    /** The parts, each prefixed with its length, joined by {@code |}: no two lists of parts give the same text. */
    static String fields(String... parts) {
        StringBuilder text = new StringBuilder();
        for (String part : parts) {
            text.append(text.isEmpty() ? "" : "|").append(part.length()).append(':').append(part);
        }
        return text.toString();
    }

    static byte[] json(Object value) {
        return JSON.writeValueAsBytes(value);
    }

    /**
     * @param what what the record is, for the message when it cannot be read ("a call waiting for an approver in the
     *             store")
     */
    static <T> T json(byte[] data, Class<T> type, String what) {
        try {
            return JSON.readValue(data, type);
        } catch (JacksonException e) {
            throw new IllegalStateException(what + " cannot be read: " + e.getOriginalMessage(), e);
        }
    }

    /** Claims {@code id} under {@code operation} until {@code until}: whether this caller got it. */
    boolean claim(byte[] id, String operation, Tier tier, Instant now, Instant until, Duration lease) {
        return store.claim(new ClaimRequest(id, operation, HexFormat.of().formatHex(id, 0, 8), id, tier, now, until,
                until, lease)).isAcquired();
    }

    /** Writes {@code data} under {@code id} until {@code until}, replacing what was there. */
    void put(byte[] id, String operation, byte[] data, Instant until) {
        for (int attempt = 0; attempt < 5; attempt++) {
            if (claim(id, operation, Tier.REVERSIBLE, nowMillis(), until, Duration.ofSeconds(1))) {
                if (store.complete(id, until, data, until)) {
                    return;
                }
                continue;
            }
            Optional<IdempotencyRecord> found = store.find(id);
            if (found.isPresent() && found.get().status() == IdempotencyRecord.Status.COMPLETED
                    && store.resolve(found.get(), data, until)) {
                return;
            }
        }
        throw new IllegalStateException("the store did not keep " + operation + " record "
                + HexFormat.of().formatHex(id, 0, 8) + " after 5 attempts (written concurrently)");
    }

    /** The completed, unexpired record under {@code id}, or null. */
    @Nullable IdempotencyRecord live(byte[] id) {
        Optional<IdempotencyRecord> found = store.find(id);
        return found.isPresent() && found.get().status() == IdempotencyRecord.Status.COMPLETED
                && !found.get().isExpired(clock.instant()) ? found.get() : null;
    }

    /** Writes {@code data} into the first free one of {@code slots} numbered slots; false when all are taken. */
    boolean addToFreeSlot(String operation, byte[] data, Instant now, Instant until, int slots,
            IntFunction<byte[]> slot) {
        for (int n = 0; n < slots; n++) {
            byte[] id = slot.apply(n);
            if (claim(id, operation, Tier.REVERSIBLE, now, until, Duration.ofSeconds(1))) {
                store.complete(id, until, data, until);
                return true;
            }
        }
        return false;
    }

    /** The unexpired records of the numbered slots, in slot order, up to the first slot never taken. */
    <T> List<T> readSlots(int slots, IntFunction<byte[]> slot, Function<byte[], T> decode) {
        List<T> read = new ArrayList<>();
        for (int n = 0; n < slots; n++) {
            Optional<IdempotencyRecord> found = store.find(slot.apply(n));
            if (found.isEmpty()) {
                break;
            }
            byte[] data = found.get().result();
            if (data != null && data.length > 0 && !found.get().isExpired(clock.instant())) {
                read.add(decode.apply(data));
            }
        }
        return List.copyOf(read);
    }
}
