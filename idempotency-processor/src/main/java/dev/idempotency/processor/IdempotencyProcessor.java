package dev.idempotency.processor;

import dev.idempotency.internal.Durations;
import dev.idempotency.internal.ProxyReach;
import dev.idempotency.internal.UnreplayableTypes;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import javax.annotation.processing.AbstractProcessor;
import javax.annotation.processing.Messager;
import javax.annotation.processing.ProcessingEnvironment;
import javax.annotation.processing.RoundEnvironment;
import javax.lang.model.SourceVersion;
import javax.lang.model.element.AnnotationMirror;
import javax.lang.model.element.AnnotationValue;
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
import javax.lang.model.type.WildcardType;
import javax.lang.model.util.ElementFilter;
import javax.lang.model.util.Elements;
import javax.lang.model.util.Types;
import javax.tools.Diagnostic;
import org.jspecify.annotations.Nullable;

/**
 * The compile-time half of the tiers (docs/tiers.md, "Compile time: the annotation processor"): refuses, as
 * errors at the offending method, parameter or annotation, what would fail at run time or break a tier, and writes
 * the side-effect inventory {@value #OPERATIONS_JSON}. Enable it through {@code maven-compiler-plugin}'s {@code annotationProcessorPaths}.
 *
 * <p>Option {@code -Aidempotency.weaving=aspectj}: the advice is woven by AspectJ rather than applied by a Spring
 * proxy, so private, static and final methods and final classes are reachable and not refused; what the weaver needs
 * is checked instead: the annotation on the method that runs (not only on an abstract or interface method), and no
 * {@code compensate} on a static method.
 *
 * <p>Option {@code -Aidempotency.spel=open}: the application's {@code KeyResolver} allows type references,
 * constructors or bean references, so key expressions using them are not refused (assignment and functions always
 * are).
 *
 * <p>Retry annotations are recognised by name, so this processor needs none of their jars:
 * {@value #SPRING_RETRYABLE}, {@value #SPRING_RETRY_RETRYABLE}, {@value #RESILIENCE4J_RETRY}.
 */
public final class IdempotencyProcessor extends AbstractProcessor {

    /** The annotation this processor checks. */
    static final String IDEMPOTENT = "dev.idempotency.Idempotent";
    /** Spring Framework 7's retry annotation. */
    static final String SPRING_RETRYABLE = "org.springframework.resilience.annotation.Retryable";
    /** Spring Retry's retry annotation. */
    static final String SPRING_RETRY_RETRYABLE = "org.springframework.retry.annotation.Retryable";
    /** Resilience4j's retry annotation. */
    static final String RESILIENCE4J_RETRY = "io.github.resilience4j.retry.annotation.Retry";
    static final List<String> RETRY_ANNOTATIONS = List.of(SPRING_RETRYABLE, SPRING_RETRY_RETRYABLE,
            RESILIENCE4J_RETRY);
    /** The option that names how the advice is applied: {@code proxy} (the default) or {@code aspectj}. */
    static final String WEAVING_OPTION = "idempotency.weaving";
    /**
     * The option that says which SpEL the run time's key resolver allows: {@code restricted} (the default, as
     * {@code KeyResolver.create()}) or {@code open} (a {@code KeyResolver} bean allows type references, constructors
     * or bean references, so the processor does not refuse them).
     */
    static final String SPEL_OPTION = "idempotency.spel";
    /** Where the inventory of idempotent operations is written, in the class output. */
    static final String OPERATIONS_JSON = "META-INF/idempotency/operations.json";
    /** The {@code @SuppressWarnings} token that accepts a writing operation's ttl below {@link #RETRY_WINDOW}. */
    static final String SHORT_TTL = "idempotency:short-ttl";
    /** The {@code @SuppressWarnings} token that accepts a key joining two free-text values with {@code +}. */
    static final String KEY_CONCATENATION = "idempotency:key-concatenation";
    /** The shortest ttl a writing operation gets without a warning. */
    static final java.time.Duration RETRY_WINDOW = java.time.Duration.ofHours(24);

    private Elements elements;
    private Types types;
    private Messager messager;
    private boolean aspectj;
    private boolean openSpel;
    /** Every operation seen in this compilation, by name. */
    private final Map<String, OperationEntry> operations = new TreeMap<>();
    /** Operations whose first holder was already told it shares its name. */
    private final Set<String> duplicateNames = new HashSet<>();
    /** Final classes already reported, once each. */
    private final Set<String> finalClassesReported = new HashSet<>();
    private boolean errors;

