package dev.idempotency;

import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiFunction;

/**
 * One gate per key on this node, so that a flood of duplicates of one key costs the database one waiter: the callers
 * of a key take turns to claim it (or to wait for its owner through the store); the others wait here, in memory.
 * Past {@code maxWaiters} callers of one key at once, the next is refused at once rather than queued, so that a retry
 * storm on one key cannot hold every request thread (and, inside {@code @Transactional}, every pooled connection)
 * for the whole lock timeout. The owner leaves the gate as soon as it holds the key: the gate never spans the method.
 *
 * <p>Every call passes here, so a gate costs as little as it can: the gate is its own lock and its callers' entry, and
 * the map is changed by functions that capture nothing (a new key is put as a gate with its first caller in it).
 */
final class KeyGates {

    /** One more caller in a gate that is in the map. */
    private static final BiFunction<Id, Entry, Entry> ENTER = (id, gate) -> {
        gate.callers++;
        return gate;
    };

    /**
     * One caller fewer; the gate leaves the map with its last caller. A caller leaves only a gate it entered, which
     * stays in the map while it is in it (its count is not zero), so the gate in the map is always the one it leaves.
     */
    private static final BiFunction<Id, Entry, Entry> LEAVE = (id, gate) -> --gate.callers > 0 ? gate : null;

    private final ConcurrentMap<Id, Entry> gates = new ConcurrentHashMap<>();
    private final int maxWaiters;

    KeyGates(int maxWaiters) {
        this.maxWaiters = maxWaiters;
    }

    /**
     * Enters the gate of {@code keyHash}.
     *
     * @return the entry to {@link Entry#close() close}, or null when {@code maxWaiters} callers of this key are in it
     */
    Entry enter(byte[] keyHash) {
        Id id = new Id(keyHash);
        Entry gate;
        while (true) {
            gate = gates.computeIfPresent(id, ENTER);
            if (gate != null) {
                break;
            }
            Entry fresh = new Entry(id);
            if (gates.putIfAbsent(id, fresh) == null) {
                gate = fresh;
                break;
            }
            // another caller put the key's gate meanwhile: enter that one (or a later one, if it has left already)
        }
        if (gate.callers > maxWaiters) {
            gates.computeIfPresent(id, LEAVE);
            return null;
        }
        return gate;
    }

    /** How many callers of {@code keyHash} are in its gate now. */
    int callers(byte[] keyHash) {
        Entry gate = gates.get(new Id(keyHash));
        return gate == null ? 0 : gate.callers;
    }

    /** A key hash as a map key: its bytes compared by value. */
    private static final class Id {
        private final byte[] hash;
        private final int hashCode;

        Id(byte[] hash) {
            this.hash = hash;
            this.hashCode = Arrays.hashCode(hash);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Id other && Arrays.equals(hash, other.hash);
        }

        @Override
        public int hashCode() {
            return hashCode;
        }
    }

    /**
     * The gate of one key, and the place of each of its callers in it: its lock is the turn to talk to the store.
     * {@code callers} is changed only under the map's lock for its key.
     */
    final class Entry extends ReentrantLock implements AutoCloseable {
        private static final long serialVersionUID = 1L;
        private final transient Id id;
        private int callers = 1;

        private Entry(Id id) {
            this.id = id;
        }

        /** Waits at most {@code nanos} for this caller's turn to talk to the store. */
        boolean awaitTurn(long nanos) throws InterruptedException {
            return tryLock(Math.max(0, nanos), TimeUnit.NANOSECONDS);
        }

        /** Ends this caller's turn (if it has one) and leaves the gate. */
        @Override
        public void close() {
            if (isHeldByCurrentThread()) {
                unlock();
            }
            gates.computeIfPresent(id, LEAVE);
        }
    }
}
