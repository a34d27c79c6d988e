package dev.idempotency.codec;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.annotation.JsonTypeInfo;
import dev.idempotency.IdempotencyReplayException;
import dev.idempotency.ResultType;
import java.lang.reflect.Type;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The allow-list at its edges: defaults, enums with bodies, external ids, long ids and what a refusal says. */
class AllowListEdgesTest {

    public interface Charge {
        String label();
    }

    /** An allow-listed enum whose constant has a body: written under the enum's id, not the constant's class. */
    public enum Fee implements Charge {
        FLAT {
            @Override
            public String label() {
                return "flat";
            }
        },
        NONE;

        @Override
        public String label() {
            return "none";
        }
    }

    public record Percent(int basisPoints) implements Charge {
        @Override
        public String label() {
            return basisPoints + "bp";
        }
    }

    @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "kind",
            defaultImpl = Plain.class)
    public interface Note {
    }

    public record Plain(String text) implements Note {
    }

    public record Loud(String text) implements Note {
    }

    @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "kind",
            defaultImpl = Unlisted.class)
    public interface Memo {
    }

    public record Listed(String text) implements Memo {
    }

    public record Unlisted(String text) implements Memo {
    }

    @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.EXTERNAL_PROPERTY, property = "kind")
    public interface External {
    }

    public record Ext(String v) implements External {
    }

    private static final Type CHARGES = new ResultType<List<Charge>>() { }.type();

    @Test
    void anEnumConstantWithABodyReplaysThroughItsEnumsId() {
        JacksonResultCodec codec = JacksonResultCodec.builder().allowSubtypes(Fee.class, Percent.class).build();
        List<Charge> charges = List.of(Fee.FLAT, Fee.NONE, new Percent(25));
        byte[] data = codec.encode(charges, CHARGES);
        assertThat(new String(data, UTF_8)).contains("\"Fee\"").doesNotContain("Fee$1");
        assertThat(codec.decode(data, CHARGES)).isEqualTo(charges);
    }

    @Test
    void aRowWithoutATypeIdReplaysAsTheDefaultImplOnlyIfItIsAllowListed() {
        JacksonResultCodec codec = JacksonResultCodec.builder().allowSubtypes(Plain.class, Loud.class).build();
        assertThat(codec.decode("{\"text\":\"hi\"}".getBytes(UTF_8), Note.class)).isEqualTo(new Plain("hi"));
        assertThat(codec.decode(codec.encode(new Loud("HI"), Note.class), Note.class)).isEqualTo(new Loud("HI"));

        JacksonResultCodec memos = JacksonResultCodec.builder().allowSubtypes(Listed.class).build();
        assertThatThrownBy(() -> memos.decode("{\"text\":\"hi\"}".getBytes(UTF_8), Memo.class))
                .isInstanceOf(IdempotencyReplayException.class);
        assertThat(memos.decode(memos.encode(new Listed("x"), Memo.class), Memo.class)).isEqualTo(new Listed("x"));
    }

    @Test
    void anExternalPropertyIdOnAClassIsWrittenAsAPropertyAndReadBack() {
        JacksonResultCodec codec = JacksonResultCodec.builder().allowSubtypes(Ext.class).build();
        Type type = new ResultType<List<External>>() { }.type();
        List<External> value = List.of(new Ext("a"));
        byte[] data = codec.encode(value, type);
        assertThat(new String(data, UTF_8)).isEqualTo("[{\"kind\":\"Ext\",\"v\":\"a\"}]");
        assertThat(codec.decode(data, type)).isEqualTo(value);
    }

    @Test
    void aRefusedIdIsShownCutTo120CharactersAndTheKnownIdsAreListed() {
        JacksonResultCodec codec = JacksonResultCodec.builder().allowSubtypes(Fee.class, Percent.class).build();
        String id120 = "x".repeat(120);
        assertThatThrownBy(() -> codec.decode(("[[\"" + id120 + "\",{}]]").getBytes(UTF_8), CHARGES))
                .satisfies(e -> assertThat(e.getMessage()).contains("'" + id120 + "'"))
                .hasMessageContaining("known: [Fee, Percent]");
        String id121 = "y".repeat(121);
        assertThatThrownBy(() -> codec.decode(("[{\"@type\":\"" + id121 + "\"}]").getBytes(UTF_8), CHARGES))
                .isInstanceOf(IdempotencyReplayException.class)
                .satisfies(e -> assertThat(e.getMessage()).contains("'" + "y".repeat(120) + "...'")
                        .doesNotContain(id121));
    }

    @Test
    void aCodecBuiltOnAnotherCodecsMapperHasOnlyItsOwnAllowList() {
        JacksonResultCodec first = JacksonResultCodec.builder().allowSubtypes(Fee.class).build();
        JacksonResultCodec second = JacksonResultCodec.builder().mapper(first.mapper()).allowSubtypes(Percent.class)
                .build();
        assertThat(second.allowedSubtypes()).containsExactly(Percent.class);
        assertThatThrownBy(() -> second.encode(List.of(Fee.FLAT), CHARGES))
                .isInstanceOf(IdempotencyReplayException.class).hasMessageContaining("Fee");
        assertThat(second.decode(second.encode(List.of(new Percent(1)), CHARGES), CHARGES))
                .isEqualTo(List.of(new Percent(1)));
    }
}
