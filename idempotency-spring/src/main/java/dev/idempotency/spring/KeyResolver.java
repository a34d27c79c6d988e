package dev.idempotency.spring;

import dev.idempotency.IdempotencyKeyException;
import dev.idempotency.KeyParts;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.AccessException;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelEvaluationException;
import org.springframework.expression.spel.SpelMessage;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.SpelParserConfiguration;
import org.springframework.expression.spel.ast.Assign;
import org.springframework.expression.spel.ast.BeanReference;
import org.springframework.expression.spel.ast.ConstructorReference;
import org.springframework.expression.spel.ast.FunctionReference;
import org.springframework.expression.spel.ast.OpDec;
import org.springframework.expression.spel.ast.OpInc;
import org.springframework.expression.spel.ast.OpPlus;
import org.springframework.expression.spel.ast.StringLiteral;
import org.springframework.expression.spel.ast.TypeReference;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/**
 * Turns the SpEL {@code key} of an {@link dev.idempotency.Idempotent} method into the idempotency key of one call.
 * Each expression is parsed once per method ({@link #compile}); every call only evaluates it.
 *
 * <h2>What an expression may use</h2>
 * <ul>
 *   <li>the parameters by name ({@code #approvalNo}; needs {@code javac -parameters}), by position ({@code #p0},
 *       {@code #a0}), and {@code #root.args};</li>
 *   <li>read-only properties and public instance methods of the arguments: {@code #request.customerId} and
 *       {@code #request.customerId()} both work on a record, {@code #order.lines[0].sku} on a POJO;</li>
 *   <li>literals and operators: {@code 'APPROVAL:' + #approvalNo + ':MAIN'};</li>
 *   <li>one function, {@code #parts(...)} ({@link KeyParts#of}): a key of several parts that cannot run into each
 *       other, {@code #parts('A', #a, #b)}, where {@code 'A:' + #a + ':' + #b} gives one key for ({@code x:y},
 *       {@code z}) and ({@code x}, {@code y:z}). Each part's {@code \} and {@code :} are escaped, the parts joined
 *       with {@code :}; a part that is null or empty is refused. A parameter named {@code parts} would hide it, and
 *       is refused in an expression that calls it.</li>
 * </ul>
 * By default ({@link #create()}) an expression reaches nothing else: no type references ({@code T(java.lang.Runtime)}),
 * no constructors ({@code new java.io.File('x')}), no bean references ({@code @orders}), no static methods, no
 * methods of {@code Object}, {@code Class} or class loaders, no assignment. Such an expression is refused with
 * {@link IdempotencyKeyException} when the method is first called. A key expression is code written by the
 * application's developers, never input; the restriction is a second line of defence. To opt in, declare a
 * {@code KeyResolver} bean built with {@link Builder#allowTypeReferences()}, {@link Builder#allowConstructors()} or
 * {@link Builder#allowBeanReferences(BeanFactory)}; {@code @EnableIdempotency} uses it.
 *
 * <h2>What a key is</h2>
 * The expression's value, converted with {@code toString()} when it is not a {@code String} (a {@code Long} order
 * number is fine). A value whose class has no {@code toString()} of its own (a plain object, an array such as
 * {@code #root.args}) is refused with {@link IdempotencyKeyException}: {@code Object}'s text names the instance, so
 * every call would get a new key; key on its fields instead, e.g. {@code #order.id}. A {@code toString()} that throws
 * is an {@link IdempotencyKeyException} too. Null, empty or blank: {@link IdempotencyKeyException} naming the method and the expression, and
 * the method does not run. An expression that fails (an unknown property, a method that throws, navigation through
 * null) is an {@link IdempotencyKeyException} naming the method, the expression and the cause.
 *
 * <p>Expressions are interpreted, not compiled to bytecode: Spring 7 turns SpEL compilation off for the restricted
 * {@code SimpleEvaluationContext}, and evaluating a key costs microseconds next to the store's round trip.
 *
 * <p>Thread-safe and immutable.
 */
public final class KeyResolver {

    private static final ParameterNameDiscoverer PARAMETER_NAMES = new DefaultParameterNameDiscoverer();

