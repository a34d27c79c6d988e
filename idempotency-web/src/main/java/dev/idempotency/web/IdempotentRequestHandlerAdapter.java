package dev.idempotency.web;

import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyReplayException;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.spring.GuardedOperations;
import dev.idempotency.spring.internal.TransactionalCall;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.Ordered;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerAdapter;
import org.springframework.web.servlet.ModelAndView;
import tools.jackson.databind.json.JsonMapper;

/**
 * Applies {@link IdempotentRequest} to Spring MVC handler methods: a {@link HandlerAdapter} placed before Spring's
 * own ({@code RequestMappingHandlerAdapter}, the delegate), which it wraps for annotated methods only. It reads the
 * {@code Idempotency-Key} header, and runs the delegate (argument resolution, the method, the message converters
 * writing the body) through {@link IdempotentExecutor#execute}, which claims the key, records the response and
 * replays it: the same engine, store, pre-filter, listeners and scope as {@code @Idempotent}. It decides nothing of
 * the protocol itself; it translates the engine's answers into HTTP (see {@code docs/http.md}).
 *
 * <p>The key given to the engine is the header's key inside the request's {@link RequestScope} (by default the
 * principal); the fingerprint is over the method, the path, the body (JSON canonically, other bodies by their bytes)
 * and the annotation's {@link IdempotentRequest#parameters() parameters}.
 *
 * <p><b>Transactions.</b> When the handler method is {@code @Transactional} (Spring's or JTA's) with a propagation
 * that joins ({@code REQUIRED}, {@code NESTED}), the adapter opens that transaction, on that transaction manager,
 * before it claims the key: the claim, the method's writes and the recorded response commit or roll back together,
 * and the response is sent only after the commit. {@code REQUIRES_NEW} is refused at the first call (the method would
 * run in a transaction the claim is not in).
 *
 * <p><b>Checked at startup.</b> As a bean, when every singleton is created, it works out every annotated method of
 * every {@code RequestMappingHandlerMapping} and fails the context, listing every problem at once, for what could
 * never be recorded: {@code READ_ONLY}, a view or an asynchronous result, {@code REQUIRES_NEW}, a {@code ttl} or
 * {@code lockTimeout} that does not parse, a transaction manager that is not there. Outside a context the same
 * checks run at the method's first request.
 *
 * <p>Build one with {@link #builder}; Spring Boot registers one ({@code idempotency.web.*}).
 *
 * <p>It drives a request through package-private parts, one job each: {@code RequestIdentity} (the header's key in
 * its scope, the fingerprint), {@code HandlerDescriptor} (the per-method facts and their startup checks),
 * {@code HandlerTransactions} (the handler's {@code @Transactional}), {@code ResponseRecorder} (record and replay)
 * and {@code ProblemResponses} (the engine's exceptions as problem details, by their kind).
 */
