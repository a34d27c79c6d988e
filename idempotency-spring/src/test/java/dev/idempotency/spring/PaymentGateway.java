package dev.idempotency.spring;

import java.math.BigDecimal;

/** Implemented by a bean reached through a JDK interface proxy. */
public interface PaymentGateway {

    PaymentReceipt pay(String paymentId, BigDecimal amount);

    void refund(String paymentId, BigDecimal amount, PaymentReceipt receipt);

    /** Refuses amounts over 100 with a business exception that is recorded and replayed. */
    PaymentReceipt withdraw(String accountId, BigDecimal amount);

    record PaymentReceipt(String paymentId, BigDecimal amount, int attempt) {
    }
}