    private final SpelExpressionParser parser = new SpelExpressionParser(new SpelParserConfiguration(false, false));
    private final boolean typeReferences;
    private final boolean constructors;
    private final @Nullable BeanFactory beanFactory;

    private KeyResolver(Builder b) {
        this.typeReferences = b.typeReferences;
        this.constructors = b.constructors;
        this.beanFactory = b.beanFactory;
    }

    /** The restricted resolver: parameters, their read-only properties and instance methods, nothing else. */
    public static KeyResolver create() {
        return builder().build();
    }

    /** Starts a resolver that opts in to more of SpEL. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Parses {@code expression} for {@code method}, once, and checks it uses only what this resolver allows.
     *
     * @param method      the annotated method (its parameter names become variables)
     * @param expression  the SpEL key expression
     * @param description how messages name the method and the expression
     * @return the key of each call
     * @throws IdempotencyKeyException if the expression is blank, does not parse, uses something not allowed, or
     *                                 names a variable that is not a parameter
     */
    public Key compile(Method method, String expression, String description) {
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(description, "description");
        if (expression == null || expression.isBlank()) {
            throw new IdempotencyKeyException(description + ": the key expression is blank; a writing tier needs a "
                    + "key, such as key = \"'ORDER:' + #orderNo\"");
        }
        SpelExpression parsed;
        try {
            parsed = (SpelExpression) parser.parseExpression(expression);
        } catch (ParseException e) {
            throw new IdempotencyKeyException(description + ": the key expression does not parse: "
                    + e.getMessage(), e);
        }
        String[] names = parameterNames(method);
        Set<String> variables = new LinkedHashSet<>();
        for (int i = 0; i < method.getParameterCount(); i++) {
            if (names != null) {
                variables.add(names[i]);
            }
            variables.add("p" + i);
            variables.add("a" + i);
        }
        check(parsed.getAST(), variables, names != null, description);
        List<SpelExpression> reads = new ArrayList<>();
        for (String read : NullReads.of(parsed.getAST())) {
            reads.add((SpelExpression) parser.parseExpression(read));
        }
        Map<String, Integer> index = new HashMap<>();
        for (int i = 0; i < method.getParameterCount(); i++) {
            // the order in which a call's variables used to be set, so that a parameter named p1 means what it did
            if (names != null) {
                index.put(names[i], i);
            }
            index.put("p" + i, i);
            index.put("a" + i, i);
        }
        ClassLoader classLoader = method.getDeclaringClass().getClassLoader();
        return new Key(parsed, reads, Map.copyOf(index), description,
                KeyEvaluationContext.shared(typeReferences, constructors, beanFactory,
                        classLoader != null ? classLoader : KeyResolver.class.getClassLoader()));
    }

    /**
     * The parts of an expression that only joins string literals and parameters, {@code 'ORDER:' + #orderNo (+
     * ...)}, its first part a literal (so that every {@code +} joins text), or that is a single parameter
     * ({@code #orderNo}): literals as {@code String}s, parameters as their {@code Integer} positions. Null for any
     * other expression.
     */
    private static @Nullable List<Object> joinedParts(SpelNode ast, Map<String, Integer> index) {
        if (ast instanceof VariableReference) {
            Integer i = index.get(ast.toStringAST().substring(1));
            return i == null ? null : List.of(i);
        }
        List<Object> parts = new ArrayList<>();
        if (!flatten(ast, index, parts) || !(parts.get(0) instanceof String)) {
            return null;
        }
        return List.copyOf(parts);
    }

    private static boolean flatten(SpelNode node, Map<String, Integer> index, List<Object> parts) {
        if (node instanceof OpPlus && node.getChildCount() == 2) {
            return flatten(node.getChild(0), index, parts) && flatten(node.getChild(1), index, parts);
        }
        if (node instanceof StringLiteral literal) {
            parts.add((String) literal.getLiteralValue().getValue());
            return true;
        }
        if (node instanceof VariableReference) {
            Integer i = index.get(node.toStringAST().substring(1));
            if (i != null) {
                parts.add(i);
                return true;
            }
        }
        return false;
    }

