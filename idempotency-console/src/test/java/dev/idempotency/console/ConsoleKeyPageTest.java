package dev.idempotency.console;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.codec.JacksonResultCodec;
import dev.idempotency.internal.Keys;
import dev.idempotency.mcp.McpConfirmations;
import dev.idempotency.spring.boot.IdempotencyResolver;
import dev.idempotency.store.IdempotencyAudit.Attempt;
import dev.idempotency.store.IdempotencyRecord.Status;
import dev.idempotency.store.InMemoryIdempotencyAudit;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.transaction.support.TransactionOperations;

/**
 * The key page's attempts and confirmation answers, rendered by the controller on the in-memory store, and the
 * console's optional use of {@code idempotency-mcp}: without it on the class path the console starts and shows no
 * answers; with it, it reads the application's {@link McpConfirmations} bean, if there is one.
 */
class ConsoleKeyPageTest {

    private static final Instant NOW = Instant.parse("2026-12-05T09:00:00Z");
    private static final String OPERATION = "Payments.refund";

    private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
    private final InMemoryIdempotencyAudit audit = new InMemoryIdempotencyAudit();
    private final Clock clock = Clock.fixed(NOW, ZoneOffset.UTC);
    private final IdempotencyAdmin admin = IdempotencyAdmin.builder(store).clock(clock).audit(audit).build();
    private final List<ConfirmationAnswers.Answer> recorded = new ArrayList<>();

    /** The answers of the test, as the MCP gate would give them (its own recording is tested in idempotency-mcp). */
    private final ConfirmationAnswers answers = new ConfirmationAnswers() {
        @Override
        public boolean available() {
            return true;
        }

        @Override
        public List<Answer> answers(String operation, String key) {
            return recorded.stream().filter(a -> a.tool().equals("refund") && key.equals("R-1")
                    && operation.equals(OPERATION)).toList();
        }

        @Override
        public String scopeOf(String principal) {
            return "mcp:" + principal;
        }
    };

    private String keyPage(ConfirmationAnswers withAnswers, String scope, String key) {
        IdempotencyConsoleProperties properties = new IdempotencyConsoleProperties();
        ConsoleController console = new ConsoleController(() -> admin, new IdempotencyResolver(() -> admin,
                JacksonResultCodec.defaultMapper(), TransactionOperations.withoutTransaction()), List::of,
                () -> withAnswers, clock, properties);
        MockHttpServletRequest request = new MockHttpServletRequest("GET", "/idempotency/key");
        request.setUserPrincipal(() -> "alice");
        return console.key(request, OPERATION, key, scope, null).getBody();
    }

    private void attempt(String scope, String key, Attempt.Kind kind, Status met, String detail, Instant at) {
        audit.attempt(Keys.hash(OPERATION, scope, key), new Attempt(OPERATION, key, Tier.IRREVERSIBLE, met, kind,
                detail, at));
    }

    @Test
    void theAttemptsAreShownOldestFirstWithTheClaimInItsPlace() {
        IdempotentOperation<String> refund = IdempotentOperation.builder(OPERATION, Tier.IRREVERSIBLE,
                ResultType.of(String.class)).build();
        IdempotentExecutor.builder(store).clock(Clock.fixed(NOW.minusSeconds(60), ZoneOffset.UTC)).build()
                .execute(refund, "R-9", new Object[] {"R-9"}, () -> "refunded");
        attempt("", "R-9", Attempt.Kind.REFUSED_IN_PROGRESS, Status.IN_FLIGHT, "another attempt <b>held</b> it",
                NOW.minusSeconds(90));
        attempt("", "R-9", Attempt.Kind.KEY_REUSED, Status.COMPLETED, "its arguments' digest 01 differs",
                NOW.minusSeconds(30));

        String page = keyPage(answers, "", "R-9");
        assertThat(page).contains("<table id=\"attempts\">");
        int refused = page.indexOf("refused: another attempt in progress");
        int claimed = page.indexOf("claimed the key");
        int reused = page.indexOf("refused: key reused with other arguments");
        assertThat(refused).isPositive().isLessThan(claimed);
        assertThat(claimed).isLessThan(reused);
        assertThat(page).contains("another attempt &lt;b&gt;held&lt;/b&gt; it").doesNotContain("<b>held</b>")
                .contains(Html.at(NOW.minusSeconds(90)));
    }

