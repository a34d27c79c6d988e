package dev.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.springframework.jdbc.core.JdbcTemplate;

@EnabledIfEnvironmentVariable(named = "IDEMPOTENCY_POSTGRES_URL", matches = ".+")
class PostgresAutoConfigurationIT extends AbstractAutoConfigurationDatabaseIT {

    @Override
    DataSource dataSource() {
        return fromUrl(new org.postgresql.Driver(), System.getenv("IDEMPOTENCY_POSTGRES_URL"));
    }

    /**
     * A table dropped by hand leaves its domain: the next start makes the table again, of that domain, rather than
     * failing on the script's {@code CREATE DOMAIN}.
     */
    @Test
    void aTableDroppedWithoutItsDomainIsMadeAgainOfIt() {
        runner().run(context -> assertThat(context).hasNotFailed());
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        jdbc.execute("DROP TABLE " + table);
        runner().run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(digestTypes(jdbc)).containsExactly(table + "_sha256", table + "_sha256");
            assertThat(context.getBean(IdempotencyAutoConfigurationTest.Greeter.class).greet("K1", "ann"))
                    .isEqualTo("hello ann #1");
        });
    }

    private List<String> digestTypes(JdbcTemplate jdbc) {
        return jdbc.queryForList("SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
                + " WHERE attrelid = to_regclass(?) AND attname IN ('key_hash', 'fingerprint')", String.class, table);
    }

    /** The initializer makes the script's digest domain with the table, and the table's digests are of it. */
    @Test
    void theDigestDomainIsCreatedWithTheTable() {
        runner().run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(digestTypes(new JdbcTemplate(dataSource))).containsExactly(table + "_sha256", table + "_sha256");
        });
    }
}
