package io.lastunit.shard.lane;

import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.CreateItemResponse;
import io.lastunit.api.inventory.v1.HoldState;
import io.lastunit.api.inventory.v1.ItemKind;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.api.inventory.v1.RestockRequest;
import io.lastunit.api.inventory.v1.RestockResponse;
import io.lastunit.api.inventory.v1.SeatMode;
import io.lastunit.api.inventory.v1.SeatSelection;
import io.lastunit.api.inventory.v1.SetSeatsOnSaleResponse;
import io.lastunit.common.Failure;
import io.lastunit.common.HoldId;
import io.lastunit.common.Reason;
import io.lastunit.common.SeatRules;
import io.lastunit.shard.decide.ItemState;
import io.lastunit.shard.fence.Fence;
import io.lastunit.shard.seats.SeatItem;
import io.lastunit.shard.seats.SeatItem.LiveHold;
import io.lastunit.shard.seats.SeatMaps;
import io.lastunit.shard.seats.SeatStore;
import io.lastunit.shard.seats.plan.SeatDecision;
import io.lastunit.shard.seats.plan.SeatRequest;
import io.lastunit.shard.seats.plan.SeatSpec;
import io.lastunit.shard.store.CommitWarnings;
import io.lastunit.shard.store.ItemStore;
import io.lastunit.shard.store.Transactions;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The seated items of one lane (docs/seats.md): the lane hands it every operation on a SEATED
 * item, and it decides each item's share of a batch in memory against the item's {@link SeatItem}
 * (no database round trip on the sale path), writes it in one transaction — due holds expired,
 * hold calls, seats freed, seats taken off or put on sale, new holds inserted, seats claimed, bucket
 * 0's counters last — and answers the callers after the commit, through the lane's replier.
 *
 * <p>The database stays the arbiter: every statement is conditional (a seat is claimed only where
 * it is on sale and in no hold; the counters only where they are as cached), so a statement that
 * matches fewer rows than decided means the view was stale: the transaction rolls back, the item is
 * loaded again and the batch decided again, at most {@link #REDO_MAX} times. Two holds can never
 * name one seat.
 *
 * <p>A batch of fresh Reserves alone (the hot path of a sale) does not wait for the batch before
 * it: it is decided on the memory that batch left and written beside it ({@link SeatWrites}, at
 * most two in flight); anything else on the item waits until its writes in flight ended.
 *
 * <p>Lane-confined: only the lane's thread calls it (the writes in flight run on writer threads). Hazard: a write whose outcome is unknown (the
 * commit failed) drops the item, and its callers are told to retry with the same key.
 */
final class SeatLane {
    private static final Logger log = LoggerFactory.getLogger(SeatLane.class);
    /** Times one batch of an item is decided again after the database refused the cached view. */
    static final int REDO_MAX = 3;
    /** Due holds one batch expires at most (the rest in the next). */
    static final int EXPIRE_MAX = 10_000;
    /**
     * How far past its expiry (by the lane's estimate of the database clock) a hold must be for the
     * lane to expire it itself: the estimate's error, so the conditional expiry matches.
     */
    static final long EXPIRY_MARGIN_MICROS = 2_000;
    /** Seats written by one CreateItem or Restock from which the lane refreshes the table's statistics. */
    static final int ANALYZE_AFTER_SEATS = 10_000;
    /** Items whose kind the lane remembers (a lookup each past it). */
    static final int KINDS_MAX = 1 << 16;

