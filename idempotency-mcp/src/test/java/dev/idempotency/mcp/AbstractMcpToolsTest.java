package dev.idempotency.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.ResolvedBy;
import dev.idempotency.jdbc.JdbcDialect;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson3.JacksonMcpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/**
 * The MCP adapter as a client meets it, through the SDK's own client, on a JDBC store: what {@code tools/list} says
 * per tier, where keys come from, what a duplicate, a reused key, another principal and a crowd of duplicates get, and
 * the confirmation of irreversible tools (token and elicitation). One subclass per database.
 */
abstract class AbstractMcpToolsTest {

    McpServerFixture fixture;
    RefundTools tools;

    abstract DataSource dataSource();

    abstract JdbcDialect dialect();

    @BeforeEach
    void start() {
        fixture = new McpServerFixture(dataSource(), dialect());
        tools = fixture.tools;
    }

    @AfterEach
    void stop() {
        fixture.close();
    }

    // ---- tools/list

    @Test
    void toolsListTellsEachToolsTierInItsAnnotationsAndMeta() {
        Map<String, McpSchema.Tool> listed = new LinkedHashMap<>();
        fixture.client("alice").listTools().tools().forEach(t -> listed.put(t.name(), t));

        assertThat(listed).containsOnlyKeys("lookup_order", "hold_funds", "refund");
        McpSchema.Tool lookup = listed.get("lookup_order");
        assertThat(lookup.annotations().readOnlyHint()).isTrue();
        assertThat(lookup.annotations().openWorldHint()).as("set false: it reads the application's own orders")
                .isFalse();
        assertThat(lookup.meta()).containsEntry(McpMeta.TIER, "READ_ONLY").containsEntry(McpMeta.KEY_SOURCES, List.of());
        assertThat(properties(lookup)).containsOnlyKeys("orderId");

        McpSchema.Tool hold = listed.get("hold_funds");
        assertThat(hold.annotations().readOnlyHint()).isFalse();
        assertThat(hold.annotations().destructiveHint()).isFalse();
        assertThat(hold.annotations().idempotentHint()).isTrue();
        assertThat(hold.meta()).containsEntry(McpMeta.TIER, "REVERSIBLE").containsEntry(McpMeta.TTL, "PT24H");
        assertThat(hold.meta().get(McpMeta.KEY_SOURCES).toString()).contains("argument:idempotencyKey",
                McpMeta.TURN_ID);
        assertThat(map(hold.meta().get(McpMeta.RETRY))).containsEntry("afterTimeout", "same_call_same_key")
                .containsEntry("newKeyForRetry", false).containsEntry("onOutcomeUnknown", "stop_human_review");
        assertThat(properties(hold)).containsOnlyKeys("orderId", "cents", "idempotencyKey");
        assertThat(map(properties(hold).get("idempotencyKey"))).containsEntry("x-mcp-header",
                "Idempotency-Key");
        assertThat(hold.inputSchema().get("required")).isEqualTo(List.of("orderId", "cents"));
        assertThat(map(properties(hold).get("cents"))).containsEntry("type", "integer");

        McpSchema.Tool refund = listed.get("refund");
        assertThat(refund.annotations().destructiveHint()).isTrue();
        assertThat(refund.annotations().openWorldHint()).as("unless set, a tool reaches outside").isTrue();
        assertThat(refund.annotations().idempotentHint()).isTrue();
        assertThat(refund.meta()).containsEntry(McpMeta.TIER, "IRREVERSIBLE").containsEntry(McpMeta.TTL, "PT168H")
                .containsEntry(McpMeta.CONFIRMATION, "elicitation_or_token");
        assertThat(properties(refund)).containsKeys("idempotencyKey", "confirmationToken");
    }

    // ---- keys

    @Test
    void aDuplicateWithTheSameKeyReplaysTheFirstResult() {
        McpSyncClient alice = fixture.client("alice");
        CallToolResult first = call(alice, "hold_funds", hold("A-1", 4999, "k-1"), Map.of());
        CallToolResult second = call(alice, "hold_funds", hold("A-1", 4999, "k-1"), Map.of());

        assertThat(first.isError()).isFalse();
        assertThat(structured(first)).containsEntry("holdId", "H-1").containsEntry("cents", 4999);
        assertThat(first.meta()).containsEntry(McpMeta.REPLAYED, false).containsEntry(McpMeta.KEY, "k-1");
        assertThat(structured(second)).isEqualTo(structured(first));
        assertThat(second.meta()).containsEntry(McpMeta.REPLAYED, true);
        assertThat(((McpSchema.TextContent) second.content().get(0)).text()).contains("\"holdId\":\"H-1\"");
        assertThat(tools.holds).hasValue(1);
    }

