package io.lastunit.shard.decide;

/** One buyer of one item: what a per-buyer cap counts against. */
public record BuyerName(String tenantId, String itemId, String buyerId) {
}
