package dev.idempotency.faults;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Everything that happened, Jepsen-style: every invocation of a logical request, every answer it got ({@code ok}
 * with a value, {@code fail}, or {@code info}: unknown), every effect a method performed and every compensation,
 * each stamped by one clock ({@link System#nanoTime()} of this JVM). Thread-safe; the checker reads it afterwards.
 */
final class History {

    enum Type {
        INVOKE, OK, FAIL, INFO, EFFECT, COMPENSATION
    }

    /**
     * One event.
     *
     * @param nanos  when, on this JVM's {@code nanoTime}
     * @param thread who
     * @param key    the business key (without the operation's prefix)
     * @param type   what
     * @param value  the value of an ok or an effect; the exception or fault of a fail or info
     * @param request the logical request an invocation or answer belongs to; null for effects
     */
    record Event(long nanos, String thread, String key, Type type, @Nullable String value, @Nullable String request) {
    }

    private final ConcurrentLinkedQueue<Event> events = new ConcurrentLinkedQueue<>();
    private volatile @Nullable Consumer<Event> listener;

    void add(String key, Type type, @Nullable String value) {
        add(key, type, value, null);
    }

    void add(String key, Type type, @Nullable String value, @Nullable String request) {
        Event event = new Event(System.nanoTime(), Thread.currentThread().getName(), key, type, value, request);
        events.add(event);
        Consumer<Event> l = listener;
        if (l != null) {
            l.accept(event);
        }
    }

    void effect(String key, String value) {
        add(key, Type.EFFECT, value);
    }

    void compensation(String key, String value) {
        add(key, Type.COMPENSATION, value);
    }

    /** Who is told of every event as it happens (the child JVM prints them for its parent). */
    void listener(Consumer<Event> listener) {
        this.listener = listener;
    }

    List<Event> events() {
        return new ArrayList<>(events);
    }

    /** The events of the keys that start with {@code prefix}: one run's, in a history several runs share. */
    List<Event> eventsOf(String prefix) {
        List<Event> of = new ArrayList<>();
        for (Event e : events) {
            if (e.key().startsWith(prefix)) {
                of.add(e);
            }
        }
        return of;
    }

    /** The events of one key, of one type. */
    List<String> values(String key, Type type) {
        List<String> values = new ArrayList<>();
        for (Event e : events) {
            if (e.key().equals(key) && e.type() == type) {
                values.add(e.value());
            }
        }
        return values;
    }

    long count(String key, Type type) {
        return values(key, type).size();
    }
}
