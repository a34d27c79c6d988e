package dev.idempotency.faults;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;

/**
 * The application's service: {@code @Idempotent} (and {@code @Transactional}) methods whose effects are rows in the
 * suite's business table (REVERSIBLE: the row is the effect, it commits or not with the claim) or entries of the
 * {@link History} (IRREVERSIBLE: a payout at a gateway, which no rollback takes back). Every run gets an attempt id
 * of its own ({@code <node>-<n>}), which is its result: an answer tells which run it comes from.
 *
 * <p>{@link #misbehave} makes the next run on this thread throw at a chosen point.
 */
public class Shop {

    /** What the next run on this thread does wrong. */
    enum Misbehaviour {
        /** {@link #placeOrder}: inserts its row, then throws a checked {@link OrderRejectedException}. */
        CHECKED_AFTER_WRITE,
        /** {@link #payout}: the gateway refuses before acting ({@link GatewayRefusedException}, in releaseOn). */
        REFUSED_BEFORE_EFFECT,
        /** {@link #payout}: the payout goes out, then the gateway times out ({@link GatewayTimeoutException}). */
        TIMEOUT_AFTER_EFFECT
    }

    private static final ThreadLocal<@Nullable Misbehaviour> NEXT = new ThreadLocal<>();

    private final JdbcTemplate jdbc;
    private final Tables tables;
    private final History history;
    private final FaultInjector injector;
    private final Pauses pauses;
    private final String node;
    private final AtomicLong attempts = new AtomicLong();

    public Shop(DataSource dataSource, Tables tables, History history, FaultInjector injector, Pauses pauses,
            String node) {
        this.jdbc = new JdbcTemplate(dataSource);
        this.tables = tables;
        this.history = history;
        this.injector = injector;
        this.pauses = pauses;
        this.node = node;
    }

    static void misbehave(@Nullable Misbehaviour misbehaviour) {
        NEXT.set(misbehaviour);
    }

    /** Whether a misbehaviour set on this thread is still waiting for a run (it did not strike). */
    static boolean misbehaviourPending() {
        return NEXT.get() != null;
    }

    private static boolean next(Misbehaviour m) {
        if (NEXT.get() == m) {
            NEXT.remove();
            return true;
        }
        return false;
    }

    private String attempt() {
        return node + "-" + attempts.incrementAndGet();
    }

    private void insert(String kind, String key, String attempt) {
        jdbc.update("INSERT INTO " + tables.business() + " (id, kind, ref, val) VALUES (?, ?, ?, ?)",
                attempt, kind, key, attempt);
    }

    /** REVERSIBLE, in the caller's transaction or its own: the order row is the effect. */
    @Idempotent(key = "'ORDER:' + #key", tier = Tier.REVERSIBLE, lockTimeout = "300ms", lease = "1s")
    @Transactional
    public String placeOrder(String key) throws OrderRejectedException {
        String attempt = attempt();
        injector.methodStep();
        insert("ORDER", key, attempt);
        history.effect(key, attempt);
        if (next(Misbehaviour.CHECKED_AFTER_WRITE)) {
            throw new OrderRejectedException("order " + key + " rejected after its row was written");
        }
        return attempt;
    }

    /** REVERSIBLE with a compensation: a hold row, released by {@link #releaseHold} after a rollback. */
    @Idempotent(key = "'HOLD:' + #key", tier = Tier.REVERSIBLE, compensate = "releaseHold", lockTimeout = "2s")
    @Transactional
    public String holdFunds(String key) {
        String attempt = attempt();
        injector.methodStep();
        insert("HOLD", key, attempt);
        history.effect(key, attempt);
        return attempt;
    }

    public void releaseHold(String key, String attempt) {
        history.compensation(key, attempt);
    }

    /**
     * IRREVERSIBLE, in the caller's transaction or its own: the payout goes out to a gateway (the history), no
     * rollback takes it back. A refusal before acting releases the key; any other failure leaves it unknown.
     */
    @Idempotent(key = "'PAY:' + #key", tier = Tier.IRREVERSIBLE, lockTimeout = "300ms", lease = "1s",
            releaseOn = GatewayRefusedException.class)
    @Transactional
    public String payout(String key) {
        if (next(Misbehaviour.REFUSED_BEFORE_EFFECT)) {
            throw new GatewayRefusedException("gateway refused payout " + key);
        }
        String attempt = attempt();
        injector.methodStep();
        history.effect(key, attempt);
        if (next(Misbehaviour.TIMEOUT_AFTER_EFFECT)) {
            throw new GatewayTimeoutException("gateway timed out on payout " + key);
        }
        return attempt;
    }

    /** IRREVERSIBLE with no transaction: a message sent; may pause after sending (a crash before the record). */
    @Idempotent(key = "'SEND:' + #key", tier = Tier.IRREVERSIBLE, lockTimeout = "300ms", lease = "1s")
    public String send(String key) {
        String attempt = attempt();
        history.effect(key, attempt);
        pauses.at("SEND:" + key);
        return attempt;
    }

    /**
     * REVERSIBLE with no transaction (a reservation in another system, done again harmlessly after a crash); may
     * pause after acting. Its outcome lives 30 minutes: a clock an hour ahead would think it expired.
     */
    @Idempotent(key = "'RESERVE:' + #key", tier = Tier.REVERSIBLE, lockTimeout = "300ms", lease = "1s", ttl = "30m")
    public String reserve(String key) {
        String attempt = attempt();
        history.effect(key, attempt);
        pauses.at("RESERVE:" + key);
        return attempt;
    }

    /** REVERSIBLE with no transaction, a short lock timeout and lease; may pause far longer than both. */
    @Idempotent(key = "'SLOW:' + #key", tier = Tier.REVERSIBLE, lockTimeout = "200ms", lease = "300ms")
    public String slow(String key) {
        String attempt = attempt();
        history.effect(key, attempt);
        pauses.at("SLOW:" + key);
        return attempt;
    }

    /**
     * REVERSIBLE, transactional, a long lock timeout: the move row, then account A (locks it); may pause between
     * its claim and its update (the deadlock).
     */
    @Idempotent(key = "'MOVE:' + #key", tier = Tier.REVERSIBLE, lockTimeout = "20s")
    @Transactional
    public String move(String key) {
        String attempt = attempt();
        pauses.at("MOVE:" + key);
        jdbc.update("UPDATE " + tables.accounts() + " SET balance = balance + 1 WHERE id = 'A'");
        insert("MOVE", key, attempt);
        history.effect(key, attempt);
        return attempt;
    }
}
