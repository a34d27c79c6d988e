package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.IdempotentExecutorTest.FakeTransaction;
import dev.idempotency.codec.JacksonResultCodec;
import dev.idempotency.codec.ResultCodec;
import dev.idempotency.internal.Keys;
import dev.idempotency.replay.ReplayModel.InsufficientFundsException;
import dev.idempotency.replay.ReplayModel.OverdraftLimitException;
import dev.idempotency.store.ClaimRequest;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.lang.reflect.Type;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ReplayExceptionsTest {

    private static final ResolvedBy BY = new ResolvedBy("test-operator", "checked by the test");

    /** A declared checked business exception. */
    public static final class PaymentDeclinedException extends Exception {
        private static final long serialVersionUID = 1L;

        public PaymentDeclinedException(String message) {
            super(message);
        }
    }

    public abstract static class AbstractBusinessException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        protected AbstractBusinessException(String message) {
            super(message);
        }
    }

    public static final class NoStringConstructorException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public NoStringConstructorException(int code) {
            super("code " + code);
        }
    }

    static final class HiddenException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public HiddenException(String message) {
            super(message);
        }
    }

    static final IdempotentOperation<String> TRANSFER = IdempotentOperation
            .builder("Accounts.transfer", Tier.IRREVERSIBLE, ResultType.of(String.class))
            .replayExceptions(InsufficientFundsException.class, PaymentDeclinedException.class)
            .build();

    final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
    final List<Outcome> outcomes = new ArrayList<>();
    final IdempotentExecutor executor = IdempotentExecutor.builder(store).listener(e -> outcomes.add(e.outcome()))
            .build();
    final AtomicInteger runs = new AtomicInteger();

    private String transfer(RuntimeException thrown) {
        runs.incrementAndGet();
        throw thrown;
    }

    @Test
    void aDeclaredExceptionIsRecordedAndThrownAgainOnEveryReplayWithItsMessage() {
        InsufficientFundsException first = new InsufficientFundsException("balance 3.00 EUR < 10.00 EUR");
        assertThatThrownBy(() -> executor.execute(TRANSFER, "T-1", new Object[] {"a"}, () -> transfer(first)))
                .isSameAs(first);
        assertThat(store.find(hash("T-1")).orElseThrow().status()).isEqualTo(IdempotencyRecord.Status.COMPLETED);

        for (int i = 0; i < 2; i++) {
            try (IdempotencyContext.Scope scope = IdempotencyContext.open()) {
                assertThatThrownBy(() -> executor.execute(TRANSFER, "T-1", new Object[] {"a"}, () -> "ran again"))
                        .isExactlyInstanceOf(InsufficientFundsException.class)
                        .isNotSameAs(first)
                        .hasMessage("balance 3.00 EUR < 10.00 EUR");
                assertThat(scope.replayed()).as("an HTTP layer answers Idempotent-Replayed: true").isTrue();
            }
        }
        assertThat(runs).hasValue(1);
        assertThat(outcomes).containsExactly(Outcome.EXECUTED, Outcome.REPLAYED, Outcome.REPLAYED);
    }

    @Test
    void aSubclassOfADeclaredExceptionIsRecordedAsTheDeclaredClass() {
        assertThatThrownBy(() -> executor.execute(TRANSFER, "T-2", new Object[0],
                () -> transfer(new OverdraftLimitException("limit 500"))))
                .isExactlyInstanceOf(OverdraftLimitException.class);

        assertThatThrownBy(() -> executor.execute(TRANSFER, "T-2", new Object[0], () -> "ran again"))
                .isExactlyInstanceOf(InsufficientFundsException.class)
                .hasMessage("limit 500");
        assertThat(runs).hasValue(1);
    }

    @Test
    void theMostSpecificDeclaredClassIsRecorded() {
        IdempotentOperation<String> op = IdempotentOperation
                .builder("Accounts.debit", Tier.REVERSIBLE, ResultType.of(String.class))
                .replayExceptions(InsufficientFundsException.class, OverdraftLimitException.class)
                .build();
        assertThatThrownBy(() -> executor.execute(op, "D-1", new Object[0],
                () -> transfer(new OverdraftLimitException("limit 500"))));

        assertThatThrownBy(() -> executor.execute(op, "D-1", new Object[0], () -> "ran again"))
                .isExactlyInstanceOf(OverdraftLimitException.class);
    }

    @Test
    void aCheckedDeclaredExceptionReplaysAsItself() {
        IdempotentExecutor.Action<String, PaymentDeclinedException> declined = () -> {
            runs.incrementAndGet();
            throw new PaymentDeclinedException("card expired");
        };
        assertThatThrownBy(() -> executor.execute(TRANSFER, "T-3", new Object[0], declined))
                .isInstanceOf(PaymentDeclinedException.class);
        assertThatThrownBy(() -> executor.execute(TRANSFER, "T-3", new Object[0], declined))
                .isExactlyInstanceOf(PaymentDeclinedException.class)
                .hasMessage("card expired");
        assertThat(runs).hasValue(1);
    }

    @Test
    void aNullMessageReplaysAsNull() {
        assertThatThrownBy(() -> executor.execute(TRANSFER, "T-4", new Object[0],
                () -> transfer(new InsufficientFundsException(null))));
        assertThatThrownBy(() -> executor.execute(TRANSFER, "T-4", new Object[0], () -> "x"))
                .isExactlyInstanceOf(InsufficientFundsException.class)
                .hasMessage(null);
    }

    @Test
    void anyOtherExceptionRecordsNothingAndTheRetryRunsAgain() {
        IdempotentOperation<String> debit = IdempotentOperation
                .builder("Accounts.debit", Tier.REVERSIBLE, ResultType.of(String.class))
                .replayExceptions(InsufficientFundsException.class)
                .build();
        assertThatThrownBy(() -> executor.execute(debit, "T-5", new Object[0],
                () -> transfer(new IllegalStateException("gateway timeout"))))
                .isInstanceOf(IllegalStateException.class);
        assertThat(store.size()).isZero();

        assertThat(executor.execute(debit, "T-5", new Object[0], () -> {
            runs.incrementAndGet();
            return "done";
        })).isEqualTo("done");
        assertThat(runs).hasValue(2);
        assertThat(outcomes).containsExactly(Outcome.FAILED, Outcome.EXECUTED);
    }

    @Test
    void anyOtherExceptionOfAnIrreversibleCallLeavesItsOutcomeUnknown() {
        // a gateway timeout: the transfer may have happened; a retry must not do it again
        assertThatThrownBy(() -> executor.execute(TRANSFER, "T-7", new Object[0],
                () -> transfer(new IllegalStateException("gateway timeout"))))
                .isInstanceOf(IllegalStateException.class);
        assertThat(store.find(hash("T-7")).orElseThrow().status()).isEqualTo(IdempotencyRecord.Status.NEEDS_REVIEW);

        assertThatThrownBy(() -> executor.execute(TRANSFER, "T-7", new Object[0], () -> {
            runs.incrementAndGet();
            return "done";
        })).isInstanceOf(IdempotencyOutcomeUnknownException.class);
        assertThat(runs).hasValue(1);
        assertThat(outcomes).containsExactly(Outcome.FAILED, Outcome.OUTCOME_UNKNOWN);
    }

    @Test
    void withoutTheOptInNoExceptionIsRecorded() {
        IdempotentOperation<String> plain = IdempotentOperation
                .builder("Accounts.plain", Tier.REVERSIBLE, ResultType.of(String.class)).build();
        assertThatThrownBy(() -> executor.execute(plain, "P-1", new Object[0],
                () -> transfer(new InsufficientFundsException("no"))));
        assertThat(store.size()).isZero();
    }

    @Test
    void anExceptionNoLongerDeclaredIsAReplayExceptionAndTheMethodDoesNotRun() {
        assertThatThrownBy(() -> executor.execute(TRANSFER, "T-6", new Object[0],
                () -> transfer(new InsufficientFundsException("no"))));
        IdempotentOperation<String> redeployed = IdempotentOperation
                .builder("Accounts.transfer", Tier.IRREVERSIBLE, ResultType.of(String.class))
                .replayExceptions(PaymentDeclinedException.class)
                .build();

        assertThatThrownBy(() -> executor.execute(redeployed, "T-6", new Object[0], () -> transfer(null)))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining(InsufficientFundsException.class.getName())
                .hasMessageContaining("T-6");
        assertThat(runs).hasValue(1);
    }

    @Test
    void insideATransactionTheStoreCannotJoinTheExceptionIsRecordedOnlyOnCommit() {
        FakeTransaction committed = new FakeTransaction();
        IdempotentExecutor tx = IdempotentExecutor.builder(store).transactions(committed).build();
        assertThatThrownBy(() -> tx.execute(TRANSFER, "TX-1", new Object[0],
                () -> transfer(new InsufficientFundsException("no"))));
        assertThat(store.find(hash("TX-1")).orElseThrow().status()).isEqualTo(IdempotencyRecord.Status.IN_FLIGHT);
        committed.end(true);
        assertThat(store.find(hash("TX-1")).orElseThrow().status()).isEqualTo(IdempotencyRecord.Status.COMPLETED);

        FakeTransaction rolledBack = new FakeTransaction();
        IdempotentExecutor tx2 = IdempotentExecutor.builder(store).transactions(rolledBack).build();
        assertThatThrownBy(() -> tx2.execute(TRANSFER, "TX-2", new Object[0],
                () -> transfer(new InsufficientFundsException("no"))));
        rolledBack.end(false);
        assertThat(store.find(hash("TX-2"))).as("released with the rollback: a retry runs again").isEmpty();
    }

    @Test
    void aValueThatLooksLikeARecordedExceptionIsStillAValue() {
        IdempotentOperation<String> op = IdempotentOperation
                .builder("Accounts.note", Tier.REVERSIBLE, ResultType.of(String.class))
                .replayExceptions(InsufficientFundsException.class)
                .build();
        String sneaky = "\u0000{\"exception\":\"" + InsufficientFundsException.class.getName()
                + "\",\"message\":\"m\"}";
        executor.execute(op, "V-1", new Object[0], () -> sneaky);
        assertThat(executor.execute(op, "V-1", new Object[0], () -> "ran again")).isEqualTo(sneaky);
    }

    @Test
    void aCodecThatWritesTheReservedLeadingByteIsRefusedAndNothingIsRecorded() {
        IdempotentExecutor bad = IdempotentExecutor.builder(store).codec(zeroFirstCodec()).build();
        IdempotentOperation<String> note = IdempotentOperation
                .builder("Accounts.note", Tier.REVERSIBLE, ResultType.of(String.class)).build();
        assertThatThrownBy(() -> bad.execute(note, "Z-1", new Object[0], () -> "ok"))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining("0x00");
        assertThat(store.size()).isZero();
    }

    @Test
    void anIrreversibleCallWhoseCodecWritesTheReservedByteIsHeldForReviewNotRunAgain() {
        IdempotentExecutor bad = IdempotentExecutor.builder(store).codec(zeroFirstCodec()).build();
        assertThatThrownBy(() -> bad.execute(TRANSFER, "Z-2", new Object[0], () -> "sent"))
                .isInstanceOf(IdempotencyReplayException.class);
        assertThat(store.find(hash("Z-2")).orElseThrow().status()).isEqualTo(IdempotencyRecord.Status.NEEDS_REVIEW);
    }

    /** A codec that breaks the contract: its values start with the byte reserved for recorded exceptions. */
    private static ResultCodec zeroFirstCodec() {
        return new ResultCodec() {
            private final JacksonResultCodec json = JacksonResultCodec.create();

            @Override
            public byte[] encode(@Nullable Object value, Type declaredType) {
                byte[] data = json.encode(value, declaredType);
                byte[] out = new byte[data.length + 1];
                System.arraycopy(data, 0, out, 1, data.length);
                return out;
            }

            @Override
            public @Nullable Object decode(byte[] data, Type declaredType) {
                throw new AssertionError("never read");
            }
        };
    }

    @Test
    void anOperatorCannotResolveAKeyWithAValueThatLooksLikeARecordedException() {
        Instant now = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        byte[] keyHash = hash("R-1");
        store.claim(new ClaimRequest(keyHash, TRANSFER.name(), "R-1", new byte[32], Tier.IRREVERSIBLE, now,
                now.plusSeconds(30), now.plusSeconds(60), Duration.ofSeconds(1)));
        assertThat(store.markNeedsReview(keyHash, now.plusSeconds(30))).isTrue();
        IdempotencyAdmin admin = IdempotencyAdmin.builder(store).codec(zeroFirstCodec()).build();

        assertThatThrownBy(() -> admin.resolveExecuted(TRANSFER.name(), "R-1", "by hand", ResultType.of(String.class),
                Duration.ofHours(1), BY))
                .isInstanceOf(IdempotencyReplayException.class).hasMessageContaining("0x00");
        assertThat(store.find(keyHash).orElseThrow().status()).isEqualTo(IdempotencyRecord.Status.NEEDS_REVIEW);
    }

    @ParameterizedTest
    @ValueSource(classes = {Throwable.class, Exception.class, RuntimeException.class, Error.class,
            IdempotencyKeyReusedException.class, AbstractBusinessException.class, NoStringConstructorException.class,
            HiddenException.class})
    @SuppressWarnings("unchecked")
    void exceptionsThatCannotBeReplayedSafelyAreRefusedWhenTheOperationIsBuilt(Class<?> type) {
        assertThatThrownBy(() -> IdempotentOperation
                .builder("Accounts.bad", Tier.REVERSIBLE, ResultType.of(String.class))
                .replayExceptions((Class<? extends Throwable>) type)
                .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Accounts.bad")
                .hasMessageContaining(type.getName());
    }

    @Test
    void theAnnotationDeclaresReplayExceptions() throws NoSuchMethodException {
        assertThat(Idempotent.class.getMethod("replayExceptions").getDefaultValue())
                .isEqualTo(new Class<?>[0]);
    }

    private static byte[] hash(String key) {
        return Keys.hash("Accounts.transfer", "", Keys.normalize(key));
    }
}
