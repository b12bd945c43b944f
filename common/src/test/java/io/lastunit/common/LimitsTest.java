package io.lastunit.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.HashSet;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class LimitsTest {

    /** Mutable stand-in for the record's components, starting from the defaults. */
    static final class Cfg {
        int tenantIdLengthMax = 64;
        int itemIdLengthMax = 128;
        int keyLengthMax = 128;
        int regionLengthMax = 32;
        int reserveQuantityMax = 100;
        long itemTotalMax = 1_000_000_000L;
        int perBuyerLimitMax = 100_000;
        long holdTtlMinMs = 1_000;
        long holdTtlMaxMs = 86_400_000;
        long holdTtlDefaultMs = 600_000;
        int bucketCountMax = 64;
        Set<String> regions = Set.of("eu-west");

        Limits build() {
            return new Limits(tenantIdLengthMax, itemIdLengthMax, keyLengthMax, regionLengthMax, reserveQuantityMax,
                    itemTotalMax, perBuyerLimitMax, holdTtlMinMs, holdTtlMaxMs, holdTtlDefaultMs, bucketCountMax,
                    regions);
        }
    }

    static Limits with(Consumer<Cfg> change) {
        Cfg c = new Cfg();
        change.accept(c);
        return c.build();
    }

    static String problemsOf(Consumer<Cfg> change) {
        IllegalArgumentException e = catchThrowableOfType(IllegalArgumentException.class, () -> with(change));
        assertThat(e).as("expected the config to be refused").isNotNull();
        assertThat(e.getMessage()).startsWith("invalid limits: ");
        return e.getMessage();
    }

    @Test
    void defaults_areValidAndHaveDocumentedValues() {
        Limits l = Limits.defaults(Set.of("eu-west", "us-east"));

        assertThat(l.tenantIdLengthMax()).isEqualTo(64);
        assertThat(l.itemIdLengthMax()).isEqualTo(128);
        assertThat(l.keyLengthMax()).isEqualTo(128);
        assertThat(l.regionLengthMax()).isEqualTo(32);
        assertThat(l.reserveQuantityMax()).isEqualTo(100);
        assertThat(l.itemTotalMax()).isEqualTo(1_000_000_000L);
        assertThat(l.perBuyerLimitMax()).isEqualTo(100_000);
        assertThat(l.holdTtlMinMs()).isEqualTo(1_000L);
        assertThat(l.holdTtlMaxMs()).isEqualTo(86_400_000L);
        assertThat(l.holdTtlDefaultMs()).isEqualTo(600_000L);
        assertThat(l.bucketCountMax()).isEqualTo(64);
        assertThat(l.regions()).containsExactlyInAnyOrder("eu-west", "us-east");
    }

    @Test
    void defaults_equalTheTestBaseline() {
        assertThat(new Cfg().build()).isEqualTo(Limits.defaults(Set.of("eu-west")));
    }

    @Test
    void regions_areCopiedAndUnmodifiable() {
        Set<String> regions = new HashSet<>(Set.of("eu-west"));
        Limits l = Limits.defaults(regions);

        regions.add("us-east");

        assertThat(l.regions()).containsExactly("eu-west");
        assertThatThrownBy(() -> l.regions().add("x")).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void holdTtlMinAboveMax_isRefused_namingHoldTtlMinMs() {
        String message = problemsOf(c -> {
            c.holdTtlMinMs = 5_000;
            c.holdTtlMaxMs = 4_000;
            c.holdTtlDefaultMs = 4_000;
        });

        assertThat(message).contains("holdTtlMinMs=5000 is outside [1, 4000]");
    }

    @ParameterizedTest
    @ValueSource(longs = {999, 86_400_001, 0, -1})
    void holdTtlDefaultOutsideMinMax_isRefused_namingHoldTtlDefaultMs(long def) {
        String message = problemsOf(c -> c.holdTtlDefaultMs = def);

        assertThat(message).isEqualTo("invalid limits: holdTtlDefaultMs=" + def + " is outside [1000, 86400000]");
    }

    @ParameterizedTest
    @ValueSource(longs = {1_000, 86_400_000})
    void holdTtlDefaultAtMinOrMax_isAccepted(long def) {
        assertThat(with(c -> c.holdTtlDefaultMs = def).holdTtlDefaultMs()).isEqualTo(def);
    }

    @Test
    void emptyRegions_isRefused_namingRegions() {
        String message = problemsOf(c -> c.regions = Set.of());

        assertThat(message).isEqualTo("invalid limits: regions: at least one region is required");
    }

    @ParameterizedTest
    @ValueSource(strings = {"eu west", "", "eu\twest", "r\u00e9gion", "\u007F", "rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr"})
    void badRegionName_isRefused_namingRegions(String bad) {
        String message = problemsOf(c -> c.regions = Set.of("eu-west", bad));

        assertThat(message).isEqualTo(
                "invalid limits: regions: '" + bad + "' is not 1..32 printable ASCII characters");
    }

    @Test
    void regionLongerThanRegionLengthMax_isRefused() {
        String message = problemsOf(c -> {
            c.regionLengthMax = 4;
            c.regions = Set.of("eu-west");
        });

        assertThat(message).isEqualTo("invalid limits: regions: 'eu-west' is not 1..4 printable ASCII characters");
    }

    @Test
    void zeroReserveQuantityMax_isRefused_namingReserveQuantityMax() {
        String message = problemsOf(c -> c.reserveQuantityMax = 0);

        assertThat(message).isEqualTo("invalid limits: reserveQuantityMax=0 is outside [1, 1000000]");
    }

    static Stream<Arguments> badSettings() {
        return Stream.of(
                bad("tenantIdLengthMax", c -> c.tenantIdLengthMax = 0, "tenantIdLengthMax=0 is outside [1, 255]"),
                bad("tenantIdLengthMax", c -> c.tenantIdLengthMax = 256, "tenantIdLengthMax=256 is outside [1, 255]"),
                bad("itemIdLengthMax", c -> c.itemIdLengthMax = 0, "itemIdLengthMax=0 is outside [1, 255]"),
                bad("itemIdLengthMax", c -> c.itemIdLengthMax = 256, "itemIdLengthMax=256 is outside [1, 255]"),
                bad("keyLengthMax", c -> c.keyLengthMax = 0, "keyLengthMax=0 is outside [1, 1024]"),
                bad("keyLengthMax", c -> c.keyLengthMax = 1025, "keyLengthMax=1025 is outside [1, 1024]"),
                bad("regionLengthMax", c -> c.regionLengthMax = 256, "regionLengthMax=256 is outside [1, 255]"),
                bad("reserveQuantityMax", c -> c.reserveQuantityMax = -1, "reserveQuantityMax=-1 is outside [1, 1000000]"),
                bad("reserveQuantityMax", c -> c.reserveQuantityMax = 1_000_001,
                        "reserveQuantityMax=1000001 is outside [1, 1000000]"),
                bad("itemTotalMax", c -> c.itemTotalMax = 0,
                        "itemTotalMax=0 is outside [1, " + Long.MAX_VALUE / 4 + "]"),
                bad("itemTotalMax", c -> c.itemTotalMax = Long.MAX_VALUE / 4 + 1,
                        "itemTotalMax=" + (Long.MAX_VALUE / 4 + 1) + " is outside [1, " + Long.MAX_VALUE / 4 + "]"),
                bad("perBuyerLimitMax", c -> c.perBuyerLimitMax = 0,
                        "perBuyerLimitMax=0 is outside [1, " + Integer.MAX_VALUE + "]"),
                bad("holdTtlMinMs", c -> c.holdTtlMinMs = 0, "holdTtlMinMs=0 is outside [1, 86400000]"),
                bad("holdTtlMaxMs", c -> {
                    c.holdTtlMaxMs = 31L * 86_400_000L + 1;
                }, "holdTtlMaxMs=2678400001 is outside [1, 2678400000]"),
                bad("bucketCountMax", c -> c.bucketCountMax = 0, "bucketCountMax=0 is outside [1, 1024]"),
                bad("bucketCountMax", c -> c.bucketCountMax = 1025, "bucketCountMax=1025 is outside [1, 1024]"));
    }

    private static Arguments bad(String setting, Consumer<Cfg> change, String problem) {
        return Arguments.of(setting, change, problem);
    }

    @ParameterizedTest(name = "{2}")
    @MethodSource("badSettings")
    void badSetting_isRefused_withMessageNamingIt(String setting, Consumer<Cfg> change, String problem) {
        String message = problemsOf(change);

        assertThat(message).startsWith("invalid limits: " + problem);
        assertThat(message).contains(setting + "=");
    }

    /** Id lengths at the most the hold id bound allows with the other two at their defaults (sum 278). */
    @ParameterizedTest
    @CsvSource({
        "tenantIdLengthMax, 118", "itemIdLengthMax, 182", "keyLengthMax, 1024", "regionLengthMax, 86",
        "reserveQuantityMax, 1000000", "bucketCountMax, 1024", "tenantIdLengthMax, 1", "reserveQuantityMax, 1"})
    void settingAtItsBound_isAccepted(String setting, int value) {
        Consumer<Cfg> change = switch (setting) {
            case "tenantIdLengthMax" -> c -> c.tenantIdLengthMax = value;
            case "itemIdLengthMax" -> c -> c.itemIdLengthMax = value;
            case "keyLengthMax" -> c -> c.keyLengthMax = value;
            case "regionLengthMax" -> c -> c.regionLengthMax = value;
            case "reserveQuantityMax" -> c -> c.reserveQuantityMax = value;
            case "bucketCountMax" -> c -> c.bucketCountMax = value;
            default -> throw new IllegalArgumentException(setting);
        };

        assertThatCode(() -> with(change)).doesNotThrowAnyException();
    }

    @Test
    void severalProblems_areAllNamedInOneMessage() {
        String message = problemsOf(c -> {
            c.reserveQuantityMax = 0;
            c.bucketCountMax = 0;
            c.holdTtlDefaultMs = 1;
            c.regions = Set.of();
        });

        assertThat(message).isEqualTo("invalid limits: "
                + "reserveQuantityMax=0 is outside [1, 1000000]; "
                + "holdTtlDefaultMs=1 is outside [1000, 86400000]; "
                + "bucketCountMax=0 is outside [1, 1024]; "
                + "regions: at least one region is required");
    }

    @Test
    void severalBadRegions_areAllNamed() {
        String message = problemsOf(c -> c.regions = Set.of("a b", "c d"));

        assertThat(message)
                .contains("regions: 'a b' is not 1..32 printable ASCII characters")
                .contains("regions: 'c d' is not 1..32 printable ASCII characters");
    }

    @Test
    void nullRegions_isRefused() {
        assertThatThrownBy(() -> with(c -> c.regions = null)).isInstanceOf(NullPointerException.class);
    }

    // ---- isId -----------------------------------------------------------------------------

    @ParameterizedTest
    @ValueSource(strings = {"a", "!", "~", "abc-DEF_123./:@", "xxxx"})
    void isId_acceptsPrintableAsciiUpToMax(String s) {
        assertThat(Limits.isId(s, 4 + 11)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "a b", "a\tb", "\u0000", "\u007F", "\u0080", "caf\u00e9", "\ud83d\ude00"})
    void isId_refusesEmptySpacesControlAndNonAscii(String s) {
        assertThat(Limits.isId(s, 100)).isFalse();
    }

    @Test
    void isId_refusesNullAndOverMax() {
        assertThat(Limits.isId(null, 10)).isFalse();
        assertThat(Limits.isId("abcde", 4)).isFalse();
        assertThat(Limits.isId("abcd", 4)).isTrue();
    }

    // ---- consistency with hold ids --------------------------------------------------------

    /**
     * Every hold id minted for ids within the limits must come back through
     * {@link RequestValidator#holdId}: either Limits refuses a config whose longest hold id
     * would not fit in {@link HoldId#ENCODED_LENGTH_MAX} characters, or the id decodes.
     */
    static void assertLongestHoldIdRoundTrips(int tenantMax, int itemMax, int regionMax) {
        Limits limits;
        try {
            limits = with(c -> {
                c.tenantIdLengthMax = tenantMax;
                c.itemIdLengthMax = itemMax;
                c.regionLengthMax = regionMax;
            });
        } catch (IllegalArgumentException refused) {
            return; // a config whose hold ids cannot fit is refused: fine
        }
        HoldId longest = new HoldId("t".repeat(tenantMax), "i".repeat(itemMax), "r".repeat(regionMax), 0,
                new UUID(1L, 2L));

        assertThat(new RequestValidator(limits).holdId(longest.encode())).isEqualTo(longest);
    }

    @Test
    void defaultLimits_longestHoldIdRoundTripsThroughValidator() {
        assertLongestHoldIdRoundTrips(64, 128, 32);
    }

    @ParameterizedTest(name = "tenant {0}, item {1}, region {2}")
    @CsvSource({"64, 182, 32", "100, 100, 78"})
    void limitsSummingTo278_longestHoldIdRoundTripsThroughValidator(int t, int i, int r) {
        assertLongestHoldIdRoundTrips(t, i, r);
    }

    /** Id lengths whose longest hold id would pass HoldId.ENCODED_LENGTH_MAX are refused at start. */
    @ParameterizedTest(name = "tenant {0}, item {1}, region {2}")
    @CsvSource({"64, 255, 32", "255, 255, 255", "64, 183, 32"})
    void limitsWhoseHoldIdsWouldPass400Characters_areRefused(int t, int i, int r) {
        Limits d = Limits.defaults(java.util.Set.of("eu"));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new Limits(t, i, d.keyLengthMax(), r,
                        d.reserveQuantityMax(), d.itemTotalMax(), d.perBuyerLimitMax(), d.holdTtlMinMs(),
                        d.holdTtlMaxMs(), d.holdTtlDefaultMs(), d.bucketCountMax(), d.regions()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("makes hold ids of");
    }
}
