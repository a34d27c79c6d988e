package dev.idempotency.spring.tiers;

import dev.idempotency.IdempotencyIgnore;
import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import java.math.BigDecimal;
import java.util.UUID;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * One method per row of the tier table. The {@code @Transactional} ones write a ledger row in the caller's (or their
 * own) transaction, so the claim joins it; the others stand for calls to an outside system made with no transaction,
 * where the claim commits on its own and a crash leaves it in flight.
 */
@Service
public class TierService {

    public record Quote(String sku, BigDecimal price) {
    }

    public record OrderPlaced(String orderNo, int quantity, int attempt) {
    }

    public record Reservation(String orderNo, int quantity, int attempt) {
    }

    public record Hold(String orderNo, BigDecimal amount, int attempt) {
    }

    public record RefundReceipt(String refundId, BigDecimal amount, String gatewayRef) {
    }

    public record TransferReceipt(String transferId, BigDecimal amount, int attempt) {
    }

    private final JdbcTemplate jdbc;
    private final Tables tables;
    private final World world;

    public TierService(DataSource dataSource, Tables tables, World world) {
        this.jdbc = new JdbcTemplate(dataSource);
        this.tables = tables;
        this.world = world;
    }

    /** READ_ONLY, even with a key: never claimed, recorded or replayed. */
    @Idempotent(key = "'SKU:' + #sku", tier = Tier.READ_ONLY)
    public Quote quote(String sku) {
        world.quotes.incrementAndGet();
        return new Quote(sku, new BigDecimal("9.90"));
    }

    @Idempotent(key = "'ORDER:' + #orderNo", tier = Tier.REVERSIBLE)
    @Transactional
    public OrderPlaced placeOrder(String orderNo, int quantity) {
        int attempt = world.orders.incrementAndGet();
        write("ORDER", orderNo);
        return new OrderPlaced(orderNo, quantity, attempt);
    }

    /** A stock system's reservation, made with no transaction; a lock timeout long enough for 8 waiting callers. */
    @Idempotent(key = "'RESERVE:' + #orderNo", tier = Tier.REVERSIBLE, lockTimeout = "5s")
    public Reservation reserveStock(String orderNo, int quantity, @IdempotencyIgnore String traceId) {
        return new Reservation(orderNo, quantity, world.reservations.incrementAndGet());
    }

    /** A shipping label printed by a remote printer, with no transaction; a short lock timeout (its lease: 900ms). */
    @Idempotent(key = "'LABEL:' + #shipmentId", tier = Tier.REVERSIBLE, lockTimeout = "300ms")
    public String printLabel(String shipmentId) {
        return "label-" + shipmentId + "-" + world.labels.incrementAndGet();
    }

    /** A hold at a payment gateway, undone by {@link #releaseHold} when the transaction rolls back afterwards. */
    @Idempotent(key = "'HOLD:' + #orderNo", tier = Tier.REVERSIBLE, compensate = "releaseHold")
    @Transactional
    public Hold holdFunds(String orderNo, BigDecimal amount) {
        int attempt = world.holds.incrementAndGet();
        write("HOLD", orderNo);
        return new Hold(orderNo, amount, attempt);
    }

    /** The compensation: the same parameters, then the result. Notes what it could see when it ran. */
    public void releaseHold(String orderNo, BigDecimal amount, Hold hold) {
        world.releases.add(new World.Release(hold, ledgerRows("HOLD", orderNo),
                count("SELECT COUNT(*) FROM " + tables.idempotency() + " WHERE idem_key = ?", "HOLD:" + orderNo) > 0));
    }

    /** A refund sent to a gateway with no transaction: must never be sent twice. */
    @Idempotent(key = "'REFUND:' + #refundId", tier = Tier.IRREVERSIBLE)
    public RefundReceipt refund(String refundId, BigDecimal amount) {
        return new RefundReceipt(refundId, amount, "gw-" + world.refunds.incrementAndGet());
    }

    /** A transfer that the confirmation gate holds back until the caller resends it confirmed. */
    @Idempotent(key = "'TRANSFER:' + #transferId", tier = Tier.IRREVERSIBLE)
    @Transactional
    public TransferReceipt transfer(String transferId, BigDecimal amount, @IdempotencyIgnore String confirmation) {
        int attempt = world.transfers.incrementAndGet();
        write("TRANSFER", transferId);
        return new TransferReceipt(transferId, amount, attempt);
    }

    /** The ledger rows of one kind and reference. */
    public int ledgerRows(String kind, String ref) {
        return count("SELECT COUNT(*) FROM " + tables.ledger() + " WHERE kind = ? AND ref = ?", kind, ref);
    }

    private void write(String kind, String ref) {
        jdbc.update("INSERT INTO " + tables.ledger() + " (entry_id, kind, ref) VALUES (?, ?, ?)",
                UUID.randomUUID().toString(), kind, ref);
    }

    private int count(String sql, Object... args) {
        Integer n = jdbc.queryForObject(sql, Integer.class, args);
        return n == null ? 0 : n;
    }
}
