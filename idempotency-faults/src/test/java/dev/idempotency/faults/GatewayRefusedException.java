package dev.idempotency.faults;

/** The gateway refused before acting: nothing happened (listed in {@code releaseOn}). */
public class GatewayRefusedException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public GatewayRefusedException(String message) {
        super(message);
    }
}
