package dev.idempotency.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.text.Normalizer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class KeysTest {

    @Test
    void keysAreNormalizedToNfcSoComposedAndDecomposedTextIsOneKey() {
        String composed = "caf\u00e9";      // é as one code point
        String decomposed = "cafe\u0301";   // e + combining acute
        assertThat(Keys.normalize(decomposed)).isEqualTo(composed);
        assertThat(Keys.hash("Op", "", Keys.normalize(decomposed)))
                .isEqualTo(Keys.hash("Op", "", Keys.normalize(composed)));
    }

    @Test
    void keysAreNeitherTrimmedNorCaseFolded() {
        byte[] upper = Keys.hash("Op", "", Keys.normalize("A-1"));
        assertThat(upper).isNotEqualTo(Keys.hash("Op", "", Keys.normalize("a-1")));
        assertThat(upper).isNotEqualTo(Keys.hash("Op", "", Keys.normalize("A-1 ")));
        // compatibility forms are different keys too: NFC, not NFKC
        assertThat(Keys.normalize("\ufb01")).isEqualTo("\ufb01");
    }

    @Test
    void aKeyOfExactly1024CharactersIsAcceptedAnd1025Refused() {
        assertThat(Keys.normalize("k".repeat(1024))).hasSize(1024);
        assertThatThrownBy(() -> Keys.normalize("k".repeat(1025)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1025 characters");
    }

    @Test
    void theLengthIsCountedInCodePointsAfterNormalization() {
        String emoji = "\ud83d\ude00";   // one code point, two UTF-16 units
        assertThat(Keys.normalize(emoji.repeat(1024))).hasSize(2048);
        assertThatThrownBy(() -> Keys.normalize(emoji.repeat(1025))).isInstanceOf(IllegalArgumentException.class);
        // 1,024 decomposed é are 2,048 code points before NFC and 1,024 after: accepted
        assertThat(Keys.normalize("e\u0301".repeat(1024))).hasSize(1024);
    }

    @Test
    void aHugeKeyIsRefusedBeforeItIsNormalized() {
        assertThatThrownBy(() -> Keys.normalize("x".repeat(10_000_000)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("UTF-16 units");
    }

    @ParameterizedTest
    @ValueSource(strings = {"a\u0000b", "a\nb", "a\rb", "a\tb", "a\u001bb", "a\u007fb", "a\u0085b", "a\u009fb",
            "a\u2028b", "a\u2029b"})
    void controlCharactersAndLineSeparatorsAreRefusedNamingTheCodePoint(String key) {
        int cp = key.codePointAt(1);
        assertThatThrownBy(() -> Keys.normalize(key))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(String.format("U+%04X", cp))
                .hasMessageContaining("index 1");
    }

    @ParameterizedTest
    @ValueSource(strings = {"a\ud800", "\udc00a", "a\udc00\ud800b"})
    void unpairedSurrogatesAreRefused(String key) {
        assertThatThrownBy(() -> Keys.normalize(key))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unpaired surrogate");
    }

    @Test
    void formatCharactersStayAllowedSoEmojiSequencesWork() {
        String family = "\ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67";   // joined by U+200D
        assertThat(Keys.normalize(family)).isEqualTo(family);
    }

    @Test
    void theLengthPrefixesKeepOperationScopeAndKeyApart() {
        assertThat(Keys.hash("Op", "tenant-a:", "key")).isNotEqualTo(Keys.hash("Op", "tenant-a", ":key"));
        assertThat(Keys.hash("Op:x", "", "key")).isNotEqualTo(Keys.hash("Op", "x", "key"));
        assertThat(Keys.hash("Op", "", "key")).hasSize(32);
    }

    @Test
    void aScopeWithAnUnpairedSurrogateCannotCollideWithAQuestionMark() {
        // lenient UTF-8 would turn the lone surrogate into '?', making the two scopes one
        assertThatThrownBy(() -> Keys.hash("Op", "tenant\ud800", "k"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("scope");
        assertThat(Keys.hash("Op", "tenant?", "k")).hasSize(32);
    }

    @Test
    void theReadableKeyIsCutTo255WithoutSplittingASurrogatePair() {
        String key = "a".repeat(254) + "\ud83d\ude00" + "tail";
        String readable = Keys.readable(key);
        assertThat(readable).hasSize(254);
        assertThat(Keys.readable("short")).isEqualTo("short");
        assertThat(Normalizer.isNormalized(readable, Normalizer.Form.NFC)).isTrue();
    }
}
