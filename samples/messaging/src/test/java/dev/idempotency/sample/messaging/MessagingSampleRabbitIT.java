package dev.idempotency.sample.messaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/** The sample on the machine's RabbitMQ: every order published twice, a consumer killed mid-stream, one effect each. */
@EnabledIfEnvironmentVariable(named = MessagingSample.URL, matches = ".+")
class MessagingSampleRabbitIT {

    @Test
    void everyDistinctMessageHasOneEffect() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        MessagingSample.Result result = MessagingSample.run(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String out = bytes.toString(StandardCharsets.UTF_8);
        System.out.print(out);

        assertThat(result.distinct()).as(out).isEqualTo(MessagingSample.ORDERS);
        assertThat(result.effects()).as(out).isEqualTo(MessagingSample.ORDERS);
        assertThat(result.delivered()).as(out).isGreaterThanOrEqualTo(2 * MessagingSample.ORDERS);
        assertThat(result.redelivered()).as("the kill left deliveries unacknowledged, which came back: " + out)
                .isPositive();
        assertThat(out).contains("consumer 1 killed mid-stream")
                .contains("messages delivered: " + result.delivered() + ", effects: " + MessagingSample.ORDERS);
    }
}
