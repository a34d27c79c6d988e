package dev.idempotency.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import java.lang.reflect.Method;
import org.junit.jupiter.api.Test;

/** A bean's tools show the openWorldHint of their class's {@code @McpTool}, true unless it says otherwise. */
class OpenWorldHintTest {

    @McpTool(openWorld = false)
    static class OwnLedger {
        @Idempotent(key = "'NOTE:' + #idempotencyKey", tier = Tier.REVERSIBLE, operation = "note")
        public String note(String text, String idempotencyKey) {
            return text;
        }
    }

    @McpTool
    static class Gateway {
        @Idempotent(key = "'PAY:' + #idempotencyKey", tier = Tier.IRREVERSIBLE, operation = "pay")
        public String pay(long cents, String idempotencyKey) {
            return "paid";
        }
    }

    private static Boolean hint(Class<?> type, String name) throws Exception {
        Method method = java.util.Arrays.stream(type.getMethods()).filter(m -> m.getName().equals(name)).findFirst()
                .orElseThrow();
        BeanMethodBinding binding = new BeanMethodBinding(null, method, method, method.getAnnotation(Idempotent.class));
        return McpIdempotentTools.tool(binding, null, true).annotations().openWorldHint();
    }

    @Test
    void theClassSaysWhetherItsToolsReachOutside() throws Exception {
        assertThat(hint(OwnLedger.class, "note")).isFalse();
        assertThat(hint(Gateway.class, "pay")).isTrue();
    }
}
