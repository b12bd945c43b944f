package io.lastunit.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.protobuf.Timestamp;
import com.google.rpc.ErrorInfo;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.inventory.v1.ConfirmRequest;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.ExtendRequest;
import io.lastunit.api.inventory.v1.GetHoldRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.HoldState;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc.InventoryServiceBlockingStub;
import io.lastunit.api.inventory.v1.ReleaseRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.RestockRequest;
import io.lastunit.api.inventory.v1.RestockResponse;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.api.shard.v1.InvariantReport;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.HoldId;
import io.lastunit.common.Reason;
import io.lastunit.testkit.PostgresFixture;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.RandomDistribution;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.Tuple;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

/**
 * The hold lifecycle of DESIGN §4 against a model, on a real shard node (real gRPC, real
 * PostgreSQL, a fresh database for the class). Each try creates a fresh item and runs a random
 * sequence of Reserve (sometimes retrying an earlier key, sometimes with other parameters),
 * Confirm (sometimes with another order ref), Release, Extend, Expire (the hold's expiry is moved
 * into the past in the database and the owning lane is asked to sweep), GetHold and Restock.
 * After every action the reply must be what the model predicts (outcome, hold, error reason and
 * state), GetStock must equal the model's counters, available must not be negative and the
 * shard's invariant check must pass; at the end of a try every hold and every buyer's usage must
 * match the model too.
 *
 * <p>The background sweeper is slowed to once an hour and holds live ten minutes, so nothing
 * expires unless the test says so.
 */
class HoldLifecyclePropertyIT {

    private static final PostgresFixture PG = new PostgresFixture();
    private static final String TENANT = "prop";
    private static final long TTL_MS = 600_000;
    private static final int BUYERS = 4;
    private static final AtomicInteger TRIES = new AtomicInteger();

    private static ShardNodeHarness harness;

    @BeforeContainer
    static void startNode() throws Exception {
        PG.openStandalone("HoldLifecyclePropertyIT");
        try {
            harness = new ShardNodeHarness(PG, Map.of("lastunit.shard.sweep-interval-ms", 3_600_000)).start();
        } catch (Exception | Error e) {
            PG.closeStandalone();
            throw e;
        }
    }

    @AfterContainer
    static void stopNode() throws Exception {
        try {
            if (harness != null) {
                harness.close();
            }
        } finally {
            PG.closeStandalone();
        }
    }

    // ------------------------------------------------------------------ actions

    /** What a try does; {@code pick} fields choose among what exists when the action runs. */
    sealed interface Action {
    }

    /** A fresh key ({@code retryPick < 0}) or an earlier request again, as it was or with another quantity. */
    record Reserve(int buyer, int quantity, int retryPick, boolean otherQuantity) implements Action {
    }

    record Confirm(int pick, boolean otherOrderRef) implements Action {
    }

    record Release(int pick) implements Action {
    }

    record Extend(int pick) implements Action {
    }

    record Expire(int pick) implements Action {
    }

    record GetHold(int pick) implements Action {
    }

    /** A fresh restock id ({@code retryPick < 0}) or an earlier one again. */
    record Restock(int quantity, int retryPick) implements Action {
    }

    record Scenario(int total, int perBuyerLimit, long extendByMs, List<Action> actions) {
    }