    @Test
    void aKeyNobodyTriedShowsNoAttempts() {
        assertThat(keyPage(answers, "", "R-0")).contains("<p id=\"attempts-none\">None recorded.</p>")
                .doesNotContain("<table id=\"attempts\">");
    }

    @Test
    void theConfirmationAnswersOfAnMcpCallAreShownAndLeadToItsPrincipalsScope() {
        recorded.add(new ConfirmationAnswers.Answer("carol", "refund", "decline", false, NOW.minusSeconds(120),
                "d1", Map.of(), "refund R-1: 49.99 EUR to <iban>"));
        recorded.add(new ConfirmationAnswers.Answer("carol", "refund", "accept", true, NOW.minusSeconds(60), "d1",
                Map.of("confirm", true), "refund R-1: 49.99 EUR to <iban>"));
        attempt("mcp:carol", "R-1", Attempt.Kind.HELD_FOR_REVIEW, Status.IN_FLIGHT, "it ended with a timeout",
                NOW.minusSeconds(59));

        String unscoped = keyPage(answers, "", "R-1");
        assertThat(unscoped).contains("<h2>Confirmation answers (MCP)</h2>").contains("<table id=\"answers\">")
                .contains("<td>carol</td><td>decline: not confirmed</td>")
                .contains("<td>carol</td><td>accept: confirmed, the call ran</td>")
                .contains("<pre>refund R-1: 49.99 EUR to &lt;iban&gt;</pre>").doesNotContain("<iban>");
        assertThat(unscoped.indexOf("decline: not confirmed")).isLessThan(unscoped.indexOf("accept: confirmed"));
        assertThat(unscoped).as("the store keeps no scope: the page links to the principal's")
                .contains("<p id=\"answer-scopes\">").contains("&amp;scope=mcp%3Acarol\">mcp:carol</a>")
                .contains("<p id=\"attempts-none\">");

        String scoped = keyPage(answers, "mcp:carol", "R-1");
        assertThat(scoped).contains("<table id=\"answers\">").doesNotContain("answer-scopes")
                .contains("<table id=\"attempts\">").contains("it ended with a timeout");
    }

    @Test
    void aKeyWithoutAnswersSaysSoAndAnApplicationWithoutTheGateShowsNoSection() {
        assertThat(keyPage(answers, "", "R-2")).contains("<p id=\"answers-none\">");
        assertThat(keyPage(new McpConfirmationAnswers(() -> null), "", "R-1"))
                .doesNotContain("Confirmation answers");
    }

    private final WebApplicationContextRunner console = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(IdempotencyConsoleAutoConfiguration.class))
            .withPropertyValues("idempotency.console.enabled=true");

    @Test
    void withoutIdempotencyMcpTheConsoleStartsAndReadsNoAnswers() {
        console.withClassLoader(new FilteredClassLoader("dev.idempotency.mcp.")).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(ConsoleController.class)
                    .doesNotHaveBean(ConfirmationAnswers.class);
        });
    }

    @Test
    void withIdempotencyMcpItReadsTheApplicationsConfirmationGateIfItHasOne() {
        console.run(context -> assertThat(context.getBean(McpConfirmationAnswers.class).available()).isFalse());
        console.withBean(McpConfirmations.class, () -> McpConfirmations.builder(new byte[32], store).build())
                .run(context -> {
                    McpConfirmationAnswers found = context.getBean(McpConfirmationAnswers.class);
                    assertThat(found.available()).isTrue();
                    assertThat(found.answers(OPERATION, "R-1")).isEmpty();
                    assertThat(found.scopeOf("carol")).isEqualTo("mcp:carol");
                });
    }
}
