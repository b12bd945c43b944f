package io.lastunit.shard.seats;

import com.google.protobuf.Timestamp;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.HoldState;
import io.lastunit.common.HoldId;
import io.lastunit.shard.seats.plan.SeatDecider;
import io.lastunit.shard.seats.plan.SeatLayout;
import io.lastunit.shard.seats.plan.SeatSpec;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A seated item as the lane that owns it holds it in memory: the layout, which seats are on sale
 * and which hold each seat is in, the live (HELD and SOLD) holds, recently used idempotency keys,
 * and bucket 0's counters as last committed. Built from the database ({@link #load}), changed only
 * after a commit, by that lane.
 *
 * <p>Lane-confined, not thread-safe. Hazard: it is a cache; the lane's conditional statements
 * catch a view that is stale, and the lane drops the item (loads it again) after any write whose
 * outcome it does not know.
 */
public final class SeatItem {
    /** Ended holds remembered by key for quick retries; past it only the live holds are kept. */
    static final int ENDED_KEYS_MAX = 200_000;

    /** A HELD or SOLD hold (or one that ended in this lane, kept for a retry by key). Lane-confined. */
    public static final class LiveHold {
        public final UUID id;
        public final String region;
        public final String buyerId;
        public final String key;
        public final String fingerprint;
        public final int[] seats; // layout indexes, ascending
        /** The database's times; the lane's estimate while the hold's write is in flight (see {@link #settled}). */
        public long createdAtMicros;
        public HoldState state;
        public long expiresAtMicros;
        public boolean extended;
        public String orderRef;

        public LiveHold(UUID id, String region, String buyerId, String key, String fingerprint, int[] seats,
                        long createdAtMicros, HoldState state, long expiresAtMicros, boolean extended, String orderRef) {
            this.id = id;
            this.region = region;
            this.buyerId = buyerId;
            this.key = key;
            this.fingerprint = fingerprint;
            this.seats = seats;
            this.createdAtMicros = createdAtMicros;
            this.state = state;
            this.expiresAtMicros = expiresAtMicros;
            this.extended = extended;
            this.orderRef = orderRef;
        }

        public int qty() {
            return seats.length;
        }

        /** HELD and past its expiry at {@code nowMicros}. */
        public boolean dueAt(long nowMicros) {
            return state == HoldState.HELD && expiresAtMicros <= nowMicros;
        }
    }

    public final String tenant;
    public final String item;
    public final String homeRegion;
    public final int perBuyerLimit;
    public final long holdTtlMs;
    public final long extendByMs;
    public final String state;
    public final SeatLayout layout;
    public final SeatDecider decider;
    /** Seats on sale, by layout index. */
    public final BitSet onSale;
    /** Seats on sale and in no hold, by layout index (a due hold's seats are not in it until it expires). */
    public final BitSet free;
    /** The hold each seat is in, by layout index, or null. */
    public final LiveHold[] holder;
    public final Map<UUID, LiveHold> live = new HashMap<>();
    public final Map<String, LiveHold> byKey = new HashMap<>();
    /** Bucket 0: allotment, available, held, sold, as last committed. */
    public final long[] counters;

    private SeatItem(String tenant, String item, SeatStore.ItemRow row, SeatLayout layout) {
        this.tenant = tenant;
        this.item = item;
        this.homeRegion = row.homeRegion();
        this.perBuyerLimit = row.perBuyerLimit();
        this.holdTtlMs = row.holdTtlMs();
        this.extendByMs = row.extendByMs();
        this.state = row.state();
        this.layout = layout;
        this.decider = new SeatDecider(layout);
        this.onSale = new BitSet(layout.size());
        this.free = new BitSet(layout.size());
        this.holder = new LiveHold[layout.size()];
        this.counters = new long[] {row.allotment(), row.available(), row.held(), row.sold()};
    }

