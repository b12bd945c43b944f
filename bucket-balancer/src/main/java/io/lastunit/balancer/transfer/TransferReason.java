package io.lastunit.balancer.transfer;

import java.util.Locale;

/** Why a transfer was made; a label of the transfer log line and of the metrics. */
public enum TransferReason {
    /** A dry region asked for stock (BalancerService.Pull). */
    PULL,
    /** The balancing loop followed demand. */
    REBALANCE,
    /** The item's remaining stock fell under the threshold: every region ships home. */
    COLLAPSE,
    /** Stock freed in a non-home region of a collapsed item goes home. */
    SHIP_HOME,
    /** A PENDING transfer left by a crash, completed by a leader. */
    RECOVERY;

    /** The lower-case label: {@code pull}, {@code ship_home}, ... */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
