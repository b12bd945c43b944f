package io.lastunit.shard.move;

import io.lastunit.api.topology.v1.MoveCounts;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The tables a tenant move copies, in the order they are exported and imported (an item's row
 * before the rows that refer to it), each with every column and its primary key: what an import's
 * upsert names. The outbox is not among them: its events were published from the shard that wrote
 * them. The retired totals are (schema V11): the units of the rows retention deleted, which the
 * invariants still count on the target. {@code TenantTableIT} checks the columns against the schema, so a migration that adds a
 * column fails a test instead of being dropped by moves. Immutable.
 */
public enum TenantTable {
    ITEMS("items", List.of("tenant_id", "item_id"), List.of("tenant_id", "item_id", "kind", "home_region", "total",
            "initial_total", "per_buyer_limit", "hold_ttl_ms", "extend_by_ms", "bucket_count", "state", "collapsed",
            "created_at", "regions", "created_total", "seat_map_digest")),
    BUCKETS("buckets", List.of("tenant_id", "item_id", "bucket_no"), List.of("tenant_id", "item_id", "bucket_no",
            "allotment", "available", "held", "sold", "open", "lent")),
    SEATS("seats", List.of("tenant_id", "item_id", "seat_no"), List.of("tenant_id", "item_id", "seat_no", "seat_id",
            "section_id", "row_id", "position", "category", "rank", "aisle_after", "on_sale", "hold_id")),
    HOLDS("holds", List.of("hold_id"), List.of("hold_id", "tenant_id", "item_id", "bucket_no", "region", "qty",
            "buyer_id", "idempotency_key", "request_fingerprint", "state", "created_at", "expires_at", "extended",
            "order_ref", "ended_at", "seat_nos")),
    BUYER_USAGE("buyer_usage", List.of("tenant_id", "item_id", "buyer_id"), List.of("tenant_id", "item_id",
            "buyer_id", "qty")),
    TRANSFERS("transfers", List.of("transfer_id", "direction"), List.of("transfer_id", "direction", "tenant_id",
            "item_id", "peer", "qty", "state", "collapse", "created_at", "done_at")),
    RESTOCKS("restocks", List.of("tenant_id", "item_id", "restock_id"), List.of("tenant_id", "restock_id", "item_id",
            "qty", "applied_at")),
    RETIRED_HOLD_TOTALS("retired_hold_totals", List.of("tenant_id", "item_id", "bucket_no"), List.of("tenant_id",
            "item_id", "bucket_no", "holds", "sold_qty")),
    RETIRED_USAGE_TOTALS("retired_usage_totals", List.of("tenant_id", "item_id", "buyer_id"), List.of("tenant_id",
            "item_id", "buyer_id", "qty")),
    RETIRED_TRANSFER_TOTALS("retired_transfer_totals", List.of("tenant_id", "item_id"), List.of("tenant_id", "item_id",
            "out_records", "out_qty"));

    /** The table's name, as in the schema and in {@code TenantRows.table}. */
    public final String table;
    public final List<String> primaryKey;
    public final List<String> columns;

    TenantTable(String table, List<String> primaryKey, List<String> columns) {
        this.table = table;
        this.primaryKey = primaryKey;
        this.columns = columns;
    }

    /** The table of that name, if a move copies it. */
    public static Optional<TenantTable> named(String table) {
        for (TenantTable t : values()) {
            if (t.table.equals(table)) {
                return Optional.of(t);
            }
        }
        return Optional.empty();
    }

    /** The names of every table a move copies, in order. */
    public static List<String> names() {
        List<String> names = new ArrayList<>();
        for (TenantTable t : values()) {
            names.add(t.table);
        }
        return names;
    }

    /**
     * A primary key is unique on every shard only with its tenant and item: a hold id or a transfer
     * id names one row of one item, so a row of the same key recorded here for another item must not
     * be overwritten.
     */
    boolean keyOmitsItem() {
        return !primaryKey.contains("item_id");
    }

    /**
     * The retired totals change only when retention deletes a tenant's rows, which it never does while
     * a move names the tenant: for a move they are settled history, like the holds ended before a cut.
     */
    boolean retired() {
        return this == RETIRED_HOLD_TOTALS || this == RETIRED_USAGE_TOTALS || this == RETIRED_TRANSFER_TOTALS;
    }

    /** Adds {@code n} rows of this table to {@code counts}. */
    void count(MoveCounts.Builder counts, long n) {
        switch (this) {
            case ITEMS -> counts.setItems(counts.getItems() + n);
            case BUCKETS -> counts.setBuckets(counts.getBuckets() + n);
            case SEATS -> counts.setSeats(counts.getSeats() + n);
            case HOLDS -> counts.setHolds(counts.getHolds() + n);
            case BUYER_USAGE -> counts.setUsage(counts.getUsage() + n);
            case TRANSFERS -> counts.setTransfers(counts.getTransfers() + n);
            case RESTOCKS -> counts.setRestocks(counts.getRestocks() + n);
            case RETIRED_HOLD_TOTALS, RETIRED_USAGE_TOTALS, RETIRED_TRANSFER_TOTALS ->
                    counts.setRetired(counts.getRetired() + n);
        }
    }
}