public final class IdempotentRequestHandlerAdapter
        implements HandlerAdapter, Ordered, BeanFactoryAware, SmartInitializingSingleton, GuardedOperations {

    /** The key space of every annotated method that names none. */
    public static final String DEFAULT_OPERATION = "http";
    /** The header that marks a replayed response. */
    public static final String DEFAULT_REPLAYED_HEADER = "Idempotent-Replayed";
    /** The headers of a first response that are recorded and replayed, unless the builder says otherwise. */
    public static final List<String> DEFAULT_REPLAYED_HEADERS = List.of("Content-Type", "Content-Language", "Location",
            "ETag", "Last-Modified");
    /** The largest request body fingerprinted, unless the builder says otherwise: 1 MiB. */
    public static final int DEFAULT_MAX_BODY_SIZE = 1 << 20;
    /** The largest response body recorded, unless the builder says otherwise: 1 MiB. */
    public static final int DEFAULT_MAX_RESPONSE_SIZE = 1 << 20;

    private final IdempotentExecutor executor;
    private final HandlerAdapter delegate;
    private final String operation;
    private final int maxResponseSize;
    private final int order;
    private final RequestIdentity identity;
    private final ResponseRecorder recorder;
    private final ProblemResponses problems;
    private final HandlerTransactions transactions = new HandlerTransactions();
    private final ConcurrentMap<Method, HandlerDescriptor> descriptors = new ConcurrentHashMap<>();
    private @Nullable BeanFactory beanFactory;

    private IdempotentRequestHandlerAdapter(Builder b) {
        this.executor = b.executor;
        this.delegate = b.delegate;
        this.operation = b.operation;
        this.maxResponseSize = b.maxResponseSize;
        this.order = b.order;
        this.identity = new RequestIdentity(b.scope, b.maxKeyLength, b.maxBodySize);
        this.recorder = new ResponseRecorder(b.delegate, List.copyOf(b.replayedHeaders), b.replayedHeader,
                b.recordServerErrors, b.maxResponseSize);
        this.problems = new ProblemResponses(b.mapper, b.retryAfter);
    }

    /**
     * Starts an adapter.
     *
     * @param executor the engine (the application's, so that the store, pre-filter and listeners are shared)
     * @param delegate Spring MVC's {@code RequestMappingHandlerAdapter}, which runs the handler methods
     */
    public static Builder builder(IdempotentExecutor executor, HandlerAdapter delegate) {
        return new Builder(executor, delegate);
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
        transactions.setBeanFactory(beanFactory);
    }

    /**
     * Works out every {@link IdempotentRequest} method of the context's request mappings now, so that the first
     * request pays nothing and a method that cannot be recorded fails the start.
     *
     * @throws IllegalStateException listing every method that cannot be applied, and why
     */
    @Override
    public void afterSingletonsInstantiated() {
        List<String> problems = new ArrayList<>();
        for (HandlerMethod method : HandlerDescriptor.inContext(beanFactory)) {
            try {
                descriptor(method).transaction(transactions);
            } catch (RuntimeException e) {
                problems.add(e.getMessage());
            }
        }
        if (!problems.isEmpty()) {
            throw new IllegalStateException("@IdempotentRequest cannot be applied:\n  - "
                    + String.join("\n  - ", problems));
        }
    }

    /** {@code HTTP}, for the startup line of idempotency-spring. */
    @Override
    public String guardedKind() {
        return "HTTP";
    }

    /** How many handler methods of the context's request mappings carry {@link IdempotentRequest}. */
    @Override
    public int guardedCount() {
        return (int) HandlerDescriptor.inContext(beanFactory).stream().map(HandlerMethod::getMethod).distinct().count();
    }

    @Override
    public int getOrder() {
        return order;
    }

    /** Whether {@code handler} is a handler method carrying {@link IdempotentRequest}. */
    @Override
    public boolean supports(Object handler) {
        return handler instanceof HandlerMethod method && method.hasMethodAnnotation(IdempotentRequest.class)
                && delegate.supports(handler);
    }

    @Override
    public @Nullable ModelAndView handle(HttpServletRequest request, HttpServletResponse response, Object handler)
            throws Exception {
        HandlerMethod method = (HandlerMethod) handler;
        HandlerDescriptor descriptor = descriptor(method);
        RequestIdentity.Read read = identity.read(request, descriptor.parameters);
        if (read instanceof RequestIdentity.NoKey) {
            if (descriptor.required) {
                problems.send(request, response, ProblemResponses.MISSING_KEY);
                return null;
            }
            return delegate.handle(request, response, handler);
        }
        if (read instanceof RequestIdentity.Refused refused) {
            problems.send(request, response, refused.problem());
            return null;
        }
        RequestIdentity.Identified identified = (RequestIdentity.Identified) read;
        HttpServletRequest handled = identified.request();
        CappedResponse capture = new CappedResponse(response, maxResponseSize);
        AtomicReference<@Nullable Throwable> fromHandler = new AtomicReference<>();
        // whether the handler ran here: a replay never runs it (IdempotencyContext would also count a replay of an
        // @Idempotent call the handler makes)
        AtomicBoolean ran = new AtomicBoolean();
        RecordedResponse recorded;
        try {
            recorded = TransactionalCall.run(descriptor.transaction(transactions),
                    () -> executor.execute(descriptor.operation, identified.key(), identified.fingerprint(), () -> {
                        ran.set(true);
                        try {
                            return recorder.record(handled, capture, method);
                        } catch (Throwable t) {
                            fromHandler.set(t);
                            throw t;
                        }
                    }));
        } catch (ResponseRecorder.ServerError e) {
            capture.copyBodyToResponse();
            return null;
        } catch (ResponseRecorder.ResponseTooLarge e) {
            problems.responseTooLarge(request, response, e.getMessage());
            return null;
        } catch (IdempotencyException e) {
            if (e == fromHandler.get()) {
                throw e;
            }
            problems.answer(request, response, e);
            return null;
        }
        if (ran.get()) {
            capture.copyBodyToResponse();
            return null;
        }
        try {
            recorder.replay(response, recorded);
        } catch (IdempotencyReplayException e) {
            problems.answer(request, response, e);
        }
        return null;
    }

    /**
     * The key the engine gets for a header's key in a {@link RequestScope}: what an operator passes to
     * {@code IdempotencyAdmin} (with the operation, {@value #DEFAULT_OPERATION} by default) to find, evict or release
     * an HTTP request's record. The scope is hashed into a fixed-length prefix, so that no principal name is stored
     * and no two (scope, key) pairs give one string.
     *
     * @param scope the request's scope ({@link RequestScope#scope}; the principal's name by default, empty for none)
     * @param key   the header's key, unquoted
     */
    public static String storedKey(String scope, String key) {
        return RequestIdentity.storedKey(scope, key);
    }

    /** The method's descriptor, worked out at its first request (or at startup). */
    private HandlerDescriptor descriptor(HandlerMethod method) {
        HandlerDescriptor known = descriptors.get(method.getMethod());
        if (known != null) {
            return known;
        }
        HandlerDescriptor descriptor = HandlerDescriptor.of(method, operation, maxResponseSize, executor,
                transactions);
        descriptors.put(method.getMethod(), descriptor);
        return descriptor;
    }

    /** Builds an {@link IdempotentRequestHandlerAdapter}. */
    public static final class Builder {
        private final IdempotentExecutor executor;
        private final HandlerAdapter delegate;
        private String operation = DEFAULT_OPERATION;
        private String replayedHeader = DEFAULT_REPLAYED_HEADER;
        private List<String> replayedHeaders = DEFAULT_REPLAYED_HEADERS;
        private boolean recordServerErrors;
        private Duration retryAfter = Duration.ofSeconds(1);
        private RequestScope scope = RequestScope.PRINCIPAL;
        private int maxKeyLength = IdempotencyKeyHeader.DEFAULT_MAX_LENGTH;
        private int maxBodySize = DEFAULT_MAX_BODY_SIZE;
        private int maxResponseSize = DEFAULT_MAX_RESPONSE_SIZE;
        private JsonMapper mapper = JsonMapper.builder().build();
        private int order = Ordered.HIGHEST_PRECEDENCE + 100;

        private Builder(IdempotentExecutor executor, HandlerAdapter delegate) {
            this.executor = Objects.requireNonNull(executor, "executor");
            this.delegate = Objects.requireNonNull(delegate, "delegate");
        }

        /** The key space of methods that name none; default {@value #DEFAULT_OPERATION}. */
        public Builder operation(String operation) {
            this.operation = operation;
            return this;
        }

        /** The header set to {@code true} on a replayed response; default {@value #DEFAULT_REPLAYED_HEADER}. */
        public Builder replayedHeader(String name) {
            this.replayedHeader = name;
            return this;
        }

        /** The response headers recorded and replayed; default {@link #DEFAULT_REPLAYED_HEADERS}. */
        public Builder replayedHeaders(List<String> names) {
            this.replayedHeaders = List.copyOf(names);
            return this;
        }

        /** Whether a 5xx response is recorded and replayed (default false: the key is released for a retry). */
        public Builder recordServerErrors(boolean record) {
            this.recordServerErrors = record;
            return this;
        }

        /** The {@code Retry-After} of a 409, rounded up to whole seconds; default one second. */
        public Builder retryAfter(Duration retryAfter) {
            this.retryAfter = retryAfter;
            return this;
        }

        /** Whose key space a request is in; default {@link RequestScope#PRINCIPAL}. */
        public Builder scope(RequestScope scope) {
            this.scope = scope;
            return this;
        }

        /** The longest key accepted (1 to 768); default {@value IdempotencyKeyHeader#DEFAULT_MAX_LENGTH}. */
        public Builder maxKeyLength(int maxKeyLength) {
            this.maxKeyLength = maxKeyLength;
            return this;
        }

        /** The largest request body accepted on an idempotent request (413 above); default 1 MiB. */
        public Builder maxBodySize(int maxBodySize) {
            this.maxBodySize = maxBodySize;
            return this;
        }

        /**
         * The largest response body recorded; default 1 MiB. A larger one is neither sent nor recorded: the request
         * fails with 500 {@code response-too-large} as a result the engine cannot record does (its transaction
         * rolls back; a reversible key is released, an irreversible one held for review). At most 1 GiB.
         */
        public Builder maxResponseSize(int maxResponseSize) {
            this.maxResponseSize = maxResponseSize;
            return this;
        }

        /**
         * The mapper that writes problem details. JSON bodies are read for their fingerprint by the engine's rules
         * ({@code docs/http.md}), whatever this mapper's settings.
         */
        public Builder jsonMapper(JsonMapper mapper) {
            this.mapper = mapper;
            return this;
        }

        /** This adapter's order; it must come before Spring's {@code RequestMappingHandlerAdapter}. */
        public Builder order(int order) {
            this.order = order;
            return this;
        }

        /** @throws IllegalArgumentException if an option is out of range, naming it */
        public IdempotentRequestHandlerAdapter build() {
            List<String> problems = new ArrayList<>();
            if (operation.isBlank()) {
                problems.add("operation must not be blank");
            }
            if (replayedHeader.isBlank()) {
                problems.add("replayedHeader must not be blank");
            }
            // the engine accepts keys of 1,024 characters; the scope prefix takes 44
            if (maxKeyLength < 1 || maxKeyLength > 768) {
                problems.add("maxKeyLength must be 1 to 768, not " + maxKeyLength);
            }
            if (maxBodySize < 0) {
                problems.add("maxBodySize must not be negative");
            }
            if (maxResponseSize < 1 || maxResponseSize > 1 << 30) {
                problems.add("maxResponseSize must be 1 byte to 1 GiB, not " + maxResponseSize);
            }
            if (retryAfter.isNegative()) {
                problems.add("retryAfter must not be negative");
            }
            if (!problems.isEmpty()) {
                throw new IllegalArgumentException("IdempotentRequestHandlerAdapter: " + String.join("; ", problems));
            }
            return new IdempotentRequestHandlerAdapter(this);
        }
    }
}
