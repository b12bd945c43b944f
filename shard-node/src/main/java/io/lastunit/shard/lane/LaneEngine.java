package io.lastunit.shard.lane;

import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.CreateItemResponse;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.RestockRequest;
import io.lastunit.api.inventory.v1.RestockResponse;
import io.lastunit.common.Failure;
import io.lastunit.common.HoldId;
import io.lastunit.common.Limits;
import io.lastunit.common.Reason;
import io.lastunit.shard.store.ItemStore;
import io.lastunit.shard.store.LaneStore;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Base64;
import java.util.concurrent.CompletableFuture;
import javax.sql.DataSource;

/**
 * The shard node's write path: a fixed set of single-writer {@link Lane}s, each bucket owned by
 * exactly one lane (by hash). Every state change of stock — Reserve, Confirm, Release, Extend,
 * expiry, CreateItem, Restock — is an operation offered to the owning lane's bounded queue;
 * the returned future completes after the lane's transaction committed.
 *
 * <p>Thread-safe: the submit methods never block (a full queue fails the future at once with
 * QUEUE_FULL) and may be called from transport threads. Requests must be validated first.
 * Lifecycle: {@link #start()} once, {@link #close()} lets the lanes drain what they accepted.
 */
public final class LaneEngine implements AutoCloseable {
    private final Lane[] lanes;
    private final Thread[] threads;
    private final LaneConfig config;
    private final Limits limits;
    private volatile boolean closed;

    public LaneEngine(DataSource dataSource, LaneConfig config, Limits limits, InstantSource clock) {
        this.config = config;
        this.limits = limits;
        LaneStore store = new LaneStore();
        ItemStore items = new ItemStore();
        this.lanes = new Lane[config.laneCount()];
        this.threads = new Thread[config.laneCount()];
        for (int i = 0; i < lanes.length; i++) {
            lanes[i] = new Lane(i, dataSource, store, items, config, limits, clock);
            threads[i] = new Thread(lanes[i], "lane-" + i);
            threads[i].setDaemon(false);
        }
    }

    public void start() {
        for (Thread t : threads) {
            t.start();
        }
    }

    public CompletableFuture<ReserveResponse> reserve(ReserveRequest r) {
        BucketKey bucket = new BucketKey(r.getTenantId(), r.getItemId(), 0);
        CompletableFuture<ReserveResponse> f = new CompletableFuture<>();
        return submit(new Op.Reserve(bucket, r, fingerprint(r), r.getHoldTtlMs(), f), f);
    }

    public CompletableFuture<Hold> confirm(HoldId id, String orderRef) {
        return holdAction(id, Op.HoldAction.Kind.CONFIRM, orderRef);
    }

    public CompletableFuture<Hold> release(HoldId id) {
        return holdAction(id, Op.HoldAction.Kind.RELEASE, null);
    }

    public CompletableFuture<Hold> extend(HoldId id) {
        return holdAction(id, Op.HoldAction.Kind.EXTEND, null);
    }

    private CompletableFuture<Hold> holdAction(HoldId id, Op.HoldAction.Kind kind, String orderRef) {
        BucketKey bucket = new BucketKey(id.tenantId(), id.itemId(), id.bucketNo());
        CompletableFuture<Hold> f = new CompletableFuture<>();
        return submit(new Op.HoldAction(bucket, id, kind, orderRef, f), f);
    }

    public CompletableFuture<CreateItemResponse> createItem(CreateItemRequest r) {
        long ttl = r.getHoldTtlMs() != 0 ? r.getHoldTtlMs() : limits.holdTtlDefaultMs();
        long extendBy = r.getExtendByMs() != 0 ? r.getExtendByMs() : ttl;
        CompletableFuture<CreateItemResponse> f = new CompletableFuture<>();
        return submit(new Op.CreateItem(new BucketKey(r.getTenantId(), r.getItemId(), 0), r, ttl, extendBy, f), f);
    }

    public CompletableFuture<RestockResponse> restock(RestockRequest r) {
        CompletableFuture<RestockResponse> f = new CompletableFuture<>();
        return submit(new Op.Restock(new BucketKey(r.getTenantId(), r.getItemId(), 0), r, f), f);
    }

    /** Asks the owning lane to expire the bucket's due holds; completes with how many it expired. */
    public CompletableFuture<Integer> sweep(String tenant, String item, int bucketNo) {
        CompletableFuture<Integer> f = new CompletableFuture<>();
        return submit(new Op.Sweep(new BucketKey(tenant, item, bucketNo), f), f);
    }

    private <T> CompletableFuture<T> submit(Op op, CompletableFuture<T> f) {
        Lane lane = laneFor(op.bucket());
        if (closed) {
            f.completeExceptionally(Failure.retryable(Reason.SHUTTING_DOWN, "shard node is shutting down",
                    Duration.ofMillis(config.retryAfterMs())));
        } else if (!lane.offer(op)) {
            f.completeExceptionally(Failure.retryable(Reason.QUEUE_FULL, "lane " + lane.index + " queue is full (capacity="
                    + config.queueCapacity() + ", bucket=" + op.bucket() + ")", Duration.ofMillis(config.retryAfterMs())));
        }
        return f;
    }

    private Lane laneFor(BucketKey k) {
        int h = k.tenantId().hashCode() * 31 + k.itemId().hashCode();
        h = h * 31 + k.bucketNo();
        return lanes[Math.floorMod(h ^ (h >>> 16), lanes.length)];
    }

    /** What a Reserve's idempotency key stands for: the request minus the key. */
    static String fingerprint(ReserveRequest r) {
        String canonical = r.getItemId() + '\0' + r.getQuantity() + '\0' + r.getBuyerId() + '\0' + r.getRegion()
                + '\0' + r.getHoldTtlMs();
        byte[] digest = SHA256.get().digest(canonical.getBytes(StandardCharsets.US_ASCII));
        return Base64.getEncoder().withoutPadding().encodeToString(java.util.Arrays.copyOf(digest, 16));
    }

    private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    });

    /** Counters for operators and benchmarks. */
    public record Stats(long batches, long opsApplied, long redos, long transactions, int queued) {
        public double meanBatch() {
            return batches == 0 ? 0 : (double) opsApplied / batches;
        }
    }

    public Stats stats() {
        long b = 0;
        long o = 0;
        long r = 0;
        long t = 0;
        int q = 0;
        for (Lane l : lanes) {
            b += l.batches.get();
            o += l.opsApplied.get();
            r += l.redos.get();
            t += l.transactions.get();
            q += l.depth();
        }
        return new Stats(b, o, r, t, q);
    }

    /** Stops accepting work and waits (bounded) for the lanes to finish what they accepted. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Lane l : lanes) {
            l.stop();
        }
        for (int i = 0; i < threads.length; i++) {
            try {
                threads[i].join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (!threads[i].isAlive()) {
                lanes[i].failQueued(); // anything offered in the instant before `closed` was seen
            }
        }
    }
}
