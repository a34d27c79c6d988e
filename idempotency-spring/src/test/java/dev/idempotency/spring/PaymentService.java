package dev.idempotency.spring;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import java.math.BigDecimal;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.stereotype.Service;

/** An external effect (a charge) that a compensation undoes; reached through its interface only. */
@Service
public class PaymentService implements PaymentGateway {

    /** What the outside world saw: charges made and refunds sent. */
    static final class Ledger {
        final AtomicInteger charges = new AtomicInteger();
        final List<PaymentReceipt> refunds = new CopyOnWriteArrayList<>();
    }

    private final Ledger ledger;

    public PaymentService(Ledger ledger) {
        this.ledger = ledger;
    }

    @Override
    @Idempotent(key = "'PAY:' + #paymentId", tier = Tier.REVERSIBLE, compensate = "refund")
    public PaymentReceipt pay(String paymentId, BigDecimal amount) {
        return new PaymentReceipt(paymentId, amount, ledger.charges.incrementAndGet());
    }

    @Override
    @Idempotent(key = "'WITHDRAW:' + #accountId", tier = Tier.REVERSIBLE,
            replayExceptions = InsufficientFundsException.class)
    public PaymentReceipt withdraw(String accountId, BigDecimal amount) {
        int attempt = ledger.charges.incrementAndGet();
        if (amount.compareTo(BigDecimal.valueOf(100)) > 0) {
            throw new InsufficientFundsException("account " + accountId + " cannot cover " + amount);
        }
        return new PaymentReceipt(accountId, amount, attempt);
    }

    @Override
    public void refund(String paymentId, BigDecimal amount, PaymentReceipt receipt) {
        ledger.refunds.add(receipt);
    }
}
