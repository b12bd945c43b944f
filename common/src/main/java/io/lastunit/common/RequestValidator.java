package io.lastunit.common;

import io.lastunit.api.inventory.v1.ConfirmRequest;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.RegionQuota;
import io.lastunit.api.inventory.v1.ReserveRequest;
import io.lastunit.api.inventory.v1.RestockRequest;
import io.lastunit.api.shard.v1.ClaimKeyRequest;

/**
 * Checks every field of every public request against {@link Limits} before anything else
 * happens, and fails with INVALID_FIELD naming the first bad field (in field-number order).
 * Pure, stateless after construction, thread-safe.
 */
public final class RequestValidator {
    private final Limits limits;

    public RequestValidator(Limits limits) {
        this.limits = limits;
    }

    public Limits limits() {
        return limits;
    }

    public void reserve(ReserveRequest r) {
        reserveBeforeRegion(r);
        region("region", r.getRegion());
        if (r.getHoldTtlMs() != 0) {
            ttl("hold_ttl_ms", r.getHoldTtlMs());
        }
        if (!r.getOriginRegion().isEmpty()) {
            region("origin_region", r.getOriginRegion());
        }
    }

    /**
     * The fields of a Reserve that come before {@code region} (1–5), in field order: for the
     * router, which fills an empty region in from the tenant's cell before it checks the rest
     * with {@link #reserve}.
     */
    public void reserveBeforeRegion(ReserveRequest r) {
        tenant(r.getTenantId());
        item(r.getItemId());
        boolean specific = r.hasSeats() && r.getSeats().getMode() == io.lastunit.api.inventory.v1.SeatMode.SPECIFIC;
        if (!(specific && r.getQuantity() == 0)) {
            quantity(r.getQuantity());
        }
        key("idempotency_key", r.getIdempotencyKey());
        key("buyer_id", r.getBuyerId());
        if (r.hasSeats()) {
            SeatRules.checkSelection(r.getSeats(), r.getQuantity(), limits.reserveQuantityMax());
        }
    }

    /**
     * ShardService.ClaimKey, internal: the Reserve whose key is claimed, checked as a Reserve is
     * (its field names as a Reserve's), and the item's home region.
     */
    public void claimKey(ClaimKeyRequest r) {
        if (!r.hasRequest()) {
            throw Failure.invalid("request", "is required: the Reserve whose key is claimed");
        }
        reserve(r.getRequest());
        region("home_region", r.getHomeRegion());
    }

    public void createItem(CreateItemRequest r) {
        tenant(r.getTenantId());
        item(r.getItemId());
        if (r.getTotal() < 0 || r.getTotal() > limits.itemTotalMax()) {
            throw Failure.invalid("total", "is " + r.getTotal() + ", must be within [0, " + limits.itemTotalMax() + "]");
        }
        if (r.getPerBuyerLimit() < 0 || r.getPerBuyerLimit() > limits.perBuyerLimitMax()) {
            throw Failure.invalid("per_buyer_limit",
                    "is " + r.getPerBuyerLimit() + ", must be within [0, " + limits.perBuyerLimitMax() + "] (0 = no limit)");
        }
        if (r.getHoldTtlMs() != 0) {
            ttl("hold_ttl_ms", r.getHoldTtlMs());
        }
        if (r.getExtendByMs() < 0 || r.getExtendByMs() > limits.holdTtlMaxMs()) {
            throw Failure.invalid("extend_by_ms",
                    "is " + r.getExtendByMs() + ", must be within [0, " + limits.holdTtlMaxMs() + "] (0 = the hold TTL)");
        }
        region("home_region", r.getHomeRegion());
        if (r.getBucketCount() < 0 || r.getBucketCount() > limits.bucketCountMax()) {
            throw Failure.invalid("bucket_count",
                    "is " + r.getBucketCount() + ", must be within [0, " + limits.bucketCountMax() + "] (0 = default)");
        }
        if (r.getRegionQuotasCount() > REGION_QUOTAS_MAX) {
            throw Failure.invalid("region_quotas", "has " + r.getRegionQuotasCount() + " entries, at most "
                    + REGION_QUOTAS_MAX);
        }
        if (r.getRegionQuotasCount() > 0) {
            java.util.Set<String> seen = new java.util.HashSet<>();
            long sum = 0;
            for (RegionQuota q : r.getRegionQuotasList()) {
                region("region_quotas.region", q.getRegion());
                if (!seen.add(q.getRegion())) {
                    throw Failure.invalid("region_quotas.region", "'" + q.getRegion() + "' appears twice");
                }
                if (q.getQuantity() < 0 || q.getQuantity() > limits.itemTotalMax()) {
                    throw Failure.invalid("region_quotas.quantity", "is " + q.getQuantity() + " for region "
                            + q.getRegion() + ", must be within [0, " + limits.itemTotalMax() + "]");
                }
                sum += q.getQuantity();
            }
            if (!seen.contains(r.getHomeRegion())) {
                throw Failure.invalid("region_quotas", "has no entry for home_region " + r.getHomeRegion());
            }
            if (sum != r.getTotal()) {
                throw Failure.invalid("region_quotas", "quantities sum to " + sum + ", total is " + r.getTotal());
            }
        }
        SeatRules.checkCreate(r.getKind(), r.getSeatMap(), r.hasSeatMap(), r.getTotal(), r.getRegionQuotasCount(),
                r.getBucketCount());
    }

