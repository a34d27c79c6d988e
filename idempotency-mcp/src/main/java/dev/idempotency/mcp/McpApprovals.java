package dev.idempotency.mcp;

import dev.idempotency.ResolvedBy;
import dev.idempotency.Tier;
import dev.idempotency.mcp.McpConfirmations.Answer;
import dev.idempotency.mcp.McpConfirmations.Pending;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The approver flow of token calls: each call that got a confirmation token is recorded as pending (and listed in an
 * index slot), an approver's approval is kept until the token expires, and the call sent again with its token uses
 * it. The public face is {@link McpConfirmations}' {@code pending}, {@code approval} and {@code approve}.
 */
final class McpApprovals {

    private final ConfirmationRecords records;
    private final RecordedAnswers answers;
    private final boolean tokens;

    McpApprovals(ConfirmationRecords records, RecordedAnswers answers, boolean tokens) {
        this.records = records;
        this.answers = answers;
        this.tokens = tokens;
    }

    /** A pending call as the store keeps it: with how long its answers are kept (the tool's ttl). */
    record Waiting(Pending pending, Duration retention) {
    }

    /** What an index slot holds: which pending call it lists. */
    record Listed(String principal, String operation, String key) {
    }

    Optional<Pending> pending(String principal, String operation, String key) {
        IdempotencyRecord found = records.live(pendingId(principal, operation, key));
        if (found == null || found.result() == null) {
            return Optional.empty();
        }
        Waiting waiting = waiting(found.result());
        return waiting.pending().expiresAt().isAfter(records.now()) ? Optional.of(waiting.pending())
                : Optional.empty();
    }

