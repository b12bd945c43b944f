package io.lastunit.shard.decide;

import io.lastunit.api.inventory.v1.HoldState;

/**
 * What one call of a batch comes to. The lane turns each into the caller's answer after the
 * batch committed (or, for {@link Carry}, into the next batch).
 */
public sealed interface Outcome {

    // ---- Reserve ----

    /** A new hold of {@code quantity} units in the call's bucket, living {@code ttlMs}. */
    record Reserved(int quantity, long ttlMs) implements Outcome {
    }

    /** A key record that holds no units: FORWARDED (the item collapsed home) or CLAIMED (a claim). */
    record Recorded(HoldState state) implements Outcome {
    }

    /** The key's first use was this same request: the caller gets that row back. */
    record Existing(HoldFacts row) implements Outcome {
    }

    /** The key's first use was forwarded home: so is this one (nothing recorded again). */
    record ForwardedAgain(HoldFacts row) implements Outcome {
    }

    /** The key was first used for another request. */
    record KeyReused(HoldFacts first) implements Outcome {
    }

    /** No bucket of the item on this shard has the units; {@code regionDry}: only this region is out. */
    record SoldOut(boolean regionDry) implements Outcome {
    }

    /** The buyer's units would pass the item's per-buyer limit. */
    record LimitExceeded() implements Outcome {
    }

    /**
     * The item does not sell now (its {@code state}); for a Confirm, Release or Extend, the item is
     * fenced by a tenant move ({@link ItemState#moving}).
     */
    record NotActive(ItemState state) implements Outcome {
    }

    /** A claim this shard may not record: {@code field} of the request is wrong for the item. */
    record ClaimRefused(String field, String message) implements Outcome {
    }

    /** The key belongs to another open bucket (its lane decides it). */
    record Reroute(int bucketNo) implements Outcome {
    }

    /** A second use of a key already decided in this batch by the same request: the leader's answer. */
    record Follow(int leaderIndex) implements Outcome {
    }

    // ---- Confirm, Release, Extend ----

    /** The transition took effect: the hold's row after it. */
    record Applied(Call.Kind kind, HoldFacts after) implements Outcome {
    }

    /** Nothing to change, and OK: a Confirm repeated with the same order ref. */
    record Unchanged(HoldFacts row) implements Outcome {
    }

    /** The transition cannot apply to the hold as it is ({@code row} null: no such hold). */
    record Refused(Refusal why, HoldState state, HoldFacts row) implements Outcome {
    }

    enum Refusal { NOT_FOUND, ORDER_REF_MISMATCH, NOT_HELD, ALREADY_EXTENDED }

    // ---- Sweep ----

    /** The sweep expired {@code count} holds of the bucket. */
    record Swept(int count) implements Outcome {
    }

    // ---- any ----

    /** The call's bucket is not on this shard. */
    record NoBucket() implements Outcome {
    }

    /** Decided in the next batch (behind a first use of its key whose outcome is not known yet). */
    record Carry() implements Outcome {
    }
}
