package dev.idempotency.spring;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.CompoundExpression;
import org.springframework.expression.spel.ast.Elvis;
import org.springframework.expression.spel.ast.Indexer;
import org.springframework.expression.spel.ast.MethodReference;
import org.springframework.expression.spel.ast.NullLiteral;
import org.springframework.expression.spel.ast.OpEQ;
import org.springframework.expression.spel.ast.OpNE;
import org.springframework.expression.spel.ast.Projection;
import org.springframework.expression.spel.ast.PropertyOrFieldReference;
import org.springframework.expression.spel.ast.Selection;
import org.springframework.expression.spel.ast.Ternary;
import org.springframework.expression.spel.ast.VariableReference;

/**
 * The reads of a key expression that must not be null in a call: each variable ({@code #orderNo}) and each step of a
 * path from one ({@code #request}, then {@code #request.id}), in the order they are evaluated. A read the expression
 * handles null for itself is left out: the left of {@code ?:}, the condition of a ternary (and its branches when
 * the condition compares with {@code null}), an operand compared with {@code null}, and whatever follows a null-safe {@code ?.}. Selections and projections
 * ({@code ?[...]}, {@code ![...]}) are left alone: their {@code #this} is each element, not a call's value.
 */
final class NullReads {

    private NullReads() {
    }

    /** The reads to check, as expression texts that parse on their own. */
    static List<String> of(SpelNode ast) {
        Set<String> reads = new LinkedHashSet<>();
        walk(ast, false, reads);
        return new ArrayList<>(reads);
    }

    private static void walk(SpelNode node, boolean guarded, Set<String> reads) {
        if (node instanceof Selection || node instanceof Projection) {
            return;
        }
        if (node instanceof Elvis) {
            walk(node.getChild(0), true, reads);
            walk(node.getChild(1), guarded, reads);
            return;
        }
        if (node instanceof Ternary) {
            // a condition that tests for null says which branch may read it: the branches are its own word
            boolean nullAware = guarded || comparesWithNull(node.getChild(0));
            walk(node.getChild(0), true, reads);
            walk(node.getChild(1), nullAware, reads);
            walk(node.getChild(2), nullAware, reads);
            return;
        }
        if ((node instanceof OpEQ || node instanceof OpNE)
                && (node.getChild(0) instanceof NullLiteral || node.getChild(1) instanceof NullLiteral)) {
            walk(node.getChild(0), true, reads);
            walk(node.getChild(1), true, reads);
            return;
        }
        if (node instanceof VariableReference) {
            if (!guarded) {
                reads.add(node.toStringAST());
            }
            return;
        }
        if (node instanceof CompoundExpression && node.getChild(0) instanceof VariableReference) {
            path(node, guarded, reads);
            return;
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            walk(node.getChild(i), guarded, reads);
        }
    }

    /** {@code #a.b[0].c()}: {@code #a}, {@code #a.b}, {@code #a.b[0]}, {@code #a.b[0].c()}, up to a {@code ?.}. */
    private static void path(SpelNode compound, boolean guarded, Set<String> reads) {
        StringBuilder text = new StringBuilder();
        boolean stopped = guarded;
        for (int i = 0; i < compound.getChildCount(); i++) {
            SpelNode step = compound.getChild(i);
            // the arguments of a method and an indexer's index are expressions of their own
            for (int j = 0; j < step.getChildCount(); j++) {
                walk(step.getChild(j), guarded, reads);
            }
            if (stopped) {
                continue;
            }
            if (step instanceof Selection || step instanceof Projection || nullSafe(step)) {
                // what comes before ?. may be null by the expression's own word, and so may everything after it
                stopped = true;
                if (nullSafe(step) && i > 0) {
                    reads.remove(text.toString());
                }
                continue;
            }
            if (i > 0 && !(step instanceof Indexer)) {
                text.append('.');
            }
            text.append(step.toStringAST());
            reads.add(text.toString());
        }
    }

    private static boolean comparesWithNull(SpelNode node) {
        if ((node instanceof OpEQ || node instanceof OpNE)
                && (node.getChild(0) instanceof NullLiteral || node.getChild(1) instanceof NullLiteral)) {
            return true;
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            if (comparesWithNull(node.getChild(i))) {
                return true;
            }
        }
        return false;
    }

    private static boolean nullSafe(SpelNode step) {
        return (step instanceof PropertyOrFieldReference p && p.isNullSafe())
                || (step instanceof MethodReference m && m.isNullSafe());
    }
}