    List<Pending> pending(int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("pending(" + limit + "): the limit must be at least 1");
        }
        List<Pending> waiting = new ArrayList<>();
        Set<Listed> seen = new HashSet<>();
        for (int n = 0; n < McpConfirmations.MAX_LISTED_PENDING; n++) {
            IdempotencyRecord slot = records.live(indexId(n));
            if (slot == null || slot.result() == null || slot.result().length == 0) {
                continue;
            }
            Listed listed = ConfirmationRecords.json(slot.result(), Listed.class,
                    "an index slot of the calls waiting for an approver");
            if (seen.add(listed)) {
                pending(listed.principal(), listed.operation(), listed.key()).ifPresent(waiting::add);
            }
        }
        waiting.sort(Comparator.comparing(Pending::requestedAt));
        return List.copyOf(waiting.subList(0, Math.min(limit, waiting.size())));
    }

    Optional<Answer> approval(Pending pending) {
        IdempotencyRecord found = approvalOf(pending.principal(), pending.operation(), pending.key(),
                pending.argumentDigest());
        return found == null || found.result() == null ? Optional.empty()
                : Optional.of(RecordedAnswers.decode(found.result()));
    }

    /** The approval given to this exact call and not yet used, or null. */
    @Nullable IdempotencyRecord approvalOf(String principal, String operation, String key, String argumentDigest) {
        return records.live(approvalId(principal, operation, key, argumentDigest));
    }

    /**
     * Uses the approval for the run of its call (whose token was just consumed): true for the first caller only; the
     * call is then no longer pending.
     */
    boolean use(IdempotencyRecord approval, String principal, String operation, String key) {
        IdempotencyStore store = records.store();
        if (!store.resolve(approval, null, approval.expiresAt())) {
            return false;
        }
        store.find(pendingId(principal, operation, key))
                .ifPresent(pending -> store.resolve(pending, null, pending.expiresAt()));
        return true;
    }

    Answer approve(String principal, String operation, String key, String argumentDigest, ResolvedBy by) {
        Objects.requireNonNull(principal, "principal");
        Objects.requireNonNull(argumentDigest, "argumentDigest");
        Objects.requireNonNull(by, "by");
        if (!tokens) {
            throw new IllegalStateException("approve(" + operation + ", '" + key + "'): this gate gives no"
                    + " confirmation tokens (McpConfirmations.Builder.tokens(true)), so no call waits for an approver");
        }
        if (by.actor().equals(principal)) {
            throw new IllegalArgumentException("approve(" + operation + ", '" + key + "'): the approver '"
                    + by.actor() + "' is the MCP principal that made the call; another person must approve it");
        }
        IdempotencyRecord found = records.live(pendingId(principal, operation, key));
        Waiting waiting = found == null || found.result() == null ? null : waiting(found.result());
        if (waiting == null || !waiting.pending().argumentDigest().equals(argumentDigest)
                || !waiting.pending().expiresAt().isAfter(records.now())) {
            throw new IllegalStateException("approve(" + operation + ", '" + key + "'): no call of principal '"
                    + principal + "' with these arguments (digest " + argumentDigest + ") waits for an approver: it"
                    + " ran, its token expired, or it was sent again with other arguments");
        }
        Pending pending = waiting.pending();
        byte[] id = approvalId(principal, operation, key, argumentDigest);
        IdempotencyRecord earlier = records.live(id);
        if (earlier != null && earlier.result() != null) {
            return RecordedAnswers.decode(earlier.result());
        }
        Map<String, Object> content = new LinkedHashMap<>();
        content.put("approvedBy", by.actor());
        content.put("reason", by.reason());
        Answer answer = new Answer(McpConfirmations.APPROVE, true, principal, pending.tool(), operation, key,
                argumentDigest, records.nowMillis(), content, pending.shown());
        records.put(id, McpConfirmations.APPROVAL_OPERATION, ConfirmationRecords.json(answer), pending.expiresAt());
        answers.record(answer, waiting.retention());
        return answer;
    }

    /** Records the call that just got a token expiring at {@code expiresAt}, so that an approver finds it. */
    void pend(McpCall mcp, String operation, String key, Instant expiresAt) {
        Pending pending = new Pending(mcp.principal(), mcp.tool(), operation, key, mcp.argumentDigest(),
                mcp.shown(), records.nowMillis(), expiresAt);
        records.put(pendingId(mcp.principal(), operation, key), McpConfirmations.PENDING_OPERATION,
                ConfirmationRecords.json(new Waiting(pending, mcp.ttl())), expiresAt);
        index(new Listed(mcp.principal(), operation, key), expiresAt);
    }

    /**
     * Lists the pending call in an index slot until {@code until}: the slot that lists it already (kept until the
     * later of its expiry and {@code until}), else the first free or expired one. One read per slot; a call that
     * cannot be listed is logged and waits all the same.
     */
    private void index(Listed listed, Instant until) {
        IdempotencyStore store = records.store();
        byte[] data = ConfirmationRecords.json(listed);
        for (int attempt = 0; attempt < 5; attempt++) {
            Instant now = records.nowMillis();
            int free = -1;
            IdempotencyRecord freeSlot = null;
            boolean raced = false;
            for (int n = 0; n < McpConfirmations.MAX_LISTED_PENDING && !raced; n++) {
                Optional<IdempotencyRecord> found = store.find(indexId(n));
                if (found.isEmpty()) {
                    if (free < 0) {
                        free = n;
                    }
                    continue;
                }
                IdempotencyRecord slot = found.get();
                boolean live = slot.status() == IdempotencyRecord.Status.COMPLETED && !slot.isExpired(now);
                if (live && Arrays.equals(slot.result(), data)) {
                    if (slot.expiresAt().isBefore(until) && !store.resolve(slot, data, until)) {
                        raced = true;
                        continue;
                    }
                    return;
                }
                if (free < 0 && slot.status() == IdempotencyRecord.Status.COMPLETED && !live) {
                    free = n;
                    freeSlot = slot;
                }
            }
            if (raced) {
                continue;
            }
            if (free < 0) {
                System.getLogger(McpConfirmations.class.getName()).log(System.Logger.Level.WARNING, "not listed: "
                        + McpConfirmations.MAX_LISTED_PENDING + " calls wait for an approver already; "
                        + listed.operation() + " key '" + listed.key() + "' of principal '" + listed.principal()
                        + "' is approvable by pending(principal, operation, key) only");
                return;
            }
            byte[] id = indexId(free);
            if (freeSlot != null) {
                if (store.resolve(freeSlot, data, until)) {
                    return;
                }
                continue;
            }
            if (records.claim(id, McpConfirmations.PENDING_OPERATION, Tier.REVERSIBLE, now, until,
                    Duration.ofSeconds(1)) && store.complete(id, until, data, until)) {
                return;
            }
        }
        // the call waits all the same: only the list misses it
        System.getLogger(McpConfirmations.class.getName()).log(System.Logger.Level.WARNING, "not listed: the "
                + listed.operation() + " call of key '" + listed.key() + "' of principal '" + listed.principal()
                + "' lost its index slot to concurrent calls 5 times; it is approvable by pending(principal,"
                + " operation, key) only");
    }

    private static Waiting waiting(byte[] data) {
        return ConfirmationRecords.json(data, Waiting.class, "a call waiting for an approver in the store");
    }

    private static byte[] indexId(int slot) {
        return ConfirmationRecords.id("pending-index|" + slot);
    }

    private static byte[] pendingId(String principal, String operation, String key) {
        return ConfirmationRecords.id("pending|" + ConfirmationRecords.fields(principal, operation, key));
    }

    private static byte[] approvalId(String principal, String operation, String key, String argumentDigest) {
        return ConfirmationRecords.id("approval|" + ConfirmationTokens.binding(principal, operation, key,
                argumentDigest));
    }
}
