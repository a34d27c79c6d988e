package dev.idempotency.spring;

import dev.idempotency.KeyParts;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.expression.AccessException;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.ConstructorResolver;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.IndexAccessor;
import org.springframework.expression.MethodResolver;
import org.springframework.expression.OperatorOverloader;
import org.springframework.expression.PropertyAccessor;
import org.springframework.expression.TypeComparator;
import org.springframework.expression.TypeConverter;
import org.springframework.expression.TypeLocator;
import org.springframework.expression.TypedValue;
import org.springframework.expression.spel.SpelEvaluationException;
import org.springframework.expression.spel.SpelMessage;
import org.springframework.expression.spel.support.DataBindingPropertyAccessor;
import org.springframework.expression.spel.support.SimpleEvaluationContext;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.expression.spel.support.StandardTypeLocator;

/**
 * What a {@link KeyResolver} key expression is evaluated in. The context shared by every call of one method's key is
 * made once ({@link #shared}): read-only properties, the methods the resolver allows, and types, constructors and
 * beans only when it opts in to them. One call's context (an instance) adds only the call's root
 * ({@code #root.args}) and its parameters as variables, looked up by position in the call's arguments, and
 * {@code #parts(...)}.
 */
final class KeyEvaluationContext implements EvaluationContext {

    /** {@code #parts(...)}: {@link KeyParts#of}. */
    private static final Method PARTS_FUNCTION;

    static {
        try {
            PARTS_FUNCTION = KeyParts.class.getMethod("of", Object[].class);
        } catch (NoSuchMethodException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    // shared by every call, so that their reflective caches are warm: a context is per call (it holds the call's
    // variables), what it resolves through is not
    private static final DataBindingPropertyAccessor READ_ONLY_PROPERTIES =
            DataBindingPropertyAccessor.forReadOnlyAccess();
    private static final ReadOnlyMethods INSTANCE_METHODS = new ReadOnlyMethods(false);
    private static final ReadOnlyMethods WITH_STATIC_METHODS = new ReadOnlyMethods(true);

    /**
     * What every call of one method's key resolves through, made once: a call adds only its root and its variables.
     *
     * @param typeReferences whether the expression may name types ({@code T(...)}) and call static methods
     * @param constructors   whether it may call constructors
     * @param beanFactory    the beans it may reference ({@code @name}), or null for none
     */
    static EvaluationContext shared(boolean typeReferences, boolean constructors, @Nullable BeanFactory beanFactory,
            ClassLoader classLoader) {
        if (!typeReferences && !constructors && beanFactory == null) {
            return SimpleEvaluationContext.forPropertyAccessors(READ_ONLY_PROPERTIES)
                    .withMethodResolvers(INSTANCE_METHODS)
                    .withAssignmentDisabled()
                    .build();
        }
        StandardEvaluationContext context = new StandardEvaluationContext();
        context.setPropertyAccessors(List.of(READ_ONLY_PROPERTIES));
        context.setMethodResolvers(List.of(typeReferences ? WITH_STATIC_METHODS : INSTANCE_METHODS));
        // a constructor names its type too; T(...) itself stays refused by check() unless type references are allowed
        context.setTypeLocator(typeReferences || constructors ? new StandardTypeLocator(classLoader) : NO_TYPES);
        if (!constructors) {
            context.setConstructorResolvers(new ArrayList<>());
        }
        if (beanFactory != null) {
            context.setBeanResolver(new BeanFactoryResolver(beanFactory));
        } else {
            context.setBeanResolver(NO_BEANS);
        }
        // made now, not lazily by the first calls of several threads at once
        context.getTypeConverter();
        context.getTypeComparator();
        context.getOperatorOverloader();
        return context;
    }

    private static final TypeLocator NO_TYPES = typeName -> {
        throw new SpelEvaluationException(SpelMessage.TYPE_NOT_FOUND, typeName);
    };

    private static final BeanResolver NO_BEANS = (context, beanName) -> {
        throw new AccessException("bean references are not allowed in a key expression");
    };

    private final EvaluationContext shared;
    private final TypedValue root;
    private final Object[] args;
    private final Map<String, Integer> index;

    KeyEvaluationContext(EvaluationContext shared, Object[] args, Map<String, Integer> index) {
        this.shared = shared;
        this.root = new TypedValue(new KeyResolver.Root(args));
        this.args = args;
        this.index = index;
    }

    @Override
    public TypedValue getRootObject() {
        return root;
    }

    @Override
    public @Nullable Object lookupVariable(String name) {
        Integer i = index.get(name);
        if (i == null && name.equals(KeyResolver.PARTS)) {
            // check() refused a parameter of that name, so #parts is always the function
            return PARTS_FUNCTION;
        }
        return i == null || i >= args.length ? null : args[i];
    }

    @Override
    public void setVariable(String name, @Nullable Object value) {
        // check() refuses every assignment before a call is evaluated
        throw new IllegalStateException("a key expression may not assign");
    }

    @Override
    public List<PropertyAccessor> getPropertyAccessors() {
        return shared.getPropertyAccessors();
    }

    @Override
    public List<IndexAccessor> getIndexAccessors() {
        return shared.getIndexAccessors();
    }

    @Override
    public List<ConstructorResolver> getConstructorResolvers() {
        return shared.getConstructorResolvers();
    }

    @Override
    public List<MethodResolver> getMethodResolvers() {
        return shared.getMethodResolvers();
    }

    @Override
    public @Nullable BeanResolver getBeanResolver() {
        return shared.getBeanResolver();
    }

    @Override
    public TypeLocator getTypeLocator() {
        return shared.getTypeLocator();
    }

    @Override
    public TypeConverter getTypeConverter() {
        return shared.getTypeConverter();
    }

    @Override
    public TypeComparator getTypeComparator() {
        return shared.getTypeComparator();
    }

    @Override
    public OperatorOverloader getOperatorOverloader() {
        return shared.getOperatorOverloader();
    }

    @Override
    public boolean isAssignmentEnabled() {
        return shared.isAssignmentEnabled();
    }

    @Override
    public boolean isCompilationSupported() {
        return shared.isCompilationSupported();
    }
}