    private static String @Nullable [] parameterNames(Method method) {
        String[] names = PARAMETER_NAMES.getParameterNames(method);
        return names != null && names.length == method.getParameterCount() ? names : null;
    }

    /** Refuses, up front and with a clear message, what the evaluation context would refuse at every call. */
    private void check(SpelNode node, Set<String> variables, boolean namesKnown, String description) {
        String refused = null;
        if (node instanceof TypeReference && !typeReferences) {
            refused = "type references such as T(...) are not allowed in a key expression";
        } else if (node instanceof ConstructorReference && !constructors) {
            refused = "constructors (new ...) are not allowed in a key expression";
        } else if (node instanceof BeanReference && beanFactory == null) {
            refused = "bean references (@name) are not allowed in a key expression";
        } else if (node instanceof Assign || node instanceof OpInc || node instanceof OpDec) {
            refused = "a key expression may not assign";
        } else if (node instanceof FunctionReference && !isParts(node)) {
            refused = "a key expression has one function, #" + PARTS + "(...), and no other";
        } else if (node instanceof FunctionReference && variables.contains(PARTS)) {
            refused = "#" + PARTS + "(...) is the key function, and a parameter named " + PARTS + " hides it: rename"
                    + " the parameter";
        } else if (node instanceof VariableReference) {
            String name = node.toStringAST().substring(1);
            if (!name.equals("root") && !name.equals("this") && !variables.contains(name)) {
                refused = "#" + name + " is not a parameter; the parameters are " + variables
                        + (namesKnown ? "" : " (compile with javac -parameters to use parameter names)");
            }
        }
        if (refused != null) {
            String optIn = node instanceof VariableReference || node instanceof Assign || node instanceof OpInc
                    || node instanceof OpDec || node instanceof FunctionReference ? ""
                    : " (opt in with a KeyResolver bean, see KeyResolver.builder())";
            throw new IdempotencyKeyException(description + ": " + refused + optIn + ": '" + node.toStringAST()
                    + "'");
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            check(node.getChild(i), variables, namesKnown, description);
        }
    }

    /** The name of the one function a key expression may call: {@code #parts(...)}, {@link KeyParts#of}. */
    static final String PARTS = "parts";

    private static boolean isParts(SpelNode node) {
        return node.toStringAST().startsWith("#" + PARTS + "(");
    }

