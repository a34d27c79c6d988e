package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyException.Kind;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Each of the library's exceptions states the kind a door answers it by. */
class IdempotencyExceptionKindTest {

    @Test
    void everyExceptionStatesItsKindAndEveryKindHasAnException() {
        List<IdempotencyException> all = List.of(
                new IdempotencyKeyException("bad key"),
                new IdempotencyKeyReusedException("op", "k"),
                new IdempotencyInProgressException("op", "k", Duration.ofSeconds(1)),
                new IdempotencyOutcomeUnknownException("op", "k"),
                new ConfirmationRequiredException("op", "k", "confirm"),
                new IdempotencyReplayException("unreadable"),
                new IdempotencyStoreException("down", false, new RuntimeException()),
                new IdempotencyException("misconfigured"));
        List<Kind> expected = List.of(Kind.INVALID_KEY, Kind.KEY_REUSED, Kind.IN_PROGRESS, Kind.OUTCOME_UNKNOWN,
                Kind.CONFIRMATION_REQUIRED, Kind.REPLAY_FAILED, Kind.STORE_UNAVAILABLE, Kind.REFUSED);

        assertThat(all).extracting(IdempotencyException::kind).containsExactlyElementsOf(expected);
        Set<Kind> covered = EnumSet.noneOf(Kind.class);
        all.forEach(e -> covered.add(e.kind()));
        assertThat(covered).isEqualTo(EnumSet.allOf(Kind.class));
    }
}
