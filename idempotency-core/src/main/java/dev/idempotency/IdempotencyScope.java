package dev.idempotency;

/**
 * Who a key belongs to: a tenant, a principal. The value is mixed into the stored identity, so a key one tenant
 * sends can never replay another tenant's result. Called once per call, on the caller's thread.
 */
@FunctionalInterface
public interface IdempotencyScope {

    /** No scope: every caller shares one key space per operation. */
    IdempotencyScope NONE = () -> "";

    /** The current scope; never null (empty for none). */
    String current();
}
