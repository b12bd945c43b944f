package io.lastunit.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Base64;
import java.util.Map;
import java.util.UUID;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.CharRange;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.StringLength;

class HoldIdProperties {

    @Property
    void decodeOfEncode_returnsTheSameId(
            @ForAll @CharRange(from = '!', to = '~') @StringLength(min = 1, max = 64) String tenant,
            @ForAll @CharRange(from = '!', to = '~') @StringLength(min = 1, max = 128) String item,
            @ForAll @CharRange(from = '!', to = '~') @StringLength(min = 1, max = 32) String region,
            @ForAll @IntRange(min = 0, max = 0xFFFF) int bucket,
            @ForAll long msb,
            @ForAll long lsb) {
        HoldId id = new HoldId(tenant, item, region, bucket, new UUID(msb, lsb));

        String encoded = id.encode();

        assertThat(encoded.length()).isLessThanOrEqualTo(HoldId.ENCODED_LENGTH_MAX);
        assertThat(encoded).matches("[A-Za-z0-9_-]+");
        assertThat(HoldId.decode(encoded, "hold_id")).isEqualTo(id);
    }

    @Property
    void decodeOfAnyString_returnsOrFailsWithInvalidField(@ForAll String anything) {
        checkDecode(anything);
    }

    @Property
    void decodeOfAnyBase64UrlText_returnsOrFailsWithInvalidField(@ForAll("base64UrlText") String text) {
        checkDecode(text);
    }

    @Property
    void decodeOfAnyBytesAsBase64_returnsOrFailsWithInvalidField(@ForAll("version1Bytes") byte[] bytes) {
        checkDecode(Base64.getUrlEncoder().withoutPadding().encodeToString(bytes));
    }

    @Property
    void decodeOfValidIdWithOneByteChanged_returnsOrFailsWithInvalidField(
            @ForAll("validRaw") byte[] raw, @ForAll @IntRange(min = 0, max = 400) int position, @ForAll byte value) {
        byte[] mutated = raw.clone();
        mutated[position % mutated.length] = value;

        checkDecode(Base64.getUrlEncoder().withoutPadding().encodeToString(mutated));
    }

    @Provide
    Arbitrary<String> base64UrlText() {
        return Arbitraries.strings()
                .withChars("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=")
                .ofMinLength(0)
                .ofMaxLength(420);
    }

    /** Byte strings that start with the right version, so decoding gets past the first check. */
    @Provide
    Arbitrary<byte[]> version1Bytes() {
        return Arbitraries.bytes().array(byte[].class).ofMinSize(0).ofMaxSize(299).map(tail -> {
            byte[] b = new byte[tail.length + 1];
            b[0] = 1;
            System.arraycopy(tail, 0, b, 1, tail.length);
            return b;
        });
    }

    @Provide
    Arbitrary<byte[]> validRaw() {
        Arbitrary<String> part = Arbitraries.strings().withCharRange('!', '~').ofMinLength(1).ofMaxLength(40);
        return Combinators.combine(part, part, part, Arbitraries.integers().between(0, 0xFFFF))
                .as((t, i, r, bucket) -> Base64.getUrlDecoder()
                        .decode(new HoldId(t, i, r, bucket, new UUID(42L, 43L)).encode()));
    }

    /** Decoding either returns an id that survives another round trip, or throws INVALID_FIELD. */
    private static void checkDecode(String encoded) {
        HoldId decoded;
        try {
            decoded = HoldId.decode(encoded, "the_field");
        } catch (Failure f) {
            assertThat(f.reason()).isEqualTo(Reason.INVALID_FIELD);
            assertThat(f.metadata()).isEqualTo(Map.of("field", "the_field"));
            return;
        }
        // Anything decode accepts is a well-formed id: printable, non-empty parts.
        assertThat(Limits.isId(decoded.tenantId(), 255)).isTrue();
        assertThat(Limits.isId(decoded.itemId(), 255)).isTrue();
        assertThat(Limits.isId(decoded.region(), 255)).isTrue();
        assertThat(HoldId.decode(decoded.encode(), "the_field")).isEqualTo(decoded);
    }
}
