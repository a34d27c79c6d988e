package dev.idempotency.store;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;

/**
 * An audit in this JVM's memory, keeping the latest {@code capacity} entries: the admin's default, for tests and
 * single-process programs. Nothing survives a restart and no other node sees it; a service with a database keeps its
 * audit there ({@code JdbcIdempotencyAudit}).
 */
public final class InMemoryIdempotencyAudit implements IdempotencyAudit {

    /** The capacity of {@link #InMemoryIdempotencyAudit()}. */
    public static final int DEFAULT_CAPACITY = 10_000;

    private final int capacity;
    private final Deque<Keyed> entries = new ArrayDeque<>();

    private record Keyed(byte[] keyHash, Entry entry) {
    }

    /** Keeps the latest {@value #DEFAULT_CAPACITY} entries. */
    public InMemoryIdempotencyAudit() {
        this(DEFAULT_CAPACITY);
    }

    /** Keeps the latest {@code capacity} entries. */
    public InMemoryIdempotencyAudit(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be positive, was " + capacity);
        }
        this.capacity = capacity;
    }

    @Override
    public synchronized void append(byte[] keyHash, Entry entry) {
        if (entries.size() == capacity) {
            entries.removeLast();
        }
        entries.addFirst(new Keyed(keyHash.clone(), entry));
    }

    @Override
    public synchronized List<Entry> history(byte[] keyHash, int limit) {
        List<Entry> found = new ArrayList<>();
        for (Iterator<Keyed> it = entries.iterator(); it.hasNext() && found.size() < limit; ) {
            Keyed e = it.next();
            if (Arrays.equals(e.keyHash(), keyHash)) {
                found.add(e.entry());
            }
        }
        return found;
    }

    @Override
    public synchronized List<Entry> recent(int limit) {
        return entries.stream().limit(limit).map(Keyed::entry).toList();
    }
}
