package dev.idempotency.sample.order;

import dev.idempotency.web.IdempotentRequestHandlerAdapter;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * The order service's own account of every {@code POST} it received, kept by a servlet filter in front of Spring MVC:
 * the {@code Idempotency-Key} it arrived with and the answer the service produced, whether or not its client was still
 * waiting. This is where the sample checks that every attempt carried the same key.
 */
final class Arrivals implements Filter {

    /** The header the caller numbers its requests with, so that both ends' lines can be matched. */
    static final String REQUEST_NUMBER = "X-Request-No";

    /**
     * One request, as the order service saw it.
     *
     * @param number   the caller's request number, or the order of arrival when the caller sent none (curl)
     * @param key      the {@code Idempotency-Key} header as it arrived, null when there was none
     * @param status   the status the service answered
     * @param replayed whether the answer was the replay of a recorded response
     * @param location the {@code Location} of the order the answer names, null when none
     */
    record Arrival(int number, @Nullable String key, int status, boolean replayed, @Nullable String location) {

        /** The order the answer names, null when none. */
        @Nullable String orderId() {
            return Arrivals.orderId(location);
        }
    }

    /** The order id at the end of a {@code Location} ({@code /orders/ORD-1A2B3C4D}); null for null. */
    static @Nullable String orderId(@Nullable String location) {
        return location == null ? null : location.substring(location.lastIndexOf('/') + 1);
    }

    private final List<String> keys = new CopyOnWriteArrayList<>();
    private final List<Arrival> answered = new CopyOnWriteArrayList<>();
    private final AtomicInteger arrived = new AtomicInteger();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition idle = lock.newCondition();
    private int inFlight;
    private volatile @Nullable StoryLog log;

    /** Where the service tells what it answered; null for silence. */
    void log(@Nullable StoryLog log) {
        this.log = log;
    }

    /** Forgets every request so far (the warm-up's). */
    void clear() {
        keys.clear();
        answered.clear();
        arrived.set(0);
    }

    /** The {@code Idempotency-Key} of every {@code POST} that arrived, in order of arrival ("none" when absent). */
    List<String> keys() {
        return List.copyOf(keys);
    }

    /** The requests the service has answered, in the order it answered them. */
    List<Arrival> answered() {
        return List.copyOf(answered);
    }

    /** Waits until the service has answered every request it received, those whose client gave up included. */
    void awaitIdle(Duration timeout) throws InterruptedException {
        awaitAnswers(0, Duration.ZERO, timeout);
    }

    /**
     * Waits until the service has answered {@code sent} requests (a request its client gave up on may still be on
     * its way in) for at most {@code patience}, then until it has answered every request it received.
     */
    void awaitAnswers(int sent, Duration patience, Duration timeout) throws InterruptedException {
        long start = System.nanoTime();
        lock.lock();
        try {
            while (inFlight > 0 || answered.size() < sent && System.nanoTime() - start < patience.toNanos()) {
                long left = timeout.toNanos() - (System.nanoTime() - start);
                if (left <= 0) {
                    throw new IllegalStateException("the order service still runs " + inFlight + " requests after "
                            + timeout);
                }
                idle.awaitNanos(Math.min(left, inFlight > 0 ? left : patience.toNanos() / 10 + 1));
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        HttpServletResponse response = (HttpServletResponse) res;
        if (!"POST".equals(request.getMethod())) {
            chain.doFilter(req, res);
            return;
        }
        int order = arrived.incrementAndGet();
        String numbered = request.getHeader(REQUEST_NUMBER);
        int number = numbered == null ? order : Integer.parseInt(numbered);
        String key = request.getHeader("Idempotency-Key");
        keys.add(key == null ? "none" : key);
        enter();
        try {
            chain.doFilter(req, res);
        } finally {
            Arrival arrival = new Arrival(number, key, response.getStatus(), "true".equals(response.getHeader(
                    IdempotentRequestHandlerAdapter.DEFAULT_REPLAYED_HEADER)), response.getHeader("Location"));
            answered.add(arrival);
            StoryLog out = log;
            if (out != null) {
                out.line("    order service, request " + number + ": " + describe(arrival));
            }
            leave();
        }
    }

    private static String describe(Arrival a) {
        String order = a.orderId() == null ? "" : " " + a.orderId();
        if (a.replayed()) {
            return a.status() + order + " replayed: the recorded answer, nothing placed";
        }
        if (a.status() == 201) {
            return a.status() + order + " placed";
        }
        return a.status() + " (key " + (a.key() == null ? "none" : a.key()) + ")";
    }

    private void enter() {
        lock.lock();
        try {
            inFlight++;
        } finally {
            lock.unlock();
        }
    }

    private void leave() {
        lock.lock();
        try {
            inFlight--;
            idle.signalAll();
        } finally {
            lock.unlock();
        }
    }
}