    /** Called by javac through the service loader. */
    public IdempotencyProcessor() {
    }

    @Override
    public Set<String> getSupportedAnnotationTypes() {
        Set<String> names = new LinkedHashSet<>();
        names.add(IDEMPOTENT);
        names.addAll(RETRY_ANNOTATIONS);
        return names;
    }

    @Override
    public Set<String> getSupportedOptions() {
        return Set.of(WEAVING_OPTION, SPEL_OPTION);
    }

    @Override
    public SourceVersion getSupportedSourceVersion() {
        return SourceVersion.latestSupported();
    }

    @Override
    public synchronized void init(ProcessingEnvironment env) {
        super.init(env);
        this.elements = env.getElementUtils();
        this.types = env.getTypeUtils();
        this.messager = env.getMessager();
        String weaving = env.getOptions().get(WEAVING_OPTION);
        if (weaving == null || weaving.equals("proxy")) {
            aspectj = false;
        } else if (weaving.equals("aspectj")) {
            aspectj = true;
        } else {
            error("-A" + WEAVING_OPTION + "=" + weaving + " is not understood: use proxy (the default, a Spring"
                    + " proxy applies @Idempotent) or aspectj (AspectJ weaving applies it)", null, null, null);
        }
        String spel = env.getOptions().get(SPEL_OPTION);
        if (spel == null || spel.equals("restricted")) {
            openSpel = false;
        } else if (spel.equals("open")) {
            openSpel = true;
        } else {
            error("-A" + SPEL_OPTION + "=" + spel + " is not understood: use restricted (the default, as"
                    + " KeyResolver.create()) or open (a KeyResolver bean allows type references, constructors or"
                    + " bean references)", null, null, null);
        }
    }

    @Override
    public boolean process(Set<? extends TypeElement> annotations, RoundEnvironment round) {
        if (round.processingOver()) {
            if (!errors) {
                write();
            }
            return false;
        }
        TypeElement idempotent = elements.getTypeElement(IDEMPOTENT);
        if (idempotent != null) {
            for (ExecutableElement method : ElementFilter.methodsIn(round.getElementsAnnotatedWith(idempotent))) {
                checkIdempotent(method);
            }
        }
        Set<ExecutableElement> retried = new LinkedHashSet<>();
        for (String name : RETRY_ANNOTATIONS) {
            TypeElement retry = elements.getTypeElement(name);
            if (retry == null) {
                continue;
            }
            for (Element annotated : round.getElementsAnnotatedWith(retry)) {
                if (annotated.getKind() == ElementKind.METHOD) {
                    retried.add((ExecutableElement) annotated);
                } else if (annotated.getKind().isClass() || annotated.getKind().isInterface()) {
                    // a retry annotation on a type retries every method a proxy intercepts
                    for (ExecutableElement method : ElementFilter.methodsIn(annotated.getEnclosedElements())) {
                        if (!method.getModifiers().contains(Modifier.PRIVATE)
                                && !method.getModifiers().contains(Modifier.STATIC)) {
                            retried.add(method);
                        }
                    }
                }
            }
        }
        for (ExecutableElement method : retried) {
            if (mirror(method, IDEMPOTENT) == null) {
                reportRetriedNotIdempotent(method);
            }
        }
        return false;
    }

