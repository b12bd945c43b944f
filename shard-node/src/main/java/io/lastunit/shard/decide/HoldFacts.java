package io.lastunit.shard.decide;

import io.lastunit.api.inventory.v1.HoldState;
import java.util.UUID;

/**
 * A {@code holds} row as the decider sees it: what a transition, an expiry or a key lookup is
 * judged against. Times are epoch micros by the database clock. Immutable; a transition returns
 * the row it leaves ({@link #with}).
 *
 * @param holdId the row's uuid
 * @param slot the bucket the hold's units are in
 */
public record HoldFacts(
        UUID holdId,
        Slot slot,
        String region,
        int qty,
        String buyerId,
        String idempotencyKey,
        String fingerprint,
        HoldState state,
        long createdAtMicros,
        long expiresAtMicros,
        boolean extended,
        String orderRef) {

    /** HELD with its expiry passed at {@code nowMicros}: it reads as EXPIRED before the sweep gets to it. */
    public boolean dueAt(long nowMicros) {
        return state == HoldState.HELD && expiresAtMicros <= nowMicros;
    }

    /** The state a caller sees at {@code nowMicros}. */
    public HoldState effectiveState(long nowMicros) {
        return dueAt(nowMicros) ? HoldState.EXPIRED : state;
    }

    public KeyName keyName() {
        return new KeyName(slot.tenantId(), slot.itemId(), idempotencyKey);
    }

    public BuyerName buyer() {
        return new BuyerName(slot.tenantId(), slot.itemId(), buyerId);
    }

    HoldFacts with(HoldState s, long expires, boolean ext, String ref) {
        return new HoldFacts(holdId, slot, region, qty, buyerId, idempotencyKey, fingerprint, s, createdAtMicros, expires,
                ext, ref);
    }
}
