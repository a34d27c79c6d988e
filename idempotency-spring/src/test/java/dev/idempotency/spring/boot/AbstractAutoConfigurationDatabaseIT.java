package dev.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.jdbc.JdbcDialect;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The auto-configuration on a real database: it creates the table from the shipped script under its own name
 * ({@code initialize-schema=always}), replays without SQL from the pre-filter, and never caches a rolled-back result.
 */
abstract class AbstractAutoConfigurationDatabaseIT {

    final String table = "idem_boot_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    final CountingDataSource dataSource = new CountingDataSource(dataSource());

    /** A {@code DataSource} on the database under test; a URL that does not answer fails the test. */
    abstract DataSource dataSource();

    static DataSource fromUrl(java.sql.Driver driver, String url) {
        return new SimpleDriverDataSource(driver, url);
    }

    /** The table, and what the shipped scripts made beside it (PostgreSQL's digest domain, MariaDB's procedure). */
    @AfterEach
    void dropTable() {
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        JdbcDialect.of(dataSource).dropStatements(table).forEach(jdbc::execute);
    }

    ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class,
                        IdempotencyPurgeAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
                        TransactionAutoConfiguration.class))
                .withBean(DataSource.class, () -> dataSource)
                .withBean(IdempotencyAutoConfigurationTest.Greeter.class)
                .withPropertyValues("idempotency.jdbc.initialize-schema=always", "idempotency.jdbc.table-name=" + table);
    }

    @Test
    void theTableIsCreatedOnceAndReplaysComeFromThePrefilter() {
        runner().run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(JdbcIdempotencyStore.class).tableName()).isEqualTo(table);
            IdempotencyAutoConfigurationTest.Greeter greeter =
                    context.getBean(IdempotencyAutoConfigurationTest.Greeter.class);
            TransactionTemplate tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));

            tx.executeWithoutResult(status -> {
                assertThat(greeter.greet("K1", "ann")).isEqualTo("hello ann #1");
                status.setRollbackOnly();
            });
            String committed = tx.execute(status -> greeter.greet("K1", "ann"));
            assertThat(committed).as("the rolled-back attempt left nothing behind").isEqualTo("hello ann #2");
            dataSource.reset();
            assertThat(greeter.greet("K1", "ann")).isEqualTo("hello ann #2");
            assertThat(dataSource.statements()).as("a replay from the pre-filter").isZero();
        });
        // a second start finds the table and leaves it (and its row) alone
        runner().withPropertyValues("idempotency.prefilter.enabled=false").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(IdempotencyAutoConfigurationTest.Greeter.class).greet("K1", "ann"))
                    .as("the result recorded before the restart").isEqualTo("hello ann #2");
            assertThat(new JdbcTemplate(dataSource).queryForObject("SELECT COUNT(*) FROM " + table, Integer.class))
                    .isEqualTo(1);
        });
    }
}