    /** Most entries in CreateItem.region_quotas. */
    public static final int REGION_QUOTAS_MAX = 16;

    public void restock(RestockRequest r) {
        tenant(r.getTenantId());
        item(r.getItemId());
        if (r.hasSeatMap()) {
            int seats = SeatRules.check("seat_map", r.getSeatMap());
            if (r.getQuantity() != 0 && r.getQuantity() != seats) {
                throw Failure.invalid("quantity", "is " + r.getQuantity() + " but seat_map adds " + seats
                        + " seats; give 0 or the number of seats");
            }
        } else if (r.getQuantity() <= 0 || r.getQuantity() > limits.itemTotalMax()) {
            throw Failure.invalid("quantity", "is " + r.getQuantity() + ", must be within [1, " + limits.itemTotalMax() + "]");
        }
        key("restock_id", r.getRestockId());
        if (!r.getRegion().isEmpty()) {
            region("region", r.getRegion());
        }
    }

    public void getStock(GetStockRequest r) {
        tenant(r.getTenantId());
        item(r.getItemId());
        if (!r.getRegion().isEmpty()) {
            region("region", r.getRegion());
        }
    }

    public void getSeatMap(io.lastunit.api.inventory.v1.GetSeatMapRequest r) {
        tenant(r.getTenantId());
        item(r.getItemId());
        if (!r.getSectionId().isEmpty() && !Limits.isId(r.getSectionId(), SeatRules.SEAT_ID_LENGTH_MAX)) {
            throw Failure.invalid("section_id", "must be 1.." + SeatRules.SEAT_ID_LENGTH_MAX
                    + " printable ASCII characters without spaces");
        }
        if (!r.getRegion().isEmpty()) {
            region("region", r.getRegion());
        }
    }

    public void setSeatsOnSale(io.lastunit.api.inventory.v1.SetSeatsOnSaleRequest r) {
        tenant(r.getTenantId());
        item(r.getItemId());
        int n = r.getSeatIdsCount();
        if (n == 0 || n > SeatRules.SET_SEATS_MAX) {
            throw Failure.invalid("seat_ids", "has " + n + " seats, must be within [1, " + SeatRules.SET_SEATS_MAX + "]");
        }
        SeatRules.distinct("seat_ids", r.getSeatIdsList());
        if (!r.getRegion().isEmpty()) {
            region("region", r.getRegion());
        }
    }

    public HoldId holdId(String holdId) {
        HoldId id = HoldId.decode(holdId, "hold_id");
        if (!Limits.isId(id.tenantId(), limits.tenantIdLengthMax())
                || !Limits.isId(id.itemId(), limits.itemIdLengthMax())
                || !Limits.isId(id.region(), limits.regionLengthMax())) {
            throw Failure.invalid("hold_id", "is not a lastunit hold id");
        }
        return id;
    }

    public HoldId confirm(ConfirmRequest r) {
        HoldId id = holdId(r.getHoldId());
        key("order_ref", r.getOrderRef());
        return id;
    }

    public void tenant(String v) {
        id("tenant_id", v, limits.tenantIdLengthMax());
    }

    public void item(String v) {
        id("item_id", v, limits.itemIdLengthMax());
    }

    private void quantity(int q) {
        if (q <= 0 || q > limits.reserveQuantityMax()) {
            throw Failure.invalid("quantity", "is " + q + ", must be within [1, " + limits.reserveQuantityMax() + "]");
        }
    }

    private void key(String field, String v) {
        id(field, v, limits.keyLengthMax());
    }

    private void region(String field, String v) {
        id(field, v, limits.regionLengthMax());
        if (!limits.regions().contains(v)) {
            throw Failure.invalid(field, "unknown region '" + v + "'; configured regions are " + limits.regions());
        }
    }

    private void ttl(String field, long ttl) {
        if (ttl < limits.holdTtlMinMs() || ttl > limits.holdTtlMaxMs()) {
            throw Failure.invalid(field, "is " + ttl + ", must be within [" + limits.holdTtlMinMs() + ", "
                    + limits.holdTtlMaxMs() + "] (0 = the default)");
        }
    }

    private static void id(String field, String v, int max) {
        if (v == null || v.isEmpty()) {
            throw Failure.invalid(field, "is required");
        }
        if (v.length() > max) {
            throw Failure.invalid(field, "is " + v.length() + " characters, at most " + max);
        }
        if (!Limits.isId(v, max)) {
            throw Failure.invalid(field, "must be printable ASCII without spaces");
        }
    }
}
