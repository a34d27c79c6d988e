package dev.idempotency.mcp.boot;

import dev.idempotency.IdempotencyScope;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.mcp.McpConfirmations;
import dev.idempotency.mcp.McpHttpEras;
import dev.idempotency.mcp.McpHttpGuard;
import dev.idempotency.mcp.McpIdempotentTools;
import dev.idempotency.mcp.McpMeta;
import dev.idempotency.mcp.McpTool;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson3.JacksonMcpJsonMapper;
import io.modelcontextprotocol.modern.server.transport.HttpServletMcpTransport;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import io.modelcontextprotocol.server.transport.ServerTransportSecurityValidator;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.Map;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;
import tools.jackson.databind.json.JsonMapper;

/**
 * Spring Boot auto-configuration of MCP tools over HTTP, with {@code idempotency.mcp.enabled=true} in a servlet web
 * application ({@link IdempotencyMcpProperties}). Each only when the application has none of its own:
 * <ul>
 * <li>the SDK's {@link HttpServletStreamableServerTransportProvider}, registered as a servlet at
 * {@code idempotency.mcp.endpoint} ({@code /mcp}), whose transport context carries the request's authenticated user
 * ({@code HttpServletRequest.getUserPrincipal()}, Spring Security's too) under {@link McpMeta#PRINCIPAL}, and
 * which serves only the {@code Origin}s and {@code Host}s {@code idempotency.mcp.allowed-origins} and
 * {@code allowed-hosts} list (this machine's by default: {@link McpHttpGuard#validator});</li>
 * <li>{@link McpHttpGuard} in front of that servlet only, so that its every error is a JSON-RPC error object;</li>
 * <li>{@link McpIdempotentTools} of every bean whose class is annotated {@link McpTool}, through the context's
 * {@link IdempotentExecutor}, with the context's {@link McpConfirmations} when there is one;</li>
 * <li>the {@link IdempotencyScope} {@link McpIdempotentTools#principalScope()}, so that keys belong to the user;</li>
 * <li>an {@link McpSyncServer} serving those tools on that transport;</li>
 * <li>the same tools for 2026-07-28 clients on the same path ({@link McpHttpEras}: a request with an
 * {@code Mcp-Method} header goes to the SDK's stateless {@code HttpServletMcpTransport}), with the same principal,
 * Origin and Host checks, and confirmation by {@code input_required}
 * ({@link McpIdempotentTools#modernServer}), its request state sealed under
 * {@code idempotency.mcp.request-state-secret} when set (the same on every node; at least 32 bytes, else the start
 * stops naming the property).</li>
 * </ul>
 */