    @Provide
    Arbitrary<Scenario> scenarios() {
        Arbitrary<Integer> pick = Arbitraries.integers().between(0, 1_000);
        Arbitrary<Integer> retry = Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.just(-1)), Tuple.of(1, pick));
        Arbitrary<Action> reserve = Combinators.combine(Arbitraries.integers().between(0, BUYERS - 1),
                Arbitraries.integers().between(1, 3), retry, Arbitraries.of(false, false, false, true))
                .as(Reserve::new);
        Arbitrary<Action> confirm = Combinators.combine(pick, Arbitraries.of(false, false, true)).as(Confirm::new);
        Arbitrary<Action> action = Arbitraries.frequencyOf(
                Tuple.of(40, reserve),
                Tuple.of(15, confirm),
                Tuple.of(12, pick.map(Release::new)),
                Tuple.of(16, pick.map(Extend::new)),
                Tuple.of(10, pick.map(Expire::new)),
                Tuple.of(5, pick.map(GetHold::new)),
                Tuple.of(4, Combinators.combine(Arbitraries.integers().between(1, 3), retry)
                        .as(Restock::new)));
        Arbitrary<Integer> limit = Arbitraries.frequencyOf(
                Tuple.of(1, Arbitraries.just(0)),
                Tuple.of(2, Arbitraries.integers().between(1, 5)));
        Arbitrary<List<Action>> actions = action.list().ofMinSize(10).ofMaxSize(60)
                .withSizeDistribution(RandomDistribution.uniform());
        return Combinators.combine(Arbitraries.integers().between(1, 20), limit, Arbitraries.of(0L, 1_000L, 60_000L),
                actions).as(Scenario::new);
    }

    // ------------------------------------------------------------------ the property

    @Property(tries = 50, shrinking = ShrinkingMode.BOUNDED)
    void everyReplyAndCounterMatchesTheModel_andInvariantsHold(@ForAll("scenarios") Scenario s) throws Exception {
        int tryNo = TRIES.incrementAndGet();
        Model m = new Model("item-" + tryNo, "t" + tryNo, s);
        Stock created = api().createItem(CreateItemRequest.newBuilder().setTenantId(TENANT).setItemId(m.item)
                .setTotal(s.total()).setPerBuyerLimit(s.perBuyerLimit()).setExtendByMs(s.extendByMs())
                .setHomeRegion("local").build()).getStock();
        m.extendByMs = created.getExtendByMs();
        assertThat(m.extendByMs).isEqualTo(s.extendByMs() == 0 ? TTL_MS : s.extendByMs());
        List<String> log = new ArrayList<>();
        try {
            checkCounters(m);
            for (Action a : s.actions()) {
                String outcome = apply(m, a);
                log.add(a + " -> " + outcome);
                Statistics.label("outcomes").collect(a.getClass().getSimpleName() + " " + category(outcome));
                checkCounters(m);
                checkInvariants(m);
            }
            checkEveryHold(m);
            checkUsage(m);
            requireCoverage();
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError("try " + tryNo + " (item " + m.item + ", total=" + s.total() + ", per_buyer_limit="
                    + s.perBuyerLimit() + ", extend_by_ms=" + s.extendByMs() + ") failed after:\n  "
                    + String.join("\n  ", log) + "\n" + e.getMessage(), e);
        }
    }

    /**
     * Fails the property (after all tries) if a run never reached one of the outcomes it exists to
     * check: then it would pass without testing them.
     */
    private static void requireCoverage() {
        Statistics.label("outcomes").coverage(c -> {
            for (String outcome : List.of("Reserve RESERVED", "Reserve SOLD_OUT", "Reserve LIMIT_EXCEEDED",
                    "Reserve RESERVED again", "Reserve IDEMPOTENCY_KEY_REUSED", "Confirm SOLD", "Confirm SOLD again",
                    "Confirm ORDER_REF_MISMATCH", "Release RELEASED", "Extend extended", "Extend HOLD_ALREADY_EXTENDED",
                    "Expire EXPIRED", "Restock applied")) {
                c.check(outcome).count(n -> n > 0);
            }
            for (String state : List.of("SOLD", "RELEASED", "EXPIRED")) {
                c.checkPattern(".* HOLD_NOT_HELD " + state).count(n -> n > 0);
            }
        });
    }

    /** "buyer-1 x2 -> RESERVED #3" → "RESERVED": what happened, without the particulars. */
    private static String category(String outcome) {
        int arrow = outcome.lastIndexOf("-> ");
        return (arrow < 0 ? outcome : outcome.substring(arrow + 3)).replaceAll(" *[#(+].*", "").trim();
    }

    private String apply(Model m, Action a) throws Exception {
        if (a instanceof Reserve r) {
            return reserve(m, r);
        }
        if (a instanceof Restock r) {
            return restock(m, r);
        }
        if (m.holds.isEmpty()) {
            return "no hold yet";
        }
        if (a instanceof Confirm c) {
            return confirm(m, m.pick(c.pick()), c.otherOrderRef());
        }
        if (a instanceof Release r) {
            return release(m, m.pick(r.pick()));
        }
        if (a instanceof Extend e) {
            return extend(m, m.pick(e.pick()));
        }
        if (a instanceof Expire e) {
            return expire(m, m.pick(e.pick()));
        }
        if (a instanceof GetHold g) {
            HoldM h = m.pick(g.pick());
            checkHold(h, api().getHold(GetHoldRequest.newBuilder().setHoldId(h.id).build()).getHold());
            return h.state.name();
        }
        throw new IllegalArgumentException(String.valueOf(a));
    }

    private String reserve(Model m, Reserve a) {
        Sent req;
        if (a.retryPick() >= 0 && !m.sent.isEmpty()) {
            Sent prev = m.sent.get(a.retryPick() % m.sent.size());
            req = a.otherQuantity() ? new Sent(prev.key, prev.buyer, prev.qty % 3 + 1) : prev;
        } else {
            req = new Sent(m.keyPrefix + "-k" + m.sent.size(), "buyer-" + a.buyer(), a.quantity());
        }
        m.sent.add(req);
        ReserveRequest request = ReserveRequest.newBuilder().setTenantId(TENANT).setItemId(m.item)
                .setQuantity(req.qty).setIdempotencyKey(req.key).setBuyerId(req.buyer).setRegion("local").build();
        HoldM existing = m.byKey.get(req.key);
        if (existing != null) {
            if (existing.qty != req.qty || !existing.buyer.equals(req.buyer)) {
                expectRefused(() -> api().reserve(request), Status.Code.ALREADY_EXISTS, Reason.IDEMPOTENCY_KEY_REUSED,
                        null);
                return req + " -> IDEMPOTENCY_KEY_REUSED";
            }
            ReserveResponse resp = api().reserve(request);
            assertThat(resp.getOutcome()).as("retry of %s", req).isEqualTo(ReserveOutcome.RESERVED);
            checkHold(existing, resp.getHold());
            return req + " -> RESERVED again (" + existing.state + ")";
        }
        ReserveOutcome expected;
        if (m.available < req.qty) {
            expected = ReserveOutcome.SOLD_OUT;
        } else if (m.limit > 0 && m.usage(req.buyer) + req.qty > m.limit) {
            expected = ReserveOutcome.LIMIT_EXCEEDED;
        } else {
            expected = ReserveOutcome.RESERVED;
        }
        ReserveResponse resp = api().reserve(request);
        assertThat(resp.getOutcome()).as("outcome of %s (available=%s, usage=%s, limit=%s)", req, m.available,
                m.usage(req.buyer), m.limit).isEqualTo(expected);
        if (expected != ReserveOutcome.RESERVED) {
            assertThat(resp.hasHold()).as("a %s reply carries no hold", expected).isFalse();
            return req + " -> " + expected;
        }
        Hold h = resp.getHold();
        HoldId id = HoldId.decode(h.getHoldId(), "hold_id");
        assertThat(List.of(id.tenantId(), id.itemId(), id.region(), String.valueOf(id.bucketNo())))
                .containsExactly(TENANT, m.item, "local", "0");
        assertThat(List.of(h.getTenantId(), h.getItemId(), h.getRegion())).containsExactly(TENANT, m.item, "local");
        assertThat(millis(h.getExpiresAt()) - millis(h.getCreatedAt())).as("TTL").isEqualTo(TTL_MS);
        HoldM hm = new HoldM(h.getHoldId(), req.key, req.buyer, req.qty);
        hm.expiresAt = h.getExpiresAt();
        checkHold(hm, h);
        m.holds.add(hm);
        m.byKey.put(req.key, hm);
        m.available -= req.qty;
        m.held += req.qty;
        m.addUsage(req.buyer, req.qty);
        return req + " -> RESERVED #" + (m.holds.size() - 1);
    }

    private String confirm(Model m, HoldM h, boolean otherOrderRef) {
        String ref = (otherOrderRef ? "alt-" : "order-") + m.holds.indexOf(h);
        ConfirmRequest req = ConfirmRequest.newBuilder().setHoldId(h.id).setOrderRef(ref).build();
        String what = "#" + m.holds.indexOf(h) + " " + ref;
        switch (h.state) {
            case HELD -> {
                Hold got = api().confirm(req).getHold();
                h.state = HoldState.SOLD;
                h.orderRef = ref;
                m.held -= h.qty;
                m.sold += h.qty;
                checkHold(h, got);
                return what + " -> SOLD";
            }
            case SOLD -> {
                if (ref.equals(h.orderRef)) {
                    checkHold(h, api().confirm(req).getHold());
                    return what + " -> SOLD again";
                }
                expectRefused(() -> api().confirm(req), Status.Code.FAILED_PRECONDITION, Reason.ORDER_REF_MISMATCH,
                        null);
                return what + " -> ORDER_REF_MISMATCH";
            }
            default -> {
                expectNotHeld(() -> api().confirm(req), h);
                return what + " -> HOLD_NOT_HELD " + h.state;
            }
        }
    }

    private String release(Model m, HoldM h) {
        ReleaseRequest req = ReleaseRequest.newBuilder().setHoldId(h.id).build();
        String what = "#" + m.holds.indexOf(h);
        if (h.state != HoldState.HELD) {
            expectNotHeld(() -> api().release(req), h);
            return what + " -> HOLD_NOT_HELD " + h.state;
        }
        Hold got = api().release(req).getHold();
        h.state = HoldState.RELEASED;
        m.giveBack(h);
        checkHold(h, got);
        return what + " -> RELEASED";
    }

    private String extend(Model m, HoldM h) {
        ExtendRequest req = ExtendRequest.newBuilder().setHoldId(h.id).build();
        String what = "#" + m.holds.indexOf(h);
        if (h.state != HoldState.HELD) {
            expectNotHeld(() -> api().extend(req), h);
            return what + " -> HOLD_NOT_HELD " + h.state;
        }
        if (h.extended) {
            expectRefused(() -> api().extend(req), Status.Code.FAILED_PRECONDITION, Reason.HOLD_ALREADY_EXTENDED, null);
            return what + " -> HOLD_ALREADY_EXTENDED";
        }
        Hold got = api().extend(req).getHold();
        assertThat(millis(got.getExpiresAt()) - millis(h.expiresAt)).as("extended by").isEqualTo(m.extendByMs);
        h.extended = true;
        h.expiresAt = got.getExpiresAt();
        checkHold(h, got);
        return what + " -> extended";
    }

    private String expire(Model m, HoldM h) throws Exception {
        ShardNode node = harness.node();
        try (Connection c = node.dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement(
                     "UPDATE holds SET expires_at = now() - interval '1 second' WHERE hold_id = ?")) {
            ps.setObject(1, HoldId.decode(h.id, "x").uuid());
            assertThat(ps.executeUpdate()).as("rows of hold %s", h.id).isEqualTo(1);
            c.commit();
        }
        int swept = node.engine().sweep(TENANT, m.item, 0)
                .get(ShardNodeHarness.deadlineMillis(), TimeUnit.MILLISECONDS);
        h.expiresAt = null; // moved by hand: no longer what the node answered
        String what = "#" + m.holds.indexOf(h);
        if (h.state == HoldState.HELD) {
            assertThat(swept).as("holds the sweep expired").isEqualTo(1);
            h.state = HoldState.EXPIRED;
            m.giveBack(h);
            return what + " -> EXPIRED";
        }
        assertThat(swept).as("holds the sweep expired (hold was %s)", h.state).isZero();
        return what + " -> nothing to sweep (" + h.state + ")";
    }

    private String restock(Model m, Restock a) {
        if (a.retryPick() >= 0 && !m.restocks.isEmpty()) {
            RestockRequest again = m.restocks.get(a.retryPick() % m.restocks.size());
            RestockResponse r = api().restock(again);
            assertThat(r.getApplied()).as("retried restock %s", again.getRestockId()).isFalse();
            return again.getRestockId() + " -> not applied again";
        }
        RestockRequest req = RestockRequest.newBuilder().setTenantId(TENANT).setItemId(m.item)
                .setQuantity(a.quantity()).setRestockId(m.keyPrefix + "-r" + m.restocks.size()).build();
        RestockResponse r = api().restock(req);
        assertThat(r.getApplied()).isTrue();
        m.restocks.add(req);
        m.total += a.quantity();
        m.available += a.quantity();
        return req.getRestockId() + " -> applied +" + a.quantity();
    }

    // ------------------------------------------------------------------ checks

    private static void checkCounters(Model m) {
        Stock s = api().getStock(GetStockRequest.newBuilder().setTenantId(TENANT).setItemId(m.item).build()).getStock();
        assertThat(s.getAvailable()).as("available").isGreaterThanOrEqualTo(0);
        assertThat(new long[] {s.getTotal(), s.getAvailable(), s.getHeld(), s.getSold()})
                .as("GetStock (total, available, held, sold)")
                .containsExactly(m.total, m.available, m.held, m.sold);
        assertThat(s.getPerBuyerLimit()).isEqualTo(m.limit);
    }

    private static void checkInvariants(Model m) throws Exception {
        InvariantReport report = harness.node().checker().check(TENANT, m.item);
        assertThat(report.getDriftsList()).as("drifts").isEmpty();
        assertThat(report.getOk()).isTrue();
        assertThat(report.getBucketsChecked()).isEqualTo(1);
    }

    private static void checkEveryHold(Model m) {
        for (HoldM h : m.holds) {
            checkHold(h, api().getHold(GetHoldRequest.newBuilder().setHoldId(h.id).build()).getHold());
        }
    }

    /** Usage rows are the model's: units each buyer holds or bought (limited items only). */
    private static void checkUsage(Model m) throws Exception {
        Map<String, Long> actual = new HashMap<>();
        try (Connection c = harness.node().dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement(
                     "SELECT buyer_id, qty FROM buyer_usage WHERE tenant_id = ? AND item_id = ? AND qty <> 0")) {
            ps.setString(1, TENANT);
            ps.setString(2, m.item);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    actual.put(rs.getString(1), rs.getLong(2));
                }
            }
            c.commit();
        }
        Map<String, Long> expected = new HashMap<>();
        if (m.limit > 0) {
            m.usage.forEach((b, q) -> {
                if (q != 0) {
                    expected.put(b, q);
                }
            });
        }
        assertThat(actual).as("buyer_usage").isEqualTo(expected);
    }

    private static void checkHold(HoldM h, Hold got) {
        assertThat(got.getHoldId()).isEqualTo(h.id);
        assertThat(got.getState()).as("state of %s", h.key).isEqualTo(h.state);
        assertThat(got.getQuantity()).isEqualTo(h.qty);
        assertThat(got.getBuyerId()).isEqualTo(h.buyer);
        assertThat(got.getIdempotencyKey()).isEqualTo(h.key);
        assertThat(got.getExtended()).as("extended of %s", h.key).isEqualTo(h.extended);
        assertThat(got.getOrderRef()).as("order_ref of %s", h.key).isEqualTo(h.orderRef == null ? "" : h.orderRef);
        if (h.expiresAt != null) {
            assertThat(got.getExpiresAt()).as("expires_at of %s", h.key).isEqualTo(h.expiresAt);
        }
    }

    private static void expectNotHeld(ThrowingCallable call, HoldM h) {
        expectRefused(call, Status.Code.FAILED_PRECONDITION, Reason.HOLD_NOT_HELD, h.state.name());
    }

    private static void expectRefused(ThrowingCallable call, Status.Code code, Reason reason, String state) {
        StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class, call);
        assertThat(e).as("expected %s %s%s, but the call succeeded", code, reason,
                state == null ? "" : " state=" + state).isNotNull();
        assertThat(e.getStatus().getCode()).as("status of: %s", e.getStatus().getDescription()).isEqualTo(code);
        ErrorInfo info = GrpcErrors.errorInfo(e).orElseThrow(() -> new AssertionError("no ErrorInfo in " + e));
        assertThat(info.getReason()).as("reason of: %s", e.getStatus().getDescription()).isEqualTo(reason.name());
        if (state != null) {
            assertThat(info.getMetadataMap()).as("metadata of: %s", e.getStatus().getDescription())
                    .containsEntry("state", state);
        }
    }

    private static InventoryServiceBlockingStub api() {
        return harness.blocking();
    }

    private static long millis(Timestamp t) {
        return t.getSeconds() * 1000 + t.getNanos() / 1_000_000;
    }

    // ------------------------------------------------------------------ the model

    /** A Reserve as sent: key, buyer, quantity (the item, region and TTL never change in a try). */
    record Sent(String key, String buyer, int qty) {
    }

    /** What the node should hold for one hold. */
    static final class HoldM {
        final String id;
        final String key;
        final String buyer;
        final int qty;
        HoldState state = HoldState.HELD;
        boolean extended;
        String orderRef;
        /** As last answered by the node; null once the test moved it in the database. */
        Timestamp expiresAt;

        HoldM(String id, String key, String buyer, int qty) {
            this.id = id;
            this.key = key;
            this.buyer = buyer;
            this.qty = qty;
        }
    }

    /** The expected state of one item: counters, holds, keys sent, per-buyer usage. */
    static final class Model {
        final String item;
        final String keyPrefix;
        final int limit;
        long extendByMs;
        long total;
        long available;
        long held;
        long sold;
        final List<HoldM> holds = new ArrayList<>();
        final Map<String, HoldM> byKey = new HashMap<>();
        final List<Sent> sent = new ArrayList<>();
        final List<RestockRequest> restocks = new ArrayList<>();
        final Map<String, Long> usage = new LinkedHashMap<>();

        Model(String item, String keyPrefix, Scenario s) {
            this.item = item;
            this.keyPrefix = keyPrefix;
            this.limit = s.perBuyerLimit();
            this.total = s.total();
            this.available = s.total();
        }

        /**
         * Half the picks go to one of the two newest holds (so one hold often sees several
         * actions in a row: extend twice, confirm twice), the other half to any hold.
         */
        HoldM pick(int pick) {
            int n = holds.size();
            if (pick % 2 == 0) {
                return holds.get(n - 1 - (pick / 2) % Math.min(n, 2));
            }
            return holds.get((pick / 2) % n);
        }

        long usage(String buyer) {
            return usage.getOrDefault(buyer, 0L);
        }

        void addUsage(String buyer, long qty) {
            usage.merge(buyer, qty, Long::sum);
        }

        /** A HELD hold ended without a sale (released or expired): its units and usage come back. */
        void giveBack(HoldM h) {
            available += h.qty;
            held -= h.qty;
            addUsage(h.buyer, -h.qty);
        }
    }
}
