package dev.idempotency;

import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One gate per key on this node, so that a flood of duplicates of one key costs the database one waiter: the callers
 * of a key take turns to claim it (or to wait for its owner through the store); the others wait here, in memory.
 * Past {@code maxWaiters} callers of one key at once, the next is refused at once rather than queued, so that a retry
 * storm on one key cannot hold every request thread (and, inside {@code @Transactional}, every pooled connection)
 * for the whole lock timeout. The owner leaves the gate as soon as it holds the key: the gate never spans the method.
 */
final class KeyGates {

    private final ConcurrentMap<ByteBuffer, Gate> gates = new ConcurrentHashMap<>();
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
        ByteBuffer id = ByteBuffer.wrap(keyHash);
        Gate gate = gates.compute(id, (k, g) -> {
            Gate entered = g == null ? new Gate() : g;
            entered.callers++;
            return entered;
        });
        if (gate.callers > maxWaiters) {
            leave(id, gate);
            return null;
        }
        return new Entry(id, gate);
    }

    private void leave(ByteBuffer id, Gate gate) {
        gates.computeIfPresent(id, (k, g) -> g != gate || --g.callers > 0 ? g : null);
    }

    /** How many callers of {@code keyHash} are in its gate now. */
    int callers(byte[] keyHash) {
        Gate gate = gates.get(ByteBuffer.wrap(keyHash));
        return gate == null ? 0 : gate.callers;
    }

    /** The callers of one key; mutated only under the map's lock for its key. */
    private static final class Gate {
        final ReentrantLock turn = new ReentrantLock();
        int callers;
    }

    /** One caller's place at a gate. */
    final class Entry implements AutoCloseable {
        private final ByteBuffer id;
        private final Gate gate;

        private Entry(ByteBuffer id, Gate gate) {
            this.id = id;
            this.gate = gate;
        }

        /** Waits at most {@code nanos} for this caller's turn to talk to the store. */
        boolean awaitTurn(long nanos) throws InterruptedException {
            return gate.turn.tryLock(Math.max(0, nanos), TimeUnit.NANOSECONDS);
        }

        /** Ends this caller's turn (if it has one) and leaves the gate. */
        @Override
        public void close() {
            if (gate.turn.isHeldByCurrentThread()) {
                gate.turn.unlock();
            }
            leave(id, gate);
        }
    }
}
