package io.lastunit.shard.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * Changes of buyer usage for one statement, a row at a time ({@link #add}), bound as the
 * statement's parameter arrays ({@link #bind}). Not thread-safe; used for one statement.
 */
public final class UsageColumns {
    private final List<String> tenants = new ArrayList<>();
    private final List<String> items = new ArrayList<>();
    private final List<String> buyers = new ArrayList<>();
    private final List<Long> expected = new ArrayList<>();
    private final List<Long> deltas = new ArrayList<>();

    /** A change of {@code delta} to the usage of {@code key}, which is expected to be {@code expectedQty}. */
    public void add(UsageKey key, long expectedQty, long delta) {
        tenants.add(key.tenantId());
        items.add(key.itemId());
        buyers.add(key.buyerId());
        expected.add(expectedQty);
        deltas.add(delta);
    }

    public int size() {
        return tenants.size();
    }

    /** Binds (tenant, item, buyer[, expected], delta) as arrays from parameter {@code first} on; returns the next. */
    int bind(Connection c, PreparedStatement ps, int first, boolean withExpected) throws SQLException {
        int i = first;
        ps.setArray(i++, c.createArrayOf("text", tenants.toArray(String[]::new)));
        ps.setArray(i++, c.createArrayOf("text", items.toArray(String[]::new)));
        ps.setArray(i++, c.createArrayOf("text", buyers.toArray(String[]::new)));
        if (withExpected) {
            ps.setArray(i++, c.createArrayOf("int8", expected.toArray(Long[]::new)));
        }
        ps.setArray(i++, c.createArrayOf("int8", deltas.toArray(Long[]::new)));
        return i;
    }
}
