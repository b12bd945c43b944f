package io.lastunit.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.rpc.ErrorInfo;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.inventory.v1.ConfirmRequest;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.CreateItemResponse;
import io.lastunit.api.inventory.v1.ExtendRequest;
import io.lastunit.api.inventory.v1.GetHoldRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.HoldState;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc.InventoryServiceBlockingStub;
import io.lastunit.api.inventory.v1.RegionQuota;
import io.lastunit.api.inventory.v1.ReleaseRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.RestockRequest;
import io.lastunit.api.inventory.v1.RestockResponse;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.api.shard.v1.CheckInvariantsRequest;
import io.lastunit.api.shard.v1.InvariantReport;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.HoldId;
import io.lastunit.common.Reason;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * DESIGN §12 on a real shard node over real gRPC: every bad input a shard can see is refused with
 * the exact status code, ErrorInfo reason and (for INVALID_ARGUMENT) the field; every refusal of a
 * hold transition names the hold's state; idempotent retries answer what the first call answered.
 *
 * <p>Most bad requests aim at one "ledger" item with one HELD hold on it, so a refusal that let
 * anything through would change its counters. Every test records the counters its successful calls
 * imply, and the last test ({@link #badInput_losesNothing_countersMatchSuccessfulCallsAndInvariantsHold})
 * reads them all back and runs the shard's invariant check.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ValidationIT {

    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final String T = "acme";
    private static final String LEDGER = "ledger";
    private static final long LEDGER_TOTAL = 50;
    private static final int LEDGER_HOLD_QTY = 2;
    private static final long TTL_MIN_MS = 200;
    private static final AtomicInteger SEQ = new AtomicInteger();
    /** tenant/item → {total, available, held, sold} implied by the successful calls of the tests. */
    private static final Map<String, long[]> EXPECTED = new ConcurrentHashMap<>();

    private static ShardNodeHarness harness;
    private static String ledgerHold;

    @BeforeAll
    static void startNodeAndLedger() throws Exception {
        harness = new ShardNodeHarness(PG, Map.of("lastunit.shard.hold-ttl-min-ms", TTL_MIN_MS)).start();
        harness.createItem(T, LEDGER, LEDGER_TOTAL);
        ReserveResponse r = api().reserve(reserve().setQuantity(LEDGER_HOLD_QTY).build());
        assertThat(r.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        ledgerHold = r.getHold().getHoldId();
        expectStock(T, LEDGER, LEDGER_TOTAL, LEDGER_TOTAL - LEDGER_HOLD_QTY, LEDGER_HOLD_QTY, 0);
    }

    @AfterAll
    static void stopNode() throws Exception {
        if (harness != null) {
            harness.close();
        }
    }

    // ------------------------------------------------------------------ ids of every request

    enum ItemCall {
        RESERVE, CREATE_ITEM, RESTOCK, GET_STOCK;

        Object call(String tenant, String item) {
            return switch (this) {
                case RESERVE -> api().reserve(reserve().setTenantId(tenant).setItemId(item).build());
                case CREATE_ITEM -> api().createItem(createItem(item).setTenantId(tenant).build());
                case RESTOCK -> api().restock(restock(item).setTenantId(tenant).build());
                case GET_STOCK -> api().getStock(stock(tenant, item));
            };
        }
    }

    /** Values no id field accepts: empty, one character too long, or not printable ASCII. */
    static Stream<String> badIds(int max) {
        return Stream.of("", "x".repeat(max + 1), "has space", "tab\there", "new\nline", "ctl\u0001", "caf\u00e9",
                "del\u007f");
    }

    static Stream<Arguments> badTenantIds() {
        return Stream.of(ItemCall.values()).flatMap(c -> badIds(64).map(v -> Arguments.of(c, printable(v), v)));
    }

    static Stream<Arguments> badItemIds() {
        return Stream.of(ItemCall.values()).flatMap(c -> badIds(128).map(v -> Arguments.of(c, printable(v), v)));
    }

    @ParameterizedTest(name = "{0} tenant_id={1}")
    @MethodSource("badTenantIds")
    void everyItemCall_refusesBadTenantId_namingTenantId(ItemCall call, String shown, String tenant) {
        assertInvalid(() -> call.call(tenant, LEDGER), "tenant_id");
    }

    @ParameterizedTest(name = "{0} item_id={1}")
    @MethodSource("badItemIds")
    void everyItemCall_refusesBadItemId_namingItemId(ItemCall call, String shown, String item) {
        assertInvalid(() -> call.call(T, item), "item_id");
    }

    @Test
    void everyItemCall_acceptsIdsAtTheirLongestLength() {
        String tenant = "t".repeat(64);
        String item = "i".repeat(128);
        CreateItemResponse created = api().createItem(createItem(item).setTenantId(tenant).setTotal(3).build());
        assertThat(created.getCreated()).isTrue();
        ReserveResponse r = api().reserve(reserve().setTenantId(tenant).setItemId(item)
                .setIdempotencyKey("k".repeat(128)).setBuyerId("b".repeat(128)).build());
        assertThat(r.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(api().getHold(GetHoldRequest.newBuilder().setHoldId(r.getHold().getHoldId()).build())
                .getHold().getState()).isEqualTo(HoldState.HELD);
        Hold sold = api().confirm(ConfirmRequest.newBuilder().setHoldId(r.getHold().getHoldId())
                .setOrderRef("o".repeat(128)).build()).getHold();
        assertThat(sold.getState()).isEqualTo(HoldState.SOLD);
        expectStock(tenant, item, 3, 2, 0, 1);
    }

    static Stream<Arguments> badReserveKeys() {
        return Stream.of("idempotency_key", "buyer_id")
                .flatMap(f -> badIds(128).map(v -> Arguments.of(f, printable(v), v)));
    }

    @ParameterizedTest(name = "{0}={1}")
    @MethodSource("badReserveKeys")
    void reserve_refusesBadKeyOrBuyer_namingIt(String field, String shown, String value) {
        ReserveRequest.Builder r = reserve();
        if (field.equals("idempotency_key")) {
            r.setIdempotencyKey(value);
        } else {
            r.setBuyerId(value);
        }
        assertInvalid(() -> api().reserve(r.build()), field);
    }

    @ParameterizedTest(name = "quantity={0}")
    @ValueSource(ints = {0, -1, 101, Integer.MIN_VALUE, Integer.MAX_VALUE})
    void reserve_refusesQuantityOutside1To100_namingQuantity(int quantity) {
        assertInvalid(() -> api().reserve(reserve().setQuantity(quantity).build()), "quantity");
    }

    @ParameterizedTest(name = "region={0}")
    @ValueSource(strings = {"mars", "", "LOCAL", "eu ", "us-east-1"})
    void reserve_refusesUnconfiguredRegion_namingRegion(String region) {
        assertInvalid(() -> api().reserve(reserve().setRegion(region).build()), "region");
    }

    @ParameterizedTest(name = "region={0}")
    @ValueSource(strings = {"mars", "LOCAL", "eu ", "region-name-of-thirty-three-chars"})
    void restockAndGetStock_refuseUnconfiguredRegion_namingRegion(String region) {
        assertInvalid(() -> api().restock(restock(LEDGER).setRegion(region).build()), "region");
        assertInvalid(() -> api().getStock(stock(T, LEDGER).toBuilder().setRegion(region).build()), "region");
    }

    @ParameterizedTest(name = "hold_ttl_ms={0}")
    @ValueSource(longs = {TTL_MIN_MS - 1, 1, -1, 86_400_001L, Long.MAX_VALUE, Long.MIN_VALUE})
    void reserve_refusesHoldTtlOutsideMinMax_namingHoldTtlMs(long ttl) {
        assertInvalid(() -> api().reserve(reserve().setHoldTtlMs(ttl).build()), "hold_ttl_ms");
    }

    @Test
    void reserve_reportsTheFirstBadFieldInFieldNumberOrder() {
        assertInvalid(() -> api().reserve(ReserveRequest.newBuilder().setTenantId(T).build()), "item_id");
        assertInvalid(() -> api().reserve(reserve().setQuantity(0).setBuyerId("").setRegion("mars").build()),
                "quantity");
        assertInvalid(() -> api().reserve(reserve().setBuyerId("").setRegion("mars").build()), "buyer_id");
    }

    // ------------------------------------------------------------------ CreateItem

    static Stream<Arguments> badCreateItems() {
        return Stream.of(
                bad("total=-1", "total", b -> b.setTotal(-1)),
                bad("total=max+1", "total", b -> b.setTotal(1_000_000_001L)),
                bad("home_region=mars", "home_region", b -> b.setHomeRegion("mars")),
                bad("home_region empty", "home_region", b -> b.setHomeRegion("")),
                bad("bucket_count=65", "bucket_count", b -> b.setBucketCount(65)),
                bad("bucket_count=-1", "bucket_count", b -> b.setBucketCount(-1)),
                bad("home region quoted twice", "region_quotas.region", b -> b.setTotal(10)
                        .addRegionQuotas(quota("local", 5)).addRegionQuotas(quota("local", 5))),
                bad("negative quota", "region_quotas.quantity", b -> b.setTotal(10)
                        .addRegionQuotas(quota("local", -1)).addRegionQuotas(quota("local", 11))),
                bad("17 region_quotas", "region_quotas", b -> {
                    b.setTotal(17);
                    for (int i = 0; i < 17; i++) {
                        b.addRegionQuotas(quota("local", 1));
                    }
                }),
                bad("two region_quotas summing over total", "region_quotas", b -> b.setTotal(10)
                        .addRegionQuotas(quota("local", 5)).addRegionQuotas(quota("eu", 6))),
                bad("no quota for home_region", "region_quotas", b -> b.setTotal(10)
                        .addRegionQuotas(quota("eu", 10))),
                bad("home quota below total", "region_quotas", b -> b.setTotal(10)
                        .addRegionQuotas(quota("local", 9))),
                bad("home quota above total", "region_quotas", b -> b.setTotal(10)
                        .addRegionQuotas(quota("local", 11))),
                bad("quota in unknown region", "region_quotas.region", b -> b.setTotal(10)
                        .addRegionQuotas(quota("local", 5)).addRegionQuotas(quota("mars", 5))),
                bad("per_buyer_limit=-1", "per_buyer_limit", b -> b.setPerBuyerLimit(-1)),
                bad("per_buyer_limit=max+1", "per_buyer_limit", b -> b.setPerBuyerLimit(100_001)),
                bad("hold_ttl_ms below min", "hold_ttl_ms", b -> b.setHoldTtlMs(TTL_MIN_MS - 1)),
                bad("hold_ttl_ms above max", "hold_ttl_ms", b -> b.setHoldTtlMs(86_400_001L)),
                bad("hold_ttl_ms negative", "hold_ttl_ms", b -> b.setHoldTtlMs(-1)),
                bad("extend_by_ms negative", "extend_by_ms", b -> b.setExtendByMs(-1)),
                bad("extend_by_ms above max", "extend_by_ms", b -> b.setExtendByMs(86_400_001L)));
    }

    private static Arguments bad(String name, String field, Consumer<CreateItemRequest.Builder> change) {
        return Arguments.of(name, field, change);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badCreateItems")
    void createItem_refusesBadParameter_namingItAndCreatingNothing(String name, String field,
                                                                    Consumer<CreateItemRequest.Builder> change) {
        String item = fresh("bad-item");
        CreateItemRequest.Builder b = createItem(item);
        change.accept(b);
        assertInvalid(() -> api().createItem(b.build()), field);
        assertRefused(() -> api().getStock(stock(T, item)), Status.Code.NOT_FOUND, Reason.ITEM_NOT_FOUND, Map.of());
    }

    @Test
    void createItem_acceptsOneBucketAndOneHomeQuotaEqualToTotal() {
        String item = fresh("one-quota");
        CreateItemResponse r = api().createItem(createItem(item).setTotal(7).setBucketCount(1)
                .addRegionQuotas(quota("local", 7)).build());
        assertThat(r.getCreated()).isTrue();
        assertThat(r.getStock().getBucketCount()).isEqualTo(1);
        expectStock(T, item, 7, 7, 0, 0);
    }

    @Test
    void createItem_sameParametersAgain_answersOkNotCreated_evenAfterARestock() {
        String item = fresh("twice");
        CreateItemRequest req = createItem(item).setTotal(10).setPerBuyerLimit(3).setHoldTtlMs(60_000)
                .setExtendByMs(5_000).build();
        assertThat(api().createItem(req).getCreated()).isTrue();
        CreateItemResponse again = api().createItem(req);
        assertThat(again.getCreated()).isFalse();
        assertThat(again.getStock().getTotal()).isEqualTo(10);
        assertThat(api().restock(restock(item).setQuantity(4).build()).getApplied()).isTrue();
        CreateItemResponse afterRestock = api().createItem(req);
        assertThat(afterRestock.getCreated()).isFalse();
        assertThat(afterRestock.getStock().getTotal()).isEqualTo(14);
        expectStock(T, item, 14, 14, 0, 0);
    }

    static Stream<Arguments> otherItemParameters() {
        return Stream.of(
                itemChange("other total", b -> b.setTotal(11)),
                itemChange("other per_buyer_limit", b -> b.setPerBuyerLimit(2)),
                itemChange("other hold_ttl_ms", b -> b.setHoldTtlMs(30_000)),
                itemChange("other extend_by_ms", b -> b.setExtendByMs(1_000)),
                itemChange("other home_region", b -> b.setHomeRegion("eu")));
    }

    private static Arguments itemChange(String name, Function<CreateItemRequest.Builder, CreateItemRequest.Builder> f) {
        return Arguments.of(name, f);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("otherItemParameters")
    void createItem_sameIdOtherParameters_refusedItemExists_andChangesNothing(
            String name, Function<CreateItemRequest.Builder, CreateItemRequest.Builder> change) {
        String item = fresh("exists");
        CreateItemRequest first = createItem(item).setTotal(10).setPerBuyerLimit(3).setHoldTtlMs(60_000)
                .setExtendByMs(5_000).build();
        assertThat(api().createItem(first).getCreated()).isTrue();
        assertRefused(() -> api().createItem(change.apply(first.toBuilder()).build()),
                Status.Code.ALREADY_EXISTS, Reason.ITEM_EXISTS, Map.of());
        Stock s = expectStock(T, item, 10, 10, 0, 0);
        assertThat(s.getPerBuyerLimit()).isEqualTo(3);
        assertThat(s.getHoldTtlMs()).isEqualTo(60_000);
        assertThat(s.getExtendByMs()).isEqualTo(5_000);
        assertThat(s.getHomeRegion()).isEqualTo("local");
    }

    // ------------------------------------------------------------------ Restock

    @ParameterizedTest(name = "quantity={0}")
    @ValueSource(longs = {0, -1, 1_000_000_001L, Long.MIN_VALUE})
    void restock_refusesQuantityOutside1ToMax_namingQuantity(long quantity) {
        assertInvalid(() -> api().restock(restock(LEDGER).setQuantity(quantity).build()), "quantity");
    }

    static Stream<Arguments> badRestockIds() {
        return badIds(128).map(v -> Arguments.of(printable(v), v));
    }

    @ParameterizedTest(name = "restock_id={0}")
    @MethodSource("badRestockIds")
    void restock_refusesMissingOrBadRestockId_namingRestockId(String shown, String restockId) {
        assertInvalid(() -> api().restock(restock(LEDGER).setRestockId(restockId).build()), "restock_id");
    }

    @Test
    void restock_retriedWithSameRestockId_answersNotApplied_andAddsOnce() {
        String item = fresh("restock");
        api().createItem(createItem(item).setTotal(5).build());
        RestockRequest req = restock(item).setQuantity(3).build();
        RestockResponse first = api().restock(req);
        assertThat(first.getApplied()).isTrue();
        assertThat(first.getStock().getTotal()).isEqualTo(8);
        RestockResponse again = api().restock(req);
        assertThat(again.getApplied()).isFalse();
        assertThat(again.getStock().getTotal()).isEqualTo(8);
        assertThat(again.getStock().getAvailable()).isEqualTo(8);
        expectStock(T, item, 8, 8, 0, 0);
    }

    @Test
    void restock_sameRestockIdWithOtherQuantity_refusedKeyReused_andAddsNothing_onAnotherItemIsAnotherRestock() {
        String item = fresh("restock-reuse");
        String other = fresh("restock-other");
        api().createItem(createItem(item).setTotal(5).build());
        api().createItem(createItem(other).setTotal(5).build());
        RestockRequest req = restock(item).setQuantity(3).build();
        assertThat(api().restock(req).getApplied()).isTrue();
        assertRefused(() -> api().restock(req.toBuilder().setQuantity(4).build()),
                Status.Code.ALREADY_EXISTS, Reason.IDEMPOTENCY_KEY_REUSED, Map.of());
        assertThat(api().restock(req).getApplied()).as("a retry adds nothing").isFalse();
        assertThat(api().restock(req.toBuilder().setItemId(other).build()).getApplied())
                .as("the same restock id on another item is another restock").isTrue();
        expectStock(T, item, 8, 8, 0, 0);
        expectStock(T, other, 8, 8, 0, 0);
    }

    @Test
    void restock_pastItemTotalMax_refusedNamingQuantity_andRecordsNoRestockId() {
        String item = fresh("restock-max");
        api().createItem(createItem(item).setTotal(10).build());
        RestockRequest tooMuch = restock(item).setQuantity(1_000_000_000L - 9).build();
        assertInvalid(() -> api().restock(tooMuch), "quantity");
        expectStock(T, item, 10, 10, 0, 0);
        // The refused call recorded nothing, so its restock_id is still free.
        RestockResponse ok = api().restock(tooMuch.toBuilder().setQuantity(1_000_000_000L - 10).build());
        assertThat(ok.getApplied()).isTrue();
        expectStock(T, item, 1_000_000_000L, 1_000_000_000L, 0, 0);
    }

    // ------------------------------------------------------------------ unknown items and holds

    enum HoldCall {
        CONFIRM, RELEASE, EXTEND, GET_HOLD;

        Hold call(String holdId) {
            return switch (this) {
                case CONFIRM -> api().confirm(ConfirmRequest.newBuilder().setHoldId(holdId).setOrderRef("order-1")
                        .build()).getHold();
                case RELEASE -> api().release(ReleaseRequest.newBuilder().setHoldId(holdId).build()).getHold();
                case EXTEND -> api().extend(ExtendRequest.newBuilder().setHoldId(holdId).build()).getHold();
                case GET_HOLD -> api().getHold(GetHoldRequest.newBuilder().setHoldId(holdId).build()).getHold();
            };
        }
    }

    @ParameterizedTest
    @EnumSource(value = ItemCall.class, names = {"RESERVE", "RESTOCK", "GET_STOCK"})
    void unknownItem_isNotFoundItemNotFound(ItemCall call) {
        assertRefused(() -> call.call(T, "no-such-item"), Status.Code.NOT_FOUND, Reason.ITEM_NOT_FOUND, Map.of());
        assertRefused(() -> call.call("no-such-tenant", LEDGER), Status.Code.NOT_FOUND, Reason.ITEM_NOT_FOUND,
                Map.of());
    }

    /** Hold ids no call accepts, each with a label. */
    static List<Arguments> malformedHoldIds() {
        String good = HoldId.create(T, LEDGER, "local", 0, System.currentTimeMillis()).encode();
        UUID uuid = HoldId.decode(good, "x").uuid();
        List<Arguments> ids = new ArrayList<>();
        ids.add(Arguments.of("empty", ""));
        ids.add(Arguments.of("401 characters", "A".repeat(401)));
        ids.add(Arguments.of("not base64", "not a hold id!"));
        ids.add(Arguments.of("standard base64 alphabet", good.substring(0, good.length() - 2) + "+/"));
        ids.add(Arguments.of("unknown version", "AAAA"));
        ids.add(Arguments.of("truncated", good.substring(0, good.length() - 4)));
        ids.add(Arguments.of("trailing bytes", good + "AAAA"));
        ids.add(Arguments.of("empty tenant", new HoldId("", LEDGER, "local", 0, uuid).encode()));
        ids.add(Arguments.of("non-printable tenant",
                new HoldId("t\u0001", LEDGER, "local", 0, uuid).encode()));
        ids.add(Arguments.of("tenant of 65 characters",
                new HoldId("t".repeat(65), LEDGER, "local", 0, uuid).encode()));
        ids.add(Arguments.of("region of 33 characters",
                new HoldId(T, LEDGER, "r".repeat(33), 0, uuid).encode()));
        List<Arguments> all = new ArrayList<>();
        for (HoldCall c : HoldCall.values()) {
            for (Arguments a : ids) {
                all.add(Arguments.of(c, a.get()[0], a.get()[1]));
            }
        }
        return all;
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("malformedHoldIds")
    void everyHoldCall_refusesMalformedHoldId_namingHoldId(HoldCall call, String label, String holdId) {
        assertInvalid(() -> call.call(holdId), "hold_id");
    }

    /** Well-formed ids that name no hold: a fresh uuid, or the ledger hold's uuid under another item or tenant. */
    static List<Arguments> holdIdsThatDoNotExist() {
        List<Arguments> all = new ArrayList<>();
        for (HoldCall c : HoldCall.values()) {
            all.add(Arguments.of(c, "fresh uuid on an existing item"));
            all.add(Arguments.of(c, "fresh uuid on an unknown item"));
            all.add(Arguments.of(c, "existing hold's uuid under another tenant"));
            all.add(Arguments.of(c, "existing hold's uuid under another existing item"));
            all.add(Arguments.of(c, "existing hold's uuid in another bucket"));
        }
        return all;
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("holdIdsThatDoNotExist")
    void everyHoldCall_wellFormedIdOfNoHold_isNotFoundHoldNotFound(HoldCall call, String label) {
        HoldId real = HoldId.decode(ledgerHold, "x");
        long now = System.currentTimeMillis();
        String otherItem = "other-item";
        api().createItem(createItem(otherItem).setTotal(1).build()); // idempotent across cases
        expectStock(T, otherItem, 1, 1, 0, 0);
        HoldId id = switch (label) {
            case "fresh uuid on an existing item" -> HoldId.create(T, LEDGER, "local", 0, now);
            case "fresh uuid on an unknown item" -> HoldId.create(T, "no-such-item", "local", 0, now);
            case "existing hold's uuid under another tenant" -> new HoldId("other", LEDGER, "local", 0, real.uuid());
            case "existing hold's uuid under another existing item" ->
                    new HoldId(T, otherItem, "local", 0, real.uuid());
            case "existing hold's uuid in another bucket" -> new HoldId(T, LEDGER, "local", 1, real.uuid());
            default -> throw new IllegalArgumentException(label);
        };
        assertRefused(() -> call.call(id.encode()), Status.Code.NOT_FOUND, Reason.HOLD_NOT_FOUND, Map.of());
        assertThat(HoldCall.GET_HOLD.call(ledgerHold).getState()).isEqualTo(HoldState.HELD);
    }

    @ParameterizedTest
    @EnumSource(HoldCall.class)
    void everyHoldCall_existingHoldUuidUnderAnotherRegion_isNotFoundLikeGetHold(HoldCall call) {
        String item = fresh("region-swap");
        api().createItem(createItem(item).setTotal(3).build());
        Hold h = reserveOk(reserve().setItemId(item).setQuantity(1));
        HoldId real = HoldId.decode(h.getHoldId(), "x");
        String swapped = new HoldId(real.tenantId(), real.itemId(), "eu", real.bucketNo(), real.uuid()).encode();
        // The id names no hold: GetHold says so, and no call may act on the hold through it.
        assertRefused(() -> call.call(swapped), Status.Code.NOT_FOUND, Reason.HOLD_NOT_FOUND, Map.of());
        assertThat(HoldCall.GET_HOLD.call(h.getHoldId()).getState()).isEqualTo(HoldState.HELD);
        expectStock(T, item, 3, 2, 1, 0);
    }

    // ------------------------------------------------------------------ hold states

    @ParameterizedTest(name = "order_ref={0}")
    @MethodSource("badOrderRefs")
    void confirm_refusesMissingOrBadOrderRef_namingOrderRef_andHoldStaysHeld(String shown, String orderRef) {
        assertInvalid(() -> api().confirm(ConfirmRequest.newBuilder().setHoldId(ledgerHold).setOrderRef(orderRef)
                .build()), "order_ref");
        assertThat(HoldCall.GET_HOLD.call(ledgerHold).getState()).isEqualTo(HoldState.HELD);
    }

    static Stream<Arguments> badOrderRefs() {
        return badIds(128).map(v -> Arguments.of(printable(v), v));
    }

    @Test
    void release_ofReleasedHold_isFailedPreconditionNamingStateReleased_andCreditsOnce() {
        String item = fresh("released");
        api().createItem(createItem(item).setTotal(5).build());
        Hold h = reserveOk(reserve().setItemId(item).setQuantity(2));
        expectStock(T, item, 5, 3, 2, 0);
        Hold released = HoldCall.RELEASE.call(h.getHoldId());
        assertThat(released.getState()).isEqualTo(HoldState.RELEASED);
        expectStock(T, item, 5, 5, 0, 0);
        Map<String, String> state = Map.of("state", "RELEASED");
        assertRefused(() -> HoldCall.RELEASE.call(h.getHoldId()), Status.Code.FAILED_PRECONDITION,
                Reason.HOLD_NOT_HELD, state);
        assertRefused(() -> HoldCall.CONFIRM.call(h.getHoldId()), Status.Code.FAILED_PRECONDITION,
                Reason.HOLD_NOT_HELD, state);
        assertRefused(() -> HoldCall.EXTEND.call(h.getHoldId()), Status.Code.FAILED_PRECONDITION,
                Reason.HOLD_NOT_HELD, state);
        assertThat(HoldCall.GET_HOLD.call(h.getHoldId()).getState()).isEqualTo(HoldState.RELEASED);
        expectStock(T, item, 5, 5, 0, 0);
    }

    @Test
    void releaseOrExtend_ofSoldHold_isFailedPreconditionNamingStateSold() {
        String item = fresh("sold");
        api().createItem(createItem(item).setTotal(5).build());
        Hold h = reserveOk(reserve().setItemId(item).setQuantity(2));
        HoldCall.CONFIRM.call(h.getHoldId());
        assertRefused(() -> HoldCall.RELEASE.call(h.getHoldId()), Status.Code.FAILED_PRECONDITION,
                Reason.HOLD_NOT_HELD, Map.of("state", "SOLD"));
        assertRefused(() -> HoldCall.EXTEND.call(h.getHoldId()), Status.Code.FAILED_PRECONDITION,
                Reason.HOLD_NOT_HELD, Map.of("state", "SOLD"));
        expectStock(T, item, 5, 3, 0, 2);
    }

    @Test
    void confirm_afterTtlPassed_isFailedPreconditionNamingStateExpired_andTheUnitsComeBack() {
        String item = fresh("expires");
        api().createItem(createItem(item).setTotal(4).setHoldTtlMs(TTL_MIN_MS).build());
        ReserveRequest req = reserve().setItemId(item).setQuantity(3).build();
        Hold h = reserveOk(req.toBuilder());
        assertThat(durationMs(h)).isEqualTo(TTL_MIN_MS);
        await().atMost(TestTimeouts.scaled(Duration.ofSeconds(10))).pollInterval(Duration.ofMillis(50))
                .until(() -> HoldCall.GET_HOLD.call(h.getHoldId()).getState() == HoldState.EXPIRED);
        Map<String, String> expired = Map.of("state", "EXPIRED");
        assertRefused(() -> HoldCall.CONFIRM.call(h.getHoldId()), Status.Code.FAILED_PRECONDITION,
                Reason.HOLD_NOT_HELD, expired);
        assertRefused(() -> HoldCall.RELEASE.call(h.getHoldId()), Status.Code.FAILED_PRECONDITION,
                Reason.HOLD_NOT_HELD, expired);
        assertRefused(() -> HoldCall.EXTEND.call(h.getHoldId()), Status.Code.FAILED_PRECONDITION,
                Reason.HOLD_NOT_HELD, expired);
        // The sweeper gives the units back once; a retry of the reserve finds the expired hold.
        await().atMost(TestTimeouts.scaled(Duration.ofSeconds(10))).pollInterval(Duration.ofMillis(50))
                .untilAsserted(() -> assertThat(api().getStock(stock(T, item)).getStock().getAvailable()).isEqualTo(4));
        ReserveResponse retry = api().reserve(req);
        assertThat(retry.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(retry.getHold().getHoldId()).isEqualTo(h.getHoldId());
        assertThat(retry.getHold().getState()).isEqualTo(HoldState.EXPIRED);
        expectStock(T, item, 4, 4, 0, 0);
    }

    @Test
    void extend_worksOnceByExtendBy_secondIsFailedPreconditionAlreadyExtended() {
        String item = fresh("extend");
        api().createItem(createItem(item).setTotal(5).setHoldTtlMs(60_000).setExtendByMs(5_000).build());
        Hold h = reserveOk(reserve().setItemId(item).setQuantity(1));
        assertThat(h.getExtended()).isFalse();
        Hold extended = HoldCall.EXTEND.call(h.getHoldId());
        assertThat(extended.getExtended()).isTrue();
        assertThat(extended.getState()).isEqualTo(HoldState.HELD);
        assertThat(millis(extended.getExpiresAt()) - millis(h.getExpiresAt())).isEqualTo(5_000);
        assertRefused(() -> HoldCall.EXTEND.call(h.getHoldId()), Status.Code.FAILED_PRECONDITION,
                Reason.HOLD_ALREADY_EXTENDED, Map.of());
        Hold now = HoldCall.GET_HOLD.call(h.getHoldId());
        assertThat(now.getExpiresAt()).isEqualTo(extended.getExpiresAt());
        assertThat(now.getExtended()).isTrue();
        expectStock(T, item, 5, 4, 1, 0);
    }

    @Test
    void confirm_twiceWithSameOrderRef_answersTheSameSoldHold_otherOrderRefIsMismatch() {
        String item = fresh("confirm");
        api().createItem(createItem(item).setTotal(5).build());
        Hold h = reserveOk(reserve().setItemId(item).setQuantity(2));
        ConfirmRequest req = ConfirmRequest.newBuilder().setHoldId(h.getHoldId()).setOrderRef("order-42").build();
        Hold first = api().confirm(req).getHold();
        assertThat(first.getState()).isEqualTo(HoldState.SOLD);
        assertThat(first.getOrderRef()).isEqualTo("order-42");
        Hold second = api().confirm(req).getHold();
        assertThat(second).isEqualTo(first);
        assertRefused(() -> api().confirm(req.toBuilder().setOrderRef("order-43").build()),
                Status.Code.FAILED_PRECONDITION, Reason.ORDER_REF_MISMATCH, Map.of());
        assertThat(HoldCall.GET_HOLD.call(h.getHoldId()).getOrderRef()).isEqualTo("order-42");
        expectStock(T, item, 5, 3, 0, 2);
    }

    // ------------------------------------------------------------------ Reserve outcomes and idempotency

    static Stream<Arguments> otherReserveParameters() {
        return Stream.of(
                reserveChange("other quantity", b -> b.setQuantity(3)),
                reserveChange("other buyer", b -> b.setBuyerId("buyer-2")),
                reserveChange("other region", b -> b.setRegion("eu")),
                reserveChange("other hold_ttl_ms", b -> b.setHoldTtlMs(30_000)));
    }

    private static Arguments reserveChange(String name, Function<ReserveRequest.Builder, ReserveRequest.Builder> f) {
        return Arguments.of(name, f);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("otherReserveParameters")
    void reserve_sameKeyOtherParameters_refusedKeyReused_sameParametersGetTheSameHold(
            String name, Function<ReserveRequest.Builder, ReserveRequest.Builder> change) {
        String item = fresh("idem");
        api().createItem(createItem(item).setTotal(10).build());
        ReserveRequest req = reserve().setItemId(item).setQuantity(2).build();
        Hold h = reserveOk(req.toBuilder());
        assertRefused(() -> api().reserve(change.apply(req.toBuilder()).build()), Status.Code.ALREADY_EXISTS,
                Reason.IDEMPOTENCY_KEY_REUSED, Map.of());
        ReserveResponse retry = api().reserve(req);
        assertThat(retry.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
        assertThat(retry.getHold()).isEqualTo(h);
        expectStock(T, item, 10, 8, 2, 0);
    }

    /**
     * An idempotency key names one Reserve of one item (inventory.proto, docs/hold-lifecycle.md):
     * the same key on another item is another Reserve, here on one shard as across shards, and a
     * retry of each gets its own hold.
     */
    @Test
    void reserve_sameKeyOnAnotherItem_isAnotherReserve_andEachRetryGetsItsOwnHold() {
        String first = fresh("idem-a");
        String second = fresh("idem-b");
        api().createItem(createItem(first).setTotal(5).build());
        api().createItem(createItem(second).setTotal(5).build());
        ReserveRequest onFirst = reserve().setItemId(first).setQuantity(1).build();
        ReserveRequest onSecond = onFirst.toBuilder().setItemId(second).build();
        Hold a = reserveOk(onFirst.toBuilder());
        Hold b = reserveOk(onSecond.toBuilder());
        assertThat(b.getHoldId()).isNotEqualTo(a.getHoldId());
        assertThat(b.getIdempotencyKey()).isEqualTo(a.getIdempotencyKey());
        assertThat(api().reserve(onFirst).getHold()).isEqualTo(a);
        assertThat(api().reserve(onSecond).getHold()).isEqualTo(b);
        assertRefused(() -> api().reserve(onSecond.toBuilder().setQuantity(2).build()), Status.Code.ALREADY_EXISTS,
                Reason.IDEMPOTENCY_KEY_REUSED, Map.of());
        expectStock(T, first, 5, 4, 1, 0);
        expectStock(T, second, 5, 4, 1, 0);
    }

    @Test
    void reserve_moreThanAvailable_isOkSoldOut_andPlacesNoHold() {
        String item = fresh("soldout");
        api().createItem(createItem(item).setTotal(2).build());
        ReserveRequest tooMany = reserve().setItemId(item).setQuantity(3).build();
        assertThat(api().reserve(tooMany).getOutcome()).isEqualTo(ReserveOutcome.SOLD_OUT);
        reserveOk(reserve().setItemId(item).setQuantity(2));
        assertThat(api().reserve(reserve().setItemId(item).setQuantity(1).build()).getOutcome())
                .isEqualTo(ReserveOutcome.SOLD_OUT);
        // A SOLD_OUT answer recorded no key: the same key may be used again.
        String holdAgain = fresh("key");
        ReserveResponse r = api().reserve(tooMany.toBuilder().setIdempotencyKey(holdAgain).setQuantity(1).build());
        assertThat(r.getOutcome()).isEqualTo(ReserveOutcome.SOLD_OUT);
        expectStock(T, item, 2, 0, 2, 0);
    }

    @Test
    void reserve_pastPerBuyerLimit_isOkLimitExceeded_untilTheBuyerReleases() {
        String item = fresh("limited");
        api().createItem(createItem(item).setTotal(10).setPerBuyerLimit(3).build());
        Hold a = reserveOk(reserve().setItemId(item).setBuyerId("alice").setQuantity(2));
        ReserveResponse over = api().reserve(reserve().setItemId(item).setBuyerId("alice").setQuantity(2).build());
        assertThat(over.getOutcome()).isEqualTo(ReserveOutcome.LIMIT_EXCEEDED);
        assertThat(over.hasHold()).isFalse();
        Hold a2 = reserveOk(reserve().setItemId(item).setBuyerId("alice").setQuantity(1));
        assertThat(api().reserve(reserve().setItemId(item).setBuyerId("alice").setQuantity(1).build()).getOutcome())
                .isEqualTo(ReserveOutcome.LIMIT_EXCEEDED);
        // Sold units count against the limit too; other buyers are not limited by alice.
        HoldCall.CONFIRM.call(a2.getHoldId());
        assertThat(api().reserve(reserve().setItemId(item).setBuyerId("alice").setQuantity(1).build()).getOutcome())
                .isEqualTo(ReserveOutcome.LIMIT_EXCEEDED);
        reserveOk(reserve().setItemId(item).setBuyerId("bob").setQuantity(3));
        expectStock(T, item, 10, 4, 5, 1);
        // Releasing gives the limit back.
        HoldCall.RELEASE.call(a.getHoldId());
        reserveOk(reserve().setItemId(item).setBuyerId("alice").setQuantity(2));
        assertThat(api().reserve(reserve().setItemId(item).setBuyerId("alice").setQuantity(1).build()).getOutcome())
                .isEqualTo(ReserveOutcome.LIMIT_EXCEEDED);
        expectStock(T, item, 10, 4, 5, 1);
    }

    @Test
    void checkInvariants_refusesItemWithoutTenant_namingTenantId() {
        ShardServiceGrpc.ShardServiceBlockingStub shard = ShardServiceGrpc.newBlockingStub(harness.channel())
                .withDeadlineAfter(ShardNodeHarness.deadlineMillis(), TimeUnit.MILLISECONDS);
        assertInvalid(() -> shard.checkInvariants(CheckInvariantsRequest.newBuilder().setItemId(LEDGER).build()),
                "tenant_id");
        assertInvalid(() -> shard.checkInvariants(CheckInvariantsRequest.newBuilder().setTenantId("a b").build()),
                "tenant_id");
        assertInvalid(() -> shard.checkInvariants(CheckInvariantsRequest.newBuilder().setTenantId(T)
                .setItemId("x".repeat(129)).build()), "item_id");
    }

    // ------------------------------------------------------------------ the sum of it all

    @Test
    @Order(Integer.MAX_VALUE)
    void badInput_losesNothing_countersMatchSuccessfulCallsAndInvariantsHold() {
        Hold ledger = HoldCall.GET_HOLD.call(ledgerHold);
        assertThat(ledger.getState()).isEqualTo(HoldState.HELD);
        assertThat(ledger.getQuantity()).isEqualTo(LEDGER_HOLD_QTY);
        assertThat(EXPECTED).containsKey(T + "/" + LEDGER);
        for (Map.Entry<String, long[]> e : EXPECTED.entrySet()) {
            String[] ti = e.getKey().split("/", 2);
            Stock s = api().getStock(stock(ti[0], ti[1])).getStock();
            assertThat(new long[] {s.getTotal(), s.getAvailable(), s.getHeld(), s.getSold()})
                    .as("counters of %s (total, available, held, sold)", e.getKey())
                    .containsExactly(e.getValue());
        }
        InvariantReport report = harness.checkInvariants();
        assertThat(report.getDriftsList()).as("drifts").isEmpty();
        assertThat(report.getOk()).isTrue();
        assertThat(report.getItemsChecked()).isGreaterThanOrEqualTo(EXPECTED.size());
    }

    // ------------------------------------------------------------------ helpers

    private static InventoryServiceBlockingStub api() {
        return harness.blocking();
    }

    private static String fresh(String prefix) {
        return prefix + "-" + SEQ.incrementAndGet();
    }

    /** A valid Reserve of one unit of the ledger item with a fresh key. */
    private static ReserveRequest.Builder reserve() {
        return ReserveRequest.newBuilder().setTenantId(T).setItemId(LEDGER).setQuantity(1)
                .setIdempotencyKey(fresh("key")).setBuyerId("buyer-1").setRegion("local");
    }

    /** A valid CreateItem of 10 units in the home region "local". */
    private static CreateItemRequest.Builder createItem(String item) {
        return CreateItemRequest.newBuilder().setTenantId(T).setItemId(item).setTotal(10).setHomeRegion("local");
    }

    /** A valid Restock of one unit with a fresh restock id. */
    private static RestockRequest.Builder restock(String item) {
        return RestockRequest.newBuilder().setTenantId(T).setItemId(item).setQuantity(1).setRestockId(fresh("restock"));
    }

    private static GetStockRequest stock(String tenant, String item) {
        return GetStockRequest.newBuilder().setTenantId(tenant).setItemId(item).build();
    }

    private static RegionQuota quota(String region, long quantity) {
        return RegionQuota.newBuilder().setRegion(region).setQuantity(quantity).build();
    }

    private static Hold reserveOk(ReserveRequest.Builder r) {
        ReserveResponse resp = api().reserve(r.build());
        assertThat(resp.getOutcome()).as("outcome of %s", r.getIdempotencyKey()).isEqualTo(ReserveOutcome.RESERVED);
        Hold h = resp.getHold();
        assertThat(h.getState()).isEqualTo(HoldState.HELD);
        assertThat(h.getQuantity()).isEqualTo(r.getQuantity());
        assertThat(h.getBuyerId()).isEqualTo(r.getBuyerId());
        assertThat(h.getIdempotencyKey()).isEqualTo(r.getIdempotencyKey());
        return h;
    }

    /** Asserts the item's committed counters now and records them for the final check. */
    private static Stock expectStock(String tenant, String item, long total, long available, long held, long sold) {
        Stock s = api().getStock(stock(tenant, item)).getStock();
        assertThat(new long[] {s.getTotal(), s.getAvailable(), s.getHeld(), s.getSold()})
                .as("counters of %s/%s (total, available, held, sold)", tenant, item)
                .containsExactly(total, available, held, sold);
        EXPECTED.put(tenant + "/" + item, new long[] {total, available, held, sold});
        return s;
    }

    /** A call expected to fail; it returns what the node answered if it did not. */
    @FunctionalInterface
    interface Call {
        Object run();
    }

    private static StatusRuntimeException assertInvalid(Call call, String field) {
        return assertRefused(call, Status.Code.INVALID_ARGUMENT, Reason.INVALID_FIELD, Map.of("field", field));
    }

    /** The call fails with exactly this code and reason, and its ErrorInfo metadata holds {@code metadata}. */
    private static StatusRuntimeException assertRefused(Call call, Status.Code code, Reason reason,
                                                        Map<String, String> metadata) {
        StatusRuntimeException e;
        try {
            Object answer = call.run();
            throw new AssertionError("expected " + code + " " + reason + ", but the call succeeded with: "
                    + String.valueOf(answer).replace('\n', ' '));
        } catch (StatusRuntimeException refused) {
            e = refused;
        }
        assertThat(e.getStatus().getCode()).as("status of: %s", e.getStatus().getDescription()).isEqualTo(code);
        ErrorInfo info = GrpcErrors.errorInfo(e).orElseThrow(() -> new AssertionError("no ErrorInfo in " + e));
        assertThat(info.getReason()).as("reason of: %s", e.getStatus().getDescription()).isEqualTo(reason.name());
        assertThat(info.getDomain()).isEqualTo(Reason.DOMAIN);
        assertThat(info.getMetadataMap()).as("metadata of: %s", e.getStatus().getDescription())
                .containsAllEntriesOf(metadata);
        return e;
    }

    private static long millis(com.google.protobuf.Timestamp t) {
        return t.getSeconds() * 1000 + t.getNanos() / 1_000_000;
    }

    private static long durationMs(Hold h) {
        return millis(h.getExpiresAt()) - millis(h.getCreatedAt());
    }

    /** A readable form of a test value for test names. */
    private static String printable(String v) {
        if (v.isEmpty()) {
            return "<empty>";
        }
        if (v.length() > 20) {
            return "<" + v.length() + " chars>";
        }
        StringBuilder b = new StringBuilder("'");
        for (char c : v.toCharArray()) {
            b.append(c >= 0x20 && c < 0x7f ? String.valueOf(c) : String.format("\\u%04x", (int) c));
        }
        return b.append('\'').toString();
    }
}
