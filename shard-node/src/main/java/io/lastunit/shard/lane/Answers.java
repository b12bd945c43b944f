package io.lastunit.shard.lane;

import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.HoldState;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.inventory.v1.ReserveResponse;
import io.lastunit.common.Failure;
import io.lastunit.common.Reason;
import io.lastunit.shard.decide.HoldFacts;
import io.lastunit.shard.decide.ItemFacts;
import io.lastunit.shard.decide.Outcome;
import io.lastunit.shard.fence.Fence;
import io.lastunit.shard.store.HoldRow;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * What each caller receives for its call's {@link Outcome}, once the batch committed: the
 * response, or the {@link Failure} with its reason and the fields a client needs. Carry, Follow
 * and Reroute are the batch's to handle, not answers. Stateless.
 */
final class Answers {
    private Answers() {
    }

    /**
     * Completes {@code op} with its outcome's answer. {@code placed}: the row written for it, if any;
     * {@code fence}: what a call on an item fenced by a tenant move is told.
     */
    static void complete(Op op, Outcome o, HoldRow placed, ItemFacts item, long nowMicros, Duration retryAfter,
                         Fence fence) {
        if (op instanceof Op.Reserve r) {
            reserve(r, o, placed, item, nowMicros, retryAfter, fence);
        } else if (op instanceof Op.HoldAction a) {
            transition(a, o, nowMicros, fence);
        } else if (op instanceof Op.Sweep s) {
            s.future().complete(o instanceof Outcome.Swept n ? n.count() : 0);
        } else {
            throw new IllegalStateException("no answer for " + op);
        }
    }

    private static void reserve(Op.Reserve r, Outcome o, HoldRow placed, ItemFacts item, long now,
                                Duration retryAfter, Fence fence) {
        var q = r.request();
        String what = "item " + q.getTenantId() + "/" + q.getItemId();
        if (o instanceof Outcome.Reserved) {
            r.future().complete(reserved(r, placed.toProto(), item));
        } else if (o instanceof Outcome.Recorded) {
            if (r.claim()) {
                r.future().complete(ReserveResponse.newBuilder().setOutcome(ReserveOutcome.RESERVED)
                        .setHold(placed.toProto()).build());
            } else {
                r.future().completeExceptionally(forwarded(r, item));
            }
        } else if (o instanceof Outcome.Existing e) {
            Hold h = proto(e.row(), now);
            r.future().complete(r.claim() ? ReserveResponse.newBuilder().setOutcome(ReserveOutcome.RESERVED)
                    .setHold(h).build() : reserved(r, h, item));
        } else if (o instanceof Outcome.ForwardedAgain) {
            r.future().completeExceptionally(forwarded(r, item));
        } else if (o instanceof Outcome.KeyReused k) {
            r.future().completeExceptionally(keyReused(r, k.first(), now));
        } else if (o instanceof Outcome.SoldOut s) {
            r.future().complete(ReserveResponse.newBuilder().setOutcome(ReserveOutcome.SOLD_OUT)
                    .setRegionDry(s.regionDry()).build());
        } else if (o instanceof Outcome.LimitExceeded) {
            r.future().complete(ReserveResponse.newBuilder().setOutcome(ReserveOutcome.LIMIT_EXCEEDED).build());
        } else if (o instanceof Outcome.NotActive n) {
            r.future().completeExceptionally(n.state().moving()
                    ? fence.refusal(n.state(), q.getTenantId(), q.getItemId())
                    : Failure.retryable(Reason.ITEM_NOT_ACTIVE, what + " is " + n.state(), retryAfter));
        } else if (o instanceof Outcome.ClaimRefused c) {
            r.future().completeExceptionally(Failure.invalid(c.field(), c.message()));
        } else if (o instanceof Outcome.NoBucket) {
            r.future().completeExceptionally(Failure.of(Reason.ITEM_NOT_FOUND, "no " + what + " on this shard"));
        } else {
            throw new IllegalStateException("no answer for a Reserve decided " + o);
        }
    }

