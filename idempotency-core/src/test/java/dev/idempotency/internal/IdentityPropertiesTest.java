package dev.idempotency.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.codec.JacksonResultCodec;
import java.math.BigDecimal;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Assume;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Properties of the stored identity and the payload fingerprint over random Unicode keys (composed and decomposed
 * forms, surrogate pairs, whitespace variants) and random argument objects: stable (same input, same bytes), and
 * distinct where they must be.
 */
class IdentityPropertiesTest {

    /** Pieces of keys: ASCII, whitespace, combining marks, precomposed and compatibility letters, Hangul, emoji. */
    private static final List<String> PIECES = List.of(
            "a", "Z", "7", "-", ":", "/", "_", ".", " ", "\u00a0", "\u3000",
            "e", "\u0301", "\u0308", "\u00e9", "\u00c5", "\u212b", "A\u030a", "o\u0302\u0323", "\u1e69",
            "\u1100", "\u1161", "\u11a8", "\uac00", "\u4e2d", "\u6587",
            "\ud83d\ude00", "\ud83d\udc68\u200d\ud83d\udc69", "\ud800\udc00", "\udbff\udfff", "\ud835\udc00");

    private static final Fingerprints FINGERPRINTS = new Fingerprints(JacksonResultCodec.defaultMapper());

    @Provide
    Arbitrary<String> keys() {
        return Arbitraries.of(PIECES).list().ofMinSize(1).ofMaxSize(24).map(l -> String.join("", l));
    }

    private static byte[] identity(String scope, String key) {
        return Keys.hash("Orders.create", scope, Keys.normalize(key));
    }

