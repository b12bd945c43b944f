package io.lastunit.shard.lane;

import io.lastunit.shard.store.WriteGate;
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
import io.lastunit.shard.decide.ItemState;
import io.lastunit.shard.escrow.ItemLedger;
import io.lastunit.shard.escrow.ItemLedgers;
import io.lastunit.shard.fence.Fence;
import io.lastunit.shard.fence.TenantEpochs;
import io.lastunit.shard.store.ItemStore;
import io.lastunit.shard.store.LaneStore;
import io.lastunit.shard.store.Transactions;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Base64;
import java.util.Collection;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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
    /** Per item on this shard: open buckets and published levels. Filled by lanes as they load items. */
    private final ItemLedgers ledgers;
    private final Fence fence;
    /** Closed while the database could not acknowledge a commit (StandbyWatch): every lane refuses its batches. */
    private final WriteGate gate = new WriteGate();
    private volatile LaneObserver observer = LaneObserver.NONE;
    /** Tenants a move is importing here ({@link #importing}). */
    private final Set<String> importing = ConcurrentHashMap.newKeySet();

    /**
     * @param epochs the tenants' epochs in the node's topology view, told to callers of items a
     *               move took away ({@link Fence})
     */
    public LaneEngine(DataSource dataSource, LaneConfig config, Limits limits, InstantSource clock,
                      TenantEpochs epochs) {
        this.config = config;
        this.limits = limits;
        LaneStore store = new LaneStore();
        ItemStore items = new ItemStore();
        Transactions transactions = new Transactions(dataSource);
        this.ledgers = new ItemLedgers(store);
        this.lanes = new Lane[config.laneCount()];
        this.threads = new Thread[config.laneCount()];
        Fence fence = new Fence(epochs, Duration.ofMillis(config.retryAfterMs()));
        this.fence = fence;
        for (int i = 0; i < lanes.length; i++) {
            lanes[i] = new Lane(i, this, ledgers, transactions, store, items, config, limits, clock, fence);
            threads[i] = new Thread(lanes[i], "lane-" + i);
            threads[i].setDaemon(false);
        }
    }

    /** How many lanes there are. */
    public int laneCount() {
        return lanes.length;
    }

    /** Batches lane {@code lane} has taken so far (its progress). */
    public long batchesOf(int lane) {
        return lanes[lane].batches.get();
    }

    /** Whether lane {@code lane} is inside a batch now. */
    public boolean busy(int lane) {
        return lanes[lane].busy;
    }

    /** Operations waiting in lane {@code lane}'s queue now. */
    public int queueDepth(int lane) {
        return lanes[lane].depth();
    }

    /** Items the lanes collapsed into bucket 0 so far. */
    public long collapses() {
        long n = 0;
        for (Lane l : lanes) {
            n += l.collapses();
        }
        return n;
    }

    /** Who hears of every batch and refusal from now on (the node's metrics). */
    public void observe(LaneObserver o) {
        this.observer = java.util.Objects.requireNonNull(o, "observer");
    }

    LaneObserver observer() {
        return observer;
    }

    /** The gate every lane looks at before it writes a batch. */
    public WriteGate gate() {
        return gate;
    }

    public void start() {
        for (Thread t : threads) {
            t.start();
        }
    }

    /**
     * Reserve: goes to the open bucket its idempotency key hashes to (bucket 0 while the item is
     * not yet known here; that lane loads the item and sends the request on).
     */
    public CompletableFuture<ReserveResponse> reserve(ReserveRequest r) {
        if (importing.contains(r.getTenantId())) {
            return CompletableFuture.failedFuture(fence.refusal(ItemState.IMPORTING, r.getTenantId(), r.getItemId()));
        }
        ItemLedger ledger = ledgers.get(r.getTenantId(), r.getItemId());
        int bucketNo = ledger == null ? 0 : ledger.bucketFor(r.getIdempotencyKey());
        BucketKey bucket = new BucketKey(r.getTenantId(), r.getItemId(), bucketNo);
        CompletableFuture<ReserveResponse> f = new CompletableFuture<>();
        return submit(new Op.Reserve(bucket, r, fingerprint(r), r.getHoldTtlMs(), null, f), f);
    }

    /**
     * Claims a Reserve's key at this shard, the item's home region {@code homeRegion}, for the hold
     * the request's region placed (ShardService.ClaimKey): through the lane of the bucket the key
     * would be placed in here, like a Reserve. RESERVED with the CLAIMED record when the key is new
     * or was claimed by the same request; IDEMPOTENCY_KEY_REUSED otherwise.
     */
    public CompletableFuture<ReserveResponse> claimKey(ReserveRequest r, String homeRegion) {
        if (importing.contains(r.getTenantId())) {
            return CompletableFuture.failedFuture(fence.refusal(ItemState.IMPORTING, r.getTenantId(), r.getItemId()));
        }
        ItemLedger ledger = ledgers.get(r.getTenantId(), r.getItemId());
        int bucketNo = ledger == null ? 0 : ledger.bucketFor(r.getIdempotencyKey());
        BucketKey bucket = new BucketKey(r.getTenantId(), r.getItemId(), bucketNo);
        CompletableFuture<ReserveResponse> f = new CompletableFuture<>();
        return submit(new Op.Reserve(bucket, r, fingerprint(r), r.getHoldTtlMs(), homeRegion, f), f);
    }

    /** Sends a Reserve decided elsewhere to the lane of another bucket (same future). */
    void reroute(Op.Reserve r, int bucketNo) {
        submit(new Op.Reserve(new BucketKey(r.bucket().tenantId(), r.bucket().itemId(), bucketNo), r.request(),
                r.fingerprint(), r.holdTtlMsRequested(), r.claimHome(), r.future()), r.future());
    }

    /** The item's ledger if this node knows the item, else null. */
    ItemLedger ledger(String tenant, String item) {
        return ledgers.get(tenant, item);
    }

    /** Demand counters of an item since this node started: {reserves, soldOuts}; zeros if unknown. */
    public long[] demand(String tenant, String item) {
        ItemLedger l = ledgers.get(tenant, item);
        return l == null ? new long[2] : l.demand();
    }

    /**
     * Queues the collapse of an item's buckets into bucket 0. The future tells whether it
     * collapsed (false: the item has no buckets here), or fails when the collapse did not commit.
     */
    CompletableFuture<Boolean> collapse(String tenant, String item) {
        CompletableFuture<Boolean> f = new CompletableFuture<>();
        return submit(new Op.Collapse(new BucketKey(tenant, item, 0), f), f);
    }

    public CompletableFuture<io.lastunit.api.shard.v1.Transfer> transferOut(
            io.lastunit.api.shard.v1.TransferOutRequest r) {
        CompletableFuture<io.lastunit.api.shard.v1.Transfer> f = new CompletableFuture<>();
        return submit(new Op.TransferOut(new BucketKey(r.getTenantId(), r.getItemId(), 0), r, f), f);
    }

    public CompletableFuture<io.lastunit.api.shard.v1.Transfer> transferIn(
            io.lastunit.api.shard.v1.TransferInRequest r) {
        CompletableFuture<io.lastunit.api.shard.v1.Transfer> f = new CompletableFuture<>();
        return submit(new Op.TransferIn(new BucketKey(r.getTenantId(), r.getItemId(), 0), r, f), f);
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
        if (importing.contains(id.tenantId())) {
            return CompletableFuture.failedFuture(fence.refusal(ItemState.IMPORTING, id.tenantId(), id.itemId()));
        }
        BucketKey bucket = new BucketKey(id.tenantId(), id.itemId(), id.bucketNo());
        CompletableFuture<Hold> f = new CompletableFuture<>();
        return submit(new Op.HoldAction(bucket, id, kind, orderRef, f), f);
    }

    /** Creates the item on this shard, which serves it in {@code region}. */
    public CompletableFuture<CreateItemResponse> createItem(CreateItemRequest r, String region) {
        long ttl = r.getHoldTtlMs() != 0 ? r.getHoldTtlMs() : limits.holdTtlDefaultMs();
        long extendBy = r.getExtendByMs() != 0 ? r.getExtendByMs() : ttl;
        CompletableFuture<CreateItemResponse> f = new CompletableFuture<>();
        return submit(new Op.CreateItem(new BucketKey(r.getTenantId(), r.getItemId(), 0), r, region, ttl, extendBy, f), f);
    }

    public CompletableFuture<RestockResponse> restock(RestockRequest r) {
        CompletableFuture<RestockResponse> f = new CompletableFuture<>();
        return submit(new Op.Restock(new BucketKey(r.getTenantId(), r.getItemId(), 0), r, f), f);
    }

    /** Takes seats of a SEATED item off sale or puts them back, through the item's lane. */
    public CompletableFuture<io.lastunit.api.inventory.v1.SetSeatsOnSaleResponse> setSeatsOnSale(
            io.lastunit.api.inventory.v1.SetSeatsOnSaleRequest r) {
        if (importing.contains(r.getTenantId())) {
            return CompletableFuture.failedFuture(fence.refusal(ItemState.IMPORTING, r.getTenantId(), r.getItemId()));
        }
        CompletableFuture<io.lastunit.api.inventory.v1.SetSeatsOnSaleResponse> f = new CompletableFuture<>();
        return submit(new Op.SetSeats(new BucketKey(r.getTenantId(), r.getItemId(), 0), r, f), f);
    }

    /** Asks the owning lane to expire the bucket's due holds; completes with how many it expired. */
    public CompletableFuture<Integer> sweep(String tenant, String item, int bucketNo) {
        CompletableFuture<Integer> f = new CompletableFuture<>();
        return submit(new Op.Sweep(new BucketKey(tenant, item, bucketNo), f), f);
    }

    /**
     * After a tenant move changed the tenant's items here: every lane drops its cached buckets of
     * the tenant once it has written what it took before this request, so the next call on one reads
     * the item's committed state and rows. The ledgers of {@code ledgersOf} (items no lane sells:
     * see {@link ItemLedgers#forget}) are dropped first. Completes when every lane has done so;
     * fails (QUEUE_FULL, SHUTTING_DOWN) when a lane could not take the request, and the caller
     * repeats its call (each move call is idempotent). Never blocks.
     */
    /**
     * Marks the tenant as being imported here by a move (its items IMPORTING), or no longer. While
     * it is, its Reserves and hold calls are refused at once (UNAVAILABLE / TENANT_MOVING, as its
     * items' state would have the lanes answer) without a lane, so that the calls a router sends on
     * after the move's flip do not queue before the activation, each loading a bucket it cannot use.
     * Memory only: after a restart the lanes answer from the items' state, as before. Hazard: every
     * call of the tenant here is refused while it is marked; a tenant lives in one cell, so a
     * move's target serves none of its items then.
     */
    public void importing(String tenant, boolean importingNow) {
        if (importingNow) {
            importing.add(tenant);
        } else {
            importing.remove(tenant);
        }
    }

    public CompletableFuture<Void> forgetTenant(String tenant, Collection<String> ledgersOf) {
        ledgers.forget(tenant, ledgersOf);
        CompletableFuture<?>[] all = new CompletableFuture<?>[lanes.length];
        for (int i = 0; i < lanes.length; i++) {
            CompletableFuture<Void> f = new CompletableFuture<>();
            all[i] = submitTo(lanes[i], new Op.Forget(tenant, f), f);
        }
        return CompletableFuture.allOf(all);
    }

    private <T> CompletableFuture<T> submit(Op op, CompletableFuture<T> f) {
        return submitTo(laneFor(op.bucket()), op, f);
    }

    private <T> CompletableFuture<T> submitTo(Lane lane, Op op, CompletableFuture<T> f) {
        if (closed) {
            f.completeExceptionally(Failure.retryable(Reason.SHUTTING_DOWN, "shard node is shutting down",
                    Duration.ofMillis(config.retryAfterMs())));
        } else if (!lane.offer(op)) {
            observer.refused(Reason.QUEUE_FULL, 1);
            f.completeExceptionally(Failure.retryable(Reason.QUEUE_FULL, "lane " + lane.index + " queue is full (capacity="
                    + config.queueCapacity() + ", bucket=" + op.bucket() + ")", Duration.ofMillis(config.retryAfterMs())));
        }
        return f;
    }

    private Lane laneFor(BucketKey k) {
        return lanes[laneOf(k.tenantId(), k.itemId(), k.bucketNo())];
    }

    /** The index of the lane that writes bucket {@code bucketNo} of {@code (tenant, item)} here. */
    public int laneOf(String tenant, String item, int bucketNo) {
        return laneOf(tenant, item, bucketNo, lanes.length);
    }

    /**
     * The lane, of {@code laneCount}, that writes bucket {@code bucketNo} of {@code (tenant, item)}.
     * Pure; pinned by {@code LaneEngineTest}: the lanes of one node must agree on it for as long as
     * it runs.
     */
    static int laneOf(String tenant, String item, int bucketNo, int laneCount) {
        int h = tenant.hashCode() * 31 + item.hashCode();
        h = h * 31 + bucketNo;
        return Math.floorMod(h ^ (h >>> 16), laneCount);
    }

    /**
     * What a Reserve's idempotency key stands for: the request minus the key, with the region the
     * client named (its {@code origin_region} when a router sent it on to the item's home region).
     */
    static String fingerprint(ReserveRequest r) {
        String region = r.getOriginRegion().isEmpty() ? r.getRegion() : r.getOriginRegion();
        String canonical = r.getItemId() + '\0' + r.getQuantity() + '\0' + r.getBuyerId() + '\0' + region
                + '\0' + r.getHoldTtlMs();
        if (r.hasSeats()) { // the seats asked for are part of what a key names
            var s = r.getSeats();
            canonical += "\0seats\0" + s.getMode() + '\0' + String.join(",", s.getSeatIdsList()) + '\0'
                    + s.getSectionId() + '\0' + s.getCategory();
        }
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

    /**
     * Counters for operators and benchmarks, summed over the lanes.
     *
     * @param oneStatementBatches of {@code transactions}, batches of new holds alone, written and
     *                            committed as one statement
     * @param oneStatementRefusals one-statement batches the database refused (a key in use, stale
     *                            counters): nothing written, decided again statement by statement
     * @param paced               batches that waited for the batch interval (docs/lanes.md, "Pacing")
     * @param bucketLoads         buckets loaded whole into a lane's cache: the row and its keys
     * @param writeNanos          time spent by the batches that committed a transaction, from the
     *                            start of their decision to the end of their commit (the database's
     *                            part: the round trips, the statements and the WAL flush, with the
     *                            decision in memory)
     * @param borrows             borrows committed: a dry bucket taking units from a sibling, each in
     *                            a transaction of its own (docs/escrow-buckets.md, "Borrowing")
     * @param borrowedUnits       the units those borrows moved
     * @param lockTimeouts        batches decided again because a borrow waited for a row lock
     *                            longer than {@code Borrower.BORROW_LOCK_TIMEOUT_MILLIS}
     * @param checkViolations     batches failed because a CHECK constraint refused what a lane
     *                            decided (SQL state 23514): each one a bug, answered INTERNAL
     */
    public record Stats(long batches, long opsApplied, long redos, long transactions, long oneStatementBatches,
                        long oneStatementRefusals, long paced, long bucketLoads, int queued, long writeNanos,
                        long borrows, long borrowedUnits, long lockTimeouts, long checkViolations) {
        public double meanBatch() {
            return batches == 0 ? 0 : (double) opsApplied / batches;
        }
    }

    public Stats stats() {
        long b = 0;
        long o = 0;
        long r = 0;
        long t = 0;
        long one = 0;
        long refused = 0;
        long paced = 0;
        long loads = 0;
        long write = 0;
        long borrows = 0;
        long borrowed = 0;
        long timeouts = 0;
        long checks = 0;
        int q = 0;
        for (Lane l : lanes) {
            b += l.batches.get();
            o += l.opsApplied.get();
            r += l.redos.get();
            t += l.commits.get();
            one += l.oneStatementBatches.get();
            refused += l.oneStatementRefusals.get();
            paced += l.paced.get();
            loads += l.bucketLoads();
            write += l.writeNanos.get();
            borrows += l.borrower().borrows();
            borrowed += l.borrower().borrowedUnits();
            timeouts += l.borrowLockTimeouts.get();
            checks += l.checkViolations.get();
            q += l.depth();
        }
        return new Stats(b, o, r, t, one, refused, paced, loads, q, write, borrows, borrowed, timeouts, checks);
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
        for (Lane l : lanes) {
            try {
                l.closeReplies();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
