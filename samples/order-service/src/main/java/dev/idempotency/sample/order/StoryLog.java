package dev.idempotency.sample.order;

import java.io.PrintStream;
import java.util.concurrent.TimeUnit;

/** The lines of the story, client's and server's alike, stamped with the milliseconds since the approval began. */
final class StoryLog {

    private final PrintStream out;
    private volatile long start = System.nanoTime();

    StoryLog(PrintStream out) {
        this.out = out;
    }

    /** Time zero: the approval arrives. */
    void restart() {
        start = System.nanoTime();
    }

    void line(String line) {
        out.printf("[%5d ms] %s%n", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), line);
    }
}
