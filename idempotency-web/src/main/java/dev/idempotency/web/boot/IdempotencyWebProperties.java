package dev.idempotency.web.boot;

import dev.idempotency.web.IdempotencyKeyHeader;
import dev.idempotency.web.IdempotentRequestHandlerAdapter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** {@code idempotency.web.*}: the {@code Idempotency-Key} header on Spring MVC; see {@code docs/http.md}. */
@ConfigurationProperties("idempotency.web")
public class IdempotencyWebProperties {

    /** Whether @IdempotentRequest methods are applied. */
    private boolean enabled = true;
    /** The key space of @IdempotentRequest methods that name none. */
    private String operation = IdempotentRequestHandlerAdapter.DEFAULT_OPERATION;
    /** The header set to "true" on a replayed response. */
    private String replayedHeader = IdempotentRequestHandlerAdapter.DEFAULT_REPLAYED_HEADER;
    /** The response headers recorded with a first response and replayed. */
    private List<String> replayedHeaders = new ArrayList<>(IdempotentRequestHandlerAdapter.DEFAULT_REPLAYED_HEADERS);
    /** Whether a 5xx response is recorded and replayed (by default it is not, and the key is released). */
    private boolean recordServerErrors;
    /** The Retry-After of a 409 (request in flight), in whole seconds. */
    private Duration retryAfter = Duration.ofSeconds(1);
    /** The longest Idempotency-Key accepted (1 to 768 characters). */
    private int maxKeyLength = IdempotencyKeyHeader.DEFAULT_MAX_LENGTH;
    /**
     * Whether an inbound request's Idempotency-Key is bound for the request, so that outbound RestClient calls through
     * IdempotencyKeyInterceptor forward it (a gateway).
     */
    private boolean propagateInboundKey;
    /** The largest request body of an idempotent request, in bytes (413 above), of every content type. */
    private int maxBodySize = IdempotentRequestHandlerAdapter.DEFAULT_MAX_BODY_SIZE;
    /**
     * The largest response body recorded, in bytes (1 to 1 GiB). A larger response is neither sent nor recorded: the
     * request fails with 500 response-too-large, as a result the engine cannot record does.
     */
    private int maxResponseSize = IdempotentRequestHandlerAdapter.DEFAULT_MAX_RESPONSE_SIZE;
    /**
     * Whether, on an embedded Tomcat, what the container refuses before the application sees it (a header larger
     * than server.max-http-request-header-size, a control character in a header) is answered as problem details
     * (application/problem+json) rather than with Tomcat's HTML page.
     */
    private boolean containerErrorsAsProblems = true;

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getOperation() {
        return operation;
    }

    public void setOperation(String operation) {
        this.operation = operation;
    }

    public String getReplayedHeader() {
        return replayedHeader;
    }

    public void setReplayedHeader(String replayedHeader) {
        this.replayedHeader = replayedHeader;
    }

    public List<String> getReplayedHeaders() {
        return replayedHeaders;
    }

    public void setReplayedHeaders(List<String> replayedHeaders) {
        this.replayedHeaders = replayedHeaders;
    }

    public boolean isRecordServerErrors() {
        return recordServerErrors;
    }

    public void setRecordServerErrors(boolean recordServerErrors) {
        this.recordServerErrors = recordServerErrors;
    }

    public Duration getRetryAfter() {
        return retryAfter;
    }

    public void setRetryAfter(Duration retryAfter) {
        this.retryAfter = retryAfter;
    }

    public int getMaxKeyLength() {
        return maxKeyLength;
    }

    public void setMaxKeyLength(int maxKeyLength) {
        this.maxKeyLength = maxKeyLength;
    }

    public boolean isPropagateInboundKey() {
        return propagateInboundKey;
    }

    public void setPropagateInboundKey(boolean propagateInboundKey) {
        this.propagateInboundKey = propagateInboundKey;
    }

    public int getMaxBodySize() {
        return maxBodySize;
    }

    public void setMaxBodySize(int maxBodySize) {
        this.maxBodySize = maxBodySize;
    }

    public int getMaxResponseSize() {
        return maxResponseSize;
    }

    public void setMaxResponseSize(int maxResponseSize) {
        this.maxResponseSize = maxResponseSize;
    }

    public boolean isContainerErrorsAsProblems() {
        return containerErrorsAsProblems;
    }

    public void setContainerErrorsAsProblems(boolean containerErrorsAsProblems) {
        this.containerErrorsAsProblems = containerErrorsAsProblems;
    }
}
