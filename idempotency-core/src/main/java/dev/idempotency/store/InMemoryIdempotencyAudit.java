package dev.idempotency.store;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;

/**
 * An audit in this JVM's memory, keeping the latest {@code capacity} entries (and, apart, the latest
 * {@code capacity} attempts, at most {@value IdempotencyAudit#ATTEMPTS_KEPT} of one key): the admin's default, for tests and
 * single-process programs. Nothing survives a restart and no other node sees it; a service with a database keeps its
 * audit there ({@code JdbcIdempotencyAudit}).
 */
public final class InMemoryIdempotencyAudit implements IdempotencyAudit {

    /** The capacity of {@link #InMemoryIdempotencyAudit()}. */
    public static final int DEFAULT_CAPACITY = 10_000;

    private final int capacity;
    private final Deque<Keyed> entries = new ArrayDeque<>();
    /** The attempts, the oldest first, at most {@code capacity} of every key together. */
    private final Deque<KeyedAttempt> attempts = new ArrayDeque<>();

    private record KeyedAttempt(byte[] keyHash, Attempt attempt) {
    }

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

    /** Keeps the key's first {@value #ATTEMPTS_KEPT} attempts, and the latest {@code capacity} of all keys. */
    @Override
    public synchronized void attempt(byte[] keyHash, Attempt attempt) {
        if (attempts(keyHash, ATTEMPTS_KEPT).size() >= ATTEMPTS_KEPT) {
            return;
        }
        if (attempts.size() == capacity) {
            attempts.removeFirst();
        }
        attempts.addLast(new KeyedAttempt(keyHash.clone(), attempt));
    }

    @Override
    public synchronized List<Attempt> attempts(byte[] keyHash, int limit) {
        List<Attempt> found = new ArrayList<>();
        for (Iterator<KeyedAttempt> it = attempts.iterator(); it.hasNext() && found.size() < limit; ) {
            KeyedAttempt a = it.next();
            if (Arrays.equals(a.keyHash(), keyHash)) {
                found.add(a.attempt());
            }
        }
        return found;
    }

    @Override
    public synchronized List<Entry> recent(int limit) {
        return entries.stream().limit(limit).map(Keyed::entry).toList();
    }
}