    /**
     * The item from its rows. Checks what the schema cannot: every seat in a hold is in that live
     * hold's seats and the other way round, and the counters match the seats; a mismatch is a bug
     * (or a row changed behind the lane), and fails the load.
     */
    public static SeatItem load(String tenant, String item, SeatStore.ItemRow row, List<SeatStore.SeatRow> seats,
                                List<SeatStore.LiveRow> holds) {
        List<SeatSpec> specs = new ArrayList<>(seats.size());
        for (SeatStore.SeatRow s : seats) {
            specs.add(s.spec());
        }
        SeatItem it = new SeatItem(tenant, item, row, SeatLayout.of(specs));
        for (SeatStore.LiveRow h : holds) {
            LiveHold l = it.hold(h);
            it.live.put(l.id, l);
            it.byKey.put(l.key, l);
        }
        long held = 0;
        long sold = 0;
        long onSale = 0;
        for (SeatStore.SeatRow s : seats) {
            int i = it.layout.indexOfSeatNo(s.spec().seatNo());
            if (s.onSale()) {
                it.onSale.set(i);
                onSale++;
            }
            if (s.holdId() == null) {
                if (s.onSale()) {
                    it.free.set(i);
                }
                continue;
            }
            LiveHold h = it.live.get(s.holdId());
            if (h == null || java.util.Arrays.binarySearch(h.seats, i) < 0) {
                throw new IllegalStateException("seat " + s.spec().seatId() + " of " + tenant + "/" + item
                        + " is in hold " + s.holdId() + ", which is not a live hold listing it");
            }
            it.holder[i] = h;
            if (h.state == HoldState.SOLD) {
                sold++;
            } else {
                held++;
            }
        }
        for (LiveHold h : it.live.values()) {
            for (int i : h.seats) {
                if (it.holder[i] != h) {
                    throw new IllegalStateException("hold " + h.id + " of " + tenant + "/" + item + " lists seat "
                            + it.layout.seatAt(i).seatId() + ", which is not in it");
                }
            }
        }
        long[] c = it.counters;
        if (c[0] != onSale || c[2] != held || c[3] != sold || c[1] != onSale - held - sold) {
            throw new IllegalStateException("bucket 0 of " + tenant + "/" + item + " counts allotment=" + c[0]
                    + " available=" + c[1] + " held=" + c[2] + " sold=" + c[3] + " but its seats count on_sale="
                    + onSale + " held=" + held + " sold=" + sold);
        }
        return it;
    }

    /** A hold of this item as read by id or key (any state), with its seats as layout indexes. */
    public LiveHold hold(SeatStore.LiveRow h) {
        int[] idx = new int[h.seatNos().length];
        for (int i = 0; i < idx.length; i++) {
            idx[i] = layout.indexOfSeatNo(h.seatNos()[i]);
            if (idx[i] < 0) {
                throw new IllegalStateException("hold " + h.holdId() + " names seat_no " + h.seatNos()[i]
                        + ", which item " + tenant + "/" + item + " does not have");
            }
        }
        java.util.Arrays.sort(idx);
        return new LiveHold(h.holdId(), h.region(), h.buyerId(), h.key(), h.fingerprint(), idx, h.createdAtMicros(),
                HoldState.valueOf(h.state()), h.expiresAtMicros(), h.extended(), h.orderRef());
    }

    /**
     * HELD holds due at {@code nowMicros}, at most {@code max}. A scan of the live holds only when
     * the earliest expiry has come ({@link #earliestDueMicros}), so a batch with nothing due pays
     * nothing for it.
     */
    public List<LiveHold> due(long nowMicros, int max) {
        if (nowMicros < earliestDueMicros) {
            return List.of();
        }
        List<LiveHold> out = new ArrayList<>();
        long earliest = Long.MAX_VALUE;
        for (LiveHold h : live.values()) {
            if (h.dueAt(nowMicros) && out.size() < max) {
                out.add(h);
            } else if (h.state == HoldState.HELD) {
                earliest = Math.min(earliest, h.expiresAtMicros);
            }
        }
        // The holds returned may not expire (the database judges): they count as not yet expired.
        for (LiveHold h : out) {
            earliest = Math.min(earliest, h.expiresAtMicros);
        }
        earliestDueMicros = earliest;
        return out;
    }

    /** A lower bound of the expiry of every HELD hold (Long.MAX_VALUE: none). */
    private long earliestDueMicros = Long.MIN_VALUE;

    /** The stable seat numbers of layout indexes. */
    public int[] seatNos(int[] seats) {
        int[] out = new int[seats.length];
        for (int i = 0; i < seats.length; i++) {
            out[i] = layout.seatAt(seats[i]).seatNo();
        }
        return out;
    }

