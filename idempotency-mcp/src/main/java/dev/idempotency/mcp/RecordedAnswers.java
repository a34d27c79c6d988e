package dev.idempotency.mcp;

import dev.idempotency.mcp.McpConfirmations.Answer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * The answers given before irreversible calls ran (elicitation, {@code input_required}, an approver's approval), each
 * in a numbered slot of its call and a second time in one of its operation and key, for
 * {@link McpConfirmations#answers}.
 */
final class RecordedAnswers {

    /** At most this many answers are kept per principal, operation and key (each declined one ends a call). */
    static final int MAX_ANSWERS = 64;

    private final ConfirmationRecords records;
    private final Duration ttl;

    /** @param ttl how long an answer is kept when its call gives no retention (the gate's token ttl) */
    RecordedAnswers(ConfirmationRecords records, Duration ttl) {
        this.records = records;
        this.ttl = ttl;
    }

    /**
     * Claims the first free answer slot of the call, and completes it with the answer; then the same in the slots of
     * the operation and key, which {@link #ofKey} reads.
     */
    void record(Answer answer, Duration retention) {
        byte[] data = ConfirmationRecords.json(answer);
        Instant now = records.nowMillis();
        Instant until = now.plus(retention.isZero() ? ttl : retention);
        if (!records.addToFreeSlot(McpConfirmations.ANSWER_OPERATION, data, now, until, MAX_ANSWERS,
                n -> callSlot(answer.principal(), answer.operation(), answer.key(), n))) {
            System.getLogger(McpConfirmations.class.getName()).log(System.Logger.Level.WARNING, "not recorded: "
                    + MAX_ANSWERS + " elicitation answers are kept per call, and " + answer.tool() + " key '"
                    + answer.key() + "' has them all");
            return;
        }
        // a key's slots are full only when its principals answered 64 times: the per-call record above still stands
        records.addToFreeSlot(McpConfirmations.ANSWER_OPERATION, data, now, until, MAX_ANSWERS,
                n -> keySlot(answer.operation(), answer.key(), n));
    }

    List<Answer> ofCall(String principal, String operation, String key) {
        return records.readSlots(MAX_ANSWERS, n -> callSlot(principal, operation, key, n), RecordedAnswers::decode);
    }

    List<Answer> ofKey(String operation, String key) {
        return records.readSlots(MAX_ANSWERS, n -> keySlot(operation, key, n), RecordedAnswers::decode);
    }

    static Answer decode(byte[] data) {
        return ConfirmationRecords.json(data, Answer.class, "an elicitation answer in the store");
    }

    private static byte[] callSlot(String principal, String operation, String key, int n) {
        return ConfirmationRecords.id("answer|" + ConfirmationRecords.fields(principal, operation, key) + "|" + n);
    }

    private static byte[] keySlot(String operation, String key, int n) {
        return ConfirmationRecords.id("key-answer|" + ConfirmationRecords.fields(operation, key) + "|" + n);
    }
}
