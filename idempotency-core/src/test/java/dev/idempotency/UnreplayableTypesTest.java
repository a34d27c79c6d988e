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
        assertThat(UnreplayableTypes.refusedSupertype(ByteArrayInputStream.class)).contains("java.io.InputStream");
        assertThat(UnreplayableTypes.refusedSupertype(IntStream.class)).isPresent();
        assertThat(UnreplayableTypes.refusedSupertype(CompletableFuture.class)).isPresent();
        assertThat(UnreplayableTypes.refusedSupertype(Thread.class)).contains("java.lang.Thread");
    }

    @Test
    void valuesAreNotRefused() {
        assertThat(UnreplayableTypes.refusedSupertype(ArrayList.class)).isEmpty();
        assertThat(UnreplayableTypes.refusedSupertype(String.class)).isEmpty();
        assertThat(UnreplayableTypes.refusedSupertype(int.class)).isEmpty();
        assertThat(UnreplayableTypes.refusedSupertype(byte[].class)).isEmpty();
    }
}
