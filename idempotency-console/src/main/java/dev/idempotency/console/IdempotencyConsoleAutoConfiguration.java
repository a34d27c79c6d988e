package dev.idempotency.console;

import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.codec.JacksonResultCodec;
import dev.idempotency.mcp.McpConfirmations;
import dev.idempotency.spring.boot.IdempotencyAutoConfiguration;
import dev.idempotency.spring.boot.IdempotencyResolver;
import java.time.Clock;
import java.util.List;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionOperations;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.ClassUtils;
import org.springframework.web.servlet.DispatcherServlet;
import tools.jackson.databind.json.JsonMapper;

/**
 * Serves the operator console under {@code idempotency.console.path} (default {@code /idempotency}) in a servlet
 * web application with Spring MVC, when {@code idempotency.console.enabled=true}: it is off by default. Its pages
 * need an authenticated principal ({@code HttpServletRequest.getUserPrincipal()}); a resolution runs as that
 * principal in one transaction with its audit entry (docs/operations.md).
 *
 * <p>{@code idempotency-mcp} is an optional dependency: when the application has it on its class path, the key page
 * also shows the confirmation answers its {@code McpConfirmations} bean recorded, and when that bean gives
 * confirmation tokens the overview lists the calls waiting for an approver, with an Approve form
 * ({@link McpAnswersConfiguration}); without it nothing of it is loaded.
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(DispatcherServlet.class)
@ConditionalOnBooleanProperty("idempotency.console.enabled")
@EnableConfigurationProperties(IdempotencyConsoleProperties.class)
public class IdempotencyConsoleAutoConfiguration {

    /** Created by Spring Boot. */
    public IdempotencyConsoleAutoConfiguration() {
    }

    @Bean
    ConsoleController idempotencyConsoleController(ObjectProvider<IdempotencyAdmin> admin,
            ObjectProvider<JsonMapper> jsonMapper, ObjectProvider<PlatformTransactionManager> transactionManager,
            ObjectProvider<Clock> clock, ObjectProvider<ConfirmationAnswers> answers, ListableBeanFactory beans,
            IdempotencyConsoleProperties properties) {
        PlatformTransactionManager tm = transactionManager.getIfUnique();
        IdempotencyResolver resolver = new IdempotencyResolver(admin::getIfAvailable,
                jsonMapper.getIfUnique(JacksonResultCodec::defaultMapper),
                tm != null ? new TransactionTemplate(tm) : TransactionOperations.withoutTransaction());
        boolean jdbc = ClassUtils.isPresent("dev.idempotency.jdbc.DuplicateBusinessNumbers",
                IdempotencyConsoleAutoConfiguration.class.getClassLoader());
        return new ConsoleController(admin::getIfAvailable, resolver,
                () -> jdbc ? JdbcDuplicates.of(beans) : List.of(), answers::getIfAvailable,
                clock.getIfUnique(Clock::systemUTC), properties);
    }

    /**
     * The confirmation answers of MCP calls and the calls waiting for an approver, when {@code idempotency-mcp} is
     * on the class path: read from the application's {@code McpConfirmations} bean, if it has one, when a page is
     * asked for.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "dev.idempotency.mcp.McpConfirmations")
    static class McpAnswersConfiguration {

        @Bean
        McpConfirmationAnswers idempotencyConsoleConfirmationAnswers(ObjectProvider<McpConfirmations> confirmations) {
            return new McpConfirmationAnswers(confirmations::getIfUnique);
        }
    }
}
