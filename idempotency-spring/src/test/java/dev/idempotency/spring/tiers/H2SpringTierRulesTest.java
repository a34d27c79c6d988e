package dev.idempotency.spring.tiers;

import dev.idempotency.jdbc.JdbcDialect;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;

/** The tier rules through the aspect on the JDBC store over embedded H2. */
class H2SpringTierRulesTest extends AbstractSpringTierRulesTest {

    @Override
    protected DataSource openDataSource() {
        return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true).build();
    }

    @Override
    protected JdbcDialect dialect() {
        return JdbcDialect.h2();
    }

    @Override
    protected void closeDataSource(DataSource dataSource) {
        ((EmbeddedDatabase) dataSource).shutdown();
    }
}
