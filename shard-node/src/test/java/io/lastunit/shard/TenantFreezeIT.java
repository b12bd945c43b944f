package io.lastunit.shard;

import static io.lastunit.shard.MoveCalls.reserve;
import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.StatusRuntimeException;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.shard.v1.TenantMoveResponse;
import io.lastunit.api.shard.v1.TenantRow;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.HoldId;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * FreezeTenant while buyers keep reserving: the freeze answers only after every lane wrote what
 * it took before it, so the last export after the freeze carries every hold a buyer was told of,
 * and every Reserve sent after the freeze answered is refused with TENANT_MOVING, never SOLD_OUT.
 * Bounded in calls and in time; nothing depends on how fast the host runs: the test waits for
 * conditions (a count of holds before it freezes, a count of refusals after), each within a bound
 * scaled by {@link TestTimeouts}.
 */
class TenantFreezeIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final String TENANT = "t-hot";
    private static final int THREADS = 8;
    private static final int CALLS_PER_THREAD_MAX = 3_000;
    /** Holds placed before the freeze is asked for. */
    private static final int RESERVED_BEFORE_FREEZE = 300;
    /** Reserves each thread sends after the freeze answered, before it stops. */
    private static final int CALLS_AFTER_FREEZE = 5;
    private static final Pattern HOLD_ID = Pattern.compile("\"hold_id\":\"([^\"]+)\"");
    private static final Pattern STATE = Pattern.compile("\"state\":\"([A-Z]+)\"");

    /** One Reserve as the buyer saw it. */
    record Call(long startNanos, long endNanos, String answer, String holdId) {
    }

    @Test
    void freezeWhileReservesRun_everyHoldToldIsExported_everyReserveAfterItIsTenantMoving_noneSoldOut()
            throws Exception {
        try (ShardNodeHarness shard = new ShardNodeHarness(PG, Map.of("lastunit.shard.id", "source",
                "lastunit.shard.lanes", 2, "lastunit.shard.sweep-interval-ms", 3_600_000)).start()) {
            shard.blocking().createItem(CreateItemRequest.newBuilder().setTenantId(TENANT).setItemId("hot")
                    .setTotal(100_000).setBucketCount(4).setHomeRegion("local").setHoldTtlMs(600_000).build());
            shard.createItem("t-other", "cold", 100);
            MoveCalls calls = new MoveCalls(shard);
            MoveCalls.Export before = calls.exportAll(TENANT);

            List<Call> history = Collections.synchronizedList(new ArrayList<>());
            CountDownLatch enough = new CountDownLatch(RESERVED_BEFORE_FREEZE);
            long[] freezeReturned = {Long.MAX_VALUE};
            Object lock = new Object();
            long deadline = System.nanoTime() + TestTimeouts.scaled(Duration.ofSeconds(60)).toNanos();
            List<Thread> buyers = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                Thread buyer = new Thread(() -> {
                    int after = 0;
                    for (int n = 0; n < CALLS_PER_THREAD_MAX && after < CALLS_AFTER_FREEZE
                            && System.nanoTime() < deadline; n++) {
                        long start = System.nanoTime();
                        Call c = reserveOnce(shard, "b" + thread + "-" + n, start);
                        history.add(c);
                        if (c.answer().equals("RESERVED")) {
                            enough.countDown();
                        }
                        synchronized (lock) {
                            if (start > freezeReturned[0]) {
                                after++;
                            }
                        }
                    }
                }, "buyer-" + t);
                buyers.add(buyer);
                buyer.start();
            }
            assertThat(enough.await(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS))
                    .as("%d holds placed before the freeze", RESERVED_BEFORE_FREEZE).isTrue();
            long freezeAsked = System.nanoTime();
            TenantMoveResponse frozen = calls.freeze(TENANT);
            synchronized (lock) {
                freezeReturned[0] = System.nanoTime();
            }
            for (Thread b : buyers) {
                b.join(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis());
                assertThat(b.isAlive()).as(b.getName() + " ended").isFalse();
            }
            assertThat(frozen.getItems()).isEqualTo(1);
            assertThat(shard.blocking().reserve(reserve("t-other", "cold", "k", 1)).getOutcome())
                    .as("another tenant sells through the freeze").isEqualTo(ReserveOutcome.RESERVED);

            Map<String, Integer> answers = new TreeMap<>();
            Set<String> told = new HashSet<>();
            int afterFreeze = 0;
            for (Call c : history) {
                answers.merge(c.answer(), 1, Integer::sum);
                if (c.answer().equals("RESERVED")) {
                    told.add(c.holdId());
                }
                if (c.startNanos() > freezeReturned[0]) {
                    afterFreeze++;
                    assertThat(c.answer()).as("a Reserve sent after the freeze answered").isEqualTo("TENANT_MOVING");
                }
                if (c.endNanos() < freezeAsked) {
                    assertThat(c.answer()).as("a Reserve answered before the freeze was asked").isEqualTo("RESERVED");
                }
            }
            assertThat(answers.keySet()).as("answers: " + answers).containsOnly("RESERVED", "TENANT_MOVING");
            assertThat(afterFreeze).isGreaterThanOrEqualTo(THREADS * CALLS_AFTER_FREEZE);
            assertThat(told).hasSize(answers.get("RESERVED")).hasSizeGreaterThanOrEqualTo(RESERVED_BEFORE_FREEZE);

            // The last delta export carries every hold told, exactly, and nothing changes after it.
            MoveCalls.Export last = calls.export(TENANT, before.snapshot(), 0);
            Set<String> exported = new HashSet<>();
            for (TenantRow r : last.rows("holds")) {
                assertThat(field(STATE, r.getJson())).isEqualTo("HELD");
                exported.add(field(HOLD_ID, r.getJson()));
            }
            assertThat(exported).isEqualTo(told);
            assertThat(last.counts().getHolds()).isEqualTo(told.size());
            assertThat(calls.count("SELECT sum(held) FROM buckets WHERE tenant_id = ?", TENANT)).isEqualTo(told.size());
            assertThat(calls.query("SELECT state FROM items WHERE tenant_id = ?", TENANT)).containsExactly("FROZEN");
            MoveCalls.Export after = calls.export(TENANT, last.snapshot(), 0);
            assertThat(after.rowCount()).as("nothing written after the freeze").isZero();
            assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
        }
    }

    private static Call reserveOnce(ShardNodeHarness shard, String key, long start) {
        try {
            ReserveResponse r = shard.blocking().reserve(reserve(TENANT, "hot", key, 1));
            String holdId = r.getOutcome() == ReserveOutcome.RESERVED
                    ? HoldId.decode(r.getHold().getHoldId(), "hold_id").uuid().toString() : "";
            return new Call(start, System.nanoTime(), r.getOutcome().name(), holdId);
        } catch (StatusRuntimeException e) {
            String reason = GrpcErrors.errorInfo(e).map(i -> i.getReason()).orElse(e.getStatus().getCode().name());
            return new Call(start, System.nanoTime(), reason, "");
        }
    }

    private static String field(Pattern p, String json) {
        Matcher m = p.matcher(json);
        assertThat(m.find()).as(json).isTrue();
        return m.group(1);
    }
}
