package dev.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

@EnabledIfEnvironmentVariable(named = "IDEMPOTENCY_MARIADB_URL", matches = ".+")
class MariaDbAutoConfigurationIT extends AbstractAutoConfigurationDatabaseIT {

    @Override
    DataSource dataSource() {
        return fromUrl(new org.mariadb.jdbc.Driver(), System.getenv("IDEMPOTENCY_MARIADB_URL"));
    }

    /** With the table, the initializer creates its claim procedure, and a claim in a transaction calls it. */
    @Test
    void theClaimProcedureIsCreatedWithTheTableAndCalled() {
        runner().run(context -> {
            assertThat(context).hasNotFailed();
            JdbcTemplate jdbc = new JdbcTemplate(dataSource);
            assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA ="
                    + " DATABASE() AND ROUTINE_NAME = ?", Integer.class, table + "_claim_v1")).isEqualTo(1);
            IdempotencyAutoConfigurationTest.Greeter greeter =
                    context.getBean(IdempotencyAutoConfigurationTest.Greeter.class);
            TransactionTemplate tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
            long calls = tx.execute(status -> {
                long before = calls(jdbc);
                assertThat(greeter.greet("K-procedure", "ann")).isEqualTo("hello ann #1");
                return calls(jdbc) - before;
            });
            assertThat(calls).isEqualTo(1);
        });
    }

    private static long calls(JdbcTemplate jdbc) {
        return jdbc.queryForObject("SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS"
                + " WHERE VARIABLE_NAME = 'COM_CALL_PROCEDURE'", Long.class);
    }
}
