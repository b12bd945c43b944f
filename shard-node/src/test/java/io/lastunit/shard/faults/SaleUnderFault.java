package io.lastunit.shard.faults;

import static org.assertj.core.api.Assertions.assertThat;


import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.HoldId;
import io.lastunit.testkit.TestTimeouts;
import io.lastunit.testkit.faults.History;
import io.lastunit.testkit.faults.Nemesis;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * One flash sale against a shard node with a nemesis in the middle, recorded as a history and
 * checked (Jepsen's client / nemesis / checker split): {@code buyers} Reserves of one unit each on
 * {@code clients} threads for an item of {@code total} units; the nemesis starts once
 * {@code startAfterOk} Reserves were acknowledged and stops once {@code healAfterDone} more calls
 * have ended (or a bound of time passed, whichever first). Every call ends ok (RESERVED, with its
 * hold id), fail (SOLD_OUT: definite) or unknown (UNAVAILABLE, DEADLINE_EXCEEDED: the commit may
 * or may not have happened). Then every unknown is resolved by retrying its key until a definite
 * answer, and {@link #check} asserts: exactly {@code min(total, buyers)} holds, one per RESERVED
 * key; every acknowledged hold present in the database, HELD, with the id it was told; no key with
 * two holds; the item's counters exact.
 */
final class SaleUnderFault {
    /** What the sale came to. */
    record Result(History history, Map<String, String> acked, Map<String, String> resolved, int soldOut,
                  long nemesisStartedAt, long nemesisStoppedAt, long historyOrigin) {
        int reserved() {
            return acked.size() + resolved.size();
        }

        /**
         * Recovery time: from the last acknowledgement before the nemesis started to the first of a
         * call made after it started; -1 when there is no such pair.
         */
        long recoveryMillis() {
            long start = nemesisStartedAt - historyOrigin;
            long lastBefore = -1;
            long firstAfter = Long.MAX_VALUE;
            for (History.Entry e : history.entries()) {
                if (e.outcome() != History.Outcome.OK) {
                    continue;
                }
                if (e.completeNanos() < start) {
                    lastBefore = Math.max(lastBefore, e.completeNanos());
                } else if (e.invokeNanos() > start) {
                    firstAfter = Math.min(firstAfter, e.completeNanos());
                }
            }
            return lastBefore < 0 || firstAfter == Long.MAX_VALUE ? -1 : (firstAfter - lastBefore) / 1_000_000;
        }

        /** From the nemesis healed to the first acknowledgement after it; -1 when none came after. */
        long healedToFirstAckMillis() {
            long healed = nemesisStoppedAt - historyOrigin;
            long first = Long.MAX_VALUE;
            for (History.Entry e : history.entries()) {
                if (e.outcome() == History.Outcome.OK && e.completeNanos() >= healed) {
                    first = Math.min(first, e.completeNanos());
                }
            }
            return first == Long.MAX_VALUE ? -1 : (first - healed) / 1_000_000;
        }
    }

    private static final Duration CALL_DEADLINE = Duration.ofSeconds(20);
    private static final Duration NEMESIS_MAX = Duration.ofSeconds(20);
    private static final Duration RESOLVE_MAX = Duration.ofSeconds(120);

    private final Supplier<InventoryServiceGrpc.InventoryServiceBlockingStub> stub;
    private final String tenant;
    private final String item;

    SaleUnderFault(Supplier<InventoryServiceGrpc.InventoryServiceBlockingStub> stub, String tenant, String item) {
        this.stub = stub;
        this.tenant = tenant;
        this.item = item;
    }

    ReserveRequest reserve(int buyer) {
        return ReserveRequest.newBuilder().setTenantId(tenant).setItemId(item).setQuantity(1)
                .setIdempotencyKey(item + "-k" + buyer).setBuyerId("b" + buyer).setRegion("local").build();
    }

    /** The history of the sale running now (for a nemesis that looks at what clients saw), or null. */
    History current() {
        return current;
    }

    private volatile History current;

    Result run(int buyers, int clients, int startAfterOk, int healAfterDone, Nemesis nemesis) throws Exception {
        long origin = System.nanoTime();
        History history = new History();
        current = history;
        Map<String, String> acked = new ConcurrentHashMap<>();
        Map<String, ReserveRequest> unknown = new ConcurrentHashMap<>();
        AtomicInteger soldOut = new AtomicInteger();
        AtomicInteger next = new AtomicInteger();
        AtomicInteger doneAfterStart = new AtomicInteger();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch healNow = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        long[] at = new long[2];
        Thread nemesisThread = new Thread(() -> {
            try {
                started.await();
                nemesis.start();
                at[0] = System.nanoTime();
                healNow.await(TestTimeouts.scaled(NEMESIS_MAX).toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                nemesis.stop();
                at[1] = System.nanoTime();
            }
        }, "nemesis-" + nemesis.name());
        nemesisThread.start();
        try {
            for (int c = 0; c < clients; c++) {
                String process = "client-" + c;
                pool.execute(() -> {
                    for (int i = next.getAndIncrement(); i < buyers; i = next.getAndIncrement()) {
                        ReserveRequest r = reserve(i);
                        History.Op op = history.invoke(process, "reserve", r.getIdempotencyKey());
                        try {
                            ReserveResponse a = stub.get().withDeadlineAfter(TestTimeouts.scaled(CALL_DEADLINE)
                                    .toMillis(), TimeUnit.MILLISECONDS).reserve(r);
                            if (a.getOutcome() == ReserveOutcome.RESERVED) {
                                acked.put(r.getIdempotencyKey(), a.getHold().getHoldId());
                                op.ok(a.getHold().getHoldId());
                                if (acked.size() >= startAfterOk) {
                                    started.countDown();
                                }
                            } else {
                                soldOut.incrementAndGet();
                                op.fail(a.getOutcome().name());
                            }
                        } catch (StatusRuntimeException e) {
                            Status.Code code = e.getStatus().getCode();
                            assertThat(code).as("only retryable answers under a fault: %s", e.getStatus())
                                    .isIn(Status.Code.UNAVAILABLE, Status.Code.DEADLINE_EXCEEDED);
                            unknown.put(r.getIdempotencyKey(), r);
                            op.unknown(code.name() + GrpcErrors.errorInfo(e).map(info -> "/" + info.getReason()).orElse(""));
                        }
                        if (started.getCount() == 0 && doneAfterStart.incrementAndGet() >= healAfterDone) {
                            healNow.countDown();
                        }
                    }
                });
            }
            pool.shutdown();
            assertThat(pool.awaitTermination(TestTimeouts.scaled(Duration.ofMinutes(5)).toMillis(),
                    TimeUnit.MILLISECONDS)).as("the sale ended").isTrue();
        } finally {
            pool.shutdownNow();
            started.countDown();
            healNow.countDown();
            nemesisThread.join(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis());
        }
        history.assertNoPending();
        Map<String, String> resolved = resolve(unknown, soldOut);
        return new Result(history, new HashMap<>(acked), resolved, soldOut.get(), at[0], at[1], origin);
    }

    /** Every unknown retried by its key until the answer is definite (bounded). */
    private Map<String, String> resolve(Map<String, ReserveRequest> unknown, AtomicInteger soldOut)
            throws InterruptedException {
        Map<String, String> resolved = new HashMap<>();
        long deadline = System.nanoTime() + TestTimeouts.scaled(RESOLVE_MAX).toNanos();
        for (ReserveRequest r : unknown.values()) {
            while (true) {
                try {
                    ReserveResponse a = stub.get().withDeadlineAfter(TestTimeouts.scaled(CALL_DEADLINE).toMillis(),
                            TimeUnit.MILLISECONDS).reserve(r);
                    if (a.getOutcome() == ReserveOutcome.RESERVED) {
                        resolved.put(r.getIdempotencyKey(), a.getHold().getHoldId());
                    } else {
                        soldOut.incrementAndGet();
                    }
                    break;
                } catch (StatusRuntimeException e) {
                    assertThat(System.nanoTime()).as("unknown %s resolved within the bound", r.getIdempotencyKey())
                            .isLessThan(deadline);
                    Thread.sleep(50);
                }
            }
        }
        return resolved;
    }

    /** The acknowledged holds the database does not have (as told), each with what it has instead. */
    List<String> lostAcknowledged(Result r, String jdbcUrl, String user, String password) throws Exception {
        Map<String, String> inDb = holdsInDatabase(jdbcUrl, user, password);
        List<String> lost = new ArrayList<>();
        r.acked().forEach((key, id) -> {
            String uuid = HoldId.decode(id, "hold_id").uuid().toString();
            if (!uuid.equals(inDb.get(key))) {
                lost.add(key + " (told " + uuid + ", database has " + inDb.get(key) + ")");
            }
        });
        return lost;
    }

    /** The item's holds in the database by key (each HELD, one per key). */
    private Map<String, String> holdsInDatabase(String jdbcUrl, String user, String password) throws Exception {
        Map<String, String> inDb = new HashMap<>();
        try (Connection c = DriverManager.getConnection(jdbcUrl, user, password);
             PreparedStatement ps = c.prepareStatement("SELECT idempotency_key, hold_id::text, state FROM holds"
                     + " WHERE tenant_id = ? AND item_id = ? AND qty > 0")) {
            ps.setString(1, tenant);
            ps.setString(2, item);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    assertThat(inDb.put(rs.getString(1), rs.getString(2))).as("one hold per key").isNull();
                    assertThat(rs.getString(3)).isEqualTo("HELD");
                }
            }
        }
        return inDb;
    }

    /**
     * The checks every fault test ends with. {@code jdbcUrl} reaches the shard's database directly
     * (not through any proxy of the test).
     */
    void check(Result r, int buyers, long total, String jdbcUrl, String user, String password) throws Exception {
        int expected = (int) Math.min(total, buyers);
        assertThat(r.reserved()).as("RESERVED answers after resolving every unknown").isEqualTo(expected);
        assertThat(r.soldOut()).as("SOLD_OUT answers").isEqualTo(buyers - expected);
        Set<String> ids = new HashSet<>(r.acked().values());
        ids.addAll(r.resolved().values());
        assertThat(ids).as("one hold per RESERVED key").hasSize(expected);
        List<String> lost = lostAcknowledged(r, jdbcUrl, user, password);
        assertThat(lost).as("acknowledged holds missing from the database").isEmpty();
        assertThat(holdsInDatabase(jdbcUrl, user, password)).as("holds in the database").hasSize(expected);
        Stock s = stub.get().getStock(GetStockRequest.newBuilder().setTenantId(tenant).setItemId(item).build())
                .getStock();
        assertThat(s.getTotal()).isEqualTo(total);
        assertThat(s.getHeld()).isEqualTo(expected);
        assertThat(s.getAvailable()).isEqualTo(total - expected);
    }
}
