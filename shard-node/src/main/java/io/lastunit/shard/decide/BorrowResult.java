package io.lastunit.shard.decide;

/** What a dry bucket's borrow from its siblings came to (done by the lane between two decisions). */
public enum BorrowResult {
    /** Units moved in (maybe fewer than asked, when the siblings had no more). */
    BORROWED,
    /** No sibling had units to lend. */
    NOTHING,
    /** No sibling showed units but one has holds due for expiry: its lane was asked to sweep. */
    WAIT_FOR_SWEEP,
    /** The bucket closed under the batch (a collapse committed): its Reserves go to bucket 0. */
    CLOSED
}
