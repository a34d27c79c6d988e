package dev.idempotency.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.ConfirmationRequiredException;
import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyKeyException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotencyOutcomeUnknownException;
import dev.idempotency.IdempotencyReplayException;
import dev.idempotency.IdempotencyStoreException;
import java.net.URI;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The table of docs/http.md, "Problem details": each kind of the engine's exceptions and the problem it is answered
 * with, one row per kind; a refused call is not answered here but thrown to the application's error handling.
 */
class ProblemResponsesTest {

    record Row(IdempotencyException exception, int status, URI type) {
    }

    static final List<Row> TABLE = List.of(
            new Row(new IdempotencyKeyException("a control character"), 400, IdempotencyProblems.INVALID_KEY),
            new Row(new IdempotencyKeyReusedException("http", "k"), 422, IdempotencyProblems.KEY_REUSED),
            new Row(new IdempotencyInProgressException("http", "k", Duration.ofSeconds(5)), 409,
                    IdempotencyProblems.IN_FLIGHT),
            new Row(new IdempotencyOutcomeUnknownException("http", "k"), 500, IdempotencyProblems.OUTCOME_UNKNOWN),
            new Row(new ConfirmationRequiredException("http", "k", "confirm"), 428,
                    IdempotencyProblems.CONFIRMATION_REQUIRED),
            new Row(new IdempotencyReplayException("unreadable"), 500, IdempotencyProblems.REPLAY_FAILED),
            new Row(new IdempotencyStoreException("down", false, new IllegalStateException("refused")), 503,
                    IdempotencyProblems.STORE_UNAVAILABLE));

    final JsonMapper mapper = JsonMapper.builder().build();
    final ProblemResponses problems = new ProblemResponses(mapper, Duration.ofMillis(1500));

    @Test
    void everyKindButRefusedIsAnsweredWithItsProblem() throws Exception {
        Set<IdempotencyException.Kind> answered = EnumSet.noneOf(IdempotencyException.Kind.class);
        for (Row row : TABLE) {
            MockHttpServletRequest request = new MockHttpServletRequest("POST", "/orders");
            MockHttpServletResponse response = new MockHttpServletResponse();
            response.setHeader("X-Partial", "written before the engine answered");
            problems.answer(request, response, row.exception());
            JsonNode body = mapper.readTree(response.getContentAsByteArray());
            assertThat(response.getStatus()).as(row.exception().kind().name()).isEqualTo(row.status());
            assertThat(response.getContentType()).isEqualTo("application/problem+json");
            assertThat(body.get("type").asString()).isEqualTo(row.type().toString());
            assertThat(body.get("status").asInt()).isEqualTo(row.status());
            assertThat(body.get("instance").asString()).isEqualTo("/orders");
            assertThat(response.getHeader("X-Partial")).as("nothing of the handler's response is kept").isNull();
            answered.add(row.exception().kind());
        }
        assertThat(EnumSet.complementOf(EnumSet.copyOf(answered))).containsExactly(IdempotencyException.Kind.REFUSED);
    }

    @Test
    void inProgressTellsWhenToRetryInWholeSecondsRoundedUp() throws Exception {
        MockHttpServletResponse response = new MockHttpServletResponse();
        problems.answer(new MockHttpServletRequest("POST", "/orders"), response,
                new IdempotencyInProgressException("http", "k", Duration.ofSeconds(5)));
        assertThat(response.getHeader("Retry-After")).isEqualTo("2");
    }

    @Test
    void aRefusedCallIsThrownUnansweredToTheApplication() {
        IdempotencyException refused = new IdempotencyException("OrderController.place: a read-only transaction");
        MockHttpServletResponse response = new MockHttpServletResponse();
        assertThatThrownBy(() -> problems.answer(new MockHttpServletRequest("POST", "/orders"), response, refused))
                .isSameAs(refused);
        assertThat(response.getContentAsByteArray()).isEmpty();
        assertThat(response.getStatus()).isEqualTo(200);
    }
}
