package dev.idempotency.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntPredicate;
import tools.jackson.databind.MapperFeature;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * The payload fingerprint: SHA-256 of the canonical JSON of a call's arguments (ignored ones left out). Canonical
 * means map entries and properties in sorted order, so equal arguments give equal fingerprints across JVM restarts
 * and map orderings.
 */
public final class Fingerprints {

    private final JsonMapper canonical;

    /** Fingerprints through {@code mapper}'s modules, with sorted properties and map keys on top. */
    public Fingerprints(JsonMapper mapper) {
        this.canonical = mapper.rebuild()
                .enable(MapperFeature.SORT_PROPERTIES_ALPHABETICALLY)
                .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
                .build();
    }

    /**
     * @param arguments the call's arguments
     * @param ignored   which positions to leave out
     * @throws IllegalArgumentException if an argument cannot be serialized
     */
    public byte[] fingerprint(Object[] arguments, IntPredicate ignored) {
        List<Object> kept = new ArrayList<>(arguments.length);
        for (int i = 0; i < arguments.length; i++) {
            if (!ignored.test(i)) {
                kept.add(arguments[i]);
            }
        }
        byte[] json;
        try {
            json = canonical.writeValueAsBytes(kept);
        } catch (tools.jackson.core.JacksonException e) {
            throw new IllegalArgumentException("the arguments cannot be serialized for the fingerprint: "
                    + e.getOriginalMessage(), e);
        }
        return Keys.sha256().digest(json);
    }
}
