package dev.idempotency.sample.refund;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The story over a real stdio subprocess: a timeout, two retries of the turn, a regenerated call, one refund. */
class RefundAgentTest {

    @Test
    void theAgentsRetriesAndRegeneratedCallExecuteOneRefund() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int refunds = ScriptedAgent.run(ScriptedAgent.serverCommand(List.of()),
                new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String out = bytes.toString(StandardCharsets.UTF_8);

        assertThat(refunds).as(out).isEqualTo(1);
        assertThat(out).contains("tool refund: IRREVERSIBLE, readOnly=false, destructive=true")
                .contains("hold_funds A-1002: tool_failed (retry: same_call), the ledger refused the commit")
                .contains("hold_funds A-1002 retry: {holdId=H-3, orderId=A-1002, cents=12000}")
                .contains("holds released by compensation: 1")
                .contains("refund: elicitation (Confirm refund with idempotency key 'turn:turn-2:refund': "
                        + "{\"orderId\":\"A-1001\",\"cents\":4999}. This cannot be undone.) -> the user says yes")
                .contains("client-side timeout")
                .contains("refund retry 1: {refundId=R-A-1001-1")
                .contains("refund retry 2: {refundId=R-A-1001-1")
                .contains("(replayed)")
                .contains("the model regenerates the call with 5000 cents: key_reused (retry: never)")
                .endsWith("refunds executed: 1" + System.lineSeparator());
    }

    @Test
    void onTheNewRevisionTheUserConfirmsByInputRequiredAndOneRefundIsExecuted() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int refunds = ScriptedAgent.run(ScriptedAgent.serverCommand(List.of("--revision", "2026-07-28")),
                new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String out = bytes.toString(StandardCharsets.UTF_8);

        assertThat(refunds).as(out).isEqualTo(1);
        assertThat(out).contains("tool refund: IRREVERSIBLE, readOnly=false, destructive=true")
                .contains("hold_funds A-1002 retry: {holdId=H-3, orderId=A-1002, cents=12000}")
                .contains("refund: input_required (Confirm refund with idempotency key 'turn:turn-2:refund': "
                        + "{\"orderId\":\"A-1001\",\"cents\":4999}. This cannot be undone.) -> the user says yes")
                .contains("client-side timeout")
                .contains("refund retry 1: {refundId=R-A-1001-1")
                .contains("refund retry 2: {refundId=R-A-1001-1")
                .contains("the model regenerates the call with 5000 cents: key_reused (retry: never)")
                .endsWith("refunds executed: 1" + System.lineSeparator());
    }

    @Test
    void theServerEndsWhenItsInputEndsOnEitherRevision() throws Exception {
        for (List<String> args : List.of(List.<String>of(), List.of("--revision", "2026-07-28"))) {
            Process server = new ProcessBuilder(ScriptedAgent.serverCommand(args))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            try {
                server.getOutputStream().close();

                assertThat(server.waitFor(60, TimeUnit.SECONDS)).as("ended %s", args).isTrue();
                assertThat(server.exitValue()).isZero();
            } finally {
                server.destroyForcibly();
            }
        }
    }

    @Test
    void aRequestBeforeInitializeIsAnsweredWithAJsonRpcErrorNamingIt() throws Exception {
        Process server = new ProcessBuilder(ScriptedAgent.serverCommand(List.of()))
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try (BufferedReader answers = new BufferedReader(new InputStreamReader(server.getInputStream(),
                StandardCharsets.UTF_8))) {
            OutputStream requests = server.getOutputStream();
            requests.write("""
                    {"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}
                    {"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25",\
                    "capabilities":{},"clientInfo":{"name":"test","version":"1"}}}
                    {"jsonrpc":"2.0","method":"notifications/initialized"}
                    {"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}
                    """.getBytes(StandardCharsets.UTF_8));
            requests.flush();

            String refused = answers.readLine();
            String initialized = answers.readLine();
            String listed = answers.readLine();

            assertThat(refused).startsWith("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,")
                    .contains("tools/list before initialize");
            assertThat(initialized).contains("\"id\":2", "\"protocolVersion\":\"2025-11-25\"");
            assertThat(listed).contains("\"id\":3", "\"refund\"");
            requests.close();
            assertThat(server.waitFor(60, TimeUnit.SECONDS)).isTrue();
        } finally {
            server.destroyForcibly();
        }
    }
}
