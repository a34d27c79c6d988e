package dev.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.springframework.jdbc.core.JdbcTemplate;

@EnabledIfEnvironmentVariable(named = "IDEMPOTENCY_POSTGRES_URL", matches = ".+")
class PostgresAutoConfigurationIT extends AbstractAutoConfigurationDatabaseIT {

    @Override
    DataSource dataSource() {
        return fromUrl(new org.postgresql.Driver(), System.getenv("IDEMPOTENCY_POSTGRES_URL"));
    }

    /** The script's digest domain, after the table (this runs before the superclass's {@code @AfterEach}). */
    @AfterEach
    void dropTableAndDomain() {
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        jdbc.execute("DROP TABLE IF EXISTS " + table);
        jdbc.execute("DROP DOMAIN IF EXISTS " + table + "_sha256");
    }

    /** The initializer makes the script's digest domain with the table, and the table's digests are of it. */
    @Test
    void theDigestDomainIsCreatedWithTheTable() {
        runner().run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(new JdbcTemplate(dataSource).queryForList("SELECT format_type(atttypid, atttypmod)"
                    + " FROM pg_attribute WHERE attrelid = to_regclass(?) AND attname IN ('key_hash', 'fingerprint')",
                    String.class, table)).containsExactly(table + "_sha256", table + "_sha256");
        });
    }
}
