package io.lastunit.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class HoldIdTest {
    private static final UUID UUID_1 = new UUID(0x0123456789ABCDEFL, 0xFEDCBA9876543210L);
    private static final HoldId SAMPLE = new HoldId("acme", "sku-42/red", "eu-west", 7, UUID_1);
    /** A field name other than "hold_id", to see that decode names the field it is given. */
    private static final String FIELD = "some_hold_field";

    // ---- wire form built by hand, independent of HoldId.encode ------------------------------

    /** Raw bytes of a hold id: version, length-prefixed parts, bucket (u16), uuid. */
    static byte[] raw(int version, byte[] tenant, byte[] item, byte[] region, int bucket, UUID uuid) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(version);
        for (byte[] part : new byte[][] {tenant, item, region}) {
            out.write(part.length);
            out.write(part, 0, part.length);
        }
        out.write((bucket >>> 8) & 0xFF);
        out.write(bucket & 0xFF);
        long msb = uuid.getMostSignificantBits();
        long lsb = uuid.getLeastSignificantBits();
        for (int shift = 56; shift >= 0; shift -= 8) {
            out.write((int) (msb >>> shift) & 0xFF);
        }
        for (int shift = 56; shift >= 0; shift -= 8) {
            out.write((int) (lsb >>> shift) & 0xFF);
        }
        return out.toByteArray();
    }

    static byte[] raw(String tenant, String item, String region, int bucket, UUID uuid) {
        return raw(1, ascii(tenant), ascii(item), ascii(region), bucket, uuid);
    }

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    static String b64(byte[] bytes) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    static void assertRefused(String encoded, String field) {
        Failure f = catchThrowableOfType(Failure.class, () -> HoldId.decode(encoded, field));
        assertThat(f).as("decode(%s) must throw Failure", encoded).isNotNull();
        assertThat(f.reason()).isEqualTo(Reason.INVALID_FIELD);
        assertThat(f.metadata()).isEqualTo(Map.of("field", field));
        assertThat(f.getMessage()).startsWith(field + ": ");
        assertThat(f.retryAfter()).isNull();
    }

    // ---- round trip and wire form ---------------------------------------------------------

    @Test
    void decode_ofEncode_returnsEqualId() {
        HoldId back = HoldId.decode(SAMPLE.encode(), "hold_id");

        assertThat(back).isEqualTo(SAMPLE);
        assertThat(back.tenantId()).isEqualTo("acme");
        assertThat(back.itemId()).isEqualTo("sku-42/red");
        assertThat(back.region()).isEqualTo("eu-west");
        assertThat(back.bucketNo()).isEqualTo(7);
        assertThat(back.uuid()).isEqualTo(UUID_1);
    }

    @Test
    void encode_producesDocumentedWireForm() {
        String expected = b64(raw("acme", "sku-42/red", "eu-west", 7, UUID_1));

        assertThat(SAMPLE.encode()).isEqualTo(expected);
    }

    @Test
    void encode_isUrlSafeWithoutPadding() {
        // Parts chosen so the raw bytes include 0xFB/0xFF, which standard base64 writes as '+' and '/'.
        HoldId id = new HoldId("~~~", "???", ">>>", 0xFFFF, new UUID(-1L, -1L));

        assertThat(id.encode()).matches("[A-Za-z0-9_-]+").doesNotContain("=");
        assertThat(HoldId.decode(id.encode(), "hold_id")).isEqualTo(id);
    }

    @Test
    void toString_isTheEncodedForm() {
        assertThat(SAMPLE.toString()).isEqualTo(SAMPLE.encode());
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 255, 256, 0x7FFF, 0x8000, 0xFFFF})
    void decode_ofEncode_keepsBucketNumberOverWholeU16Range(int bucket) {
        HoldId id = new HoldId("t", "i", "r", bucket, UUID_1);

        assertThat(HoldId.decode(id.encode(), "hold_id").bucketNo()).isEqualTo(bucket);
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, 0x10000, Integer.MIN_VALUE, Integer.MAX_VALUE})
    void constructor_refusesBucketOutsideU16(int bucket) {
        assertThatThrownBy(() -> new HoldId("t", "i", "r", bucket, UUID_1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("bucketNo out of range: " + bucket);
    }

    @Test
    void encode_refusesPartLongerThan255Bytes() {
        HoldId id = new HoldId("t".repeat(256), "i", "r", 0, UUID_1);

        assertThatThrownBy(id::encode)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("id part longer than 255 bytes");
    }

    @Test
    void encode_ofMaximalDefaultIds_is328CharactersAndDecodes() {
        HoldId id = new HoldId("t".repeat(64), "i".repeat(128), "r".repeat(32), 0xFFFF, UUID_1);

        String encoded = id.encode();

        // 1 + (1+64) + (1+128) + (1+32) + 2 + 16 = 246 bytes = 328 base64 characters.
        assertThat(encoded).hasSize(328);
        assertThat(encoded.length()).isLessThanOrEqualTo(HoldId.ENCODED_LENGTH_MAX);
        assertThat(HoldId.decode(encoded, "hold_id")).isEqualTo(id);
    }

    @Test
    void decode_acceptsExactly400Characters() {
        // 22 fixed bytes + 278 bytes of ids = 300 bytes = exactly 400 characters.
        HoldId id = new HoldId("t".repeat(64), "i".repeat(182), "r".repeat(32), 3, UUID_1);
        String encoded = id.encode();
        assertThat(encoded).hasSize(400);

        assertThat(HoldId.decode(encoded, "hold_id")).isEqualTo(id);
    }

    @Test
    void encodedLengthMax_is400() {
        assertThat(HoldId.ENCODED_LENGTH_MAX).isEqualTo(400);
    }

    // ---- refusals -------------------------------------------------------------------------

    @Test
    void decode_refusesNull_namingGivenField() {
        assertRefused(null, FIELD);
        assertThatThrownBy(() -> HoldId.decode(null, FIELD)).hasMessage(FIELD + ": is required");
    }

    @Test
    void decode_refusesEmpty_namingGivenField() {
        assertRefused("", FIELD);
        assertThatThrownBy(() -> HoldId.decode("", FIELD)).hasMessage(FIELD + ": is required");
    }

    @Test
    void decode_refuses401Characters_beforeDecoding_namingGivenField() {
        String tooLong = "A".repeat(401);

        assertRefused(tooLong, FIELD);
        assertThatThrownBy(() -> HoldId.decode(tooLong, FIELD))
                .hasMessage(FIELD + ": is 401 characters, at most 400");
    }

    @Test
    void decode_refusesValidButOverlongId_namingGivenField() {
        // A well-formed id of 403 characters (302 bytes) is still refused: the limit is on length.
        String encoded = new HoldId("t".repeat(64), "i".repeat(184), "r".repeat(32), 3, UUID_1).encode();
        assertThat(encoded).hasSize(403);

        assertRefused(encoded, FIELD);
        assertThatThrownBy(() -> HoldId.decode(encoded, FIELD))
                .hasMessage(FIELD + ": is 403 characters, at most 400");
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "not base64",          // space
        "abc*def",             // '*' is in no base64 alphabet
        "ab+/cd",              // standard (not URL-safe) alphabet
        "A",                   // one character cannot encode a byte
        "AQ=A",                // padding in the middle
        "h\u00e9llo",          // non-ASCII
        "\u0000\u0001",        // control characters
    })
    void decode_refusesNonBase64_namingGivenField(String encoded) {
        assertRefused(encoded, FIELD);
        assertThatThrownBy(() -> HoldId.decode(encoded, FIELD))
                .hasMessage(FIELD + ": is not a lastunit hold id");
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 2, 0x7F, 0xFF})
    void decode_refusesWrongVersion_namingGivenField(int version) {
        String encoded = b64(raw(version, ascii("acme"), ascii("sku"), ascii("eu-west"), 1, UUID_1));

        assertRefused(encoded, FIELD);
        assertThatThrownBy(() -> HoldId.decode(encoded, FIELD))
                .hasMessage(FIELD + ": unknown hold id version");
    }

    static Stream<Arguments> truncations() {
        byte[] full = raw("acme", "sku", "eu-west", 1, UUID_1);
        return Stream.of(
                Arguments.of("version byte only", 1),
                Arguments.of("inside tenant", 3),
                Arguments.of("before item length", 6),
                Arguments.of("inside region", 14),
                Arguments.of("inside bucket", full.length - 17),
                Arguments.of("inside uuid", full.length - 8),
                Arguments.of("last byte missing", full.length - 1))
                .map(a -> Arguments.of(a.get()[0], Arrays.copyOf(full, (Integer) a.get()[1])));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("truncations")
    void decode_refusesTruncated_namingGivenField(String where, byte[] truncated) {
        String encoded = b64(truncated);

        assertRefused(encoded, FIELD);
        assertThatThrownBy(() -> HoldId.decode(encoded, FIELD))
                .hasMessage(FIELD + ": is not a lastunit hold id");
    }

    @Test
    void decode_refusesLengthPrefixPastTheEnd_namingGivenField() {
        byte[] bytes = raw("acme", "sku", "eu-west", 1, UUID_1);
        bytes[1] = (byte) 200; // tenant claims 200 bytes; fewer follow

        assertRefused(b64(bytes), FIELD);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 16})
    void decode_refusesTrailingBytes_namingGivenField(int extra) {
        byte[] full = raw("acme", "sku", "eu-west", 1, UUID_1);
        byte[] longer = Arrays.copyOf(full, full.length + extra);
        String encoded = b64(longer);

        assertRefused(encoded, FIELD);
        assertThatThrownBy(() -> HoldId.decode(encoded, FIELD))
                .hasMessage(FIELD + ": is not a lastunit hold id");
    }

    static Stream<Arguments> nonPrintableParts() {
        byte[] ok = ascii("ok");
        Stream.Builder<Arguments> cases = Stream.builder();
        for (int bad : new int[] {0x00, 0x09, 0x1F, 0x20, 0x7F, 0x80, 0xFF}) {
            byte[] part = {'a', (byte) bad, 'b'};
            String hex = String.format("0x%02X", bad);
            cases.add(Arguments.of("tenant with " + hex, raw(1, part, ok, ok, 0, UUID_1)));
            cases.add(Arguments.of("item with " + hex, raw(1, ok, part, ok, 0, UUID_1)));
            cases.add(Arguments.of("region with " + hex, raw(1, ok, ok, part, 0, UUID_1)));
        }
        return cases.build();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("nonPrintableParts")
    void decode_refusesNonPrintableParts_namingGivenField(String what, byte[] bytes) {
        String encoded = b64(bytes);

        assertRefused(encoded, FIELD);
        assertThatThrownBy(() -> HoldId.decode(encoded, FIELD))
                .hasMessage(FIELD + ": is not a lastunit hold id");
    }

    static Stream<Arguments> emptyParts() {
        byte[] ok = ascii("ok");
        byte[] none = new byte[0];
        return Stream.of(
                Arguments.of("empty tenant", raw(1, none, ok, ok, 0, UUID_1)),
                Arguments.of("empty item", raw(1, ok, none, ok, 0, UUID_1)),
                Arguments.of("empty region", raw(1, ok, ok, none, 0, UUID_1)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("emptyParts")
    void decode_refusesEmptyParts_namingGivenField(String what, byte[] bytes) {
        String encoded = b64(bytes);

        assertRefused(encoded, FIELD);
        assertThatThrownBy(() -> HoldId.decode(encoded, FIELD))
                .hasMessage(FIELD + ": is not a lastunit hold id");
    }

    @Test
    void decode_acceptsPrintableBoundaryCharacters() {
        // 0x21 '!' and 0x7E '~' are the first and last printable characters accepted.
        String encoded = b64(raw("!~", "~!", "!", 0, UUID_1));

        assertThat(HoldId.decode(encoded, "hold_id")).isEqualTo(new HoldId("!~", "~!", "!", 0, UUID_1));
    }

    // ---- uuid -----------------------------------------------------------------------------

    @Test
    void create_usesVersion7UuidCarryingTheMillis() {
        long millis = 1_767_225_600_123L; // 2026-01-01T00:00:00.123Z

        HoldId id = HoldId.create("acme", "sku", "eu-west", 5, millis);

        assertThat(id.tenantId()).isEqualTo("acme");
        assertThat(id.itemId()).isEqualTo("sku");
        assertThat(id.region()).isEqualTo("eu-west");
        assertThat(id.bucketNo()).isEqualTo(5);
        assertThat(id.uuid().version()).isEqualTo(7);
        assertThat(id.uuid().variant()).isEqualTo(2); // IETF (RFC 4122 / 9562)
        assertThat(id.uuid().getMostSignificantBits() >>> 16).isEqualTo(millis);
    }

    @Test
    void create_givesDifferentUuidsForTheSameMillis() {
        long millis = 1_767_225_600_000L;

        UUID a = HoldId.create("t", "i", "r", 0, millis).uuid();
        UUID b = HoldId.create("t", "i", "r", 0, millis).uuid();

        assertThat(a).isNotEqualTo(b);
    }

    @Test
    void uuidV7_isOrderedByIncreasingMillis() {
        long start = 1_767_225_600_000L;
        UUID previous = HoldId.uuidV7(start);
        for (int step = 1; step <= 1_000; step++) {
            UUID next = HoldId.uuidV7(start + step);

            assertThat(next.version()).isEqualTo(7);
            assertThat(next).as("uuid for +%d ms", step).isGreaterThan(previous);
            assertThat(next.toString()).as("string form for +%d ms", step).isGreaterThan(previous.toString());
            previous = next;
        }
    }

    @Test
    void uuidV7_layoutMatchesRfc9562() {
        long millis = 0x0123_4567_89ABL;

        UUID u = HoldId.uuidV7(millis);

        assertThat(u.toString()).startsWith("01234567-89ab-7");
        assertThat(u.toString().charAt(19)).isIn('8', '9', 'a', 'b');
    }

    @Test
    void uuidV7_everyOneOfThe74RandomBitsTakesBothValues() {
        long randomMsb = 0x0FFFL;                // rand_a: the 12 bits under the version
        long randomLsb = 0x3FFFFFFFFFFFFFFFL;    // rand_b: the 62 bits under the variant
        long msbOnes = 0, msbZeros = 0, lsbOnes = 0, lsbZeros = 0;
        for (int i = 0; i < 256; i++) { // a bit stuck for 256 ids: 2^-255 by chance
            UUID u = HoldId.uuidV7(1_767_225_600_000L);
            msbOnes |= u.getMostSignificantBits();
            msbZeros |= ~u.getMostSignificantBits();
            lsbOnes |= u.getLeastSignificantBits();
            lsbZeros |= ~u.getLeastSignificantBits();
        }

        assertThat(msbOnes & msbZeros & randomMsb).isEqualTo(randomMsb);
        assertThat(lsbOnes & lsbZeros & randomLsb).isEqualTo(randomLsb);
    }

    // ---- unpredictable ids ------------------------------------------------------------------

    private static final long LOW_62 = 0x3FFFFFFFFFFFFFFFL;
    private static final long MIX_1 = 0xff51afd7ed558ccdL;
    private static final long MIX_2 = 0xc4ceb9fe1a85ec53L;
    private static final long MIX_1_INVERSE = inverse(MIX_1);
    private static final long MIX_2_INVERSE = inverse(MIX_2);

    private static long inverse(long odd) {
        return new BigInteger(Long.toUnsignedString(odd)).modInverse(BigInteger.ONE.shiftLeft(64)).longValue();
    }

    /** murmur3's fmix64, the output function of {@code ThreadLocalRandom} and {@code SplittableRandom}. */
    private static long mix64(long z) {
        z = (z ^ (z >>> 33)) * MIX_1;
        z = (z ^ (z >>> 33)) * MIX_2;
        return z ^ (z >>> 33);
    }

    /** fmix64 is a bijection: its inverse, step by step ({@code x ^= x >>> 33} undoes itself). */
    private static long unmix64(long z) {
        z = (z ^ (z >>> 33)) * MIX_2_INVERSE;
        z = (z ^ (z >>> 33)) * MIX_1_INVERSE;
        return z ^ (z >>> 33);
    }

    /**
     * What an attacker who saw two consecutive ids of one thread predicts for the next one's low
     * 62 random bits, if the bits came from a Weyl-sequence generator such as
     * {@code ThreadLocalRandom} (seed += gamma per draw, output fmix64(seed); two draws per id).
     * Each id's low half gives its seed but for the 2 bits the variant hides (4 candidates each);
     * the two seeds give twice the gamma, and so the seed of the third id's low half.
     */
    private static Set<Long> predictThirdLowBits(UUID first, UUID second) {
        Set<Long> predictions = new HashSet<>();
        for (long hiddenA = 0; hiddenA < 4; hiddenA++) {
            long seedA = unmix64((first.getLeastSignificantBits() & LOW_62) | hiddenA << 62);
            for (long hiddenB = 0; hiddenB < 4; hiddenB++) {
                long seedB = unmix64((second.getLeastSignificantBits() & LOW_62) | hiddenB << 62);
                predictions.add(mix64(seedB + (seedB - seedA)) & LOW_62);
            }
        }
        return predictions;
    }

    @Test
    void create_twoIdsOfOneThreadDoNotPredictItsNextId() throws InterruptedException {
        UUID[] ids = new UUID[3];
        // A thread of its own, so nothing else draws from its generator between the three ids.
        Thread maker = new Thread(() -> {
            for (int i = 0; i < ids.length; i++) {
                ids[i] = HoldId.create("acme", "sku-1", "eu", 0, 1_767_225_600_000L).uuid();
            }
        });
        maker.start();
        maker.join();

        // 16 guesses at 62 bits: 2^-58 to hit by chance.
        assertThat(predictThirdLowBits(ids[0], ids[1])).doesNotContain(ids[2].getLeastSignificantBits() & LOW_62);
    }

    @Test
    void predictThirdLowBits_namesTheNextIdOfThreadLocalRandom() throws InterruptedException {
        // The attacker above is real: against ThreadLocalRandom (JDK 17: a Weyl sequence through
        // fmix64), drawn as HoldId drew from it before, it names the third id. So the test above
        // fails for such a source.
        UUID[] ids = new UUID[3];
        Thread maker = new Thread(() -> {
            java.util.concurrent.ThreadLocalRandom r = java.util.concurrent.ThreadLocalRandom.current();
            for (int i = 0; i < ids.length; i++) {
                long msb = (1_767_225_600_000L << 16) | 0x7000L | (r.nextLong() & 0x0FFFL);
                ids[i] = new UUID(msb, (r.nextLong() & LOW_62) | 0x8000000000000000L);
            }
        });
        maker.start();
        maker.join();

        assertThat(predictThirdLowBits(ids[0], ids[1])).contains(ids[2].getLeastSignificantBits() & LOW_62);
    }
}
