package dev.idempotency.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;

/**
 * Bytes allocated on this thread by a piece of work: the fast paths of {@link Keys} and {@link Fingerprints} exist to
 * digest from the thread's scratch bytes with no array of their own, which their results alone cannot show (the
 * other way gives the same bytes).
 */
final class Allocation {

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private Allocation() {
    }

    /** The bytes {@code work} allocates per run, averaged over 100 runs after 200 (class loading, lazy fields). */
    static long perRun(Runnable work) {
        assertThat(THREADS.isThreadAllocatedMemorySupported()).as("this JVM counts a thread's allocation").isTrue();
        THREADS.setThreadAllocatedMemoryEnabled(true);
        for (int i = 0; i < 200; i++) {
            work.run();
        }
        long before = THREADS.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 100; i++) {
            work.run();
        }
        return (THREADS.getCurrentThreadAllocatedBytes() - before) / 100;
    }

    /** What a SHA-256 result costs: its 32 bytes and an array header, with room for a larger header. */
    static final long DIGEST_ONLY = 64;
}