    private void checkIdempotent(ExecutableElement method) {
        TypeElement type = (TypeElement) method.getEnclosingElement();
        AnnotationMirror annotation = mirror(method, IDEMPOTENT);
        Map<String, AnnotationValue> explicit = byName(annotation.getElementValues());
        Map<String, AnnotationValue> values = byName(elements.getElementValuesWithDefaults(annotation));
        String tier = values.get("tier") != null && values.get("tier").getValue() instanceof VariableElement v
                ? v.getSimpleName().toString() : null;
        if (tier == null) {
            return; // javac itself reports the missing or wrong tier
        }
        String where = type.getSimpleName() + "." + method.getSimpleName();
        String key = string(values, "key");
        String ttl = string(values, "ttl");
        String lockTimeout = string(values, "lockTimeout");
        String compensate = string(values, "compensate");
        // trimmed as the aspect trims it: "orders.create " and "orders.create" are one key space at run time
        String operation = string(values, "operation").trim();
        String name = operation.isBlank() ? where : operation;
        List<String> parameters = new ArrayList<>();
        for (VariableElement p : method.getParameters()) {
            parameters.add(p.getSimpleName().toString());
        }

        checkReachable(method, type, where);
        checkWeavable(method, where, tier, compensate);
        checkReturnType(method, where);
        if (key.isBlank()) {
            if (!tier.equals("READ_ONLY")) {
                error(where + " is " + tier + " but its key is blank: set key to a SpEL expression over the"
                        + " parameters that names this intent, such as key = \"'ORDER:' + #orderId\""
                        + " (only READ_ONLY methods go without a key)", method, annotation, explicit.get("key"));
            }
        } else {
            Optional<String> refused = KeyCheck.check(key, parameters, where, openSpel)
                    .or(() -> KeyReadsOnly.check(key, method, where, types, elements));
            refused.ifPresent(message -> error(message, method, annotation, explicit.get("key")));
            if (refused.isEmpty() && !suppressed(method, KEY_CONCATENATION)) {
                KeyReadsOnly.freeTextJoin(key, method, where, types, elements).ifPresent(message -> errorsFree(
                        Diagnostic.Kind.WARNING, message, method, annotation, explicit.get("key")));
            }
        }
        McpToolCheck.check(method, type, where, tier, key)
                .ifPresent(message -> error(message, method, annotation, explicit.get("key")));
        checkDuration(ttl, "ttl of " + name, method, annotation, explicit.get("ttl"));
        checkDuration(lockTimeout, "lockTimeout of " + name, method, annotation, explicit.get("lockTimeout"));
        String lease = string(values, "lease");
        if (!lease.isEmpty()) {
            checkDuration(lease, "lease of " + name, method, annotation, explicit.get("lease"));
        }
        checkReleaseOn(where, tier, method, annotation, explicit.get("releaseOn"));
        // on an abstract method, the implementing class supplies the compensation: the aspect checks it there
        boolean implementedElsewhere = method.getModifiers().contains(Modifier.ABSTRACT) && tier.equals("REVERSIBLE");
        if (!compensate.isEmpty() && !implementedElsewhere) {
            checkCompensate(method, type, where, tier, compensate, annotation, explicit.get("compensate"));
        }
        String onStoreDown = values.get("onStoreDown") != null
                && values.get("onStoreDown").getValue() instanceof VariableElement d
                ? d.getSimpleName().toString() : "FAIL";
        if (onStoreDown.equals("PROCEED_UNGUARDED") && (!tier.equals("REVERSIBLE") || compensate.isEmpty())) {
            error(where + " declares onStoreDown = PROCEED_UNGUARDED, which needs tier = REVERSIBLE and a compensate"
                    + " (a call run without its key may run twice, and the compensation is how a duplicate is"
                    + " undone)" + (tier.equals("IRREVERSIBLE") ? "; an IRREVERSIBLE call always fails when the"
                    + " store is down: remove onStoreDown" : tier.equals("REVERSIBLE")
                    ? ": add compensate = \"<method that undoes one call>\", or remove onStoreDown"
                    : ": remove onStoreDown"), method, annotation, explicit.get("onStoreDown"));
        }
        if (!tier.equals("READ_ONLY")) {
            checkShortTtl(ttl, where, method, annotation, explicit.get("ttl"));
        }
        if (tier.equals("IRREVERSIBLE")) {
            for (AnnotationMirror retry : retryMirrors(method)) {
                error(where + " is IRREVERSIBLE and must not be retried: remove @" + simpleName(retry) + " ("
                        + qualifiedName(retry) + ") from it, a retry could repeat its side effect; if running it"
                        + " twice is harmless, make it REVERSIBLE", method, retry, null);
            }
            for (AnnotationMirror retry : retryMirrors(type)) {
                error(where + " is IRREVERSIBLE and must not be retried, but its class " + type.getSimpleName()
                        + " is annotated @" + simpleName(retry) + " (" + qualifiedName(retry) + "), which retries"
                        + " every method: move the retry annotation to the methods that may be retried, or make "
                        + where + " REVERSIBLE if running it twice is harmless", method, annotation,
                        explicit.get("tier"));
            }
        }

        OperationEntry entry = new OperationEntry(name, elements.getBinaryName(type).toString(),
                method.getSimpleName().toString(), parameterTypes(method), TypeNames.generic(method.getReturnType(),
                elements), tier, key, ttl, compensate.isEmpty() ? null : compensate, lockTimeout, onStoreDown,
                method);
        OperationEntry first = operations.putIfAbsent(name, entry);
        if (first != null) {
            reportDuplicate(entry, first);
            if (duplicateNames.add(name)) {
                reportDuplicate(first, entry);
            }
        }
    }

