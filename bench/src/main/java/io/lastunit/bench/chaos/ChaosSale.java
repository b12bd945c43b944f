package io.lastunit.bench.chaos;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.MoreExecutors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.testkit.faults.History;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * The sale a chaos run drives: {@code buyers} buyers, each one Reserve of one unit with its own
 * idempotency key, sent open loop at {@code rate} a second through the router, on {@code items}
 * items of {@link #unitsPerItem} units each (buyer n asks for item n mod items), at most
 * {@link #IN_FLIGHT_MAX} in flight (a buyer whose turn finds none free waits; one still waiting
 * when the sale ends is not sent). Every call is recorded in a {@link History}: ok (RESERVED, with
 * the hold id), fail (SOLD_OUT: definite) or unknown (any status: the outcome may be either), and
 * each call is sent once during the sale, so the history is what the clients saw.
 * {@link #resolve} then retries every unknown by its key until its answer is definite.
 *
 * <p>Thread-safe where it must be: the sender is one thread, answers arrive on gRPC's.
 */
final class ChaosSale {
    static final int IN_FLIGHT_MAX = 256;
    static final Duration CALL_DEADLINE = Duration.ofSeconds(10);
    /** How long the unknowns may take to resolve, all together. */
    static final Duration RESOLVE_MAX = Duration.ofSeconds(120);
    /** Units of all items together, as a share of the buyers: the sale sells out near its end. */
    static final double UNITS_PER_BUYER = 0.9;

    /** A key's definite answer: the hold id when RESERVED, null when SOLD_OUT. */
    record Answer(String key, int item, String holdId) {
        boolean reserved() {
            return holdId != null;
        }
    }

    private final InventoryServiceGrpc.InventoryServiceFutureStub api;
    private volatile History history;
    private final int buyers;
    private final int items;
    private final long unitsPerItem;
    private final long rate;
    private final long holdTtlMs;
    private final AtomicLongArray sentPerItem;
    private final Map<String, Answer> answers = new ConcurrentHashMap<>();
    private final Map<String, ReserveRequest> unknown = new ConcurrentHashMap<>();
    private final Semaphore inFlight = new Semaphore(IN_FLIGHT_MAX);
    private volatile boolean stopped;
    private Thread sender;

    ChaosSale(InventoryServiceGrpc.InventoryServiceFutureStub api, int buyers, int items, Duration sale,
              Duration holdTtl) {
        this.api = api;
        this.buyers = buyers;
        this.items = items;
        this.unitsPerItem = Math.max(1, (long) (buyers * UNITS_PER_BUYER) / items);
        this.rate = Math.max(1, Math.round(buyers / (sale.toMillis() / 1e3)));
        this.holdTtlMs = holdTtl.toMillis();
        this.sentPerItem = new AtomicLongArray(items);
    }

    long unitsPerItem() {
        return unitsPerItem;
    }

    long rate() {
        return rate;
    }

    int items() {
        return items;
    }

    static String itemId(int i) {
        return "item-" + i;
    }

    void createItems() throws Exception {
        for (int i = 0; i < items; i++) {
            api.withDeadlineAfter(60, TimeUnit.SECONDS).createItem(CreateItemRequest.newBuilder()
                    .setTenantId(ChaosPlatform.TENANT).setItemId(itemId(i)).setTotal(unitsPerItem)
                    .setHomeRegion(ChaosPlatform.REGION).build()).get(60, TimeUnit.SECONDS);
        }
    }

    private ReserveRequest request(int buyer) {
        return ReserveRequest.newBuilder().setTenantId(ChaosPlatform.TENANT).setItemId(itemId(buyer % items))
                .setQuantity(1).setIdempotencyKey("chaos-" + buyer).setBuyerId("buyer-" + buyer)
                .setRegion(ChaosPlatform.REGION).setHoldTtlMs(holdTtlMs).build();
    }

    /** Starts sending, recording into {@code h}, until every buyer was sent or {@link #stop} is called. */
    void start(History h) {
        this.history = h;
        sender = new Thread(this::send, "chaos-sale");
        sender.setDaemon(true);
        sender.start();
    }

    private void send() {
        long interval = 1_000_000_000L / rate;
        long next = System.nanoTime();
        for (int buyer = 0; buyer < buyers && !stopped; ) {
            long now = System.nanoTime();
            if (now < next) {
                LockSupport.parkNanos(next - now);
                continue;
            }
            next += interval;
            try {
                while (!inFlight.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                    if (stopped) {
                        return;
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            int b = buyer++;
            ReserveRequest r = request(b);
            sentPerItem.incrementAndGet(b % items);
            History.Op op = history.invoke("buyer", "reserve", r.getIdempotencyKey());
            Futures.addCallback(api.withDeadlineAfter(CALL_DEADLINE.toMillis(), TimeUnit.MILLISECONDS).reserve(r),
                    new FutureCallback<>() {
                        @Override
                        public void onSuccess(ReserveResponse a) {
                            record(r, op, a);
                            inFlight.release();
                        }

                        @Override
                        public void onFailure(Throwable t) {
                            unknown.put(r.getIdempotencyKey(), r);
                            op.unknown(Status.fromThrowable(t).getCode().name());
                            inFlight.release();
                        }
                    }, MoreExecutors.directExecutor());
        }
    }

    private void record(ReserveRequest r, History.Op op, ReserveResponse a) {
        int item = Integer.parseInt(r.getItemId().substring("item-".length()));
        if (a.getOutcome() == ReserveOutcome.RESERVED) {
            answers.put(r.getIdempotencyKey(), new Answer(r.getIdempotencyKey(), item, a.getHold().getHoldId()));
            op.ok(a.getHold().getHoldId());
        } else {
            answers.put(r.getIdempotencyKey(), new Answer(r.getIdempotencyKey(), item, null));
            op.fail(a.getOutcome().name());
        }
    }

    /** Stops sending and waits, bounded, for every call in flight to end; false if some did not. */
    boolean stop() throws InterruptedException {
        stopped = true;
        if (sender != null) {
            sender.join(TimeUnit.SECONDS.toMillis(15));
        }
        boolean all = inFlight.tryAcquire(IN_FLIGHT_MAX, CALL_DEADLINE.toMillis() + 5_000, TimeUnit.MILLISECONDS);
        if (all) {
            inFlight.release(IN_FLIGHT_MAX);
        }
        return all;
    }

    /**
     * Retries every unknown by its key, one at a time, until the answer is definite, for at most
     * {@link #RESOLVE_MAX} in all; returns how many were answered RESERVED by a retry, and leaves
     * the ones the bound cut off in {@link #unresolved()}.
     */
    int resolve() throws InterruptedException {
        int reserved = 0;
        long deadline = System.nanoTime() + RESOLVE_MAX.toNanos();
        for (ReserveRequest r : new java.util.ArrayList<>(unknown.values())) {
            while (System.nanoTime() < deadline) {
                try {
                    ReserveResponse a = InventoryServiceGrpc.newBlockingStub(api.getChannel())
                            .withDeadlineAfter(CALL_DEADLINE.toMillis(), TimeUnit.MILLISECONDS).reserve(r);
                    int item = Integer.parseInt(r.getItemId().substring("item-".length()));
                    answers.put(r.getIdempotencyKey(), new Answer(r.getIdempotencyKey(), item,
                            a.getOutcome() == ReserveOutcome.RESERVED ? a.getHold().getHoldId() : null));
                    unknown.remove(r.getIdempotencyKey());
                    reserved += a.getOutcome() == ReserveOutcome.RESERVED ? 1 : 0;
                    break;
                } catch (StatusRuntimeException e) {
                    Thread.sleep(100);
                }
            }
        }
        return reserved;
    }

    /** Every key sent and its definite answer (after {@link #resolve}), by key. */
    Map<String, Answer> answers() {
        return Map.copyOf(answers);
    }

    /** Unknowns {@link #resolve} could not answer within its bound. */
    Map<String, ReserveRequest> unresolved() {
        return Map.copyOf(unknown);
    }

    /** Buyers sent per item. */
    Map<Integer, Long> sentPerItem() {
        Map<Integer, Long> out = new LinkedHashMap<>();
        for (int i = 0; i < items; i++) {
            out.put(i, sentPerItem.get(i));
        }
        return out;
    }

    long sent() {
        long n = 0;
        for (int i = 0; i < items; i++) {
            n += sentPerItem.get(i);
        }
        return n;
    }
}
