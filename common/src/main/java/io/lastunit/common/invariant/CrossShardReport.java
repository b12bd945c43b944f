package io.lastunit.common.invariant;

import java.util.List;

/**
 * What one run of {@link CrossShardChecker} found. Immutable.
 *
 * @param cellsChecked cells whose shards all answered: their items are in {@code balances}
 * @param balances     every item of those cells, sorted by item
 * @param problems     one line per cell that could not be checked (and why); its items are absent
 */
public record CrossShardReport(List<String> cellsChecked, List<ItemBalance> balances, List<String> problems) {

    public CrossShardReport {
        cellsChecked = List.copyOf(cellsChecked);
        balances = List.copyOf(balances);
        problems = List.copyOf(problems);
    }

    /** The items that do not balance in this one check (see {@link DriftTracker} before alerting). */
    public List<ItemBalance> drifts() {
        return balances.stream().filter(b -> !b.ok()).toList();
    }

    /** Every cell was checked and every item balanced. */
    public boolean ok() {
        return problems.isEmpty() && drifts().isEmpty();
    }
}
