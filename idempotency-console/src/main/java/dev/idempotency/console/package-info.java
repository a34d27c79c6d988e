/**
 * The operator console: server-rendered HTML pages, served by a Spring Boot application under
 * {@code idempotency.console.path} once {@code idempotency.console.enabled=true}, behind the application's
 * authentication. See docs/operations.md.
 */
@NullMarked
package dev.idempotency.console;

import org.jspecify.annotations.NullMarked;
