package dev.idempotency.samples.jpa;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * A schema (PostgreSQL) or database (MariaDB) of one test class's own on a shared server, in which Hibernate creates
 * the orders table and the starter the idempotency table; dropped, with everything in it, afterwards.
 */
final class OwnSchema {

    private final String serverUrl;
    private final String name = "jpa_sample_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private final String applicationUrl;
    private final String drop;

    private OwnSchema(String serverUrl, String applicationUrl, String drop) {
        this.serverUrl = serverUrl;
        this.applicationUrl = applicationUrl.replace("{name}", name);
        this.drop = drop.replace("{name}", name);
    }

    /** A schema on the PostgreSQL at {@code url}, the application's connections set to it (currentSchema). */
    static OwnSchema postgres(String url) {
        return new OwnSchema(url, url + (url.contains("?") ? "&" : "?") + "currentSchema={name}",
                "DROP SCHEMA IF EXISTS {name} CASCADE");
    }

    /** A database on the MariaDB server at {@code url}, the application's connections opened in it. */
    static OwnSchema mariadb(String url) {
        // jdbc:mariadb://host:port/db?options: the database of the URL swapped for ours
        return new OwnSchema(url, url.replaceFirst("^(jdbc:mariadb://[^/?]+)(/[^?]*)?", "$1/{name}"),
                "DROP DATABASE IF EXISTS {name}");
    }

    /** Creates it, and points the application at it: its data source, Hibernate's DDL, the idempotency table. */
    void create(DynamicPropertyRegistry properties) throws SQLException {
        execute(drop.startsWith("DROP SCHEMA") ? "CREATE SCHEMA " + name : "CREATE DATABASE " + name);
        properties.add("spring.datasource.url", () -> applicationUrl);
        properties.add("spring.datasource.username", () -> "");
        properties.add("spring.datasource.password", () -> "");
        // created in the new schema; not dropped by Hibernate at the end, the whole schema is (drop())
        properties.add("spring.jpa.hibernate.ddl-auto", () -> "create");
        properties.add("idempotency.jdbc.initialize-schema", () -> "always");
    }

    /** Drops it and everything in it. */
    void drop() throws SQLException {
        execute(drop);
    }

    private void execute(String sql) throws SQLException {
        try (Connection con = DriverManager.getConnection(serverUrl); Statement st = con.createStatement()) {
            st.execute(sql);
        }
    }
}