    @Test
    void aTurnIdInMetaMakesTheKeyWhenTheClientSendsNoKeyArgument() {
        McpSyncClient alice = fixture.client("alice");
        Map<String, Object> turn7 = Map.of(McpMeta.TURN_ID, "turn-7");
        CallToolResult first = call(alice, "hold_funds", hold("A-1", 4999, null), turn7);
        CallToolResult again = call(alice, "hold_funds", hold("A-1", 4999, null), turn7);
        CallToolResult nextTurn = call(alice, "hold_funds", hold("A-1", 4999, null), Map.of(McpMeta.TURN_ID, "turn-8"));
        CallToolResult secondStep = call(alice, "hold_funds", hold("A-1", 4999, null),
                Map.of(McpMeta.TURN_ID, "turn-7", McpMeta.STEP_ID, "2"));

        assertThat(first.meta()).containsEntry(McpMeta.KEY, "turn:turn-7:hold_funds");
        assertThat(again.meta()).containsEntry(McpMeta.REPLAYED, true);
        assertThat(structured(again)).isEqualTo(structured(first));
        assertThat(nextTurn.meta()).containsEntry(McpMeta.REPLAYED, false);
        assertThat(secondStep.meta()).containsEntry(McpMeta.KEY, "turn:turn-7/2:hold_funds");
        assertThat(tools.holds).hasValue(3);
    }

    @Test
    void aWritingCallWithoutKeyOrTurnRunsNothingAndSaysWhatIsMissing() {
        McpSyncClient alice = fixture.client("alice");
        CallToolResult result = call(alice, "hold_funds", hold("A-1", 4999, null), Map.of());

        assertThat(result.isError()).isTrue();
        assertThat(structured(result)).containsEntry("error", "key_required").containsEntry("retry", "fix_call");
        assertThat(tools.holds).hasValue(0);
    }

    @Test
    void aReadOnlyToolNeedsNoKeyAndRunsEveryTime() {
        McpSyncClient alice = fixture.client("alice");
        call(alice, "lookup_order", Map.of("orderId", "A-1"), Map.of());
        CallToolResult second = call(alice, "lookup_order", Map.of("orderId", "A-1"), Map.of());

        assertThat(structured(second)).containsEntry("status", "DELIVERED");
        assertThat(second.meta()).doesNotContainKey(McpMeta.KEY);
        assertThat(tools.lookups).hasValue(2);
    }

    @Test
    void theSameTurnResentWithOtherArgumentsIsRefusedAsKeyReuse() {
        McpSyncClient alice = fixture.client("alice");
        Map<String, Object> turn = Map.of(McpMeta.TURN_ID, "turn-9");
        call(alice, "hold_funds", hold("A-1", 4999, null), turn);
        CallToolResult regenerated = call(alice, "hold_funds", hold("A-1", 5000, null), turn);

        assertThat(regenerated.isError()).isTrue();
        assertThat(structured(regenerated)).containsEntry("error", "key_reused").containsEntry("retry", "never")
                .containsEntry("key", "turn:turn-9:hold_funds");
        assertThat(structured(regenerated).get("message").toString()).doesNotContain("4999").doesNotContain("5000");
        assertThat(tools.holds).hasValue(1);
    }

    @Test
    void twoPrincipalsWithOneKeyNeverSeeEachOthersResults() {
        CallToolResult alices = call(fixture.client("alice"), "hold_funds", hold("A-1", 100, "same-key"), Map.of());
        CallToolResult bobs = call(fixture.client("bob"), "hold_funds", hold("B-9", 200, "same-key"), Map.of());

        assertThat(bobs.isError()).isFalse();
        assertThat(structured(bobs)).containsEntry("orderId", "B-9").containsEntry("cents", 200);
        assertThat(structured(alices)).containsEntry("orderId", "A-1");
        assertThat(bobs.meta()).containsEntry(McpMeta.REPLAYED, false);
        assertThat(tools.holds).hasValue(2);
    }

