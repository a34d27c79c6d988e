package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.ParameterizedType;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A result type token says what a replay builds: generics included, equal when the types are equal. */
class ResultTypeTest {

    @Test
    void anAnonymousSubclassCapturesTheGenericType() {
        ResultType<List<String>> list = new ResultType<>() { };
        assertThat(list.type()).isInstanceOf(ParameterizedType.class);
        ParameterizedType p = (ParameterizedType) list.type();
        assertThat(p.getRawType()).isEqualTo(List.class);
        assertThat(p.getActualTypeArguments()).containsExactly(String.class);
        assertThat(list).hasToString("java.util.List<java.lang.String>");
    }

    @Test
    void ofAClassAndOfAReflectedTypeCarryThatType() {
        assertThat(ResultType.of(String.class).type()).isEqualTo(String.class);
        assertThat(ResultType.of(void.class).type()).isEqualTo(void.class);
        assertThat(ResultType.ofType(Integer.class).type()).isEqualTo(Integer.class);
        assertThat(ResultType.of(String.class)).hasToString("java.lang.String");
    }

    @Test
    void tokensOfTheSameTypeAreEqualWhicheverWayTheyWereMade() {
        ResultType<Map<String, Integer>> captured = new ResultType<>() { };
        ResultType<Map<String, Integer>> again = new ResultType<>() { };
        assertThat(captured).isEqualTo(again).hasSameHashCodeAs(again);
        assertThat(ResultType.ofType(captured.type())).isEqualTo(captured);
        assertThat(ResultType.of(String.class)).isEqualTo(ResultType.ofType(String.class))
                .hasSameHashCodeAs(ResultType.ofType(String.class));

        assertThat(ResultType.of(String.class)).isNotEqualTo(ResultType.of(Integer.class));
        assertThat(captured).isNotEqualTo(new ResultType<Map<String, Long>>() { });
        assertThat(ResultType.of(String.class)).isNotEqualTo(String.class).isNotEqualTo(null);
        assertThat(ResultType.of(String.class).hashCode()).isEqualTo(String.class.hashCode());
    }

    @Test
    @SuppressWarnings({"rawtypes", "unchecked"})
    void aTokenWithoutATypeArgumentIsRefusedSayingHowToWriteIt() {
        assertThatThrownBy(() -> new ResultType() { })
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("new ResultType<X>() {}");
        assertThatThrownBy(() -> ResultType.of(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("type");
    }
}
