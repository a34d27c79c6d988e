package dev.idempotency.internal;

import dev.idempotency.store.IdempotencyStore;

/**
 * The order of the library's store fronts, outermost first, stated once: a front answers before the ones after
 * it, so this node's memory comes first, then what every node shares, then the breaker directly around the real
 * store. A front's builder refuses to wrap a front of its own layer or of one that goes in front of it. Internal.
 */
public enum StoreLayer {
    /** {@code CaffeinePrefilter}: outcomes this node holds in memory. */
    NODE_PREFILTER("CaffeinePrefilter"),
    /** {@code RedisPrefilter}: outcomes every node shares. */
    SHARED_PREFILTER("RedisPrefilter");

    /** A store front of one of the layers. */
    public interface Front {
        StoreLayer storeLayer();
    }

    private final String type;

    StoreLayer(String type) {
        this.type = type;
    }

    /**
     * Checks that a front of this layer may wrap {@code inner}.
     *
     * @throws IllegalArgumentException if {@code inner} is a front of this layer, or of one that goes in front of it
     */
    public void checkWraps(IdempotencyStore inner) {
        if (!(inner instanceof Front front)) {
            return;
        }
        StoreLayer other = front.storeLayer();
        if (other == this) {
            throw new IllegalArgumentException("the store is already wrapped in a " + type);
        }
        if (other.ordinal() < ordinal()) {
            throw new IllegalArgumentException("a " + other.type + " goes in front of the " + type + ", not behind"
                    + " it: " + other.type + ".wrap(" + type + ".wrap(store)...build())");
        }
    }
}
