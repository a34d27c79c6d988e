package dev.idempotency.spring.edges;

import dev.idempotency.IdempotencyIgnore;
import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import dev.idempotency.spring.tiers.Tables;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;

/**
 * Methods at the edges of the transaction model. Business writes are rows of the ledger table (they commit or roll
 * back with the caller's transaction); external effects (a charge, a payout) are entries of {@link #effects}, which no
 * rollback undoes.
 */
public class EdgeService {

    final List<String> effects = new CopyOnWriteArrayList<>();
    final List<String> compensations = new CopyOnWriteArrayList<>();
    /** How the next payout of a key ends: "ok", "refused" (nothing happened) or "timeout" (unknown). */
    final Map<String, String> payoutEnds = new ConcurrentHashMap<>();
    final Map<String, CountDownLatch> slowStarted = new ConcurrentHashMap<>();
    private final JdbcTemplate jdbc;
    private final Tables tables;

    EdgeService(JdbcTemplate jdbc, Tables tables) {
        this.jdbc = jdbc;
        this.tables = tables;
    }

    @Idempotent(key = "'ORDER:' + #id", tier = Tier.REVERSIBLE, compensate = "refund")
    @Transactional
    public String order(String id) {
        write("order", id);
        effects.add("charge:" + id);
        return "order-" + id;
    }

    public void refund(String id, String receipt) {
        compensations.add(receipt);
    }

    @Idempotent(key = "'CHECKED:' + #id", tier = Tier.REVERSIBLE)
    @Transactional
    public String orderOrFailChecked(String id, boolean fail) throws IOException {
        write("checked", id);
        if (fail) {
            throw new IOException("the warehouse said no to " + id);
        }
        return "order-" + id;
    }

    @Idempotent(key = "'PAYOUT:' + #id", tier = Tier.IRREVERSIBLE, releaseOn = GatewayRefusedException.class)
    @Transactional
    public String payout(String id) {
        String end = payoutEnds.getOrDefault(id, "ok");
        if (end.equals("refused")) {
            throw new GatewayRefusedException("the gateway refused " + id + " before acting");
        }
        effects.add("payout:" + id);
        if (end.equals("timeout")) {
            throw new IllegalStateException("gateway timeout for " + id);
        }
        write("payout", id);
        return "paid-" + id;
    }

    /** Runs {@code millis} with no transaction, far past its lock timeout and lease. */
    @Idempotent(key = "'SLOW:' + #id", tier = Tier.REVERSIBLE, lockTimeout = "200ms", lease = "300ms")
    public String slow(String id, @IdempotencyIgnore long millis) throws InterruptedException {
        effects.add("slow:" + id);
        slowStarted.computeIfAbsent(id, k -> new CountDownLatch(1)).countDown();
        // the work itself: a latch nobody counts down stands for a long computation or a slow remote call
        new CountDownLatch(1).await(millis, TimeUnit.MILLISECONDS);
        return "slow-" + id;
    }

    @Idempotent(key = "'RO:' + #id", tier = Tier.REVERSIBLE)
    @Transactional(readOnly = true)
    public String inReadOnlyTransaction(String id) {
        effects.add("read-only:" + id);
        return "ro-" + id;
    }

    // the test reaches the service through its proxy, whose own fields are empty: these methods reach the target's

    public List<String> compensations() {
        return compensations;
    }

    public void endPayout(String id, String how) {
        payoutEnds.put(id, how);
    }

    public void onSlowStart(String id, CountDownLatch started) {
        slowStarted.put(id, started);
    }

    public int ledgerRows(String kind, String id) {
        Integer n = jdbc.queryForObject("SELECT COUNT(*) FROM " + tables.ledger() + " WHERE kind = ? AND ref = ?",
                Integer.class, kind, id);
        return n == null ? 0 : n;
    }

    public long effects(String effect) {
        return effects.stream().filter(effect::equals).count();
    }

    private void write(String kind, String id) {
        jdbc.update("INSERT INTO " + tables.ledger() + " (entry_id, kind, ref) VALUES (?, ?, ?)",
                UUID.randomUUID().toString(), kind, id);
    }

    /** The gateway refused before doing anything: safe to release the key. */
    public static class GatewayRefusedException extends RuntimeException {
        public GatewayRefusedException(String message) {
            super(message);
        }
    }
}
