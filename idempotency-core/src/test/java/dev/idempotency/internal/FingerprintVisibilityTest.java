package dev.idempotency.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.codec.JacksonResultCodec;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/**
 * The fingerprint sees every property the method receives, whatever the application mapper's inclusion and access
 * settings (issue 16, item 5): a changed request under a reused key is refused, never replayed.
 */
class FingerprintVisibilityTest {

    public record Transfer(String id, @JsonProperty(access = JsonProperty.Access.WRITE_ONLY) BigDecimal amount) {
    }

    public record Form(String note, List<String> tags, int count, Map<String, String> extra) {
    }

    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record Annotated(String note, @JsonInclude(JsonInclude.Include.NON_NULL) String other) {
    }

    public record Secret(String id, @JsonIgnore String ignored) {
    }

    private static byte[] fp(Fingerprints f, Object... arguments) {
        return f.fingerprint(arguments, i -> false);
    }

    @Test
    void aWriteOnlyPropertyIsPartOfTheFingerprint() {
        Fingerprints f = new Fingerprints(JacksonResultCodec.defaultMapper());
        assertThat(fp(f, new Transfer("T-1", new BigDecimal("100.00"))))
                .isNotEqualTo(fp(f, new Transfer("T-1", new BigDecimal("9999.00"))));
        // and the application's own mapper still hides it, as it asked
        assertThat(JacksonResultCodec.defaultMapper().writeValueAsString(new Transfer("T-1", BigDecimal.ONE)))
                .doesNotContain("amount");
    }

    @Test
    void nonDefaultInclusionOnTheMapperDoesNotCollapseEmptyZeroAndNull() {
        JsonMapper nonDefault = JacksonResultCodec.defaultMapper().rebuild()
                .changeDefaultPropertyInclusion(v -> JsonInclude.Value.construct(JsonInclude.Include.NON_DEFAULT,
                        JsonInclude.Include.NON_DEFAULT))
                .build();
        Fingerprints f = new Fingerprints(nonDefault);
        List<byte[]> distinct = List.of(
                fp(f, new Form("", List.of(), 0, Map.of())),
                fp(f, new Form(null, List.of(), 0, Map.of())),
                fp(f, new Form("", null, 0, Map.of())),
                fp(f, new Form("", List.of(), 1, Map.of())),
                fp(f, new Form("", List.of(), 0, null)),
                fp(f, new Form("", List.of(), 0, java.util.Collections.singletonMap("k", null))));
        for (int i = 0; i < distinct.size(); i++) {
            for (int j = i + 1; j < distinct.size(); j++) {
                assertThat(distinct.get(i)).as(i + " vs " + j).isNotEqualTo(distinct.get(j));
            }
        }
    }

    @Test
    void inclusionAnnotationsOnClassesAndPropertiesDoNotApplyEither() {
        Fingerprints f = new Fingerprints(JacksonResultCodec.defaultMapper());
        assertThat(fp(f, new Annotated("", "x"))).isNotEqualTo(fp(f, new Annotated(null, "x")));
        assertThat(fp(f, new Annotated("a", null))).isNotEqualTo(fp(f, new Annotated("a", "")));
    }

    @Test
    void theDefaultFingerprintOfPlainArgumentsIsUnchanged() {
        Fingerprints f = new Fingerprints(JacksonResultCodec.defaultMapper());
        assertThat(new String(f.canonicalJson(new Object[] {new Form("n", List.of("b", "a"), 2, Map.of())},
                i -> false), java.nio.charset.StandardCharsets.UTF_8))
                .isEqualTo("[{\"count\":2,\"extra\":{},\"note\":\"n\",\"tags\":[\"b\",\"a\"]}]");
    }

    @Test
    void jsonIgnoreStaysOutAsDocumented() {
        Fingerprints f = new Fingerprints(JacksonResultCodec.defaultMapper());
        assertThat(fp(f, new Secret("S", "a"))).isEqualTo(fp(f, new Secret("S", "b")));
    }

    @Test
    void throughTheExecutorAChangedAmountUnderAReusedKeyIsRefusedNotReplayed() {
        IdempotentExecutor executor = IdempotentExecutor.builder(new InMemoryIdempotencyStore()).build();
        IdempotentOperation<String> transfer = IdempotentOperation
                .builder("Bank.transfer", Tier.REVERSIBLE, ResultType.of(String.class)).build();
        executor.execute(transfer, "T-1", new Object[] {new Transfer("T-1", new BigDecimal("100.00"))}, () -> "ok");
        assertThatThrownBy(() -> executor.execute(transfer, "T-1",
                new Object[] {new Transfer("T-1", new BigDecimal("9999.00"))}, () -> "ran again"))
                .isInstanceOf(IdempotencyKeyReusedException.class);
    }
}
