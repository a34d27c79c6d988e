package dev.idempotency.processor;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.lang.model.element.Element;
import javax.lang.model.element.ElementKind;
import javax.lang.model.element.ExecutableElement;
import javax.lang.model.element.Modifier;
import javax.lang.model.element.TypeElement;
import javax.lang.model.element.VariableElement;
import javax.lang.model.type.ArrayType;
import javax.lang.model.type.DeclaredType;
import javax.lang.model.type.TypeKind;
import javax.lang.model.type.TypeMirror;
import javax.lang.model.util.ElementFilter;
import javax.lang.model.util.Elements;
import javax.lang.model.util.Types;
import org.jspecify.annotations.Nullable;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.CompoundExpression;
import org.springframework.expression.spel.ast.Indexer;
import org.springframework.expression.spel.ast.MethodReference;
import org.springframework.expression.spel.ast.OpPlus;
import org.springframework.expression.spel.ast.PropertyOrFieldReference;
import org.springframework.expression.spel.ast.StringLiteral;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/**
 * The compile-time half of "a key expression may only read" (the run time's {@code ReadOnlyMethods} in
 * idempotency-spring is the other, and the complete one): every method a key expression calls must be a getter
 * ({@code getX()}, {@code isX()}), a record accessor, {@code toString()}, a method of {@code String}, a boxed number,
 * {@code BigDecimal}, {@code BigInteger}, {@code Boolean}, {@code Character}, {@code UUID} or a {@code java.time} value,
 * {@code name()}/{@code ordinal()} of an enum, or a read of a collection or map ({@code size()}, {@code get(...)},
 * {@code contains(...)}...). The type of each receiver is followed from the parameters through getters, accessors,
 * public fields and indexers; where it cannot be followed, a method whose name says it changes something
 * ({@code set...}, {@code add...}, {@code clear()}...) is refused, and the run time decides the rest.
 */
final class KeyReadsOnly {

    private static final Pattern INDEXED = Pattern.compile("[pa](\\d{1,9})");
    private static final SpelExpressionParser PARSER = new SpelExpressionParser();
    // the same lists as the run time's ReadOnlyMethods (idempotency-spring cannot be a dependency of the processor)
    private static final Set<String> VALUE_TYPES = Set.of("java.lang.String", "java.lang.Integer", "java.lang.Long",
            "java.lang.Short", "java.lang.Byte", "java.lang.Double", "java.lang.Float", "java.math.BigDecimal",
            "java.math.BigInteger", "java.lang.Boolean", "java.lang.Character", "java.util.UUID");
    private static final Set<String> COLLECTION_READS = Set.of("size", "isEmpty", "contains", "containsKey",
            "containsValue", "get", "getOrDefault", "indexOf", "lastIndexOf", "getFirst", "getLast");
    private static final Pattern MUTATOR_NAME = Pattern.compile(
            "(set|add|put|remove|clear|delete|insert|append|increment|decrement|reset|update|push|pop|poll|offer"
                    + "|sort|fill|shuffle|retain|compute|merge|write|save|send|close|replaceAll)([A-Z0-9_].*)?");

    private final ExecutableElement method;
    private final String where;
    private final Types types;
    private final Elements elements;

    private KeyReadsOnly(ExecutableElement method, String where, Types types, Elements elements) {
        this.method = method;
        this.where = where;
        this.types = types;
        this.elements = elements;
    }

    /**
     * @param expression a key expression that {@link KeyCheck} accepted
     * @return the error for the first call that does not only read; empty if none
     */
    static Optional<String> check(String expression, ExecutableElement method, String where, Types types,
            Elements elements) {
        return parse(expression).flatMap(ast -> {
            List<String> problems = new ArrayList<>();
            new KeyReadsOnly(method, where, types, elements).walk(ast, problems);
            return problems.stream().findFirst();
        });
    }