    private final int lane;
    private final Transactions transactions;
    private final Replier replier;
    private final Fence fence;
    private final Duration retryAfter;
    private final DbClock clock;
    private final SeatStore store = new SeatStore();
    /** Batches of new holds still being written while the lane decides the next ({@link SeatWrites}). */
    private final SeatWrites writes;
    private final ItemStore items = new ItemStore();
    /**
     * Seats the lane keeps in memory over all its items (about 500 bytes each); past it the items
     * used least recently are dropped, and loaded again on their next call.
     */
    static final int SEATS_CACHED_MAX = 250_000;
    private final Map<ItemRef, SeatItem> cache = new LinkedHashMap<>(16, 0.75f, true);
    private long seatsCached;
    /** Item → seated (true) or counted (false), for items that exist. */
    private final Map<ItemRef, Boolean> kinds = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<ItemRef, Boolean> eldest) {
            return size() > KINDS_MAX;
        }
    };

    record ItemRef(String tenant, String item) {
    }

    SeatLane(int lane, Transactions transactions, Replier replier, Fence fence, Duration retryAfter,
             java.time.InstantSource local) {
        this.lane = lane;
        this.transactions = transactions;
        this.replier = replier;
        this.fence = fence;
        this.retryAfter = retryAfter;
        this.clock = new DbClock(local);
        this.writes = new SeatWrites(lane, replier);
    }

    /**
     * Whether {@code op} is on a seated item (its kind read once per item). Unknown items are not
     * (the counted path answers them NOT_FOUND).
     */
    boolean owns(Op op) throws SQLException {
        BucketKey b = op.bucket();
        ItemRef ref = new ItemRef(b.tenantId(), b.itemId());
        Boolean seated = kinds.get(ref);
        if (seated == null) {
            String kind = transactions.inTransaction(c -> store.kind(c, ref.tenant(), ref.item()));
            if (kind == null) {
                return false;
            }
            seated = kind.equals("SEATED");
            kinds.put(ref, seated);
        }
        return seated;
    }

    /** Keeps a loaded item, dropping the least recently used past {@link #SEATS_CACHED_MAX} seats (never this one). */
    private void cache(ItemRef ref, SeatItem s) {
        SeatItem before = cache.put(ref, s);
        seatsCached += s.layout.size() - (before == null ? 0 : before.layout.size());
        var it = cache.entrySet().iterator();
        while (seatsCached > SEATS_CACHED_MAX && it.hasNext()) {
            Map.Entry<ItemRef, SeatItem> e = it.next();
            if (e.getKey().equals(ref)) {
                continue;
            }
            seatsCached -= e.getValue().layout.size();
            it.remove();
        }
    }

    /** Drops a cached item (loaded again on its next call). */
    private void uncache(ItemRef ref) {
        SeatItem gone = cache.remove(ref);
        if (gone != null) {
            seatsCached -= gone.layout.size();
        }
    }

    /**
     * After a CreateItem or Restock that wrote many seats: fresh statistics, so the planner reads a
     * batch's seats by index from the first batch on rather than after autovacuum's analyze. Best
     * effort, on its own connection, outside any transaction.
     */
    private void analyzeSeats() {
        try (Connection c = transactions.connection()) {
            c.setAutoCommit(true);
            try (java.sql.Statement st = c.createStatement()) {
                st.execute("ANALYZE seats");
            } finally {
                c.setAutoCommit(false);
            }
        } catch (SQLException e) {
            log.warn("lane {}: ANALYZE seats failed (autovacuum will do it): {}", lane, e.toString());
        }
    }

    /** Whether the op's item is known (from an earlier lookup) to be COUNTED. */
    boolean knownCounted(Op op) {
        return Boolean.FALSE.equals(kinds.get(new ItemRef(op.bucket().tenantId(), op.bucket().itemId())));
    }

    /** Every cached item of the tenant is dropped (a tenant move changed its rows). */
    void forgetTenant(String tenant) {
        drainWrites();
        cache.entrySet().removeIf(e -> {
            boolean of = e.getKey().tenant().equals(tenant);
            if (of) {
                seatsCached -= e.getValue().layout.size();
            }
            return of;
        });
        kinds.keySet().removeIf(k -> k.tenant().equals(tenant));
    }

    // ---------------------------------------------------------------- CreateItem, Restock

    void createItem(Op.CreateItem op) {
        CreateItemRequest r = op.request();
        List<SeatSpec> seats = SeatMaps.specs(r.getSeatMap(), 0);
        String digest = SeatMaps.digest(seats);
        ItemStore.ItemRow asked = new ItemStore.ItemRow(r.getHomeRegion(), seats.size(), seats.size(),
                r.getPerBuyerLimit(), op.holdTtlMs(), op.extendByMs(), 1, List.of(r.getHomeRegion()));
        try {
            if (transactions.inTransaction(c -> {
                items.lockTenant(c, r.getTenantId(), true);
                ItemState moving = items.movingStateOfTenant(c, r.getTenantId());
                if (moving != null) {
                    c.rollback();
                    op.future().completeExceptionally(fence.refusal(moving, r.getTenantId(), r.getItemId()));
                    return false;
                }
                boolean created = items.createItem(c, r.getTenantId(), r.getItemId(), asked);
                if (created) {
                    store.setKindSeated(c, r.getTenantId(), r.getItemId(), digest);
                    store.insertSeats(c, r.getTenantId(), r.getItemId(), seats);
                } else {
                    ItemStore.ItemRow existing = items.readItem(c, r.getTenantId(), r.getItemId());
                    SeatStore.ItemRow row = store.item(c, r.getTenantId(), r.getItemId());
                    if (existing == null || row == null || !row.kind().equals("SEATED")
                            || !digest.equals(row.seatMapDigest()) || !sameSettings(asked, existing)) {
                        c.rollback();
                        op.future().completeExceptionally(Failure.of(Reason.ITEM_EXISTS, "item " + r.getTenantId()
                                + "/" + r.getItemId() + " exists with other parameters (kind, seat map or settings)"));
                        return false;
                    }
                }
                var stock = items.readStock(c, r.getTenantId(), r.getItemId());
                c.commit();
                CommitWarnings.requireReplicated(c);
                kinds.put(new ItemRef(r.getTenantId(), r.getItemId()), true);
                op.future().complete(CreateItemResponse.newBuilder().setStock(stock).setCreated(created).build());
                return created;
            }) == Boolean.TRUE && seats.size() >= ANALYZE_AFTER_SEATS) {
                analyzeSeats();
            }
        } catch (SQLException e) {
            op.future().completeExceptionally(Failure.storeUnavailable("CreateItem failed; retry it as it is", e,
                    retryAfter, r.getTenantId(), r.getItemId()));
        }
    }

    /** The settings a repeated CreateItem must repeat (the seats are compared by digest). */
    private static boolean sameSettings(ItemStore.ItemRow asked, ItemStore.ItemRow existing) {
        return asked.homeRegion().equals(existing.homeRegion()) && asked.perBuyerLimit() == existing.perBuyerLimit()
                && asked.holdTtlMs() == existing.holdTtlMs() && asked.extendByMs() == existing.extendByMs();
    }

    void restock(Op.Restock op) {
        drainWrites();
        RestockRequest r = op.request();
        ItemRef ref = new ItemRef(r.getTenantId(), r.getItemId());
        if (!r.hasSeatMap()) {
            op.future().completeExceptionally(Failure.invalid("seat_map", "is required to restock a SEATED item: "
                    + "name the seats to add"));
            return;
        }
        try {
            Object added = transactions.inTransaction(c -> {
                ItemState state = items.itemState(c, r.getTenantId(), r.getItemId());
                if (state != null && state.moving()) {
                    c.rollback();
                    op.future().completeExceptionally(fence.refusal(state, r.getTenantId(), r.getItemId()));
                    return null;
                }
                int seatCount = SeatRules.seatCount(r.getSeatMap());
                if (!items.recordRestock(c, r.getTenantId(), r.getRestockId(), r.getItemId(), seatCount)) {
                    Object[] prev = items.readRestock(c, r.getTenantId(), r.getItemId(), r.getRestockId());
                    var stock = items.readStock(c, r.getTenantId(), r.getItemId());
                    c.rollback();
                    if (prev == null || (long) prev[1] != seatCount || stock == null) {
                        op.future().completeExceptionally(Failure.of(Reason.IDEMPOTENCY_KEY_REUSED, "restock_id "
                                + r.getRestockId() + " was used for another restock"));
                    } else {
                        op.future().complete(RestockResponse.newBuilder().setStock(stock).setApplied(false).build());
                    }
                    return null;
                }
                int first = store.nextSeatNo(c, r.getTenantId(), r.getItemId());
                List<SeatSpec> seats = SeatMaps.specs(r.getSeatMap(), first);
                if (first + seats.size() > SeatRules.ITEM_SEATS_MAX) {
                    c.rollback();
                    op.future().completeExceptionally(Failure.invalid("seat_map", "would give the item " + (first
                            + seats.size()) + " seats, more than " + SeatRules.ITEM_SEATS_MAX + " (max_item_seats)"));
                    return null;
                }
                try {
                    store.insertSeats(c, r.getTenantId(), r.getItemId(), seats);
                } catch (SQLException e) {
                    if ("23505".equals(e.getSQLState())) { // a seat id or a position the item already has
                        c.rollback();
                        op.future().completeExceptionally(Failure.invalid("seat_map", "names a seat id, or a position"
                                + " in a row, that the item already has"));
                        return null;
                    }
                    throw e;
                }
                var row = items.restock(c, r.getTenantId(), r.getItemId(), seats.size(), Long.MAX_VALUE / 4);
                if (row == null) {
                    c.rollback();
                    op.future().completeExceptionally(Failure.of(Reason.ITEM_NOT_FOUND, "no item " + r.getTenantId()
                            + "/" + r.getItemId()));
                    return null;
                }
                var stock = items.readStock(c, r.getTenantId(), r.getItemId());
                c.commit();
                CommitWarnings.requireReplicated(c);
                uncache(ref); // its layout changed: loaded again on the next call
                op.future().complete(RestockResponse.newBuilder().setStock(stock).setApplied(true).build());
                return seats.size();
            });
            if (added instanceof Integer n && n >= ANALYZE_AFTER_SEATS) {
                analyzeSeats();
            }
        } catch (SQLException e) {
            uncache(ref);
            op.future().completeExceptionally(Failure.storeUnavailable(
                    "Restock outcome unknown; retry with the same restock_id", e, retryAfter, r.getTenantId(),
                    r.getItemId()));
        }
    }

    // ---------------------------------------------------------------- the batch

    /** Decides and writes the seated operations of one lane batch, item by item. Completes every one. */
    void apply(List<Op> ops) {
        List<Op> all = settle(NONE); // the operations of refused writes first, as they came
        all.addAll(ops);
        byItem(all, true);
    }

    private void byItem(List<Op> ops, boolean mayOverlap) {
        Map<ItemRef, List<Op>> byItem = new LinkedHashMap<>();
        for (Op op : ops) {
            byItem.computeIfAbsent(new ItemRef(op.bucket().tenantId(), op.bucket().itemId()), k -> new ArrayList<>())
                    .add(op);
        }
        for (Map.Entry<ItemRef, List<Op>> e : byItem.entrySet()) {
            try {
                if (!mayOverlap || !overlap(e.getKey(), e.getValue())) {
                    if (writes.holds(e.getKey())) {
                        drainWrites();
                    }
                    applyItem(e.getKey(), e.getValue());
                }
            } catch (RuntimeException ex) {
                uncache(e.getKey());
                log.error("lane {}: seat batch of {}/{} failed", lane, e.getKey().tenant(), e.getKey().item(), ex);
                Failure f = Failure.logged(Reason.INTERNAL_ERROR, "lane " + lane + ": the seat batch of "
                        + e.getKey().tenant() + "/" + e.getKey().item() + " failed; nothing of it committed", ex, null);
                for (Op op : e.getValue()) {
                    op.future().completeExceptionally(f);
                }
            }
        }
    }

    // ---------------------------------------------------------------- writes in flight

    /** SQL state of a CHECK the statement would have broken: nothing was written. */
    private static final String CHECK_VIOLATION = "23514";
    /** Wait for no write: settle those that finished. */
    private static final int NONE = 0;
    /** Wait for every write in flight. */
    private static final int ALL = Integer.MAX_VALUE;

    /** Between batches: settles the writes that finished and decides the refused ones' operations again. */
    void idle() {
        if (writes.size() > 0) {
            byItem(settle(NONE), false);
        }
    }

    /** Waits for every write in flight, then decides the refused ones' operations again. */
    private void drainWrites() {
        if (writes.size() > 0) {
            byItem(settle(ALL), false);
        }
    }

    /** As the lane ends: waits for its writes; the operations of refused ones are told to retry. */
    void close() {
        List<Op> back = settle(ALL);
        Failure f = Failure.retryable(Reason.SHUTTING_DOWN, "lane " + lane + " stopped before writing this request",
                retryAfter);
        back.forEach(op -> op.future().completeExceptionally(f));
        try {
            writes.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Settles writes in the order they started, waiting for at least {@code waitFor} of them (the
     * rest only if they finished): a write that committed gives its holds the database's times; one
     * the database refused gives its operations back to be decided again and drops its item (the
     * item's memory holds its holds; every later write of the item is refused too); one whose
     * outcome is unknown fails its callers (retry with the same key) and drops its item. After a
     * write that did not commit, it waits for all, so an item is loaded again only once every write
     * decided on its memory has ended.
     */
    private List<Op> settle(int waitFor) {
        List<Op> back = new ArrayList<>();
        int wait = waitFor;
        for (int settled = 0; writes.size() > 0 && (settled < wait || writes.oldest().done().isDone()); settled++) {
            SeatWrites.Outcome o;
            try {
                o = writes.poll();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                o = new SeatWrites.Outcome(writes.oldest(), null, e);
                writes.drop();
                wait = ALL;
            }
            ItemRef ref = (ItemRef) o.write().item();
            if (o.failure() == null) {
                if (!o.write().laterSent().get()) {
                    back.addAll(o.write().laterOps()); // decided on a write that did not commit
                }
                SeatItem s = cache.get(ref);
                if (s != null) {
                    for (LiveHold h : o.write().holds()) {
                        SeatStore.Placed at = o.placed().holds().get(h.key);
                        s.settled(h, at.createdAtMicros(), at.expiresAtMicros());
                    }
                }
                clock.measured(o.placed().dbNowMicros());
                continue;
            }
            uncache(ref);
            wait = ALL;
            if (o.failure() instanceof SQLException e && (SeatStore.REFUSED.equals(e.getSQLState())
                    || CHECK_VIOLATION.equals(e.getSQLState()))) {
                back.addAll(o.write().ops());
                continue;
            }
            SQLException cause = o.failure() instanceof SQLException e ? e
                    : new SQLException("seat write " + o.failure(), o.failure());
            log.warn("lane {}: a seat write of {}/{} failed; outcome unknown", lane, ref.tenant(), ref.item(),
                    o.failure());
            Failure f = Failure.storeUnavailable("seat batch failed; outcome unknown, retry with the same key", cause,
                    retryAfter, ref.tenant(), ref.item());
            o.write().ops().forEach(op -> op.future().completeExceptionally(f));
        }
        return back;
    }

    /**
     * A batch of fresh Reserves alone on an item in memory, nothing due: decided now on the memory
     * the writes in flight left, its holds placed in memory at once, and written by a writer thread
     * as one statement while the lane goes on ({@link SeatWrites}). False when the batch is not
     * such a batch (or a write before it was refused): it is then decided the usual way.
     */
    private boolean overlap(ItemRef ref, List<Op> ops) {
        long now = clock.nowMicros();
        if (!overlappable(cache.get(ref), ops, now)) {
            return false;
        }
        if (writes.full()) {
            List<Op> back = settle(1);
            if (!back.isEmpty()) {
                byItem(back, false);
                return false;
            }
        }
        SeatItem s = cache.get(ref);
        if (!overlappable(s, ops, now)) {
            return false;
        }
        Known none = new Known();
        BitSet free = (BitSet) s.free.clone();
        List<Supplier<Runnable>> answers = new ArrayList<>(ops.size());
        List<Pending> pending = new ArrayList<>(ops.size());
        for (Op op : ops) {
            Pending p = checkReserve(s, (Op.Reserve) op, now, none, answers);
            if (p != null) {
                pending.add(p);
            }
        }
        List<Placing> placing = new ArrayList<>(pending.size());
        decideReserves(s, pending, free, now, Map.of(), placing, answers);
        if (placing.isEmpty()) {
            // Answers decided on the memory of the writes in flight: those must commit first.
            List<Op> back = settle(ALL);
            byItem(back, false);
            if (cache.get(ref) != s) {
                return false;
            }
            List<Runnable> completions = new ArrayList<>(answers.size());
            answers.forEach(a -> completions.add(a.get()));
            replier.reply(completions);
            return true;
        }
        Claims claims = Claims.of(s, placing);
        List<SeatStore.NewHold> rows = claims.rows();
        int[] nos = claims.seatNos();
        UUID[] hs = claims.holdIds();
        long[] next = s.counters.clone();
        next[1] -= nos.length;
        next[2] += nos.length;
        assertBalanced(ref, next);
        // Memory first, as if committed: the next batch is decided on it while this one is written.
        List<LiveHold> holds = new ArrayList<>(placing.size());
        List<io.lastunit.api.inventory.v1.Hold> shown = new ArrayList<>(placing.size());
        for (Placing p : placing) {
            s.placed(p.hold());
            holds.add(p.hold());
            shown.add(s.proto(p.hold(), now));
        }
        System.arraycopy(next, 0, s.counters, 0, 4);
        s.trimKeys();
        List<Runnable> later = new ArrayList<>(answers.size());
        answers.forEach(a -> later.add(a.get()));
        List<Op> laterOps = new ArrayList<>(ops.size() - placing.size());
        java.util.Set<Op> placed = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        placing.forEach(p -> placed.add(p.op()));
        for (Op op : ops) {
            if (!placed.contains(op)) {
                laterOps.add(op);
            }
        }
        writes.submit(ref, List.copyOf(ops), holds, laterOps, later, () -> {
            SeatStore.PlacedBatch done;
            try (Connection w = transactions.connection()) {
                w.setAutoCommit(true);
                try {
                    done = store.placeInOneStatement(w, ref.tenant(), ref.item(), rows, nos, hs, null, null);
                } finally {
                    try {
                        w.setAutoCommit(false);
                    } catch (SQLException ignored) {
                        // a broken connection: the pool evicts it
                    }
                }
            }
            List<Runnable> completions = new ArrayList<>(placing.size());
            for (int i = 0; i < placing.size(); i++) {
                Placing p = placing.get(i);
                SeatStore.Placed at = done.holds().get(p.hold().key);
                ReserveResponse resp = ReserveResponse.newBuilder().setOutcome(ReserveOutcome.RESERVED)
                        .setHold(shown.get(i).toBuilder().setCreatedAt(SeatItem.ts(at.createdAtMicros()))
                                .setExpiresAt(SeatItem.ts(at.expiresAtMicros())))
                        .build();
                CompletableFuture<ReserveResponse> f = p.op().future();
                completions.add(() -> f.complete(resp));
            }
            replier.reply(completions);
            return done;
        });
        return true;
    }

    /**
     * Whether a batch may be decided ahead of the writes in flight: the item is in memory, ACTIVE,
     * caps no buyer (usage would have to be read), has no hold due, and every operation is a
     * Reserve for seats with a key the item has not seen (a retry by key is answered after the
     * writes in flight, the usual way).
     */
    private static boolean overlappable(SeatItem s, List<Op> ops, long now) {
        if (s == null || s.perBuyerLimit != 0 || ItemState.of(s.state) != ItemState.ACTIVE
                || !s.due(now - EXPIRY_MARGIN_MICROS, 1).isEmpty()) {
            return false;
        }
        java.util.Set<String> keys = new java.util.HashSet<>();
        for (Op op : ops) {
            if (!(op instanceof Op.Reserve r) || !r.request().hasSeats()
                    || s.byKey.containsKey(r.request().getIdempotencyKey())
                    || !keys.add(r.request().getIdempotencyKey())) {
                return false;
            }
        }
        return true;
    }

    /** What the attempts at one item's batch share: holds and keys read from the database. */
    private static final class Known {
        final Map<UUID, SeatStore.LiveRow> holds = new HashMap<>();
        final Map<String, SeatStore.LiveRow> keys = new HashMap<>();
        final List<String> keysToRead = new ArrayList<>();
        /** The database refused a batch written in one statement: the next attempts write statement by statement. */
        boolean stepwise;
    }

    private void applyItem(ItemRef ref, List<Op> ops) {
        Known known = new Known();
        for (int attempt = 0; ; attempt++) {
            ops.removeIf(op -> op.future().isDone());
            if (ops.isEmpty()) {
                return;
            }
            if (attempt > REDO_MAX) {
                Failure f = Failure.retryable(Reason.STORE_UNAVAILABLE, "lane " + lane + ": the seat batch of "
                        + ref.tenant() + "/" + ref.item() + " was refused by the database " + attempt
                        + " times; nothing was written, retry with the same key", retryAfter);
                ops.forEach(op -> op.future().completeExceptionally(f));
                return;
            }
            try (Connection c = transactions.connection()) {
                try {
                    if (attempt(c, ref, ops, known)) {
                        attempt = -1; // ops now holds only the calls deferred to after this batch
                        continue;
                    }
                    Transactions.rollbackQuietly(c);
                    uncache(ref);
                } catch (SQLException | RuntimeException e) {
                    Transactions.rollbackQuietly(c);
                    throw e;
                }
            } catch (SQLException e) {
                uncache(ref);
                Failure f = Failure.storeUnavailable("seat batch failed; outcome unknown, retry with the same key", e,
                        retryAfter, ref.tenant(), ref.item());
                ops.forEach(op -> op.future().completeExceptionally(f));
                return;
            }
        }
    }

    /** A SetSeatsOnSale decided in this attempt, with the seats (layout indexes) it changes. */
    private record Sale(Op.SetSeats op, int[] seats) {
    }

    /** The rows of new holds and their seat claims (seat number, hold), in the order of the holds. */
    private record Claims(List<SeatStore.NewHold> rows, int[] seatNos, UUID[] holdIds) {
        static Claims of(SeatItem s, List<Placing> placing) {
            List<SeatStore.NewHold> rows = new ArrayList<>(placing.size());
            int n = 0;
            for (Placing p : placing) {
                n += p.hold().qty();
            }
            int[] nos = new int[n];
            UUID[] hs = new UUID[n];
            int k = 0;
            for (Placing p : placing) {
                LiveHold h = p.hold();
                int[] seatNos = s.seatNos(h.seats);
                rows.add(new SeatStore.NewHold(h.id, h.region, h.qty(), h.buyerId, h.key, h.fingerprint, p.ttlMs(),
                        seatNos));
                for (int seatNo : seatNos) {
                    nos[k] = seatNo;
                    hs[k++] = h.id;
                }
            }
            return new Claims(rows, nos, hs);
        }
    }

    /** One new hold decided in this attempt. */
    private record Placing(Op.Reserve op, LiveHold hold, long ttlMs) {
    }

    /**
     * One attempt: true when it committed (every op answered or about to be, through the replier),
     * false when the database refused the cached view (rolled back; decide again).
     */
    private boolean attempt(Connection c, ItemRef ref, List<Op> ops, Known known) throws SQLException {
        SeatItem s = cache.get(ref);
        if (s == null) {
            SeatStore.ItemRow row = store.item(c, ref.tenant(), ref.item());
            if (row == null || !row.kind().equals("SEATED")) {
                c.rollback();
                kinds.remove(ref);
                for (Op op : ops) {
                    notFound(op, ref);
                }
                return true;
            }
            clock.measured(row.dbNowMicros());
            s = SeatItem.load(ref.tenant(), ref.item(), row, store.seats(c, ref.tenant(), ref.item()),
                    store.liveHolds(c, ref.tenant(), ref.item()));
            cache(ref, s);
        }
        ItemState itemState = ItemState.of(s.state);
        if (itemState.moving()) {
            c.rollback();
            Failure f = fence.refusal(itemState, ref.tenant(), ref.item());
            ops.forEach(op -> op.future().completeExceptionally(f));
            return true;
        }
        // What is not in memory, read first: holds called by id that are not live, keys a redo found taken,
        // the usage of a limited item's buyers. None of it is on the plain sale path.
        List<UUID> unknownHolds = new ArrayList<>();
        List<String> buyers = new ArrayList<>();
        for (Op op : ops) {
            if (op instanceof Op.HoldAction a && !s.live.containsKey(a.holdId().uuid())
                    && !known.holds.containsKey(a.holdId().uuid())) {
                unknownHolds.add(a.holdId().uuid());
            } else if (op instanceof Op.Reserve r && s.perBuyerLimit > 0) {
                buyers.add(r.request().getBuyerId());
            }
        }
        if (!unknownHolds.isEmpty()) {
            for (SeatStore.LiveRow h : store.byIds(c, ref.tenant(), ref.item(), unknownHolds.toArray(UUID[]::new))) {
                known.holds.put(h.holdId(), h);
            }
            for (UUID id : unknownHolds) {
                known.holds.putIfAbsent(id, null);
            }
        }
        if (!known.keysToRead.isEmpty()) {
            for (SeatStore.LiveRow h : store.byKeys(c, ref.tenant(), ref.item(), known.keysToRead.toArray(String[]::new))) {
                known.keys.put(h.key(), h);
            }
            known.keysToRead.clear();
        }
        Map<String, Long> usage = buyers.isEmpty() ? Map.of()
                : new HashMap<>(store.usage(c, ref.tenant(), ref.item(), buyers.toArray(String[]::new)));

        long now = clock.nowMicros();
        BitSet free = (BitSet) s.free.clone();
        List<LiveHold> due = s.due(now - EXPIRY_MARGIN_MICROS, EXPIRE_MAX);
        java.util.Set<UUID> dueIds = new java.util.HashSet<>();
        for (LiveHold h : due) {
            dueIds.add(h.id);
            for (int i : h.seats) {
                if (s.onSale.get(i)) {
                    free.set(i);
                }
            }
        }
        List<Supplier<Runnable>> answers = new ArrayList<>(ops.size());
        List<Op> deferred = new ArrayList<>();
        List<LiveHold> confirms = new ArrayList<>();
        List<Op.HoldAction> confirmOps = new ArrayList<>();
        List<LiveHold> releases = new ArrayList<>();
        List<Op.HoldAction> releaseOps = new ArrayList<>();
        List<LiveHold> extendsList = new ArrayList<>();
        List<Op.HoldAction> extendOps = new ArrayList<>();
        List<Placing> placing = new ArrayList<>();
        List<int[]> kills = new ArrayList<>();
        List<int[]> unkills = new ArrayList<>();
        List<Sale> saleOps = new ArrayList<>();
        List<Op.Sweep> sweeps = new ArrayList<>();
        java.util.Set<UUID> touched = new java.util.HashSet<>();
        List<Pending> pending = new ArrayList<>();
        java.util.Set<String> pendingKeys = new java.util.HashSet<>();
        final SeatItem item = s;

        for (Op op : ops) {
            if (op instanceof Op.Sweep w) {
                sweeps.add(w);
            } else if (op instanceof Op.HoldAction a) {
                LiveHold h = s.live.get(a.holdId().uuid());
                if (h == null) {
                    SeatStore.LiveRow row = known.holds.get(a.holdId().uuid());
                    h = row == null ? null : s.hold(row);
                }
                if (h == null || !h.region.equals(a.holdId().region()) || a.holdId().bucketNo() != 0) {
                    answers.add(fail(a.future(), Failure.of(Reason.HOLD_NOT_FOUND,
                            "no hold " + a.holdId().encode())));
                    continue;
                }
                if (!touched.add(h.id)) {
                    deferred.add(op); // a second call on one hold: decided after this batch, which it then sees
                    continue;
                }
                if (!s.live.containsKey(h.id) && (h.state == HoldState.HELD || h.state == HoldState.SOLD)) {
                    return false; // a live hold the lane did not know: its view is stale, load the item again
                }
                decideHoldCall(item, a, h, dueIds.contains(h.id), now, answers, free,
                        confirms, confirmOps, releases, releaseOps, extendsList, extendOps);
            } else if (op instanceof Op.SetSeats x) {
                decideSale(item, x, free, kills, unkills, saleOps, answers);
            } else if (op instanceof Op.Reserve r) {
                Pending p = checkReserve(item, r, now, known, answers);
                if (p != null && !pendingKeys.add(r.request().getIdempotencyKey())) {
                    deferred.add(op); // the key's first use in this batch decides; this one sees it next round
                } else if (p != null) {
                    pending.add(p);
                }
            } else {
                throw new IllegalStateException("not a seat operation: " + op);
            }
        }
        // The Reserves last, against what the hold calls and sale changes of the batch left free.
        decideReserves(item, pending, free, now, usage, placing, answers);

        // ---- write, hot row last ----
        long[] next = s.counters.clone(); // allotment, available, held, sold
        List<UUID> expired = due.isEmpty() ? List.of()
                : store.expire(c, ref.tenant(), ref.item(), due.stream().map(h -> h.id).toArray(UUID[]::new));
        if (expired.size() != due.size()) {
            log.debug("lane {}: {}/{}: {} of {} due holds expired; the clock estimate was ahead, deciding again",
                    lane, ref.tenant(), ref.item(), expired.size(), due.size());
            return false;
        }
        java.util.Set<UUID> confirmed = new java.util.HashSet<>(confirms.isEmpty() ? List.of()
                : store.confirm(c, ref.tenant(), ref.item(), confirms.stream().map(h -> h.id).toArray(UUID[]::new),
                        confirmOps.stream().map(Op.HoldAction::orderRef).toArray(String[]::new)));
        java.util.Set<UUID> released = new java.util.HashSet<>(releases.isEmpty() ? List.of()
                : store.release(c, ref.tenant(), ref.item(), releases.stream().map(h -> h.id).toArray(UUID[]::new)));
        Map<UUID, Long> extended = extendsList.isEmpty() ? Map.of()
                : store.extend(c, ref.tenant(), ref.item(), extendsList.stream().map(h -> h.id).toArray(UUID[]::new),
                        s.extendByMs);
        // Seats freed: of the holds that expired and of those released.
        List<LiveHold> ended = new ArrayList<>(due);
        for (LiveHold h : releases) {
            if (released.contains(h.id)) {
                ended.add(h);
            }
        }
        if (!ended.isEmpty()) {
            int n = 0;
            for (LiveHold h : ended) {
                n += h.qty();
            }
            int[] nos = new int[n];
            UUID[] hs = new UUID[n];
            int k = 0;
            for (LiveHold h : ended) {
                for (int seatNo : s.seatNos(h.seats)) {
                    nos[k] = seatNo;
                    hs[k++] = h.id;
                }
                next[1] += h.qty();
                next[2] -= h.qty();
            }
            if (store.freeSeats(c, ref.tenant(), ref.item(), nos, hs) != n) {
                return false;
            }
        }
        for (LiveHold h : confirms) {
            if (confirmed.contains(h.id)) {
                next[2] -= h.qty();
                next[3] += h.qty();
            }
        }
        long onSaleDelta = 0;
        for (int[] seats : kills) {
            if (store.setOnSale(c, ref.tenant(), ref.item(), s.seatNos(seats), false) != seats.length) {
                return false;
            }
            onSaleDelta -= seats.length;
        }
        for (int[] seats : unkills) {
            if (store.setOnSale(c, ref.tenant(), ref.item(), s.seatNos(seats), true) != seats.length) {
                return false;
            }
            onSaleDelta += seats.length;
        }
        if (onSaleDelta != 0) {
            store.addToTotal(c, ref.tenant(), ref.item(), onSaleDelta);
            next[0] += onSaleDelta;
            next[1] += onSaleDelta;
        }
        Map<String, SeatStore.Placed> placed = Map.of();
        // A batch of new holds alone (the hot path of a sale) is one statement that commits itself.
        boolean alone = !placing.isEmpty() && due.isEmpty() && confirms.isEmpty() && releases.isEmpty()
                && extendsList.isEmpty() && kills.isEmpty() && unkills.isEmpty() && s.perBuyerLimit == 0
                && !known.stepwise;
        if (!placing.isEmpty()) {
            Claims claims = Claims.of(s, placing);
            List<SeatStore.NewHold> rows = claims.rows();
            int[] nos = claims.seatNos();
            UUID[] hs = claims.holdIds();
            int n = nos.length;
            next[1] -= n;
            next[2] += n;
            if (alone) {
                assertBalanced(ref, next);
                c.setAutoCommit(true);
                try {
                    SeatStore.PlacedBatch done = store.placeInOneStatement(c, ref.tenant(), ref.item(), rows, nos, hs,
                            s.counters, next);
                    placed = done.holds();
                    clock.measured(done.dbNowMicros());
                } catch (SQLException e) {
                    if (SeatStore.REFUSED.equals(e.getSQLState())) {
                        known.stepwise = true; // nothing was written: decide again, statement by statement
                        return false;
                    }
                    throw e;
                } finally {
                    try {
                        c.setAutoCommit(false);
                    } catch (SQLException ignored) {
                        // a broken connection: the pool evicts it, the caller's failure says why
                    }
                }
            } else {
                placed = store.insertHolds(c, ref.tenant(), ref.item(), rows);
                if (placed.size() != placing.size()) {
                    for (Placing p : placing) {
                        if (!placed.containsKey(p.hold().key)) {
                            known.keysToRead.add(p.hold().key); // used before the lane loaded the item: read it next time
                        }
                    }
                    return false;
                }
                if (store.claimSeats(c, ref.tenant(), ref.item(), nos, hs) != n) {
                    return false;
                }
            }
        }
        if (s.perBuyerLimit > 0) {
            Map<String, Long> deltas = new HashMap<>();
            for (Placing p : placing) {
                deltas.merge(p.hold().buyerId, (long) p.hold().qty(), Long::sum);
            }
            for (LiveHold h : ended) {
                deltas.merge(h.buyerId, (long) -h.qty(), Long::sum);
            }
            deltas.values().removeIf(v -> v == 0);
            if (!deltas.isEmpty()) {
                store.addUsage(c, ref.tenant(), ref.item(), deltas);
            }
        }
        if (!alone) {
            long[] expected = s.counters;
            if (!java.util.Arrays.equals(expected, next)) {
                assertBalanced(ref, next);
                long dbNow = store.setCounters(c, ref.tenant(), ref.item(), expected, next);
                if (dbNow < 0) {
                    return false;
                }
                clock.measured(dbNow);
            }
            c.commit();
            CommitWarnings.requireReplicated(c);
        }

        // ---- committed: memory follows, then the answers ----
        for (LiveHold h : due) {
            s.ended(h, HoldState.EXPIRED);
        }
        for (LiveHold h : releases) {
            if (released.contains(h.id)) {
                s.ended(h, HoldState.RELEASED);
            }
        }
        for (int i = 0; i < confirms.size(); i++) {
            LiveHold h = confirms.get(i);
            if (confirmed.contains(h.id)) {
                h.state = HoldState.SOLD;
                h.orderRef = confirmOps.get(i).orderRef();
            }
        }
        for (LiveHold h : extendsList) {
            Long at = extended.get(h.id);
            if (at != null) {
                h.expiresAtMicros = at;
                h.extended = true;
            }
        }
        for (int[] seats : kills) {
            s.setOnSale(seats, false);
        }
        for (int[] seats : unkills) {
            s.setOnSale(seats, true);
        }
        List<LiveHold> newHolds = new ArrayList<>(placing.size());
        for (Placing p : placing) {
            SeatStore.Placed at = placed.get(p.hold().key);
            LiveHold h = new LiveHold(p.hold().id, p.hold().region, p.hold().buyerId, p.hold().key,
                    p.hold().fingerprint, p.hold().seats, at.createdAtMicros(), HoldState.HELD, at.expiresAtMicros(),
                    false, null);
            s.placed(h);
            newHolds.add(h);
        }
        System.arraycopy(next, 0, s.counters, 0, 4);
        s.trimKeys();
        long answeredAt = clock.nowMicros();
        List<Runnable> completions = new ArrayList<>(ops.size());
        int placedAt = 0;
        int expiredCount = expired.size();
        for (Op.Sweep w : sweeps) {
            completions.add(() -> w.future().complete(expiredCount));
        }
        for (int i = 0; i < confirmOps.size(); i++) {
            Op.HoldAction a = confirmOps.get(i);
            LiveHold h = confirms.get(i);
            completions.add(confirmed.contains(h.id) ? ok(a.future(), () -> item.proto(h, answeredAt)).get()
                    : fail(a.future(), notHeld(a, HoldState.EXPIRED)).get());
        }
        for (int i = 0; i < releaseOps.size(); i++) {
            Op.HoldAction a = releaseOps.get(i);
            LiveHold h = releases.get(i);
            completions.add(released.contains(h.id) ? ok(a.future(), () -> item.proto(h, answeredAt)).get()
                    : fail(a.future(), notHeld(a, HoldState.EXPIRED)).get());
        }
        for (int i = 0; i < extendOps.size(); i++) {
            Op.HoldAction a = extendOps.get(i);
            LiveHold h = extendsList.get(i);
            completions.add(extended.containsKey(h.id) ? ok(a.future(), () -> item.proto(h, answeredAt)).get()
                    : fail(a.future(), notHeld(a, HoldState.EXPIRED)).get());
        }
        for (Sale sale : saleOps) {
            Op.SetSeats x = sale.op();
            SetSeatsOnSaleResponse resp = SetSeatsOnSaleResponse.newBuilder().setStock(s.stock())
                    .setChanged(sale.seats().length).build();
            completions.add(() -> x.future().complete(resp));
        }
        for (Placing p : placing) {
            LiveHold h = newHolds.get(placedAt++);
            ReserveResponse resp = ReserveResponse.newBuilder().setOutcome(ReserveOutcome.RESERVED)
                    .setHold(item.proto(h, answeredAt)).build();
            completions.add(() -> p.op().future().complete(resp));
        }
        for (Supplier<Runnable> a : answers) {
            completions.add(a.get());
        }
        replier.reply(completions);
        ops.clear();
        ops.addAll(deferred);
        return true;
    }

    /** An answer whose value is built on the lane's thread after the commit, and handed to the replier. */
    private static <T> Supplier<Runnable> ok(CompletableFuture<T> f, Supplier<T> value) {
        return () -> {
            T v = value.get();
            return () -> f.complete(v);
        };
    }

    private static Supplier<Runnable> fail(CompletableFuture<?> f, Failure e) {
        return () -> () -> f.completeExceptionally(e);
    }

    private void assertBalanced(ItemRef ref, long[] n) {
        if (n[1] < 0 || n[2] < 0 || n[3] < 0 || n[1] + n[2] + n[3] != n[0]) {
            throw new IllegalStateException("seat batch of " + ref.tenant() + "/" + ref.item()
                    + " would leave allotment=" + n[0] + " available=" + n[1] + " held=" + n[2] + " sold=" + n[3]);
        }
    }

    private static Failure notHeld(Op.HoldAction a, HoldState state) {
        return Failure.of(Reason.HOLD_NOT_HELD, "hold " + a.holdId().encode() + " is " + state + "; " + a.kind()
                + " needs HELD", Map.of("state", state.name()));
    }

    private void notFound(Op op, ItemRef ref) {
        if (op instanceof Op.HoldAction a) {
            a.future().completeExceptionally(Failure.of(Reason.HOLD_NOT_FOUND, "no hold " + a.holdId().encode()));
        } else if (op instanceof Op.Sweep w) {
            w.future().complete(0);
        } else {
            op.future().completeExceptionally(Failure.of(Reason.ITEM_NOT_FOUND, "no item " + ref.tenant() + "/"
                    + ref.item() + " on this shard"));
        }
    }

    private void decideHoldCall(SeatItem s, Op.HoldAction a, LiveHold h, boolean dueNow, long now, List<Supplier<Runnable>> answers,
                                BitSet free, List<LiveHold> confirms,
                                List<Op.HoldAction> confirmOps, List<LiveHold> releases, List<Op.HoldAction> releaseOps,
                                List<LiveHold> extendsList, List<Op.HoldAction> extendOps) {
        if (a.kind() == Op.HoldAction.Kind.CONFIRM && h.state == HoldState.SOLD) {
            if (a.orderRef().equals(h.orderRef)) {
                answers.add(ok(a.future(), () -> s.proto(h, now)));
            } else {
                answers.add(fail(a.future(), Failure.of(Reason.ORDER_REF_MISMATCH, "hold "
                        + a.holdId().encode() + " was confirmed with order_ref=" + h.orderRef + ", not "
                        + a.orderRef(), Map.of("state", "SOLD"))));
            }
            return;
        }
        HoldState state = dueNow || h.dueAt(now) ? HoldState.EXPIRED : h.state;
        if (state != HoldState.HELD) {
            answers.add(fail(a.future(), notHeld(a, state)));
            return;
        }
        switch (a.kind()) {
            case CONFIRM -> {
                confirms.add(h);
                confirmOps.add(a);
            }
            case RELEASE -> {
                releases.add(h);
                releaseOps.add(a);
                for (int i : h.seats) {
                    if (s.onSale.get(i)) {
                        free.set(i); // for the Reserves after it in this batch
                    }
                }
            }
            case EXTEND -> {
                if (h.extended) {
                    answers.add(fail(a.future(), Failure.of(Reason.HOLD_ALREADY_EXTENDED, "hold "
                            + a.holdId().encode() + " was already extended (once per hold)", Map.of("state", "HELD"))));
                } else {
                    extendsList.add(h);
                    extendOps.add(a);
                }
            }
        }
    }

    private void decideSale(SeatItem s, Op.SetSeats x, BitSet free, List<int[]> kills, List<int[]> unkills,
                            List<Sale> saleOps, List<Supplier<Runnable>> answers) {
        List<String> unknown = new ArrayList<>();
        List<String> taken = new ArrayList<>();
        List<Integer> change = new ArrayList<>();
        for (String id : x.request().getSeatIdsList()) {
            int i = s.layout.indexOf(id);
            if (i < 0) {
                unknown.add(id);
                continue;
            }
            boolean on = s.onSale.get(i);
            if (x.request().getOnSale() == on) {
                continue; // already as asked
            }
            if (!x.request().getOnSale() && !free.get(i)) {
                taken.add(id);
                continue;
            }
            change.add(i);
        }
        if (!unknown.isEmpty()) {
            answers.add(fail(x.future(), Failure.invalid("seat_ids", "names seats the item does"
                    + " not have: " + first(unknown))));
            return;
        }
        if (!taken.isEmpty()) {
            answers.add(fail(x.future(), Failure.of(Reason.SEATS_TAKEN, "seats " + first(taken)
                    + " are held or sold; nothing was taken off sale", Map.of("seats", String.join(",", taken)))));
            return;
        }
        int[] seats = change.stream().mapToInt(Integer::intValue).toArray();
        for (int i : seats) {
            free.set(i, x.request().getOnSale());
        }
        if (seats.length == 0) {
            answers.add(ok(x.future(), () -> SetSeatsOnSaleResponse.newBuilder().setStock(s.stock()).setChanged(0).build()));
            return;
        }
        (x.request().getOnSale() ? unkills : kills).add(seats);
        saleOps.add(new Sale(x, seats));
    }

    private static String first(List<String> ids) {
        return ids.size() <= 10 ? String.join(", ", ids) : String.join(", ", ids.subList(0, 10)) + " and "
                + (ids.size() - 10) + " more";
    }

    /** A Reserve that passed its checks, waiting for its seats. */
    private record Pending(Op.Reserve op, SeatRequest request, int qty) {
    }

    /**
     * A Reserve's checks before its seats: the selection is there, the key (a retry gets its hold
     * back whatever the seats look like now), the item sells, the region, the selection against the
     * map. Answers it and returns null, or returns what is left to decide.
     */
    private Pending checkReserve(SeatItem s, Op.Reserve r, long now, Known known, List<Supplier<Runnable>> answers) {
        ReserveRequest q = r.request();
        if (!q.hasSeats()) {
            answers.add(fail(r.future(), Failure.invalid("seats", "is required: item "
                    + q.getItemId() + " is SEATED; ask for ANY, SPECIFIC, ADJACENT or BEST seats")));
            return null;
        }
        LiveHold prior = s.byKey.get(q.getIdempotencyKey());
        if (prior == null) {
            SeatStore.LiveRow row = known.keys.get(q.getIdempotencyKey());
            prior = row == null ? null : s.hold(row);
        }
        if (prior != null) {
            LiveHold h = prior;
            if (!h.fingerprint.equals(r.fingerprint())) {
                answers.add(fail(r.future(), Failure.of(Reason.IDEMPOTENCY_KEY_REUSED,
                        "idempotency_key " + q.getIdempotencyKey() + " of item " + q.getTenantId() + "/"
                                + q.getItemId() + " was first used for other seats, buyer or TTL")));
            } else {
                answers.add(ok(r.future(), () -> ReserveResponse.newBuilder().setOutcome(ReserveOutcome.RESERVED)
                        .setHold(s.proto(h, now)).build()));
            }
            return null;
        }
        if (ItemState.of(s.state) != ItemState.ACTIVE) {
            answers.add(fail(r.future(), Failure.retryable(Reason.ITEM_NOT_ACTIVE, "item "
                    + q.getTenantId() + "/" + q.getItemId() + " is " + s.state, retryAfter)));
            return null;
        }
        if (!q.getRegion().equals(s.homeRegion)) {
            answers.add(fail(r.future(), Failure.invalid("region", "is " + q.getRegion()
                    + "; SEATED item " + q.getItemId() + " is sold in its home region " + s.homeRegion + " only")));
            return null;
        }
        SeatRequest request;
        try {
            request = request(s, q.getSeats(), q.getQuantity());
        } catch (Failure f) {
            answers.add(fail(r.future(), f));
            return null;
        }
        return new Pending(r, request, request.mode() == SeatRequest.Mode.SPECIFIC ? request.seats().length
                : request.count());
    }

    /**
     * The seats of the batch's Reserves, in the order the lane took them: all at once by the
     * decider ({@link io.lastunit.shard.seats.plan.SeatDecider#decideAll}, the same answers as one by
     * one, faster) unless the item caps buyers, whose usage must be judged between one decision
     * and the next.
     */
    private void decideReserves(SeatItem s, List<Pending> pending, BitSet free, long now, Map<String, Long> usage,
                                List<Placing> placing,
                                List<Supplier<Runnable>> answers) {
        if (pending.isEmpty()) {
            return;
        }
        if (s.perBuyerLimit == 0) {
            List<SeatRequest> requests = new ArrayList<>(pending.size());
            for (Pending p : pending) {
                requests.add(p.request());
            }
            List<SeatDecision> decisions = s.decider.decideAll(free, requests);
            for (int i = 0; i < pending.size(); i++) {
                decided(s, pending.get(i), decisions.get(i), now, placing, answers);
            }
            return;
        }
        for (Pending p : pending) {
            String buyer = p.op().request().getBuyerId();
            if (usage.getOrDefault(buyer, 0L) + p.qty() > s.perBuyerLimit) {
                answers.add(ok(p.op().future(), () -> ReserveResponse.newBuilder()
                        .setOutcome(ReserveOutcome.LIMIT_EXCEEDED).build()));
                continue;
            }
            SeatDecision d = s.decider.decide(free, p.request());
            if (d instanceof SeatDecision.Granted) {
                usage.merge(buyer, (long) p.qty(), Long::sum);
            }
            decided(s, p, d, now, placing, answers);
        }
    }

    private void decided(SeatItem s, Pending p, SeatDecision d, long now,
                         List<Placing> placing, List<Supplier<Runnable>> answers) {
        Op.Reserve r = p.op();
        ReserveRequest q = r.request();
        if (d instanceof SeatDecision.Granted g) {
            long ttl = r.holdTtlMsRequested() != 0 ? r.holdTtlMsRequested() : s.holdTtlMs;
            LiveHold h = new LiveHold(HoldId.create(q.getTenantId(), q.getItemId(), s.homeRegion, 0,
                    now / 1_000).uuid(), s.homeRegion, q.getBuyerId(), q.getIdempotencyKey(), r.fingerprint(),
                    g.seats(), now, HoldState.HELD, now + ttl * 1_000, false, null);
            placing.add(new Placing(r, h, ttl));
        } else if (d instanceof SeatDecision.Taken t) {
            List<String> ids = new ArrayList<>(t.seats().length);
            for (int i : t.seats()) {
                ids.add(s.layout.seatAt(i).seatId());
            }
            answers.add(ok(r.future(), () -> ReserveResponse.newBuilder().setOutcome(ReserveOutcome.SEATS_TAKEN)
                    .addAllTakenSeatIds(ids).build()));
        } else {
            answers.add(ok(r.future(), () -> ReserveResponse.newBuilder().setOutcome(ReserveOutcome.SOLD_OUT)
                    .build()));
        }
    }

    /**
     * The decider's request for a selection, checked against the item's map: unknown seats,
     * sections and categories, and a run longer than any the map has, are bad input.
     */
    static SeatRequest request(SeatItem s, SeatSelection sel, int quantity) {
        String section = sel.getSectionId().isEmpty() ? null : sel.getSectionId();
        String category = sel.getCategory().isEmpty() ? null : sel.getCategory();
        if (sel.getMode() == SeatMode.SPECIFIC) {
            int[] seats = new int[sel.getSeatIdsCount()];
            List<String> unknown = new ArrayList<>();
            for (int i = 0; i < seats.length; i++) {
                seats[i] = s.layout.indexOf(sel.getSeatIds(i));
                if (seats[i] < 0) {
                    unknown.add(sel.getSeatIds(i));
                }
            }
            if (!unknown.isEmpty()) {
                throw Failure.invalid("seats.seat_ids", "names seats item " + s.item + " does not have: "
                        + first(unknown));
            }
            java.util.Arrays.sort(seats);
            return new SeatRequest(SeatRequest.Mode.SPECIFIC, seats.length, seats, null, null);
        }
        if (section != null && !s.layout.hasSection(section)) {
            throw Failure.invalid("seats.section_id", "'" + section + "' is not a section of item " + s.item);
        }
        if (category != null && !s.layout.hasCategory(category)) {
            throw Failure.invalid("seats.category", "'" + category + "' is not a category of item " + s.item);
        }
        SeatRequest.Mode mode = switch (sel.getMode()) {
            case ANY -> SeatRequest.Mode.ANY;
            case ADJACENT -> SeatRequest.Mode.ADJACENT;
            case BEST -> SeatRequest.Mode.BEST;
            default -> throw Failure.invalid("seats.mode", "is " + sel.getMode());
        };
        if (mode != SeatRequest.Mode.ANY) {
            int longest = s.layout.longestRun(section, category);
            if (quantity > longest) {
                throw Failure.invalid("quantity", "is " + quantity + ", more adjacent seats than any row of item "
                        + s.item + (section == null && category == null ? "" : " within that section/category")
                        + " has (at most " + longest + ")");
            }
        }
        return new SeatRequest(mode, quantity, new int[0], section, category);
    }
}
