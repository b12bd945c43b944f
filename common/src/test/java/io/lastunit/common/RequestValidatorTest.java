package io.lastunit.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.lastunit.api.inventory.v1.ConfirmRequest;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.RegionQuota;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.RestockRequest;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class RequestValidatorTest {
    static final Limits LIMITS = Limits.defaults(Set.of("eu-west", "us-east", "ap-east"));
    static final RequestValidator V = new RequestValidator(LIMITS);
    static final UUID UUID_1 = new UUID(0x0123456789ABCDEFL, 0xFEDCBA9876543210L);

    static ReserveRequest.Builder reserve() {
        return ReserveRequest.newBuilder()
                .setTenantId("acme")
                .setItemId("sku-1")
                .setQuantity(2)
                .setIdempotencyKey("key-1")
                .setBuyerId("buyer-1")
                .setRegion("eu-west");
    }

    static CreateItemRequest.Builder createItem() {
        return CreateItemRequest.newBuilder()
                .setTenantId("acme")
                .setItemId("sku-1")
                .setTotal(1_000)
                .setHomeRegion("eu-west");
    }

    static RegionQuota quota(String region, long quantity) {
        return RegionQuota.newBuilder().setRegion(region).setQuantity(quantity).build();
    }

    static RestockRequest.Builder restock() {
        return RestockRequest.newBuilder()
                .setTenantId("acme")
                .setItemId("sku-1")
                .setQuantity(10)
                .setRestockId("restock-1");
    }

    static GetStockRequest.Builder getStock() {
        return GetStockRequest.newBuilder().setTenantId("acme").setItemId("sku-1");
    }

    static String validHoldId() {
        return new HoldId("acme", "sku-1", "eu-west", 0, UUID_1).encode();
    }

    static ConfirmRequest.Builder confirm() {
        return ConfirmRequest.newBuilder().setHoldId(validHoldId()).setOrderRef("order-1");
    }

    /** Asserts INVALID_FIELD naming exactly {@code field}, with a message that starts with it. */
    static Failure assertInvalid(ThrowingCallable call, String field) {
        Failure f = catchThrowableOfType(Failure.class, call);
        assertThat(f).as("expected a Failure naming %s", field).isNotNull();
        assertThat(f.reason()).isEqualTo(Reason.INVALID_FIELD);
        assertThat(f.metadata()).isEqualTo(Map.of("field", field));
        assertThat(f.getMessage()).startsWith(field + ": ");
        assertThat(f.retryAfter()).isNull();
        return f;
    }

    /** Bad values every id-like string field is refused with, and what the message then says. */
    static Stream<Arguments> badIds(int max) {
        return Stream.of(
                Arguments.of("empty", "", "is required"),
                Arguments.of("too long", "x".repeat(max + 1), "is " + (max + 1) + " characters, at most " + max),
                Arguments.of("space inside", "a b", "must be printable ASCII without spaces"),
                Arguments.of("leading space", " ab", "must be printable ASCII without spaces"),
                Arguments.of("tab", "a\tb", "must be printable ASCII without spaces"),
                Arguments.of("newline", "ab\n", "must be printable ASCII without spaces"),
                Arguments.of("NUL", "a\u0000b", "must be printable ASCII without spaces"),
                Arguments.of("DEL", "a\u007Fb", "must be printable ASCII without spaces"),
                Arguments.of("non-ASCII", "caf\u00e9", "must be printable ASCII without spaces"));
    }

    /** Each string field of each request: its name, its length limit and how to set it. */
    static Stream<Arguments> stringFields() {
        return Stream.of(
                field("reserve", "tenant_id", 64, v -> V.reserve(reserve().setTenantId(v).build())),
                field("reserve", "item_id", 128, v -> V.reserve(reserve().setItemId(v).build())),
                field("reserve", "idempotency_key", 128, v -> V.reserve(reserve().setIdempotencyKey(v).build())),
                field("reserve", "buyer_id", 128, v -> V.reserve(reserve().setBuyerId(v).build())),
                field("reserve", "region", 32, v -> V.reserve(reserve().setRegion(v).build())),
                field("createItem", "tenant_id", 64, v -> V.createItem(createItem().setTenantId(v).build())),
                field("createItem", "item_id", 128, v -> V.createItem(createItem().setItemId(v).build())),
                field("createItem", "home_region", 32, v -> V.createItem(createItem().setHomeRegion(v).build())),
                field("restock", "tenant_id", 64, v -> V.restock(restock().setTenantId(v).build())),
                field("restock", "item_id", 128, v -> V.restock(restock().setItemId(v).build())),
                field("restock", "restock_id", 128, v -> V.restock(restock().setRestockId(v).build())),
                field("getStock", "tenant_id", 64, v -> V.getStock(getStock().setTenantId(v).build())),
                field("getStock", "item_id", 128, v -> V.getStock(getStock().setItemId(v).build())),
                field("confirm", "order_ref", 128, v -> V.confirm(confirm().setOrderRef(v).build())));
    }

    private static Arguments field(String rpc, String name, int max, Consumer<String> call) {
        return Arguments.of(rpc, name, max, call);
    }

    static Stream<Arguments> badStringFieldValues() {
        return stringFields().flatMap(f -> {
            Object[] a = f.get();
            int max = (Integer) a[2];
            return badIds(max).map(bad -> Arguments.of(a[0], a[1], bad.get()[0], bad.get()[1], bad.get()[2], a[3]));
        });
    }

    @ParameterizedTest(name = "{0} refuses {1} {2}, naming {1}")
    @MethodSource("badStringFieldValues")
    void everyStringField_refusesBadValue_namingThatField(
            String rpc, String field, String what, String value, String message, Consumer<String> call) {
        Failure f = assertInvalid(() -> call.accept(value), field);

        assertThat(f.getMessage()).isEqualTo(field + ": " + message);
    }

    /** The string fields that take any id, not only a configured region. */
    static Stream<Arguments> freeStringFields() {
        return stringFields().filter(a -> !((String) a.get()[1]).endsWith("region"));
    }

    @ParameterizedTest(name = "{0} accepts {1} of exactly its maximum length {2}")
    @MethodSource("freeStringFields")
    void everyIdStringField_acceptsItsMaximumLength(String rpc, String field, int max, Consumer<String> call) {
        assertThatCode(() -> call.accept("x".repeat(max))).doesNotThrowAnyException();
        assertThatCode(() -> call.accept("!~")).doesNotThrowAnyException();
    }

    // ---- Reserve --------------------------------------------------------------------------

    @Nested
    class Reserve {
        @Test
        void reserve_acceptsValidRequest() {
            assertThatCode(() -> V.reserve(reserve().build())).doesNotThrowAnyException();
        }

        @ParameterizedTest
        @ValueSource(ints = {1, 100})
        void reserve_acceptsQuantityAtBounds(int quantity) {
            assertThatCode(() -> V.reserve(reserve().setQuantity(quantity).build())).doesNotThrowAnyException();
        }

        @Test
        void reserve_refusesQuantityZero_namingQuantity() {
            Failure f = assertInvalid(() -> V.reserve(reserve().setQuantity(0).build()), "quantity");
            assertThat(f.getMessage()).isEqualTo("quantity: is 0, must be within [1, 100]");
        }

        @ParameterizedTest
        @ValueSource(ints = {-1, Integer.MIN_VALUE})
        void reserve_refusesNegativeQuantity_namingQuantity(int quantity) {
            assertInvalid(() -> V.reserve(reserve().setQuantity(quantity).build()), "quantity");
        }

        @ParameterizedTest
        @ValueSource(ints = {101, Integer.MAX_VALUE})
        void reserve_refusesQuantityOverMax_namingQuantity(int quantity) {
            Failure f = assertInvalid(() -> V.reserve(reserve().setQuantity(quantity).build()), "quantity");
            assertThat(f.getMessage()).isEqualTo("quantity: is " + quantity + ", must be within [1, 100]");
        }

        @ParameterizedTest
        @ValueSource(longs = {0, 1_000, 600_000, 86_400_000})
        void reserve_acceptsHoldTtlZeroOrWithinBounds(long ttl) {
            assertThatCode(() -> V.reserve(reserve().setHoldTtlMs(ttl).build())).doesNotThrowAnyException();
        }

        @ParameterizedTest
        @ValueSource(longs = {1, 999})
        void reserve_refusesHoldTtlBelowMin_namingHoldTtlMs(long ttl) {
            Failure f = assertInvalid(() -> V.reserve(reserve().setHoldTtlMs(ttl).build()), "hold_ttl_ms");
            assertThat(f.getMessage())
                    .isEqualTo("hold_ttl_ms: is " + ttl + ", must be within [1000, 86400000] (0 = the default)");
        }

        @ParameterizedTest
        @ValueSource(longs = {-1, Long.MIN_VALUE})
        void reserve_refusesNegativeHoldTtl_namingHoldTtlMs(long ttl) {
            assertInvalid(() -> V.reserve(reserve().setHoldTtlMs(ttl).build()), "hold_ttl_ms");
        }

        @ParameterizedTest
        @ValueSource(longs = {86_400_001, Long.MAX_VALUE})
        void reserve_refusesHoldTtlAboveMax_namingHoldTtlMs(long ttl) {
            assertInvalid(() -> V.reserve(reserve().setHoldTtlMs(ttl).build()), "hold_ttl_ms");
        }

        @Test
        void reserve_refusesAnEmptyRegion_namingRegion() {
            Failure f = assertInvalid(() -> V.reserve(reserve().clearRegion().build()), "region");
            assertThat(f.getMessage()).isEqualTo("region: is required");
        }

        @Test
        void reserveBeforeRegion_acceptsAnEmptyRegion_andLeavesRegionAndTtlToReserve() {
            assertThatCode(() -> V.reserveBeforeRegion(reserve().clearRegion().setHoldTtlMs(1).build()))
                    .doesNotThrowAnyException();
        }

        @Test
        void reserveBeforeRegion_refusesTheFieldsBeforeRegion_inFieldOrder() {
            assertInvalid(() -> V.reserveBeforeRegion(reserve().clearRegion().setTenantId("").setItemId("").build()),
                    "tenant_id");
            assertInvalid(() -> V.reserveBeforeRegion(reserve().clearRegion().setItemId("").build()), "item_id");
            assertInvalid(() -> V.reserveBeforeRegion(reserve().clearRegion().setQuantity(0).build()), "quantity");
            assertInvalid(() -> V.reserveBeforeRegion(reserve().clearRegion().setIdempotencyKey("").build()),
                    "idempotency_key");
            assertInvalid(() -> V.reserveBeforeRegion(reserve().clearRegion().setBuyerId("").build()), "buyer_id");
        }

        @ParameterizedTest
        @ValueSource(strings = {"eu-west", "us-east", "ap-east"})
        void reserve_acceptsEveryConfiguredRegion(String region) {
            assertThatCode(() -> V.reserve(reserve().setRegion(region).build())).doesNotThrowAnyException();
        }

        @ParameterizedTest
        @ValueSource(strings = {"ap-south", "EU-WEST", "eu-west-1"})
        void reserve_refusesUnknownRegion_namingRegion(String region) {
            Failure f = assertInvalid(() -> V.reserve(reserve().setRegion(region).build()), "region");
            assertThat(f.getMessage()).startsWith("region: unknown region '" + region + "'; configured regions are ");
        }

        @Test
        void reserve_namesFirstBadFieldInFieldNumberOrder() {
            ReserveRequest allBad = ReserveRequest.newBuilder().setQuantity(0).setHoldTtlMs(1).build();
            assertInvalid(() -> V.reserve(allBad), "tenant_id");
            assertInvalid(() -> V.reserve(allBad.toBuilder().setTenantId("t").build()), "item_id");
            assertInvalid(() -> V.reserve(allBad.toBuilder().setTenantId("t").setItemId("i").build()), "quantity");
            assertInvalid(() -> V.reserve(reserve().setIdempotencyKey("").setBuyerId("").build()), "idempotency_key");
            assertInvalid(() -> V.reserve(reserve().setBuyerId("").setRegion("").build()), "buyer_id");
            assertInvalid(() -> V.reserve(reserve().setRegion("nowhere").setHoldTtlMs(1).build()), "region");
        }
    }

    // ---- CreateItem -----------------------------------------------------------------------

    @Nested
    class CreateItem {
        @Test
        void createItem_acceptsValidRequest() {
            assertThatCode(() -> V.createItem(createItem().build())).doesNotThrowAnyException();
        }

        @Test
        void createItem_acceptsEveryOptionalFieldAtItsBounds() {
            CreateItemRequest atMax = createItem()
                    .setTotal(1_000_000_000L)
                    .setPerBuyerLimit(100_000)
                    .setHoldTtlMs(86_400_000)
                    .setExtendByMs(86_400_000)
                    .setBucketCount(64)
                    .addRegionQuotas(quota("eu-west", 1_000_000_000L))
                    .build();
            CreateItemRequest atMin = createItem()
                    .setTotal(0)
                    .setPerBuyerLimit(0)
                    .setHoldTtlMs(1_000)
                    .setExtendByMs(0)
                    .setBucketCount(0)
                    .build();

            assertThatCode(() -> V.createItem(atMax)).doesNotThrowAnyException();
            assertThatCode(() -> V.createItem(atMin)).doesNotThrowAnyException();
        }

        @ParameterizedTest
        @ValueSource(longs = {-1, Long.MIN_VALUE})
        void createItem_refusesNegativeTotal_namingTotal(long total) {
            Failure f = assertInvalid(() -> V.createItem(createItem().setTotal(total).build()), "total");
            assertThat(f.getMessage()).isEqualTo("total: is " + total + ", must be within [0, 1000000000]");
        }

        @ParameterizedTest
        @ValueSource(longs = {1_000_000_001L, Long.MAX_VALUE})
        void createItem_refusesTotalOverMax_namingTotal(long total) {
            assertInvalid(() -> V.createItem(createItem().setTotal(total).build()), "total");
        }

        @ParameterizedTest
        @ValueSource(ints = {-1, Integer.MIN_VALUE})
        void createItem_refusesNegativePerBuyerLimit_namingPerBuyerLimit(int limit) {
            assertInvalid(() -> V.createItem(createItem().setPerBuyerLimit(limit).build()), "per_buyer_limit");
        }

        @ParameterizedTest
        @ValueSource(ints = {100_001, Integer.MAX_VALUE})
        void createItem_refusesPerBuyerLimitOverMax_namingPerBuyerLimit(int limit) {
            Failure f = assertInvalid(() -> V.createItem(createItem().setPerBuyerLimit(limit).build()), "per_buyer_limit");
            assertThat(f.getMessage())
                    .isEqualTo("per_buyer_limit: is " + limit + ", must be within [0, 100000] (0 = no limit)");
        }

        @ParameterizedTest
        @ValueSource(longs = {-1, 1, 999})
        void createItem_refusesHoldTtlBelowMin_namingHoldTtlMs(long ttl) {
            assertInvalid(() -> V.createItem(createItem().setHoldTtlMs(ttl).build()), "hold_ttl_ms");
        }

        @ParameterizedTest
        @ValueSource(longs = {86_400_001, Long.MAX_VALUE})
        void createItem_refusesHoldTtlAboveMax_namingHoldTtlMs(long ttl) {
            assertInvalid(() -> V.createItem(createItem().setHoldTtlMs(ttl).build()), "hold_ttl_ms");
        }

        @ParameterizedTest
        @ValueSource(longs = {-1, Long.MIN_VALUE})
        void createItem_refusesNegativeExtendBy_namingExtendByMs(long extendBy) {
            assertInvalid(() -> V.createItem(createItem().setExtendByMs(extendBy).build()), "extend_by_ms");
        }

        @ParameterizedTest
        @ValueSource(longs = {86_400_001, Long.MAX_VALUE})
        void createItem_refusesExtendByOverMax_namingExtendByMs(long extendBy) {
            Failure f = assertInvalid(() -> V.createItem(createItem().setExtendByMs(extendBy).build()), "extend_by_ms");
            assertThat(f.getMessage())
                    .isEqualTo("extend_by_ms: is " + extendBy + ", must be within [0, 86400000] (0 = the hold TTL)");
        }

        @Test
        void createItem_refusesUnknownHomeRegion_namingHomeRegion() {
            Failure f = assertInvalid(() -> V.createItem(createItem().setHomeRegion("ap-south").build()), "home_region");
            assertThat(f.getMessage()).startsWith("home_region: unknown region 'ap-south'");
        }

        @Test
        void createItem_acceptsOtherConfiguredHomeRegion() {
            assertThatCode(() -> V.createItem(createItem().setHomeRegion("us-east").build())).doesNotThrowAnyException();
        }

        @ParameterizedTest
        @ValueSource(ints = {0, 1, 2, 8, 63, 64})
        void createItem_acceptsBucketCountWithinZeroTo64(int count) {
            assertThatCode(() -> V.createItem(createItem().setBucketCount(count).build())).doesNotThrowAnyException();
        }

        @ParameterizedTest
        @ValueSource(ints = {65, 1_000, Integer.MAX_VALUE})
        void createItem_refusesBucketCountOverMax_namingBucketCount(int count) {
            Failure f = assertInvalid(() -> V.createItem(createItem().setBucketCount(count).build()), "bucket_count");
            assertThat(f.getMessage()).isEqualTo("bucket_count: is " + count + ", must be within [0, 64] (0 = default)");
        }

        @ParameterizedTest
        @ValueSource(ints = {-1, Integer.MIN_VALUE})
        void createItem_refusesNegativeBucketCount_namingBucketCount(int count) {
            Failure f = assertInvalid(() -> V.createItem(createItem().setBucketCount(count).build()), "bucket_count");
            assertThat(f.getMessage()).isEqualTo("bucket_count: is " + count + ", must be within [0, 64] (0 = default)");
        }

        // ---- region_quotas: each region once, configured, home among them, sum = total, <= 16 entries

        @Test
        void createItem_acceptsThreeRegionQuotasSummingToTotal_homeAmongThem() {
            CreateItemRequest r = createItem()
                    .setTotal(1_000)
                    .addRegionQuotas(quota("us-east", 300))
                    .addRegionQuotas(quota("eu-west", 500))
                    .addRegionQuotas(quota("ap-east", 200))
                    .build();

            assertThatCode(() -> V.createItem(r)).doesNotThrowAnyException();
        }

        @Test
        void createItem_acceptsZeroQuotaForARegion() {
            CreateItemRequest r = createItem()
                    .setTotal(10)
                    .addRegionQuotas(quota("eu-west", 10))
                    .addRegionQuotas(quota("us-east", 0))
                    .build();

            assertThatCode(() -> V.createItem(r)).doesNotThrowAnyException();
        }

        @Test
        void createItem_acceptsAllQuotasZero_forTotalZero() {
            CreateItemRequest r = createItem()
                    .setTotal(0)
                    .addRegionQuotas(quota("eu-west", 0))
                    .addRegionQuotas(quota("us-east", 0))
                    .build();

            assertThatCode(() -> V.createItem(r)).doesNotThrowAnyException();
        }

        @Test
        void createItem_acceptsSingleQuotaForHomeRegionWithTotal() {
            CreateItemRequest r = createItem().setTotal(10).addRegionQuotas(quota("eu-west", 10)).build();

            assertThatCode(() -> V.createItem(r)).doesNotThrowAnyException();
        }

        @Test
        void createItem_acceptsHomeQuotaOfZero_whenOthersHoldTheTotal() {
            CreateItemRequest r = createItem()
                    .setTotal(10)
                    .addRegionQuotas(quota("us-east", 10))
                    .addRegionQuotas(quota("eu-west", 0))
                    .build();

            assertThatCode(() -> V.createItem(r)).doesNotThrowAnyException();
        }

        /** A validator serving {@code n} regions r00, r01, ...; home is r00. */
        static RequestValidator withRegions(int n) {
            Set<String> regions = new LinkedHashSet<>();
            for (int i = 0; i < n; i++) {
                regions.add(String.format("r%02d", i));
            }
            return new RequestValidator(Limits.defaults(regions));
        }

        /** {@code n} quotas of one unit each, in regions r00, r01, ... */
        static CreateItemRequest oneUnitIn(int regions) {
            CreateItemRequest.Builder b = createItem().setHomeRegion("r00").setTotal(regions);
            for (int i = 0; i < regions; i++) {
                b.addRegionQuotas(quota(String.format("r%02d", i), 1));
            }
            return b.build();
        }

        @Test
        void createItem_accepts16RegionQuotas() {
            assertThatCode(() -> withRegions(16).createItem(oneUnitIn(16))).doesNotThrowAnyException();
        }

        @Test
        void createItem_refuses17RegionQuotas_namingRegionQuotas() {
            RequestValidator v = withRegions(17);

            Failure f = assertInvalid(() -> v.createItem(oneUnitIn(17)), "region_quotas");
            assertThat(f.getMessage()).isEqualTo("region_quotas: has 17 entries, at most 16");
        }

        @Test
        void createItem_refusesARegionTwice_namingRegionQuotasRegion() {
            CreateItemRequest r = createItem()
                    .setTotal(10)
                    .addRegionQuotas(quota("eu-west", 5))
                    .addRegionQuotas(quota("us-east", 0))
                    .addRegionQuotas(quota("eu-west", 5))
                    .build();

            Failure f = assertInvalid(() -> V.createItem(r), "region_quotas.region");
            assertThat(f.getMessage()).isEqualTo("region_quotas.region: 'eu-west' appears twice");
        }

        @Test
        void createItem_refusesTwoIdenticalHomeRegionQuotas_namingRegionQuotasRegion() {
            RegionQuota home = quota("eu-west", 10);
            CreateItemRequest r = createItem().setTotal(20).addRegionQuotas(home).addRegionQuotas(home).build();

            Failure f = assertInvalid(() -> V.createItem(r), "region_quotas.region");
            assertThat(f.getMessage()).isEqualTo("region_quotas.region: 'eu-west' appears twice");
        }

        @ParameterizedTest
        @ValueSource(strings = {"ap-south", "EU-WEST", "eu-west-1"})
        void createItem_refusesQuotaForUnconfiguredRegion_namingRegionQuotasRegion(String region) {
            CreateItemRequest r = createItem()
                    .setTotal(10)
                    .addRegionQuotas(quota("eu-west", 5))
                    .addRegionQuotas(quota(region, 5))
                    .build();

            Failure f = assertInvalid(() -> V.createItem(r), "region_quotas.region");
            assertThat(f.getMessage()).startsWith("region_quotas.region: unknown region '" + region
                    + "'; configured regions are ");
        }

        @Test
        void createItem_refusesQuotaWithEmptyRegion_namingRegionQuotasRegion() {
            CreateItemRequest r = createItem().setTotal(10).addRegionQuotas(RegionQuota.newBuilder().setQuantity(10))
                    .build();

            Failure f = assertInvalid(() -> V.createItem(r), "region_quotas.region");
            assertThat(f.getMessage()).isEqualTo("region_quotas.region: is required");
        }

        @ParameterizedTest
        @ValueSource(longs = {-1, Long.MIN_VALUE, 1_000_000_001L, Long.MAX_VALUE})
        void createItem_refusesQuotaQuantityOutsideZeroToTotalMax_namingRegionQuotasQuantity(long quantity) {
            CreateItemRequest r = createItem()
                    .setTotal(10)
                    .addRegionQuotas(quota("eu-west", 10))
                    .addRegionQuotas(quota("us-east", quantity))
                    .build();

            Failure f = assertInvalid(() -> V.createItem(r), "region_quotas.quantity");
            assertThat(f.getMessage()).isEqualTo("region_quotas.quantity: is " + quantity
                    + " for region us-east, must be within [0, 1000000000]");
        }

        @Test
        void createItem_refusesQuotasWithoutHomeRegion_namingRegionQuotas() {
            CreateItemRequest r = createItem()
                    .setTotal(10)
                    .addRegionQuotas(quota("us-east", 6))
                    .addRegionQuotas(quota("ap-east", 4))
                    .build();

            Failure f = assertInvalid(() -> V.createItem(r), "region_quotas");
            assertThat(f.getMessage()).isEqualTo("region_quotas: has no entry for home_region eu-west");
        }

        @ParameterizedTest
        @ValueSource(longs = {0, 9, 11, 1_000_000_000L})
        void createItem_refusesQuotasNotSummingToTotal_namingRegionQuotas(long homeQuantity) {
            CreateItemRequest r = createItem()
                    .setTotal(20)
                    .addRegionQuotas(quota("eu-west", homeQuantity))
                    .addRegionQuotas(quota("us-east", 10))
                    .build();

            Failure f = assertInvalid(() -> V.createItem(r), "region_quotas");
            assertThat(f.getMessage()).isEqualTo("region_quotas: quantities sum to " + (homeQuantity + 10)
                    + ", total is 20");
        }

        @Test
        void createItem_refusesSingleHomeQuotaBelowTotal_namingRegionQuotas() {
            CreateItemRequest r = createItem().setTotal(10).addRegionQuotas(quota("eu-west", 9)).build();

            Failure f = assertInvalid(() -> V.createItem(r), "region_quotas");
            assertThat(f.getMessage()).isEqualTo("region_quotas: quantities sum to 9, total is 10");
        }

        @Test
        void createItem_checksQuotasEntryByEntry_thenHome_thenSum() {
            // The first bad entry is named, in list order, before the home and sum rules.
            CreateItemRequest.Builder b = createItem()
                    .setTotal(10)
                    .addRegionQuotas(quota("us-east", -1))
                    .addRegionQuotas(quota("mars", 5));
            assertInvalid(() -> V.createItem(b.build()), "region_quotas.quantity");
            b.setRegionQuotas(0, quota("us-east", 50));
            assertInvalid(() -> V.createItem(b.build()), "region_quotas.region");
            b.setRegionQuotas(1, quota("ap-east", 5));
            Failure noHome = assertInvalid(() -> V.createItem(b.build()), "region_quotas");
            assertThat(noHome.getMessage()).isEqualTo("region_quotas: has no entry for home_region eu-west");
            b.addRegionQuotas(quota("eu-west", 5));
            Failure sum = assertInvalid(() -> V.createItem(b.build()), "region_quotas");
            assertThat(sum.getMessage()).isEqualTo("region_quotas: quantities sum to 60, total is 10");
            b.setRegionQuotas(0, quota("us-east", 0));
            assertThatCode(() -> V.createItem(b.build())).doesNotThrowAnyException();
        }

        @Test
        void createItem_namesFirstBadFieldInFieldNumberOrder() {
            CreateItemRequest.Builder b = createItem()
                    .setTotal(-1)
                    .setPerBuyerLimit(-1)
                    .setHoldTtlMs(1)
                    .setExtendByMs(-1)
                    .setHomeRegion("nowhere")
                    .setBucketCount(65)
                    .addRegionQuotas(quota("us-east", 10));
            assertInvalid(() -> V.createItem(b.build()), "total");
            b.setTotal(10);
            assertInvalid(() -> V.createItem(b.build()), "per_buyer_limit");
            b.setPerBuyerLimit(0);
            assertInvalid(() -> V.createItem(b.build()), "hold_ttl_ms");
            b.setHoldTtlMs(0);
            assertInvalid(() -> V.createItem(b.build()), "extend_by_ms");
            b.setExtendByMs(0);
            assertInvalid(() -> V.createItem(b.build()), "home_region");
            b.setHomeRegion("eu-west");
            assertInvalid(() -> V.createItem(b.build()), "bucket_count");
            b.setBucketCount(64);
            assertInvalid(() -> V.createItem(b.build()), "region_quotas");
            b.addRegionQuotas(quota("eu-west", 0));
            assertThatCode(() -> V.createItem(b.build())).doesNotThrowAnyException();
        }
    }

    // ---- Restock --------------------------------------------------------------------------

    @Nested
    class Restock {
        @Test
        void restock_acceptsValidRequest() {
            assertThatCode(() -> V.restock(restock().build())).doesNotThrowAnyException();
        }

        @ParameterizedTest
        @ValueSource(longs = {1, 1_000_000_000L})
        void restock_acceptsQuantityAtBounds(long quantity) {
            assertThatCode(() -> V.restock(restock().setQuantity(quantity).build())).doesNotThrowAnyException();
        }

        @Test
        void restock_refusesQuantityZero_namingQuantity() {
            Failure f = assertInvalid(() -> V.restock(restock().setQuantity(0).build()), "quantity");
            assertThat(f.getMessage()).isEqualTo("quantity: is 0, must be within [1, 1000000000]");
        }

        @ParameterizedTest
        @ValueSource(longs = {-1, Long.MIN_VALUE})
        void restock_refusesNegativeQuantity_namingQuantity(long quantity) {
            assertInvalid(() -> V.restock(restock().setQuantity(quantity).build()), "quantity");
        }

        @ParameterizedTest
        @ValueSource(longs = {1_000_000_001L, Long.MAX_VALUE})
        void restock_refusesQuantityOverMax_namingQuantity(long quantity) {
            assertInvalid(() -> V.restock(restock().setQuantity(quantity).build()), "quantity");
        }
    }

    // ---- GetStock -------------------------------------------------------------------------

    @Nested
    class GetStock {
        @Test
        void getStock_acceptsValidRequest() {
            assertThatCode(() -> V.getStock(getStock().build())).doesNotThrowAnyException();
        }

        @Test
        void getStock_refusesEmptyRequest_namingTenantIdFirst() {
            assertInvalid(() -> V.getStock(GetStockRequest.getDefaultInstance()), "tenant_id");
        }
    }

    // ---- Confirm and hold ids -------------------------------------------------------------

    @Nested
    class Confirm {
        @Test
        void confirm_acceptsValidRequest_andReturnsDecodedHoldId() {
            HoldId id = V.confirm(confirm().build());

            assertThat(id).isEqualTo(new HoldId("acme", "sku-1", "eu-west", 0, UUID_1));
        }

        @Test
        void confirm_refusesEmptyHoldId_namingHoldId() {
            Failure f = assertInvalid(() -> V.confirm(confirm().setHoldId("").build()), "hold_id");
            assertThat(f.getMessage()).isEqualTo("hold_id: is required");
        }

        @Test
        void confirm_refusesHoldIdOver400Characters_namingHoldId() {
            Failure f = assertInvalid(() -> V.confirm(confirm().setHoldId("A".repeat(401)).build()), "hold_id");
            assertThat(f.getMessage()).isEqualTo("hold_id: is 401 characters, at most 400");
        }

        @ParameterizedTest
        @ValueSource(strings = {"garbage!", "a b", "AAAA", "not-a-hold-id"})
        void confirm_refusesMalformedHoldId_namingHoldId(String holdId) {
            assertInvalid(() -> V.confirm(confirm().setHoldId(holdId).build()), "hold_id");
        }

        @Test
        void confirm_refusesHoldIdWithTenantOverLimit_namingHoldId() {
            String holdId = new HoldId("t".repeat(65), "sku-1", "eu-west", 0, UUID_1).encode();

            Failure f = assertInvalid(() -> V.confirm(confirm().setHoldId(holdId).build()), "hold_id");
            assertThat(f.getMessage()).isEqualTo("hold_id: is not a lastunit hold id");
        }

        @Test
        void confirm_refusesHoldIdWithItemOverLimit_namingHoldId() {
            String holdId = new HoldId("acme", "i".repeat(129), "eu-west", 0, UUID_1).encode();

            assertInvalid(() -> V.confirm(confirm().setHoldId(holdId).build()), "hold_id");
        }

        @Test
        void confirm_refusesHoldIdWithRegionOverLimit_namingHoldId() {
            String holdId = new HoldId("acme", "sku-1", "r".repeat(33), 0, UUID_1).encode();

            assertInvalid(() -> V.confirm(confirm().setHoldId(holdId).build()), "hold_id");
        }

        @Test
        void confirm_acceptsHoldIdWithMaximalParts() {
            HoldId id = new HoldId("t".repeat(64), "i".repeat(128), "r".repeat(32), 0xFFFF, UUID_1);

            assertThat(V.confirm(confirm().setHoldId(id.encode()).build())).isEqualTo(id);
        }

        @Test
        void confirm_checksHoldIdBeforeOrderRef() {
            assertInvalid(() -> V.confirm(ConfirmRequest.getDefaultInstance()), "hold_id");
        }

        @Test
        void holdId_returnsDecodedId() {
            assertThat(V.holdId(validHoldId())).isEqualTo(new HoldId("acme", "sku-1", "eu-west", 0, UUID_1));
        }
    }

    @Test
    void limits_returnsTheLimitsGiven() {
        assertThat(V.limits()).isSameAs(LIMITS);
    }

    @Test
    void tenantAndItem_areCheckedOnTheirOwn() {
        assertThatCode(() -> V.tenant("acme")).doesNotThrowAnyException();
        assertThatCode(() -> V.item("sku-1")).doesNotThrowAnyException();
        assertInvalid(() -> V.tenant(null), "tenant_id");
        assertInvalid(() -> V.item(null), "item_id");
        assertThatThrownBy(() -> V.tenant("t".repeat(65))).hasMessage("tenant_id: is 65 characters, at most 64");
    }
}
