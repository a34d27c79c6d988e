package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.internal.UnreplayableTypes;
import java.io.ByteArrayInputStream;
import java.util.ArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class UnreplayableTypesTest {

    @Test
    void aRefusedTypeOrASubtypeIsFoundByItsRefusedSupertype() {
        assertThat(UnreplayableTypes.reason(ByteArrayInputStream.class)).get().asString()
                .contains("java.io.InputStream");
        assertThat(UnreplayableTypes.reason(IntStream.class)).isPresent();
        assertThat(UnreplayableTypes.reason(CompletableFuture.class)).isPresent();
        assertThat(UnreplayableTypes.reason(Thread.class)).contains(UnreplayableTypes.all().get("java.lang.Thread"));
    }

    @Test
    void valuesAreNotRefused() {
        assertThat(UnreplayableTypes.reason(ArrayList.class)).isEmpty();
        assertThat(UnreplayableTypes.reason(String.class)).isEmpty();
        assertThat(UnreplayableTypes.reason(int.class)).isEmpty();
        assertThat(UnreplayableTypes.reason(byte[].class)).isEmpty();
    }
}
