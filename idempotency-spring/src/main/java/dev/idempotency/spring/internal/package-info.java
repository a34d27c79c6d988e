/**
 * Internal: shared by this library's Spring ways in (idempotency-web, idempotency-messaging), not an API. May change
 * in any release.
 */
@NullMarked
package dev.idempotency.spring.internal;

import org.jspecify.annotations.NullMarked;
