package dev.idempotency.mcp;

import dev.idempotency.ConfirmationGate;
import dev.idempotency.ConfirmationRequiredException;
import dev.idempotency.ResolvedBy;
import dev.idempotency.Tier;
import dev.idempotency.TransactionBridge;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The confirmation gate of irreversible MCP tools: the first execution of an {@link Tier#IRREVERSIBLE} call waits
 * until the user agreed. Give the same instance to the executor ({@code confirmationGate}) and to
 * {@link McpIdempotentTools.Builder#confirmations}.
 *
 * <ul>
 * <li>When the client declared elicitation, the user is asked through the SDK's elicitation request; an accepted
 * {@code confirm = true} runs the call, anything else ends it with {@code confirmation_declined}. Every answer
 * (accepted, declined or cancelled: who, when, the form's content) is recorded in the store beside the call, for as
 * long as the tool's outcome is kept; {@link #answers} reads them back.</li>
 * <li>Otherwise, with {@link Builder#tokens(boolean) tokens(true)}, the first call ends with
 * {@code confirmation_required} and a <b>confirmation token</b>: bound to the
 * principal, the operation, the key, the digest of the arguments and an expiry, protected by an HMAC-SHA256 under the
 * server's secret, and consumed at most once through the store (a claim of its own, under the operation
 * {@value #CONSUMED_OPERATION}). The token names the call and does not confirm it: the same call sent again with the
 * token runs only once an approver (a person other than the caller) approved it through the application
 * ({@link #approve}); before, it gets {@code approval_pending}. A forged, expired, replayed token, or one made for
 * another principal, key or arguments, gets {@code confirmation_required} again with a fresh token.
 * Without tokens (the default), such a client gets {@code confirmation_required} without one, and nothing runs.</li>
 * <li>On 2026-07-28 the question is an {@code input_required} result, the token its request state.</li>
 * </ul>
 * Replays of a recorded outcome never ask (the executor does not consult the gate for them). Calls that do not come
 * through MCP pass through to the {@code otherwise} gate (by default: they run).
 */
public final class McpConfirmations implements ConfirmationGate {

    /** The operation under which consumed tokens are claimed in the store. */
    public static final String CONSUMED_OPERATION = "dev.idempotency/mcp-confirmation";
    /** The operation under which token calls waiting for an approver are recorded in the store. */
    public static final String PENDING_OPERATION = "dev.idempotency/mcp-approval-pending";
    /** The operation under which an approver's approvals, not yet used by their call, are kept in the store. */
    public static final String APPROVAL_OPERATION = "dev.idempotency/mcp-approval";
    /** The {@link Answer#action()} of an approver's approval. */
    public static final String APPROVE = "approve";
    /** The operation under which elicitation answers are recorded in the store. */
    public static final String ANSWER_OPERATION = "dev.idempotency/mcp-elicitation";
    /** At most this many calls waiting for an approver are listed by {@link #pending(int)} at once. */
    public static final int MAX_LISTED_PENDING = 64;

    private final Duration ttl;
    private final boolean elicitation;
    private final boolean tokens;
    private final ConfirmationGate otherwise;
    private final TransactionBridge transactions;
    private final ConfirmationRecords records;
    private final RecordedAnswers answers;
    private final ConfirmationTokens confirmationTokens;
    private final McpApprovals approvals;

    private McpConfirmations(Builder b) {
        this.ttl = b.ttl;
        this.elicitation = b.elicitation;
        this.tokens = b.tokens;
        this.otherwise = b.otherwise;
        this.transactions = b.transactions;
        this.records = new ConfirmationRecords(b.store, b.clock);
        this.answers = new RecordedAnswers(records, b.ttl);
        this.confirmationTokens = new ConfirmationTokens(b.secret, b.ttl, records);
        this.approvals = new McpApprovals(records, answers, b.tokens);
    }

    /**
     * @param secret the HMAC key, at least 32 bytes; the same on every node of the server (a token minted on one is
     *               checked on another)
     * @param store  where tokens are consumed: the executor's store
     */
    public static Builder builder(byte[] secret, IdempotencyStore store) {
        return new Builder(secret, store);
    }

    /** How long a token is valid. */
    public Duration ttl() {
        return ttl;
    }

    boolean usesElicitation() {
        return elicitation;
    }

    /**
     * Whether a client without elicitation gets a confirmation token and its call waits for an approver
     * ({@link Builder#tokens(boolean) tokens(true)}): whether {@link #pending(int)} can list anything, and
     * {@link #approve} approve it.
     */
    public boolean usesTokens() {
        return tokens;
    }

    /** The gate's mode as {@code tools/list} shows it on 2025-11-25. */
    String legacyMode() {
        return elicitation && tokens ? "elicitation_or_token" : elicitation ? "elicitation" : tokens ? "token" : "none";
    }

    @Override
    public void check(Call call) {
        McpCall mcp = McpCall.current();
        if (mcp == null) {
            otherwise.check(call);
            return;
        }
        McpCall.requireScoped(call.operation());
        String token = mcp.confirmationToken();
        if (mcp.answered() != null) {
            checkAnswered(mcp.answered(), token, mcp, call);
            return;
        }
        Instant tokenExpiresAt = tokens && token != null && !confirmationTokens.used(token) ? verify(token, mcp, call)
                : null;
        if (tokenExpiresAt != null) {
            // the token names the call; the yes is an approver's, given through the application (approve)
            IdempotencyRecord approval = approvals.approvalOf(mcp.principal(), call.operation(), call.key(),
                    mcp.argumentDigest());
            if (approval == null) {
                McpCall.markAwaitingApproval(tokenExpiresAt);
                throw new ConfirmationRequiredException(call.operation(), call.key(), mcp.tool()
                        + " with idempotency key '" + call.key() + "' waits for an approver: nothing ran");
            }
            if (confirmationTokens.consume(token)
                    && approvals.use(approval, mcp.principal(), call.operation(), call.key())) {
                return;
            }
        }
        McpSyncServerExchange exchange = mcp.exchange();
        if (token == null && elicitation && exchange != null && exchange.getClientCapabilities() != null
                && exchange.getClientCapabilities().elicitation() != null) {
            if (ask(exchange, call, mcp).confirmed()) {
                return;
            }
            McpCall.markDeclined();
            throw new ConfirmationRequiredException(call.operation(), call.key(),
                    "the user declined " + mcp.tool() + " with idempotency key '" + call.key() + "'");
        }
        throw new ConfirmationRequiredException(call.operation(), call.key(), mcp.tool() + " with idempotency key '"
                + call.key() + "' is irreversible and runs only once the user confirmed it"
                + (token != null ? " (the confirmation token sent is not valid for this call, or was used)" : ""));
    }

    /**
     * A 2026-07-28 call: it runs when the request state (the token minted for this principal, operation, key and
     * arguments, unused) comes back with the user's accepted {@code confirm = true}; the answer is recorded like an
     * elicitation answer. Anything else asks again ({@link ConfirmationRequiredException}, which the adapter answers
     * with {@code input_required} and a fresh state), or ends declined.
     */
    private void checkAnswered(McpCall.Answered answered, @Nullable String token, McpCall mcp, Call call) {
        if (answered.action() == null || token == null || verify(token, mcp, call) == null
                || !confirmationTokens.consume(token)) {
            throw new ConfirmationRequiredException(call.operation(), call.key(), mcp.tool()
                    + " with idempotency key '" + call.key() + "' is irreversible and runs only once the user"
                    + " confirmed it");
        }
        Object confirm = answered.content().get("confirm");
        boolean confirmed = "accept".equals(answered.action()) && Boolean.TRUE.equals(confirm);
        answer(answered.action(), confirmed, answered.content(), mcp, call);
        if (!confirmed) {
            McpCall.markDeclined();
            throw new ConfirmationRequiredException(call.operation(), call.key(),
                    "the user declined " + mcp.tool() + " with idempotency key '" + call.key() + "'");
        }
    }

    /** The token's expiry when it is valid for this call (signed, unexpired, bound to it), else null. */
    private @Nullable Instant verify(String token, McpCall mcp, Call call) {
        return confirmationTokens.verify(token, mcp.principal(), call.operation(), call.key(), mcp.argumentDigest());
    }

    /** The form the user confirms a call with: one boolean, {@code confirm}. */
    static Map<String, Object> confirmSchema(String tool) {
        return Map.of("type", "object",
                "properties", Map.of("confirm", Map.of("type", "boolean", "title", "Run it",
                        "description", "Run " + tool + " now; it cannot be undone")),
                "required", List.of("confirm"));
    }

    private Answer ask(McpSyncServerExchange exchange, Call call, McpCall mcp) {
        McpSchema.ElicitResult answer = exchange.createElicitation(McpSchema.ElicitFormRequest
                .builder(mcp.shown(), confirmSchema(mcp.tool())).build());
        boolean confirmed = answer.action() == McpSchema.ElicitResult.Action.ACCEPT && answer.content() != null
                && Boolean.TRUE.equals(answer.content().get("confirm"));
        return answer(answer.action().name().toLowerCase(Locale.ROOT), confirmed,
                answer.content() == null ? Map.of() : answer.content(), mcp, call);
    }

    /** Records a user's answer beside the call. */
    private Answer answer(String action, boolean confirmed, Map<String, Object> content, McpCall mcp, Call call) {
        Answer given = new Answer(action, confirmed, mcp.principal(), mcp.tool(), call.operation(), call.key(),
                mcp.argumentDigest(), records.nowMillis(), new LinkedHashMap<>(content), mcp.shown());
        // outside the call's transaction: a declined call rolls back, and its answer must stay
        transactions.outside(() -> {
            answers.record(given, mcp.ttl());
            return null;
        });
        return given;
    }

    /**
     * One answer of a user to the question asked before an irreversible call ran.
     *
     * @param action         what the client answered: {@code accept}, {@code decline} or {@code cancel}
     * @param confirmed      whether the call was let run (accepted with {@code confirm = true})
     * @param principal      who answered: the call's principal ({@code ""} on stdio)
     * @param tool           the tool's name
     * @param operation      the operation the call's key belongs to
     * @param key            the call's idempotency key
     * @param argumentDigest the digest of the call's decoded arguments (what was confirmed)
     * @param answeredAt     when the answer came, on the gate's clock
     * @param content        the form's content as the client sent it (empty when it sent none)
     * @param shown          the question the user answered: the tool, the key and the decoded arguments (null for an
     *                       answer recorded before this was kept)
     */
    public record Answer(String action, boolean confirmed, String principal, String tool, String operation,
            String key, String argumentDigest, Instant answeredAt, Map<String, Object> content,
            @Nullable String shown) {

        public Answer {
            content = Collections.unmodifiableMap(new LinkedHashMap<>(content));
        }
    }

    /**
     * The elicitation answers given for a call, oldest first: empty when none was asked (no elicitation, a token, a
     * replay) or they expired with the tool's outcome.
     *
     * @param principal the call's principal, as the adapter's principal function gave it ({@code ""} on stdio)
     * @param operation the operation name
     * @param key       the call's idempotency key
     * @throws dev.idempotency.IdempotencyStoreException if the store fails
     */
    public List<Answer> answers(String principal, String operation, String key) {
        return answers.ofCall(principal, operation, key);
    }

    /**
     * The elicitation answers given for a key by every principal, oldest first: what an operator looking at a key
     * held for review reads without knowing whose call it was (the store keeps no principal; each answer names its
     * own). Each answer is recorded a second time for this, under the operation and key alone, at most
     * 64 per operation and key; answers recorded before this method existed are found by
     * {@link #answers(String, String, String)} only.
     *
     * @param operation the operation name
     * @param key       the call's idempotency key
     * @throws dev.idempotency.IdempotencyStoreException if the store fails
     */
    public List<Answer> answers(String operation, String key) {
        return answers.ofKey(operation, key);
    }

    /**
     * A call of an irreversible tool that got a confirmation token ({@link Builder#tokens(boolean) tokens(true)}, a
     * 2025-11-25 client without elicitation) and waits for an approver: what {@link #approve} approves.
     *
     * @param principal      the call's principal ({@code ""} on stdio)
     * @param tool           the tool's name
     * @param operation      the operation the call's key belongs to
     * @param key            the call's idempotency key
     * @param argumentDigest the digest of the call's decoded arguments: pass it to {@link #approve}, so that what is
     *                       approved is what the approver was shown
     * @param shown          the question: the tool, the key and the decoded arguments
     * @param requestedAt    when the call asked, on the gate's clock
     * @param expiresAt      when its token expires: an approval after that is refused
     */
    public record Pending(String principal, String tool, String operation, String key, String argumentDigest,
            String shown, Instant requestedAt, Instant expiresAt) {
    }

    /**
     * The call waiting for an approver under this principal, operation and key: the last one that got a token, if its
     * token has not expired and it has not run.
     *
     * @throws dev.idempotency.IdempotencyStoreException if the store fails
     */
    public Optional<Pending> pending(String principal, String operation, String key) {
        return approvals.pending(principal, operation, key);
    }

    /**
     * The calls waiting for an approver, the oldest request first, at most {@code limit}: what a console lists
     * without knowing whose call it is (the store lists no records by operation). Each call that gets a token is
     * also written to one of {@value #MAX_LISTED_PENDING} index slots in the store, which it holds until its newest
     * token expires; a call that finds them all taken is logged and still approvable through
     * {@link #pending(String, String, String)}, but not listed. A call that ran, or whose token expired, is not
     * listed.
     *
     * @param limit how many to return, at least 1
     * @throws IllegalArgumentException if {@code limit} is below 1
     * @throws dev.idempotency.IdempotencyStoreException if the store fails
     */
    public List<Pending> pending(int limit) {
        return approvals.pending(limit);
    }

    /**
     * The approval given to a waiting call and not yet used by its run: present between {@link #approve} and the
     * call sent again with its token (then the call is no longer {@link #pending}).
     *
     * @param pending the waiting call, as {@link #pending(int)} or {@link #pending(String, String, String)} gave it
     * @throws dev.idempotency.IdempotencyStoreException if the store fails
     */
    public Optional<Answer> approval(Pending pending) {
        return approvals.approval(pending);
    }

    /**
     * An approver's yes to a call waiting with a confirmation token: the call's token, sent again with the same call,
     * then runs it, once. This is the only thing that makes a token confirm: the token says which call, the approval
     * that a person agreed, through the application (a console, an admin endpoint), not through the MCP client whose
     * model read the token. The approval is recorded with the call's {@link #answers} (action {@value #APPROVE}, the
     * approver and reason in its content, what was shown) and kept as long as the tool's outcome; it is valid until
     * the call's token expires, and used by one run.
     *
     * @param principal      the principal of the call ({@link Pending#principal()})
     * @param operation      its operation
     * @param key            its idempotency key
     * @param argumentDigest the digest of the arguments the approver was shown ({@link Pending#argumentDigest()})
     * @param by             who approves, and why: an authenticated person, never the MCP principal that made the call
     * @return the recorded answer (the earlier one when this call was approved already)
     * @throws IllegalArgumentException if {@code by} is the call's own principal (a model must not confirm its own
     *                                  call)
     * @throws IllegalStateException    if the gate gives no tokens, or no such call waits (it ran, its token expired,
     *                                  or it was sent again with other arguments)
     */
    public Answer approve(String principal, String operation, String key, String argumentDigest, ResolvedBy by) {
        return approvals.approve(principal, operation, key, argumentDigest, by);
    }

    /** Records the call that just got {@code token}, so that an approver finds it ({@link #pending}). */
    void pend(McpCall mcp, String operation, String key, ConfirmationTokens.Minted token) {
        approvals.pend(mcp, operation, key, token.expiresAt());
    }

    /** A key of its own for {@code purpose}, derived from the secret (HMAC-SHA256 of the purpose). */
    byte[] derivedKey(String purpose) {
        return confirmationTokens.derivedKey(purpose);
    }

    /** A token for this call: principal, operation, key and argument digest, valid for {@link #ttl()}. */
    ConfirmationTokens.Minted mint(String principal, String operation, String key, String argumentDigest) {
        return confirmationTokens.mint(principal, operation, key, argumentDigest);
    }

    /** Builds {@link McpConfirmations}. */
    public static final class Builder {
        private final byte[] secret;
        private final IdempotencyStore store;
        private Duration ttl = Duration.ofMinutes(10);
        private Clock clock = Clock.systemUTC();
        private boolean elicitation = true;
        private boolean tokens;
        private ConfirmationGate otherwise = call -> { };
        private TransactionBridge transactions = TransactionBridge.NONE;

        private Builder(byte[] secret, IdempotencyStore store) {
            Objects.requireNonNull(secret, "secret");
            if (secret.length < 32) {
                throw new IllegalArgumentException("the confirmation secret must be at least 32 bytes (HMAC-SHA256),"
                        + " but has " + secret.length);
            }
            this.secret = secret.clone();
            this.store = Objects.requireNonNull(store, "store");
        }

        /** How long a token is valid; ten minutes unless set. */
        public Builder ttl(Duration ttl) {
            if (ttl.isNegative() || ttl.isZero()) {
                throw new IllegalArgumentException("the confirmation ttl must be positive, but is " + ttl);
            }
            this.ttl = ttl;
            return this;
        }

        /** The clock tokens expire on. */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** Whether to ask through elicitation when the client declared it (on by default); tokens otherwise. */
        public Builder elicitation(boolean elicitation) {
            this.elicitation = elicitation;
            return this;
        }

        /**
         * Whether a 2025-11-25 client without elicitation gets a confirmation token to send back with the call (off
         * unless set). Off, nothing but the user's answer to an elicitation (or, on 2026-07-28, to
         * {@code input_required}) confirms a call, and such a client gets {@code confirmation_required} without a
         * token. On, such a client gets a token that names the call, and the call runs when it comes back after an
         * approver approved the call through {@link McpConfirmations#approve} (never the caller's own principal): the
         * token alone, which a model or a script may read and send back, runs nothing.
         */
        public Builder tokens(boolean tokens) {
            this.tokens = tokens;
            return this;
        }

        /** The gate for irreversible calls that do not come through MCP; by default they run. */
        public Builder otherwise(ConfirmationGate otherwise) {
            this.otherwise = Objects.requireNonNull(otherwise, "otherwise");
            return this;
        }

        /**
         * The executor's transaction bridge, so that elicitation answers are recorded outside the call's transaction
         * and survive its rollback (a declined call rolls back); none unless set.
         */
        public Builder transactions(TransactionBridge transactions) {
            this.transactions = Objects.requireNonNull(transactions, "transactions");
            return this;
        }

        public McpConfirmations build() {
            return new McpConfirmations(this);
        }
    }
}