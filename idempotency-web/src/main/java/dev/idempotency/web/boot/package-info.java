/** Spring Boot auto-configuration of the web module: {@code idempotency.web.*}. */
@NullMarked
package dev.idempotency.web.boot;

import org.jspecify.annotations.NullMarked;
