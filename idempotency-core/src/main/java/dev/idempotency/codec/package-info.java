/**
 * How results are recorded and replayed: the {@link dev.idempotency.codec.ResultCodec} SPI and its Jackson 3 implementation.
 */
@NullMarked
package dev.idempotency.codec;

import org.jspecify.annotations.NullMarked;
