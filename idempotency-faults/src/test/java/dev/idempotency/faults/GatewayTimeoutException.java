package dev.idempotency.faults;

/** The gateway did not answer: whether the payout went out is unknown (not in {@code releaseOn}). */
public class GatewayTimeoutException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public GatewayTimeoutException(String message) {
        super(message);
    }
}
