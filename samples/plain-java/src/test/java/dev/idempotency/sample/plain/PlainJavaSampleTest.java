package dev.idempotency.sample.plain;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The sample as it runs: two lost replies, three attempts, one order. */
class PlainJavaSampleTest {

    @Test
    void theRetriedCheckoutWritesOneOrderAndEveryAttemptGetsItBack() throws Exception {
        ByteArrayOutputStream output = new ByteArrayOutputStream();

        PlainJavaSample.Report report = PlainJavaSample.run(new PrintStream(output, true, StandardCharsets.UTF_8), 2);

        assertThat(report.attempts()).isEqualTo(3);
        assertThat(report.ordersWritten()).isEqualTo(1);
        assertThat(output.toString(StandardCharsets.UTF_8))
                .contains("attempt 1: the reply for CART-42 was lost")
                .contains("attempt 3: " + report.orderId())
                .contains("orders written: 1");
    }

    @Test
    void theServiceWasWovenByTheCompiler() {
        assertThat(Arrays.stream(OrderDesk.class.getDeclaredFields()).map(f -> f.getName()))
                .anyMatch(name -> name.startsWith("ajc$"));
    }
}
