/** Internals of the web module; may change without notice. */
@NullMarked
package dev.idempotency.web.internal;

import org.jspecify.annotations.NullMarked;
