package dev.idempotency.faults;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Holds a method in the middle of its run until the test lets it go: a pause registered for a key stops the first
 * run that reaches {@link #at(String)} with that key (once: a second run passes), tells who waits that it is there,
 * and waits for {@link Pause#release()}.
 */
final class Pauses {

    static final class Pause {
        private final CountDownLatch entered = new CountDownLatch(1);
        private final CountDownLatch released = new CountDownLatch(1);
        private final long maxMillis;

        Pause(long maxMillis) {
            this.maxMillis = maxMillis;
        }

        /** Waits until a run is held here. */
        void awaitEntered() throws InterruptedException {
            if (!entered.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("no run reached the pause within 60s");
            }
        }

        boolean entered() {
            return entered.getCount() == 0;
        }

        void release() {
            released.countDown();
        }
    }

    private final Map<String, Pause> pauses = new ConcurrentHashMap<>();
    private volatile Runnable onEnter = () -> { };

    /** A pause for the next run with {@code key}, held at most a minute. */
    Pause register(String key) {
        return register(key, 60_000);
    }

    Pause register(String key, long maxMillis) {
        Pause pause = new Pause(maxMillis);
        pauses.put(key, pause);
        return pause;
    }

    /** Runs when a run enters a pause (the child JVM says "claimed" to its parent). */
    void onEnter(Runnable onEnter) {
        this.onEnter = onEnter;
    }

    /** The hook of a method: stops here if a pause waits for this key. */
    void at(String key) {
        Pause pause = pauses.remove(key);
        if (pause == null) {
            return;
        }
        pause.entered.countDown();
        onEnter.run();
        try {
            if (!pause.released.await(pause.maxMillis, TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("the pause of " + key + " was never released");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
