package io.lastunit.shard.store;

import com.google.protobuf.Timestamp;
import io.lastunit.api.inventory.v1.Hold;
import io.lastunit.api.inventory.v1.HoldState;
import io.lastunit.common.HoldId;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.UUID;

/**
 * One row of {@code holds}, as read or returned by a statement. {@code dueNow} is true for a
 * HELD hold whose expiry has passed by the database clock at the time of the read (it is
 * reported as EXPIRED even before the sweeper gets to it). Immutable.
 */
public record HoldRow(
        UUID holdId,
        String tenantId,
        String itemId,
        int bucketNo,
        String region,
        int qty,
        String buyerId,
        String idempotencyKey,
        String fingerprint,
        HoldState state,
        Instant createdAt,
        Instant expiresAt,
        boolean extended,
        String orderRef,
        boolean dueNow) {

    /** The column list every hold query selects, in the order {@link #read} expects. */
    static String columns(String alias) {
        String a = alias.isEmpty() ? "" : alias + ".";
        return a + "hold_id, " + a + "tenant_id, " + a + "item_id, " + a + "bucket_no, " + a + "region, "
                + a + "qty, " + a + "buyer_id, " + a + "idempotency_key, " + a + "request_fingerprint, "
                + a + "state, " + a + "created_at, " + a + "expires_at, " + a + "extended, " + a + "order_ref, ("
                + a + "state = 'HELD' AND " + a + "expires_at <= now()) AS due_now";
    }

    static HoldRow read(ResultSet rs) throws SQLException {
        return new HoldRow(
                rs.getObject(1, UUID.class),
                rs.getString(2),
                rs.getString(3),
                rs.getInt(4),
                rs.getString(5),
                rs.getInt(6),
                rs.getString(7),
                rs.getString(8),
                rs.getString(9),
                HoldState.valueOf(rs.getString(10)),
                rs.getTimestamp(11).toInstant(),
                rs.getTimestamp(12).toInstant(),
                rs.getBoolean(13),
                rs.getString(14),
                rs.getBoolean(15));
    }

    public HoldId id() {
        return new HoldId(tenantId, itemId, region, bucketNo, holdId);
    }

    /** The state a caller sees: HELD past its expiry reads as EXPIRED. */
    public HoldState effectiveState() {
        return dueNow ? HoldState.EXPIRED : state;
    }

    public Hold toProto() {
        Hold.Builder b = Hold.newBuilder()
                .setHoldId(id().encode())
                .setTenantId(tenantId)
                .setItemId(itemId)
                .setRegion(region)
                .setQuantity(qty)
                .setBuyerId(buyerId)
                .setIdempotencyKey(idempotencyKey)
                .setState(effectiveState())
                .setCreatedAt(ts(createdAt))
                .setExpiresAt(ts(expiresAt))
                .setExtended(extended);
        if (orderRef != null) {
            b.setOrderRef(orderRef);
        }
        return b.build();
    }

    private static Timestamp ts(Instant i) {
        return Timestamp.newBuilder().setSeconds(i.getEpochSecond()).setNanos(i.getNano()).build();
    }
}