    private static boolean accepted(String key) {
        try {
            Keys.normalize(key);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    @Property(tries = 500)
    void theSameKeyGivesTheSameIdentityEveryTime(@ForAll("keys") String key) {
        Assume.that(accepted(key));
        assertThat(identity("", new String(key.toCharArray()))).isEqualTo(identity("", key)).hasSize(32);
    }

    @Property(tries = 500)
    void theReadableFormOfANormalizedKeyNeedsNoEscapingPass(@ForAll("keys") String key) {
        // also cut: long keys end anywhere among the pieces, a surrogate pair or a combining mark included
        for (String k : List.of(key, key.repeat(Math.max(1, 300 / key.length())))) {
            Assume.that(accepted(k));
            String normalized = Keys.normalize(k);
            assertThat(Keys.readableNormalized(normalized)).isEqualTo(Keys.readable(normalized));
        }
    }

    @Property(tries = 500)
    void composedAndDecomposedFormsOfTheSameTextAreOneIdentity(@ForAll("keys") String key) {
        String nfd = Normalizer.normalize(key, Normalizer.Form.NFD);
        String nfc = Normalizer.normalize(key, Normalizer.Form.NFC);
        assertThat(accepted(nfd)).isEqualTo(accepted(nfc));
        Assume.that(accepted(nfc));
        assertThat(identity("", nfd)).isEqualTo(identity("", nfc)).isEqualTo(identity("", key));
    }

    @Property(tries = 500)
    void differentTextsAreDifferentIdentities(@ForAll("keys") String a, @ForAll("keys") String b) {
        Assume.that(accepted(a) && accepted(b));
        Assume.that(!Keys.normalize(a).equals(Keys.normalize(b)));
        assertThat(identity("", a)).isNotEqualTo(identity("", b));
    }

    @Property(tries = 300)
    void whitespaceVariantsAreDifferentKeys(@ForAll("keys") String key) {
        Assume.that(accepted(key) && !key.isBlank());
        Set<String> distinct = new LinkedHashSet<>();
        for (String v : List.of(key, key + " ", " " + key, key + "\u00a0", key.replace(' ', '\u00a0'),
                key + "\u3000")) {
            distinct.add(Keys.normalize(v));
        }
        Set<String> identities = new HashSet<>();
        for (String v : distinct) {
            identities.add(java.util.HexFormat.of().formatHex(identity("", v)));
        }
        assertThat(distinct).hasSizeGreaterThanOrEqualTo(5);
        assertThat(identities).hasSameSizeAs(distinct);
    }

    @Property(tries = 300)
    void aLoneSurrogateAnywhereIsRefused(@ForAll("keys") String key, @ForAll("surrogates") char surrogate,
            @ForAll int position) {
        StringBuilder s = new StringBuilder(key);
        // insert between two whole code points, so the inserted unit cannot complete a pair
        List<Integer> boundaries = new ArrayList<>();
        for (int i = 0; i <= key.length(); i = i < key.length() ? key.offsetByCodePoints(i, 1) : i + 1) {
            boundaries.add(i);
        }
        int at = boundaries.get(Math.floorMod(position, boundaries.size()));
        s.insert(at, surrogate);
        String hostile = s.toString();
        boolean paired = hostile.codePoints().noneMatch(cp -> Character.getType(cp) == Character.SURROGATE);
        Assume.that(!paired);
        assertThatThrownBy(() -> Keys.normalize(hostile)).isInstanceOf(IllegalArgumentException.class);
    }

    @Provide
    Arbitrary<Character> surrogates() {
        return Arbitraries.chars().range('\ud800', '\udfff');
    }

    @Property(tries = 300)
    void differentScopesAreDifferentIdentitiesForTheSameKey(@ForAll("keys") String key, @ForAll("keys") String a,
            @ForAll("keys") String b) {
        Assume.that(accepted(key) && !a.equals(b));
        assertThat(identity(a, key)).isNotEqualTo(identity(b, key));
    }

    // ---- fingerprints over random arguments

    /** A random argument: nested maps, lists and sets of strings, numbers and records. */
    public record Item(String sku, int quantity, BigDecimal price) { }

    @Provide
    Arbitrary<Item> items() {
        return Combinators.combine(
                Arbitraries.strings().alpha().ofMinLength(1).ofMaxLength(6),
                Arbitraries.integers().between(-3, 1000),
                Arbitraries.bigDecimals().between(BigDecimal.ZERO, new BigDecimal("9999")).ofScale(2))
                .as(Item::new);
    }

    @Provide
    Arbitrary<Map<String, List<Item>>> orders() {
        return Arbitraries.maps(keys(), items().list().ofMaxSize(3)).ofMaxSize(6);
    }

    @Provide
    Arbitrary<Set<String>> tags() {
        return keys().set().ofMaxSize(8);
    }

    private static byte[] fingerprint(Object... args) {
        return FINGERPRINTS.fingerprint(args, i -> false);
    }

    @Property(tries = 300)
    void equalArgumentsGiveEqualFingerprintsWhateverTheMapOrSetImplementation(
            @ForAll("orders") Map<String, List<Item>> order, @ForAll("tags") Set<String> tags) {
        List<String> keysBackwards = new ArrayList<>(order.keySet());
        Collections.reverse(keysBackwards);
        Map<String, List<Item>> linked = new LinkedHashMap<>();
        keysBackwards.forEach(k -> linked.put(k, order.get(k)));
        Map<String, List<Item>> tree = new TreeMap<>(Comparator.reverseOrder());
        tree.putAll(order);
        List<String> tagsBackwards = new ArrayList<>(tags);
        Collections.reverse(tagsBackwards);
        Set<String> tagsTree = new TreeSet<>(tags);

        byte[] expected = fingerprint(new HashMap<>(order), new HashSet<>(tags));
        assertThat(fingerprint(linked, new LinkedHashSet<>(tagsBackwards))).isEqualTo(expected);
        assertThat(fingerprint(tree, tagsTree)).isEqualTo(expected);
        assertThat(fingerprint(order, tags)).isEqualTo(expected);
    }

    @Property(tries = 300)
    void differentArgumentsGiveDifferentFingerprints(@ForAll("orders") Map<String, List<Item>> a,
            @ForAll("orders") Map<String, List<Item>> b, @ForAll("tags") Set<String> ta,
            @ForAll("tags") Set<String> tb) {
        Assume.that(!a.equals(b) || !ta.equals(tb));
        assertThat(fingerprint(a, ta)).isNotEqualTo(fingerprint(b, tb));
    }
}