    /**
     * The warning for the first {@code +} in {@code expression} that joins two free-text values: parameters (and
     * their properties, methods and elements) whose declared type is a {@code CharSequence}, and the elements of a
     * parameter named {@code headers} (a message's headers). {@code 'A:' + #a + ':' + #b} gives one key for
     * ({@code x:y}, {@code z}) and ({@code x}, {@code y:z}); one free-text value among numbers and literals cannot
     * run into another.
     *
     * @param expression a key expression that {@link KeyCheck} accepted
     * @return the warning, naming the first two such values and the {@code #parts(...)} that answers it; empty if
     *         none
     */
    static Optional<String> freeTextJoin(String expression, ExecutableElement method, String where, Types types,
            Elements elements) {
        return parse(expression).flatMap(ast -> new KeyReadsOnly(method, where, types, elements).join(ast));
    }

    /** The expression's tree; empty if it does not parse ({@link KeyCheck} reports that). */
    private static Optional<SpelNode> parse(String expression) {
        try {
            return Optional.of(PARSER.parseRaw(expression).getAST());
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    private Optional<String> join(SpelNode node) {
        if (node instanceof OpPlus && node.getChildCount() == 2) {
            List<SpelNode> operands = new ArrayList<>();
            operands(node, operands);
            List<String> free = new ArrayList<>();
            for (SpelNode operand : operands) {
                if (freeText(operand)) {
                    free.add(operand.toStringAST());
                }
            }
            if (free.size() >= 2) {
                return Optional.of("the key of " + where + " joins the free-text values " + free.get(0) + " and "
                        + free.get(1) + " with +, so two different calls can give one key (as 'x:y' + ':' + 'z'"
                        + " and 'x' + ':' + 'y:z' do): make each value a part of #parts(...), which escapes them,"
                        + " such as key = \"" + parts(operands) + "\"; or, if the values can never hold what is"
                        + " joined between them, say so with @SuppressWarnings(\""
                        + IdempotencyProcessor.KEY_CONCATENATION + "\") on the method or its class");
            }
            for (SpelNode operand : operands) {
                Optional<String> inner = join(operand);
                if (inner.isPresent()) {
                    return inner;
                }
            }
            return Optional.empty();
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            Optional<String> inner = join(node.getChild(i));
            if (inner.isPresent()) {
                return inner;
            }
        }
        return Optional.empty();
    }

    /** The operands of a chain of {@code +}, in order. */
    private static void operands(SpelNode node, List<SpelNode> operands) {
        if (node instanceof OpPlus && node.getChildCount() == 2) {
            operands(node.getChild(0), operands);
            operands(node.getChild(1), operands);
        } else {
            operands.add(node);
        }
    }

    /** {@code #parts(...)} of the operands: a literal's text less the separators around it, the rest as written. */
    private static String parts(List<SpelNode> operands) {
        List<String> parts = new ArrayList<>();
        for (SpelNode operand : operands) {
            if (operand instanceof StringLiteral literal) {
                String text = String.valueOf(literal.getLiteralValue().getValue())
                        .replaceAll("^[^\\p{L}\\p{N}]+|[^\\p{L}\\p{N}]+$", "");
                if (!text.isEmpty()) {
                    parts.add("'" + text.replace("'", "''") + "'");
                }
            } else {
                parts.add(operand.toStringAST());
            }
        }
        return "#parts(" + String.join(", ", parts) + ")";
    }

    /** Whether {@code operand} is text the caller chooses, by its declared type. */
    private boolean freeText(SpelNode operand) {
        if (operand instanceof VariableReference) {
            return isText(parameterType(operand.toStringAST().substring(1)));
        }
        if (!(operand instanceof CompoundExpression) || !(operand.getChild(0) instanceof VariableReference first)) {
            return false;
        }
        TypeMirror current = parameterType(first.toStringAST().substring(1));
        boolean headers = first.toStringAST().equals("#headers");
        for (int i = 1; i < operand.getChildCount(); i++) {
            SpelNode step = operand.getChild(i);
            if (step instanceof PropertyOrFieldReference p) {
                current = property(current, p.getName());
            } else if (step instanceof MethodReference m) {
                current = call(m, current, new ArrayList<>());
            } else if (step instanceof Indexer) {
                current = element(current);
            } else {
                current = null;
            }
            headers = headers && i == 1 && step instanceof Indexer;
        }
        if (headers && operand.getChildCount() == 2) {
            // a header's value: text whenever its declared type does not say otherwise
            return current == null || isText(current) || current.toString().equals("java.lang.Object");
        }
        return isText(current);
    }

    private boolean isText(@Nullable TypeMirror type) {
        TypeElement text = elements.getTypeElement("java.lang.CharSequence");
        return type != null && type.getKind() == TypeKind.DECLARED && text != null
                && types.isAssignable(types.erasure(type), types.erasure(text.asType()));
    }

    private void walk(SpelNode node, List<String> problems) {
        if (node instanceof CompoundExpression) {
            chain(node, problems);
            return;
        }
        if (node instanceof MethodReference m) {
            call(m, null, problems); // on the root object or #this: its type is not known here
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            walk(node.getChild(i), problems);
        }
    }

    private void chain(SpelNode compound, List<String> problems) {
        TypeMirror current = null;
        for (int i = 0; i < compound.getChildCount(); i++) {
            SpelNode step = compound.getChild(i);
            for (int j = 0; j < step.getChildCount(); j++) {
                walk(step.getChild(j), problems); // arguments and indexes are expressions of their own
            }
            if (i == 0) {
                current = step instanceof VariableReference ? parameterType(step.toStringAST().substring(1)) : null;
            } else if (step instanceof PropertyOrFieldReference p) {
                current = property(current, p.getName());
            } else if (step instanceof MethodReference m) {
                current = call(m, current, problems);
            } else if (step instanceof Indexer) {
                current = element(current);
            } else {
                current = null;
            }
        }
    }

    private @Nullable TypeMirror parameterType(String name) {
        List<? extends VariableElement> parameters = method.getParameters();
        for (VariableElement p : parameters) {
            if (p.getSimpleName().contentEquals(name)) {
                return p.asType();
            }
        }
        Matcher indexed = INDEXED.matcher(name);
        if (indexed.matches()) {
            int index = Integer.parseInt(indexed.group(1));
            return index < parameters.size() ? parameters.get(index).asType() : null;
        }
        return null;
    }

    /** What {@code receiver.name(...)} returns, after refusing it if it does not only read. */
    private @Nullable TypeMirror call(MethodReference call, @Nullable TypeMirror receiver, List<String> problems) {
        String name = call.getName();
        int arguments = call.getChildCount();
        TypeElement type = typeElement(receiver);
        if (type == null) {
            if (MUTATOR_NAME.matcher(name).matches()) {
                problems.add(refusal(name + "(...)"));
            }
            return null;
        }
        List<ExecutableElement> candidates = new ArrayList<>();
        for (ExecutableElement m : ElementFilter.methodsIn(elements.getAllMembers(type))) {
            if (m.getSimpleName().contentEquals(name) && m.getParameters().size() == arguments
                    && !m.getModifiers().contains(Modifier.STATIC) && m.getModifiers().contains(Modifier.PUBLIC)) {
                candidates.add(m);
            }
        }
        if (candidates.isEmpty()) {
            // not a method of the declared type (an Object parameter, a subclass's method): judged by its name here,
            // and by the run time's check on the actual class
            if (MUTATOR_NAME.matcher(name).matches()) {
                problems.add(refusal(name + "(...)"));
            }
            return null;
        }
        for (ExecutableElement m : candidates) {
            if (!readsOnly(m, type, arguments)) {
                problems.add(refusal(type.getQualifiedName() + "." + name + "(...)"));
                return null;
            }
        }
        return candidates.size() == 1 ? returnType(receiver, type, candidates.get(0)) : null;
    }

    private @Nullable TypeMirror returnType(@Nullable TypeMirror receiver, TypeElement type, ExecutableElement m) {
        // as a member of the type the receiver was declared as (List<String>.get gives String), boxed if primitive
        TypeMirror owner = receiver instanceof DeclaredType ? receiver : type.asType();
        try {
            return types.asMemberOf((DeclaredType) owner, m) instanceof javax.lang.model.type.ExecutableType e
                    ? e.getReturnType() : m.getReturnType();
        } catch (IllegalArgumentException e) {
            return m.getReturnType();
        }
    }

    private boolean readsOnly(ExecutableElement m, TypeElement type, int arguments) {
        String name = m.getSimpleName().toString();
        if (name.equals("toString") && arguments == 0) {
            return true;
        }
        String qualified = type.getQualifiedName().toString();
        if (VALUE_TYPES.contains(qualified) || qualified.startsWith("java.time.")) {
            return true;
        }
        if (type.getKind() == ElementKind.ENUM) {
            return (name.equals("name") || name.equals("ordinal")) && arguments == 0;
        }
        if (COLLECTION_READS.contains(name) && (isA(type, "java.util.Collection") || isA(type, "java.util.Map"))) {
            return true;
        }
        if (arguments != 0 || m.getReturnType().getKind() == TypeKind.VOID) {
            return false;
        }
        if (getter(name, "get") || getter(name, "is")) {
            return true;
        }
        if (type.getKind() == ElementKind.RECORD) {
            for (Element c : type.getRecordComponents()) {
                if (c.getSimpleName().contentEquals(name)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean getter(String name, String prefix) {
        return name.length() > prefix.length() && name.startsWith(prefix)
                && Character.isUpperCase(name.charAt(prefix.length()));
    }

    private boolean isA(TypeElement type, String supertype) {
        TypeElement s = elements.getTypeElement(supertype);
        return s != null && types.isAssignable(types.erasure(type.asType()), types.erasure(s.asType()));
    }

    /** The type of {@code receiver.name}: a getter, a record accessor or a public field; null if unknown. */
    private @Nullable TypeMirror property(@Nullable TypeMirror receiver, String name) {
        TypeElement type = typeElement(receiver);
        if (type == null) {
            return null;
        }
        String capitalized = name.isEmpty() ? name : name.substring(0, 1).toUpperCase(Locale.ROOT) + name.substring(1);
        for (Element member : elements.getAllMembers(type)) {
            if (!member.getModifiers().contains(Modifier.PUBLIC) || member.getModifiers().contains(Modifier.STATIC)) {
                continue;
            }
            String n = member.getSimpleName().toString();
            if (member instanceof ExecutableElement m && m.getParameters().isEmpty()
                    && (n.equals("get" + capitalized) || n.equals("is" + capitalized)
                            || (type.getKind() == ElementKind.RECORD && n.equals(name)))) {
                return returnType(receiver, type, m);
            }
            if (member.getKind() == ElementKind.FIELD && n.equals(name)) {
                return receiver instanceof DeclaredType d ? types.asMemberOf(d, member) : member.asType();
            }
        }
        return null;
    }

    /** The element type of {@code receiver[...]}: an array's component, a list's element, a map's value. */
    private @Nullable TypeMirror element(@Nullable TypeMirror receiver) {
        if (receiver instanceof ArrayType a) {
            return a.getComponentType();
        }
        if (receiver instanceof DeclaredType d) {
            TypeElement type = (TypeElement) d.asElement();
            List<? extends TypeMirror> arguments = d.getTypeArguments();
            if (isA(type, "java.util.List") && arguments.size() == 1) {
                return arguments.get(0);
            }
            if (isA(type, "java.util.Map") && arguments.size() == 2) {
                return arguments.get(1);
            }
        }
        return null;
    }

    private @Nullable TypeElement typeElement(@Nullable TypeMirror type) {
        if (type == null) {
            return null;
        }
        if (type.getKind().isPrimitive()) {
            return types.boxedClass((javax.lang.model.type.PrimitiveType) type);
        }
        return type instanceof DeclaredType d && d.asElement() instanceof TypeElement t ? t : null;
    }

    private String refusal(String call) {
        return "the key of " + where + " calls " + call + ", which may change what it is called on: a key is"
                + " computed before the fingerprint and before the method runs, so a key expression may only read"
                + " (getters, record accessors, toString(), methods of String and numbers, reads of a collection or"
                + " map); key on the parameters' values, such as #order.id";
    }
}
