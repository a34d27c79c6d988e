package dev.idempotency.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.Tier;
import dev.idempotency.store.IdempotencyRecord;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The authenticated value format, without Redis: any change to a value, or another key, is a rejection. */
class RecordFormatTest {

    private static final byte[] A = "secret-a-0123456789-0123456789-01".getBytes(StandardCharsets.UTF_8);
    private static final byte[] B = "secret-b-0123456789-0123456789-01".getBytes(StandardCharsets.UTF_8);
    private static final byte[] HASH = new byte[32];
    private static final byte[] KEY = "p:{00}".getBytes(StandardCharsets.US_ASCII);

    private static final IdempotencyRecord RECORD = new IdempotencyRecord(HASH, "Orders.create", "K-1", new byte[32],
            Tier.REVERSIBLE, IdempotencyRecord.Status.COMPLETED, "\"K-1#1\"".getBytes(StandardCharsets.UTF_8), null,
            Instant.ofEpochMilli(1_000), Instant.ofEpochMilli(2_000));

    @Test
    void aValueReadsBackUnderItsKeyWithTheSecretOrAnAcceptedOne() throws Exception {
        byte[] value = new RecordFormat(A, List.of()).encode(KEY, RECORD);

        assertThat(new RecordFormat(A, List.of()).decode(KEY, HASH, value)).isEqualTo(RECORD);
        assertThat(new RecordFormat(B, List.of(A)).decode(KEY, HASH, value)).isEqualTo(RECORD);
        assertThatThrownBy(() -> new RecordFormat(B, List.of()).decode(KEY, HASH, value))
                .isInstanceOf(RecordFormat.Rejected.class).hasMessageContaining("does not verify");
    }

    @Test
    void aChangeInAnyByteOrAnotherRedisKeyIsRejected() {
        RecordFormat format = new RecordFormat(A, List.of());
        byte[] value = format.encode(KEY, RECORD);
        for (int i = 0; i < value.length; i++) {
            byte[] changed = value.clone();
            changed[i] ^= 0x01;
            assertThatThrownBy(() -> format.decode(KEY, HASH, changed)).as("byte %d changed", i)
                    .isInstanceOf(RecordFormat.Rejected.class);
        }
        assertThatThrownBy(() -> format.decode("q:{00}".getBytes(StandardCharsets.US_ASCII), HASH, value))
                .isInstanceOf(RecordFormat.Rejected.class).hasMessageContaining("does not verify");
        // the MAC's last character carries two unused bits: another spelling of the same MAC is not accepted either
        for (int bit = 1; bit <= 2; bit++) {
            byte[] respelled = value.clone();
            respelled[1 + 43] = (byte) "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".charAt(
                    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".indexOf(value[1 + 43]) ^ bit);
            assertThatThrownBy(() -> format.decode(KEY, HASH, respelled)).isInstanceOf(RecordFormat.Rejected.class);
        }
        byte[] truncated = java.util.Arrays.copyOf(value, value.length - 1);
        assertThatThrownBy(() -> format.decode(KEY, HASH, truncated)).isInstanceOf(RecordFormat.Rejected.class);
    }

    @Test
    void aValueOfFormatOneIsAnOlderFormatAndAnythingElseIsNotOfThisFormat() {
        RecordFormat format = new RecordFormat(A, List.of());
        byte[] old = "{\"format\":1,\"result\":\"IkstMSMxIg==\"}".getBytes(StandardCharsets.UTF_8);

        assertThatThrownBy(() -> format.decode(KEY, HASH, old)).isInstanceOfSatisfying(RecordFormat.Rejected.class,
                r -> assertThat(r.olderFormat()).isTrue());
        assertThatThrownBy(() -> format.decode(KEY, HASH, "2.forged".getBytes(StandardCharsets.US_ASCII)))
                .isInstanceOfSatisfying(RecordFormat.Rejected.class, r -> assertThat(r.olderFormat()).isFalse());
        assertThatThrownBy(() -> format.decode(KEY, HASH, new byte[0])).isInstanceOf(RecordFormat.Rejected.class);
    }
}
