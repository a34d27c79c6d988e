package dev.idempotency.mcp;

import dev.idempotency.ConfirmationGate;
import dev.idempotency.ConfirmationRequiredException;
import dev.idempotency.ResolvedBy;
import dev.idempotency.Tier;
import dev.idempotency.TransactionBridge;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.ClaimResult;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

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
    /** At most this many answers are kept per principal, operation and key (each declined one ends a call). */
    static final int MAX_ANSWERS = 64;
    /** At most this many calls waiting for an approver are listed by {@link #pending(int)} at once. */
    public static final int MAX_LISTED_PENDING = 64;
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder B64D = Base64.getUrlDecoder();
    private static final SecureRandom RANDOM = new SecureRandom();

    private final byte[] secret;
    private final IdempotencyStore store;
    private final Duration ttl;
    private final Clock clock;
    private final boolean elicitation;
    private final boolean tokens;
    private final ConfirmationGate otherwise;
    private final TransactionBridge transactions;

    private McpConfirmations(Builder b) {
        this.secret = b.secret.clone();
        this.store = b.store;
        this.ttl = b.ttl;
        this.clock = b.clock;
        this.elicitation = b.elicitation;
        this.tokens = b.tokens;
        this.otherwise = b.otherwise;
        this.transactions = b.transactions;
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
        Instant tokenExpiresAt = tokens && token != null && !used(token) ? verify(token, mcp, call) : null;
        if (tokenExpiresAt != null) {
            // the token names the call; the yes is an approver's, given through the application (approve)
            IdempotencyRecord approval = liveRecord(approvalId(mcp.principal(), call.operation(), call.key(),
                    mcp.argumentDigest()));
            if (approval == null) {
                McpCall.markAwaitingApproval(tokenExpiresAt);
                throw new ConfirmationRequiredException(call.operation(), call.key(), mcp.tool()
                        + " with idempotency key '" + call.key() + "' waits for an approver: nothing ran");
            }
            if (consume(token) && store.resolve(approval, null, approval.expiresAt())) {
                store.find(pendingId(mcp.principal(), call.operation(), call.key()))
                        .ifPresent(pending -> store.resolve(pending, null, pending.expiresAt()));
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
        if (answered.action() == null || token == null || verify(token, mcp, call) == null || !consume(token)) {
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
        Answer recorded = new Answer(action, confirmed, mcp.principal(), mcp.tool(), call.operation(), call.key(),
                mcp.argumentDigest(), clock.instant().truncatedTo(ChronoUnit.MILLIS), new LinkedHashMap<>(content),
                mcp.shown());
        // outside the call's transaction: a declined call rolls back, and its answer must stay
        transactions.outside(() -> {
            record(recorded, mcp.ttl());
            return null;
        });
        return recorded;
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
        return read(n -> answerId(principal, operation, key, n));
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
        return read(n -> keyAnswerId(operation, key, n));
    }

    private List<Answer> read(java.util.function.IntFunction<byte[]> slot) {
        List<Answer> answers = new ArrayList<>();
        for (int n = 0; n < MAX_ANSWERS; n++) {
            Optional<IdempotencyRecord> found = store.find(slot.apply(n));
            if (found.isEmpty()) {
                break;
            }
            byte[] data = found.get().result();
            if (data != null && data.length > 0 && !found.get().isExpired(clock.instant())) {
                answers.add(decode(data));
            }
        }
        return List.copyOf(answers);
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

    /** A pending call as the store keeps it: with how long its answers are kept (the tool's ttl). */
    record Waiting(Pending pending, Duration retention) {
    }

    /**
     * The call waiting for an approver under this principal, operation and key: the last one that got a token, if its
     * token has not expired and it has not run.
     *
     * @throws dev.idempotency.IdempotencyStoreException if the store fails
     */
    public Optional<Pending> pending(String principal, String operation, String key) {
        IdempotencyRecord found = liveRecord(pendingId(principal, operation, key));
        if (found == null || found.result() == null) {
            return Optional.empty();
        }
        Waiting waiting = waiting(found.result());
        return waiting.pending().expiresAt().isAfter(clock.instant()) ? Optional.of(waiting.pending())
                : Optional.empty();
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
        if (limit < 1) {
            throw new IllegalArgumentException("pending(" + limit + "): the limit must be at least 1");
        }
        List<Pending> waiting = new ArrayList<>();
        Set<Listed> seen = new HashSet<>();
        for (int n = 0; n < MAX_LISTED_PENDING; n++) {
            IdempotencyRecord slot = liveRecord(indexId(n));
            if (slot == null || slot.result() == null || slot.result().length == 0) {
                continue;
            }
            Listed listed = listed(slot.result());
            if (seen.add(listed)) {
                pending(listed.principal(), listed.operation(), listed.key()).ifPresent(waiting::add);
            }
        }
        waiting.sort(Comparator.comparing(Pending::requestedAt));
        return List.copyOf(waiting.subList(0, Math.min(limit, waiting.size())));
    }

    /**
     * The approval given to a waiting call and not yet used by its run: present between {@link #approve} and the
     * call sent again with its token (then the call is no longer {@link #pending}).
     *
     * @param pending the waiting call, as {@link #pending(int)} or {@link #pending(String, String, String)} gave it
     * @throws dev.idempotency.IdempotencyStoreException if the store fails
     */
    public Optional<Answer> approval(Pending pending) {
        IdempotencyRecord found = liveRecord(approvalId(pending.principal(), pending.operation(), pending.key(),
                pending.argumentDigest()));
        return found == null || found.result() == null ? Optional.empty() : Optional.of(decode(found.result()));
    }

    /** What an index slot holds: which pending call it lists. */
    record Listed(String principal, String operation, String key) {
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
        IdempotencyRecord found = liveRecord(pendingId(principal, operation, key));
        Waiting waiting = found == null || found.result() == null ? null : waiting(found.result());
        if (waiting == null || !waiting.pending().argumentDigest().equals(argumentDigest)
                || !waiting.pending().expiresAt().isAfter(clock.instant())) {
            throw new IllegalStateException("approve(" + operation + ", '" + key + "'): no call of principal '"
                    + principal + "' with these arguments (digest " + argumentDigest + ") waits for an approver: it"
                    + " ran, its token expired, or it was sent again with other arguments");
        }
        Pending pending = waiting.pending();
        byte[] id = approvalId(principal, operation, key, argumentDigest);
        IdempotencyRecord earlier = liveRecord(id);
        if (earlier != null && earlier.result() != null) {
            return decode(earlier.result());
        }
        Map<String, Object> content = new LinkedHashMap<>();
        content.put("approvedBy", by.actor());
        content.put("reason", by.reason());
        Answer answer = new Answer(APPROVE, true, principal, pending.tool(), operation, key, argumentDigest,
                clock.instant().truncatedTo(ChronoUnit.MILLIS), content, pending.shown());
        put(id, APPROVAL_OPERATION, JSON.writeValueAsBytes(answer), pending.expiresAt());
        record(answer, waiting.retention());
        return answer;
    }

    /** Records the call that just got {@code token}, so that an approver finds it ({@link #pending}). */
    void pend(McpCall mcp, String operation, String key, Minted token) {
        Pending pending = new Pending(mcp.principal(), mcp.tool(), operation, key, mcp.argumentDigest(),
                mcp.shown(), clock.instant().truncatedTo(ChronoUnit.MILLIS), token.expiresAt());
        put(pendingId(mcp.principal(), operation, key), PENDING_OPERATION,
                JSON.writeValueAsBytes(new Waiting(pending, mcp.ttl())), token.expiresAt());
        index(new Listed(mcp.principal(), operation, key), token.expiresAt());
    }

    /**
     * Lists the pending call in an index slot until {@code until}: the slot that lists it already (kept until the
     * later of its expiry and {@code until}), else the first free or expired one. One read per slot; a call that
     * cannot be listed is logged and waits all the same.
     */
    private void index(Listed listed, Instant until) {
        byte[] data = JSON.writeValueAsBytes(listed);
        for (int attempt = 0; attempt < 5; attempt++) {
            Instant now = clock.instant().truncatedTo(ChronoUnit.MILLIS);
            int free = -1;
            IdempotencyRecord freeSlot = null;
            boolean raced = false;
            for (int n = 0; n < MAX_LISTED_PENDING && !raced; n++) {
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
                        + MAX_LISTED_PENDING + " calls wait for an approver already; " + listed.operation() + " key '"
                        + listed.key() + "' of principal '" + listed.principal() + "' is approvable by pending("
                        + "principal, operation, key) only");
                return;
            }
            byte[] id = indexId(free);
            if (freeSlot != null) {
                if (store.resolve(freeSlot, data, until)) {
                    return;
                }
                continue;
            }
            ClaimResult claimed = store.claim(new ClaimRequest(id, PENDING_OPERATION,
                    HexFormat.of().formatHex(id, 0, 8), id, Tier.REVERSIBLE, now, until, until,
                    Duration.ofSeconds(1)));
            if (claimed.isAcquired() && store.complete(id, until, data, until)) {
                return;
            }
        }
        // the call waits all the same: only the list misses it
        System.getLogger(McpConfirmations.class.getName()).log(System.Logger.Level.WARNING, "not listed: the "
                + listed.operation() + " call of key '" + listed.key() + "' of principal '" + listed.principal()
                + "' lost its index slot to concurrent calls 5 times; it is approvable by pending(principal,"
                + " operation, key) only");
    }

    private static byte[] indexId(int slot) {
        return Canonical.sha256(("pending-index|" + slot).getBytes(StandardCharsets.UTF_8));
    }

    private static Listed listed(byte[] data) {
        try {
            return JSON.readValue(data, Listed.class);
        } catch (JacksonException e) {
            throw new IllegalStateException("an index slot of the calls waiting for an approver cannot be read: "
                    + e.getOriginalMessage(), e);
        }
    }

    /** Writes {@code data} under {@code id} until {@code until}, replacing what was there. */
    private void put(byte[] id, String operation, byte[] data, Instant until) {
        for (int attempt = 0; attempt < 5; attempt++) {
            Instant now = clock.instant().truncatedTo(ChronoUnit.MILLIS);
            ClaimResult claimed = store.claim(new ClaimRequest(id, operation, HexFormat.of().formatHex(id, 0, 8), id,
                    Tier.REVERSIBLE, now, until, until, Duration.ofSeconds(1)));
            if (claimed.isAcquired()) {
                if (store.complete(id, until, data, until)) {
                    return;
                }
                continue;
            }
            Optional<IdempotencyRecord> found = store.find(id);
            if (found.isPresent() && found.get().status() == IdempotencyRecord.Status.COMPLETED
                    && store.resolve(found.get(), data, until)) {
                return;
            }
        }
        throw new IllegalStateException("the store did not keep " + operation + " record "
                + HexFormat.of().formatHex(id, 0, 8) + " after 5 attempts (written concurrently)");
    }

    /** The completed, unexpired record under {@code id}, or null. */
    private @Nullable IdempotencyRecord liveRecord(byte[] id) {
        Optional<IdempotencyRecord> found = store.find(id);
        return found.isPresent() && found.get().status() == IdempotencyRecord.Status.COMPLETED
                && !found.get().isExpired(clock.instant()) ? found.get() : null;
    }

    private static byte[] pendingId(String principal, String operation, String key) {
        return Canonical.sha256(("pending|" + principal.length() + ":" + principal + "|" + operation.length() + ":"
                + operation + "|" + key.length() + ":" + key).getBytes(StandardCharsets.UTF_8));
    }

    private static byte[] approvalId(String principal, String operation, String key, String argumentDigest) {
        return Canonical.sha256(("approval|" + binding(principal, operation, key, argumentDigest))
                .getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Claims the first free answer slot of the call, and completes it with the answer; then the same in the slots of
     * the operation and key, which {@link #answers(String, String)} reads.
     */
    private void record(Answer answer, Duration retention) {
        byte[] data = JSON.writeValueAsBytes(answer);
        Instant now = clock.instant().truncatedTo(ChronoUnit.MILLIS);
        Instant until = now.plus(retention.isZero() ? ttl : retention);
        if (!record(data, now, until, n -> answerId(answer.principal(), answer.operation(), answer.key(), n))) {
            System.getLogger(McpConfirmations.class.getName()).log(System.Logger.Level.WARNING, "not recorded: "
                    + MAX_ANSWERS + " elicitation answers are kept per call, and " + answer.tool() + " key '"
                    + answer.key() + "' has them all");
            return;
        }
        // a key's slots are full only when its principals answered 64 times: the per-call record above still stands
        record(data, now, until, n -> keyAnswerId(answer.operation(), answer.key(), n));
    }

    private boolean record(byte[] data, Instant now, Instant until, java.util.function.IntFunction<byte[]> slot) {
        for (int n = 0; n < MAX_ANSWERS; n++) {
            byte[] id = slot.apply(n);
            ClaimResult claimed = store.claim(new ClaimRequest(id, ANSWER_OPERATION,
                    HexFormat.of().formatHex(id, 0, 8), id, Tier.REVERSIBLE, now, until, until,
                    Duration.ofSeconds(1)));
            if (claimed.isAcquired()) {
                store.complete(id, until, data, until);
                return true;
            }
        }
        return false;
    }

    private static Waiting waiting(byte[] data) {
        try {
            return JSON.readValue(data, Waiting.class);
        } catch (JacksonException e) {
            throw new IllegalStateException("a call waiting for an approver in the store cannot be read: "
                    + e.getOriginalMessage(), e);
        }
    }

    private static Answer decode(byte[] data) {
        try {
            return JSON.readValue(data, new TypeReference<Answer>() { });
        } catch (JacksonException e) {
            throw new IllegalStateException("an elicitation answer in the store cannot be read: " + e.getMessage(), e);
        }
    }

    private static byte[] answerId(String principal, String operation, String key, int n) {
        return Canonical.sha256(("answer|" + principal.length() + ":" + principal + "|" + operation.length() + ":"
                + operation + "|" + key.length() + ":" + key + "|" + n).getBytes(StandardCharsets.UTF_8));
    }

    private static byte[] keyAnswerId(String operation, String key, int n) {
        return Canonical.sha256(("key-answer|" + operation.length() + ":" + operation + "|" + key.length() + ":" + key
                + "|" + n).getBytes(StandardCharsets.UTF_8));
    }

    /** A key of its own for {@code purpose}, derived from the secret (HMAC-SHA256 of the purpose). */
    byte[] derivedKey(String purpose) {
        return mac(purpose);
    }

    /** A random key of this process, for a request state no other node opens. */
    static byte[] randomKey() {
        byte[] key = new byte[32];
        RANDOM.nextBytes(key);
        return key;
    }

    /** A token for this call: principal, operation, key and argument digest, valid for {@link #ttl()}. */
    Minted mint(String principal, String operation, String key, String argumentDigest) {
        byte[] nonce = new byte[16];
        RANDOM.nextBytes(nonce);
        Instant expiresAt = clock.instant().plus(ttl).truncatedTo(ChronoUnit.SECONDS);
        String payload = String.join("|", "v1", B64.encodeToString(nonce), Long.toString(expiresAt.getEpochSecond()),
                binding(principal, operation, key, argumentDigest));
        String body = B64.encodeToString(payload.getBytes(StandardCharsets.UTF_8));
        return new Minted(body + "." + B64.encodeToString(mac(body)), expiresAt);
    }

    record Minted(String token, Instant expiresAt) {
    }

    /** The token's expiry when it is valid for this call (signed, unexpired, bound to it), else null. */
    private @Nullable Instant verify(String token, McpCall mcp, Call call) {
        int dot = token.indexOf('.');
        if (dot <= 0 || dot != token.lastIndexOf('.')) {
            return null;
        }
        String body = token.substring(0, dot);
        byte[] sent;
        String payload;
        try {
            sent = B64D.decode(token.substring(dot + 1));
            payload = new String(B64D.decode(body), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return null;
        }
        if (!MessageDigest.isEqual(sent, mac(body))) {
            return null;
        }
        String[] parts = payload.split("\\|", -1);
        if (parts.length != 4 || !"v1".equals(parts[0])) {
            return null;
        }
        long expires;
        try {
            expires = Long.parseLong(parts[2]);
        } catch (NumberFormatException e) {
            return null;
        }
        Instant expiresAt = Instant.ofEpochSecond(expires);
        if (!clock.instant().isBefore(expiresAt)) {
            return null;
        }
        return MessageDigest.isEqual(parts[3].getBytes(StandardCharsets.UTF_8),
                binding(mcp.principal(), call.operation(), call.key(), mcp.argumentDigest())
                        .getBytes(StandardCharsets.UTF_8)) ? expiresAt : null;
    }

    /** Whether the token was consumed already (by a run, or by an answer to {@code input_required}). */
    private boolean used(String token) {
        return store.find(Canonical.sha256(token.getBytes(StandardCharsets.UTF_8))).isPresent();
    }

    /** Claims the token's nonce in the store: true for the first caller only, on every node. */
    private boolean consume(String token) {
        byte[] id = Canonical.sha256(token.getBytes(StandardCharsets.UTF_8));
        Instant now = clock.instant().truncatedTo(ChronoUnit.MILLIS);
        // the record outlives the token, so a replayed token finds it until it could no longer verify anyway
        Instant until = now.plus(ttl).plus(ttl);
        ClaimResult claimed = store.claim(new ClaimRequest(id, CONSUMED_OPERATION, HexFormat.of().formatHex(id, 0, 8),
                id, Tier.IRREVERSIBLE, now, until, until, Duration.ofSeconds(5)));
        if (!claimed.isAcquired()) {
            return false;
        }
        store.complete(id, until, new byte[0], until);
        return true;
    }

    private static String binding(String principal, String operation, String key, String argumentDigest) {
        return Canonical.sha256Hex(principal.length() + ":" + principal + "|" + operation.length() + ":" + operation
                + "|" + key.length() + ":" + key + "|" + argumentDigest);
    }

    private byte[] mac(String body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            return mac.doFinal(body.getBytes(StandardCharsets.US_ASCII));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("every Java runtime has HmacSHA256", e);
        }
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
