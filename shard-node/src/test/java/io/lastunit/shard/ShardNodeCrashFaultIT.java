package io.lastunit.shard;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.MoreExecutors;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetHoldRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.HoldState;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * kill -9 of a shard node in the middle of a sale: the node runs as its own JVM (the packaged
 * jar, as in production), is killed with SIGKILL while thousands of Reserves are in flight,
 * and a new node on the same database must hold every hold that was acknowledged before the
 * kill. Calls that got no answer are "unknown" (Jepsen's word): retried with the same key they
 * resolve to exactly one hold or SOLD_OUT, and the invariants hold.
 */
class ShardNodeCrashFaultIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    @Test
    void everyAcknowledgedHold_survivesKillMinus9_ofTheShardNode() throws Exception {
        ShardNodeProcess node = ShardNodeProcess.start("crash-test", Map.of(
                "lastunit.shard.id", "crash-test",
                "lastunit.shard.jdbc-url", PG.jdbcUrl(),
                "lastunit.shard.jdbc-user", PG.user(),
                "lastunit.shard.jdbc-password", PG.password()));
        Map<String, Hold> acked = new ConcurrentHashMap<>();
        Map<String, ReserveRequest> unknown = new ConcurrentHashMap<>();
        int calls = 20_000;
        try {
            node.blocking().createItem(CreateItemRequest.newBuilder()
                    .setTenantId("acme").setItemId("drop").setTotal(3_000).setHomeRegion("local").build());

            List<ReserveRequest> requests = new ArrayList<>(calls);
            for (int i = 0; i < calls; i++) {
                requests.add(ReserveRequest.newBuilder().setTenantId("acme").setItemId("drop").setQuantity(1)
                        .setIdempotencyKey("crash-" + i).setBuyerId("b-" + i).setRegion("local").build());
            }
            sellThenKill(node, requests, acked, unknown);
        } finally {
            node.close();
        }
        System.out.printf("ShardNodeCrashFaultIT: %d acknowledged, %d unknown at the kill%n", acked.size(), unknown.size());
        assertThat(unknown).as("the kill landed mid-sale").isNotEmpty();

        try (ShardNodeHarness after = new ShardNodeHarness(PG, Map.of()).start()) {
            for (Hold h : acked.values()) {
                Hold now = after.blocking().getHold(GetHoldRequest.newBuilder().setHoldId(h.getHoldId()).build()).getHold();
                assertThat(now.getState()).isEqualTo(HoldState.HELD);
                assertThat(now.getIdempotencyKey()).isEqualTo(h.getIdempotencyKey());
                assertThat(now.getQuantity()).isEqualTo(1);
            }
            // Unknown outcomes, retried with the same key: each resolves to one hold or SOLD_OUT.
            AtomicInteger resolvedHeld = new AtomicInteger();
            List<ReserveRequest> retries = new ArrayList<>(unknown.values());
            for (ReserveRequest r : retries) {
                ReserveResponse resp = after.blocking().reserve(r);
                if (resp.getOutcome() == ReserveOutcome.RESERVED) {
                    resolvedHeld.incrementAndGet();
                } else {
                    assertThat(resp.getOutcome()).isEqualTo(ReserveOutcome.SOLD_OUT);
                }
            }
            Stock s = after.blocking().getStock(GetStockRequest.newBuilder().setTenantId("acme").setItemId("drop")
                    .build()).getStock();
            assertThat(s.getHeld()).isEqualTo(acked.size() + resolvedHeld.get());
            assertThat(s.getAvailable() + s.getHeld()).isEqualTo(3_000);
            assertThat(after.checkInvariants().getDriftsList()).isEmpty();
        }
    }

    /**
     * The same for a seated event: every acknowledged seat hold exists after the kill with the
     * same seats, no seat is in two holds (acknowledged or resolved by retry), and the invariants
     * hold, seats included.
     */
    @Test
    void everyAcknowledgedSeatHold_survivesKillMinus9_withItsSeats() throws Exception {
        ShardNodeProcess node = ShardNodeProcess.start("crash-seats", Map.of(
                "lastunit.shard.id", "crash-seats",
                "lastunit.shard.jdbc-url", PG.jdbcUrl(),
                "lastunit.shard.jdbc-user", PG.user(),
                "lastunit.shard.jdbc-password", PG.password()));
        Map<String, Hold> acked = new ConcurrentHashMap<>();
        Map<String, ReserveRequest> unknown = new ConcurrentHashMap<>();
        int calls = 20_000;
        try {
            node.blocking().createItem(CreateItemRequest.newBuilder().setTenantId("acme").setItemId("stadium")
                    .setHomeRegion("local").setKind(io.lastunit.api.inventory.v1.ItemKind.SEATED)
                    .setSeatMap(SeatsIT.venue(5, 40, 25, 12)).build());
            java.util.Random rnd = new java.util.Random(9);
            List<ReserveRequest> requests = new ArrayList<>(calls);
            for (int i = 0; i < calls; i++) {
                io.lastunit.api.inventory.v1.SeatMode mode = i % 3 == 0 ? io.lastunit.api.inventory.v1.SeatMode.ANY
                        : io.lastunit.api.inventory.v1.SeatMode.ADJACENT;
                requests.add(SeatsIT.seats("stadium", "seat-crash-" + i, mode, 1 + rnd.nextInt(4)));
            }
            sellThenKill(node, requests, acked, unknown);
        } finally {
            node.close();
        }
        System.out.printf("ShardNodeCrashFaultIT (seats): %d acknowledged, %d unknown at the kill%n", acked.size(),
                unknown.size());
        assertThat(unknown).as("the kill landed mid-sale").isNotEmpty();

        try (ShardNodeHarness after = new ShardNodeHarness(PG, Map.of()).start()) {
            Map<String, String> seatToKey = new java.util.HashMap<>();
            long heldSeats = 0;
            for (Hold h : acked.values()) {
                Hold now = after.blocking().getHold(GetHoldRequest.newBuilder().setHoldId(h.getHoldId()).build()).getHold();
                assertThat(now.getState()).isEqualTo(HoldState.HELD);
                assertThat(now.getSeatIdsList()).isEqualTo(h.getSeatIdsList());
                for (String seat : now.getSeatIdsList()) {
                    assertThat(seatToKey.put(seat, h.getIdempotencyKey())).as("seat %s in two holds", seat).isNull();
                }
                heldSeats += now.getQuantity();
            }
            for (ReserveRequest r : new ArrayList<>(unknown.values())) {
                ReserveResponse resp = after.blocking().reserve(r);
                if (resp.getOutcome() == ReserveOutcome.RESERVED) {
                    for (String seat : resp.getHold().getSeatIdsList()) {
                        assertThat(seatToKey.put(seat, r.getIdempotencyKey())).as("seat %s in two holds", seat).isNull();
                    }
                    heldSeats += resp.getHold().getQuantity();
                } else {
                    assertThat(resp.getOutcome()).isEqualTo(ReserveOutcome.SOLD_OUT);
                }
            }
            Stock s = after.blocking().getStock(GetStockRequest.newBuilder().setTenantId("acme").setItemId("stadium")
                    .build()).getStock();
            assertThat(s.getHeld()).isEqualTo(heldSeats);
            assertThat(s.getAvailable() + s.getHeld()).isEqualTo(5_000);
            var map = after.blocking().getSeatMap(io.lastunit.api.inventory.v1.GetSeatMapRequest.newBuilder()
                    .setTenantId("acme").setItemId("stadium").build());
            assertThat(map.getHeld()).isEqualTo(heldSeats);
            assertThat(after.checkInvariants().getDriftsList()).isEmpty();
        }
    }

    /**
     * Sends every request at once (asynchronous stub), kills the node with SIGKILL once 500 holds
     * are acknowledged, and waits until every call is answered or failed: the acknowledged holds by
     * key in {@code acked}, the calls with no answer (outcome unknown) in {@code unknown}.
     */
    private static void sellThenKill(ShardNodeProcess node, List<ReserveRequest> requests, Map<String, Hold> acked,
                                     Map<String, ReserveRequest> unknown) throws Exception {
        var stub = node.async();
        CountDownLatch enoughAcked = new CountDownLatch(500);
        CountDownLatch allAnswered = new CountDownLatch(requests.size());
        for (ReserveRequest req : requests) {
            Futures.addCallback(stub.reserve(req), new FutureCallback<>() {
                @Override
                public void onSuccess(ReserveResponse r) {
                    if (r.getOutcome() == ReserveOutcome.RESERVED) {
                        acked.put(req.getIdempotencyKey(), r.getHold());
                        enoughAcked.countDown();
                    }
                    allAnswered.countDown();
                }

                @Override
                public void onFailure(Throwable t) {
                    unknown.put(req.getIdempotencyKey(), req);
                    allAnswered.countDown();
                }
            }, MoreExecutors.directExecutor());
        }
        assertThat(enoughAcked.await(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS))
                .as("500 holds acknowledged before the kill").isTrue();
        node.kill(); // SIGKILL: no shutdown hook, no draining
        assertThat(allAnswered.await(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS))
                .as("every call answered or failed after the kill").isTrue();
    }
}
