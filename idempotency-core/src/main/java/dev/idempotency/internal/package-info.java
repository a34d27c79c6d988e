/**
 * Internal: shared by this library's modules, not an API. May change in any release.
 */
@NullMarked
package dev.idempotency.internal;

import org.jspecify.annotations.NullMarked;