    @Test
    void concurrentDuplicatesRunOnceAndAllGetItsResult() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        tools.holdGate.set(gate);
        int callers = 6;
        List<McpSyncClient> clients = new ArrayList<>();
        for (int i = 0; i < callers; i++) {
            clients.add(fixture.client("alice"));
        }
        ExecutorService pool = Executors.newFixedThreadPool(callers);
        try {
            List<Future<CallToolResult>> results = new ArrayList<>();
            for (McpSyncClient c : clients) {
                results.add(pool.submit(() -> call(c, "hold_funds", hold("A-1", 4999, "storm-1"), Map.of())));
            }
            // the owner is running and a duplicate is already waiting for it in the store
            Awaitility.await().atMost(Duration.ofSeconds(20)).until(
                    () -> tools.holds.get() == 1 && fixture.store.finds.get() > 0);
            gate.countDown();
            for (Future<CallToolResult> f : results) {
                CallToolResult r = f.get(30, TimeUnit.SECONDS);
                assertThat(r.isError()).as("%s", r).isFalse();
                assertThat(structured(r)).containsEntry("holdId", "H-1");
            }
        } finally {
            gate.countDown();
            pool.shutdownNow();
        }
        assertThat(tools.holds).hasValue(1);
    }

    @Test
    void anAgentRetryStormWithClientTimeoutsHasOneEffectPerKey() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        tools.holdGate.set(gate);
        int keys = 3;
        int callersPerKey = 4;
        AtomicInteger timeouts = new AtomicInteger();
        List<McpSyncClient> patient = new ArrayList<>();
        List<McpSyncClient> impatient = new ArrayList<>();
        for (int i = 0; i < callersPerKey / 2; i++) {
            patient.add(fixture.client("alice"));
            impatient.add(fixture.client("alice", null, Duration.ofMillis(100)));
        }
        ExecutorService pool = Executors.newFixedThreadPool(keys * callersPerKey);
        Map<String, Set<Object>> holdIds = new ConcurrentHashMap<>();
        try {
            List<Future<?>> calls = new ArrayList<>();
            for (int k = 0; k < keys; k++) {
                String key = "storm-" + k;
                for (int c = 0; c < callersPerKey; c++) {
                    McpSyncClient client = c % 2 == 0 ? patient.get(c / 2) : impatient.get(c / 2);
                    calls.add(pool.submit(() -> {
                        // an agent's retry loop: the same call, the same key, until it has an answer
                        for (int attempt = 0; attempt < 500; attempt++) {
                            CallToolResult r;
                            try {
                                r = call(client, "hold_funds", hold("A-" + key, 100, key), Map.of());
                            } catch (RuntimeException timeout) {
                                timeouts.incrementAndGet();
                                continue;
                            }
                            if (!Boolean.TRUE.equals(r.isError())) {
                                holdIds.computeIfAbsent(key, x -> ConcurrentHashMap.newKeySet())
                                        .add(structured(r).get("holdId"));
                                return;
                            }
                            assertThat(structured(r).get("error")).isEqualTo("in_progress");
                        }
                        throw new AssertionError("no answer for " + key);
                    }));
                }
            }
            // a first call is running, and impatient clients have already given up and retried
            Awaitility.await().atMost(Duration.ofSeconds(20)).until(
                    () -> tools.holds.get() >= 1 && timeouts.get() >= 2);
            gate.countDown();
            for (Future<?> f : calls) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            gate.countDown();
            pool.shutdownNow();
        }
        assertThat(tools.holds).hasValue(keys);
        assertThat(holdIds).hasSize(keys).allSatisfy((key, ids) -> assertThat(ids).hasSize(1));
    }

    @Test
    void aFailureOfTheToolsOwnWorkIsAnErrorResultForItsCaller() {
        tools.refuseNextRefund.set(true);
        McpSyncClient alice = fixture.client("alice");
        CallToolResult first = call(alice, "refund", refund("A-1", 100, "r-0"), Map.of());
        approve("alice", "r-0");
        CallToolResult refused = call(alice, "refund", withToken(refund("A-1", 100, "r-0"), token(first)), Map.of());

        assertThat(refused.isError()).isTrue();
        assertThat(structured(refused)).containsEntry("error", "tool_failed")
                .containsEntry("exception", "GatewayRefusedException").containsEntry("retry", "never");
        assertThat(tools.refunds).hasValue(0);
    }

    @Test
    void argumentsThatDoNotMatchTheSchemaRunNothing() {
        CallToolResult result = call(fixture.client("alice"), "hold_funds",
                Map.of("orderId", "A-1", "cents", 1, "amount", 3, "idempotencyKey", "k"), Map.of());

        // the SDK validates the call against the generated schema before the adapter sees it
        assertThat(result.isError()).isTrue();
        assertThat(((McpSchema.TextContent) result.content().get(0)).text()).contains("'amount' is not defined");
        assertThat(tools.holds).hasValue(0);
    }

    // ---- confirmation of irreversible tools

    @Test
    void anIrreversibleToolFirstAsksForConfirmationThenRunsOnceWithTheTokenAfterAnApproversYes() {
        McpSyncClient alice = fixture.client("alice");
        CallToolResult asked = call(alice, "refund", refund("A-1", 4999, "refund-A-1"), Map.of());

        assertThat(asked.isError()).isTrue();
        assertThat(structured(asked)).containsEntry("error", "confirmation_required")
                .containsEntry("retry", "after_approval").containsKey("expiresAt");
        assertThat(((McpSchema.TextContent) asked.content().get(0)).text()).as("the model's text has no token")
                .doesNotContain(token(asked));
        assertThat(tools.refunds).hasValue(0);

        // the token sent straight back (a model or a script that read it): no human said yes, nothing runs
        CallToolResult sentBack = call(alice, "refund", withToken(refund("A-1", 4999, "refund-A-1"), token(asked)),
                Map.of());
        assertThat(structured(sentBack)).containsEntry("error", "approval_pending")
                .containsEntry("retry", "after_approval").containsEntry("confirmationToken", token(asked));
        assertThat(tools.refunds).hasValue(0);

        approve("alice", "refund-A-1");
        CallToolResult ran = call(alice, "refund", withToken(refund("A-1", 4999, "refund-A-1"), token(asked)),
                Map.of());
        CallToolResult replayed = call(alice, "refund", refund("A-1", 4999, "refund-A-1"), Map.of());

        assertThat(ran.isError()).isFalse();
        assertThat(structured(ran)).containsEntry("refundId", "R-1");
        assertThat(replayed.meta()).containsEntry(McpMeta.REPLAYED, true);
        assertThat(structured(replayed)).isEqualTo(structured(ran));
        assertThat(tools.refunds).hasValue(1);
    }

    @Test
    void withoutTokensOnlyTheUsersAnswerConfirmsAndATokenFromElsewhereRunsNothing() {
        // a node whose gate has no tokens (the default), on the same store and secret as the fixture's
        McpConfirmations noTokens = McpConfirmations.builder(McpServerFixture.SECRET, fixture.store).build();
        McpIdempotentTools mcp = McpIdempotentTools.builder(IdempotentExecutor.builder(fixture.store)
                        .scope(McpIdempotentTools.principalScope()).confirmationGate(noTokens).build())
                .confirmations(noTokens).tool(tools.refund).build();
        McpJsonMapper json = new JacksonMcpJsonMapper(JsonMapper.builder().build());
        InMemoryTransport transport = new InMemoryTransport(json);
        McpSyncServer server = McpServer.sync(transport).jsonMapper(json)
                .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
                .tools(mcp.specifications()).build();
        McpSyncClient alice = McpServerFixture.connect(transport, "alice", null, Duration.ofSeconds(30));
        try {
            // a valid token for this very call, from a node that gives them
            String token = token(call(fixture.client("alice"), "refund", refund("A-1", 4999, "nt-1"), Map.of()));

            CallToolResult asked = call(alice, "refund", refund("A-1", 4999, "nt-1"), Map.of());
            CallToolResult sentBack = call(alice, "refund", refund("A-1", 4999, "nt-1"),
                    Map.of(McpMeta.CONFIRMATION_TOKEN, token));

            assertThat(structured(asked)).containsEntry("error", "confirmation_required")
                    .containsEntry("retry", "never").doesNotContainKey("confirmationToken");
            assertThat(structured(sentBack)).containsEntry("error", "confirmation_required");
            assertThat(tools.refunds).hasValue(0);
            McpSchema.Tool listed = alice.listTools().tools().get(0);
            assertThat(listed.meta()).containsEntry(McpMeta.CONFIRMATION, "elicitation");
            assertThat(properties(listed)).doesNotContainKey("confirmationToken");
        } finally {
            alice.closeGracefully();
            server.closeGracefully();
        }
    }

    @Test
    void theTokenMayTravelInMetaInstead() {
        McpSyncClient alice = fixture.client("alice");
        String token = token(call(alice, "refund", refund("A-1", 4999, "m-1"), Map.of()));
        approve("alice", "m-1");
        CallToolResult ran = call(alice, "refund", refund("A-1", 4999, "m-1"),
                Map.of(McpMeta.CONFIRMATION_TOKEN, token));

        assertThat(ran.isError()).isFalse();
        assertThat(tools.refunds).hasValue(1);
    }

    @Test
    void aForgedTokenIsRefused() {
        McpSyncClient alice = fixture.client("alice");
        String token = token(call(alice, "refund", refund("A-1", 4999, "f-1"), Map.of()));
        String forgedMac = token.substring(0, token.indexOf('.') + 1) + "AAAA" + token.substring(token.indexOf('.') + 5);
        String otherSecret = McpConfirmations.builder("another secret, also thirty-two bytes long".getBytes(),
                fixture.store).build().mint("mcp:alice", "Payments.refund", "f-1", "0").token();

        for (String forged : List.of(forgedMac, otherSecret, "not-a-token", "a.b.c")) {
            CallToolResult r = call(alice, "refund", withToken(refund("A-1", 4999, "f-1"), forged), Map.of());
            assertThat(structured(r)).as(forged).containsEntry("error", "confirmation_required");
        }
        assertThat(tools.refunds).hasValue(0);
    }

    @Test
    void aTokenIsConsumedOnceEvenWhenTheKeyIsReleasedAfterwards() {
        McpSyncClient alice = fixture.client("alice");
        String token = token(call(alice, "refund", refund("A-1", 4999, "once-1"), Map.of()));
        approve("alice", "once-1");
        tools.refuseNextRefund.set(true);  // the gateway refuses: nothing happened, the key is released
        CallToolResult refused = call(alice, "refund", withToken(refund("A-1", 4999, "once-1"), token), Map.of());
        CallToolResult replayedToken = call(alice, "refund", withToken(refund("A-1", 4999, "once-1"), token),
                Map.of());

        assertThat(structured(refused)).containsEntry("error", "tool_failed");
        assertThat(structured(replayedToken)).containsEntry("error", "confirmation_required");
        assertThat(token(replayedToken)).isNotEqualTo(token);
        assertThat(tools.refunds).hasValue(0);
    }

    @Test
    void anExpiredTokenIsRefused() {
        McpSyncClient alice = fixture.client("alice");
        String token = token(call(alice, "refund", refund("A-1", 4999, "exp-1"), Map.of()));
        fixture.clock.advance(McpServerFixture.CONFIRMATION_TTL);

        CallToolResult r = call(alice, "refund", withToken(refund("A-1", 4999, "exp-1"), token), Map.of());

        assertThat(structured(r)).containsEntry("error", "confirmation_required");
        assertThat(tools.refunds).hasValue(0);
    }

    @Test
    void aTokenIsBoundToItsArgumentsKeyAndPrincipal() {
        McpSyncClient alice = fixture.client("alice");
        String token = token(call(alice, "refund", refund("A-1", 4999, "b-1"), Map.of()));
        approve("alice", "b-1");

        CallToolResult otherAmount = call(alice, "refund", withToken(refund("A-1", 5000, "b-1"), token), Map.of());
        CallToolResult otherKey = call(alice, "refund", withToken(refund("A-1", 4999, "b-2"), token), Map.of());
        CallToolResult otherPrincipal = call(fixture.client("mallory"), "refund",
                withToken(refund("A-1", 4999, "b-1"), token), Map.of());

        for (CallToolResult r : List.of(otherAmount, otherKey, otherPrincipal)) {
            assertThat(structured(r)).containsEntry("error", "confirmation_required");
        }
        assertThat(tools.refunds).hasValue(0);
        // the token is still good for the call it was made for
        assertThat(call(alice, "refund", withToken(refund("A-1", 4999, "b-1"), token), Map.of()).isError()).isFalse();
        assertThat(tools.refunds).hasValue(1);
    }

    @Test
    void aClientWithElicitationIsAskedAndItsAcceptanceRunsTheCall() {
        List<String> asked = new ArrayList<>();
        McpSyncClient alice = fixture.client("alice", request -> {
            asked.add(request.message());
            return new McpSchema.ElicitResult(McpSchema.ElicitResult.Action.ACCEPT, Map.of("confirm", true));
        });
        CallToolResult ran = call(alice, "refund", refund("A-1", 4999, "e-1"), Map.of());
        CallToolResult replayed = call(alice, "refund", refund("A-1", 4999, "e-1"), Map.of());

        assertThat(ran.isError()).as("%s", ran).isFalse();
        assertThat(replayed.meta()).containsEntry(McpMeta.REPLAYED, true);
        assertThat(asked).hasSize(1).first().asString().contains("refund", "e-1");
        assertThat(tools.refunds).hasValue(1);
        List<McpConfirmations.Answer> answers = fixture.confirmations.answers("alice", "Payments.refund", "e-1");
        assertThat(answers).singleElement().satisfies(a -> {
            assertThat(a.action()).isEqualTo("accept");
            assertThat(a.confirmed()).isTrue();
            assertThat(a.principal()).isEqualTo("alice");
            assertThat(a.tool()).isEqualTo("refund");
            assertThat(a.answeredAt()).isEqualTo(fixture.clock.instant());
            assertThat(a.content()).containsEntry("confirm", true);
            assertThat(a.shown()).as("the exact action the user confirmed").contains("refund", "e-1", "A-1", "4999");
        });
        assertThat(fixture.confirmations.answers("bob", "Payments.refund", "e-1")).isEmpty();
    }

    @Test
    void everyElicitationAnswerIsRecordedWithTheCallDeclinedOnesToo() {
        AtomicInteger asked = new AtomicInteger();
        McpSyncClient alice = fixture.client("alice", request -> asked.incrementAndGet() == 1
                ? new McpSchema.ElicitResult(McpSchema.ElicitResult.Action.DECLINE, null)
                : new McpSchema.ElicitResult(McpSchema.ElicitResult.Action.ACCEPT, Map.of("confirm", true)));
        CallToolResult declined = call(alice, "refund", refund("A-1", 4999, "h-1"), Map.of());
        fixture.clock.advance(Duration.ofMinutes(1));
        CallToolResult ran = call(alice, "refund", refund("A-1", 4999, "h-1"), Map.of());

        assertThat(structured(declined)).containsEntry("error", "confirmation_declined");
        assertThat(ran.isError()).isFalse();
        List<McpConfirmations.Answer> answers = fixture.confirmations.answers("alice", "Payments.refund", "h-1");
        assertThat(answers).extracting(McpConfirmations.Answer::action).containsExactly("decline", "accept");
        assertThat(answers).extracting(McpConfirmations.Answer::confirmed).containsExactly(false, true);
        assertThat(answers.get(0).content()).isEmpty();
        assertThat(answers.get(1).answeredAt()).isEqualTo(answers.get(0).answeredAt().plus(Duration.ofMinutes(1)));
        assertThat(answers.get(0).argumentDigest()).isEqualTo(answers.get(1).argumentDigest());
        assertThat(tools.refunds).hasValue(1);
    }

    @Test
    void theAnswersToAKeyAreListedWithoutItsPrincipalEachNamingWhoAnswered() {
        McpSyncClient alice = fixture.client("alice",
                request -> new McpSchema.ElicitResult(McpSchema.ElicitResult.Action.DECLINE, null));
        McpSyncClient bob = fixture.client("bob",
                request -> new McpSchema.ElicitResult(McpSchema.ElicitResult.Action.ACCEPT, Map.of("confirm", true)));
        call(alice, "refund", refund("A-1", 4999, "k-1"), Map.of());
        fixture.clock.advance(Duration.ofMinutes(1));
        call(bob, "refund", refund("B-1", 100, "k-1"), Map.of());

        List<McpConfirmations.Answer> answers = fixture.confirmations.answers("Payments.refund", "k-1");
        assertThat(answers).extracting(McpConfirmations.Answer::principal).containsExactly("alice", "bob");
        assertThat(answers).extracting(McpConfirmations.Answer::action).containsExactly("decline", "accept");
        assertThat(answers.get(1).shown()).contains("B-1");
        assertThat(answers).containsExactlyElementsOf(List.of(
                fixture.confirmations.answers("alice", "Payments.refund", "k-1").get(0),
                fixture.confirmations.answers("bob", "Payments.refund", "k-1").get(0)));
        assertThat(fixture.confirmations.answers("Payments.refund", "k-2")).isEmpty();
        assertThat(fixture.confirmations.answers("Orders.create", "k-1")).isEmpty();
    }

    @Test
    void withoutElicitationTheApproversYesIsTheRecordedAnswer() {
        McpSyncClient alice = fixture.client("alice");
        String token = token(call(alice, "refund", refund("A-1", 4999, "t-1"), Map.of()));
        assertThat(fixture.confirmations.answers("alice", "Payments.refund", "t-1")).isEmpty();
        McpConfirmations.Pending pending = fixture.confirmations.pending("alice", "Payments.refund", "t-1")
                .orElseThrow();
        assertThat(pending.tool()).isEqualTo("refund");
        assertThat(pending.shown()).contains("refund", "t-1", "A-1", "4999");
        fixture.clock.advance(Duration.ofMinutes(1));

        McpConfirmations.Answer approved = fixture.confirmations.approve("alice", "Payments.refund", "t-1",
                pending.argumentDigest(), new ResolvedBy("olga", "called the customer back"));
        CallToolResult ran = call(alice, "refund", withToken(refund("A-1", 4999, "t-1"), token), Map.of());

        assertThat(ran.isError()).isFalse();
        assertThat(fixture.confirmations.answers("alice", "Payments.refund", "t-1")).singleElement()
                .isEqualTo(approved).satisfies(a -> {
                    assertThat(a.action()).isEqualTo("approve");
                    assertThat(a.confirmed()).isTrue();
                    assertThat(a.principal()).isEqualTo("alice");
                    assertThat(a.content()).containsEntry("approvedBy", "olga")
                            .containsEntry("reason", "called the customer back");
                    assertThat(a.answeredAt()).isEqualTo(fixture.clock.instant());
                    assertThat(a.shown()).isEqualTo(pending.shown());
                    assertThat(a.argumentDigest()).isEqualTo(pending.argumentDigest());
                });
        assertThat(fixture.confirmations.pending("alice", "Payments.refund", "t-1")).as("it ran").isEmpty();
    }

    @Test
    void theCallsWaitingForAnApproverAreListedWithoutKnowingWhoseTheyAre() {
        McpSyncClient alice = fixture.client("alice");
        McpSyncClient bob = fixture.client("bob");
        String aliceToken = token(call(alice, "refund", refund("A-1", 4999, "l-1"), Map.of()));
        fixture.clock.advance(Duration.ofSeconds(1));
        call(bob, "refund", refund("B-1", 100, "l-2"), Map.of());
        fixture.clock.advance(Duration.ofSeconds(1));
        // sent again without its token: a new token, the same call, listed once
        call(bob, "refund", refund("B-1", 100, "l-2"), Map.of());

        assertThat(fixture.confirmations.pending(10)).extracting(McpConfirmations.Pending::principal,
                McpConfirmations.Pending::key).containsExactly(tuple("alice", "l-1"), tuple("bob", "l-2"));
        assertThat(fixture.confirmations.pending(1)).singleElement()
                .isEqualTo(fixture.confirmations.pending("alice", "Payments.refund", "l-1").orElseThrow());
        assertThatThrownBy(() -> fixture.confirmations.pending(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("pending(0)");

        McpConfirmations.Pending alices = fixture.confirmations.pending(10).get(0);
        assertThat(fixture.confirmations.approval(alices)).isEmpty();
        McpConfirmations.Answer approved = approve("alice", "l-1");
        assertThat(fixture.confirmations.approval(alices)).as("approved, not yet run").contains(approved);
        call(alice, "refund", withToken(refund("A-1", 4999, "l-1"), aliceToken), Map.of());
        assertThat(tools.refunds).hasValue(1);
        assertThat(fixture.confirmations.pending(10)).as("alice's call ran").singleElement()
                .extracting(McpConfirmations.Pending::principal).isEqualTo("bob");
        assertThat(fixture.confirmations.approval(alices)).as("used by the run").isEmpty();

        fixture.clock.advance(McpServerFixture.CONFIRMATION_TTL);
        assertThat(fixture.confirmations.pending(10)).as("bob's token expired").isEmpty();
        // an expired slot is taken again
        call(alice, "refund", refund("A-2", 5, "l-3"), Map.of());
        assertThat(fixture.confirmations.pending(10)).extracting(McpConfirmations.Pending::key)
                .containsExactly("l-3");
    }

    @Test
    void theCallerCannotApproveItsOwnCallAndOnlyAWaitingCallIsApproved() {
        McpSyncClient alice = fixture.client("alice");
        String token = token(call(alice, "refund", refund("A-1", 4999, "self-1"), Map.of()));
        String digest = fixture.confirmations.pending("alice", "Payments.refund", "self-1").orElseThrow()
                .argumentDigest();

        assertThatThrownBy(() -> fixture.confirmations.approve("alice", "Payments.refund", "self-1", digest,
                new ResolvedBy("alice", "it is fine"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("the approver 'alice' is the MCP principal that made the call");
        assertThatThrownBy(() -> fixture.confirmations.approve("alice", "Payments.refund", "self-1", "0".repeat(64),
                new ResolvedBy("olga", "checked"))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("waits for an approver");
        assertThatThrownBy(() -> fixture.confirmations.approve("alice", "Payments.refund", "other-key", digest,
                new ResolvedBy("olga", "checked"))).isInstanceOf(IllegalStateException.class);
        assertThat(structured(call(alice, "refund", withToken(refund("A-1", 4999, "self-1"), token), Map.of())))
                .containsEntry("error", "approval_pending");
        assertThat(fixture.confirmations.answers("alice", "Payments.refund", "self-1")).isEmpty();

        fixture.clock.advance(McpServerFixture.CONFIRMATION_TTL);
        assertThat(fixture.confirmations.pending("alice", "Payments.refund", "self-1")).as("expired").isEmpty();
        assertThatThrownBy(() -> fixture.confirmations.approve("alice", "Payments.refund", "self-1", digest,
                new ResolvedBy("olga", "checked"))).isInstanceOf(IllegalStateException.class);
        assertThat(tools.refunds).hasValue(0);
    }

    @Test
    void aDeclinedElicitationRunsNothingAndOffersNoToken() {
        McpSyncClient alice = fixture.client("alice",
                request -> new McpSchema.ElicitResult(McpSchema.ElicitResult.Action.DECLINE, null));
        CallToolResult declined = call(alice, "refund", refund("A-1", 4999, "d-1"), Map.of());

        assertThat(structured(declined)).containsEntry("error", "confirmation_declined").containsEntry("retry", "never")
                .doesNotContainKey("confirmationToken");
        assertThat(tools.refunds).hasValue(0);
        assertThat(fixture.confirmations.answers("alice", "Payments.refund", "d-1")).singleElement()
                .satisfies(a -> assertThat(a.action()).isEqualTo("decline"))
                .satisfies(a -> assertThat(a.confirmed()).isFalse());
    }

    // ---- helpers

    /** An approver (not the caller) approves the call waiting under alice's or bob's key, as it was shown. */
    McpConfirmations.Answer approve(String principal, String key) {
        McpConfirmations.Pending pending = fixture.confirmations.pending(principal, "Payments.refund", key)
                .orElseThrow(() -> new AssertionError("no call waits under " + key));
        return fixture.confirmations.approve(principal, "Payments.refund", key, pending.argumentDigest(),
                new ResolvedBy("approver", "checked the order"));
    }

    static CallToolResult call(McpSyncClient client, String tool, Map<String, Object> arguments,
            Map<String, Object> meta) {
        return client.callTool(new CallToolRequest(tool, arguments, meta.isEmpty() ? null : meta));
    }

    static Map<String, Object> hold(String orderId, long cents, String key) {
        Map<String, Object> args = new LinkedHashMap<>();
        args.put("orderId", orderId);
        args.put("cents", cents);
        if (key != null) {
            args.put("idempotencyKey", key);
        }
        return args;
    }

    static Map<String, Object> refund(String orderId, long cents, String key) {
        return hold(orderId, cents, key);
    }

    static Map<String, Object> withToken(Map<String, Object> arguments, String token) {
        Map<String, Object> args = new LinkedHashMap<>(arguments);
        args.put("confirmationToken", token);
        return args;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> structured(CallToolResult result) {
        return (Map<String, Object>) result.structuredContent();
    }

    static String token(CallToolResult result) {
        assertThat(structured(result)).containsEntry("error", "confirmation_required");
        return (String) structured(result).get("confirmationToken");
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object value) {
        return (Map<String, Object>) value;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> properties(McpSchema.Tool tool) {
        return (Map<String, Object>) tool.inputSchema().get("properties");
    }
}
