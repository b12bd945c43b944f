package io.lastunit.shard;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.util.concurrent.ListenableFuture;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.inventory.v1.ConfirmRequest;
import io.lastunit.api.inventory.v1.GetHoldRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.HoldState;
import io.lastunit.api.inventory.v1.ReleaseRequest;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.HoldId;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.TestTimeouts;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The race tests of the foundation: many buyers at once against a real shard node over real
 * gRPC on real PostgreSQL, asserting exact counts and the invariants afterwards.
 */
class FlashSaleIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static ShardNodeHarness shard;

    @BeforeAll
    static void start() throws Exception {
        shard = new ShardNodeHarness(PG, Map.of(
                "lastunit.shard.hold-ttl-min-ms", 200,
                "lastunit.shard.sweep-interval-ms", 100)).start();
    }

    @AfterAll
    static void stop() throws Exception {
        shard.close();
    }

    private static ReserveRequest reserve(String item, String key, String buyer) {
        return ReserveRequest.newBuilder().setTenantId("acme").setItemId(item).setQuantity(1)
                .setIdempotencyKey(key).setBuyerId(buyer).setRegion("local").build();
    }

    private static <T> T get(ListenableFuture<T> f) throws Exception {
        try {
            return f.get(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw (Exception) e.getCause();
        }
    }

    /** Reserve, retrying RESOURCE_EXHAUSTED / UNAVAILABLE with the same key as a real client would. */
    private static CompletableFuture<ReserveResponse> reserveRetrying(ReserveRequest req, AtomicInteger retries) {
        return CompletableFuture.supplyAsync(() -> {
            for (int attempt = 0; ; attempt++) {
                try {
                    return get(shard.async().reserve(req));
                } catch (StatusRuntimeException e) {
                    Status.Code code = e.getStatus().getCode();
                    if ((code != Status.Code.RESOURCE_EXHAUSTED && code != Status.Code.UNAVAILABLE) || attempt >= 50) {
                        throw e;
                    }
                    retries.incrementAndGet();
                    sleep(20);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
        }, POOL);
    }

    private static final java.util.concurrent.ExecutorService POOL = java.util.concurrent.Executors.newFixedThreadPool(512);

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static Stock stock(String item) {
        return shard.blocking().getStock(GetStockRequest.newBuilder().setTenantId("acme").setItemId(item).build())
                .getStock();
    }

    @Test
    void tenThousandConcurrentBuyers_forHundredUnits_sellExactlyHundred() throws Exception {
        shard.createItem("acme", "sneaker", 100);
        int buyers = 10_000;
        AtomicInteger retries = new AtomicInteger();
        List<CompletableFuture<ReserveResponse>> calls = new ArrayList<>(buyers);
        long start = System.nanoTime();
        for (int i = 0; i < buyers; i++) {
            calls.add(reserveRetrying(reserve("sneaker", "k-" + i, "b-" + i), retries));
        }
        int reserved = 0;
        int soldOut = 0;
        Set<String> holdIds = new HashSet<>();
        for (CompletableFuture<ReserveResponse> c : calls) {
            ReserveResponse r = c.get(TestTimeouts.scaled(Duration.ofSeconds(120)).toMillis(), TimeUnit.MILLISECONDS);
            if (r.getOutcome() == ReserveOutcome.RESERVED) {
                reserved++;
                holdIds.add(r.getHold().getHoldId());
            } else if (r.getOutcome() == ReserveOutcome.SOLD_OUT) {
                soldOut++;
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("FlashSaleIT: %d buyers in %.2f s = %.0f reserve calls/s (%d client retries)%n",
                buyers, seconds, buyers / seconds, retries.get());

        assertThat(reserved).isEqualTo(100);
        assertThat(soldOut).isEqualTo(9_900);
        assertThat(holdIds).hasSize(100);
        Stock s = stock("sneaker");
        assertThat(s.getAvailable()).isZero();
        assertThat(s.getHeld()).isEqualTo(100);
        assertThat(s.getSold()).isZero();
        assertThat(s.getTotal()).isEqualTo(100);
        assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
    }

    @Test
    void oneKeySentThousandTimesConcurrently_placesOneHold_andEveryReplyNamesIt() throws Exception {
        shard.createItem("acme", "console", 50);
        List<CompletableFuture<ReserveResponse>> calls = new ArrayList<>();
        AtomicInteger retries = new AtomicInteger();
        for (int i = 0; i < 1_000; i++) {
            calls.add(reserveRetrying(reserve("console", "same-key", "buyer-1"), retries));
        }
        Set<String> holdIds = new HashSet<>();
        for (CompletableFuture<ReserveResponse> c : calls) {
            ReserveResponse r = c.get(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(r.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            holdIds.add(r.getHold().getHoldId());
        }
        assertThat(holdIds).hasSize(1);
        Stock s = stock("console");
        assertThat(s.getHeld()).isEqualTo(1);
        assertThat(s.getAvailable()).isEqualTo(49);

        ReserveRequest other = reserve("console", "same-key", "buyer-1").toBuilder().setQuantity(2).build();
        StatusRuntimeException e = org.junit.jupiter.api.Assertions.assertThrows(StatusRuntimeException.class,
                () -> shard.blocking().reserve(other));
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.ALREADY_EXISTS);
        assertThat(GrpcErrors.errorInfo(e).orElseThrow().getReason()).isEqualTo("IDEMPOTENCY_KEY_REUSED");
        assertThat(stock("console").getHeld()).isEqualTo(1);
        assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
    }

    @Test
    void releaseSentTwiceConcurrently_forThousandHolds_creditsEachOnce() throws Exception {
        shard.createItem("acme", "ticket", 1_000);
        AtomicInteger retries = new AtomicInteger();
        List<CompletableFuture<ReserveResponse>> placed = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            placed.add(reserveRetrying(reserve("ticket", "rel-" + i, "b-" + i), retries));
        }
        List<String> holds = new ArrayList<>();
        for (CompletableFuture<ReserveResponse> p : placed) {
            ReserveResponse r = p.get(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(r.getOutcome()).isEqualTo(ReserveOutcome.RESERVED);
            holds.add(r.getHold().getHoldId());
        }
        assertThat(stock("ticket").getAvailable()).isZero();

        List<ListenableFuture<?>> releases = new ArrayList<>();
        for (String h : holds) {
            ReleaseRequest req = ReleaseRequest.newBuilder().setHoldId(h).build();
            releases.add(shard.async().release(req));
            releases.add(shard.async().release(req));
        }
        int ok = 0;
        int alreadyReleased = 0;
        for (ListenableFuture<?> f : releases) {
            try {
                get(f);
                ok++;
            } catch (StatusRuntimeException e) {
                assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
                var info = GrpcErrors.errorInfo(e).orElseThrow();
                assertThat(info.getReason()).isEqualTo("HOLD_NOT_HELD");
                assertThat(info.getMetadataMap()).containsEntry("state", "RELEASED");
                alreadyReleased++;
            }
        }
        assertThat(ok).isEqualTo(1_000);
        assertThat(alreadyReleased).isEqualTo(1_000);
        Stock s = stock("ticket");
        assertThat(s.getAvailable()).isEqualTo(1_000);
        assertThat(s.getHeld()).isZero();
        assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
    }

    /**
     * Moves the expiries of {@code holds} (database clock) to {@code fromMs} after the database's
     * now, then one every {@code stepMs}, in list order; returns each new expiry, epoch millis, by
     * hold id.
     */
    private static Map<String, Long> spreadExpiries(List<Hold> holds, double fromMs, double stepMs)
            throws SQLException {
        Map<UUID, String> byUuid = new HashMap<>();
        UUID[] ids = new UUID[holds.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = HoldId.decode(holds.get(i).getHoldId(), "hold_id").uuid();
            byUuid.put(ids[i], holds.get(i).getHoldId());
        }
        Map<String, Long> expiry = new HashMap<>();
        try (Connection c = shard.node().dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement("""
                     UPDATE holds h SET expires_at = now() + (?::float8 + (o.n - 1) * ?::float8) * interval '1 millisecond'
                       FROM unnest(?::uuid[]) WITH ORDINALITY AS o(id, n)
                      WHERE h.hold_id = o.id AND h.state = 'HELD'
                     RETURNING h.hold_id, h.expires_at""")) {
            ps.setDouble(1, fromMs);
            ps.setDouble(2, stepMs);
            ps.setArray(3, c.createArrayOf("uuid", ids));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    expiry.put(byUuid.get(rs.getObject(1, UUID.class)), rs.getTimestamp(2).getTime());
                }
            }
            c.commit();
        }
        assertThat(expiry).as("holds whose expiry moved").hasSize(holds.size());
        return expiry;
    }

    @Test
    void confirmRacingExpiry_endsEachHoldSoldOrExpiredExactlyOnce() throws Exception {
        // The holds live ten minutes while they are placed, however long that takes; then their
        // expiries are moved (database clock) to spread over a second starting a second from now
        // (scaled for slow machines), and the confirms are fired across them: the race is between the
        // confirms and the expiry the sweeper (every 100 ms) and the lane carry out, not between the
        // placing and a 1.5 s lifetime (on a busy host every hold had expired before the first confirm).
        shard.createItem("acme", "flash", 1_000);
        AtomicInteger retries = new AtomicInteger();
        List<CompletableFuture<ReserveResponse>> placed = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            placed.add(reserveRetrying(reserve("flash", "race-" + i, "b-" + i), retries));
        }
        List<Hold> holds = new ArrayList<>();
        for (CompletableFuture<ReserveResponse> p : placed) {
            holds.add(p.get(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS).getHold());
        }
        // Fire the confirms across the expiry instants of the holds, so some win and some lose.
        long leadMs = TestTimeouts.scaled(Duration.ofSeconds(1)).toMillis();
        Map<String, Long> expiry = spreadExpiries(holds, leadMs, (double) leadMs / holds.size());
        long firstExpiry = expiry.values().stream().mapToLong(Long::longValue).min().orElseThrow();
        long lastExpiry = expiry.values().stream().mapToLong(Long::longValue).max().orElseThrow();
        long window = lastExpiry - firstExpiry + 2 * leadMs;
        long fireAt = firstExpiry - leadMs;
        while (System.currentTimeMillis() < fireAt) {
            Thread.sleep(5);
        }
        Map<String, String> outcome = new ConcurrentHashMap<>();
        List<CompletableFuture<Void>> confirms = new ArrayList<>();
        for (int i = 0; i < holds.size(); i++) {
            Hold h = holds.get(i);
            ConfirmRequest req = ConfirmRequest.newBuilder().setHoldId(h.getHoldId()).setOrderRef("o-" + i).build();
            confirms.add(CompletableFuture.runAsync(() -> {
                try {
                    get(shard.async().confirm(req));
                    outcome.put(h.getHoldId(), "SOLD");
                } catch (StatusRuntimeException e) {
                    var info = GrpcErrors.errorInfo(e).orElseThrow();
                    assertThat(info.getReason()).isEqualTo("HOLD_NOT_HELD");
                    outcome.put(h.getHoldId(), info.getMetadataMap().get("state"));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, POOL));
            if (i % 50 == 49) {
                Thread.sleep(window / 20);
            }
        }
        CompletableFuture.allOf(confirms.toArray(CompletableFuture[]::new))
                .get(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS);
        long confirmed = outcome.values().stream().filter("SOLD"::equals).count();
        long refused = outcome.values().stream().filter("EXPIRED"::equals).count();
        System.out.printf("FlashSaleIT: confirm vs expiry: %d sold, %d expired%n", confirmed, refused);
        assertThat(confirmed + refused).isEqualTo(1_000);

        // Let the sweeper expire the rest, then every hold is SOLD or EXPIRED, as its confirm said.
        long deadline = System.nanoTime() + TestTimeouts.scaled(Duration.ofSeconds(30)).toNanos();
        while (stock("flash").getHeld() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        for (Hold h : holds) {
            HoldState state = shard.blocking().getHold(GetHoldRequest.newBuilder().setHoldId(h.getHoldId()).build())
                    .getHold().getState();
            assertThat(state.name()).isEqualTo(outcome.get(h.getHoldId()));
        }
        Stock s = stock("flash");
        assertThat(s.getSold()).isEqualTo(confirmed);
        assertThat(s.getHeld()).isZero();
        assertThat(s.getAvailable()).isEqualTo(1_000 - confirmed);
        assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
    }
}
