package dev.idempotency.sample.order;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.Tier;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The sample's story at half its timings: one order when protected, duplicates when not. */
class OrderServiceSampleTest {

    static final Timings FAST = Timings.STORY.scaled(0.5);

    final ByteArrayOutputStream output = new ByteArrayOutputStream();
    final PrintStream out = new PrintStream(output, true, StandardCharsets.UTF_8);

    @Test
    void protectedTheRetriesEndWithOneOrderAndEveryAnswerCarriesTheSameReceipt() throws Exception {
        Scenario.Report report = OrderServiceSample.run(true, FAST, out, 42);

        assertThat(report.attempts()).isGreaterThan(1);
        assertThat(report.ordersWritten()).isEqualTo(1);
        assertThat(report.served()).isEqualTo(report.attempts());
        assertThat(report.servedReceipts()).hasSize(1);
        assertThat(report.receipts()).isSubsetOf(report.servedReceipts());
        assertThat(output.toString(StandardCharsets.UTF_8)).contains("orders written                        : 1");
    }

    @Test
    void unprotectedEveryRetryWritesAnotherOrder() throws Exception {
        Scenario.Report report = OrderServiceSample.run(false, FAST, out, 42);

        assertThat(report.attempts()).isEqualTo(12);
        assertThat(report.ordersWritten()).isEqualTo(12);
        assertThat(report.servedReceipts()).hasSize(12);
        assertThat(report.answered()).isZero();
        assertThat(report.succeeded()).isFalse();
    }

    @Test
    void theAdminListsTheOperationTheAnnotationProcessorFoundInTheSample() {
        try (var context = SampleConfiguration.start(true, FAST)) {
            IdempotencyAdmin admin = context.getBean(IdempotencyAdmin.class);

            IdempotencyAdmin.Operation createOrder = admin.operation("OrderService.createOrder").orElseThrow(() ->
                    new AssertionError("no OrderService.createOrder in " + admin.operations()
                            + ": was the sample compiled with idempotency-processor?"));
            assertThat(createOrder.className()).isEqualTo(OrderService.class.getName());
            assertThat(createOrder.method()).isEqualTo("createOrder");
            assertThat(createOrder.parameterTypes())
                    .isEqualTo(List.of(String.class.getName(), OrderRequest.class.getName()));
            assertThat(createOrder.tier()).isEqualTo(Tier.REVERSIBLE);
            assertThat(createOrder.key()).isEqualTo("'APPROVAL:' + #approvalNo + ':MAIN'");
        }
    }
}