    /** At the explicit operation name, or at the method whose name made the default one. */
    private void reportDuplicate(OperationEntry at, OperationEntry other) {
        String message = "operation \"" + at.operation() + "\" of " + at.display() + " is also the operation of "
                + other.display() + ": their keys would share one key space and replay each other's results; give"
                + " one of them its own name with operation = \"...\"";
        AnnotationMirror annotation = mirror(at.element(), IDEMPOTENT);
        AnnotationValue named = byName(annotation.getElementValues()).get("operation");
        if (named != null) {
            error(message, at.element(), annotation, named);
        } else {
            error(message, at.element(), null, null);
        }
    }

    private void checkReachable(ExecutableElement method, TypeElement type, String where) {
        if (aspectj) {
            return;
        }
        Set<Modifier> modifiers = method.getModifiers();
        String fix = "; or, if AspectJ weaving applies the advice, compile with -A" + WEAVING_OPTION + "=aspectj";
        if (modifiers.contains(Modifier.PRIVATE)) {
            error(ProxyReach.privateMethod(where, fix), method, null, null);
        } else if (modifiers.contains(Modifier.STATIC)) {
            error(ProxyReach.staticMethod(where, fix), method, null, null);
        } else if (modifiers.contains(Modifier.FINAL)) {
            error(ProxyReach.finalMethod(where, fix), method, null, null);
        }
        if (type.getModifiers().contains(Modifier.FINAL)
                && finalClassesReported.add(elements.getBinaryName(type).toString())) {
            error(ProxyReach.finalClass(where, type.getSimpleName().toString(),
                    type.getKind() == ElementKind.RECORD ? " (a record)"
                            : type.getKind() == ElementKind.ENUM ? " (an enum)" : "", fix), type, null, null);
        }
    }

    /**
     * With {@code -Aidempotency.weaving=aspectj}, what the woven aspect cannot apply: it guards the method that runs,
     * carrying the annotation itself, on the instance the call is made on.
     */
    private void checkWeavable(ExecutableElement method, String where, String tier, String compensate) {
        if (!aspectj || tier.equals("READ_ONLY")) {
            return;
        }
        Set<Modifier> modifiers = method.getModifiers();
        if (modifiers.contains(Modifier.ABSTRACT)) {
            error("@Idempotent on " + where + " is never applied by AspectJ weaving: the weaver guards the method that"
                    + " runs when it carries the annotation itself, and an abstract or interface method never runs;"
                    + " put @Idempotent on each implementation", method, null, null);
        } else if (modifiers.contains(Modifier.STATIC) && !compensate.isEmpty()) {
            error(where + " is static and declares compensate = \"" + compensate + "\": a compensation is called on"
                    + " the object whose call it undoes, and a static method has none; make it an instance method, or"
                    + " remove compensate", method, null, null);
        }
    }

    private void checkReturnType(ExecutableElement method, String where) {
        TypeMirror returned = method.getReturnType();
        String shown = TypeNames.generic(returned, elements);
        Refusal refusal = refusal(returned);
        if (refusal == null) {
            return;
        }
        String what;
        if (refusal.type() == returned) {
            what = shown + (shown.startsWith(refusal.name()) ? "" : " (a " + refusal.name() + ")");
        } else {
            String part = TypeNames.generic(refusal.type(), elements);
            what = shown + ", whose " + part + (part.startsWith(refusal.name()) ? "" : " (a " + refusal.name() + ")");
        }
        error(where + " returns " + what + ", which cannot be recorded and replayed: " + refusal.reason()
                + "; return a materialized value instead (a List, a record, a byte[])", method, null, null);
    }

