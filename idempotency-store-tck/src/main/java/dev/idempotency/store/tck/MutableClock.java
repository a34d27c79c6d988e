package dev.idempotency.store.tck;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/** A clock that stands still until a test moves it: leases run out and records expire on command. Thread-safe. */
public final class MutableClock extends Clock {

    private final AtomicReference<Instant> now;
    private final ZoneId zone;

    private MutableClock(AtomicReference<Instant> now, ZoneId zone) {
        this.now = now;
        this.zone = zone;
    }

    /** A UTC clock showing {@code start}. */
    public static MutableClock at(Instant start) {
        return new MutableClock(new AtomicReference<>(Objects.requireNonNull(start, "start")), ZoneOffset.UTC);
    }

    /** Moves the clock forward (or back, for a negative amount). */
    public void advance(Duration amount) {
        now.updateAndGet(t -> t.plus(amount));
    }

    /** Sets the clock to {@code instant}. */
    public void set(Instant instant) {
        now.set(Objects.requireNonNull(instant, "instant"));
    }

    @Override
    public Instant instant() {
        return now.get();
    }

    @Override
    public ZoneId getZone() {
        return zone;
    }

    /** A view of the same moving time in another zone. */
    @Override
    public Clock withZone(ZoneId zone) {
        return new MutableClock(now, zone);
    }
}
