package io.lastunit.balancer.transfer;

/** The steps of a transfer (DESIGN §7), in order. */
public enum TransferStep {
    /** Step 1 at the source: take units, record OUT PENDING. */
    OUT,
    /** Step 2 at the target: record IN DONE, credit once. */
    IN,
    /** Step 3 at the source: mark OUT DONE. */
    COMPLETE
}