    /** A part of a return type that the result codec refuses at run time: the part, the refused name, why. */
    private record Refusal(TypeMirror type, String name, String reason) {
    }

    /** The codec's reason for {@code Object} (JacksonResultCodec.checkReplayable), word for word. */
    static final String OBJECT_REASON = "Object says nothing about what a replay must build (it would come back as"
            + " maps and lists); declare a concrete type, or JsonNode for free-form JSON";

    /**
     * The first part of {@code t} that the run-time check refuses: a type of {@link UnreplayableTypes} or
     * {@code Object}, at the top, in a type argument (an unbounded wildcard is {@code Object}) or an array component,
     * as {@code JacksonResultCodec.checkReplayable} walks them. A type variable is judged by its bound, and only
     * against the list: {@code Repo<E>.save} returns an {@code E} that a subclass may bind.
     */
    private @Nullable Refusal refusal(TypeMirror t) {
        switch (t.getKind()) {
            case ARRAY:
                return refusal(((ArrayType) t).getComponentType());
            case WILDCARD: {
                TypeMirror bound = ((WildcardType) t).getExtendsBound();
                return bound != null ? refusal(bound)
                        : new Refusal(t, "java.lang.Object", OBJECT_REASON);
            }
            case TYPEVAR: {
                String listed = listed(t);
                return listed == null ? null : new Refusal(t, listed, UnreplayableTypes.all().get(listed));
            }
            case DECLARED: {
                TypeElement element = (TypeElement) ((DeclaredType) t).asElement();
                if (element.getQualifiedName().contentEquals("java.lang.Object")) {
                    return new Refusal(t, "java.lang.Object", OBJECT_REASON);
                }
                String listed = listed(t);
                if (listed != null) {
                    return new Refusal(t, listed, UnreplayableTypes.all().get(listed));
                }
                for (TypeMirror argument : ((DeclaredType) t).getTypeArguments()) {
                    Refusal inner = refusal(argument);
                    if (inner != null) {
                        return inner;
                    }
                }
                return null;
            }
            default:
                return null;
        }
    }

    /** The most specific type of {@link UnreplayableTypes} that {@code t} is, or null. */
    private @Nullable String listed(TypeMirror t) {
        TypeMirror erased = types.erasure(t);
        String refused = null;
        for (String name : new TreeSet<>(UnreplayableTypes.NAMES)) {
            // the list holds binary names (Flow$Publisher); javac looks types up by canonical name (Flow.Publisher)
            TypeElement candidate = elements.getTypeElement(name.replace('$', '.'));
            if (candidate != null && types.isAssignable(erased, types.erasure(candidate.asType()))) {
                if (types.isSameType(erased, types.erasure(candidate.asType()))) {
                    return name;
                }
                // name the most specific refused supertype (InputStream rather than AutoCloseable)
                if (refused == null || types.isAssignable(types.erasure(candidate.asType()),
                        types.erasure(elements.getTypeElement(refused.replace('$', '.')).asType()))) {
                    refused = name;
                }
            }
        }
        return refused;
    }

    /**
     * A writing operation whose ttl is shorter than the retry window (a day: nightly batch and dead-letter replays come
     * hours later) gets a warning, not an error: a short ttl can be right (a key that only guards a burst of client
     * retries), and the operation says so with {@code @SuppressWarnings("idempotency:short-ttl")} on the method or
     * its class.
     */
    private void checkShortTtl(String ttl, String where, ExecutableElement method, AnnotationMirror annotation,
            @Nullable AnnotationValue value) {
        java.time.Duration parsed;
        try {
            parsed = Durations.parse(ttl, "ttl of " + where);
        } catch (IllegalArgumentException e) {
            return; // reported as an error already
        }
        if (parsed.compareTo(RETRY_WINDOW) >= 0 || suppressed(method, SHORT_TTL)) {
            return;
        }
        errorsFree(Diagnostic.Kind.WARNING, where + " keeps its outcome for ttl = \"" + ttl + "\", less than 24 hours:"
                + " a retry that comes later (a client's retry, a broker's redelivery, a dead-letter or batch replay)"
                + " runs the method again. Raise ttl to cover the longest retry window, or say why it is short with"
                + " @SuppressWarnings(\"" + SHORT_TTL + "\") on the method or its class", method, annotation, value);
    }

