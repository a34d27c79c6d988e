package dev.idempotency.faults;

import dev.idempotency.Tier;
import dev.idempotency.faults.History.Type;
import dev.idempotency.faults.Shop.Misbehaviour;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The randomized storm: many threads, many keys, each logical request retried until it gets a definite answer (an
 * ok value, or "outcome unknown") or runs out of attempts or time, every attempt under a fault chosen by a seeded
 * {@link Random} (the seed is printed; {@code -Dfaults.seed=...} replays the choices). REVERSIBLE requests place
 * orders (the committed row is the effect), IRREVERSIBLE ones pay out (the gateway's log is the effect); several
 * requests per key run at once on different threads. Everything goes into the {@link History}, which the
 * {@link HistoryChecker} then judges with what the database holds after quiescence.
 */
final class Storm {

    /** What the storm did, and the checker's verdict. */
    record Result(long seed, HistoryChecker.Verdict verdict, int otherFaults) {
    }

    /** The faults one attempt may suffer (besides none). */
    enum Fault {
        NONE(null), KILL_CLAIM(Step.CLAIM), KILL_METHOD(Step.METHOD), KILL_RECORD(Step.RECORD),
        KILL_COMMIT(Step.COMMIT), LOST_COMMIT_REPLY(Step.LOST_COMMIT_REPLY), CALLER_ROLLBACK(null),
        SAVEPOINT_ROLLBACK(null), CHECKED_EXCEPTION(null), GATEWAY_REFUSED(null), GATEWAY_TIMEOUT(null);

        final @Nullable Step step;

        Fault(@Nullable Step step) {
            this.step = step;
        }

        /** Faults that only happen to a caller with a transaction of its own around the call. */
        boolean needsCallerTransaction() {
            return this == KILL_COMMIT || this == LOST_COMMIT_REPLY || this == CALLER_ROLLBACK
                    || this == SAVEPOINT_ROLLBACK;
        }
    }

    private static final List<Fault> REVERSIBLE_FAULTS = List.of(Fault.KILL_CLAIM, Fault.KILL_METHOD,
            Fault.KILL_RECORD, Fault.KILL_COMMIT, Fault.LOST_COMMIT_REPLY, Fault.CALLER_ROLLBACK,
            Fault.SAVEPOINT_ROLLBACK, Fault.CHECKED_EXCEPTION);
    private static final List<Fault> IRREVERSIBLE_FAULTS = List.of(Fault.KILL_CLAIM, Fault.KILL_METHOD,
            Fault.KILL_RECORD, Fault.KILL_COMMIT, Fault.LOST_COMMIT_REPLY, Fault.CALLER_ROLLBACK,
            Fault.SAVEPOINT_ROLLBACK, Fault.GATEWAY_REFUSED, Fault.GATEWAY_TIMEOUT);

    /** Requests per key, running at once on different threads. */
    private static final int REQUESTS_PER_KEY = 3;
    private static final int MAX_ATTEMPTS = 25;
    /** The share of attempts that run without a fault, in percent. */
    private static final int CLEAN_PERCENT = 40;

    private record Request(String id, String key, Tier tier, Random random) {
    }

    private static final class Rollback extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Rollback(String message) {
            super(message);
        }
    }

    private final FaultDatabase database;
    private final FaultInjector injector;
    private final FaultApp app;
    private final History history;
    private final ExecutorService threads;
    private final AtomicInteger otherFaults = new AtomicInteger();

    Storm(FaultDatabase database, FaultInjector injector, FaultApp app, History history, ExecutorService threads) {
        this.database = database;
        this.injector = injector;
        this.app = app;
        this.history = history;
        this.threads = threads;
    }

    Result run(int threadCount, int keyCount, Duration budget) {
        long seed = Long.getLong("faults.seed", new Random().nextLong());
        // not the summary line's form ("faults <db>: ..."), which .ci/run greps
        System.out.println("storm on " + database.kind.label + ": seed " + seed + " (replay the choices with"
                + " -Dfaults.seed=" + seed + "), " + threadCount + " threads, " + keyCount + " keys");
        Random random = new Random(seed);
        String prefix = "storm-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        Map<String, Tier> tiers = new LinkedHashMap<>();
        List<Request> requests = new ArrayList<>();
        int n = 0;
        for (int i = 0; i < keyCount; i++) {
            String key = prefix + i;
            Tier tier = i % 2 == 0 ? Tier.REVERSIBLE : Tier.IRREVERSIBLE;
            tiers.put(key, tier);
            for (int r = 0; r < REQUESTS_PER_KEY; r++) {
                requests.add(new Request("r" + (n++), key, tier, new Random(random.nextLong())));
            }
        }
        Collections.shuffle(requests, random);
        Queue<Request> queue = new ConcurrentLinkedQueue<>(requests);
        long deadline = System.nanoTime() + budget.toNanos();
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < threadCount; t++) {
            workers.add(threads.submit(() -> {
                for (Request r; (r = queue.poll()) != null; ) {
                    serve(r, deadline, true);
                }
            }));
        }
        for (Future<?> w : workers) {
            try {
                w.get(budget.toSeconds() + 120, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new IllegalStateException("a storm worker failed", e);
            }
        }
        // quiescence: the storm is over; one more request per key, without faults, until a definite answer (a claim
        // left behind by a crashed attempt is taken over or stopped for review by it, as by any later caller)
        injector.disarmAllKeys();
        Queue<Request> finals = new ConcurrentLinkedQueue<>();
        tiers.forEach((key, tier) -> finals.add(new Request("final-" + key, key, tier, new Random(0))));
        long finalDeadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        workers.clear();
        for (int t = 0; t < threadCount; t++) {
            workers.add(threads.submit(() -> {
                for (Request r; (r = finals.poll()) != null; ) {
                    serve(r, finalDeadline, false);
                }
            }));
        }
        for (Future<?> w : workers) {
            try {
                w.get(60, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new IllegalStateException("a storm worker failed after the storm", e);
            }
        }
        HistoryChecker.Stored stored = HistoryChecker.Stored.read(new JdbcTemplate(database.pool()), database.tables,
                prefix);
        HistoryChecker.Verdict verdict = HistoryChecker.check(history.eventsOf(prefix), tiers, stored.committed(),
                stored.inFlight());
        return new Result(seed, verdict, otherFaults.get());
    }

    private Fault pick(Request r) {
        if (r.random().nextInt(100) < CLEAN_PERCENT) {
            return Fault.NONE;
        }
        List<Fault> faults = r.tier() == Tier.REVERSIBLE ? REVERSIBLE_FAULTS : IRREVERSIBLE_FAULTS;
        return faults.get(r.random().nextInt(faults.size()));
    }

    /** Retries one logical request until a definite answer, MAX_ATTEMPTS, or the deadline. */
    private void serve(Request r, long deadline, boolean faults) {
        for (int attempt = 1; attempt <= MAX_ATTEMPTS && System.nanoTime() < deadline; attempt++) {
            Fault fault = faults ? pick(r) : Fault.NONE;
            boolean callerTransaction = fault.needsCallerTransaction() || r.random().nextBoolean();
            history.add(r.key(), Type.INVOKE, attempt + " " + fault + (callerTransaction ? " in tx" : ""), r.id());
            try {
                String value = attempt(r, fault, callerTransaction);
                if (value != null) {
                    history.add(r.key(), Type.OK, value, r.id());
                    return;
                }
                history.add(r.key(), Type.FAIL, "the savepoint rolled back", r.id());
            } catch (Throwable t) {
                if (AbstractFaultSuite.outcomeUnknownIn(t) != null) {
                    history.add(r.key(), Type.INFO, t.getClass().getSimpleName(), r.id());
                    return;
                }
                history.add(r.key(), Type.FAIL, t.getClass().getSimpleName() + ": " + t.getMessage(), r.id());
            } finally {
                injector.disarm(operation(r), idemKey(r));
                if (Shop.misbehaviourPending()) {
                    Shop.misbehave(null);
                } else if (fault == Fault.CHECKED_EXCEPTION || fault == Fault.GATEWAY_REFUSED
                        || fault == Fault.GATEWAY_TIMEOUT) {
                    otherFaults.incrementAndGet();
                }
            }
        }
    }

    /** One attempt: the call under its fault; its value, or null when a savepoint took it back. */
    private @Nullable String attempt(Request r, Fault fault, boolean callerTransaction) {
        switch (fault) {
            case CHECKED_EXCEPTION -> Shop.misbehave(Misbehaviour.CHECKED_AFTER_WRITE);
            case GATEWAY_REFUSED -> Shop.misbehave(Misbehaviour.REFUSED_BEFORE_EFFECT);
            case GATEWAY_TIMEOUT -> Shop.misbehave(Misbehaviour.TIMEOUT_AFTER_EFFECT);
            default -> {
            }
        }
        Step step = fault.step;
        if (step != null && step != Step.COMMIT && step != Step.LOST_COMMIT_REPLY) {
            injector.arm(step, operation(r), idemKey(r));
        }
        if (!callerTransaction) {
            return call(r);
        }
        return app.tx().execute(status -> {
            if (fault == Fault.SAVEPOINT_ROLLBACK) {
                try {
                    app.nested().executeWithoutResult(nested -> {
                        call(r);
                        otherFaults.incrementAndGet();
                        throw new Rollback("a later step in the nested scope failed");
                    });
                } catch (Rollback expected) {
                    // the outer transaction commits; the request's answer is a failure
                }
                return null;
            }
            String value = call(r);
            if (step == Step.COMMIT || step == Step.LOST_COMMIT_REPLY) {
                injector.arm(step);
            }
            if (fault == Fault.CALLER_ROLLBACK) {
                otherFaults.incrementAndGet();
                throw new Rollback("a later step of the caller failed");
            }
            return value;
        });
    }

    private static String operation(Request r) {
        return r.tier() == Tier.REVERSIBLE ? "Shop.placeOrder" : "Shop.payout";
    }

    private static String idemKey(Request r) {
        return (r.tier() == Tier.REVERSIBLE ? "ORDER:" : "PAY:") + r.key();
    }

    private String call(Request r) {
        try {
            return r.tier() == Tier.REVERSIBLE ? app.shop.placeOrder(r.key()) : app.shop.payout(r.key());
        } catch (OrderRejectedException e) {
            throw sneaky(e);
        }
    }

    @SuppressWarnings("unchecked")
    static <X extends Throwable> RuntimeException sneaky(Throwable t) throws X {
        throw (X) t;
    }
}
