package dev.idempotency.faults;

/** A checked business exception: under Spring's default rules it would let the transaction commit. */
public class OrderRejectedException extends Exception {

    private static final long serialVersionUID = 1L;

    public OrderRejectedException(String message) {
        super(message);
    }
}
