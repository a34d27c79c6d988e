/**
 * The JDBC store: {@link dev.idempotency.jdbc.JdbcIdempotencyStore} on one table of H2, PostgreSQL or MySQL/MariaDB,
 * with one {@link dev.idempotency.jdbc.JdbcDialect} per database (chosen from the JDBC metadata unless set), the
 * schema scripts under {@code dev/idempotency/jdbc/schema-*.sql}, and {@link dev.idempotency.jdbc.JdbcPurgeJob} to
 * delete expired records. The store joins the caller's Spring-managed transaction on its {@code DataSource}.
 */
@NullMarked
package dev.idempotency.jdbc;

import org.jspecify.annotations.NullMarked;
