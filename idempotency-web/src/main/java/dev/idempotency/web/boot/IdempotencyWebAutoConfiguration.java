package dev.idempotency.web.boot;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.web.IdempotencyKeyPropagationFilter;
import dev.idempotency.web.IdempotentRequestHandlerAdapter;
import dev.idempotency.web.ProblemDetailsErrorReportValve;
import dev.idempotency.web.RequestScope;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.apache.catalina.core.StandardHost;
import org.springframework.boot.tomcat.ConfigurableTomcatWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;
import tools.jackson.databind.json.JsonMapper;

/**
 * Spring Boot auto-configuration of {@code @IdempotentRequest}: in a servlet web application with Spring MVC and the
 * idempotency executor (from {@code IdempotencyAutoConfiguration} or the application), an
 * {@link IdempotentRequestHandlerAdapter} on that executor and Spring MVC's {@code RequestMappingHandlerAdapter},
 * set from {@code idempotency.web.*} ({@link IdempotencyWebProperties}), with the application's
 * {@link RequestScope} bean when there is exactly one (else the principal) and its Jackson {@code JsonMapper}; and,
 * with {@code idempotency.web.propagate-inbound-key=true}, an {@link IdempotencyKeyPropagationFilter}; on an embedded
 * Tomcat, problem details for what the container refuses before the application sees it.
 */
@AutoConfiguration(afterName = {
        "dev.idempotency.spring.boot.IdempotencyAutoConfiguration",
        "org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration",
        "org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration" })
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(DispatcherServlet.class)
@ConditionalOnBooleanProperty(name = "idempotency.web.enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdempotencyWebProperties.class)
public class IdempotencyWebAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean({IdempotentExecutor.class, RequestMappingHandlerAdapter.class})
    IdempotentRequestHandlerAdapter idempotentRequestHandlerAdapter(IdempotentExecutor executor,
            RequestMappingHandlerAdapter requestMappingHandlerAdapter, IdempotencyWebProperties properties,
            ObjectProvider<RequestScope> scope, ObjectProvider<JsonMapper> mapper) {
        IdempotentRequestHandlerAdapter.Builder builder = IdempotentRequestHandlerAdapter
                .builder(executor, requestMappingHandlerAdapter)
                .operation(properties.getOperation())
                .replayedHeader(properties.getReplayedHeader())
                .replayedHeaders(properties.getReplayedHeaders())
                .recordServerErrors(properties.isRecordServerErrors())
                .retryAfter(properties.getRetryAfter())
                .maxKeyLength(properties.getMaxKeyLength())
                .maxBodySize(properties.getMaxBodySize())
                .maxResponseSize(properties.getMaxResponseSize());
        scope.ifUnique(builder::scope);
        mapper.ifUnique(builder::jsonMapper);
        return builder.build();
    }

    /**
     * On an embedded Tomcat, with {@code idempotency.web.container-errors-as-problems} (default true): what Tomcat
     * refuses before the application sees it (a header past {@code server.max-http-request-header-size}, a control
     * character in a header) is answered as problem details, not with Tomcat's HTML page.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({StandardHost.class, ConfigurableTomcatWebServerFactory.class})
    @ConditionalOnBooleanProperty(name = "idempotency.web.container-errors-as-problems", matchIfMissing = true)
    static class ContainerErrors {

        @Bean
        WebServerFactoryCustomizer<ConfigurableTomcatWebServerFactory> idempotencyContainerErrorsAsProblems() {
            // unordered, so after Boot's own customizer: this valve sits inside Boot's error report valve (where
            // Boot adds one) and reports first; as the host's error report valve class, the host adds no other
            return factory -> factory.addContextCustomizers(context -> {
                if (context.getParent() instanceof StandardHost host) {
                    host.setErrorReportValveClass(ProblemDetailsErrorReportValve.class.getName());
                    host.getPipeline().addValve(new ProblemDetailsErrorReportValve());
                }
            });
        }
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBooleanProperty(name = "idempotency.web.propagate-inbound-key")
    IdempotencyKeyPropagationFilter idempotencyKeyPropagationFilter(IdempotencyWebProperties properties) {
        return new IdempotencyKeyPropagationFilter(properties.getMaxKeyLength());
    }
}
