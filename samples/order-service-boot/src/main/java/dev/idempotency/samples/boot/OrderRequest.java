package dev.idempotency.samples.boot;

/**
 * An order as a client sends it. The approval number is the business identity of the intent: a retry of the same
 * order carries the same one.
 */
public record OrderRequest(String approvalNo, String item, int quantity) {
}
