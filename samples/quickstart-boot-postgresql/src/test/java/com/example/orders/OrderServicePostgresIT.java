package com.example.orders;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The page's test on PostgreSQL ({@code IDEMPOTENCY_POSTGRES_URL}), with the page's own migrations, in a schema of its
 * own (other builds share the database), dropped afterwards. Not on the page.
 */
@EnabledIfEnvironmentVariable(named = "IDEMPOTENCY_POSTGRES_URL", matches = ".+")
class OrderServicePostgresIT extends OrderServiceTest {

    private static final String URL = System.getenv("IDEMPOTENCY_POSTGRES_URL");
    private static final String SCHEMA = "quickstart_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);

    @DynamicPropertySource
    static void postgres(DynamicPropertyRegistry properties) {
        properties.add("spring.datasource.url", () -> URL + (URL.contains("?") ? "&" : "?") + "currentSchema=" + SCHEMA);
        properties.add("spring.datasource.username", () -> "");
        properties.add("spring.datasource.password", () -> "");
        properties.add("spring.flyway.locations", () -> "classpath:db/migration");
        properties.add("spring.flyway.schemas", () -> SCHEMA);
    }

    @AfterAll
    static void dropSchema() throws SQLException {
        try (Connection con = DriverManager.getConnection(URL); Statement st = con.createStatement()) {
            st.execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
        }
    }
}