    /** Whether a class's {@code toString()} is more than {@code Object}'s identity text; arrays have none. */
    private static final ClassValue<Boolean> OWN_TO_STRING = new ClassValue<>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
            if (type.isArray()) {
                return false;
            }
            try {
                return type.getMethod("toString").getDeclaringClass() != Object.class;
            } catch (NoSuchMethodException e) {
                return false; // an interface type cannot be a runtime class; kept for completeness
            }
        }
    };

    private static String typeName(Class<?> type) {
        return type.isArray() ? type.getComponentType().getName() + "[] (an array)" : type.getName();
    }

    @Override
    public String toString() {
        return "KeyResolver[typeReferences=" + typeReferences + ", constructors=" + constructors
                + ", beanReferences=" + (beanFactory != null) + "]";
    }

    /**
     * The root object of a key expression: {@code #root.args} are the call's arguments.
     *
     * @param args the arguments of the call
     */
    record Root(Object[] args) {
        /** The arguments of the call, for {@code #root.args}. */
        @Override
        public Object[] args() {
            return args;
        }

        /** The same, as a bean property. */
        public Object[] getArgs() {
            return args;
        }
    }

    /** Longest text SpEL's {@code +} makes ({@code OpPlus}): a longer key is left to SpEL, which refuses it. */
    private static final int MAX_JOINED_LENGTH = 100_000;

    /** One method's parsed key expression: evaluate it for each call with {@link #resolve(Object[])}. */
    public static final class Key {
        private final EvaluationContext shared;
        private final SpelExpression expression;
        private final List<SpelExpression> reads;
        private final Map<String, Integer> index;
        private final String description;
        /** {@link #joinedParts}, or null: the expression is evaluated by SpEL. */
        private final @Nullable List<Object> joined;
        /** The positions of the parameters {@link #reads} reads, in its order, when {@link #joined} is not null. */
        private final int[] readPositions;

        private Key(SpelExpression expression, List<SpelExpression> reads, Map<String, Integer> index,
                String description, EvaluationContext shared) {
            this.shared = shared;
            this.expression = expression;
            this.reads = List.copyOf(reads);
            this.index = index;
            this.description = description;
            List<Object> parts = joinedParts(expression.getAST(), index);
            int[] positions = new int[reads.size()];
            for (int r = 0; r < positions.length && parts != null; r++) {
                // a read of such an expression is one of its parameters, or the expression is left to SpEL
                String read = reads.get(r).getExpressionString();
                Integer i = read.startsWith("#") ? index.get(read.substring(1)) : null;
                if (i == null) {
                    parts = null;
                } else {
                    positions[r] = i;
                }
            }
            this.joined = parts;
            this.readPositions = positions;
        }

        /** Whether calls are resolved without SpEL's interpreter (for tests). */
        boolean joinsWithoutSpel() {
            return joined != null;
        }

        /** The expression as written. */
        public String expression() {
            return expression.getExpressionString();
        }

        /**
         * Evaluates the key of one call.
         *
         * @param args the call's arguments, in parameter order
         * @return the key: never null or blank
         * @throws IdempotencyKeyException naming the method and the expression, if a variable or property the
         *                                 expression reads is null (naming it; unless the expression handles null
         *                                 itself with {@code ?:}, {@code ?.}, {@code == null} or {@code != null}),
         *                                 if the expression calls a method that does not only read, if the value is
         *                                 null, empty or blank,
         *                                 of a class without a {@code toString()} of its own (an array, a plain
         *                                 object), or the evaluation or its {@code toString()} failed (with the
         *                                 cause)
         */
        public String resolve(Object[] args) {
            Object[] arguments = args == null ? new Object[0] : args;
            Object value = joined != null ? joined(arguments) : null;
            if (value == null) {
                value = evaluate(arguments);
            }
            return key(value);
        }

        /**
         * Evaluates the expression for one call and returns its value as it is, not turned into a key: for what a
         * way in fingerprints rather than keys (a field of a message's payload). The reads are checked as
         * {@link #resolve} checks them.
         *
         * @param args the call's arguments, in parameter order
         * @return the value, which may be null
         * @throws IdempotencyKeyException as {@link #resolve}, for a null read or a failed evaluation
         */
        public @Nullable Object value(Object[] args) {
            return evaluate(args == null ? new Object[0] : args);
        }

        /**
         * The value SpEL would give a joining expression ({@link #joinedParts}), without SpEL: the same null reads
         * refused with the same message, parameters of {@code String}, {@code Integer} or {@code Long} joined as
         * SpEL's {@code +} joins them ({@code toString()}, which is what its conversion service does for them). Null
         * when SpEL must decide: another argument class, or a text too long for SpEL's {@code +}.
         */
        private @Nullable Object joined(Object[] arguments) {
            for (int r = 0; r < readPositions.length; r++) {
                int i = readPositions[r];
                if (i >= arguments.length || arguments[i] == null) {
                    throw nullRead(reads.get(r));
                }
            }
            List<Object> parts = joined;
            if (parts.size() == 1 && parts.get(0) instanceof Integer i) {
                return i < arguments.length ? arguments[i] : null;
            }
            int length = 0;
            String[] texts = new String[parts.size()];
            for (int p = 0; p < texts.length; p++) {
                Object part = parts.get(p);
                String text;
                if (part instanceof String literal) {
                    text = literal;
                } else {
                    int i = (Integer) part;
                    Object a = i < arguments.length ? arguments[i] : null;
                    if (a instanceof String str) {
                        text = str;
                    } else if (a instanceof Long || a instanceof Integer) {
                        text = a.toString();
                    } else {
                        return null;
                    }
                }
                texts[p] = text;
                length += text.length();
                if (length > MAX_JOINED_LENGTH) {
                    return null;
                }
            }
            // the usual 'LIT' + #param: one string made, where String.join copies the array and builds in a buffer
            return texts.length == 2 ? texts[0].concat(texts[1]) : String.join("", texts);
        }

        private IdempotencyKeyException nullRead(SpelExpression read) {
            // 'ORDER:' + null is "ORDER:null": one key shared by every call that lacks the value
            return new IdempotencyKeyException(description + ": the key expression reads "
                    + read.getExpressionString() + ", which is null in this call; a key built from a"
                    + " missing value would be shared by every call that lacks it. Pass a value, or say"
                    + " in the expression what a missing one means (" + read.getExpressionString()
                    + " ?: ..., or ?. to navigate past it)");
        }

        private @Nullable Object evaluate(Object[] arguments) {
            EvaluationContext context = new KeyEvaluationContext(shared, arguments, index);
            Object value;
            try {
                for (SpelExpression read : reads) {
                    if (read.getValue(context) == null) {
                        throw nullRead(read);
                    }
                }
                value = expression.getValue(context);
            } catch (IdempotencyKeyException e) {
                throw e;
            } catch (SpelEvaluationException e) {
                if (e.getMessageCode() == SpelMessage.EXCEPTION_DURING_FUNCTION_CALL
                        && e.getCause() instanceof IllegalArgumentException refused) {
                    // KeyParts.of refused a part: its own words, without SpEL's wrapping
                    throw new IdempotencyKeyException(description + ": " + refused.getMessage(), e);
                }
                throw new IdempotencyKeyException(description + ": the key expression failed: " + e.getMessage()
                        + (e.getCause() instanceof AccessException a ? ": " + a.getMessage() : ""), e);
            } catch (EvaluationException e) {
                throw new IdempotencyKeyException(description + ": the key expression failed: " + e.getMessage()
                        + (e.getCause() instanceof AccessException a ? ": " + a.getMessage() : ""), e);
            } catch (RuntimeException e) {
                // a method called by the expression threw: SpEL passes runtime exceptions through unwrapped
                throw new IdempotencyKeyException(description + ": the key expression failed: " + e, e);
            }
            return value;
        }

        private String key(@Nullable Object value) {
            if (value == null) {
                throw new IdempotencyKeyException(description + ": the key is null");
            }
            String key;
            if (value instanceof String s) {
                key = s;
            } else {
                if (!OWN_TO_STRING.get(value.getClass())) {
                    // Object.toString() is the identity: a new key at every call, so nothing would ever replay
                    throw new IdempotencyKeyException(description + ": the key is a " + typeName(value.getClass())
                            + ", which has no toString() of its own: its text names the instance, a new key at"
                            + " every call; key on its fields, e.g. #order.id");
                }
                try {
                    key = value.toString();
                } catch (RuntimeException e) {
                    throw new IdempotencyKeyException(description + ": the key's toString() failed: " + e, e);
                }
            }
            if (key == null || key.isEmpty()) {
                throw new IdempotencyKeyException(description + ": the key is empty");
            }
            if (key.isBlank()) {
                throw new IdempotencyKeyException(description + ": the key is blank");
            }
            return key;
        }

        @Override
        public String toString() {
            return "Key[" + expression() + "]";
        }
    }

    /** Builds a {@link KeyResolver} that opts in to more of SpEL than the restricted default. */
    public static final class Builder {
        private boolean typeReferences;
        private boolean constructors;
        private @Nullable BeanFactory beanFactory;

        private Builder() {
        }

        /** Allows {@code T(...)} type references and static methods. */
        public Builder allowTypeReferences() {
            this.typeReferences = true;
            return this;
        }

        /** Allows {@code new ...} constructors. */
        public Builder allowConstructors() {
            this.constructors = true;
            return this;
        }

        /** Allows {@code @beanName} references, resolved in {@code beanFactory}. */
        public Builder allowBeanReferences(BeanFactory beanFactory) {
            this.beanFactory = Objects.requireNonNull(beanFactory, "beanFactory");
            return this;
        }

        public KeyResolver build() {
            return new KeyResolver(this);
        }
    }
}