    /**
     * RESERVED with {@code hold}. For an item sold in several regions, a shard that is not its
     * home says where the key's use must be claimed before the router answers
     * ({@code key_home_region}).
     */
    private static ReserveResponse reserved(Op.Reserve r, Hold hold, ItemFacts item) {
        ReserveResponse.Builder b = ReserveResponse.newBuilder().setOutcome(ReserveOutcome.RESERVED).setHold(hold);
        if (!r.claim() && item.multiRegion() && !item.isHome(r.request().getRegion())) {
            b.setKeyHomeRegion(item.homeRegion());
        }
        return b.build();
    }

    private static Failure forwarded(Op.Reserve r, ItemFacts item) {
        var q = r.request();
        String home = item.homeRegion();
        return Failure.of(Reason.FORWARDED, "item " + q.getTenantId() + "/" + q.getItemId()
                + " collapsed to its home region " + home + "; reserve there", Map.of("home_region", home));
    }

    /** IDEMPOTENCY_KEY_REUSED, naming the key's first use. */
    private static Failure keyReused(Op.Reserve r, HoldFacts first, long now) {
        var q = r.request();
        boolean claim = first.state() == HoldState.CLAIMED;
        return Failure.of(Reason.IDEMPOTENCY_KEY_REUSED, "idempotency_key " + q.getIdempotencyKey() + " of item "
                + q.getTenantId() + "/" + q.getItemId() + " was first used in region " + first.region()
                + " for quantity=" + first.qty() + " buyer=" + first.buyerId()
                + (claim ? "" : " (" + first.effectiveState(now) + ")")
                + "; this request (region " + q.getRegion() + ", quantity=" + q.getQuantity() + ", buyer="
                + q.getBuyerId() + ") differs");
    }

    private static void transition(Op.HoldAction a, Outcome o, long now, Fence fence) {
        String id = a.holdId().encode();
        if (o instanceof Outcome.NotActive n) { // only a moving item refuses a call on a hold
            a.future().completeExceptionally(fence.refusal(n.state(), a.holdId().tenantId(), a.holdId().itemId()));
        } else if (o instanceof Outcome.Applied applied) {
            a.future().complete(proto(applied.after(), now));
        } else if (o instanceof Outcome.Unchanged u) {
            a.future().complete(proto(u.row(), now));
        } else if (o instanceof Outcome.Refused no) {
            a.future().completeExceptionally(refusal(a, no, id));
        } else if (o instanceof Outcome.NoBucket) {
            a.future().completeExceptionally(Failure.of(Reason.HOLD_NOT_FOUND, "no hold " + id));
        } else {
            throw new IllegalStateException("no answer for a " + a.kind() + " decided " + o);
        }
    }

    private static Failure refusal(Op.HoldAction a, Outcome.Refused no, String id) {
        return switch (no.why()) {
            case NOT_FOUND -> Failure.of(Reason.HOLD_NOT_FOUND, "no hold " + id);
            case ORDER_REF_MISMATCH -> Failure.of(Reason.ORDER_REF_MISMATCH, "hold " + id
                    + " was confirmed with order_ref=" + no.row().orderRef() + ", not " + a.orderRef(),
                    Map.of("state", "SOLD"));
            case NOT_HELD -> Failure.of(Reason.HOLD_NOT_HELD, "hold " + id + " is " + no.state() + "; " + a.kind()
                    + " needs HELD", Map.of("state", no.state().name()));
            case ALREADY_EXTENDED -> Failure.of(Reason.HOLD_ALREADY_EXTENDED, "hold " + id
                    + " was already extended (once per hold); it expires at " + instant(no.row().expiresAtMicros()),
                    Map.of("state", no.state().name()));
        };
    }

    /** The caller's view of a row at {@code now}: a HELD hold past its expiry reads EXPIRED. */
    static Hold proto(HoldFacts h, long now) {
        return row(h, now).toProto();
    }

    static HoldRow row(HoldFacts h, long now) {
        return new HoldRow(h.holdId(), h.slot().tenantId(), h.slot().itemId(), h.slot().bucketNo(), h.region(), h.qty(),
                h.buyerId(), h.idempotencyKey(), h.fingerprint(), h.state(), instant(h.createdAtMicros()),
                instant(h.expiresAtMicros()), h.extended(), h.orderRef(), h.dueAt(now));
    }

    private static Instant instant(long micros) {
        return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
    }
}
