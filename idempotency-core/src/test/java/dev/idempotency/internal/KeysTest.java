package dev.idempotency.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
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

    @ParameterizedTest
    @ValueSource(strings = {"ORDER-\u202e1-REDRO", "a\u200db", "a\u200bb", "a\ufeffb", "a\u2066b", "a\u00adb",
            "a\ud834\udd73b"})
    void formatCharactersAreRefusedSoAKeyCannotHideOrReorderText(String key) {
        int cp = key.codePointAt(key.indexOf('a') >= 0 ? 1 : 6);
        assertThatThrownBy(() -> Keys.normalize(key))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("format character")
                .hasMessageContaining(String.format("U+%04X", cp))
                .hasMessageNotContaining(key);
    }

    @Test
    void emojiSequencesJoinedByAZeroWidthJoinerAreRefusedTooButPlainEmojiAreKeys() {
        String family = "\ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67";   // joined by U+200D (category Cf)
        assertThatThrownBy(() -> Keys.normalize(family)).hasMessageContaining("U+200D");
        assertThat(Keys.normalize("\ud83d\udc68\ud83d\udc69")).isEqualTo("\ud83d\udc68\ud83d\udc69");
    }

    @Test
    void aRunOfMoreThan30CombiningMarksIsRefusedBeforeNormalizing() {
        String thirty = "o" + "\u0308\u0301\u0323".repeat(10);                // 30 marks: stream-safe text
        assertThat(Keys.normalize(thirty)).startsWith("\u1ECD");              // NFC composed what it could
        assertThatThrownBy(() -> Keys.normalize("o" + "\u0301".repeat(31)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("more than 30 combining marks in a row")
                .hasMessageContaining("index 31");
        // the measured attack: 4,096 UTF-16 units of stacked marks, refused at the first mark over the limit
        assertThatThrownBy(() -> Keys.normalize("a" + "\u0301\u0300".repeat(2047) + "b"))
                .hasMessageContaining("combining marks");
        // marks separated by base characters never add up
        assertThat(Keys.normalize("e\u0301".repeat(1024))).hasSize(1024);
    }

    @Test
    void enclosingAndSpacingMarksCountAsCombiningMarks() {
        assertThatThrownBy(() -> Keys.normalize("a" + "\u20dd".repeat(31))).hasMessageContaining("combining marks");
        assertThatThrownBy(() -> Keys.normalize("\u0915" + "\u093f".repeat(31))).hasMessageContaining("combining");
        assertThat(Keys.normalize("a" + "\u20dd".repeat(30))).hasSize(31);
    }

    @Test
    void aKeyLongerThan4096Utf16UnitsIsRefusedByLengthEvenIfBlankOrMarks() {
        assertThatThrownBy(() -> Keys.normalize(" ".repeat(4097))).hasMessageContaining("4097 UTF-16 units");
        assertThatThrownBy(() -> Keys.normalize("\u0301".repeat(4097))).hasMessageContaining("4097 UTF-16 units");
        assertThat(Keys.normalize("k".repeat(1000) + "\u00e9".repeat(24))).hasSize(1024);
    }

    @Test
    void theReadableFormOfARefusedKeyEscapesWhatTheKeyMayNotHold() {
        assertThat(Keys.readable("A-1\nINFO forged line")).isEqualTo("A-1\\u000AINFO forged line");
        assertThat(Keys.readable("a\u202eb")).isEqualTo("a\\u202Eb");
        assertThat(Keys.readable("a\ud800")).isEqualTo("a\\uD800");
        assertThat(Keys.readable("\u2028\u0085\u007f")).isEqualTo("\\u2028\\u0085\\u007F");
        // a key that is accepted comes back as it is, same instance
        String fine = "caf\u00e9 \ud83d\ude00 \\n";
        assertThat(Keys.readable(fine)).isSameAs(fine);
        // cut first (a megabyte key costs 255 characters of work), then escaped
        assertThat(Keys.readable("\n".repeat(1_000_000))).isEqualTo("\\u000A".repeat(255));
        // an unpaired high surrogate at the cut is escaped, a pair is never split
        assertThat(Keys.readable("a".repeat(254) + "\ud800x")).endsWith("\\uD800");
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

    /** Keys of characters below U+0300 skip the normalizer: they must be exactly what the normalizer gives. */
    @Test
    void everyCharacterBelowTheCombiningMarksIsItsOwnNfcAlone() {
        StringBuilder all = new StringBuilder();
        for (char c = 0x20; c < 0x300; c++) {
            if (!Character.isISOControl(c) && Character.getType(c) != Character.FORMAT) {
                all.append(c);
            }
        }
        String text = all.toString();
        assertThat(java.text.Normalizer.normalize(text, java.text.Normalizer.Form.NFC)).isEqualTo(text);
        for (int i = 0; i < text.length(); i++) {
            for (int j = 0; j < text.length(); j++) {
                String pair = new String(new char[] {text.charAt(i), text.charAt(j)});
                if (!java.text.Normalizer.isNormalized(pair, java.text.Normalizer.Form.NFC)) {
                    assertThat(pair).as("a pair that NFC composes").isNull();
                }
            }
        }
        assertThat(Keys.normalize("ORDER:k-1")).isEqualTo("ORDER:k-1");
        assertThat(Keys.normalize("caf\u00e9")).isEqualTo("caf\u00e9");
        assertThat(Keys.normalize("cafe\u0301")).isEqualTo("caf\u00e9");
        assertThatThrownBy(() -> Keys.normalize("a".repeat(Keys.MAX_KEY_LENGTH + 1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("more than 1024 allowed");
    }

    /** The documented format, computed without Keys: SHA-256 over each part's 4-byte big-endian length, then UTF-8. */
    static byte[] expectedHash(String... parts) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        for (String part : parts) {
            byte[] utf8 = part.getBytes(StandardCharsets.UTF_8);
            sha.update(ByteBuffer.allocate(4).putInt(utf8.length).array());
            sha.update(utf8);
        }
        return sha.digest();
    }

    @Test
    void theHashFollowsTheDocumentedFormatSoStoredKeysStayValid() throws Exception {
        assertThat(Keys.hash("Orders.place", "tenant-a", "K-1"))
                .isEqualTo(expectedHash("Orders.place", "tenant-a", "K-1"));
        assertThat(Keys.hash("Op", "", "k")).isEqualTo(expectedHash("Op", "", "k"));
        // pinned: the same bytes on every JVM and version (a change here orphans every stored key)
        assertThat(java.util.HexFormat.of().formatHex(Keys.hash("Orders.place", "tenant-a", "K-1")))
                .isEqualTo("15b2d48a48c572b4e6f04c95b02a853b0d5e5ccde9f216febbf20a5b2d58ad06");
        // all ASCII (written straight to the hashed bytes), and not (the part-by-part UTF-8): the same format
        assertThat(Keys.hash("Orders.create", "", "ORDER:A-1")).isEqualTo(expectedHash("Orders.create", "",
                "ORDER:A-1"));
        assertThat(Keys.hash("Orders.create", "tenant-\u00e9", "ORDER:A-1"))
                .isEqualTo(expectedHash("Orders.create", "tenant-\u00e9", "ORDER:A-1"));
        assertThat(Keys.hash("Orders.create", "t", "\u043a\u043b\u044e\u0447-1"))
                .isEqualTo(expectedHash("Orders.create", "t", "\u043a\u043b\u044e\u0447-1"));
        // pinned as the releases before the ASCII path hashed them
        assertThat(java.util.HexFormat.of().formatHex(Keys.hash("Orders.create", "", "ORDER:A-1")))
                .isEqualTo("c95808768220c62c5de6ad6a2af64a68ae10479616dfd9f1e1cb0a66cdf094d3");
        assertThat(java.util.HexFormat.of().formatHex(Keys.hash("Orders.create", "tenant-\u00e9", "ORDER:A-1")))
                .isEqualTo("f2bbb2034f0790c0123b57eaa2ea63dd78f2588f9a13d56fba3f3f6251ea41b5");
        assertThat(java.util.HexFormat.of().formatHex(Keys.hash("Orders.create", "t",
                "\u043a\u043b\u044e\u0447-1")))
                .isEqualTo("fab28eca9302900cdd0a978cbfd5cc5e0463b1ac35980f7c240c273495647565");
    }

    @Test
    void partsOf256BytesAndMoreAreLengthPrefixedWithEveryByteOfTheirLength() throws Exception {
        // within the 1,024-character limit, multi-byte characters take a key past 255 and 65,535 bytes of UTF-8
        String latin = Keys.normalize("\u00e9".repeat(200));                       // 400 bytes
        String cjk = Keys.normalize("\u4e2d".repeat(1024));                        // 3,072 bytes
        String longOperation = "com.example.orders.".repeat(20) + "OrderService.place"; // 398 bytes
        String wideScope = "tenant-\u4e2d".repeat(7000);                           // 70,000 bytes
        assertThat(Keys.hash("Op", "", latin)).isEqualTo(expectedHash("Op", "", latin));
        assertThat(Keys.hash(longOperation, "t", cjk)).isEqualTo(expectedHash(longOperation, "t", cjk));
        assertThat(Keys.hash("Op", wideScope, "k")).isEqualTo(expectedHash("Op", wideScope, "k"));
        // and past 16 MiB, where the length's highest byte is no longer zero
        String hugeScope = "s".repeat((1 << 24) + 5);
        assertThat(Keys.hash("Op", hugeScope, "k")).isEqualTo(expectedHash("Op", hugeScope, "k"));
    }

    @Test
    void surrogatePairsHashAsTheirUtf8InEveryPart() throws Exception {
        String emoji = "\ud83d\ude00";
        assertThat(Keys.hash("Op" + emoji, "t" + emoji + "x", Keys.normalize(emoji + "k" + emoji)))
                .isEqualTo(expectedHash("Op" + emoji, "t" + emoji + "x", emoji + "k" + emoji));
        assertThat(Keys.hash(emoji, emoji, emoji)).isEqualTo(expectedHash(emoji, emoji, emoji));
    }

    @ParameterizedTest
    @ValueSource(strings = {"a\ud800", "\ud800", "\udc00a", "a\ud800b", "\ude00\ud83d", "\ud83d\ud83d\ude00"})
    void anUnpairedSurrogateInAnyPartIsRefusedNamingThePart(String bad) {
        assertThatThrownBy(() -> Keys.hash(bad, "t", "k"))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("the operation holds an unpaired surrogate");
        assertThatThrownBy(() -> Keys.hash("Op", bad, "k"))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("the scope holds an unpaired surrogate");
        assertThatThrownBy(() -> Keys.hash("Op", "t", bad))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("the key holds an unpaired surrogate");
    }

    @Test
    void aRefusedCharacterIsNamedByKindCodePointAndIndex() {
        assertThatThrownBy(() -> Keys.normalize("A-1\nINFO")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the key holds a control character (U+000A) at index 3");
        assertThatThrownBy(() -> Keys.normalize("\u00e9\u0085"))
                .hasMessage("the key holds a control character (U+0085) at index 1");
        assertThatThrownBy(() -> Keys.normalize("ab\u2028"))
                .hasMessage("the key holds a line or paragraph separator (U+2028) at index 2");
        assertThatThrownBy(() -> Keys.normalize("k\u2029"))
                .hasMessage("the key holds a line or paragraph separator (U+2029) at index 1");
        assertThatThrownBy(() -> Keys.normalize("e\u0301\u202e"))
                .hasMessage("the key holds an invisible format character (U+202E) at index 2");
        assertThatThrownBy(() -> Keys.normalize("\ud83d\ude00\udc00"))
                .hasMessage("the key holds an unpaired surrogate (U+DC00) at index 2");
    }

    @Test
    void theCombiningMarksStartAtU0300AndAKeyHoldingOneIsNormalized() {
        // U+0300 (combining grave) is the first character that composes: e + U+0300 is one key with \u00e8
        assertThat(Keys.normalize("e\u0300")).isEqualTo("\u00e8");
        assertThat(Keys.normalize("K-e\u0300-\u0300")).isEqualTo("K-\u00e8-\u0300");
        assertThat(Keys.normalize("\u00e8\u0300")).isEqualTo("\u00e8\u0300");
        // the highest character below it stays as it is, with no copy made
        String below = "K-\u02ff-\u00ff";
        assertThat(Keys.normalize(below)).isSameAs(below);
    }

    /**
     * Why a normalized key needs no second check: NFC never brings in a character that {@link Keys#normalize} refuses,
     * since no refused character is a composite (NFC could compose it) and no accepted one decomposes to a refused one.
     */
    @Test
    void normalizationNeverBringsInARefusedCharacter() {
        for (int cp = 0; cp <= Character.MAX_CODE_POINT; cp++) {
            if (!Character.isDefined(cp) || Character.getType(cp) == Character.SURROGATE) {
                continue;
            }
            String one = Character.toString(cp);
            String nfd = Normalizer.normalize(one, Normalizer.Form.NFD);
            if (refusedByKeys(cp)) {
                assertThat(nfd).as("U+%04X", cp).isEqualTo(one);
            } else if (!nfd.equals(one)) {
                assertThat(nfd.codePoints().filter(KeysTest::refusedByKeys)).as("U+%04X", cp).isEmpty();
            }
        }
    }

    static boolean refusedByKeys(int cp) {
        int type = Character.getType(cp);
        return Character.isISOControl(cp) || type == Character.LINE_SEPARATOR || type == Character.PARAGRAPH_SEPARATOR
                || type == Character.FORMAT || type == Character.SURROGATE;
    }

    @Test
    void aRefusedKeyOfExactly255UnitsEndingInALoneHighSurrogateIsEscapedWhole() {
        String key = "a".repeat(254) + "\ud800";
        assertThat(Keys.readable(key)).isEqualTo("a".repeat(254) + "\\uD800");
        String fits = "b".repeat(255);
        assertThat(Keys.readable(fits)).isSameAs(fits);
    }

    @Test
    void asciiPartsDigestedFromScratchBytesHashAsTheirUtf8() throws Exception {
        String[][] cases = {{"Orders.create", "", "ORDER:1"}, {"Orders.create", "tenant-\u00e9", "caf\u00e9"},
            {"op", "t", "\ud83d\ude00 emoji"}, {"op", "", "k".repeat(1024)}, {"op", "s".repeat(3000), "k"},
            {"", "", ""}};
        for (String[] c : cases) {
            assertThat(Keys.hash(c[0], c[1], c[2])).as(String.join("|", c)).isEqualTo(expectedHash(c));
        }
    }

    @Test
    void aRefusedPartLeavesTheThreadsDigestClean() throws Exception {
        // the parts are checked before any is digested: a refusal must not leave bytes in the thread's digest
        assertThatThrownBy(() -> Keys.hash("op", "tenant", "bad\ud800")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Keys.hash("op", "\udc00", "k")).isInstanceOf(IllegalArgumentException.class);
        assertThat(Keys.hash("op", "", "K-1")).isEqualTo(expectedHash("op", "", "K-1"));
        assertThat(Keys.sha256Of(new byte[] {1, 2})).isEqualTo(
                java.security.MessageDigest.getInstance("SHA-256").digest(new byte[] {1, 2}));
    }

    /**
     * An ASCII part is digested from the thread's scratch bytes when it fits them behind its 4-byte length prefix; one
     * character more and it takes its UTF-8 array. Either way, in every position, the documented format: and parts
     * that move a character across the edge stay apart.
     */
    @Test
    void asciiPartsAtTheEdgeOfTheScratchBytesHashInTheDocumentedFormat() throws Exception {
        int fits = Keys.Hasher.SCRATCH - 4;
        for (int n = fits - 2; n <= Keys.Hasher.SCRATCH + 1; n++) {
            String part = "p".repeat(n);
            String[][] cases = {{part, "t", "k"}, {"op", part, "k"}, {"op", "", part}, {part, part, part}};
            for (String[] c : cases) {
                assertThat(Keys.hash(c[0], c[1], c[2])).as("parts of %d, %d and %d characters",
                        c[0].length(), c[1].length(), c[2].length()).isEqualTo(expectedHash(c));
            }
        }
        String edge = "q".repeat(fits - 1);
        assertThat(Keys.hash("op", edge + "ab", "c")).isEqualTo(expectedHash("op", edge + "ab", "c"))
                .isNotEqualTo(Keys.hash("op", edge + "a", "bc"));
        assertThat(Keys.hash("op", edge + "a", "bc")).isEqualTo(expectedHash("op", edge + "a", "bc"));
        assertThat(Keys.hash("ab", "c", "k")).isNotEqualTo(Keys.hash("a", "bc", "k"));
    }

    /** U+007F is the last character written as one byte, U+0080 the first of two, at either end of any part. */
    @Test
    void theLastAsciiCharacterAndTheFirstNonAsciiOneHashAsTheirUtf8() throws Exception {
        for (String c : new String[] {"\u007f", "\u0080", "\u00ff", "\u07ff", "\u0800"}) {
            for (String part : new String[] {c, c + "K-1", "K-1" + c}) {
                String[][] cases = {{part, "t", "k"}, {"op", part, "k"}, {"op", "t", part}};
                for (String[] p : cases) {
                    assertThat(Keys.hash(p[0], p[1], p[2])).as("U+%04X in %s", (int) c.charAt(0), String.join("|", p))
                            .isEqualTo(expectedHash(p));
                }
            }
        }
    }

    /**
     * Keys and fingerprints share the thread's scratch bytes: a key hashed after a fingerprint that filled them, and a
     * short key after a long one, see none of what was left there. And any key (the longest, 1,024 characters) with an
     * operation and a scope that fit the scratch bytes is hashed from them, with no allocation but the 32-byte result.
     */
    @Test
    void theScratchBytesAreSharedWithoutLeftoversAndSpareTheArrays() throws Exception {
        Fingerprints fingerprints = new Fingerprints(dev.idempotency.codec.JacksonResultCodec.defaultMapper());
        fingerprints.fingerprint(new Object[] {"z".repeat(Keys.Hasher.SCRATCH - 4)}, i -> false);
        assertThat(Keys.hash("op", "", "k")).isEqualTo(expectedHash("op", "", "k"));
        Keys.hash("o".repeat(2000), "s".repeat(2000), "k".repeat(1024));
        assertThat(Keys.hash("op", "t", "K-1")).isEqualTo(expectedHash("op", "t", "K-1"));

        String longestKey = Keys.normalize("k".repeat(Keys.MAX_KEY_LENGTH));
        String fillingScope = "s".repeat(Keys.Hasher.SCRATCH - 4);
        assertThat(Allocation.perRun(() -> Keys.hash("Orders.create", "tenant-a", longestKey)))
                .isLessThanOrEqualTo(Allocation.DIGEST_ONLY);
        assertThat(Allocation.perRun(() -> Keys.hash("Orders.create", fillingScope, "K-1")))
                .isLessThanOrEqualTo(Allocation.DIGEST_ONLY);
    }
}