    /** Whether {@code element} or an enclosing element carries {@code @SuppressWarnings(token)}. */
    private static boolean suppressed(Element element, String token) {
        for (Element e = element; e != null; e = e.getEnclosingElement()) {
            SuppressWarnings s = e.getAnnotation(SuppressWarnings.class);
            if (s != null && java.util.Arrays.asList(s.value()).contains(token)) {
                return true;
            }
        }
        return false;
    }

    private void checkDuration(String text, String what, ExecutableElement method, AnnotationMirror annotation,
            @Nullable AnnotationValue value) {
        try {
            Durations.parse(text, what);
        } catch (IllegalArgumentException e) {
            error(e.getMessage(), method, annotation, value);
        }
    }

    /**
     * {@code releaseOn} lists the exceptions that mean an irreversible call did nothing: only on IRREVERSIBLE (every
     * exception of the other tiers releases the key already), and never a class so broad that it would take in a
     * timeout or a lost connection, whose effect is unknown (the run time refuses the same, in
     * {@code IdempotentOperation.Builder.build()}).
     */
    private void checkReleaseOn(String where, String tier, ExecutableElement method, AnnotationMirror annotation,
            @Nullable AnnotationValue value) {
        if (value == null || !(value.getValue() instanceof List<?> listed) || listed.isEmpty()) {
            return;
        }
        if (!tier.equals("IRREVERSIBLE")) {
            error("releaseOn is only for IRREVERSIBLE operations, but " + where + " is " + tier + ": every exception"
                    + " of a " + tier + " call releases its key already; remove releaseOn", method, annotation, value);
            return;
        }
        for (Object item : listed) {
            if (item instanceof AnnotationValue v && v.getValue() instanceof TypeMirror t) {
                String className = types.erasure(t).toString();
                if (Set.of("java.lang.Throwable", "java.lang.Exception", "java.lang.RuntimeException",
                        "java.lang.Error").contains(className)) {
                    error("releaseOn of " + where + " lists " + className + ", which is too broad: a timeout or a"
                            + " lost connection, whose effect is unknown, would release the key and let a retry act"
                            + " twice; list the exceptions that mean nothing happened (the gateway refused before"
                            + " acting)", method, annotation, value);
                }
            }
        }
    }

    private void checkCompensate(ExecutableElement method, TypeElement type, String where, String tier,
            String compensate, AnnotationMirror annotation, @Nullable AnnotationValue value) {
        if (!tier.equals("REVERSIBLE")) {
            error("compensate is only for REVERSIBLE operations, but " + where + " is " + tier
                    + (tier.equals("IRREVERSIBLE") ? " (its effect cannot be undone)" : " (it has nothing to undo)")
                    + ": remove compensate = \"" + compensate + "\", or make the method REVERSIBLE",
                    method, annotation, value);
            return;
        }
        List<ExecutableElement> candidates = new ArrayList<>();
        for (ExecutableElement m : ElementFilter.methodsIn(elements.getAllMembers(type))) {
            if (m.getSimpleName().contentEquals(compensate)) {
                candidates.add(m);
            }
        }
        for (ExecutableElement candidate : candidates) {
            if (fits(candidate, method)) {
                return;
            }
        }
        String params = TypeNames.parameterList(method);
        String expected = "void " + compensate + "(" + params + ")";
        if (method.getReturnType().getKind() != TypeKind.VOID) {
            expected += " or void " + compensate + "(" + params + (params.isEmpty() ? "" : ", ")
                    + TypeNames.simple(method.getReturnType()) + " result)";
        }
        if (candidates.isEmpty()) {
            error("compensate = \"" + compensate + "\" of " + where + " names no method of " + type.getSimpleName()
                    + ": add " + expected + " to " + type.getSimpleName() + ", or correct the name",
                    method, annotation, value);
        } else {
            error("compensate = \"" + compensate + "\" of " + where + " does not fit: " + type.getSimpleName() + "."
                    + compensate + " must take the parameters of " + where + ", optionally followed by its result,"
                    + " and be neither private nor static: declare " + expected, method, annotation, value);
        }
    }

