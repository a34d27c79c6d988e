package dev.idempotency.spring.tiers;

import dev.idempotency.ConfirmationGate;
import dev.idempotency.ConfirmationRequiredException;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.store.tck.MutableClock;
import java.time.Instant;
import javax.sql.DataSource;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;

/**
 * An application as a user writes it: {@code @EnableTransactionManagement}, the JDBC store
 * on the business {@code DataSource}, a {@code Clock} bean (moved by the tests: leases run out on command) and a
 * {@code ConfirmationGate} bean. The test registers the {@code DataSource}, its {@link Tables} and the
 * {@code @EnableIdempotency} of the mode under test.
 */
@Configuration(proxyBeanMethods = false)
@EnableTransactionManagement
@Import({TierService.class, Checkout.class})
class TierRulesConfiguration {

    /** The one operation whose calls need a confirmation, given in its third argument. */
    static final String GATED_OPERATION = "TierService.transfer";
    static final String CONFIRMED = "CONFIRMED";

    @Bean
    PlatformTransactionManager transactionManager(DataSource dataSource) {
        return new DataSourceTransactionManager(dataSource);
    }

    @Bean
    MutableClock clock() {
        return MutableClock.at(Instant.parse("2026-03-01T09:00:00Z"));
    }

    @Bean
    CrashableStore idempotencyStore(DataSource dataSource, Tables tables) {
        return new CrashableStore(JdbcIdempotencyStore.builder(dataSource).tableName(tables.idempotency()).build());
    }

    @Bean
    World world() {
        return new World();
    }

    @Bean
    ConfirmationGate confirmationGate(World world) {
        return call -> {
            world.gateAsked.add(call);
            if (call.operation().equals(GATED_OPERATION) && !CONFIRMED.equals(call.arguments().get(2))) {
                throw new ConfirmationRequiredException(call.operation(), call.key(),
                        "transfer " + call.key() + " needs the customer's confirmation");
            }
        };
    }
}
