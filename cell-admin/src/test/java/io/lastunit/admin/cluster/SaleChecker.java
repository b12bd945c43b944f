package io.lastunit.admin.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.ReserveOutcome;
import io.lastunit.api.shard.v1.InvariantReport;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.HoldId;
import io.lastunit.common.topology.Topology;
import io.lastunit.shard.ShardNode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The checker of a sale's history (Jepsen's third part): reads the holds each item's owning
 * shard committed, straight from that shard's database, and compares them with what the
 * clients were told. Built after the sale has ended; immutable.
 */
final class SaleChecker {

    /** A committed hold, as its shard's database has it. */
    record Row(UUID holdId, String key, String buyer, String state, int qty, Instant createdAt) {
    }

    private final Map<String, Sale.Item> items = new LinkedHashMap<>();
    private final Map<String, List<Row>> rowsByItem = new HashMap<>();

    private SaleChecker() {
    }

    /** Reads every hold of {@code items} from the database of the shard placement gives each to. */
    static SaleChecker read(ClusterClients clients, Topology topology, Collection<Sale.Item> items) throws SQLException {
        SaleChecker c = new SaleChecker();
        for (Sale.Item it : items) {
            ShardInfo owner = topology.shardFor(it.tenant(), it.id(), "local").orElseThrow();
            List<Row> rows = new ArrayList<>();
            try (Connection db = clients.connect(owner.getShardId());
                 PreparedStatement ps = db.prepareStatement("SELECT hold_id, idempotency_key, buyer_id, state, qty,"
                         + " created_at FROM holds WHERE tenant_id = ? AND item_id = ?")) {
                ps.setString(1, it.tenant());
                ps.setString(2, it.id());
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        rows.add(new Row(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3),
                                rs.getString(4), rs.getInt(5), rs.getTimestamp(6).toInstant()));
                    }
                }
            }
            c.items.put(it.ref(), it);
            c.rowsByItem.put(it.ref(), rows);
        }
        return c;
    }

    List<Row> rows(Sale.Item item) {
        return rowsByItem.get(item.ref());
    }

    /** Each item has exactly its total in HELD holds of one unit: nothing oversold, nothing left. */
    void assertEachItemHeldExactlyItsTotal() {
        for (Sale.Item it : items.values()) {
            List<Row> rows = rowsByItem.get(it.ref());
            assertThat(rows).as("holds of %s", it.ref()).allSatisfy(r -> {
                assertThat(r.state()).isEqualTo("HELD");
                assertThat(r.qty()).isEqualTo(1);
            });
            assertThat(rows).as("units held of %s (total %d)", it.ref(), it.total()).hasSize((int) it.total());
            assertThat(rows.stream().map(Row::buyer).distinct().count()).as("distinct buyers of %s", it.ref())
                    .isEqualTo(rows.size());
        }
    }

    /**
     * The replies match the database: every RESERVED reply names a hold that is there, with its
     * key; a hold nobody was told about belongs to an operation that ended unknown; an operation
     * that ended SOLD_OUT, LIMIT_EXCEEDED or fail has no hold.
     */
    void assertRepliesMatchHolds(Collection<Sale.Result> results) {
        Map<String, Sale.Result> byKey = new HashMap<>();
        for (Sale.Result r : results) {
            byKey.put(r.request().getTenantId() + "\0" + r.request().getIdempotencyKey(), r);
        }
        for (Sale.Item it : items.values()) {
            Map<String, Row> dbByKey = new HashMap<>();
            for (Row row : rowsByItem.get(it.ref())) {
                dbByKey.put(it.tenant() + "\0" + row.key(), row);
            }
            for (Sale.Result r : results) {
                if (!r.itemRef().equals(it.ref())) {
                    continue;
                }
                String k = it.tenant() + "\0" + r.request().getIdempotencyKey();
                Row row = dbByKey.get(k);
                switch (r.end()) {
                    case RESERVED -> {
                        assertThat(row).as("the acknowledged hold of key %s on %s", r.request().getIdempotencyKey(),
                                it.ref()).isNotNull();
                        assertThat(HoldId.decode(r.hold().getHoldId(), "hold_id").uuid()).isEqualTo(row.holdId());
                    }
                    case UNKNOWN -> {
                        // either way is allowed
                    }
                    default -> assertThat(row).as("a hold for key %s on %s, whose operation ended %s (%s %s)",
                            r.request().getIdempotencyKey(), it.ref(), r.end(), r.lastCode(), r.lastReason()).isNull();
                }
            }
            for (String k : dbByKey.keySet()) {
                assertThat(byKey.get(k)).as("a sale operation for the hold with key %s on %s", k, it.ref())
                        .isNotNull();
            }
        }
    }

    /**
     * SOLD_OUT only when no stock was left: for every SOLD_OUT reply, the item's holds created (by
     * the database clock, same host) before the reply arrived already add up to its total. A
     * SOLD_OUT while units remained — say, for an item whose shard was down — fails this.
     */
    void assertNoSoldOutWhileStockRemained(Collection<Sale.Attempt> history) {
        Map<String, List<Instant>> created = new HashMap<>();
        for (Map.Entry<String, List<Row>> e : rowsByItem.entrySet()) {
            created.put(e.getKey(), e.getValue().stream().map(Row::createdAt).sorted().toList());
        }
        Set<String> checked = new HashSet<>();
        for (Sale.Attempt a : history) {
            if (a.outcome() != ReserveOutcome.SOLD_OUT || !items.containsKey(a.itemRef())) {
                continue;
            }
            List<Instant> times = created.get(a.itemRef());
            long before = times.stream().filter(t -> !t.isAfter(a.answeredAt())).count();
            assertThat(before).as("holds of %s created before a SOLD_OUT answered at %s (attempt %d of key %s)",
                    a.itemRef(), a.answeredAt(), a.n(), a.request().getIdempotencyKey())
                    .isEqualTo(items.get(a.itemRef()).total());
            checked.add(a.itemRef());
        }
        assertThat(checked).as("items that answered SOLD_OUT at all").isNotEmpty();
    }

    /** The invariant check of every running shard node finds no drift. */
    static void assertInvariantsHold(LocalPlatform platform) throws SQLException {
        for (String id : platform.shards().keySet()) {
            ShardNode node = platform.shard(id);
            assertThat(node).as("shard %s is running", id).isNotNull();
            InvariantReport report = node.checker().check("", "");
            assertThat(report.getDriftsList()).as("drifts on shard %s", id).isEmpty();
            assertThat(report.getOk()).as("invariants on shard %s", id).isTrue();
        }
    }
}
