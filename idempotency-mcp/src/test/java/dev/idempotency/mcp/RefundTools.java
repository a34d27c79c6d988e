package dev.idempotency.mcp;

import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/** The three tools of the tests, one per tier, counting how often each one's work really ran. */
final class RefundTools {

    record OrderArgs(String orderId) {
    }

    record Order(String orderId, long cents, String status) {
    }

    record HoldArgs(String orderId, long cents) {
    }

    record Hold(String holdId, String orderId, long cents) {
    }

    record RefundArgs(String orderId, long cents) {
    }

    record Receipt(String refundId, String orderId, long cents) {
    }

    /** The gateway said no: nothing happened, so the key is released (releaseOn). */
    public static class GatewayRefusedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public GatewayRefusedException(String message) {
            super(message);
        }
    }

    final AtomicInteger lookups = new AtomicInteger();
    final AtomicInteger holds = new AtomicInteger();
    final AtomicInteger refunds = new AtomicInteger();
    final AtomicBoolean refuseNextRefund = new AtomicBoolean();
    /** When set, the hold waits for it: lets concurrent duplicates arrive while the first one runs. */
    final AtomicReference<CountDownLatch> holdGate = new AtomicReference<>();

    final IdempotentTool<OrderArgs, Order> lookupOrder = IdempotentTool.builder(
            IdempotentOperation.builder("Orders.lookup", Tier.READ_ONLY, ResultType.of(Order.class)).build(),
            OrderArgs.class, a -> {
                lookups.incrementAndGet();
                return new Order(a.orderId(), 4999, "DELIVERED");
            }).name("lookup_order").description("Look up an order").openWorld(false).build();

    final IdempotentTool<HoldArgs, Hold> holdFunds = IdempotentTool.builder(
            IdempotentOperation.builder("Payments.hold", Tier.REVERSIBLE, ResultType.of(Hold.class)).ttl("24h")
                    .build(),
            HoldArgs.class, a -> {
                int n = holds.incrementAndGet();
                CountDownLatch gate = holdGate.get();
                if (gate != null && !gate.await(20, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never opened the hold gate");
                }
                return new Hold("H-" + n, a.orderId(), a.cents());
            }).name("hold_funds").description("Hold funds for an order").build();

    final IdempotentTool<RefundArgs, Receipt> refund = IdempotentTool.builder(
            IdempotentOperation.builder("Payments.refund", Tier.IRREVERSIBLE, ResultType.of(Receipt.class)).ttl("7d")
                    .releaseOn(GatewayRefusedException.class).build(),
            RefundArgs.class, a -> {
                if (refuseNextRefund.getAndSet(false)) {
                    throw new GatewayRefusedException("gateway refused order " + a.orderId());
                }
                int n = refunds.incrementAndGet();
                return new Receipt("R-" + n, a.orderId(), a.cents());
            }).name("refund").description("Refund an order; money leaves, once").build();
}
