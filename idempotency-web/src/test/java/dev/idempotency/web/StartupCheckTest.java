package dev.idempotency.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;

import dev.idempotency.Tier;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.event.ApplicationPreparedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.stereotype.Controller;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.ResponseBody;

/** What could never be recorded fails the start, every method listed at once; what is guarded is counted. */
class StartupCheckTest {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class GoodApp {
        @Bean
        IdempotencyStore store() {
            return new InMemoryIdempotencyStore();
        }

        @Controller
        static class Good {
            @PostMapping("/a")
            @ResponseBody
            @IdempotentRequest(tier = Tier.REVERSIBLE)
            public String a() {
                return "a";
            }

            @PostMapping({"/b", "/b2"})
            @ResponseBody
            @IdempotentRequest(tier = Tier.REVERSIBLE)
            public String b() {
                return "b";
            }

            @PostMapping("/plain")
            @ResponseBody
            public String plain() {
                return "plain";
            }
        }
    }

    @Test
    void theStartupLineCountsTheIdempotentRequestMethods() {
        Logger logger = (Logger) LoggerFactory.getLogger("dev.idempotency");
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        try {
            // attached once Spring Boot has set logging up (it resets Logback), before the context is refreshed
            new SpringApplicationBuilder(GoodApp.class).properties("server.port=0")
                    .listeners((ApplicationListener<ApplicationPreparedEvent>) e -> logger.addAppender(appender))
                    .run().close();
        } finally {
            logger.detachAppender(appender);
        }
        // two methods (one of them under two paths), no @Idempotent method: not "operations 0"
        assertThat(appender.list).map(ILoggingEvent::getFormattedMessage)
                .filteredOn(line -> line.startsWith("Idempotency: store ")).singleElement()
                .satisfies(line -> assertThat(line).contains("; operations 0 (+2 HTTP); advice proxy"));
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class BadApp {
        @Bean
        IdempotencyStore store() {
            return new InMemoryIdempotencyStore();
        }

        @Controller
        static class Bad {
            @PostMapping("/view")
            @IdempotentRequest(tier = Tier.REVERSIBLE)
            public String view() {
                return "home";
            }

            @PostMapping("/read")
            @ResponseBody
            @IdempotentRequest(tier = Tier.READ_ONLY)
            public String read() {
                return "x";
            }

            @PostMapping("/later")
            @ResponseBody
            @IdempotentRequest(tier = Tier.REVERSIBLE)
            public Callable<String> later() {
                return () -> "x";
            }

            @PostMapping("/new")
            @ResponseBody
            @IdempotentRequest(tier = Tier.REVERSIBLE)
            @Transactional(propagation = Propagation.REQUIRES_NEW)
            public String inANewTransaction() {
                return "x";
            }

            @PostMapping("/ttl")
            @ResponseBody
            @IdempotentRequest(tier = Tier.REVERSIBLE, ttl = "forever")
            public String badTtl() {
                return "x";
            }
        }
    }

    @Test
    void everyMethodThatCannotBeRecordedIsListed() {
        assertThatThrownBy(() -> new SpringApplicationBuilder(BadApp.class).properties("server.port=0").run().close())
                .hasMessageContaining("@IdempotentRequest cannot be applied")
                .hasMessageContaining("Bad.view: a view is rendered after the handler")
                .hasMessageContaining("Bad.read has tier READ_ONLY")
                .hasMessageContaining("Bad.later: its response (Callable)")
                .hasMessageContaining("Bad.inANewTransaction: @Transactional(REQUIRES_NEW)")
                .hasMessageContaining("Bad.badTtl: ");
    }
}
