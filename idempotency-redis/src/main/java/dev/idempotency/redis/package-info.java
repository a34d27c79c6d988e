/**
 * {@link dev.idempotency.redis.RedisPrefilter}: committed outcomes shared by every node on Redis (Lettuce), in front
 * of the store that decides.
 */
@NullMarked
package dev.idempotency.redis;

import org.jspecify.annotations.NullMarked;
