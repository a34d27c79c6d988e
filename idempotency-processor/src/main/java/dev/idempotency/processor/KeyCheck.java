package dev.idempotency.processor;

import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.FunctionReference;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/**
 * Checks a key expression at compile time with the parser that evaluates it at run time: it must parse, and every
 * variable it reads ({@code #name}, {@code #p0}, {@code #a0}) must be a parameter of the method. {@code #root} and
 * {@code #this} are always there.
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
     * @return what is wrong with the expression, as an error message that says how to fix it; empty if nothing
     */
    static Optional<String> check(String expression, List<String> parameters, String method) {
        SpelNode ast;
        try {
            ast = PARSER.parseRaw(expression).getAST();
        } catch (RuntimeException e) {
            return Optional.of("the key of " + method + " is not a valid SpEL expression: " + e.getMessage()
                    + "; write a SpEL expression over the parameters, such as \"'ORDER:' + #orderId\""
                    + " (text in single quotes, parameters as #name)");
        }
        return walk(ast, expression, parameters, method);
    }

    private static Optional<String> walk(SpelNode node, String expression, List<String> parameters, String method) {
        if (node instanceof VariableReference || node instanceof FunctionReference) {
            // toStringAST() is "#name" for a variable and "#name(args)" for a function call
            String ast = node.toStringAST();
            int paren = ast.indexOf('(');
            String name = ast.substring(1, paren < 0 ? ast.length() : paren);
            Optional<String> problem = checkVariable(name, parameters, method);
            if (problem.isPresent()) {
                return problem;
            }
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            Optional<String> problem = walk(node.getChild(i), expression, parameters, method);
            if (problem.isPresent()) {
                return problem;
            }
        }
        return Optional.empty();
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
