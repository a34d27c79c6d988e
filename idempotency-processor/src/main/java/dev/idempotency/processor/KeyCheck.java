package dev.idempotency.processor;

import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.Assign;
import org.springframework.expression.spel.ast.BeanReference;
import org.springframework.expression.spel.ast.ConstructorReference;
import org.springframework.expression.spel.ast.FunctionReference;
import org.springframework.expression.spel.ast.OpDec;
import org.springframework.expression.spel.ast.OpInc;
import org.springframework.expression.spel.ast.TypeReference;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/**
 * Checks a key expression at compile time with the parser that evaluates it at run time: it must parse, and every
 * variable it reads ({@code #name}, {@code #p0}, {@code #a0}) must be a parameter of the method. {@code #root} and
 * {@code #this} are always there. It refuses what the run time's {@code KeyResolver} refuses: always assignment
 * ({@code =}, {@code ++}, {@code --}) and function calls ({@code #fn(...)}) other than the key function
 * {@code #parts(...)}, and that function hidden by a parameter named {@code parts}; and, unless the compilation
 * says the application's {@code KeyResolver} opts in ({@code -Aidempotency.spel=open}), type references {@code T(...)},
 * constructors {@code new ...} and bean references {@code @bean}.
 */
final class KeyCheck {

    private static final Pattern INDEXED = Pattern.compile("([pa])(\\d{1,9})");
    private static final SpelExpressionParser PARSER = new SpelExpressionParser();

    private KeyCheck() {
    }

    /**
     * @param expression the key expression, not blank
     * @param parameters the method's parameter names, in order
     * @param method     how messages name the method ({@code OrderService.createOrder})
     * @param open       whether the run time's {@code KeyResolver} allows type references, constructors and bean
     *                   references ({@code -Aidempotency.spel=open}); assignment and functions stay refused
     * @return what is wrong with the expression, as an error message that says how to fix it; empty if nothing
     */
    static Optional<String> check(String expression, List<String> parameters, String method, boolean open) {
        SpelNode ast;
        try {
            ast = PARSER.parseRaw(expression).getAST();
        } catch (RuntimeException e) {
            return Optional.of("the key of " + method + " is not a valid SpEL expression: " + e.getMessage()
                    + "; write a SpEL expression over the parameters, such as \"'ORDER:' + #orderId\""
                    + " (text in single quotes, parameters as #name)");
        }
        return walk(ast, parameters, method, open);
    }

    private static Optional<String> walk(SpelNode node, List<String> parameters, String method, boolean open) {
        Optional<String> refused = refused(node, method, open);
        if (refused.isPresent()) {
            return refused;
        }
        if (node instanceof FunctionReference && isParts(node) && parameters.contains(PARTS)) {
            return Optional.of("the key of " + method + " calls #parts(...), the key function, but a parameter named"
                    + " parts hides it: rename the parameter");
        }
        if (node instanceof VariableReference) {
            Optional<String> problem = checkVariable(node.toStringAST().substring(1), parameters, method);
            if (problem.isPresent()) {
                return problem;
            }
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            Optional<String> problem = walk(node.getChild(i), parameters, method, open);
            if (problem.isPresent()) {
                return problem;
            }
        }
        return Optional.empty();
    }

    /** What the run time's key resolver refuses, as it refuses it. */
    private static Optional<String> refused(SpelNode node, String method, boolean open) {
        String what;
        if (node instanceof Assign || node instanceof OpInc || node instanceof OpDec) {
            return Optional.of("the key of " + method + " assigns ('" + node.toStringAST() + "'), which a key"
                    + " expression may never do: compute the key from the parameters without changing anything,"
                    + " such as \"'ORDER:' + #orderId\"");
        } else if (node instanceof FunctionReference && isParts(node)) {
            return Optional.empty();
        } else if (node instanceof FunctionReference) {
            return Optional.of("the key of " + method + " calls the function '" + node.toStringAST() + "', and a"
                    + " key expression has one function, #parts(...) (a key of several parts): call a method of a"
                    + " parameter instead, such as #order.id() or #name.toUpperCase()");
        } else if (open) {
            return Optional.empty();
        } else if (node instanceof TypeReference) {
            what = "a type reference T(...)";
        } else if (node instanceof ConstructorReference) {
            what = "a constructor (new ...)";
        } else if (node instanceof BeanReference) {
            what = "a bean reference (@name)";
        } else {
            return Optional.empty();
        }
        return Optional.of("the key of " + method + " uses " + what + " ('" + node.toStringAST() + "'), which the"
                + " default KeyResolver refuses at run time: key on the parameters and their properties, such as"
                + " #order.id; or, if the application declares a KeyResolver bean that allows it"
                + " (KeyResolver.builder().allowTypeReferences(), allowConstructors(), allowBeanReferences(...)),"
                + " compile with -A" + IdempotencyProcessor.SPEL_OPTION + "=open");
    }

    /** The one function a key expression may call (the run time's {@code KeyParts.of}). */
    static final String PARTS = "parts";

    static boolean isParts(SpelNode node) {
        return node instanceof FunctionReference && node.toStringAST().startsWith("#" + PARTS + "(");
    }

    private static Optional<String> checkVariable(String name, List<String> parameters, String method) {
        if (name.equals("root") || name.equals("this") || parameters.contains(name)) {
            return Optional.empty();
        }
        Matcher indexed = INDEXED.matcher(name);
        if (indexed.matches()) {
            int index = Integer.parseInt(indexed.group(2));
            if (index < parameters.size()) {
                return Optional.empty();
            }
            return Optional.of("the key of " + method + " refers to #" + name + ", but " + method
                    + (parameters.isEmpty() ? " takes no parameters"
                            : " takes " + parameters.size() + " (#" + indexed.group(1) + "0 to #"
                                    + indexed.group(1) + (parameters.size() - 1) + ")")
                    + "; refer to an existing parameter, preferably by name" + named(parameters));
        }
        return Optional.of("the key of " + method + " refers to #" + name + ", which is not a parameter of "
                + method + "; refer to " + (parameters.isEmpty() ? "nothing but constants: the method takes no"
                        + " parameters" : "one of its parameters" + named(parameters)));
    }

    private static String named(List<String> parameters) {
        if (parameters.isEmpty()) {
            return "";
        }
        StringBuilder sb = new StringBuilder(" (");
        for (int i = 0; i < parameters.size(); i++) {
            sb.append(i == 0 ? "" : ", ").append('#').append(parameters.get(i));
        }
        return sb.append(')').toString();
    }
}
