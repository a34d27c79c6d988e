package dev.idempotency.processor;

import java.util.Optional;
import java.util.regex.Pattern;
import javax.lang.model.element.AnnotationMirror;
import javax.lang.model.element.ExecutableElement;
import javax.lang.model.element.TypeElement;
import javax.lang.model.element.VariableElement;
import javax.lang.model.type.DeclaredType;
import javax.lang.model.type.TypeKind;
import javax.lang.model.type.TypeMirror;
import org.jspecify.annotations.Nullable;

/**
 * The MCP rule: a writing {@code @Idempotent} method of a class marked {@value #MCP_TOOL} (or whose superclass is) is
 * an MCP tool, and its key must come from outside the model: from its {@code String idempotencyKey} parameter, which
 * the MCP adapter fills from the client runtime's key or the turn. The marker is recognised by name, so the
 * processor needs no MCP jar. {@code McpManifest} and {@code McpIdempotentTools.Builder.bean} apply the same rule to
 * compiled classes.
 */
final class McpToolCheck {

    static final String MCP_TOOL = "dev.idempotency.mcp.McpTool";
    static final String KEY_PARAMETER = "idempotencyKey";
    private static final Pattern KEY_REFERENCE = Pattern.compile("#" + KEY_PARAMETER + "(?![A-Za-z0-9_$])");

    private McpToolCheck() {
    }

    /** The error for a tool keyed on the model's output; empty when the method is no tool, reads, or is keyed well. */
    static Optional<String> check(ExecutableElement method, TypeElement type, String where, String tier,
            String key) {
        if (tier.equals("READ_ONLY") || key.isBlank()) {
            return Optional.empty();  // a blank writing key is refused on its own
        }
        TypeElement marked = marked(type);
        if (marked == null) {
            return Optional.empty();
        }
        boolean parameter = false;
        for (VariableElement p : method.getParameters()) {
            if (p.getSimpleName().contentEquals(KEY_PARAMETER)) {
                parameter = p.asType().toString().equals("java.lang.String");
            }
        }
        if (parameter && KEY_REFERENCE.matcher(key).find()) {
            return Optional.empty();
        }
        String fix = parameter ? "key on it, such as key = \"'REFUND:' + #idempotencyKey\""
                : "add a parameter String idempotencyKey (the MCP adapter fills it from the client runtime's key or"
                + " the turn, never from the model) and key on it, such as key = \"'REFUND:' + #idempotencyKey\"";
        return Optional.of(where + " is an MCP tool (@McpTool on " + marked.getSimpleName() + ") and " + tier
                + ", but its key \"" + key + "\" is made from arguments the model writes, not from "
                + (parameter ? "its" : "an") + " idempotencyKey parameter: a model that regenerates the call would get"
                + " a new key and a second effect; " + fix);
    }

    private static @Nullable TypeElement marked(TypeElement type) {
        for (TypeElement t = type; t != null; t = superclass(t)) {
            for (AnnotationMirror m : t.getAnnotationMirrors()) {
                if (((TypeElement) m.getAnnotationType().asElement()).getQualifiedName().contentEquals(MCP_TOOL)) {
                    return t;
                }
            }
        }
        return null;
    }

    private static @Nullable TypeElement superclass(TypeElement type) {
        TypeMirror s = type.getSuperclass();
        return s.getKind() == TypeKind.DECLARED ? (TypeElement) ((DeclaredType) s).asElement() : null;
    }
}