@AutoConfiguration(afterName = {
        "dev.idempotency.spring.boot.IdempotencyAutoConfiguration",
        "org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration" })
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({HttpServletStreamableServerTransportProvider.class, ServletRegistrationBean.class})
@ConditionalOnBooleanProperty(name = "idempotency.mcp.enabled")
@EnableConfigurationProperties(IdempotencyMcpProperties.class)
public class IdempotencyMcpAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    IdempotencyScope idempotencyMcpPrincipalScope() {
        return McpIdempotentTools.principalScope();
    }

    @Bean
    @ConditionalOnMissingBean
    // the SDK's Origin/Host hook of its servlet transports: deprecated in 2.2.0 with no replacement for them yet
    @SuppressWarnings("deprecation")
    HttpServletStreamableServerTransportProvider idempotencyMcpTransport(IdempotencyMcpProperties properties,
            ObjectProvider<JsonMapper> mapper) {
        return HttpServletStreamableServerTransportProvider.builder()
                .jsonMapper(jsonMapper(mapper))
                .mcpEndpoint(properties.getEndpoint())
                .securityValidator(McpHttpGuard.validator(properties.getAllowedOrigins(), properties.getAllowedHosts()))
                .contextExtractor(request -> McpTransportContext.create(Map.of(McpMeta.PRINCIPAL, principal(request))))
                .build();
    }

    /** The authenticated user's name, or {@code ""} for an anonymous request (one key space for all of them). */
    static String principal(HttpServletRequest request) {
        Principal user = request.getUserPrincipal();
        return user == null || user.getName() == null ? "" : user.getName();
    }

    @Bean
    @ConditionalOnMissingBean(name = "idempotencyMcpServlet")
    // the SDK's Origin/Host hook of its servlet transports: deprecated in 2.2.0 with no replacement for them yet
    @SuppressWarnings("deprecation")
    ServletRegistrationBean<HttpServlet> idempotencyMcpServlet(HttpServletStreamableServerTransportProvider transport,
            ObjectProvider<McpIdempotentTools> tools, IdempotencyMcpProperties properties,
            ObjectProvider<JsonMapper> mapper) {
        McpIdempotentTools available = tools.getIfAvailable();
        HttpServlet servlet = transport;
        if (available != null) {
            // 2026-07-28 requests (an Mcp-Method header) on the same path, stateless, with the same guards
            McpJsonMapper json = jsonMapper(mapper);
            servlet = new McpHttpEras(transport, HttpServletMcpTransport
                    .builder(available.modernServer(properties.getServerName(), properties.getServerVersion(), json))
                    .jsonMapper(json).endpoint(properties.getEndpoint())
                    .httpHeaderValidator(ServerTransportSecurityValidator.toHttpHeaderValidator(McpHttpGuard
                            .validator(properties.getAllowedOrigins(), properties.getAllowedHosts())))
                    .contextExtractor(request -> McpTransportContext.create(
                            Map.of(McpMeta.PRINCIPAL, principal(request))))
                    .build());
        }
        ServletRegistrationBean<HttpServlet> registration =
                new ServletRegistrationBean<>(servlet, properties.getEndpoint());
        registration.setName("idempotencyMcp");
        registration.setAsyncSupported(true);  // the transport answers on a stream
        return registration;
    }

    @Bean
    @ConditionalOnMissingBean(name = "idempotencyMcpGuard")
    FilterRegistrationBean<McpHttpGuard> idempotencyMcpGuard() {
        FilterRegistrationBean<McpHttpGuard> registration = new FilterRegistrationBean<>(new McpHttpGuard());
        registration.setName("idempotencyMcpGuard");
        registration.addServletNames("idempotencyMcp");  // the MCP servlet's errors only
        registration.setAsyncSupported(true);
        return registration;
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(IdempotentExecutor.class)
    McpIdempotentTools idempotencyMcpTools(IdempotentExecutor executor, ListableBeanFactory beans,
            ObjectProvider<McpConfirmations> confirmations, ObjectProvider<JsonMapper> mapper,
            IdempotencyMcpProperties properties) {
        McpIdempotentTools.Builder builder = McpIdempotentTools.builder(executor);
        String secret = properties.getRequestStateSecret();
        if (secret != null) {
            byte[] bytes = secret.getBytes(StandardCharsets.UTF_8);
            if (bytes.length < McpIdempotentTools.REQUEST_STATE_SECRET_BYTES) {
                // the value is a secret: its length only
                throw new IllegalArgumentException("idempotency.mcp.request-state-secret must be at least "
                        + McpIdempotentTools.REQUEST_STATE_SECRET_BYTES + " bytes (UTF-8), but has " + bytes.length
                        + "; set the same secret on every node");
            }
            builder.requestStateSecret(bytes);
        }
        confirmations.ifUnique(builder::confirmations);
        mapper.ifUnique(builder::jsonMapper);
        beans.getBeansWithAnnotation(McpTool.class).values().forEach(builder::bean);
        return builder.build();
    }

    @Bean(destroyMethod = "closeGracefully")
    @ConditionalOnMissingBean
    @ConditionalOnBean(McpIdempotentTools.class)
    McpSyncServer idempotencyMcpServer(HttpServletStreamableServerTransportProvider transport,
            McpIdempotentTools tools, IdempotencyMcpProperties properties, ObjectProvider<JsonMapper> mapper) {
        return McpServer.sync(transport).jsonMapper(jsonMapper(mapper))
                .serverInfo(properties.getServerName(), properties.getServerVersion())
                .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
                .tools(tools.specifications()).build();
    }

    private static McpJsonMapper jsonMapper(ObjectProvider<JsonMapper> mapper) {
        return new JacksonMcpJsonMapper(mapper.getIfUnique(() -> JsonMapper.builder().build()));
    }
}
