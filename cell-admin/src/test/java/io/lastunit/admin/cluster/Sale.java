package io.lastunit.admin.cluster;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.testkit.faults.History;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The client and generator of a flash-sale test, Jepsen style: one Reserve per buyer (distinct
 * buyer ids and idempotency keys), at most {@code inFlightMax} calls in flight, each failed call
 * retried with the very same request (so the same key) after a jittered backoff, at most
 * {@code attemptsMax} attempts, and every attempt kept in a history for the checkers.
 *
 * <p>Each buyer's operation ends <b>ok</b> (a reply: RESERVED, SOLD_OUT or LIMIT_EXCEEDED),
 * <b>fail</b> (an error that is not retried, with no ambiguous attempt before it) or
 * <b>unknown</b> (retries exhausted, or a final error after an attempt that may have taken
 * effect). Unknown is never counted as a hold or as no hold: the checkers settle it against the
 * shard's database.
 *
 * <p>Retries wait in a delay queue without holding an in-flight permit, so buyers of an item whose
 * shard is down do not starve the rest of the sale. A test can hold the buyers from given indexes
 * back until it {@link #release}s them ({@link #holdAt}), so that stock is left for after a fault
 * whatever the host's speed. A fault test may also have every attempt recorded in a testkit
 * {@link History} ({@link #record}). Thread-safe; one run per instance.
 */
final class Sale {

    /** An item on sale: its tenant, id and total. */
    record Item(String tenant, String id, long total) {
        String ref() {
            return tenant + "/" + id;
        }
    }

    enum End { RESERVED, SOLD_OUT, LIMIT_EXCEEDED, FAIL, UNKNOWN }

    /** One call as the client saw it: when it was sent and answered, and the reply or status. */
    record Attempt(ReserveRequest request, int n, Instant sentAt, Instant answeredAt, Status.Code code,
                   String reason, ReserveOutcome outcome) {
        String itemRef() {
            return request.getTenantId() + "/" + request.getItemId();
        }
    }

    /** How one buyer's operation ended. {@code ambiguousBefore}: an earlier attempt may have taken effect. */
    record Result(ReserveRequest request, End end, Hold hold, int attempts, Status.Code lastCode, String lastReason,
                  boolean ambiguousBefore) {
        String itemRef() {
            return request.getTenantId() + "/" + request.getItemId();
        }
    }

    /** Errors retried with the same request; anything else ends the operation. */
    private static final Set<Status.Code> RETRIED = Set.of(Status.Code.UNAVAILABLE, Status.Code.RESOURCE_EXHAUSTED,
            Status.Code.DEADLINE_EXCEEDED, Status.Code.ABORTED);
    /** Refusals the router makes before routing: they certainly did nothing. */
    private static final Set<String> SHED_REASONS = Set.of("RATE_LIMITED", "ITEM_BUSY");

    private final InventoryServiceGrpc.InventoryServiceStub stub;
    private final List<ReserveRequest> requests;
    private final int attemptsMax;
    private final Duration backoffMax;
    private final Duration callDeadline;
    private final double freshPerSecond;
    private final Semaphore permits;
    private final DelayQueue<Pending> retries = new DelayQueue<>();
    private final ConcurrentLinkedQueue<Attempt> history = new ConcurrentLinkedQueue<>();
    private final Map<String, Result> results = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> reservedByItem = new ConcurrentHashMap<>();
    private final AtomicInteger reserved = new AtomicInteger();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final CountDownLatch done;
    /** Indexes of {@link #requests} whose buyers, and all after them, wait for a {@link #release}; ascending. */
    private volatile int[] gates = new int[0];
    private final AtomicInteger released = new AtomicInteger();
    private volatile boolean stopped;
    private volatile History recorder;
    private Thread driver;

    /**
     * @param freshPerSecond pace of first attempts (0 = as fast as permits allow); retries are not paced
     */
    Sale(InventoryServiceGrpc.InventoryServiceStub stub, List<ReserveRequest> requests, int inFlightMax,
         int attemptsMax, Duration backoffMax, Duration callDeadline, double freshPerSecond) {
        this.stub = stub;
        this.requests = List.copyOf(requests);
        this.attemptsMax = attemptsMax;
        this.backoffMax = backoffMax;
        this.callDeadline = callDeadline;
        this.freshPerSecond = freshPerSecond;
        this.permits = new Semaphore(inFlightMax);
        this.done = new CountDownLatch(this.requests.size());
    }

    /** {@code count} buyers spread round-robin over {@code items}, one unit each, keys {@code prefix-k-i}. */
    static List<ReserveRequest> buyers(List<Item> items, int count, String prefix) {
        List<ReserveRequest> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            Item it = items.get(i % items.size());
            out.add(ReserveRequest.newBuilder().setTenantId(it.tenant()).setItemId(it.id()).setQuantity(1)
                    .setIdempotencyKey(prefix + "-k-" + i).setBuyerId(prefix + "-b-" + i).setRegion("local").build());
        }
        return out;
    }

    /**
     * Holds back the first attempts of the buyers from each of {@code indexes} on until the test
     * calls {@link #release} once per index, in order (retries still go). A test that must see
     * units sold after a fault keeps them this way: the buyers before the first index cannot buy
     * more than they are, so the rest is sold only after the test released it, however fast or
     * slowly the host ran the first part. Call before {@link #start}.
     */
    Sale holdAt(int... indexes) {
        int[] sorted = indexes.clone();
        java.util.Arrays.sort(sorted);
        gates = sorted;
        return this;
    }

    /** Lets the buyers up to the next index given to {@link #holdAt} (or all, after the last) go. */
    void release() {
        released.incrementAndGet();
    }

    private boolean heldBack(int index) {
        int closed = 0;
        for (int g : gates) {
            if (g <= index) {
                closed++;
            }
        }
        return closed > released.get();
    }

    /**
     * Records every attempt in {@code h} as well, under its idempotency key: ok (RESERVED, with the
     * hold id), fail (SOLD_OUT or LIMIT_EXCEEDED, a shed refusal, or any error that is not retried:
     * definite) or unknown (an error the sale retries that the router did not shed: the Reserve may
     * have been placed). Call before {@link #start}.
     */
    Sale record(History h) {
        this.recorder = h;
        return this;
    }

    /** Process name of a buyer's attempts in a recorded {@link History}. */
    static String process(ReserveRequest r) {
        return "buyer-" + r.getBuyerId();
    }

    Sale start() {
        driver = new Thread(this::drive, "sale-driver");
        driver.setDaemon(true);
        driver.start();
        return this;
    }

    /** Waits until every buyer's operation has ended. */
    boolean await(Duration max) throws InterruptedException {
        return done.await(max.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Stops sending (after a failed test); operations not ended stay out of {@link #results()}. */
    void stop() {
        stopped = true;
        if (driver != null) {
            driver.interrupt();
        }
    }

    int reserved() {
        return reserved.get();
    }

    int reserved(Item item) {
        AtomicInteger n = reservedByItem.get(item.ref());
        return n == null ? 0 : n.get();
    }

    long ended() {
        return requests.size() - done.getCount();
    }

    Collection<Result> results() {
        return results.values();
    }

    List<Attempt> history() {
        return List.copyOf(history);
    }

    private void drive() {
        long t0 = System.nanoTime();
        int next = 0;
        boolean waited = false;
        try {
            while (!stopped && done.getCount() > 0) {
                Pending p = retries.poll();
                if (p == null && next < requests.size()) {
                    if (heldBack(next)) {
                        waited = true;
                    } else {
                        if (waited && freshPerSecond > 0) {
                            t0 = System.nanoTime() - (long) (next * 1e9 / freshPerSecond); // paced from the release
                        }
                        waited = false;
                        if (freshPerSecond <= 0 || System.nanoTime() - t0 >= (long) (next * 1e9 / freshPerSecond)) {
                            p = new Pending(requests.get(next++), 1, false, 0);
                        }
                    }
                }
                if (p == null) {
                    p = retries.poll(2, TimeUnit.MILLISECONDS);
                    if (p == null) {
                        continue;
                    }
                }
                permits.acquire();
                send(p);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void send(Pending p) {
        Instant sentAt = Instant.now();
        History h = recorder;
        History.Op op = h == null ? null : h.invoke(process(p.request), "reserve", p.request.getIdempotencyKey());
        inFlight.incrementAndGet();
        stub.withDeadlineAfter(callDeadline.toMillis(), TimeUnit.MILLISECONDS).reserve(p.request,
                new StreamObserver<>() {
                    private ReserveResponse reply;

                    @Override
                    public void onNext(ReserveResponse r) {
                        reply = r;
                    }

                    @Override
                    public void onError(Throwable t) {
                        recordAnswer(op, null, t);
                        answered(p, sentAt, null, t);
                    }

                    @Override
                    public void onCompleted() {
                        recordAnswer(op, reply, null);
                        answered(p, sentAt, reply, null);
                    }
                });
    }

    /** Completes a recorded attempt: what its reply or error says about whether it took effect. */
    static void recordAnswer(History.Op op, ReserveResponse reply, Throwable error) {
        if (op == null) {
            return;
        }
        if (reply != null) {
            if (reply.getOutcome() == ReserveOutcome.RESERVED) {
                op.ok(reply.getHold().getHoldId());
            } else {
                op.fail(reply.getOutcome().name());
            }
            return;
        }
        Status.Code code = ClusterClients.code(error);
        String reason = ClusterClients.reason(error);
        boolean shed = code == Status.Code.RESOURCE_EXHAUSTED && SHED_REASONS.contains(reason);
        if (shed || !RETRIED.contains(code)) {
            op.fail(code + "/" + reason);
        } else {
            op.unknown(code + "/" + reason);
        }
    }

    private void answered(Pending p, Instant sentAt, ReserveResponse reply, Throwable error) {
        Instant at = Instant.now();
        inFlight.decrementAndGet();
        permits.release();
        if (reply != null) {
            history.add(new Attempt(p.request, p.n, sentAt, at, Status.Code.OK, "", reply.getOutcome()));
            End end = switch (reply.getOutcome()) {
                case RESERVED -> End.RESERVED;
                case SOLD_OUT -> End.SOLD_OUT;
                case LIMIT_EXCEEDED -> End.LIMIT_EXCEEDED;
                default -> End.UNKNOWN;
            };
            finish(new Result(p.request, end, end == End.RESERVED ? reply.getHold() : null, p.n, Status.Code.OK, "",
                    p.ambiguous));
            return;
        }
        Status.Code code = ClusterClients.code(error);
        String reason = ClusterClients.reason(error);
        history.add(new Attempt(p.request, p.n, sentAt, at, code, reason, null));
        boolean ambiguous = p.ambiguous || !(code == Status.Code.RESOURCE_EXHAUSTED && SHED_REASONS.contains(reason));
        if (RETRIED.contains(code) && p.n < attemptsMax && !stopped) {
            retries.add(new Pending(p.request, p.n + 1, ambiguous, backoffNanos(p.n)));
            return;
        }
        End end = RETRIED.contains(code) || p.ambiguous ? End.UNKNOWN : End.FAIL;
        finish(new Result(p.request, end, null, p.n, code, reason, p.ambiguous));
    }

    private long backoffNanos(int n) {
        long capMs = backoffMax.toMillis();
        long ms = Math.min(capMs, 5L << Math.min(n - 1, 20));
        return TimeUnit.MILLISECONDS.toNanos(ms / 2 + ThreadLocalRandom.current().nextLong(ms / 2 + 1));
    }

    private void finish(Result r) {
        if (results.putIfAbsent(r.request().getIdempotencyKey(), r) != null) {
            throw new IllegalStateException("operation " + r.request().getIdempotencyKey() + " ended twice");
        }
        if (r.end() == End.RESERVED) {
            reserved.incrementAndGet();
            reservedByItem.computeIfAbsent(r.itemRef(), k -> new AtomicInteger()).incrementAndGet();
        }
        done.countDown();
    }

    /** A call to make, now or after its backoff. */
    private static final class Pending implements Delayed {
        final ReserveRequest request;
        final int n;
        final boolean ambiguous;
        final long dueNanos;

        Pending(ReserveRequest request, int n, boolean ambiguous, long delayNanos) {
            this.request = request;
            this.n = n;
            this.ambiguous = ambiguous;
            this.dueNanos = System.nanoTime() + delayNanos;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(dueNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed o) {
            return Long.compare(dueNanos, ((Pending) o).dueNanos);
        }
    }

    @Override
    public String toString() {
        Map<End, Integer> ends = new java.util.EnumMap<>(End.class);
        for (Result r : results.values()) {
            ends.merge(r.end(), 1, Integer::sum);
        }
        return "Sale{buyers=" + requests.size() + ", ended=" + ended() + ", " + ends + ", inFlight=" + inFlight.get()
                + ", retriesWaiting=" + retries.size() + ", attempts=" + history.size() + ", gates=" + gates.length
                + ", released=" + released.get() + "}";
    }
}
