package dev.idempotency.spring.tiers;

import dev.idempotency.spring.tiers.TierService.Hold;
import java.math.BigDecimal;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** The caller whose own transaction rolls back after the idempotent call returned. */
@Service
public class Checkout {

    /** Thrown after the hold was placed: the checkout's transaction rolls back, the hold with it. */
    public static final class PaymentDeclinedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        private final transient Hold hold;

        PaymentDeclinedException(Hold hold) {
            super("payment declined after hold " + hold);
            this.hold = hold;
        }

        public Hold hold() {
            return hold;
        }
    }

    private final TierService tiers;

    public Checkout(TierService tiers) {
        this.tiers = tiers;
    }

    @Transactional
    public Hold holdThenDecline(String orderNo, BigDecimal amount) {
        Hold hold = tiers.holdFunds(orderNo, amount);
        throw new PaymentDeclinedException(hold);
    }
}
