package io.lastunit.shard.decide;

/** What deciding a batch came to: {@link Needs} (load or borrow, then decide again) or {@link Decided}. */
public sealed interface Decision permits Decision.More, Decided {
    /** The decision needs these first. */
    record More(Needs needs) implements Decision {
    }
}