    // ---- after a commit ----

    /** A hold ended (EXPIRED, RELEASED): its seats are free again. */
    public void ended(LiveHold h, HoldState to) {
        h.state = to;
        live.remove(h.id);
        for (int i : h.seats) {
            if (holder[i] != h) {
                throw new IllegalStateException("seat " + layout.seatAt(i).seatId() + " was not in hold " + h.id);
            }
            holder[i] = null;
            if (onSale.get(i)) {
                free.set(i);
            }
        }
    }

    /** A new hold placed: its seats are in it. */
    public void placed(LiveHold h) {
        earliestDueMicros = Math.min(earliestDueMicros, h.expiresAtMicros);
        live.put(h.id, h);
        byKey.put(h.key, h);
        for (int i : h.seats) {
            if (holder[i] != null || !free.get(i)) {
                throw new IllegalStateException("seat " + layout.seatAt(i).seatId() + " was not free for hold " + h.id);
            }
            holder[i] = h;
            free.clear(i);
        }
    }

    /**
     * A hold placed before its write committed (the lane's estimate of its times) now has the
     * database's times. Its expiry may be earlier than the estimate: the earliest-due bound follows.
     */
    public void settled(LiveHold h, long createdAtMicros, long expiresAtMicros) {
        h.createdAtMicros = createdAtMicros;
        h.expiresAtMicros = expiresAtMicros;
        earliestDueMicros = Math.min(earliestDueMicros, expiresAtMicros);
    }

    /** Seats taken off sale ({@code onSaleNow} false) or put back. */
    public void setOnSale(int[] seats, boolean onSaleNow) {
        for (int i : seats) {
            onSale.set(i, onSaleNow);
            free.set(i, onSaleNow && holder[i] == null);
        }
    }

    /** Past {@link #ENDED_KEYS_MAX} remembered keys, only the live holds' keys are kept. */
    public void trimKeys() {
        if (byKey.size() > live.size() + ENDED_KEYS_MAX) {
            byKey.clear();
            for (LiveHold h : live.values()) {
                byKey.put(h.key, h);
            }
        }
    }

    // ---- answers ----

    public HoldId holdId(LiveHold h) {
        return new HoldId(tenant, item, h.region, 0, h.id);
    }

    /** The caller's view of {@code h} at {@code nowMicros}: a HELD hold past its expiry reads EXPIRED. */
    public Hold proto(LiveHold h, long nowMicros) {
        Hold.Builder b = Hold.newBuilder()
                .setHoldId(holdId(h).encode())
                .setTenantId(tenant)
                .setItemId(item)
                .setRegion(h.region)
                .setQuantity(h.qty())
                .setBuyerId(h.buyerId)
                .setIdempotencyKey(h.key)
                .setState(h.dueAt(nowMicros) ? HoldState.EXPIRED : h.state)
                .setCreatedAt(ts(h.createdAtMicros))
                .setExpiresAt(ts(h.expiresAtMicros))
                .setExtended(h.extended);
        if (h.orderRef != null) {
            b.setOrderRef(h.orderRef);
        }
        for (int i : h.seats) {
            b.addSeatIds(layout.seatAt(i).seatId());
        }
        return b.build();
    }

    /** Bucket 0's committed counters as the API's Stock. */
    public io.lastunit.api.inventory.v1.Stock stock() {
        return io.lastunit.api.inventory.v1.Stock.newBuilder().setTenantId(tenant).setItemId(item)
                .setTotal(counters[0]).setAvailable(counters[1]).setHeld(counters[2]).setSold(counters[3])
                .setHomeRegion(homeRegion).setBucketCount(1).setPerBuyerLimit(perBuyerLimit).setHoldTtlMs(holdTtlMs)
                .setExtendByMs(extendByMs).setKind(io.lastunit.api.inventory.v1.ItemKind.SEATED)
                .setKilled(layout.size() - onSale.cardinality()).build();
    }

    public static Timestamp ts(long micros) {
        return Timestamp.newBuilder().setSeconds(Math.floorDiv(micros, 1_000_000L))
                .setNanos((int) (Math.floorMod(micros, 1_000_000L) * 1_000L)).build();
    }
}