    private boolean fits(ExecutableElement candidate, ExecutableElement method) {
        if (candidate.getModifiers().contains(Modifier.PRIVATE) || candidate.getModifiers().contains(Modifier.STATIC)) {
            return false;
        }
        List<? extends VariableElement> want = method.getParameters();
        List<? extends VariableElement> have = candidate.getParameters();
        boolean withResult = have.size() == want.size() + 1;
        if (have.size() != want.size() && !withResult) {
            return false;
        }
        for (int i = 0; i < want.size(); i++) {
            if (!types.isSameType(types.erasure(want.get(i).asType()), types.erasure(have.get(i).asType()))) {
                return false;
            }
        }
        if (withResult) {
            TypeMirror result = method.getReturnType();
            return result.getKind() != TypeKind.VOID
                    && types.isAssignable(types.erasure(result), types.erasure(have.get(want.size()).asType()));
        }
        return true;
    }

    private void reportRetriedNotIdempotent(ExecutableElement method) {
        TypeElement type = (TypeElement) method.getEnclosingElement();
        String where = type.getSimpleName() + "." + method.getSimpleName();
        String fix = " but not @Idempotent: a retry after a timeout may run it twice; annotate it"
                + " @Idempotent(key = \"...\", tier = ...) with the tier of its side effect (READ_ONLY if it has none)";
        List<AnnotationMirror> own = retryMirrors(method);
        if (!own.isEmpty()) {
            AnnotationMirror retry = own.get(0);
            error(where + " is retried (@" + simpleName(retry) + ", " + qualifiedName(retry) + ")" + fix,
                    method, retry, null);
        } else {
            AnnotationMirror retry = retryMirrors(type).get(0);
            error(where + " is retried through its class's @" + simpleName(retry) + " (" + qualifiedName(retry)
                    + ")" + fix, method, null, null);
        }
    }

    private List<String> parameterTypes(ExecutableElement method) {
        List<String> names = new ArrayList<>();
        for (VariableElement p : method.getParameters()) {
            names.add(TypeNames.erased(p.asType(), types, elements));
        }
        return names;
    }

    private void write() {
        try {
            OperationsJson.write(processingEnv.getFiler(), OPERATIONS_JSON, operations.values());
        } catch (IOException e) {
            error("could not write " + OPERATIONS_JSON + ": " + e.getMessage(), null, null, null);
        }
    }

    private List<AnnotationMirror> retryMirrors(Element element) {
        List<AnnotationMirror> found = new ArrayList<>();
        for (AnnotationMirror m : element.getAnnotationMirrors()) {
            if (RETRY_ANNOTATIONS.contains(qualifiedName(m))) {
                found.add(m);
            }
        }
        return found;
    }

    private static @Nullable AnnotationMirror mirror(Element element, String annotation) {
        for (AnnotationMirror m : element.getAnnotationMirrors()) {
            if (qualifiedName(m).equals(annotation)) {
                return m;
            }
        }
        return null;
    }

    private static String qualifiedName(AnnotationMirror m) {
        return ((TypeElement) m.getAnnotationType().asElement()).getQualifiedName().toString();
    }

    private static String simpleName(AnnotationMirror m) {
        return m.getAnnotationType().asElement().getSimpleName().toString();
    }

    private static Map<String, AnnotationValue> byName(
            Map<? extends ExecutableElement, ? extends AnnotationValue> values) {
        Map<String, AnnotationValue> named = new HashMap<>();
        values.forEach((k, v) -> named.put(k.getSimpleName().toString(), v));
        return named;
    }

    private static String string(Map<String, AnnotationValue> values, String name) {
        AnnotationValue v = values.get(name);
        return v != null && v.getValue() instanceof String s ? s : "";
    }

    private void error(String message, @Nullable Element element, @Nullable AnnotationMirror annotation,
            @Nullable AnnotationValue value) {
        errors = true;
        errorsFree(Diagnostic.Kind.ERROR, message, element, annotation, value);
    }

    /** Prints a diagnostic of {@code kind}; only {@link #error} marks the round as failed. */
    private void errorsFree(Diagnostic.Kind kind, String message, @Nullable Element element,
            @Nullable AnnotationMirror annotation, @Nullable AnnotationValue value) {
        if (element == null) {
            messager.printMessage(kind, message);
        } else if (annotation == null) {
            messager.printMessage(kind, message, element);
        } else if (value == null) {
            messager.printMessage(kind, message, element, annotation);
        } else {
            messager.printMessage(kind, message, element, annotation, value);
        }
    }
}
