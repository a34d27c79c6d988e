package dev.idempotency.web;

import dev.idempotency.ConfirmationRequiredException;
import dev.idempotency.IdempotencyException;
import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyKeyException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotencyOutcomeUnknownException;
import dev.idempotency.IdempotencyReplayException;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.internal.Fingerprints;
import dev.idempotency.spring.GuardedOperations;
import dev.idempotency.web.internal.RecordedResponse;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.Part;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.annotation.BeanFactoryAnnotationUtils;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.AnnotationTransactionAttributeSource;
import org.springframework.transaction.interceptor.DefaultTransactionAttribute;
import org.springframework.transaction.interceptor.TransactionAttribute;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.StringUtils;
import org.springframework.web.bind.annotation.ResponseBody;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.context.request.async.WebAsyncTask;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerAdapter;
import org.springframework.web.servlet.ModelAndView;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;
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

    private static final Log LOG = LogFactory.getLog(IdempotentRequestHandlerAdapter.class);
    private static final ResultType<RecordedResponse> RESULT = ResultType.of(RecordedResponse.class);
    private static final List<Class<?>> ASYNC_TYPES = List.of(Callable.class, CompletionStage.class,
            DeferredResult.class, WebAsyncTask.class, ResponseBodyEmitter.class, StreamingResponseBody.class);

    private final IdempotentExecutor executor;
    private final HandlerAdapter delegate;
    private final String operation;
    private final String replayedHeader;
    private final List<String> replayedHeaders;
    private final boolean recordServerErrors;
    private final Duration retryAfter;
    private final RequestScope scope;
    private final int maxKeyLength;
    private final int maxBodySize;
    private final int maxResponseSize;
    private final JsonMapper mapper;
    private final int order;
    private final ConcurrentMap<Method, Handling> handlings = new ConcurrentHashMap<>();
    private final AnnotationTransactionAttributeSource transactionAttributes =
            new AnnotationTransactionAttributeSource(false);
    private @Nullable BeanFactory beanFactory;

    private IdempotentRequestHandlerAdapter(Builder b) {
        this.executor = b.executor;
        this.delegate = b.delegate;
        this.operation = b.operation;
        this.replayedHeader = b.replayedHeader;
        this.replayedHeaders = List.copyOf(b.replayedHeaders);
        this.recordServerErrors = b.recordServerErrors;
        this.retryAfter = b.retryAfter;
        this.scope = b.scope;
        this.maxKeyLength = b.maxKeyLength;
        this.maxBodySize = b.maxBodySize;
        this.maxResponseSize = b.maxResponseSize;
        this.mapper = b.mapper;
        this.order = b.order;
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
        for (HandlerMethod method : idempotentHandlers()) {
            try {
                handling(method).transaction(this);
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
        return (int) idempotentHandlers().stream().map(HandlerMethod::getMethod).distinct().count();
    }

    /** The handler methods of the context's request mappings that carry {@link IdempotentRequest}. */
    private List<HandlerMethod> idempotentHandlers() {
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
        Handling handling = handling(method);
        List<String> values = Collections.list(request.getHeaders(IdempotencyKeyHeader.NAME));
        if (values.isEmpty()) {
            if (handling.required) {
                problem(request, response, 400, IdempotencyProblems.MISSING_KEY, "Idempotency-Key required",
                        "this request must carry an Idempotency-Key header");
                return null;
            }
            return delegate.handle(request, response, handler);
        }
        String key;
        try {
            if (values.size() > 1) {
                throw new IllegalArgumentException("the request carries more than one Idempotency-Key header");
            }
            key = IdempotencyKeyHeader.parse(values.get(0), maxKeyLength);
        } catch (IllegalArgumentException e) {
            problem(request, response, 400, IdempotencyProblems.INVALID_KEY, "Invalid Idempotency-Key", e.getMessage());
            return null;
        }
        HttpServletRequest buffered = request;
        Object body;
        // every body obeys the limit, whatever its type: by its declared length, then as it is read
        if (request.getContentLengthLong() > maxBodySize) {
            return bodyTooLarge(request, response);
        }
        if (isMultipart(request)) {
            // DispatcherServlet has parsed the parts already: the body's stream is spent, the parts are not
            body = parts(request);
            if (body == null) {
                return bodyTooLarge(request, response);
            }
        } else {
            byte[] bytes = readBody(request);
            if (bytes == null) {
                return bodyTooLarge(request, response);
            }
            if (isForm(request)) {
                // read here rather than by the container, so that the limit holds for a form sent chunked too
                buffered = BufferedRequest.ofForm(request, bytes);
                body = parameters(buffered, null);
            } else {
                buffered = BufferedRequest.of(request, bytes);
                try {
                    body = bodyIdentity(request, bytes);
                } catch (IllegalArgumentException e) {
                    problem(request, response, 400, IdempotencyProblems.INVALID_BODY, "Invalid JSON body",
                            "the body is labelled JSON but is not one JSON document with each member name once per "
                                    + "object; which request it is cannot be told");
                    return null;
                }
            }
        }
        Object[] identity = {request.getMethod(), request.getRequestURI(), body,
                parameters(buffered, handling.parameters)};
        String scopedKey = storedKey(scope.scope(request), key);

        CappedResponse capture = new CappedResponse(response, maxResponseSize);
        HttpServletRequest handled = buffered;
        AtomicReference<@Nullable Throwable> fromHandler = new AtomicReference<>();
        // whether the handler ran here: a replay never runs it (IdempotencyContext would also count a replay of an
        // @Idempotent call the handler makes)
        AtomicBoolean ran = new AtomicBoolean();
        RecordedResponse recorded;
        try {
            recorded = inTransaction(handling, () -> executor.execute(handling.operation, scopedKey, identity, () -> {
                ran.set(true);
                try {
                    return run(handled, capture, method);
                } catch (Throwable t) {
                    fromHandler.set(t);
                    throw t;
                }
            }));
        } catch (ServerError e) {
            capture.copyBodyToResponse();
            return null;
        } catch (ResponseTooLarge e) {
            LOG.error("Idempotent request " + request.getMethod() + " " + request.getRequestURI() + ": "
                    + e.getMessage());
            problem(request, response, 500, IdempotencyProblems.RESPONSE_TOO_LARGE, "Response too large to record",
                    "the response was larger than this server records for an idempotent request; it was not sent "
                            + "and nothing was recorded");
            return null;
        } catch (IdempotencyException e) {
            if (e == fromHandler.get()) {
                throw e;
            }
            answer(request, response, e);
            return null;
        }
        if (ran.get()) {
            capture.copyBodyToResponse();
            return null;
        }
        try {
            replay(response, recorded);
        } catch (IdempotencyReplayException e) {
            answer(request, response, e);
        }
        return null;
    }

    /** Runs the handler into the capturing response; a 5xx becomes a {@link ServerError} unless recorded. */
    private RecordedResponse run(HttpServletRequest request, CappedResponse capture, HandlerMethod method)
            throws Exception {
        ModelAndView view = delegate.handle(request, capture, method);
        if (view != null || request.isAsyncStarted()) {
            throw new IllegalStateException(describe(method) + " did not write its response in the call (a view or an "
                    + "asynchronous result): an @IdempotentRequest method must return a body or a ResponseEntity");
        }
        if (capture.overflowed()) {
            // thrown through the engine as a result it cannot record is: the transaction rolls back, a reversible
            // key is released, an irreversible one held for review; the response, cut short, is not sent
            throw new ResponseTooLarge(describe(method) + ": the response body is larger than the "
                    + maxResponseSize + " bytes an idempotent request records (idempotency.web.max-response-size); "
                    + "it was not sent and nothing was recorded. Return less (an id to fetch the rest by), or raise "
                    + "the limit");
        }
        Map<String, List<String>> headers = new LinkedHashMap<>();
        for (String name : replayedHeaders) {
            if (name.equalsIgnoreCase("Content-Type")) {
                String type = capture.getContentType();
                if (type != null) {
                    headers.put(name, List.of(type));
                }
            } else {
                Collection<String> value = capture.getHeaders(name);
                if (value != null && !value.isEmpty()) {
                    headers.put(name, List.copyOf(value));
                }
            }
        }
        RecordedResponse response = new RecordedResponse(capture.getStatus(), headers, capture.getContentAsByteArray());
        if (response.status() >= 500 && !recordServerErrors) {
            throw new ServerError();
        }
        return response;
    }

    /**
     * Sends a recorded response. The record is read as untrusted input (a store row or a shared pre-filter someone
     * else can write): only the headers the allow-list names are sent, whatever else it holds, and a status no
     * final response can have, or a header value with a control character, makes it unreadable (nothing is sent).
     */
    private void replay(HttpServletResponse response, RecordedResponse recorded) throws IOException {
        if (recorded.headers() == null || recorded.body() == null) {
            throw new IdempotencyReplayException("the recorded response has no headers or no body");
        }
        if (recorded.status() < 200 || recorded.status() > 599) {
            throw new IdempotencyReplayException("the recorded response has the status " + recorded.status()
                    + ", which no final HTTP response has");
        }
        Map<String, List<String>> allowed = new LinkedHashMap<>();
        for (String name : replayedHeaders) {
            recorded.headers().forEach((recordedName, values) -> {
                if (recordedName.equalsIgnoreCase(name) && values != null) {
                    for (String value : values) {
                        if (value == null || !isFieldValue(value)) {
                            throw new IdempotencyReplayException("the recorded response's " + name
                                    + " header holds a character a header value cannot carry");
                        }
                        allowed.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
                    }
                }
            });
        }
        response.setStatus(recorded.status());
        allowed.forEach((name, values) -> {
            if (name.equalsIgnoreCase("Content-Type")) {
                response.setContentType(values.get(0));
            } else {
                values.forEach(value -> response.addHeader(name, value));
            }
        });
        response.setHeader(replayedHeader, "true");
        response.setContentLength(recorded.body().length);
        response.getOutputStream().write(recorded.body());
    }

    /** Whether {@code value} holds no control character but tabs (RFC 9110 field-value): no CR, LF or DEL. */
    private static boolean isFieldValue(String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if ((c < 0x20 && c != '\t') || c == 0x7f) {
                return false;
            }
        }
        return true;
    }

    private void answer(HttpServletRequest request, HttpServletResponse response, IdempotencyException e)
            throws IOException {
        if (e instanceof IdempotencyKeyReusedException) {
            problem(request, response, 422, IdempotencyProblems.KEY_REUSED, "Idempotency-Key reused",
                    "this Idempotency-Key was used with another request (method, path, body or parameters)");
        } else if (e instanceof IdempotencyInProgressException) {
            response.reset();
            response.setHeader("Retry-After", Long.toString(Math.max(1, (retryAfter.toMillis() + 999) / 1000)));
            problem(request, response, 409, IdempotencyProblems.IN_FLIGHT, "Request in progress",
                    "the first request with this Idempotency-Key is still being processed; retry later to get its "
                            + "response");
        } else if (e instanceof IdempotencyKeyException) {
            problem(request, response, 400, IdempotencyProblems.INVALID_KEY, "Invalid Idempotency-Key",
                    "the key is not accepted: it must hold printable characters only");
        } else if (e instanceof ConfirmationRequiredException) {
            problem(request, response, 428, IdempotencyProblems.CONFIRMATION_REQUIRED, "Confirmation required",
                    "this operation must be confirmed before it runs");
        } else if (e instanceof IdempotencyOutcomeUnknownException) {
            LOG.warn("Idempotent request " + request.getMethod() + " " + request.getRequestURI() + ": " + e.getMessage());
            problem(request, response, 500, IdempotencyProblems.OUTCOME_UNKNOWN, "Outcome unknown",
                    "an earlier attempt with this Idempotency-Key may have taken effect; it awaits review, do not retry");
        } else if (e instanceof IdempotencyReplayException) {
            LOG.error("Idempotent request " + request.getMethod() + " " + request.getRequestURI() + ": " + e.getMessage(), e);
            problem(request, response, 500, IdempotencyProblems.REPLAY_FAILED, "Replay failed",
                    "the recorded response could not be read back");
        } else if (e instanceof IdempotencyStoreException) {
            LOG.warn("Idempotent request " + request.getMethod() + " " + request.getRequestURI() + ": " + e.getMessage(), e);
            problem(request, response, 503, IdempotencyProblems.STORE_UNAVAILABLE, "Idempotency store unavailable",
                    "the request could not be recorded; retrying later with the same Idempotency-Key is safe");
        } else {
            throw e;
        }
    }

    private void problem(HttpServletRequest request, HttpServletResponse response, int status, URI type, String title,
            String detail) throws IOException {
        String retryAfterValue = response.getHeader("Retry-After");
        if (!response.isCommitted()) {
            response.reset();
        }
        if (retryAfterValue != null) {
            response.setHeader("Retry-After", retryAfterValue);
        }
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatusCode.valueOf(status), detail);
        problem.setType(type);
        problem.setTitle(title);
        try {
            problem.setInstance(new URI(request.getRequestURI()));
        } catch (URISyntaxException unusual) {
            // a path the container let through but java.net.URI refuses: the problem goes without its instance
        }
        // written field by field, in RFC 9457's order, so that the body does not depend on the application's
        // Jackson set-up (a ProblemDetail mix-in or not)
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("type", String.valueOf(problem.getType()));
        fields.put("title", String.valueOf(problem.getTitle()));
        fields.put("status", problem.getStatus());
        fields.put("detail", String.valueOf(problem.getDetail()));
        if (problem.getInstance() != null) {
            fields.put("instance", problem.getInstance().toString());
        }
        byte[] bytes = mapper.writeValueAsBytes(fields);
        response.setStatus(status);
        response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
        response.setContentLength(bytes.length);
        response.getOutputStream().write(bytes);
    }

    private RecordedResponse inTransaction(Handling handling, Callable<RecordedResponse> call) throws Exception {
        TransactionTemplate transaction = handling.transaction(this);
        if (transaction == null) {
            return call.call();
        }
        try {
            return transaction.execute(status -> {
                try {
                    return call.call();
                } catch (RuntimeException e) {
                    throw e;
                } catch (Exception e) {
                    throw new Checked(e);
                }
            });
        } catch (Checked e) {
            throw (Exception) Objects.requireNonNull(e.getCause());
        }
    }

    private Handling handling(HandlerMethod method) {
        Handling known = handlings.get(method.getMethod());
        if (known != null) {
            return known;
        }
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
        String name = annotation.operation().isEmpty() ? operation : annotation.operation();
        IdempotentOperation<RecordedResponse> op;
        try {
            op = IdempotentOperation.builder(name, annotation.tier(), RESULT)
                    .maxResultBytes(recordedBytes(maxResponseSize))
                    .ttl(annotation.ttl())
                    .lockTimeout(annotation.lockTimeout())
                    .description(where + " (Idempotency-Key header)")
                    .build();
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("@IdempotentRequest on " + where + ": " + e.getMessage(), e);
        }
        executor.prepare(op);
        TransactionAttribute attribute = transactionAttributes.getTransactionAttribute(method.getMethod(),
                method.getBeanType());
        if (attribute != null
                && attribute.getPropagationBehavior() == TransactionDefinition.PROPAGATION_REQUIRES_NEW) {
            throw new IllegalStateException("@IdempotentRequest on " + where + ": @Transactional(REQUIRES_NEW) would run "
                    + "the method in a transaction the key's claim is not in; use REQUIRED");
        }
        boolean opens = attribute != null
                && (attribute.getPropagationBehavior() == TransactionDefinition.PROPAGATION_REQUIRED
                        || attribute.getPropagationBehavior() == TransactionDefinition.PROPAGATION_NESTED);
        Handling handling = new Handling(op, annotation.required(), List.of(annotation.parameters()),
                opens ? attribute : null);
        handlings.put(method.getMethod(), handling);
        return handling;
    }

    private @Nullable TransactionTemplate transactionFor(TransactionAttribute attribute, String where) {
        if (beanFactory == null) {
            throw new IllegalStateException("@IdempotentRequest on " + where + " is @Transactional, but the adapter was "
                    + "not given a BeanFactory to find the transaction manager in; declare it as a bean");
        }
        String qualifier = attribute.getQualifier();
        PlatformTransactionManager manager;
        try {
            manager = StringUtils.hasText(qualifier)
                    ? BeanFactoryAnnotationUtils.qualifiedBeanOfType(beanFactory, PlatformTransactionManager.class,
                            qualifier)
                    : beanFactory.getBean(PlatformTransactionManager.class);
        } catch (BeansException e) {
            throw new IllegalStateException(where + " is @Transactional, but its transaction manager cannot be found "
                    + "(" + e.getMessage() + "); the claim could not join its transaction", e);
        }
        DefaultTransactionAttribute definition = new DefaultTransactionAttribute(attribute);
        definition.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRED);
        definition.setName(where);
        return new TransactionTemplate(manager, definition);
    }

    private static boolean isForm(HttpServletRequest request) {
        String type = request.getContentType();
        return type != null
                && type.toLowerCase(Locale.ROOT).startsWith(MediaType.APPLICATION_FORM_URLENCODED_VALUE);
    }

    private static boolean isMultipart(HttpServletRequest request) {
        String type = request.getContentType();
        return type != null && type.toLowerCase(Locale.ROOT).startsWith("multipart/");
    }

    private @Nullable ModelAndView bodyTooLarge(HttpServletRequest request, HttpServletResponse response)
            throws IOException {
        problem(request, response, 413, IdempotencyProblems.BODY_TOO_LARGE, "Request body too large",
                "an idempotent request's body may have at most " + maxBodySize + " bytes");
        return null;
    }

    /**
     * Each part by name: its file name, content type and the SHA-256 of its bytes; null when the parts hold more
     * than {@link #maxBodySize} bytes in all (a body sent chunked, whose length was not declared).
     */
    private @Nullable Map<String, List<Map<String, @Nullable String>>> parts(HttpServletRequest request)
            throws IOException, ServletException {
        long size = 0;
        for (Part part : request.getParts()) {
            size += part.getSize();
        }
        if (size > maxBodySize) {
            return null;
        }
        Map<String, List<Map<String, @Nullable String>>> parts = new TreeMap<>();
        for (Part part : request.getParts()) {
            MessageDigest digest = sha256Digest();
            try (InputStream in = part.getInputStream()) {
                byte[] buffer = new byte[8192];
                for (int n; (n = in.read(buffer)) != -1; ) {
                    digest.update(buffer, 0, n);
                }
            }
            Map<String, @Nullable String> facts = new TreeMap<>();
            facts.put("filename", part.getSubmittedFileName());
            facts.put("contentType", part.getContentType());
            facts.put("sha256", HexFormat.of().formatHex(digest.digest()));
            parts.computeIfAbsent(part.getName(), name -> new ArrayList<>()).add(facts);
        }
        return parts;
    }

    /** The body, or null when it is longer than {@link #maxBodySize}. */
    private byte @Nullable [] readBody(HttpServletRequest request) throws IOException {
        if (request.getContentLengthLong() > maxBodySize) {
            return null;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (InputStream in = request.getInputStream()) {
            byte[] buffer = new byte[8192];
            for (int n; (n = in.read(buffer)) != -1; ) {
                if (out.size() + n > maxBodySize) {
                    return null;
                }
                out.write(buffer, 0, n);
            }
        }
        return out.toByteArray();
    }

    /**
     * A JSON body as the engine's fingerprint reads JSON ({@link Fingerprints#readJson}: member order and white space
     * do not count, every digit and the scale of a number do), any other body by its bytes' hash.
     *
     * @throws IllegalArgumentException if the body is labelled JSON but is not one JSON document the fingerprint can
     *                                  read (a member name twice in one object, a syntax error)
     */
    private static @Nullable Object bodyIdentity(HttpServletRequest request, byte[] bytes) {
        if (bytes.length == 0) {
            return null;
        }
        if (isJson(request)) {
            return Map.of("json", Fingerprints.readJson(bytes));
        }
        return Map.of("sha256", HexFormat.of().formatHex(sha256(bytes)));
    }

    private static boolean isJson(HttpServletRequest request) {
        String type = request.getContentType();
        if (type == null) {
            return false;
        }
        MediaType media;
        try {
            media = MediaType.parseMediaType(type);
        } catch (RuntimeException unparsable) {
            return false; // fingerprinted by its bytes; the message converters will refuse the type
        }
        return media.isCompatibleWith(MediaType.APPLICATION_JSON) || media.getSubtype().endsWith("+json");
    }

    private static Map<String, List<String>> parameters(HttpServletRequest request, @Nullable List<String> names) {
        Map<String, List<String>> chosen = new TreeMap<>();
        if (names == null) {
            request.getParameterMap().forEach((name, values) -> chosen.put(name, List.of(values)));
        } else {
            for (String name : names) {
                String[] values = request.getParameterValues(name);
                if (values != null) {
                    chosen.put(name, List.of(values));
                }
            }
        }
        return chosen;
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
        return Base64.getUrlEncoder().withoutPadding().encodeToString(sha256(scope.getBytes(StandardCharsets.UTF_8)))
                + ":" + key;
    }

    private static byte[] sha256(byte[] bytes) {
        return sha256Digest().digest(bytes);
    }

    private static MessageDigest sha256Digest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String describe(HandlerMethod method) {
        return method.getBeanType().getSimpleName() + "." + method.getMethod().getName();
    }

    /** The per-method facts, worked out at the first request. */
    private static final class Handling {
        final IdempotentOperation<RecordedResponse> operation;
        final boolean required;
        final List<String> parameters;
        final @Nullable TransactionAttribute attribute;
        volatile @Nullable TransactionTemplate template;

        Handling(IdempotentOperation<RecordedResponse> operation, boolean required, List<String> parameters,
                @Nullable TransactionAttribute attribute) {
            this.operation = operation;
            this.required = required;
            this.parameters = parameters;
            this.attribute = attribute;
        }

        @Nullable TransactionTemplate transaction(IdempotentRequestHandlerAdapter adapter) {
            if (attribute == null) {
                return null;
            }
            TransactionTemplate t = template;
            if (t == null) {
                t = adapter.transactionFor(attribute, operation.description());
                template = t;
            }
            return t;
        }
    }

    /**
     * The engine's bound on a recorded response ({@code IdempotentOperation.maxResultBytes}, checked as for any
     * result) for a body of at most {@code maxResponseSize} bytes: the body in base64, as the JSON codec writes
     * bytes, and 64 KiB for the status and the allow-listed headers.
     */
    static int recordedBytes(int maxResponseSize) {
        return (int) Math.min(Integer.MAX_VALUE, 4L * ((maxResponseSize + 2L) / 3) + (64 << 10));
    }

    /** A response larger than the limit: thrown through the engine, which handles it as an unrecordable result. */
    private static final class ResponseTooLarge extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ResponseTooLarge(String message) {
            super(message, null, false, false);
        }
    }

    /** A 5xx response, not recorded: thrown through the engine so that it releases the key. */
    private static final class ServerError extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ServerError() {
            super("a 5xx response is not recorded", null, false, false);
        }
    }

    private static final class Checked extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Checked(Exception cause) {
            super(cause);
        }
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
