package dev.idempotency;

/**
 * The per-operation bound on what a call records ({@link IdempotentOperation#maxResultBytes()}), checked between
 * encoding a result and recording it, so that an oversized result fails the call as an unencodable one does: before
 * the store is asked to hold it (a database may refuse the row only after the method ran, leaving the claim in flight
 * until its lease ends), and before the pre-filter caches it.
 */
final class ResultSize {

    private ResultSize() {
    }

    /**
     * @throws IdempotencyReplayException naming the operation, the size and the limit, if {@code encoded} is larger
     *                                    than the operation allows
     */
    static void check(IdempotentOperation<?> operation, byte[] encoded) {
        if (encoded.length > operation.maxResultBytes()) {
            throw new IdempotencyReplayException(operation.description() + ": the result is " + encoded.length
                    + " bytes once encoded, more than the " + operation.maxResultBytes() + " bytes the operation"
                    + " records (maxResultBytes); nothing was recorded. Return less (an id to fetch the rest by),"
                    + " or raise IdempotentOperation.Builder.maxResultBytes");
        }
    }
}
