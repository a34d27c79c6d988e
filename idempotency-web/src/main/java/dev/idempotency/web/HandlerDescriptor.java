package dev.idempotency.web;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.HttpEntity;
import org.springframework.transaction.interceptor.TransactionAttribute;
import org.springframework.transaction.support.TransactionOperations;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.web.bind.annotation.ResponseBody;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.context.request.async.WebAsyncTask;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;

/**
 * What the adapter knows of one {@link IdempotentRequest} handler method, worked out once (at startup, or at its
 * first request outside a context): its operation, whether the key is required, the parameters in the fingerprint,
 * and its transaction. Working it out refuses what could never be recorded.
 */
final class HandlerDescriptor {

    private static final ResultType<RecordedResponse> RESULT = ResultType.of(RecordedResponse.class);
    private static final List<Class<?>> ASYNC_TYPES = List.of(Callable.class, CompletionStage.class,
            DeferredResult.class, WebAsyncTask.class, ResponseBodyEmitter.class, StreamingResponseBody.class);

    final IdempotentOperation<RecordedResponse> operation;
    final boolean required;
    final List<String> parameters;
    private final @Nullable TransactionAttribute attribute;
    private volatile @Nullable TransactionTemplate template;

    private HandlerDescriptor(IdempotentOperation<RecordedResponse> operation, boolean required,
            List<String> parameters, @Nullable TransactionAttribute attribute) {
        this.operation = operation;
        this.required = required;
        this.parameters = parameters;
        this.attribute = attribute;
    }

    /**
     * Works out {@code method} and prepares its operation in the engine.
     *
     * @param defaultOperation the operation of a method that names none
     * @param maxResponseSize  the largest response body recorded
     * @throws IllegalStateException naming the method, if it cannot be recorded: {@code READ_ONLY}, a view or an
     *                               asynchronous result, {@code REQUIRES_NEW}, a {@code ttl} or {@code lockTimeout}
     *                               that does not parse
     */
    static HandlerDescriptor of(HandlerMethod method, String defaultOperation, int maxResponseSize,
            IdempotentExecutor executor, HandlerTransactions transactions) {
        IdempotentRequest annotation = Objects.requireNonNull(method.getMethodAnnotation(IdempotentRequest.class));
        String where = describe(method);
        if (annotation.tier() == Tier.READ_ONLY) {
            throw new IllegalStateException("@IdempotentRequest on " + where + " has tier READ_ONLY: a read needs no "
                    + "Idempotency-Key; remove the annotation or give the tier of its side effect");
        }
        Class<?> returned = method.getReturnType().getParameterType();
        for (Class<?> async : ASYNC_TYPES) {
            if (async.isAssignableFrom(returned)) {
                throw new IllegalStateException("@IdempotentRequest on " + where + ": its response (" + returned.getSimpleName()
                        + ") is written after the method returns and cannot be recorded; return the body or a ResponseEntity");
            }
        }
        boolean body = method.hasMethodAnnotation(ResponseBody.class)
                || AnnotatedElementUtils.hasAnnotation(method.getBeanType(), ResponseBody.class)
                || HttpEntity.class.isAssignableFrom(returned);
        if (!body) {
            throw new IllegalStateException("@IdempotentRequest on " + where + ": a view is rendered after the handler "
                    + "and cannot be recorded; use @ResponseBody (a @RestController) or return a ResponseEntity");
        }
        String name = annotation.operation().isEmpty() ? defaultOperation : annotation.operation();
        IdempotentOperation<RecordedResponse> op;
        try {
            op = IdempotentOperation.builder(name, annotation.tier(), RESULT)
                    .maxResultBytes(ResponseRecorder.recordedBytes(maxResponseSize))
                    .ttl(annotation.ttl())
                    .lockTimeout(annotation.lockTimeout())
                    .description(where + " (Idempotency-Key header)")
                    .build();
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("@IdempotentRequest on " + where + ": " + e.getMessage(), e);
        }
        executor.prepare(op);
        return new HandlerDescriptor(op, annotation.required(), List.of(annotation.parameters()),
                transactions.attribute(method, where));
    }

    /**
     * The transaction the method's calls run in: its {@code @Transactional}'s, on the manager found at the first
     * call, or none.
     *
     * @throws IllegalStateException if the method is {@code @Transactional} and its transaction manager is not there
     */
    TransactionOperations transaction(HandlerTransactions transactions) {
        if (attribute == null) {
            return TransactionOperations.withoutTransaction();
        }
        TransactionTemplate t = template;
        if (t == null) {
            t = transactions.template(attribute, operation.description());
            template = t;
        }
        return t;
    }

    /** The handler methods of the context's request mappings that carry {@link IdempotentRequest}. */
    static List<HandlerMethod> inContext(@Nullable BeanFactory beanFactory) {
        List<HandlerMethod> methods = new ArrayList<>();
        if (beanFactory instanceof ListableBeanFactory beans) {
            for (RequestMappingHandlerMapping mapping
                    : beans.getBeansOfType(RequestMappingHandlerMapping.class, false, false).values()) {
                for (HandlerMethod method : mapping.getHandlerMethods().values()) {
                    if (method.hasMethodAnnotation(IdempotentRequest.class)) {
                        methods.add(method);
                    }
                }
            }
        }
        return methods;
    }

    static String describe(HandlerMethod method) {
        return method.getBeanType().getSimpleName() + "." + method.getMethod().getName();
    }
}
