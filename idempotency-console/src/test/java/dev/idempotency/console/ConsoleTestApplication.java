package dev.idempotency.console;

import dev.idempotency.Idempotent;
import dev.idempotency.Tier;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * The application the console tests start: Spring MVC on a random port, Spring Security (form login for the browser,
 * HTTP Basic for the HTTP tests, CSRF on), the JDBC store, and one irreversible operation that fails when told to,
 * which holds its key for review.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
class ConsoleTestApplication {

    static final String PASSWORD = "console-test-password";

    /** Starts the application on a random port with {@code properties} ({@code name=value}). */
    static ConfigurableApplicationContext start(String... properties) {
        SpringApplication app = new SpringApplication(ConsoleTestApplication.class);
        String[] args = new String[properties.length + 3];
        args[0] = "--server.port=0";
        args[1] = "--spring.main.banner-mode=off";
        // Selenium warns that it has no DevTools protocol for Debian's newer Chromium: the tests use none
        args[2] = "--logging.level.org.openqa.selenium=ERROR";
        for (int i = 0; i < properties.length; i++) {
            args[i + 3] = "--" + properties[i];
        }
        return app.run(args);
    }

    @Bean
    SecurityFilterChain security(HttpSecurity http) throws Exception {
        return http.authorizeHttpRequests(requests -> requests.anyRequest().authenticated())
                .formLogin(Customizer.withDefaults()).httpBasic(Customizer.withDefaults()).build();
    }

    @Bean
    InMemoryUserDetailsManager users() {
        return new InMemoryUserDetailsManager(
                User.withUsername("alice").password("{noop}" + PASSWORD).roles("OPS").build(),
                User.withUsername("bob").password("{noop}" + PASSWORD).roles("SALES").build());
    }

    @Bean
    Payouts payouts() {
        return new Payouts();
    }

    /** A payout gateway call: irreversible, so a call that fails leaves its outcome unknown and its key held. */
    static class Payouts {

        private final AtomicBoolean failNext = new AtomicBoolean();
        private final AtomicInteger sent = new AtomicInteger();

        /** The next call fails as a gateway timeout would (a method: the bean is a proxy). */
        public void failNext() {
            failNext.set(true);
        }

        @Idempotent(operation = "Payouts.send", tier = Tier.IRREVERSIBLE, key = "#id", ttl = "7d")
        public String send(String id) {
            if (failNext.getAndSet(false)) {
                throw new IllegalStateException("the payout gateway timed out");
            }
            return "payout " + id + " #" + sent.incrementAndGet();
        }
    }
}
